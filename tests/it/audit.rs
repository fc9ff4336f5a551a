//! The audit log over real TCP: each kind of event, with who did it (an administrator through
//! the pages, the operator through the real binary, a token through the API), the address as a
//! keyed hash, no secret anywhere in it; the page's pages and filters; `orchestra audit list`
//! read by Python's csv module and as JSON; cron's retention; and an attacker's view.

use std::collections::BTreeSet;
use std::io::Write;
use std::process::{Command, Stdio};

use orchestra::domain::audit::{self, Actor, Event, Kind};
use orchestra::store;
use reqwest::Client;

use crate::api::{call, token};
use crate::helpers::{self, ADMIN, Flood, PASSWORD, Page, TestApp, get, post, read, spawn};

const BIN: &str = env!("CARGO_BIN_EXE_orchestra");
const NEW_PASSWORD: &str = "a longer passphrase for cy";

/// Every event, oldest first.
async fn log(app: &TestApp) -> Vec<store::audit::Row> {
    let filter = store::audit::Filter::default();
    let (mut rows, _) = store::audit::page(&app.db, &filter, None, 10_000)
        .await
        .unwrap();
    rows.reverse();
    rows
}

/// The whole log as one text: every column of every row. A webhook endpoint's origin (on
/// loopback here) is left out, so that a client's raw address would be seen.
async fn log_text(app: &TestApp) -> String {
    log(app)
        .await
        .iter()
        .map(|r| serde_json::to_string(r).unwrap())
        .collect::<Vec<_>>()
        .join("\n")
        .replace(r#"\"origin\":\"http://127.0.0.1:9\""#, "")
}

/// Posts a form with the CSRF token of `page`.
async fn submit(
    client: &Client,
    app: &TestApp,
    page: &str,
    action: &str,
    form: &[(&str, &str)],
) -> Page {
    let csrf = get(client, app, page).await.csrf();
    let mut fields = vec![("csrf", csrf.as_str())];
    fields.extend_from_slice(form);
    post(client, app, action, &fields).await
}

/// The real binary on the app's database; its exit code and standard output.
fn run(app: &TestApp, args: &[&str], stdin: &str) -> (i32, String) {
    let mut child = Command::new(BIN)
        .args(args)
        .env_clear()
        .env("ORCHESTRA_DATABASE_URL", &app.database.url)
        .env("ORCHESTRA_LANG", "en")
        .env("ORCHESTRA_ADMIN_PASSWORD", NEW_PASSWORD)
        .env("ORCHESTRA_WEBHOOKS_ALLOW_PRIVATE", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start orchestra");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let code = out.status.code().expect("exited");
    assert_eq!(
        code,
        0,
        "orchestra {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (code, String::from_utf8(out.stdout).unwrap())
}

/// The kinds `rows` hold by `actor` (its stored kind).
fn kinds_by(rows: &[store::audit::Row], actor: &str) -> BTreeSet<String> {
    rows.iter()
        .filter(|r| r.actor == actor)
        .map(|r| r.kind.clone())
        .collect()
}

fn is_hex64(s: &str) -> bool {
    s.len() == 64 && s.chars().all(|c| c.is_ascii_hexdigit())
}

/// An administrator at the pages: each thing they do is an event of its kind, by them, from
/// their address as a 64-hex keyed hash; a setting's key, old and new value; failed sign-ins,
/// one under a name no account has keeping no name; no password, token, secret or link.
#[tokio::test]
async fn an_administrator_s_every_act_on_the_pages_is_logged_with_who_and_a_hashed_address() {
    let app = spawn(Flood::Memory).await;
    app.state
        .webhooks_allow_private
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let ada = app.admin_client().await;
    let cy_hash = orchestra::domain::password::hash(PASSWORD).unwrap();
    let cy = store::admins::create(&app.db, "cy", &cy_hash)
        .await
        .unwrap()
        .unwrap();
    let mut secrets: Vec<String> = vec![PASSWORD.into(), NEW_PASSWORD.into()];
    let keys = store::keys::load(&app.db).await.unwrap();
    let hashed = audit::address_hash(&keys, "127.0.0.1".parse().unwrap());

    // Failed sign-ins: a wrong password for ada, and a name nobody has.
    for name in [ADMIN, "nobody-here"] {
        let stranger = app.client();
        let csrf = get(&stranger, &app, "/admin/login").await.csrf();
        let page = read(stranger.post(app.url("/admin/login")).form(&[
            ("csrf", csrf.as_str()),
            ("name", name),
            ("password", "wrong guess 12345"),
        ]))
        .await;
        assert_eq!(page.status, 401);
    }
    let page = submit(
        &ada,
        &app,
        "/admin/config/orchestra",
        "/admin/config/orchestra",
        &[("site_name", "Renamed office")],
    )
    .await;
    assert_eq!(page.status, 303, "{}", page.body);
    let page = submit(
        &ada,
        &app,
        "/admin/config/api",
        "/admin/config/api",
        &[("name", "crm-web"), ("ability", "read")],
    )
    .await;
    assert_eq!(page.status, 303, "{}", page.body);
    secrets.push(
        get(&ada, &app, "/admin/config/api")
            .await
            .attr("#new-token", "value")
            .unwrap_or_default(),
    );
    let page = submit(
        &ada,
        &app,
        "/admin/config/api",
        "/admin/config/api/crm-web/revoke",
        &[],
    )
    .await;
    assert_eq!(page.status, 303);
    let hook = "http://127.0.0.1:9/hook/path-secret-xyz";
    secrets.push("path-secret-xyz".into());
    let page = submit(
        &ada,
        &app,
        "/admin/webhooks",
        "/admin/webhooks",
        &[("url", hook), ("event", "instance.started")],
    )
    .await;
    assert_eq!(page.status, 303, "{}", page.body);
    let endpoint = store::webhooks::listed(&app.db).await.unwrap()[0]
        .endpoint
        .id;
    for action in ["disable", "enable", "delete"] {
        let path = format!("/admin/webhooks/{endpoint}/{action}");
        assert_eq!(
            submit(&ada, &app, "/admin/webhooks", &path, &[])
                .await
                .status,
            303,
            "{action}"
        );
    }
    let page = submit(
        &ada,
        &app,
        "/admin/admins",
        "/admin/admins",
        &[("name", "bea")],
    )
    .await;
    assert_eq!(page.status, 303);
    let shown = get(&ada, &app, "/admin/admins").await;
    secrets.push(
        shown
            .attr("#admin-link", "value")
            .expect("the invitation link"),
    );
    let page = submit(
        &ada,
        &app,
        "/admin/admins",
        &format!("/admin/admins/{cy}/reset"),
        &[],
    )
    .await;
    assert_eq!(page.status, 303);
    secrets.push(
        get(&ada, &app, "/admin/admins")
            .await
            .attr("#admin-link", "value")
            .expect("the reset link"),
    );
    for action in ["unlock", "disable", "enable", "remove"] {
        let path = format!("/admin/admins/{cy}/{action}");
        assert_eq!(
            submit(&ada, &app, "/admin/admins", &path, &[]).await.status,
            303,
            "{action}"
        );
    }
    let page = submit(
        &ada,
        &app,
        "/admin/admins/password",
        "/admin/admins/password",
        &[
            ("current", PASSWORD),
            ("password", NEW_PASSWORD),
            ("confirm", NEW_PASSWORD),
        ],
    )
    .await;
    assert_eq!(page.status, 303, "{}", page.body);
    let page = submit(
        &ada,
        &app,
        "/admin/reports/status/keys",
        "/admin/reports/status/keys",
        &[],
    )
    .await;
    assert_eq!(page.status, 303);

    let rows = log(&app).await;
    let by_ada: BTreeSet<String> = rows
        .iter()
        .filter(|r| r.actor == "admin" && r.actor_name.as_deref() == Some(ADMIN))
        .map(|r| r.kind.clone())
        .collect();
    for kind in [
        Kind::SignedIn,
        Kind::SignInFailed,
        Kind::SettingChanged,
        Kind::TokenCreated,
        Kind::TokenRevoked,
        Kind::WebhookCreated,
        Kind::WebhookDisabled,
        Kind::WebhookEnabled,
        Kind::WebhookRemoved,
        Kind::AdminInvited,
        Kind::AdminReset,
        Kind::AdminUnlocked,
        Kind::AdminDisabled,
        Kind::AdminEnabled,
        Kind::AdminRemoved,
        Kind::AdminPassword,
        Kind::KeysRotated,
    ] {
        assert!(
            by_ada.contains(kind.as_str()),
            "no {} by ada in {rows:#?}",
            kind.as_str()
        );
    }
    let ada_id = store::admins::by_name(&app.db, ADMIN)
        .await
        .unwrap()
        .unwrap()
        .id;
    assert!(
        rows.iter()
            .filter(|r| r.actor == "admin")
            .all(|r| r.actor_id == Some(ada_id))
    );
    // The name nobody has: an attempt by someone not signed in, with no name kept.
    let visitor: Vec<_> = rows.iter().filter(|r| r.actor == "visitor").collect();
    assert_eq!(visitor.len(), 1, "{rows:#?}");
    assert_eq!(visitor[0].kind, "sign_in_failed");
    assert_eq!(visitor[0].actor_name, None);
    let setting = rows
        .iter()
        .find(|r| r.kind == "setting_changed" && r.detail.contains("orchestra.site_name"))
        .expect("the site name's change");
    let detail: serde_json::Value = serde_json::from_str(&setting.detail).unwrap();
    assert_eq!(detail["old"], "Orchestra");
    assert_eq!(detail["new"], "Renamed office");
    // Keyed under the site's keys at the time (those before the rotation, the last act).
    for r in &rows {
        let address = r.address.as_deref().expect("the web keeps an address");
        assert!(is_hex64(address), "{address}");
        assert_eq!(address, hashed, "{r:?}");
    }
    let text = log_text(&app).await;
    assert!(!text.contains("127.0.0.1"), "a raw address in the log");
    for secret in secrets.iter().filter(|s| !s.is_empty()) {
        assert!(
            !text.contains(secret.as_str()),
            "a secret in the log: {secret}"
        );
    }
    assert!(
        !text.contains("/admin/invite") && !text.contains("/admin/reset"),
        "a link in the log"
    );
}

/// The operator at the real binary: each command's event, by "cli", with no address; no token,
/// secret or password in the log.
#[tokio::test]
async fn the_operator_s_commands_are_logged_as_the_cli_without_an_address() {
    let app = spawn(Flood::Memory).await;
    app.create_admin().await;
    let url = app.database.url.clone();
    helpers::serve::cli(
        BIN,
        &url,
        &["config", "set", "orchestra.site_name", "CLI office"],
    );
    let token = helpers::serve::cli(BIN, &url, &["token", "create", "crm-cli"]);
    helpers::serve::cli(BIN, &url, &["token", "revoke", "crm-cli"]);
    helpers::serve::cli(BIN, &url, &["token", "rotate-key", "--yes"]);
    let (_, secret) = run(
        &app,
        &[
            "webhook",
            "create",
            "http://127.0.0.1:9/hook/cli-path-secret",
        ],
        "",
    );
    let id = store::webhooks::listed(&app.db).await.unwrap()[0]
        .endpoint
        .id
        .to_string();
    for change in ["disable", "enable", "delete"] {
        helpers::serve::cli(BIN, &url, &["webhook", change, &id]);
    }
    run(&app, &["admin", "create", "dee"], "");
    run(&app, &["admin", "password", "dee"], "");
    let (_, link) = run(&app, &["admin", "reset", "dee"], "");
    for change in ["unlock", "disable", "enable"] {
        helpers::serve::cli(BIN, &url, &["admin", change, "dee"]);
    }
    helpers::serve::cli(BIN, &url, &["admin", "remove", "dee", "--yes"]);
    helpers::serve::cli(BIN, &url, &["keys", "rotate", "--yes"]);

    let rows = log(&app).await;
    let by_cli = kinds_by(&rows, "cli");
    for kind in [
        Kind::SettingChanged,
        Kind::TokenCreated,
        Kind::TokenRevoked,
        Kind::TokenKeyRotated,
        Kind::WebhookCreated,
        Kind::WebhookDisabled,
        Kind::WebhookEnabled,
        Kind::WebhookRemoved,
        Kind::AdminCreated,
        Kind::AdminPassword,
        Kind::AdminReset,
        Kind::AdminUnlocked,
        Kind::AdminDisabled,
        Kind::AdminEnabled,
        Kind::AdminRemoved,
        Kind::KeysRotated,
    ] {
        assert!(
            by_cli.contains(kind.as_str()),
            "no {} by the cli in {rows:#?}",
            kind.as_str()
        );
    }
    assert!(rows.iter().all(|r| r.actor == "cli"
        && r.actor_name.as_deref() == Some("cli")
        && r.address.is_none()));
    let setting = rows.iter().find(|r| r.kind == "setting_changed").unwrap();
    assert!(
        setting.detail.contains("\"new\":\"CLI office\""),
        "{}",
        setting.detail
    );
    let text = log_text(&app).await;
    for s in [
        token.as_str(),
        secret.trim(),
        link.trim(),
        NEW_PASSWORD,
        "cli-path-secret",
    ] {
        assert!(
            !s.is_empty() && !text.contains(s),
            "a secret in the log: {s}"
        );
    }
}

/// A token at the API: its webhook endpoint made and removed, by the token's name, with a
/// hashed address.
#[tokio::test]
async fn a_token_s_acts_at_the_api_are_logged_by_its_name() {
    let app = spawn(Flood::Memory).await;
    app.state
        .webhooks_allow_private
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let crm = token(&app, "crm", Some(100_000), Some(100_000)).await;
    let body = r#"{"url":"http://127.0.0.1:9/hook/api-secret","events":["instance.started"]}"#;
    let made = call(&app, "POST", "/api/v1/webhooks", &crm, Some(body)).await;
    assert_eq!(made.status, 201, "{}", made.body);
    let made: serde_json::Value = serde_json::from_str(&made.body).unwrap();
    let path = format!("/api/v1/webhooks/{}", made["id"]);
    assert_eq!(call(&app, "DELETE", &path, &crm, None).await.status, 204);
    let rows = log(&app).await;
    let kinds: Vec<_> = rows
        .iter()
        .map(|r| (r.kind.as_str(), r.actor.as_str(), r.actor_name.as_deref()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("webhook_created", "token", Some("crm")),
            ("webhook_removed", "token", Some("crm"))
        ]
    );
    assert!(
        rows.iter()
            .all(|r| r.address.as_deref().is_some_and(is_hex64))
    );
    let text = log_text(&app).await;
    for s in [
        crm.as_str(),
        made["secret"].as_str().unwrap(),
        "api-secret",
        "127.0.0.1",
    ] {
        assert!(!text.contains(s), "in the log: {s}");
    }
}

/// Writes `n` events of `kind` by an administrator named `who`, at `at`.
async fn write(app: &TestApp, n: usize, kind: Kind, who: &str, at: i64) {
    for _ in 0..n {
        let row = store::audit::New {
            at,
            kind: kind.as_str(),
            actor: "admin",
            actor_id: Some(1),
            actor_name: Some(who),
            address: None,
            detail: "{}",
        };
        store::audit::insert(&app.db, &row).await.unwrap();
    }
}

/// The events a page lists, by the count of its rows, and its "older" link.
fn listed(page: &Page) -> (usize, Option<String>) {
    assert_eq!(page.status, 200, "{}", page.body);
    (
        page.text("tr.audit-event").len(),
        page.attr("#older", "href"),
    )
}

/// More events than a page: pages of 50 without overlap to the last; filters by kind, who and
/// dates; a date that is not one is a clear 400 in the reader's language.
#[tokio::test]
async fn the_page_pages_through_every_event_and_filters_them() {
    let app = spawn(Flood::Memory).await;
    let ada = app.admin_client().await;
    let day = |d: &str| orchestra::time::parse_day(d).unwrap();
    write(
        &app,
        70,
        Kind::TokenCreated,
        "zed",
        day("2026-01-10") + 3600,
    )
    .await;
    write(
        &app,
        40,
        Kind::WebhookRemoved,
        "yan",
        day("2026-02-10") + 3600,
    )
    .await;
    let total = log(&app).await.len();
    assert_eq!(total, 111, "the 110 and ada's sign-in");
    let mut seen = 0;
    let mut path = "/admin/audit".to_owned();
    let mut pages = 0;
    loop {
        let (n, older) = listed(&get(&ada, &app, &path).await);
        seen += n;
        pages += 1;
        assert!(pages <= 3, "a page again: {path}");
        match older {
            Some(next) => path = next.replace("&amp;", "&"),
            None => break,
        }
    }
    assert_eq!((seen, pages), (total, 3));
    let (n, older) = listed(&get(&ada, &app, "/admin/audit?kind=webhook_removed").await);
    assert_eq!((n, older), (40, None));
    let (n, older) = listed(&get(&ada, &app, "/admin/audit?who=zed").await);
    assert_eq!(n, 50);
    let next = older.expect("a second page of zed's").replace("&amp;", "&");
    assert!(next.contains("who=zed"), "{next}");
    assert_eq!(listed(&get(&ada, &app, &next).await), (20, None));
    let (n, _) = listed(&get(&ada, &app, "/admin/audit?from=2026-02-01&to=2026-02-28").await);
    assert_eq!(n, 40);
    let (n, _) = listed(&get(&ada, &app, "/admin/audit?to=2026-01-10").await);
    assert_eq!(n, 50, "the whole of the 10th");
    let (n, _) = listed(&get(&ada, &app, "/admin/audit?to=2026-01-09").await);
    assert_eq!(n, 0);
    let bad = get(&ada, &app, "/admin/audit?from=2026-13-45").await;
    assert_eq!(bad.status, 400);
    assert!(
        bad.first("#audit-error").contains("YYYY-MM-DD"),
        "{}",
        bad.body
    );
    let bad = get(&ada, &app, "/admin/audit?from=yesterday&lang=fr").await;
    assert_eq!(bad.status, 400);
    assert!(
        bad.first("#audit-error").contains("AAAA-MM-JJ"),
        "{}",
        bad.body
    );
    let fr = get(&ada, &app, "/admin/audit?lang=fr").await;
    assert_eq!(fr.first("h1"), "Journal d'audit");
}

/// `orchestra audit list --format csv` as Python's csv module reads it (a formula neutralised),
/// `--format json` parsed, the table by default, with the page's filters.
#[tokio::test]
async fn audit_list_exports_csv_python_reads_and_json() {
    let app = spawn(Flood::Memory).await;
    write(
        &app,
        3,
        Kind::TokenCreated,
        "=HYPERLINK(\"x\")",
        1_700_000_000,
    )
    .await;
    audit::record(
        &app.db,
        &Actor::Cli,
        None,
        Event::TokenRevoked("crm, \"quoted\"".into()),
    )
    .await;
    let url = app.database.url.clone();
    let csv = helpers::serve::cli(BIN, &url, &["audit", "list", "--format", "csv"]);
    let mut python = Command::new("python3")
        .args([
            "-c",
            "import csv, json, sys; print(json.dumps(list(csv.DictReader(sys.stdin))))",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3");
    python
        .stdin
        .take()
        .unwrap()
        .write_all(csv.as_bytes())
        .unwrap();
    let out = python.wait_with_output().unwrap();
    assert!(out.status.success());
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rows.len(), 4, "{csv}");
    assert_eq!(rows[0]["kind"], "token_revoked");
    assert_eq!(rows[0]["actor"], "cli");
    let detail: serde_json::Value =
        serde_json::from_str(rows[0]["detail"].as_str().unwrap()).unwrap();
    assert_eq!(detail["token"], "crm, \"quoted\"");
    assert_eq!(
        rows[1]["actor_name"], "'=HYPERLINK(\"x\")",
        "a formula is never a formula"
    );
    assert_eq!(rows[3]["at"], "2023-11-14T22:13:20Z");

    let json = helpers::serve::cli(
        BIN,
        &url,
        &["audit", "list", "--format", "json", "--who", "cli"],
    );
    let events: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(events.as_array().unwrap().len(), 1, "{json}");
    assert_eq!(events[0]["detail"]["token"], "crm, \"quoted\"");
    let json = helpers::serve::cli(
        BIN,
        &url,
        &["audit", "list", "--format", "json", "--limit", "2"],
    );
    let events: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(events.as_array().unwrap().len(), 2);
    let table = helpers::serve::cli(BIN, &url, &["audit", "list", "--kind", "token_created"]);
    assert_eq!(
        table.lines().count(),
        4,
        "a header and three events: {table}"
    );
    let refused = Command::new(BIN)
        .args(["audit", "list", "--kind", "nothing"])
        .env("ORCHESTRA_DATABASE_URL", &url)
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("nothing"));
}

/// Cron deletes the events past the retention (365 days as shipped) and keeps the newer; 0
/// keeps them all.
#[tokio::test]
async fn cron_deletes_events_past_the_retention_and_keeps_the_newer() {
    let app = spawn(Flood::Memory).await;
    let now = store::now();
    write(&app, 1200, Kind::SignedIn, "old", now - 400 * 86_400).await;
    write(&app, 5, Kind::SignedIn, "new", now - 10 * 86_400).await;
    app.set(&[(audit::RETENTION_KEY, "0")]).await;
    orchestra::run_cron(&app.db, &app.state.guard)
        .await
        .unwrap();
    assert_eq!(log(&app).await.len(), 1205, "0 keeps every event");
    app.set(&[(audit::RETENTION_KEY, "365")]).await;
    orchestra::run_cron(&app.db, &app.state.guard)
        .await
        .unwrap();
    let left: Vec<_> = log(&app)
        .await
        .into_iter()
        .map(|r| r.actor_name.unwrap())
        .collect();
    assert_eq!(left, vec!["new"; 5]);
}

/// Signed out, the page is the sign-in; nothing writes to the log through it.
#[tokio::test]
async fn a_stranger_meets_the_sign_in_and_the_page_is_not_writable() {
    let app = spawn(Flood::Memory).await;
    let stranger = app.client();
    let page = get(&stranger, &app, "/admin/audit").await;
    assert_eq!(page.status, 303);
    assert!(
        page.location().starts_with("/admin/login"),
        "{}",
        page.location()
    );
    let ada = app.admin_client().await;
    let before = log(&app).await.len();
    let csrf = get(&ada, &app, "/admin/audit").await.csrf();
    let posted = post(
        &ada,
        &app,
        "/admin/audit",
        &[("csrf", csrf.as_str()), ("kind", "signed_in")],
    )
    .await;
    assert_eq!(posted.status, 405);
    let posted = post(&stranger, &app, "/admin/audit", &[("kind", "signed_in")]).await;
    assert!(
        matches!(posted.status, 303 | 403 | 405),
        "{}",
        posted.status
    );
    assert_eq!(log(&app).await.len(), before);
}
