-- Issue 21: lists that page. The admin list, the API's list and the CLI read instances newest
-- first a page at a time (keyset on the id, never OFFSET), filtered by workflow, state and who
-- started them, so each filter gets an index ending in the id: a page is one range read.
--
-- Who started an instance: 'admin', 'cli' or 'api' (the name is on its history's first line).
-- Nothing recorded it before, except the API's token: those rows are filled in through their
-- index; every other earlier row stays NULL, "unknown", rather than a guess.
ALTER TABLE instances ADD COLUMN started_by TEXT;
UPDATE instances SET started_by = 'api' WHERE api_token_id IS NOT NULL;
CREATE INDEX instances_workflow_id ON instances (workflow_id, id);
CREATE INDEX instances_state_id ON instances (state, id);
CREATE INDEX instances_started_by_id ON instances (started_by, id);
-- An instance's page reads its newest links and history lines a page at a time.
DROP INDEX links_instance;
CREATE INDEX links_instance_id ON links (instance_id, id);
CREATE INDEX history_instance_id ON history (instance_id, id);
