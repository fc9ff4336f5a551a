-- Issue 22, participants' emails. A participant's address, name and language, given when the
-- instance is started (admin form, CLI, API) and written in the start's transaction. Personal
-- data: shown to administrators and to the API token that started the instance, never logged.
CREATE TABLE contacts (
    instance_id BIGINT NOT NULL REFERENCES instances (id),
    participant TEXT NOT NULL,
    email TEXT NOT NULL,
    name TEXT NOT NULL DEFAULT '',
    lang TEXT NOT NULL DEFAULT 'en',
    PRIMARY KEY (instance_id, participant)
);
-- One row per email to send: a participant's link when their step starts (queued in the
-- transaction of the start or of the answer that moves the instance on), one an administrator
-- asked for, a reminder, or a step's expiry. No link is ever stored here: the sender signs one
-- when it sends and records its keyed hash in links, as an issued link is. A sender claims a due
-- row by setting claimed_until in an UPDATE that checks no live claim is held.
-- state: pending, sent, failed, skipped (nothing left to answer by then).
-- kind: link, reminder, deadline (a step's expiry, sent to nobody: the chore ends the step).
CREATE TABLE mails (
    id BIGSERIAL PRIMARY KEY,
    instance_id BIGINT NOT NULL REFERENCES instances (id),
    participant TEXT NOT NULL,
    step_index BIGINT NOT NULL,
    kind TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'pending',
    attempts BIGINT NOT NULL DEFAULT 0,
    next_at BIGINT NOT NULL,
    claimed_until BIGINT,
    created_at BIGINT NOT NULL,
    sent_at BIGINT,
    error TEXT
);
-- The sender and the status report find what is due (and the oldest waiting) by it; `kind` in
-- it makes the count of due emails (every sender run, up to 10,000) read the index alone: on a
-- million-instance database with 22,000 due rows, 15.6 ms (SQLite) and 8.6–13.6 ms (PostgreSQL)
-- without it, 0.46 ms and 2.0 ms with it (docs/delivery.md).
CREATE INDEX mails_due ON mails (state, next_at, kind);
-- An instance's emails, newest first, for its page.
CREATE INDEX mails_instance ON mails (instance_id, id);
