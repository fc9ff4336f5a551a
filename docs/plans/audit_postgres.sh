#!/bin/bash
# The audit log's queries' plans on a million events (PostgreSQL): run from the repository's root
# against a throwaway cluster, `PGPORT=… bash docs/plans/audit_postgres.sh > docs/plans/audit_postgres.txt`.
set -e
PSQL="/usr/lib/postgresql/15/bin/psql -h 127.0.0.1 -p ${PGPORT:-54434} -U postgres -q"
$PSQL -c "DROP DATABASE IF EXISTS audit_explain" -c "CREATE DATABASE audit_explain"
P="$PSQL -d audit_explain -v ON_ERROR_STOP=1"
for f in $(ls migrations/postgres/*.sql | sort); do $P -f $f >/dev/null; done
Y=31536000
$P <<SQL
-- As audit_sqlite.py: a million events over two years, nine in ten sign-ins by 20
-- administrators, one in a thousand a key rotation.
INSERT INTO audit_log (at,kind,actor,actor_id,actor_name,address,detail)
SELECT i*63, CASE WHEN i%1000=0 THEN 'keys_rotated' WHEN i%10=0 THEN 'setting_changed' ELSE 'signed_in' END,
 'admin', i%20, 'admin'||(i%20), md5(i::text)||md5((i+1)::text), '{}' FROM generate_series(1,1000000) i;
ANALYZE;
SQL
ROW="SELECT id, at, kind, actor, actor_id, actor_name, address, detail FROM audit_log"
run() { echo "## $1"; $P -c "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) $2" | sed 's/^/    /'; }
run "the first page" "$ROW WHERE 1 = 1 ORDER BY at DESC, id DESC LIMIT 51"
run "a later page" "$ROW WHERE (at, id) < ($((500000*63)), 500000) ORDER BY at DESC, id DESC LIMIT 51"
run "by kind (rare)" "$ROW WHERE kind = 'keys_rotated' ORDER BY at DESC, id DESC LIMIT 51"
run "by who" "$ROW WHERE actor_name = 'admin7' AND (at, id) < ($((900000*63)), 900000) ORDER BY at DESC, id DESC LIMIT 51"
run "a month a year ago" "$ROW WHERE at >= $Y AND at < $((Y+30*86400)) ORDER BY at DESC, id DESC LIMIT 51"
run "by kind in a month" "$ROW WHERE kind = 'keys_rotated' AND at >= $Y AND at < $((Y+30*86400)) ORDER BY at DESC, id DESC LIMIT 51"
run "retention batch (the first of a year due)" "DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log WHERE at < $Y ORDER BY at LIMIT 500)"
# Half the year's batches later: the index's entries for deleted rows are skipped, not re-read.
for n in $(seq 1 500); do $P -c "DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log WHERE at < $Y ORDER BY at LIMIT 500)"; done
run "retention batch (after 500 batches, before vacuum)" "DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log WHERE at < $Y ORDER BY at LIMIT 500)"
