-- Issue 22: endpoints an API token registers for itself. Such an endpoint is sent only the
-- messages about instances that token started (`instances.api_token_id`); NULL is an
-- administrator's endpoint, sent every message it takes. A token's endpoints go with it.
ALTER TABLE webhook_endpoints ADD COLUMN api_token_id BIGINT REFERENCES api_tokens (id) ON DELETE CASCADE;
CREATE INDEX webhook_endpoints_token ON webhook_endpoints (api_token_id);
-- Cron's cleanup reads old rows by their time (`store::expired`): attempts by when they were
-- made, messages by when they were written. Done deliveries are found by `webhook_deliveries_due`
-- (state, next_at), next_at being their last attempt's time.
CREATE INDEX webhook_attempts_at ON webhook_attempts (at);
CREATE INDEX outbox_created ON outbox (created_at);
