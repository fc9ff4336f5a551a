-- The integrator API: bearer tokens, kept as a keyed hash (never their text), each with its
-- own bucket; integrator keys that sign requests for a higher tier; signatures already seen.
CREATE TABLE api_tokens (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL UNIQUE,
    hash TEXT NOT NULL UNIQUE,
    rate_per_minute INTEGER,
    burst INTEGER,
    created_at INTEGER NOT NULL,
    last_used_at INTEGER,
    revoked_at INTEGER
);
CREATE TABLE integrator_keys (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL,
    key_id TEXT NOT NULL UNIQUE,
    secret TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
);
CREATE TABLE api_signatures (
    hash TEXT PRIMARY KEY,
    expires INTEGER NOT NULL
);
CREATE INDEX api_signatures_expires ON api_signatures (expires);
ALTER TABLE instances ADD COLUMN api_token_id INTEGER REFERENCES api_tokens (id);
