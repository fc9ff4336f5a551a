-- The audit log: what administrators and operators did outside an instance's own history
-- (sign-ins, settings, keys, tokens, webhook endpoints, administrators). Who: `actor` is
-- 'admin' (with its id and name at the time), 'cli', 'token' (its name) or 'visitor' (a failed
-- sign-in under a name no account has: no name kept). `address` is the client's address as a
-- keyed hash (none from the command line). `detail` is a small JSON object; secrets never in
-- clear. Pages read newest first by time (`at`, then `id`): the first index with no filter or
-- with dates, the others with a kind or a who, each read in order from where a page starts;
-- retention deletes the oldest through the first.
CREATE TABLE audit_log (
    id BIGSERIAL PRIMARY KEY,
    at BIGINT NOT NULL,
    kind TEXT NOT NULL,
    actor TEXT NOT NULL,
    actor_id BIGINT,
    actor_name TEXT,
    address TEXT,
    detail TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_log_at ON audit_log (at, id);
CREATE INDEX audit_log_kind ON audit_log (kind, at, id);
CREATE INDEX audit_log_who ON audit_log (actor_name, at, id);
