-- Files uploaded with a form's answer, kept in the database in chunks so that backups and every
-- process see the same files. A file is `arriving` while its bytes come in and until an answer
-- keeps it; an upload cut off, or a form refused, leaves an arriving file that is removed at once,
-- or by the cron's sweep after a kill. `media_type` is what the content is, never what its sender
-- claimed.
CREATE TABLE files (
    id BIGSERIAL PRIMARY KEY,
    instance_id BIGINT NOT NULL REFERENCES instances (id),
    step_index BIGINT NOT NULL,
    field TEXT NOT NULL,
    name TEXT NOT NULL,
    media_type TEXT NOT NULL DEFAULT '',
    size BIGINT NOT NULL DEFAULT 0,
    sha256 TEXT NOT NULL DEFAULT '',
    kept BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL
);
CREATE INDEX files_by_instance ON files (instance_id);
CREATE INDEX files_arriving ON files (created_at) WHERE kept = 0;
CREATE TABLE file_chunks (
    file_id BIGINT NOT NULL REFERENCES files (id),
    seq BIGINT NOT NULL,
    data BYTEA NOT NULL,
    PRIMARY KEY (file_id, seq)
);
-- A step.answered message says which files the answer brought (a JSON list of their field,
-- name, size, type and SHA-256), never the answer: NULL for every other message, and for the
-- messages written before.
ALTER TABLE outbox ADD COLUMN files TEXT;
