-- The integrator API: bearer tokens, kept as a keyed hash (never their text), each with its
-- own bucket; integrator keys that sign requests for a higher tier; signatures already seen.
CREATE TABLE api_tokens (
    id BIGSERIAL PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    hash TEXT NOT NULL UNIQUE,
    rate_per_minute BIGINT,
    burst BIGINT,
    created_at BIGINT NOT NULL,
    last_used_at BIGINT,
    revoked_at BIGINT
);
CREATE TABLE integrator_keys (
    id BIGSERIAL PRIMARY KEY,
    name TEXT NOT NULL,
    key_id TEXT NOT NULL UNIQUE,
    secret TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    revoked_at BIGINT
);
CREATE TABLE api_signatures (
    hash TEXT PRIMARY KEY,
    expires BIGINT NOT NULL
);
CREATE INDEX api_signatures_expires ON api_signatures (expires);
ALTER TABLE instances ADD COLUMN api_token_id BIGINT REFERENCES api_tokens (id);
