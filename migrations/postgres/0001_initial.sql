CREATE TABLE site_keys (
    id BIGINT PRIMARY KEY CHECK (id = 1),
    private_key TEXT NOT NULL,
    hash_salt TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE TABLE settings (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE admins (
    id BIGSERIAL PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE TABLE setup_tokens (token_hash TEXT PRIMARY KEY, expires BIGINT NOT NULL);
CREATE TABLE sessions (id TEXT PRIMARY KEY, data TEXT NOT NULL, expiry BIGINT NOT NULL);
CREATE INDEX sessions_expiry ON sessions (expiry);
CREATE TABLE workflows (
    id BIGSERIAL PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    label TEXT NOT NULL,
    definition TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE TABLE instances (
    id BIGSERIAL PRIMARY KEY,
    workflow_id BIGINT NOT NULL REFERENCES workflows (id),
    subject_title TEXT NOT NULL,
    subject_body TEXT NOT NULL,
    token TEXT NOT NULL,
    step_index BIGINT NOT NULL,
    state TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE TABLE history (
    id BIGSERIAL PRIMARY KEY,
    instance_id BIGINT NOT NULL REFERENCES instances (id),
    step_index BIGINT NOT NULL,
    branch TEXT NOT NULL,
    event TEXT NOT NULL,
    answer TEXT NOT NULL,
    at BIGINT NOT NULL
);
CREATE INDEX history_instance ON history (instance_id, step_index);
CREATE TABLE handles (
    hash TEXT PRIMARY KEY,
    instance_id BIGINT NOT NULL REFERENCES instances (id),
    expires BIGINT NOT NULL,
    used BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX handles_expires ON handles (expires);
CREATE TABLE flood (
    event TEXT NOT NULL,
    identifier TEXT NOT NULL,
    node TEXT NOT NULL,
    bucket_start BIGINT NOT NULL,
    expiration BIGINT NOT NULL,
    count BIGINT NOT NULL,
    PRIMARY KEY (event, identifier, node, bucket_start)
);
CREATE INDEX flood_expiration ON flood (expiration);
