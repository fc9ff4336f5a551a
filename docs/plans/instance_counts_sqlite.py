# The plan and time of the metrics' instance count (store::workflows::INSTANCE_COUNTS) and the
# step-start read of an answer (store::history::step_asked) on a million instances, 20
# workflows, 5.5 million history lines. Run from the repository's root; prints the plans.
import sqlite3, glob, os, time
path='target/tmp/instance_counts.db'
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
INSERT INTO history (instance_id,step_index,branch,event,answer,at,step_title,kind,participant,actor,round)
SELECT 1+(i%1000000),(i/1000000)%3,'',CASE (i/1000000) WHEN 0 THEN 'started' WHEN 1 THEN 'answered' WHEN 2 THEN 'answered' WHEN 3 THEN 'reassigned' ELSE 'reopened' END,'{}',i,'','','manager','cli',0 FROM n""")
c.commit(); c.execute("ANALYZE"); c.commit()
print('built in', round(time.time()-t,1),'s')
qs={
'instance_counts':"SELECT w.name, c.state, c.n FROM (SELECT workflow_id, state, COUNT(*) AS n FROM instances GROUP BY workflow_id, state) c JOIN workflows w ON w.id = c.workflow_id",
'instance_counts (joined first, as first sketched)':"SELECT w.name, i.state, COUNT(*) FROM instances i JOIN workflows w ON w.id = i.workflow_id GROUP BY w.name, i.state",
'step_asked':"SELECT w.name, (SELECT MAX(h.at) FROM history h WHERE h.instance_id = i.id AND h.event IN ('started', 'answered', 'step_expired', 'skipped', 'reopened') AND NOT (h.event = 'answered' AND h.step_index = ?2 AND h.round = ?3)) FROM instances i JOIN workflows w ON w.id = i.workflow_id WHERE i.id = ?1",
}
for name,q in qs.items():
    args=[500000,1,0] if '?1' in q else []
    plan=c.execute('EXPLAIN QUERY PLAN '+q,args).fetchall()
    runs=5 if not args else 200
    t=time.perf_counter()
    for _ in range(runs): c.execute(q,args).fetchall()
    el=(time.perf_counter()-t)/runs*1e3
    print(f'## {name}  ({el:.2f} ms)')
    for row in plan: print('   ', row[3])
