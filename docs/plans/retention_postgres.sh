#!/bin/bash
# Retention's queries' plans on a million instances (PostgreSQL): run from the repository's root
# against a throwaway cluster, `PGPORT=… bash docs/plans/retention_postgres.sh > docs/plans/retention_postgres.txt`.
set -e
PSQL="/usr/lib/postgresql/15/bin/psql -h 127.0.0.1 -p ${PGPORT:-55451} -U postgres -q"
$PSQL -c "DROP DATABASE IF EXISTS retention_explain" -c "CREATE DATABASE retention_explain"
P="$PSQL -d retention_explain -v ON_ERROR_STOP=1"
for f in $(ls migrations/postgres/*.sql | sort); do $P -f $f >/dev/null; done
Y=31536000
$P <<SQL
INSERT INTO workflows (name,label,created_at,updated_at) VALUES ('w','W',0,0),('v','V',0,0);
INSERT INTO workflow_versions (workflow_id,number,definition,created_at) VALUES (1,1,'{}',0),(2,1,'{}',0);
-- As retention_sqlite.py: a million instances over two workflows and three years, one in ten
-- running, those ended over two years ago erased already; an answer, contact, email and
-- message each.
INSERT INTO instances (workflow_id,version_id,subject_title,subject_body,token,step_index,state,created_at,updated_at,round,ended_at,erased_at)
SELECT 1+i%2,1+i%2,'t'||i,'','tok',1,CASE WHEN i%10=0 THEN 'active' ELSE 'complete' END,i*95,i*95,0,
 CASE WHEN i%10=0 THEN NULL ELSE i*95 END,
 CASE WHEN i%10<>0 AND i*95 < $Y THEN 3*$Y END FROM generate_series(1,1000000) i;
INSERT INTO history (instance_id,step_index,branch,event,answer,at,step_title,kind,participant,actor,round)
SELECT i,0,'','answered','{"fields":[{"name":"notes","value":"words of the answer '||i||'"}]}',i*95,'','form','supplier','',0 FROM generate_series(1,1000000) i;
INSERT INTO contacts (instance_id,participant,email,name,lang) SELECT i,'supplier','person'||i||'@example.org','','en' FROM generate_series(1,1000000) i;
INSERT INTO mails (instance_id,participant,step_index,kind,state,next_at,created_at) SELECT i,'supplier',0,'link','sent',i*95,i*95 FROM generate_series(1,1000000) i;
INSERT INTO outbox (event,instance_id,workflow,step_index,step_title,participant,created_at)
SELECT 'step.answered',i,'w',0,'','supplier',i*95 FROM generate_series(1,1000000) i;
ANALYZE;
SQL
CUTOFF=$((2*Y+30*86400))
IDS=$($P -At -c "SELECT string_agg(id::text, ',') FROM (SELECT id FROM instances WHERE workflow_id = 1 AND ended_at <= $CUTOFF AND erased_at IS NULL ORDER BY ended_at LIMIT 100) d")
run() { echo "## $1"; $P -c "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) $2" | sed 's/^/    /'; }
# Bound as the app binds them ($1…), so the plans are the generic ones a prepared statement gets
# after five runs as well as the custom ones.
$P <<SQL | sed 's/^/    /'
PREPARE due(bigint, bigint, bigint) AS SELECT id FROM instances WHERE workflow_id = \$1 AND ended_at <= \$2 AND erased_at IS NULL ORDER BY ended_at LIMIT \$3;
SET plan_cache_mode = force_generic_plan;
\echo '## due, generic plan (as a prepared statement runs it)'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) EXECUTE due(1, $CUTOFF, 100);
SQL
run "due (a batch of one workflow's instances past the cutoff)" "SELECT id FROM instances WHERE workflow_id = 1 AND ended_at <= $CUTOFF AND erased_at IS NULL ORDER BY ended_at LIMIT 100"
echo "## a batch erased, one transaction (each statement's plan and time)"
$P <<SQL | sed 's/^/    /'
BEGIN;
EXPLAIN (ANALYZE, COSTS OFF) UPDATE instances SET erased_at = 1 WHERE id IN ($IDS) AND erased_at IS NULL AND state <> 'active' RETURNING id;
EXPLAIN (ANALYZE, COSTS OFF) UPDATE history SET answer = '{"erased":true}' WHERE instance_id IN ($IDS) AND answer <> '{}';
EXPLAIN (ANALYZE, COSTS OFF) DELETE FROM file_chunks WHERE file_id IN (SELECT id FROM files WHERE instance_id IN ($IDS));
EXPLAIN (ANALYZE, COSTS OFF) DELETE FROM contacts WHERE instance_id IN ($IDS);
EXPLAIN (ANALYZE, COSTS OFF) UPDATE mails SET error = NULL WHERE instance_id IN ($IDS) AND error IS NOT NULL;
EXPLAIN (ANALYZE, COSTS OFF) UPDATE outbox SET files = NULL WHERE instance_id IN ($IDS) AND files IS NOT NULL;
COMMIT;
SQL
run "contact erase: contacts by address" "DELETE FROM contacts WHERE LOWER(email) = 'person999999@example.org'"
run "contact erase: texts holding it (a whole scan, an operator's command)" "SELECT id, answer FROM history WHERE LOWER(answer) LIKE '%person999999@example.org%' ESCAPE '\\'"
$PSQL -c "DROP DATABASE retention_explain"
