#!/bin/bash
# The plans of the metrics' instance count and an answer's step-start read on PostgreSQL, on
# the data of instance_counts_sqlite.py. PORT: a throwaway cluster's (docs/plans/*.sh).
set -e
PSQL="/usr/lib/postgresql/15/bin/psql -h 127.0.0.1 -p ${PORT:-55471} -U postgres -q"
$PSQL -c "DROP DATABASE IF EXISTS counts_explain" -c "CREATE DATABASE counts_explain"
P="$PSQL -d counts_explain -v ON_ERROR_STOP=1"
for f in $(ls migrations/postgres/*.sql | sort); do $P -f $f >/dev/null; done
$P <<'SQL'
INSERT INTO workflows (name,label,created_at,updated_at) SELECT 'w'||i,'W',0,0 FROM generate_series(1,20) i;
INSERT INTO workflow_versions (workflow_id,number,definition,created_at) SELECT id,1,'{}',0 FROM workflows;
INSERT INTO instances (workflow_id,version_id,subject_title,subject_body,token,step_index,state,created_at,updated_at,round)
SELECT 1+i%20,1+i%20,'t'||i,'','tok',i%3,CASE i%10 WHEN 0 THEN 'active' WHEN 1 THEN 'rejected' WHEN 2 THEN 'cancelled' WHEN 3 THEN 'expired' ELSE 'complete' END,i,i,0 FROM generate_series(1,1000000) i;
INSERT INTO history (instance_id,step_index,branch,event,answer,at,step_title,kind,participant,actor,round)
SELECT 1+(i%1000000),(i/1000000)%3,'',CASE (i/1000000) WHEN 0 THEN 'started' WHEN 1 THEN 'answered' WHEN 2 THEN 'answered' WHEN 3 THEN 'reassigned' ELSE 'reopened' END,'{}',i,'','','manager','cli',0 FROM generate_series(0,5499999) i;
VACUUM ANALYZE;
SQL
run() { echo "## $1"; $P -c "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) $2" | sed 's/^/    /'; }
run "instance_counts" "SELECT w.name, c.state, c.n FROM (SELECT workflow_id, state, COUNT(*) AS n FROM instances GROUP BY workflow_id, state) c JOIN workflows w ON w.id = c.workflow_id"
run "instance_counts (joined first, as first sketched)" "SELECT w.name, i.state, COUNT(*) FROM instances i JOIN workflows w ON w.id = i.workflow_id GROUP BY w.name, i.state"
run "step_asked" "SELECT w.name, (SELECT MAX(h.at) FROM history h WHERE h.instance_id = i.id AND h.event IN ('started', 'answered', 'step_expired', 'skipped', 'reopened') AND NOT (h.event = 'answered' AND h.step_index = 1 AND h.round = 0)) FROM instances i JOIN workflows w ON w.id = i.workflow_id WHERE i.id = 500000"
$PSQL -c "DROP DATABASE counts_explain"
