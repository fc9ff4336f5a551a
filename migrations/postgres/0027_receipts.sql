-- Receipts (domain::receipts). `receipt_keys` holds only public keys: the signing key is made
-- from the site keys whenever it is needed, so no new secret rests here; a key rotation adds a
-- row and keeps the old ones, so a receipt signed before still verifies against
-- /.well-known/jwks.json. `kid` is the key's RFC 7638 thumbprint, `x` its public half
-- (base64url, as a JWK writes it).
CREATE TABLE receipt_keys (
    kid TEXT PRIMARY KEY,
    x TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
-- One receipt per answer's line of history: its id (the JWS's `jti`) and when it was first
-- issued, so a second download says the same; the evidence record lists them. No claim is
-- kept: they are read again from the line they sign.
CREATE TABLE receipts (
    id TEXT PRIMARY KEY,
    instance_id BIGINT NOT NULL,
    history_id BIGINT NOT NULL UNIQUE,
    issued_at BIGINT NOT NULL
);
CREATE INDEX receipts_instance ON receipts (instance_id);
