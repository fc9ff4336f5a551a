-- Webhooks lose nothing. An endpoint's run of failures is timed, not counted: `failing_since` is
-- when its first failed attempt after its last success was made (NULL while it works). It is
-- disabled only when a delivery has spent its whole retry schedule (about three days) with the
-- endpoint failing all along. A delivery to a disabled endpoint is `held`: it waits, and goes out
-- when the endpoint is enabled again. Deliveries set aside (`skipped`) by the old rule while
-- their endpoint was disabled wait the same way.
ALTER TABLE webhook_endpoints ADD COLUMN failing_since INTEGER;
UPDATE webhook_endpoints SET failing_since = created_at WHERE enabled = 0;
UPDATE webhook_deliveries SET state = 'held', claimed_until = NULL
    WHERE state IN ('pending', 'skipped')
    AND endpoint_id IN (SELECT id FROM webhook_endpoints WHERE enabled = 0);
-- A sender takes each endpoint's due deliveries by it (so a slow endpoint is claimed apart from
-- the others), and enabling, holding and "retry now" find an endpoint's deliveries by it.
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, state, next_at);

-- Emails an API token asked for (a start with contacts, a "send") go in lane 1, after the
-- site's own (lane 0): a token's burst never stands before a participant's email.
ALTER TABLE mails ADD COLUMN lane INTEGER NOT NULL DEFAULT 0;
CREATE INDEX mails_lane_due ON mails (state, lane, next_at);

-- Link emails asked for through the API, counted per hour: per token (`token:ID`) and per
-- address (`address:` and the address's keyed hash, never the address). Cron deletes past hours,
-- a range of the key's first column.
CREATE TABLE mail_quota (
    key TEXT NOT NULL,
    hour INTEGER NOT NULL,
    sent INTEGER NOT NULL,
    PRIMARY KEY (hour, key)
) WITHOUT ROWID;
