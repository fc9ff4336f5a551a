# The plans and times of the reads the evidence record, the list's waiting column and the
# doorway's link read (with its link record's id) make, on a million instances, 20 workflows,
# 5.5 million history lines, a million links and two million contacts. Run from the
# repository's root; prints the plans.
import sqlite3, glob, os, time
path='target/tmp/evidence.db'
os.makedirs('target/tmp', exist_ok=True)
if os.path.exists(path): os.remove(path)
c=sqlite3.connect(path)
for f in sorted(glob.glob('migrations/sqlite/*.sql')):
    c.executescript(open(f).read())
t=time.time()
c.execute("""WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<20)
INSERT INTO workflows (name,label,created_at,updated_at) SELECT 'w'||i,'W',0,0 FROM n""")
c.execute("INSERT INTO workflow_versions (workflow_id,number,definition,created_at) SELECT id,1,'{}',0 FROM workflows")
c.execute("""WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<1000000)
INSERT INTO instances (workflow_id,version_id,subject_title,subject_body,token,step_index,state,created_at,updated_at,round)
SELECT 1+i%20,1+i%20,'t'||i,'','tok',i%3,CASE i%10 WHEN 0 THEN 'active' WHEN 1 THEN 'rejected' WHEN 2 THEN 'cancelled' WHEN 3 THEN 'expired' ELSE 'complete' END,i,i,0 FROM n""")
c.execute("""WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM n WHERE i<5499999)
INSERT INTO history (instance_id,step_index,branch,event,answer,at,step_title,kind,participant,actor,round,answer_sha256,link_id,client)
SELECT 1+(i%1000000),(i/1000000)%3,'',CASE (i/1000000) WHEN 0 THEN 'started' WHEN 1 THEN 'answered' WHEN 2 THEN 'answered' WHEN 3 THEN 'reassigned' ELSE 'reopened' END,'{}',i,'','','manager','cli',0,'h',1+(i%1000000),'c' FROM n""")
c.execute("""WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<1000000)
INSERT INTO links (instance_id,hash,participant,expires,issued_by,issued_at) SELECT i,'hash'||i,'manager',i,'cli',i FROM n""")
c.execute("""WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<1000000)
INSERT INTO contacts (instance_id,participant,email,name,lang) SELECT i,p,p||i||'@example.com','N','en' FROM n, (SELECT 'manager' AS p UNION ALL SELECT 'finance')""")
c.commit(); c.execute("ANALYZE"); c.commit()
print('built in', round(time.time()-t,1),'s')
ids=list(range(500000,500050))
ph=','.join('?'*len(ids))
qs={
'for_link (the doorway read, with the link record id)':("SELECT instances.id, l.revoked_at, l.id AS link_id, h.branch FROM instances LEFT JOIN links l ON l.hash = ?2 AND l.instance_id = instances.id LEFT JOIN history h ON h.instance_id = instances.id AND h.step_index = instances.step_index AND h.round = instances.round AND h.event = 'answered' WHERE instances.id = (SELECT id FROM instances WHERE id <= ?1 ORDER BY id DESC LIMIT 1)",[500000,'hash500000']),
'waits: since (50 ids)':(f"SELECT h.instance_id, MAX(h.at) FROM history h JOIN instances i ON i.id = h.instance_id WHERE h.instance_id IN ({ph}) AND h.event IN ('started', 'answered', 'step_expired', 'skipped', 'reopened') AND NOT (h.event = 'answered' AND h.step_index = i.step_index AND h.round = i.round) GROUP BY h.instance_id",ids),
'waits: answered (50 ids)':(f"SELECT h.instance_id, h.branch FROM history h JOIN instances i ON i.id = h.instance_id WHERE h.instance_id IN ({ph}) AND h.step_index = i.step_index AND h.round = i.round AND h.event = 'answered'",ids),
'waits: names (50 ids)':(f"SELECT instance_id, participant, name FROM contacts WHERE instance_id IN ({ph})",ids),
'record_lines (one instance)':("SELECT id, step_index, round, branch, event, answer, at, step_title, kind, participant, actor, answer_sha256, link_id, client, verified FROM history WHERE instance_id = ?1 ORDER BY id",[500000]),
}
for name,(q,args) in qs.items():
    plan=c.execute('EXPLAIN QUERY PLAN '+q,args).fetchall()
    runs=200
    t=time.perf_counter()
    for _ in range(runs): c.execute(q,args).fetchall()
    el=(time.perf_counter()-t)/runs*1e3
    print(f'## {name}  ({el:.3f} ms)')
    for row in plan: print('   ', row[3])
