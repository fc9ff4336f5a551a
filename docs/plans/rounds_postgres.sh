#!/bin/bash
set -e
PSQL="/usr/lib/postgresql/15/bin/psql -h 127.0.0.1 -p 55440 -U postgres -q"
$PSQL -c "DROP DATABASE IF EXISTS rounds_explain" -c "CREATE DATABASE rounds_explain"
P="$PSQL -d rounds_explain -v ON_ERROR_STOP=1"
for f in $(ls migrations/postgres/*.sql | sort); do $P -f $f >/dev/null; done
$P <<'SQL'
INSERT INTO workflows (name,label,created_at,updated_at) VALUES ('w','W',0,0);
INSERT INTO workflow_versions (workflow_id,number,definition,created_at) VALUES (1,1,'{}',0);
INSERT INTO instances (workflow_id,version_id,subject_title,subject_body,token,step_index,state,created_at,updated_at,round)
SELECT 1,1,'t'||i,'','tok',i%3,CASE WHEN i%10=0 THEN 'active' ELSE 'complete' END,i,i,(i%7=0)::int FROM generate_series(1,1000000) i;
INSERT INTO history (instance_id,step_index,branch,event,answer,at,step_title,kind,participant,actor,round)
SELECT 1+(i%1000000),(i/1000000)%3,'',CASE (i/1000000) WHEN 0 THEN 'started' WHEN 1 THEN 'answered' WHEN 2 THEN 'answered' WHEN 3 THEN 'reassigned' ELSE 'reopened' END,'{}',i,'','','manager',CASE WHEN i%5=0 THEN 'forward:manager' ELSE 'cli' END,0 FROM generate_series(0,5499999) i;
ANALYZE;
SQL
run() { echo "## $1"; $P -c "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) $2" | sed 's/^/    /'; }
run "for_link (round join)" "SELECT instances.id, (SELECT COALESCE(l.revoked_at, 0) FROM links l WHERE l.hash = 'h' AND l.instance_id = instances.id) AS revoked_at, h.branch FROM (SELECT * FROM instances WHERE id <= 500000 ORDER BY id DESC LIMIT 1) AS instances LEFT JOIN history h ON h.instance_id = instances.id AND h.step_index = instances.step_index AND h.round = instances.round AND h.event = 'answered'"
run "answered_branches" "SELECT branch FROM history WHERE instance_id = 500000 AND step_index = 1 AND event = 'answered' AND round = (SELECT round FROM instances WHERE id = 500000)"
run "record_answer answered" "SELECT branch, answer FROM history WHERE instance_id = 500000 AND step_index = 1 AND round = 0 AND event = 'answered'"
run "asked_again" "SELECT event, participant, answer FROM history WHERE instance_id = 500000 AND step_index = 1 AND ((event = 'answered' AND branch = '') OR (event = 'reopened' AND round = (SELECT round FROM instances WHERE id = 500000))) ORDER BY id DESC"
run "forwards" "SELECT COUNT(*) FROM history WHERE instance_id = 500000 AND event = 'reassigned' AND participant = 'manager' AND actor LIKE 'forward:%'"
$P -c "BEGIN" -c "EXPLAIN (COSTS OFF) INSERT INTO history (instance_id, step_index, branch, event, answer, at, step_title, kind, participant, actor, round) VALUES (500000, 0, '', 'x', '{}', 0, '', '', '', '', (SELECT round FROM instances WHERE id = 500000))" -c "ROLLBACK" | sed 's/^/    /'
$PSQL -c "DROP DATABASE rounds_explain"
