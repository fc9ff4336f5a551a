-- Issue 21: the instance list filtered by two or three of workflow, state and who started it.
-- Each filter alone has an index ending in the id (0012), but a pair did not, and at a million
-- instances PostgreSQL then walked the primary key backwards: in a year of data the newest
-- instances are the running ones, so a page of (workflow 3, rejected, started by an
-- administrator) read 110,000 rows to find 51 (208 ms; 108-152 ms for other triples). With an
-- index per pair, and one for all three, each such page is one range read (0.1-1.2 ms;
-- docs/performance.md, "Stop 31").
CREATE INDEX instances_workflow_state_id ON instances (workflow_id, state, id);
CREATE INDEX instances_workflow_started_by_id ON instances (workflow_id, started_by, id);
CREATE INDEX instances_state_started_by_id ON instances (state, started_by, id);
CREATE INDEX instances_workflow_state_started_by_id ON instances (workflow_id, state, started_by, id);
-- Their statistics now, not at cron's next `PRAGMA optimize`: until then SQLite priced a new
-- index as narrow and read a page of one state through `(state, started_by, id)`, sorting the
-- state's every row (47 ms at a million instances, right after the upgrade). A sample of each
-- (`analysis_limit`, as `Db::optimize` takes) is enough for the planner to prefer `(state, id)`.
PRAGMA analysis_limit = 400;
ANALYZE instances_workflow_state_id;
ANALYZE instances_workflow_started_by_id;
ANALYZE instances_state_started_by_id;
ANALYZE instances_workflow_state_started_by_id;
