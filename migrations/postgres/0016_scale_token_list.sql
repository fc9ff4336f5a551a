-- Issue 21, the scale harness (benches/scale.rs): the API's list for a token that reaches only
-- what it started (`WHERE api_token_id = $1 ORDER BY id DESC LIMIT 51`) had no index ending in
-- the id. SQLite walked the primary key backwards and filtered: 11 ms for a token that started a
-- fifteenth of a million instances, 132 ms, every row, for one that started none. This index
-- makes it one range read, as the other filters' indexes (0012) do. It replaces
-- (api_token_id, state), which only the running-instance count used before that count was kept
-- in api_tokens.running (0013); the list's token + state filter walks the token's range.
DROP INDEX instances_api_token;
CREATE INDEX instances_api_token_id ON instances (api_token_id, id);
