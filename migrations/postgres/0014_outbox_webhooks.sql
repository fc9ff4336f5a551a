-- Issue 22: the outbox. One row per message, written in the transaction of the change that
-- causes it (an instance started, a step answered, an instance ended, a payment confirmed), so a
-- change that rolls back leaves no message. Typed columns rather than a JSON text: the payload is
-- built from them at delivery (`domain::delivery`), and none of them can hold a capability link,
-- a handle, a secret or an answer.
CREATE TABLE outbox (
    id BIGSERIAL PRIMARY KEY,
    event TEXT NOT NULL,
    instance_id BIGINT NOT NULL REFERENCES instances (id),
    workflow TEXT NOT NULL,
    step_index BIGINT,
    step_title TEXT,
    participant TEXT,
    state TEXT,
    amount_cents BIGINT,
    currency TEXT,
    created_at BIGINT NOT NULL
);
CREATE INDEX outbox_instance ON outbox (instance_id);
