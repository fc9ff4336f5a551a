-- The emailed code asked before a `| verify email` step, one row per link record. No code is
-- kept in clear: the sender derives it from the site keys, the link record and `nonce` when it
-- sends (so neither this row nor the mail row holds it), and the check compares `code_hash`, a
-- keyed hash of the link record, the nonce and the code. A new code is a new nonce; a right one
-- spends the row (`code_hash` emptied). `sends` counts the codes asked since `window_start`, for
-- the limit per hour; `mail_id` is the email that carries the current code (an older email still
-- waiting to go is then set aside). Wrong tries are counted by the guard, not here. No address.
CREATE TABLE email_codes (
    link_id BIGINT PRIMARY KEY,
    instance_id BIGINT NOT NULL,
    nonce TEXT NOT NULL,
    code_hash TEXT NOT NULL,
    expires_at BIGINT NOT NULL,
    sends BIGINT NOT NULL,
    window_start BIGINT NOT NULL,
    mail_id BIGINT NOT NULL
);
-- The sender finds the code of the email it holds by it.
CREATE INDEX email_codes_mail ON email_codes (mail_id);
