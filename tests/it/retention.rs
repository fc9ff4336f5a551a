//! Retention and erasure over real TCP, on SQLite and PostgreSQL: after cron's retention (ended
//! instances' ends moved into the past, as the chores' tests date their rows) and after the real
//! binary's `orchestra contact erase`, the address and the answers are nowhere in a dump of the
//! whole database (SQLite: every column of every row of every table, and the raw bytes of the
//! file and its WAL; PostgreSQL: `pg_dump`), while what must stay stays; the pages and the API
//! still read an erased instance and say so.

use std::process::{Command, Stdio};

use orchestra::domain::mail::ContactInput;

use crate::api::{call, json, scoped};
use crate::helpers::{self, Flood, TestApp, answer_step, get, on_postgres, spawn};
use crate::mail::{contact, start_with};
use crate::uploads::upload;

const BIN: &str = env!("CARGO_BIN_EXE_orchestra");

const ONBOARDING: &str = "form@supplier: Supplier details | Company*, Notes (long), Certificate (file)\n\
                          review@buyer: Check the supplier | show 1\n";

const DAY: i64 = 24 * 3600;

/// What one instance's people wrote and who they are: each must be found in the dump while kept,
/// and nowhere once erased.
struct Marks {
    email: String,
    words: String,
    comment: String,
    file: String,
}

impl Marks {
    fn of(tag: &str) -> Self {
        Self {
            email: format!("person-{tag}@retention.example"),
            words: format!("WORDSOF{tag}QZX"),
            comment: format!("COMMENTOF{tag}QZX"),
            file: format!("FILEBYTESOF{tag}QZX"),
        }
    }

    /// Every mark, each as itself.
    fn all(&self) -> [&str; 4] {
        [&self.email, &self.words, &self.comment, &self.file]
    }
}

/// A workflow of its own for a test, with an optional `keep:` line.
async fn workflow(app: &TestApp, name: &str, keep: Option<&str>) {
    let text = match keep {
        Some(line) => format!("{ONBOARDING}{line}\n"),
        None => ONBOARDING.to_owned(),
    };
    let definition = orchestra::domain::workflow::Definition::parse(&text).unwrap();
    orchestra::store::workflows::create(&app.db, name, name, &definition.to_json())
        .await
        .unwrap();
}

/// Starts an instance with its supplier's contact, and has the supplier answer with words and a
/// file; with `end`, the buyer rejects it with a comment (it ends). Its id.
async fn instance(app: &TestApp, name: &str, marks: &Marks, end: bool) -> i64 {
    let contacts: Vec<ContactInput> = vec![contact("supplier", &marks.email, "", "en")];
    let id = start_with(app, name, &contacts).await.unwrap();
    let supplier = app.link(id, Some("supplier")).await;
    let mut file = b"%PDF-1.7\n".to_vec();
    file.extend_from_slice(marks.file.as_bytes());
    let notes = format!("{} write to {}", marks.words, marks.email);
    let posted = upload(
        app,
        &supplier,
        &[("_step", "1"), ("company", "Acme"), ("notes", &notes)],
        &[("certificate", "certificate.pdf", &file)],
    )
    .await;
    assert_eq!(posted.status, 303, "{}", posted.body);
    if end {
        let buyer = app.link(id, Some("buyer")).await;
        let form = [("decision", "reject"), ("comment", marks.comment.as_str())];
        let page = answer_step(&app.client(), app, &buyer, &form).await;
        assert_eq!(page.status, 200, "{}", page.body);
    }
    id
}

/// Moves an ended instance's end `days` into the past.
async fn ended_ago(app: &TestApp, id: i64, days: i64) {
    let mut tx = app.db.write().await.unwrap();
    sqlx::query("UPDATE instances SET ended_at = ended_at - $1 WHERE id = $2")
        .bind(days * DAY)
        .bind(id)
        .execute(&mut *tx)
        .await
        .unwrap();
    tx.commit().await.unwrap();
}

/// Everything the database holds, as bytes. SQLite: every column of every row of every table
/// (as hex, decoded), then the raw bytes of the file and of its WAL; PostgreSQL: `pg_dump`.
async fn dump(app: &TestApp) -> Vec<u8> {
    if on_postgres() {
        let out = Command::new("/usr/lib/postgresql/15/bin/pg_dump")
            .arg("-d")
            .arg(&app.database.url)
            .stdout(Stdio::piped())
            .output()
            .expect("pg_dump runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        return out.stdout;
    }
    let pool = &outside(app).await;
    let tables: Vec<String> =
        sqlx::query_scalar("SELECT name FROM sqlite_master WHERE type = 'table'")
            .fetch_all(pool)
            .await
            .unwrap();
    let mut all = Vec::new();
    for table in tables {
        let columns: Vec<String> =
            sqlx::query_scalar(&format!("SELECT name FROM pragma_table_info('{table}')"))
                .fetch_all(pool)
                .await
                .unwrap();
        for column in columns {
            let values: Vec<String> =
                sqlx::query_scalar(&format!("SELECT hex(\"{column}\") FROM \"{table}\""))
                    .fetch_all(pool)
                    .await
                    .unwrap();
            for v in values {
                all.extend(hex::decode(v).unwrap());
                all.push(b'\n');
            }
        }
    }
    let path = app.database.url.strip_prefix("sqlite:").unwrap();
    for file in [path.to_owned(), format!("{path}-wal")] {
        if let Ok(bytes) = std::fs::read(&file) {
            all.extend(bytes);
        }
    }
    all
}

/// A pool of its own on the app's database, as an outside reader would open it.
async fn outside(app: &TestApp) -> sqlx::AnyPool {
    sqlx::any::install_default_drivers();
    let (_, url) = orchestra::store::normalize_url(&app.database.url).unwrap();
    sqlx::AnyPool::connect(&url).await.unwrap()
}

/// Whether `mark` is in the dump: as itself, or hex-encoded as pg_dump writes a `bytea`.
fn holds(dump: &[u8], mark: &str) -> bool {
    let find = |needle: &[u8]| dump.windows(needle.len()).any(|w| w == needle);
    find(mark.as_bytes()) || find(hex::encode(mark).as_bytes())
}

fn assert_gone(dump: &[u8], marks: &Marks, what: &str) {
    for mark in marks.all() {
        assert!(
            !holds(dump, mark),
            "{what}: {mark} is still in the database"
        );
    }
}

/// Every mark of an instance (`ended`: its buyer's comment too) is in the dump.
fn assert_kept(dump: &[u8], marks: &Marks, ended: bool, what: &str) {
    for mark in marks.all() {
        if mark == marks.comment && !ended {
            continue;
        }
        assert!(
            holds(dump, mark),
            "{what}: {mark} is no longer in the database"
        );
    }
}

async fn erased_at(app: &TestApp, id: i64) -> Option<i64> {
    orchestra::store::instances::by_id(&app.db, id)
        .await
        .unwrap()
        .unwrap()
        .erased_at
}

/// Cron erases an ended instance past the site's period: its words, address and file are
/// nowhere in the database, while a running instance's and an ended one not yet due are all
/// there; the admin page (both languages) and the API read it and say erased.
#[tokio::test]
async fn cron_erases_an_ended_instance_past_its_period_and_nothing_else() {
    let app = spawn(Flood::Memory).await;
    app.set(&[("records.retention_days", "30")]).await;
    workflow(&app, "onboarding", None).await;
    let (due, running, recent) = (Marks::of("DUE"), Marks::of("RUNNING"), Marks::of("RECENT"));
    let due_id = instance(&app, "onboarding", &due, true).await;
    let running_id = instance(&app, "onboarding", &running, false).await;
    let recent_id = instance(&app, "onboarding", &recent, true).await;
    ended_ago(&app, due_id, 31).await;
    ended_ago(&app, recent_id, 29).await;
    let before = dump(&app).await;
    assert_kept(&before, &due, true, "before cron");

    orchestra::run_cron(&app.db, &app.state.guard)
        .await
        .unwrap();

    let after = dump(&app).await;
    assert_gone(&after, &due, "the instance past its period");
    assert_kept(&after, &running, false, "a running instance");
    assert_kept(&after, &recent, true, "an ended instance not yet due");
    assert!(erased_at(&app, due_id).await.is_some());
    assert_eq!(erased_at(&app, running_id).await, None);
    assert_eq!(erased_at(&app, recent_id).await, None);

    let admin = app.admin_client().await;
    for (lang, erased, word) in [
        ("en", "Erased on", "Erased"),
        ("fr", "Effacée le", "Effacée"),
    ] {
        let page = get(
            &admin,
            &app,
            &format!("/admin/instances/{due_id}?lang={lang}"),
        )
        .await;
        assert_eq!(page.status, 200, "{}", page.body);
        assert!(
            page.text("#erased").join(" ").starts_with(erased),
            "{}",
            page.body
        );
        assert!(page.body.contains(word), "{}", page.body);
        assert!(page.body.contains("Check the supplier"), "the steps stay");
    }
    let reader = scoped(&app, "reader", Some(&["read"]), Some("all"), None).await;
    let read = call(
        &app,
        "GET",
        &format!("/api/v1/instances/{due_id}"),
        &reader,
        None,
    )
    .await;
    assert_eq!(read.status, 200, "{}", read.body);
    let body = json(&read);
    assert!(body["erased_at"].is_i64(), "{body}");
    assert_eq!(body["state"], "rejected");
    assert_eq!(body["files"], serde_json::json!([]));
    let answered: Vec<&serde_json::Value> = body["history"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["event"] == "answered")
        .collect();
    assert_eq!(answered.len(), 2, "the answers' lines stay: {body}");
    for line in answered {
        assert_eq!(
            line["answer"],
            serde_json::json!({"erased": true}),
            "{body}"
        );
        assert!(
            !line["participant"].as_str().unwrap().is_empty(),
            "role names stay"
        );
    }
    // The evidence record says when, keeps each answer's hash, and its own hash still checks.
    let evidence = call(
        &app,
        "GET",
        &format!("/api/v1/instances/{due_id}/evidence"),
        &reader,
        None,
    )
    .await;
    let evidence = json(&evidence);
    assert!(
        evidence["record"]["instance"]["erased_at"].is_string(),
        "{evidence}"
    );
    let answers: Vec<&serde_json::Value> = evidence["record"]["history"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["event"] == "answered")
        .collect();
    assert!(
        answers.iter().all(|a| a["answer"] == r#"{"erased":true}"#
            && a["answer_sha256"].as_str().is_some_and(|h| h.len() == 64)),
        "{evidence}"
    );
    assert_eq!(
        orchestra::domain::instance::evidence::sha256_of(&evidence["record"]),
        evidence["sha256"].as_str().unwrap()
    );
    let page = get(
        &admin,
        &app,
        &format!("/admin/instances/{due_id}/evidence?lang=fr"),
    )
    .await;
    assert!(page.body.contains("Effacée le"), "{}", page.body);
    let kept = call(
        &app,
        "GET",
        &format!("/api/v1/instances/{recent_id}"),
        &reader,
        None,
    )
    .await;
    assert!(json(&kept)["erased_at"].is_null());
    assert!(!app.logs().contains(&due.email), "an address was logged");
}

/// A workflow's `keep:` line overrides the site: `keep: 10 days` erases at 11 days though the
/// site keeps forever, and `keep: forever` keeps though the site erases after 30.
#[tokio::test]
async fn a_workflow_s_keep_line_overrides_the_site_s_period() {
    let app = spawn(Flood::Memory).await;
    workflow(&app, "short", Some("keep: 10 days")).await;
    workflow(&app, "forever", Some("keep: forever")).await;
    let (short, forever) = (Marks::of("SHORT"), Marks::of("FOREVER"));
    let short_id = instance(&app, "short", &short, true).await;
    let forever_id = instance(&app, "forever", &forever, true).await;
    ended_ago(&app, short_id, 11).await;
    ended_ago(&app, forever_id, 400).await;
    app.set(&[("records.retention_days", "30")]).await;
    orchestra::run_cron(&app.db, &app.state.guard)
        .await
        .unwrap();
    let after = dump(&app).await;
    assert_gone(&after, &short, "keep: 10 days");
    assert_kept(&after, &forever, true, "keep: forever");
}

/// More ended instances than one batch (100) are all erased by one cron run; each kept its
/// shape (its history's lines) and lost its words.
#[tokio::test]
async fn one_cron_run_erases_more_instances_than_one_batch() {
    let app = spawn(Flood::Memory).await;
    app.set(&[("records.retention_days", "1")]).await;
    workflow(&app, "onboarding", None).await;
    let count = orchestra::domain::retention::BATCH + 30;
    let mut ids = Vec::new();
    for _ in 0..count {
        ids.push(app.start("onboarding", "Bulk").await);
    }
    let mut tx = app.db.write().await.unwrap();
    let old = orchestra::store::now() - 2 * DAY;
    for id in &ids {
        sqlx::query(
            "INSERT INTO history (instance_id, step_index, branch, event, answer, at, participant) \
             VALUES ($1, 0, '', 'answered', '{\"fields\":[{\"name\":\"notes\",\"value\":\"BULKWORDSQZX\"}]}', $2, 'supplier')",
        )
        .bind(id)
        .bind(old)
        .execute(&mut *tx)
        .await
        .unwrap();
        sqlx::query("UPDATE instances SET state = 'cancelled', ended_at = $1 WHERE id = $2")
            .bind(old)
            .bind(id)
            .execute(&mut *tx)
            .await
            .unwrap();
    }
    tx.commit().await.unwrap();
    orchestra::run_cron(&app.db, &app.state.guard)
        .await
        .unwrap();
    for id in &ids {
        assert!(
            erased_at(&app, *id).await.is_some(),
            "instance {id} was left"
        );
        let lines = orchestra::store::history::history(&app.db, *id)
            .await
            .unwrap();
        assert!(
            lines
                .iter()
                .any(|l| l.answer == orchestra::store::retention::ERASED)
        );
    }
    assert!(!holds(&dump(&app).await, "BULKWORDSQZX"));
    let last = orchestra::store::settings::get(&app.db, orchestra::domain::retention::LAST_ERASED)
        .await
        .unwrap();
    assert_eq!(last, Some(count.to_string()));
}

/// The real binary, on the app's database.
fn orchestra(app: &TestApp, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(BIN)
        .args(args)
        .env_clear()
        .env("ORCHESTRA_DATABASE_URL", &app.database.url)
        .env("ORCHESTRA_LANG", "en")
        .stdin(Stdio::null())
        .output()
        .expect("start orchestra");
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// `orchestra contact erase EMAIL` removes an address at once from every row, a running
/// instance's and an ended one's (written in another case): contacts, answers that quote it,
/// an email's error text; the running instance's participant gets no more email, and another
/// address is untouched. Without `--yes` away from a terminal nothing changes; the address is
/// printed nowhere.
#[tokio::test]
async fn contact_erase_removes_an_address_everywhere_at_once() {
    let app = spawn(Flood::Memory).await;
    workflow(&app, "onboarding", None).await;
    let (gone, other) = (Marks::of("GONE"), Marks::of("OTHER"));
    let running = instance(&app, "onboarding", &gone, false).await;
    let ended = instance(&app, "onboarding", &gone, true).await;
    let untouched = instance(&app, "onboarding", &other, false).await;
    let mut tx = app.db.write().await.unwrap();
    sqlx::query("UPDATE mails SET error = $1 WHERE instance_id = $2")
        .bind(format!(
            "550 5.1.1 <{}>: Recipient address rejected",
            gone.email
        ))
        .bind(ended)
        .execute(&mut *tx)
        .await
        .unwrap();
    sqlx::query(
        "INSERT INTO mails (instance_id, participant, step_index, kind, next_at, created_at) \
         VALUES ($1, 'supplier', 0, 'reminder', 0, 0)",
    )
    .bind(running)
    .execute(&mut *tx)
    .await
    .unwrap();
    tx.commit().await.unwrap();
    assert!(holds(&dump(&app).await, &gone.email));

    let (code, stdout, stderr) = orchestra(&app, &["contact", "erase", &gone.email]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        holds(&dump(&app).await, &gone.email),
        "nothing changed without --yes"
    );
    assert!(!stderr.contains(&gone.email) && !stdout.contains(&gone.email));

    let shouted = gone.email.to_uppercase();
    let (code, stdout, stderr) = orchestra(&app, &["contact", "erase", &shouted, "--yes"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("rows changed"), "{stdout}");
    assert!(
        !stdout.to_lowercase().contains(&gone.email)
            && !stderr.to_lowercase().contains(&gone.email)
    );

    let after = dump(&app).await;
    assert!(
        !holds(&after, &gone.email),
        "the address is still in the database"
    );
    assert!(holds(&after, &gone.words), "the rest of the answers stays");
    assert_kept(&after, &other, false, "another address's instance");
    let contacts = orchestra::store::mails::contacts_of(&app.db, running)
        .await
        .unwrap();
    assert!(contacts.is_empty(), "{contacts:?}");
    let pending: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM mails WHERE instance_id = $1 AND state = 'pending'",
    )
    .bind(running)
    .fetch_one(&outside(&app).await)
    .await
    .unwrap();
    assert_eq!(pending, 0, "the erased participant is emailed no more");
    let row = orchestra::store::instances::by_id(&app.db, running)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(row.state.as_str(), "active", "the instance runs on");
    assert_eq!(erased_at(&app, untouched).await, None);
    let admin = app.admin_client().await;
    let page = get(&admin, &app, &format!("/admin/instances/{running}")).await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains("[erased]"), "{}", page.body);

    let (code, _, stderr) = orchestra(&app, &["contact", "erase", "not-an-address", "--yes"]);
    assert_eq!(code, 2, "{stderr}");
}

/// A database made by the schema before migration 0026, with an ended instance and a running
/// one: the upgrade dates the ended one's end from its history, retention erases it, and the
/// running one is kept and answered to its end.
#[tokio::test]
async fn instances_in_flight_before_the_upgrade_are_dated_and_erased_when_due() {
    let database = helpers::fresh_database().await;
    let pool = helpers::schema_before(&database.url, 26).await;
    let definition = orchestra::domain::workflow::Definition::parse(ONBOARDING).unwrap();
    let long_ago = orchestra::store::now() - 90 * DAY;
    sqlx::query(
        "INSERT INTO workflows (name, label, created_at, updated_at) VALUES ('old', 'Old', $1, $1)",
    )
    .bind(long_ago)
    .execute(&pool)
    .await
    .unwrap();
    let workflow: i64 = sqlx::query_scalar("SELECT id FROM workflows WHERE name = 'old'")
        .fetch_one(&pool)
        .await
        .unwrap();
    sqlx::query("INSERT INTO workflow_versions (workflow_id, number, definition, created_at) VALUES ($1, 1, $2, $3)")
        .bind(workflow)
        .bind(definition.to_json())
        .bind(long_ago)
        .execute(&pool)
        .await
        .unwrap();
    let version: i64 =
        sqlx::query_scalar("SELECT id FROM workflow_versions WHERE workflow_id = $1")
            .bind(workflow)
            .fetch_one(&pool)
            .await
            .unwrap();
    let answer = r#"{"fields":[{"name":"company","label":"Company","value":"OLDWORDSQZX"}]}"#;
    let mut ids = Vec::new();
    for (state, step) in [("rejected", 1), ("active", 1)] {
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO instances (workflow_id, version_id, subject_title, subject_body, token, \
             step_index, state, created_at, updated_at) VALUES ($1, $2, 'Old', '', 'tok', $3, $4, $5, $6) \
             RETURNING id",
        )
        .bind(workflow)
        .bind(version)
        .bind(step)
        .bind(state)
        .bind(long_ago)
        .bind(orchestra::store::now())
        .fetch_one(&pool)
        .await
        .unwrap();
        sqlx::query("INSERT INTO history (instance_id, step_index, branch, event, answer, at, participant) VALUES ($1, 0, '', 'answered', $2, $3, 'supplier')")
            .bind(id)
            .bind(answer)
            .bind(long_ago)
            .execute(&pool)
            .await
            .unwrap();
        sqlx::query(
            "INSERT INTO contacts (instance_id, participant, email) VALUES ($1, 'supplier', $2)",
        )
        .bind(id)
        .bind(format!("old-{state}@retention.example"))
        .execute(&pool)
        .await
        .unwrap();
        ids.push(id);
    }
    sqlx::query("UPDATE workflow_versions SET running = 1, ended = 1")
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;
    let app = helpers::spawn_on(database, |_, clock| {
        std::sync::Arc::new(orchestra::limits::flood::MemoryFlood::new(4096, clock))
    })
    .await;
    let (ended, running) = (ids[0], ids[1]);
    let dated: (Option<i64>, Option<i64>) =
        sqlx::query_as("SELECT (SELECT ended_at FROM instances WHERE id = $1), (SELECT ended_at FROM instances WHERE id = $2)")
            .bind(ended)
            .bind(running)
            .fetch_one(&outside(&app).await)
            .await
            .unwrap();
    assert_eq!(
        dated,
        (Some(long_ago), None),
        "the end is its last history line's time"
    );
    app.set(&[("records.retention_days", "30")]).await;
    orchestra::run_cron(&app.db, &app.state.guard)
        .await
        .unwrap();
    assert!(erased_at(&app, ended).await.is_some());
    assert_eq!(erased_at(&app, running).await, None);
    let after = dump(&app).await;
    assert!(!holds(&after, "old-rejected@retention.example"));
    assert!(holds(&after, "old-active@retention.example"));
    let buyer = app.link(running, Some("buyer")).await;
    let form = [("decision", "approve"), ("comment", "")];
    let page = answer_step(&app.client(), &app, &buyer, &form).await;
    assert_eq!(page.status, 200, "{}", page.body);
    let row = orchestra::store::instances::by_id(&app.db, running)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(row.state.as_str(), "complete");
}
