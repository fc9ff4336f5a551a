#!/bin/bash
# The files queries' plans on a million rows (PostgreSQL): run from the repository's root
# against a throwaway cluster, `PGPORT=… bash docs/plans/files_postgres.sh > docs/plans/files_postgres.txt`.
set -e
PSQL="/usr/lib/postgresql/15/bin/psql -h 127.0.0.1 -p ${PGPORT:-55451} -U postgres -q"
$PSQL -c "DROP DATABASE IF EXISTS files_explain" -c "CREATE DATABASE files_explain"
P="$PSQL -d files_explain -v ON_ERROR_STOP=1"
for f in $(ls migrations/postgres/*.sql | sort); do $P -f $f >/dev/null; done
$P <<'SQL'
INSERT INTO workflows (name,label,created_at,updated_at) VALUES ('w','W',0,0);
INSERT INTO workflow_versions (workflow_id,number,definition,created_at) VALUES (1,1,'{}',0);
INSERT INTO instances (workflow_id,version_id,subject_title,subject_body,token,step_index,state,created_at,updated_at,round)
SELECT 1,1,'t'||i,'','tok',1,'active',i,i,0 FROM generate_series(1,1000000) i;
INSERT INTO files (instance_id,step_index,field,name,media_type,size,sha256,kept,created_at)
SELECT i,0,'certificate','c'||i||'.pdf','application/pdf',1000,'ab',(i%100<>0)::int,i FROM generate_series(1,1000000) i;
INSERT INTO file_chunks (file_id,seq,data) SELECT 1+(i/4), i%4, '\x00' FROM generate_series(0,3999999) i;
INSERT INTO history (instance_id,step_index,branch,event,answer,at,step_title,kind,participant,actor,round)
SELECT i,0,'supplier','answered','{}',i,'','form','supplier','',0 FROM generate_series(1,1000000) i;
INSERT INTO outbox (event,instance_id,workflow,step_index,step_title,participant,created_at)
SELECT 'step.answered',i,'w',0,'','supplier',i FROM generate_series(1,1000000) i;
ANALYZE;
SQL
run() { echo "## $1"; $P -c "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) $2" | sed 's/^/    /'; }
run "of_instance (files by instance)" "SELECT id, instance_id, step_index, field, name, media_type, size, sha256, created_at FROM files WHERE instance_id = 500000 AND kept = 1 ORDER BY id"
run "kept (one file of an instance)" "SELECT id, instance_id, step_index, field, name, media_type, size, sha256, created_at FROM files WHERE id = 500000 AND instance_id = 500000 AND kept = 1"
run "sweep (arriving)" "SELECT id FROM files WHERE kept = 0 AND created_at < 500000 ORDER BY created_at LIMIT 100"
run "chunk (file_id, seq)" "SELECT data FROM file_chunks WHERE file_id = 500000 AND seq = 2"
$PSQL -c "DROP DATABASE files_explain"
