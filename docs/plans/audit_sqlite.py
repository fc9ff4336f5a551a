# The audit log's queries' plans on a million events (SQLite): run from the repository's root,
# `python3 docs/plans/audit_sqlite.py > docs/plans/audit_sqlite.txt`. The statements are those
# of src/store/audit.rs (a page, with each filter) and src/store/expired.rs (`Expired::Audit`).
import sqlite3, glob, os, time
os.makedirs('target/tmp', exist_ok=True)
path='target/tmp/audit.db'
for p in (path, path+'-wal', path+'-shm'):
    if os.path.exists(p): os.remove(p)
c=sqlite3.connect(path)
# As the server opens it (src/store/mod.rs).
c.execute('PRAGMA journal_mode=WAL'); c.execute('PRAGMA synchronous=NORMAL')
for f in sorted(glob.glob('migrations/sqlite/*.sql')):
    c.executescript(open(f).read())
# 1,000,000 events over two years (one a minute): nine in ten sign-ins, by 20 administrators;
# one in a thousand a key rotation (the rare kind a filter looks for).
Y=365*86400
c.execute("""WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<1000000)
INSERT INTO audit_log (at,kind,actor,actor_id,actor_name,address,detail)
SELECT i*63, CASE WHEN i%1000=0 THEN 'keys_rotated' WHEN i%10=0 THEN 'setting_changed' ELSE 'signed_in' END,
 'admin', i%20, 'admin'||(i%20), hex(randomblob(32)), '{}' FROM n""")
c.commit()
c.execute('ANALYZE')
ROW='SELECT id, at, kind, actor, actor_id, actor_name, address, detail FROM audit_log'
queries=[
 ('the first page', ROW+' WHERE 1 = 1 ORDER BY at DESC, id DESC LIMIT ?1', (51,)),
 ('a later page', ROW+' WHERE (at, id) < (?1, ?2) ORDER BY at DESC, id DESC LIMIT ?3', (500000*63,500000,51)),
 ('by kind (rare)', ROW+' WHERE kind = ?1 ORDER BY at DESC, id DESC LIMIT ?2', ('keys_rotated',51)),
 ('by who', ROW+' WHERE actor_name = ?1 AND (at, id) < (?2, ?3) ORDER BY at DESC, id DESC LIMIT ?4', ('admin7',900000*63,900000,51)),
 ('a month a year ago', ROW+' WHERE at >= ?1 AND at < ?2 ORDER BY at DESC, id DESC LIMIT ?3', (Y, Y+30*86400, 51)),
 ('by kind in a month', ROW+' WHERE kind = ?1 AND at >= ?2 AND at < ?3 ORDER BY at DESC, id DESC LIMIT ?4', ('keys_rotated', Y, Y+30*86400, 51)),
]
for name,q,args in queries:
    plan=c.execute('EXPLAIN QUERY PLAN '+q,args).fetchall()
    t=time.time(); n=len(c.execute(q,args).fetchall()); ms=(time.time()-t)*1000
    print(f'## {name}: {n} rows, {ms:.1f} ms')
    for p in plan: print('    '+p[3])
# Retention: a year's events due (the oldest half), deleted 500 a statement as cron does.
d="DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log WHERE at < ?1 ORDER BY at LIMIT ?2)"
plan=c.execute('EXPLAIN QUERY PLAN '+d,(Y,500)).fetchall()
took=[]; total=0
while True:
    t=time.time(); gone=c.execute(d,(Y,500)).rowcount; c.commit(); took.append((time.time()-t)*1000)
    total+=gone
    # As store::expired does between batches: the WAL's pages to the file, passively.
    c.execute('PRAGMA wal_checkpoint(PASSIVE)')
    if gone<500: break
took.sort()
print(f'## retention batch (500 rows): {total} rows in {len(took)} batches, median {took[len(took)//2]:.1f} ms, slowest {took[-1]:.1f} ms')
for p in plan: print('    '+p[3])
