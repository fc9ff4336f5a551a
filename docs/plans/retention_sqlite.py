# Retention's queries' plans on a million instances (SQLite): run from the repository's root,
# `python3 docs/plans/retention_sqlite.py > docs/plans/retention_sqlite.txt`.
import sqlite3, glob, os, time
os.makedirs('target/tmp', exist_ok=True)
path='target/tmp/retention.db'
for p in (path, path+'-wal', path+'-shm'):
    if os.path.exists(p): os.remove(p)
c=sqlite3.connect(path)
for f in sorted(glob.glob('migrations/sqlite/*.sql')):
    c.executescript(open(f).read())
t=time.time()
c.execute("INSERT INTO workflows (name,label,created_at,updated_at) VALUES ('w','W',0,0),('v','V',0,0)")
c.execute("INSERT INTO workflow_versions (workflow_id,number,definition,created_at) VALUES (1,1,'{}',0),(2,1,'{}',0)")
# 1,000,000 instances over two workflows and three years (one a minute and a half): one in ten
# running, the rest ended when they were last changed; those ended over two years ago erased
# already. An answer, a contact, an email and a step.answered message each.
Y=365*86400
c.execute(f"""WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<1000000)
INSERT INTO instances (workflow_id,version_id,subject_title,subject_body,token,step_index,state,created_at,updated_at,round,ended_at,erased_at)
SELECT 1+i%2,1+i%2,'t'||i,'','tok',1,CASE WHEN i%10=0 THEN 'active' ELSE 'complete' END,i*95,i*95,0,
 CASE WHEN i%10=0 THEN NULL ELSE i*95 END,
 CASE WHEN i%10<>0 AND i*95 < {Y} THEN {3*Y} END FROM n""")
c.execute("""WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<1000000)
INSERT INTO history (instance_id,step_index,branch,event,answer,at,step_title,kind,participant,actor,round)
SELECT i,0,'','answered','{"fields":[{"name":"notes","value":"words of the answer '||i||'"}]}',i*95,'','form','supplier','',0 FROM n""")
c.execute("""WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<1000000)
INSERT INTO contacts (instance_id,participant,email,name,lang) SELECT i,'supplier','person'||i||'@example.org','','en' FROM n""")
c.execute("""WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<1000000)
INSERT INTO mails (instance_id,participant,step_index,kind,state,next_at,created_at) SELECT i,'supplier',0,'link','sent',i*95,i*95 FROM n""")
c.execute("""WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<1000000)
INSERT INTO outbox (event,instance_id,workflow,step_index,step_title,participant,created_at)
SELECT 'step.answered',i,'w',0,'','supplier',i*95 FROM n""")
c.commit(); c.execute("ANALYZE"); c.commit()
print('built in', round(time.time()-t,1),'s')
c.execute('PRAGMA journal_mode = WAL'); c.execute('PRAGMA secure_delete = ON')
cutoff=2*Y+30*86400
due="SELECT id FROM instances WHERE workflow_id = ?1 AND ended_at <= ?2 AND erased_at IS NULL ORDER BY ended_at LIMIT ?3"
ids=[r[0] for r in c.execute(due,[1,cutoff,100]).fetchall()]
marks=','.join('?%d' % (i+1) for i in range(100))
qs={
'due (a batch of one workflow\'s instances past the cutoff)':(due,[1,cutoff,100]),
'erase: instances marked':(f"UPDATE instances SET erased_at = 1 WHERE id IN ({marks}) AND erased_at IS NULL AND state <> 'active' RETURNING id",ids),
'erase: history answers':(f"UPDATE history SET answer = '{{\"erased\":true}}' WHERE instance_id IN ({marks}) AND answer <> '{{}}'",ids),
'erase: file chunks':(f"DELETE FROM file_chunks WHERE file_id IN (SELECT id FROM files WHERE instance_id IN ({marks}))",ids),
'erase: contacts':(f"DELETE FROM contacts WHERE instance_id IN ({marks})",ids),
'erase: mails':(f"UPDATE mails SET error = NULL WHERE instance_id IN ({marks}) AND error IS NOT NULL",ids),
'erase: outbox':(f"UPDATE outbox SET files = NULL WHERE instance_id IN ({marks}) AND files IS NOT NULL",ids),
'contact erase: contacts by address':("DELETE FROM contacts WHERE LOWER(email) = ?1",['person999999@example.org']),
'contact erase: texts holding it (a whole scan, an operator\'s command)':("SELECT id, answer FROM history WHERE LOWER(answer) LIKE ?1 ESCAPE '\\'",['%person999999@example.org%']),
}
for name,(q,a) in qs.items():
    plan=c.execute('EXPLAIN QUERY PLAN '+q,a).fetchall()
    print(f'## {name}')
    for row in plan: print('   ', row[3])
# Timings: the due query alone, then whole batches as cron runs them (one transaction each).
t=time.perf_counter()
for _ in range(200): c.execute(due,[1,cutoff,100]).fetchall()
print(f'due: {(time.perf_counter()-t)/200*1e6:.0f} µs a query')
took=[]
for _ in range(20):
    ids=[r[0] for r in c.execute(due,[1,cutoff,100]).fetchall()]
    t=time.perf_counter()
    c.execute('BEGIN IMMEDIATE')
    for name,(q,_) in qs.items():
        if name.startswith('erase'): c.execute(q.replace('erased_at = 1','erased_at = 9'),ids).fetchall()
    c.execute('COMMIT')
    took.append((time.perf_counter()-t)*1000)
took.sort()
print(f'a batch of 100 instances erased (secure_delete on): median {took[10]:.1f} ms, slowest {took[-1]:.1f} ms of 20')
t=time.perf_counter(); c.execute("SELECT id, answer FROM history WHERE LOWER(answer) LIKE ?1 ESCAPE '\\'",['%person999999@example.org%']).fetchall()
print(f'contact erase, one text scan of the history: {(time.perf_counter()-t)*1000:.0f} ms')
size=os.path.getsize(path)
c.execute('PRAGMA wal_checkpoint(TRUNCATE)')
t=time.perf_counter(); c.execute('VACUUM')
print(f'VACUUM of the {size/1e6:.0f} MB file: {time.perf_counter()-t:.1f} s')
c.close()
for p in (path, path+'-wal', path+'-shm'):
    if os.path.exists(p): os.remove(p)
