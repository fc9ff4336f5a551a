-- Administrators can be managed (issue 20). Every existing administrator stays active
-- (disabled_at NULL) and keeps its sessions (auth_epoch 0, what a session without one reads as).
-- auth_epoch: bumped by a password change, a reset or a disable; a session carries the epoch it
-- signed in under and stops working when it no longer matches.
-- login_epoch: part of the sign-in limits' per-account keys; bumping it (an unlock) starts the
-- account's failure counts afresh and touches no other account's.
ALTER TABLE admins ADD COLUMN disabled_at INTEGER;
ALTER TABLE admins ADD COLUMN last_sign_in_at INTEGER;
ALTER TABLE admins ADD COLUMN auth_epoch INTEGER NOT NULL DEFAULT 0;
ALTER TABLE admins ADD COLUMN login_epoch INTEGER NOT NULL DEFAULT 0;
-- One-time links beside the first administrator's setup: an invitation (the name the inviter
-- gave, in name) and a password reset (the administrator, in admin_id). Still a keyed hash of
-- the token, never the token. The existing row, if any, is a setup token.
ALTER TABLE setup_tokens ADD COLUMN purpose TEXT NOT NULL DEFAULT 'setup';
ALTER TABLE setup_tokens ADD COLUMN admin_id INTEGER;
ALTER TABLE setup_tokens ADD COLUMN name TEXT;
