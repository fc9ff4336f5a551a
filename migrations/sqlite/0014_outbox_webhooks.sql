-- Issue 22: the outbox. One row per message, written in the transaction of the change that
-- causes it (an instance started, a step answered, an instance ended, a payment confirmed), so a
-- change that rolls back leaves no message. Typed columns rather than a JSON text: the payload is
-- built from them at delivery (`domain::delivery`), and none of them can hold a capability link,
-- a handle, a secret or an answer.
CREATE TABLE outbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    event TEXT NOT NULL,
    instance_id INTEGER NOT NULL REFERENCES instances (id),
    workflow TEXT NOT NULL,
    step_index INTEGER,
    step_title TEXT,
    participant TEXT,
    state TEXT,
    amount_cents INTEGER,
    currency TEXT,
    created_at INTEGER NOT NULL
);
CREATE INDEX outbox_instance ON outbox (instance_id);
-- The endpoints messages are sent to. `events` is a comma-separated list of event names ('' for
-- every event). `secret` is the signing key sealed with AES-256-GCM under a key derived from
-- the site keys (`domain::delivery::endpoints`): never in clear. `failures` counts consecutive
-- failed attempts; an endpoint past its limit is disabled (`enabled` 0) until re-created.
CREATE TABLE webhook_endpoints (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    url TEXT NOT NULL,
    events TEXT NOT NULL,
    secret TEXT NOT NULL,
    enabled INTEGER NOT NULL DEFAULT 1,
    failures INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL
);
-- One row per message and endpoint that takes it, queued in the message's own transaction.
-- A worker claims a due row by setting `claimed_until` in an UPDATE that checks no live claim
-- is held, so of two workers (in any process) only one sends it.
CREATE TABLE webhook_deliveries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    outbox_id INTEGER NOT NULL REFERENCES outbox (id),
    endpoint_id INTEGER NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    state TEXT NOT NULL DEFAULT 'pending',
    attempts INTEGER NOT NULL DEFAULT 0,
    next_at INTEGER NOT NULL,
    claimed_until INTEGER,
    created_at INTEGER NOT NULL,
    UNIQUE (outbox_id, endpoint_id)
);
-- The worker finds what is due by it.
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (state, next_at);
-- The delivery log: one row per attempt (its HTTP status, or NULL and the error's kind when no
-- answer came), kept per endpoint.
CREATE TABLE webhook_attempts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    endpoint_id INTEGER NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    delivery_id INTEGER NOT NULL,
    attempt INTEGER NOT NULL,
    status INTEGER,
    latency_ms INTEGER NOT NULL,
    error TEXT,
    at INTEGER NOT NULL
);
CREATE INDEX webhook_attempts_endpoint ON webhook_attempts (endpoint_id, id);
