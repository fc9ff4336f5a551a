import sqlite3, glob, os, time
path='target/tmp/rounds.db'
if os.path.exists(path): os.remove(path)
c=sqlite3.connect(path)
for f in sorted(glob.glob('migrations/sqlite/*.sql')):
    c.executescript(open(f).read())
t=time.time()
c.execute("INSERT INTO workflows (name,label,created_at,updated_at) VALUES ('w','W',0,0)")
c.execute("INSERT INTO workflow_versions (workflow_id,number,definition,created_at) VALUES (1,1,'{}',0)")
c.execute("""WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<1000000)
INSERT INTO instances (workflow_id,version_id,subject_title,subject_body,token,step_index,state,created_at,updated_at,round)
SELECT 1,1,'t'||i,'', 'tok', i%3, CASE WHEN i%10=0 THEN 'active' ELSE 'complete' END, i, i, i%7=0 FROM n""")
c.execute("""WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM n WHERE i<5499999)
INSERT INTO history (instance_id,step_index,branch,event,answer,at,step_title,kind,participant,actor,round)
SELECT 1+(i%1000000), (i/1000000)%3, '', CASE (i/1000000) WHEN 0 THEN 'started' WHEN 1 THEN 'answered' WHEN 2 THEN 'answered' WHEN 3 THEN 'reassigned' ELSE 'reopened' END, '{}', i, '', '', 'manager', CASE WHEN i%5=0 THEN 'forward:manager' ELSE 'cli' END, 0 FROM n""")
c.commit(); c.execute("ANALYZE"); c.commit()
print('built in', round(time.time()-t,1),'s')
qs={
'for_link (round join)':"SELECT instances.id, (SELECT COALESCE(l.revoked_at, 0) FROM links l WHERE l.hash = ?2 AND l.instance_id = instances.id) AS revoked_at, h.branch FROM instances LEFT JOIN history h ON h.instance_id = instances.id AND h.step_index = instances.step_index AND h.round = instances.round AND h.event = 'answered' WHERE instances.id = (SELECT id FROM instances WHERE id <= ?1 ORDER BY id DESC LIMIT 1)",
'answered_branches':"SELECT branch FROM history WHERE instance_id = ?1 AND step_index = ?2 AND event = 'answered' AND round = (SELECT round FROM instances WHERE id = ?1)",
'record_answer lock':"UPDATE instances SET updated_at = ?1 WHERE id = ?2 AND step_index = ?3 AND state = 'active' RETURNING round",
'record_answer answered':"SELECT branch, answer FROM history WHERE instance_id = ?1 AND step_index = ?2 AND round = ?3 AND event = 'answered'",
'asked_again':"SELECT event, participant, answer FROM history WHERE instance_id = ?1 AND step_index = ?2 AND ((event = 'answered' AND branch = ?3) OR (event = 'reopened' AND round = (SELECT round FROM instances WHERE id = ?1))) ORDER BY id DESC",
'forwards':"SELECT COUNT(*) FROM history WHERE instance_id = ?1 AND event = 'reassigned' AND participant = ?2 AND actor LIKE 'forward:%'",
'insert_history round':"INSERT INTO history (instance_id, step_index, branch, event, answer, at, step_title, kind, participant, actor, round) VALUES (?1, 0, '', 'x', '{}', 0, '', '', '', '', (SELECT round FROM instances WHERE id = ?1))",
'round += 1':"UPDATE instances SET round = round + 1 WHERE id = ?1",
}
for name,q in qs.items():
    plan=c.execute('EXPLAIN QUERY PLAN '+q,(500000,'h','') if q.count('?3') else ((500000,1,0) if '?3' in q else (500000,'x'))).fetchall() if False else None
    nparams=max(int(p[1]) for p in __import__('re').findall(r'\?(\d)',q).__iter__().__class__([q]) ) if False else None
    import re
    n=max(int(x) for x in re.findall(r'\?(\d)',q))
    args=[500000,1,0][:n]
    plan=c.execute('EXPLAIN QUERY PLAN '+q,args).fetchall()
    t=time.perf_counter()
    for _ in range(200):
        if q.startswith('SELECT'): c.execute(q,args).fetchall()
    el=(time.perf_counter()-t)/200*1e6
    print(f'## {name}' + (f'  ({el:.0f} µs)' if q.startswith('SELECT') else ''))
    for row in plan: print('   ', row[3])
c.rollback()
