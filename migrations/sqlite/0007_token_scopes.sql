-- API tokens get a scope (src/api/scope.rs): the abilities they have (read, start, links), the
-- instances they reach ('own': those they started; 'all') and the workflows they may work with
-- (machine names, space-separated; NULL for every workflow).
--
-- Tokens made before this keep every ability and every workflow but reach only the instances
-- they started: until now any token read and changed every instance, administrators' included
-- (issue 18). An integration that works on what it started, which is what the API is for, goes
-- on working; one that needs more is widened with `orchestra token scope NAME --reach all`.
ALTER TABLE api_tokens ADD COLUMN abilities TEXT NOT NULL DEFAULT 'read start links';
ALTER TABLE api_tokens ADD COLUMN reach TEXT NOT NULL DEFAULT 'own';
ALTER TABLE api_tokens ADD COLUMN workflows TEXT;
-- The instances a token started, by state: its running-instance cap counts them.
CREATE INDEX instances_api_token ON instances (api_token_id, state);
