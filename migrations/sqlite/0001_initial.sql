CREATE TABLE site_keys (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    private_key TEXT NOT NULL,
    hash_salt TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE TABLE settings (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE admins (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE TABLE setup_tokens (token_hash TEXT PRIMARY KEY, expires INTEGER NOT NULL);
CREATE TABLE sessions (id TEXT PRIMARY KEY, data TEXT NOT NULL, expiry INTEGER NOT NULL);
CREATE INDEX sessions_expiry ON sessions (expiry);
CREATE TABLE workflows (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL UNIQUE,
    label TEXT NOT NULL,
    definition TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE TABLE instances (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    workflow_id INTEGER NOT NULL REFERENCES workflows (id),
    subject_title TEXT NOT NULL,
    subject_body TEXT NOT NULL,
    token TEXT NOT NULL,
    step_index INTEGER NOT NULL,
    state TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE TABLE history (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    instance_id INTEGER NOT NULL REFERENCES instances (id),
    step_index INTEGER NOT NULL,
    branch TEXT NOT NULL,
    event TEXT NOT NULL,
    answer TEXT NOT NULL,
    at INTEGER NOT NULL
);
CREATE INDEX history_instance ON history (instance_id, step_index);
CREATE TABLE handles (
    hash TEXT PRIMARY KEY,
    instance_id INTEGER NOT NULL REFERENCES instances (id),
    expires INTEGER NOT NULL,
    used INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX handles_expires ON handles (expires);
CREATE TABLE flood (
    event TEXT NOT NULL,
    identifier TEXT NOT NULL,
    node TEXT NOT NULL,
    bucket_start INTEGER NOT NULL,
    expiration INTEGER NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (event, identifier, node, bucket_start)
);
CREATE INDEX flood_expiration ON flood (expiration);
