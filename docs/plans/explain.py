#!/usr/bin/env python3
"""The plans of the queries named below on a million rows, on SQLite and PostgreSQL.

    python3 docs/plans/explain.py sqlite [ROWS]
    python3 docs/plans/explain.py postgres URL [ROWS]

Makes a fresh database with the app's own schema (`orchestra init`, so every migration runs),
fills the tables the queries read with ROWS rows each (default 1,000,000) in one
`INSERT ... SELECT` over a series, runs ANALYZE, and prints each query's plan: SQLite's
`EXPLAIN QUERY PLAN`, PostgreSQL's `EXPLAIN`. docs/performance.md quotes what it printed. A
plan that scans a table it should search is the thing to look for ("SCAN" on SQLite, "Seq
Scan" on PostgreSQL); the note beside a query says when a scan is expected and bounded.
"""

import os
import subprocess
import sys
import tempfile

ORCHESTRA = os.environ.get("ORCHESTRA_BIN", "target/debug/orchestra")

# Each table the queries read: its columns and an expression of the series' `n` for each,
# valid on both databases. Foreign keys are not enforced while filling.
FILL = {
    "instances": {
        "workflow_id": "1", "subject_title": "'t' || n", "subject_body": "''",
        "token": "'k' || n", "step_index": "n % 3",
        "state": "CASE WHEN n % 10 = 0 THEN 'active' ELSE 'completed' END",
        "created_at": "n", "updated_at": "n",
    },
    "history": {
        "instance_id": "n / 6 + 1", "step_index": "n % 3", "branch": "''",
        "event": "CASE WHEN n % 2 = 0 THEN 'answered' ELSE 'issued' END", "answer": "'{}'",
        "at": "n", "answer_sha256": "'h' || n", "link_id": "n / 2 + 1",
    },
    "links": {
        "instance_id": "n / 2 + 1", "hash": "'l' || n", "participant": "'p'",
        "expires": "n + 100000000", "issued_by": "'cli'", "issued_at": "n", "generation": "n % 2",
    },
    "mails": {
        "instance_id": "n + 1", "participant": "'p'", "step_index": "0", "kind": "'link'",
        "state": "CASE WHEN n % 100 = 0 THEN 'pending' ELSE 'sent' END", "next_at": "n",
        "created_at": "n",
    },
    "receipts": {
        "id": "'r' || n", "instance_id": "n / 6 + 1", "history_id": "n", "issued_at": "n",
    },
    "sessions": {
        "id": "'s' || n", "data": "'{}'", "expiry": "n + 100000000", "admin_id": "n % 1000",
        "epoch": "0", "created_at": "n", "seen_at": "n", "agent": "'Firefox'",
    },
    "admins": {
        "name": "'admin' || n", "password_hash": "'x'", "created_at": "n",
        "email": "'a' || n || '@example.org'",
    },
    "admin_mails": {
        "kind": "'invite'", "admin_id": "n % 1000", "email": "'a@example.org'", "name": "'a'",
        "next_at": "n", "state": "CASE WHEN n % 1000 = 0 THEN 'pending' ELSE 'sent' END",
        "created_at": "n",
    },
    "email_codes": {
        "link_id": "n", "instance_id": "n / 2 + 1", "nonce": "'n' || n", "code_hash": "'c' || n",
        "expires_at": "n", "sends": "1", "window_start": "n", "mail_id": "n",
    },
}

# (what, SQL with $n parameters given as literals, tables it needs filled)
QUERIES = [
    ("receipt: an answer's line (receipt download)",
     "SELECT id, instance_id, step_index FROM history WHERE id = 500000 AND instance_id = 83334 "
     "AND event = 'answered'"),
    ("receipt: an instance's answers through a link",
     "SELECT id FROM history WHERE instance_id = 83334 AND link_id = 250001 "
     "AND event = 'answered' ORDER BY id"),
    ("receipt: by its line", "SELECT id, issued_at FROM receipts WHERE history_id = 500000"),
    ("receipt: an instance's receipts (evidence)",
     "SELECT id, history_id, issued_at FROM receipts WHERE instance_id = 83334 ORDER BY history_id"),
    ("email code: by link record", "SELECT code_hash FROM email_codes WHERE link_id = 500000"),
    ("email code: by the email carrying it",
     "SELECT code_hash FROM email_codes WHERE mail_id = 500000"),
    ("email code: spend",
     "UPDATE email_codes SET code_hash = '', expires_at = 0 WHERE link_id = 500000 "
     "AND nonce = 'n500000' AND code_hash <> ''"),
    ("rotation: running instances without a working link (status report, after a rotation)",
     "SELECT COUNT(*) FROM instances i WHERE i.state = 'active' "
     "AND EXISTS (SELECT 1 FROM links l WHERE l.instance_id = i.id AND l.generation < 1 "
     "AND l.revoked_at IS NULL AND l.expires > 5) "
     "AND NOT EXISTS (SELECT 1 FROM links l WHERE l.instance_id = i.id "
     "AND l.generation = 1 AND l.revoked_at IS NULL AND l.expires > 5) "
     "AND NOT EXISTS (SELECT 1 FROM mails m WHERE m.instance_id = i.id AND m.kind = 'link' "
     "AND m.state = 'pending')"),
    ("sessions: an administrator's live sessions (account page)",
     "SELECT s.id, s.created_at, s.seen_at, s.agent FROM sessions s "
     "JOIN admins a ON a.id = s.admin_id AND a.auth_epoch = s.epoch "
     "WHERE s.admin_id = 500 AND s.expiry > 5 ORDER BY s.seen_at DESC, s.id LIMIT 50"),
    ("sessions: sign out everywhere else",
     "DELETE FROM sessions WHERE admin_id = 500 AND id <> 's500'"),
    ("admins: by address (OpenID Connect sign-in)",
     "SELECT id FROM admins WHERE email = 'a500@example.org'"),
    ("admin mails: the sender's claim",
     "SELECT id FROM admin_mails WHERE state = 'pending' AND next_at <= 2000000 "
     "AND (claimed_until IS NULL OR claimed_until < 2000000) ORDER BY next_at, id LIMIT 50"),
]


def fill_sql(table, rows, postgres):
    cols = FILL[table]
    names = ", ".join(cols)
    exprs = ", ".join(cols.values())
    if postgres:
        return f"INSERT INTO {table} ({names}) SELECT {exprs} FROM generate_series(1, {rows}) AS s(n)"
    return (f"INSERT INTO {table} ({names}) WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL "
            f"SELECT n + 1 FROM s WHERE n < {rows}) SELECT {exprs} FROM s")


def init(url):
    env = dict(os.environ, ORCHESTRA_DATABASE_URL=url)
    subprocess.run([ORCHESTRA, "init"], env=env, check=True, capture_output=True)


def sqlite(rows):
    import sqlite3
    path = os.path.join(tempfile.mkdtemp(), "explain.db")
    init(f"sqlite:{path}")
    db = sqlite3.connect(path)
    for table in FILL:
        db.execute(fill_sql(table, rows, False))
    db.commit()
    db.execute("ANALYZE")
    for what, sql in QUERIES:
        plan = [r[3] for r in db.execute("EXPLAIN QUERY PLAN " + sql)]
        print(f"## {what}\n" + "\n".join("  " + p for p in plan) + "\n")


def postgres(url, rows):
    name = "orchestra_explain"
    base, _, _ = url.rpartition("/")
    psql = lambda u, sql: subprocess.run(
        ["psql", "-X", "-q", "-A", "-t", u, "-c", sql], check=True, capture_output=True, text=True
    ).stdout
    psql(url, f"DROP DATABASE IF EXISTS {name}")
    psql(url, f"CREATE DATABASE {name}")
    target = f"{base}/{name}"
    init(target)
    psql(target, "SET session_replication_role = replica; "
         + "; ".join(fill_sql(t, rows, True) for t in FILL) + "; ANALYZE")
    for what, sql in QUERIES:
        print(f"## {what}\n" + "\n".join("  " + l for l in psql(target, "EXPLAIN " + sql).splitlines()) + "\n")


if __name__ == "__main__":
    if sys.argv[1] == "sqlite":
        sqlite(int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000)
    else:
        postgres(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 1_000_000)
