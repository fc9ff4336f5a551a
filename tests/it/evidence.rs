//! The evidence record and the instance list as CSV, over real TCP on SQLite and PostgreSQL: the
//! record's hash is its canonical form's, as an outside reader (Python's own `json`) computes
//! it; each answer's line names its SHA-256, its link record and its client as a keyed hash; the
//! admin page, its JSON, the API and the CLI give the same record; the list's CSV parses with a
//! standard CSV reader (Python's `csv`) and says who each running instance waits on.

use std::process::Command;

use sha2::{Digest, Sha256};

use crate::api::{call, json, scoped};
use crate::helpers::{Flood, TestApp, answer_step, get, spawn};
use crate::mail::{contact, start_with};

const BIN: &str = env!("CARGO_BIN_EXE_orchestra");

/// An onboarding whose supplier answered through their link; the instance and the link record.
pub(crate) async fn answered(app: &TestApp) -> (i64, i64) {
    let id = start_with(
        app,
        "supplier_onboarding",
        &[
            contact("supplier", "sam@supplier.example", "Sam Supplier", "en"),
            contact("reviewer", "rosa@review.example", "Rosa Diaz", "fr"),
        ],
    )
    .await
    .unwrap();
    let supplier = app.link(id, Some("supplier")).await;
    let filed = answer_step(
        &app.client(),
        app,
        &supplier,
        &[
            ("company", "Acme, \"the\" firm"),
            ("contact_email", "buyer@acme.example"),
            ("yearly_volume", "12"),
            ("notes", "été"),
        ],
    )
    .await;
    assert_eq!(filed.status, 200, "{}", filed.body);
    let link: i64 = orchestra::store::links::list(&app.db, id)
        .await
        .unwrap()
        .iter()
        .find(|l| l.participant == "supplier")
        .expect("the supplier's link record")
        .id;
    (id, link)
}

/// The record's JSON download, as an administrator gets it.
async fn evidence_json(admin: &reqwest::Client, app: &TestApp, id: i64) -> serde_json::Value {
    let text = admin
        .get(app.url(&format!("/admin/instances/{id}/evidence.json")))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    serde_json::from_str(&text).unwrap()
}

/// `python3 -c script` with `input` on its standard input; its output, trimmed. Python is the
/// outside reader here (its own `json` and `csv`): `.ci/run` installs it and sets
/// `ORCHESTRA_PYTHON_REQUIRED`; a machine without it skips these checks with a note.
fn python(script: &str, input: &str) -> Option<String> {
    use std::io::Write;
    let child = Command::new("python3")
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(e) => {
            assert!(
                std::env::var_os("ORCHESTRA_PYTHON_REQUIRED").is_none(),
                "python3 is required: {e}"
            );
            eprintln!("python3 is missing: the outside reader's checks are skipped");
            return None;
        }
    };
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// The rows of a CSV as Python's `csv` reads them; without Python, as this test's own reading
/// of RFC 4180 does (enough for the rows these tests write).
fn csv_rows(text: &str) -> Vec<serde_json::Value> {
    match python(READ_CSV, text) {
        Some(json) => serde_json::from_str(&json).unwrap(),
        None => {
            let mut lines = text.lines();
            let header: Vec<&str> = lines.next().unwrap().split(',').collect();
            lines
                .map(|l| {
                    let cells: Vec<&str> = l.split(',').collect();
                    serde_json::Value::Object(
                        header
                            .iter()
                            .zip(cells)
                            .map(|(h, c)| ((*h).to_owned(), c.trim_matches('"').into()))
                            .collect(),
                    )
                })
                .collect()
        }
    }
}

/// The SHA-256 of a downloaded record as anyone would check it: Python's `json`, keys sorted,
/// no spaces, UTF-8.
const CHECK: &str = "import sys, json, hashlib\n\
doc = json.load(sys.stdin)\n\
canon = json.dumps(doc['record'], sort_keys=True, separators=(',', ':'), ensure_ascii=False)\n\
print(hashlib.sha256(canon.encode('utf-8')).hexdigest())";

fn sha256(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

#[tokio::test]
async fn the_evidence_records_hash_is_its_content_and_each_answer_says_how_it_came() {
    let app = spawn(Flood::Memory).await;
    let (id, link) = answered(&app).await;
    let admin = app.admin_client().await;

    let response = admin
        .get(app.url(&format!("/admin/instances/{id}/evidence.json")))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert!(
        response
            .headers()
            .get("content-disposition")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("attachment"))
    );
    let text = response.text().await.unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let stated = doc["sha256"].as_str().unwrap().to_owned();
    if let Some(checked) = python(CHECK, &text) {
        assert_eq!(checked, stated, "the stated hash is the record's");
    }
    assert_eq!(
        orchestra::domain::instance::evidence::sha256_of(&doc["record"]),
        stated
    );

    // The same instance, untouched, gives the same hash.
    let again = evidence_json(&admin, &app, id).await;
    assert_eq!(again["sha256"], doc["sha256"]);

    // A copy with one character changed no longer matches.
    let forged = text.replacen("Acme", "Acne", 1);
    if let Some(checked) = python(CHECK, &forged) {
        assert_ne!(checked, stated);
    }

    let record = &doc["record"];
    assert_eq!(record["format"], "orchestra-evidence/1");
    assert_eq!(record["instance"]["id"], id);
    let lines = record["history"].as_array().unwrap();
    let answer = lines
        .iter()
        .find(|l| l["event"] == "answered")
        .expect("the answer's line");
    let words = answer["answer"].as_str().unwrap();
    assert!(words.contains("Acme"), "{words}");
    assert_eq!(
        answer["answer_sha256"],
        sha256(words),
        "the answer's own hash"
    );
    assert_eq!(answer["link"], link, "the link record it came through");
    let client = answer["client"].as_str().unwrap();
    assert_eq!(client.len(), 64, "a keyed hash: {client}");
    assert!(
        !record["history"].to_string().contains("127.0.0.1"),
        "never the client's address"
    );
    let links = record["links"].as_array().unwrap();
    let used = links.iter().find(|l| l["id"] == link).unwrap();
    assert_eq!(used["used_by"], serde_json::json!([answer["id"]]));
    assert!(used["issued_by"].as_str().is_some());
    let steps = record["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2);
    assert_eq!(steps[1]["participants"], serde_json::json!(["reviewer"]));
    let emails = record["emails"].as_array().unwrap();
    assert!(
        emails.iter().any(|m| m["participant"] == "reviewer"),
        "the reviewer's link email is listed: {emails:?}"
    );
    assert!(
        record["contacts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["email"] == "rosa@review.example")
    );
    // The record holds no link, no token. (A new link is a new line of the record.)
    let links_text = app.link(id, Some("reviewer")).await;
    let token = links_text.rsplit('/').next().unwrap();
    assert!(!text.contains(token));
    let instance = orchestra::store::instances::by_id(&app.db, id)
        .await
        .unwrap()
        .unwrap();
    assert!(!text.contains(&instance.token));
}

#[tokio::test]
async fn the_evidence_page_prints_the_record_in_the_readers_language_for_administrators_only() {
    let app = spawn(Flood::Memory).await;
    let (id, _) = answered(&app).await;
    let admin = app.admin_client().await;
    let record = evidence_json(&admin, &app, id).await;
    let hash = record["sha256"].as_str().unwrap();

    let instance = get(&admin, &app, &format!("/admin/instances/{id}")).await;
    assert_eq!(
        instance.attr("a#evidence", "href").as_deref(),
        Some(format!("/admin/instances/{id}/evidence").as_str())
    );
    let en = get(
        &admin,
        &app,
        &format!("/admin/instances/{id}/evidence?lang=en"),
    )
    .await;
    assert_eq!(en.status, 200);
    assert_eq!(en.first("#evidence-sha256"), hash);
    assert!(en.body.contains("Evidence record of instance"));
    assert!(en.body.contains("Acme"));
    assert!(en.body.contains("rosa@review.example"));
    let fr = get(
        &admin,
        &app,
        &format!("/admin/instances/{id}/evidence?lang=fr"),
    )
    .await;
    assert_eq!(fr.lang(), "fr");
    assert!(fr.body.contains("Dossier de preuve"));
    assert_eq!(fr.first("#evidence-sha256"), hash);

    // An attacker: signed out, the sign-in; a made-up instance, the themed 404.
    for path in [
        format!("/admin/instances/{id}/evidence"),
        format!("/admin/instances/{id}/evidence.json"),
    ] {
        let anonymous = app.client().get(app.url(&path)).send().await.unwrap();
        assert_ne!(anonymous.status(), 200, "{path}");
        assert!(!anonymous.text().await.unwrap().contains(hash), "{path}");
    }
    for path in [
        format!("/admin/instances/{}/evidence", id + 1000),
        format!("/admin/instances/{}/evidence.json", id + 1000),
        "/admin/instances/abc/evidence".to_owned(),
    ] {
        let missing = get(&admin, &app, &path).await;
        assert_eq!(missing.status, 404, "{path}");
        assert!(
            missing
                .header("content-type")
                .unwrap_or("")
                .starts_with("text/html")
        );
    }
}

#[tokio::test]
async fn the_api_and_the_cli_give_the_same_record() {
    let app = spawn(Flood::Memory).await;
    let (id, _) = answered(&app).await;
    let other = app.start("supplier_onboarding", "Another").await;
    let reader = scoped(&app, "reader", Some(&["read"]), Some("all"), None).await;
    let starter = scoped(&app, "starter", Some(&["start"]), Some("all"), None).await;
    let path = format!("/api/v1/instances/{id}/evidence");

    let read = call(&app, "GET", &path, &reader, None).await;
    assert_eq!(read.status, 200, "{}", read.body);
    let stated = json(&read)["sha256"].as_str().unwrap().to_owned();
    if let Some(checked) = python(CHECK, &read.body) {
        assert_eq!(checked, stated);
    }
    assert_eq!(call(&app, "GET", &path, &starter, None).await.status, 403);
    assert_eq!(call(&app, "GET", &path, "", None).await.status, 401);
    let missing = format!("/api/v1/instances/{}/evidence", other + 1000);
    assert_eq!(call(&app, "GET", &missing, &reader, None).await.status, 404);

    let json_out = crate::helpers::serve::cli(
        BIN,
        &app.database.url,
        &["instance", "evidence", &id.to_string()],
    );
    let cli: serde_json::Value = serde_json::from_str(&json_out).unwrap();
    assert_eq!(
        cli["sha256"],
        stated.as_str(),
        "the CLI's record is the API's"
    );
    if let Some(checked) = python(CHECK, &json_out) {
        assert_eq!(checked, stated);
    }
    let html = crate::helpers::serve::cli(
        BIN,
        &app.database.url,
        &["instance", "evidence", &id.to_string(), "--format", "html"],
    );
    assert!(html.starts_with("<!DOCTYPE html>"), "{html}");
    assert!(html.contains(&stated) && html.contains("Acme"));
    let bad = Command::new(BIN)
        .args(["instance", "evidence", &id.to_string(), "--format", "pdf"])
        .env("ORCHESTRA_DATABASE_URL", &app.database.url)
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("pdf"));
}

/// Rows of a CSV as Python's `csv` module reads them, as JSON.
const READ_CSV: &str = "import sys, csv, json\n\
print(json.dumps(list(csv.DictReader(sys.stdin))))";

#[tokio::test]
async fn the_list_downloads_as_csv_with_who_each_instance_waits_on_and_since_when() {
    let app = spawn(Flood::Memory).await;
    let (waiting, _) = answered(&app).await;
    let formula = app
        .start("supplier_onboarding", "=HYPERLINK(\"http://evil.example\")")
        .await;
    let cancelled = app.start("contract_review", "Old contract").await;
    orchestra::domain::instance::cancel(
        &app.db,
        cancelled,
        &orchestra::domain::instance::Actor::Admin("ada".into()),
        "",
    )
    .await
    .unwrap();
    // Two reviewers in parallel, one has answered: it waits on the other alone.
    let parallel =
        crate::uploads::started(&app, "review[legal,finance]: Approve the contract\n").await;
    let legal = app.link(parallel, Some("legal")).await;
    let approved = answer_step(
        &app.client(),
        &app,
        &legal,
        &[("decision", "approve"), ("comment", "")],
    )
    .await;
    assert_eq!(approved.status, 200, "{}", approved.body);
    let admin = app.admin_client().await;

    let list = get(&admin, &app, "/admin/instances?lang=en").await;
    assert_eq!(
        list.attr("a#instances-csv", "href").as_deref(),
        Some("/admin/instances.csv")
    );
    let waits = list.text("td.waiting");
    assert!(
        waits
            .iter()
            .any(|w| w.contains("Rosa Diaz (reviewer)") && w.contains("since")),
        "{waits:?}"
    );

    let response = admin
        .get(app.url("/admin/instances.csv"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/csv")
    );
    let text = response.text().await.unwrap();
    let rows: Vec<serde_json::Value> = csv_rows(&text);
    assert_eq!(rows.len(), 4, "{text}");
    let row = |id: i64| {
        rows.iter()
            .find(|r| r["id"].as_str() == Some(id.to_string().as_str()))
            .unwrap_or_else(|| panic!("{id} in {text}"))
    };
    assert_eq!(row(waiting)["waiting_on"], "Rosa Diaz (reviewer)");
    assert!(
        row(waiting)["waiting_since"]
            .as_str()
            .unwrap()
            .ends_with('Z')
    );
    assert_eq!(row(waiting)["state"], "active");
    assert_eq!(row(formula)["waiting_on"], "supplier");
    assert!(
        row(formula)["subject"].as_str().unwrap().starts_with("'="),
        "a formula is never one: {}",
        row(formula)["subject"]
    );
    assert_eq!(row(parallel)["waiting_on"], "finance");
    assert_eq!(row(cancelled)["waiting_on"], "");
    assert_eq!(row(cancelled)["waiting_since"], "");

    // The list's filters apply to the download.
    let filtered = admin
        .get(app.url("/admin/instances.csv?state=cancelled"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let rows: Vec<serde_json::Value> = csv_rows(&filtered);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["id"], cancelled.to_string());

    // The command line gives the same rows.
    let cli = crate::helpers::serve::cli(
        BIN,
        &app.database.url,
        &["instance", "list", "--format", "csv"],
    );
    let rows: Vec<serde_json::Value> = csv_rows(&cli);
    assert_eq!(rows.len(), 4);
    assert!(
        rows.iter()
            .any(|r| r["waiting_on"] == "Rosa Diaz (reviewer)")
    );

    // Signed out: no rows.
    let anonymous = app
        .client()
        .get(app.url("/admin/instances.csv"))
        .send()
        .await
        .unwrap();
    assert_ne!(anonymous.status(), 200);
    assert!(!anonymous.text().await.unwrap().contains("Rosa"));
}

#[tokio::test]
async fn the_export_goes_on_past_one_page() {
    let app = spawn(Flood::Memory).await;
    let n = orchestra::domain::lists::csv::PAGE + 7;
    for i in 0..n {
        app.start("contract_review", &format!("Contract {i}")).await;
    }
    let cli = crate::helpers::serve::cli(
        BIN,
        &app.database.url,
        &["instance", "list", "--format", "csv"],
    );
    let rows: Vec<serde_json::Value> = csv_rows(&cli);
    assert_eq!(rows.len() as i64, n);
    let mut ids: Vec<i64> = rows
        .iter()
        .map(|r| r["id"].as_str().unwrap().parse().unwrap())
        .collect();
    ids.dedup();
    assert_eq!(ids.len() as i64, n, "each instance once");
}

#[tokio::test]
async fn a_database_made_before_answer_records_upgrades_and_its_instances_go_on() {
    let definition = orchestra::domain::workflow::Definition::parse(
        "form@supplier: Supplier details | Company*\nreview[legal,finance]: Approve | show 1\n",
    )
    .unwrap();
    let database = crate::helpers::fresh_database().await;
    let pool = crate::helpers::schema_before(&database.url, 24).await;
    sqlx::query("INSERT INTO workflows (name, label, created_at, updated_at) VALUES ('old', 'Old', 1700000000, 1700000000)")
        .execute(&pool)
        .await
        .unwrap();
    sqlx::query("INSERT INTO workflow_versions (workflow_id, number, definition, created_at) VALUES (1, 1, $1, 1700000000)")
        .bind(definition.to_json())
        .execute(&pool)
        .await
        .unwrap();
    for sql in [
        "INSERT INTO instances (workflow_id, version_id, subject_title, subject_body, token, step_index, state, created_at, updated_at) VALUES (1, 1, 'In flight', '', 'instance-token', 1, 'active', 1700000000, 1700000100)",
        "INSERT INTO history (instance_id, step_index, branch, event, answer, at, participant) VALUES (1, 0, '', 'started', '{}', 1700000000, 'supplier')",
        "INSERT INTO history (instance_id, step_index, branch, event, answer, at, participant, step_title, kind) VALUES (1, 0, '', 'answered', '{\"fields\":[{\"name\":\"company\",\"label\":\"Company\",\"value\":\"Old Co\"}]}', 1700000100, 'supplier', 'Supplier details', 'form')",
        "INSERT INTO contacts (instance_id, participant, email, name, lang) VALUES (1, 'finance', 'fin@old.example', 'Fay Finance', 'en')",
    ] {
        sqlx::query(sql).execute(&pool).await.unwrap();
    }
    pool.close().await;
    let app = crate::helpers::spawn_on(database, |_, clock| {
        std::sync::Arc::new(orchestra::limits::flood::MemoryFlood::new(4096, clock))
    })
    .await;

    // The list says who it waits on, since the answer before the upgrade.
    let listed = orchestra::domain::lists::page(
        &app.db,
        &orchestra::domain::lists::Filter::default(),
        orchestra::domain::lists::From::Newest,
        10,
    )
    .await
    .unwrap();
    let waiting = orchestra::domain::lists::waiting(&app.db, &app.state.versions, &listed.rows)
        .await
        .unwrap();
    assert_eq!(
        waiting[&1],
        orchestra::domain::lists::Waiting {
            who: vec!["legal".into(), "Fay Finance (finance)".into()],
            since: Some(1_700_000_100),
        }
    );

    // A branch answers after the upgrade: its line keeps how it came; the old one has nothing.
    let legal = app.link(1, Some("legal")).await;
    let approved = answer_step(
        &app.client(),
        &app,
        &legal,
        &[("decision", "approve"), ("comment", "")],
    )
    .await;
    assert_eq!(approved.status, 200, "{}", approved.body);
    let record = orchestra::domain::instance::evidence::read(
        &app.db,
        &app.state.versions,
        "http://example.org",
        1,
        1_800_000_000,
    )
    .await
    .unwrap()
    .unwrap();
    let answers: Vec<&serde_json::Value> = record.json["history"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["event"] == "answered")
        .collect();
    assert_eq!(answers.len(), 2);
    assert!(answers[0]["answer_sha256"].is_null() && answers[0]["link"].is_null());
    assert_eq!(
        answers[1]["answer_sha256"],
        sha256(answers[1]["answer"].as_str().unwrap())
    );
    assert!(answers[1]["link"].is_i64());
}

#[tokio::test]
async fn the_evidence_record_lists_the_receipts_given_and_whose_answer_was_checked_by_code() {
    use base64::Engine;
    let app = spawn(Flood::Memory).await;
    let id = crate::uploads::started(
        &app,
        "form@supplier: Supplier details | Company*\nreview@buyer: Check | show 1\n",
    )
    .await;
    let supplier = app.link(id, Some("supplier")).await;
    let thanks = answer_step(&app.client(), &app, &supplier, &[("company", "Acme")]).await;
    assert_eq!(thanks.status, 200, "{}", thanks.body);
    let href = thanks
        .attr(".receipt a.button", "href")
        .expect("the thank-you page offers a receipt");
    let token = get(&app.client(), &app, &href).await.body;
    let payload = token.split('.').nth(1).unwrap();
    let claims: serde_json::Value = serde_json::from_slice(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(payload)
            .unwrap(),
    )
    .unwrap();

    let record = orchestra::domain::instance::evidence::read(
        &app.db,
        &app.state.versions,
        "http://example.org",
        id,
        0,
    )
    .await
    .unwrap()
    .unwrap();
    let receipts = record.json["receipts"].as_array().unwrap();
    assert_eq!(receipts.len(), 1, "{receipts:?}");
    assert_eq!(receipts[0]["id"], claims["jti"]);
    let line = record.json["history"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["event"] == "answered")
        .unwrap();
    assert_eq!(receipts[0]["line"], line["id"]);
    assert_eq!(line["answer_sha256"], claims["answer_sha256"]);
    assert!(line["verified"].is_null(), "no code was asked");
}
