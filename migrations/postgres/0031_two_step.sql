-- Two-step sign-in (TOTP, RFC 6238). An administrator's secret is kept sealed (AES-256-GCM under
-- a key derived from `site_keys.two_step_key`), never in clear; `enabled_at` is NULL while it is
-- being set up (made, not yet confirmed with a first code). `last_step` is the time step of the
-- last code accepted: a code is taken once, and none from an earlier step after it.
-- The two-step key is a site key of its own that `orchestra keys rotate` leaves alone, so a
-- rotation locks nobody out; it is made on the first start after this migration.
ALTER TABLE site_keys ADD COLUMN two_step_key TEXT;
CREATE TABLE admin_two_step (
    admin_id BIGINT PRIMARY KEY REFERENCES admins (id) ON DELETE CASCADE,
    secret TEXT NOT NULL,
    enabled_at BIGINT,
    last_step BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL
);
-- Recovery codes, as keyed hashes under the two-step key; each usable once.
CREATE TABLE admin_recovery_codes (
    admin_id BIGINT NOT NULL REFERENCES admins (id) ON DELETE CASCADE,
    code_hash TEXT NOT NULL,
    used_at BIGINT,
    PRIMARY KEY (admin_id, code_hash)
);
