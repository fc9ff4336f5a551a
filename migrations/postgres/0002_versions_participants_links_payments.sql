-- Workflows become versioned: every saved definition is an immutable version, and an instance
-- keeps the version it started on. Existing workflows get their current definition as version 1,
-- and every existing instance is put on it.
CREATE TABLE workflow_versions (
    id BIGSERIAL PRIMARY KEY,
    workflow_id BIGINT NOT NULL REFERENCES workflows (id),
    number BIGINT NOT NULL,
    definition TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    deleted_at BIGINT,
    UNIQUE (workflow_id, number)
);
INSERT INTO workflow_versions (workflow_id, number, definition, created_at)
    SELECT id, 1, definition, updated_at FROM workflows;
ALTER TABLE workflows DROP COLUMN definition;
ALTER TABLE workflows ADD COLUMN deleted_at BIGINT;
ALTER TABLE instances ADD COLUMN version_id BIGINT REFERENCES workflow_versions (id);
UPDATE instances SET version_id =
    (SELECT v.id FROM workflow_versions v WHERE v.workflow_id = instances.workflow_id);
CREATE INDEX instances_version ON instances (version_id, state);

-- History records what it showed at the time. Existing lines take it from version 1.
ALTER TABLE history ADD COLUMN step_title TEXT NOT NULL DEFAULT '';
ALTER TABLE history ADD COLUMN kind TEXT NOT NULL DEFAULT '';
ALTER TABLE history ADD COLUMN participant TEXT NOT NULL DEFAULT '';
ALTER TABLE history ADD COLUMN actor TEXT NOT NULL DEFAULT '';
UPDATE history SET
    step_title = COALESCE((SELECT (v.definition::jsonb -> 'steps' -> history.step_index::int ->> 'title')
        FROM instances i JOIN workflow_versions v ON v.id = i.version_id
        WHERE i.id = history.instance_id), ''),
    kind = COALESCE((SELECT (v.definition::jsonb -> 'steps' -> history.step_index::int -> 'interaction' ->> 'kind')
        FROM instances i JOIN workflow_versions v ON v.id = i.version_id
        WHERE i.id = history.instance_id), ''),
    participant = CASE WHEN branch <> '' THEN branch ELSE 'default' END
    WHERE event = 'answered';

-- Issued links, by a keyed hash of the link (never the link itself).
CREATE TABLE links (
    id BIGSERIAL PRIMARY KEY,
    instance_id BIGINT NOT NULL REFERENCES instances (id),
    hash TEXT NOT NULL UNIQUE,
    participant TEXT NOT NULL,
    expires BIGINT NOT NULL,
    issued_by TEXT NOT NULL,
    issued_at BIGINT NOT NULL,
    revoked_at BIGINT,
    revoked_by TEXT
);
CREATE INDEX links_instance ON links (instance_id);

-- Payments, confirmed by the provider's signed notice. `open_key` is set while a payment is
-- pending, so one step's participant has at most one payment under way.
CREATE TABLE payments (
    id BIGSERIAL PRIMARY KEY,
    reference TEXT NOT NULL UNIQUE,
    instance_id BIGINT NOT NULL REFERENCES instances (id),
    step_index BIGINT NOT NULL,
    branch TEXT NOT NULL,
    participant TEXT NOT NULL,
    amount_cents BIGINT NOT NULL,
    currency TEXT NOT NULL,
    state TEXT NOT NULL,
    open_key TEXT UNIQUE,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX payments_instance ON payments (instance_id);
-- Continuation handles now name the payment they return to. A handle from before the upgrade
-- has no payment to show: it lived 30 minutes, and its payer starts again from the link.
DELETE FROM handles;
ALTER TABLE handles ADD COLUMN payment_id BIGINT REFERENCES payments (id);

-- The key the payment provider signs its notices with, made on first start after the upgrade.
ALTER TABLE site_keys ADD COLUMN provider_key TEXT;
