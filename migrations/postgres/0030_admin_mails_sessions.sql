-- Administrators' own emails: an invitation, a reset link, and the notices that their password
-- or second factor changed. Not participants' mails (those belong to an instance), so a table
-- of their own, claimed by lease as `mails` is (`store::queue`). No link is stored: an
-- invitation's or a reset's token is derived from the site keys and `nonce` when it is sent,
-- and only its keyed hash waits in `setup_tokens`.
-- kind: invite, reset, password, two-step-on, two-step-off.
-- state: pending, sent, failed, skipped (the link was spent or expired before it went).
CREATE TABLE admin_mails (
    id BIGSERIAL PRIMARY KEY,
    kind TEXT NOT NULL,
    admin_id BIGINT,
    email TEXT NOT NULL,
    name TEXT NOT NULL,
    lang TEXT NOT NULL DEFAULT 'en',
    nonce TEXT NOT NULL DEFAULT '',
    expires_at BIGINT,
    state TEXT NOT NULL DEFAULT 'pending',
    attempts BIGINT NOT NULL DEFAULT 0,
    next_at BIGINT NOT NULL,
    claimed_until BIGINT,
    created_at BIGINT NOT NULL,
    sent_at BIGINT,
    error TEXT
);
CREATE INDEX admin_mails_due ON admin_mails (state, next_at);

-- The address an invitation was made for, given to the administrator it makes.
ALTER TABLE setup_tokens ADD COLUMN email TEXT;
-- The language an administrator reads their emails in (the page's when they set their address).
ALTER TABLE admins ADD COLUMN lang TEXT NOT NULL DEFAULT 'en';

-- A session names its administrator and the epoch it was signed in under, when it was signed in, when it was last saved and the
-- browser's family, so one's sessions can be listed and ended. Filled from the session's data
-- on each save; the sessions signed in before this upgrade keep working and are given their
-- administrator here (when and with what browser they were signed in is not known).
ALTER TABLE sessions ADD COLUMN admin_id BIGINT;
ALTER TABLE sessions ADD COLUMN epoch BIGINT NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN created_at BIGINT;
ALTER TABLE sessions ADD COLUMN seen_at BIGINT;
ALTER TABLE sessions ADD COLUMN agent TEXT NOT NULL DEFAULT '';
UPDATE sessions SET admin_id = (data::jsonb ->> 'admin_id')::BIGINT
    WHERE data ~ '"admin_id":\s*[0-9]+';
UPDATE sessions SET epoch = (data::jsonb ->> 'admin_epoch')::BIGINT
    WHERE data ~ '"admin_epoch":\s*[0-9]+';
CREATE INDEX sessions_admin ON sessions (admin_id, expiry);
