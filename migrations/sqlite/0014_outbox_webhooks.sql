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
