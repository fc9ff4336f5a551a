#!/bin/bash
# The plans of the evidence record's, the waiting column's and the doorway link read's queries on
# PostgreSQL, on the data of evidence_sqlite.py. PORT: a throwaway cluster's (docs/plans/*.sh).
set -e
PSQL="/usr/lib/postgresql/15/bin/psql -h 127.0.0.1 -p ${PORT:-55471} -U postgres -q"
$PSQL -c "DROP DATABASE IF EXISTS evidence_explain" -c "CREATE DATABASE evidence_explain"
P="$PSQL -d evidence_explain -v ON_ERROR_STOP=1"
for f in $(ls migrations/postgres/*.sql | sort); do $P -f $f >/dev/null; done
$P <<'SQL'
INSERT INTO workflows (name,label,created_at,updated_at) SELECT 'w'||i,'W',0,0 FROM generate_series(1,20) i;
INSERT INTO workflow_versions (workflow_id,number,definition,created_at) SELECT id,1,'{}',0 FROM workflows;
INSERT INTO instances (workflow_id,version_id,subject_title,subject_body,token,step_index,state,created_at,updated_at,round)
SELECT 1+i%20,1+i%20,'t'||i,'','tok',i%3,CASE i%10 WHEN 0 THEN 'active' WHEN 1 THEN 'rejected' WHEN 2 THEN 'cancelled' WHEN 3 THEN 'expired' ELSE 'complete' END,i,i,0 FROM generate_series(1,1000000) i;
INSERT INTO history (instance_id,step_index,branch,event,answer,at,step_title,kind,participant,actor,round,answer_sha256,link_id,client)
SELECT 1+(i%1000000),(i/1000000)%3,'',CASE (i/1000000) WHEN 0 THEN 'started' WHEN 1 THEN 'answered' WHEN 2 THEN 'answered' WHEN 3 THEN 'reassigned' ELSE 'reopened' END,'{}',i,'','','manager','cli',0,'h',1+(i%1000000),'c' FROM generate_series(0,5499999) i;
INSERT INTO links (instance_id,hash,participant,expires,issued_by,issued_at) SELECT i,'hash'||i,'manager',i,'cli',i FROM generate_series(1,1000000) i;
INSERT INTO contacts (instance_id,participant,email,name,lang) SELECT i,p,p||i||'@example.com','N','en' FROM generate_series(1,1000000) i, (VALUES ('manager'),('finance')) v(p);
VACUUM ANALYZE;
SQL
IDS=$(seq -s, 500000 500049)
run() { echo "## $1"; $P -c "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) $2" | sed 's/^/    /'; }
run "for_link (the doorway read, with the link record id)" "SELECT instances.id, l.revoked_at, l.id AS link_id, h.branch FROM (SELECT * FROM instances WHERE id <= 500000 ORDER BY id DESC LIMIT 1) AS instances LEFT JOIN links l ON l.hash = 'hash500000' AND l.instance_id = instances.id LEFT JOIN history h ON h.instance_id = instances.id AND h.step_index = instances.step_index AND h.round = instances.round AND h.event = 'answered'"
run "waits: since (50 ids)" "SELECT h.instance_id, MAX(h.at) FROM history h JOIN instances i ON i.id = h.instance_id WHERE h.instance_id IN ($IDS) AND h.event IN ('started', 'answered', 'step_expired', 'skipped', 'reopened') AND NOT (h.event = 'answered' AND h.step_index = i.step_index AND h.round = i.round) GROUP BY h.instance_id"
run "waits: answered (50 ids)" "SELECT h.instance_id, h.branch FROM history h JOIN instances i ON i.id = h.instance_id WHERE h.instance_id IN ($IDS) AND h.step_index = i.step_index AND h.round = i.round AND h.event = 'answered'"
run "waits: names (50 ids)" "SELECT instance_id, participant, name FROM contacts WHERE instance_id IN ($IDS)"
run "record_lines (one instance)" "SELECT id, step_index, round, branch, event, answer, at, step_title, kind, participant, actor, answer_sha256, link_id, client, verified FROM history WHERE instance_id = 500000 ORDER BY id"
$PSQL -c "DROP DATABASE evidence_explain"
