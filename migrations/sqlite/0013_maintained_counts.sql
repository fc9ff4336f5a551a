-- Issue 21: counts that cost nothing at a year of data. A workflow's page counted every
-- instance of every version on each view, and an API start counted its token's running
-- instances; both are now figures kept in the same transaction as the start, the end or the
-- cancel that changes them (store::instances), read in one row each.
ALTER TABLE workflow_versions ADD COLUMN running INTEGER NOT NULL DEFAULT 0;
ALTER TABLE workflow_versions ADD COLUMN ended INTEGER NOT NULL DEFAULT 0;
UPDATE workflow_versions SET
    running = (SELECT COUNT(*) FROM instances i WHERE i.version_id = workflow_versions.id AND i.state = 'active'),
    ended = (SELECT COUNT(*) FROM instances i WHERE i.version_id = workflow_versions.id AND i.state <> 'active');
ALTER TABLE api_tokens ADD COLUMN running INTEGER NOT NULL DEFAULT 0;
UPDATE api_tokens SET
    running = (SELECT COUNT(*) FROM instances i WHERE i.api_token_id = api_tokens.id AND i.state = 'active');
