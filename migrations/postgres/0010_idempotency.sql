-- Issue 20: `Idempotency-Key` on the API's POSTs that make something (a start, a link's issue).
-- One row per (token, keyed hash of the key): the key's text is never stored, as a token's is
-- not. `fingerprint` is a keyed hash of the request (method, path, body) so a reuse with another
-- body is refused; `status` is NULL while the first request is still at work. `body` is the
-- answer sealed with AES-256-GCM under a key derived from the site keys (an issued link's answer
-- holds the link, a secret): the database holds no answer in clear. See docs/api.md.
CREATE TABLE api_idempotency (
    id BIGSERIAL PRIMARY KEY,
    token_id BIGINT NOT NULL REFERENCES api_tokens (id),
    key_hash TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    status BIGINT,
    location TEXT,
    body TEXT,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    UNIQUE (token_id, key_hash)
);
-- The cleanup's batches find what has expired by it.
CREATE INDEX api_idempotency_expires ON api_idempotency (expires_at);
