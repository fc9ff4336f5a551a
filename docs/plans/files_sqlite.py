# The files queries' plans on a million rows (SQLite): run from the repository's root,
# `python3 docs/plans/files_sqlite.py > docs/plans/files_sqlite.txt`.
import sqlite3, glob, os, re, time
os.makedirs('target/tmp', exist_ok=True)
path='target/tmp/files.db'
if os.path.exists(path): os.remove(path)
c=sqlite3.connect(path)
for f in sorted(glob.glob('migrations/sqlite/*.sql')):
    c.executescript(open(f).read())
t=time.time()
c.execute("INSERT INTO workflows (name,label,created_at,updated_at) VALUES ('w','W',0,0)")
c.execute("INSERT INTO workflow_versions (workflow_id,number,definition,created_at) VALUES (1,1,'{}',0)")
# 1,000,000 instances, a file each (one in 100 still arriving), four chunks each, an answer each
# and its step.answered message.
c.execute("""WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<1000000)
INSERT INTO instances (workflow_id,version_id,subject_title,subject_body,token,step_index,state,created_at,updated_at,round)
SELECT 1,1,'t'||i,'','tok',1,'active',i,i,0 FROM n""")
c.execute("""WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<1000000)
INSERT INTO files (instance_id,step_index,field,name,media_type,size,sha256,kept,created_at)
SELECT i,0,'certificate','c'||i||'.pdf','application/pdf',1000,'ab',i%100<>0,i FROM n""")
c.execute("""WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM n WHERE i<3999999)
INSERT INTO file_chunks (file_id,seq,data) SELECT 1+(i/4), i%4, x'00' FROM n""")
c.execute("""WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<1000000)
INSERT INTO history (instance_id,step_index,branch,event,answer,at,step_title,kind,participant,actor,round)
SELECT i,0,'supplier','answered','{}',i,'','form','supplier','',0 FROM n""")
c.execute("""WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<1000000)
INSERT INTO outbox (event,instance_id,workflow,step_index,step_title,participant,created_at)
SELECT 'step.answered',i,'w',0,'','supplier',i FROM n""")
c.commit(); c.execute("ANALYZE"); c.commit()
print('built in', round(time.time()-t,1),'s')
qs={
'of_instance (files by instance)':"SELECT id, instance_id, step_index, field, name, media_type, size, sha256, created_at FROM files WHERE instance_id = ?1 AND kept = 1 ORDER BY id",
'kept (one file of an instance)':"SELECT id, instance_id, step_index, field, name, media_type, size, sha256, created_at FROM files WHERE id = ?1 AND instance_id = ?2 AND kept = 1",
'sweep (arriving)':"SELECT id FROM files WHERE kept = 0 AND created_at < ?1 ORDER BY created_at LIMIT ?2",
'chunk (file_id, seq)':"SELECT data FROM file_chunks WHERE file_id = ?1 AND seq = ?2",
}
args={'sweep (arriving)':[500000,100],'chunk (file_id, seq)':[500000,2],
      'kept (one file of an instance)':[500000,500000]}
for name,q in qs.items():
    a=args.get(name,[500000])
    plan=c.execute('EXPLAIN QUERY PLAN '+q,a).fetchall()
    t=time.perf_counter()
    for _ in range(200): c.execute(q,a).fetchall()
    el=(time.perf_counter()-t)/200*1e6
    print(f'## {name}  ({el:.0f} µs)')
    for row in plan: print('   ', row[3])
c.close()
os.remove(path)
