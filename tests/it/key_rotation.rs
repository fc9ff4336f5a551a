//! A key rotation keeps participants going: links a rotation voided show *Void* (the admin's
//! instance page, the API), `orchestra keys rotate --resend` emails everyone still asked a
//! fresh link that works (through a real SMTP server on loopback), without `--resend` the
//! command and the status report count the running instances left with no working link, the
//! refused page of a genuine link that was voided or expired offers a fresh one to the address
//! on file (and a made-up link's does not), counted and capped; and a database made before the
//! key generations upgrades with its links working.

use std::process::{Command, Stdio};
use std::time::Duration;

use orchestra::domain::api::scope::{Reach, Scope};
use orchestra::domain::mail::{Mailer, send};
use orchestra::domain::rotation;
use orchestra::store;

use crate::helpers::{self, Flood, Page, Smtp, TestApp, get, post, sign_in, spawn_now};
use crate::mail::{contact, start_with};

const FROM: &str = "Orchestra <orchestra@example.org>";
const BIN: &str = env!("CARGO_BIN_EXE_orchestra");
const SENT_WORDS: &str =
    "If this link was yours, a fresh one is on its way to the address on file.";

/// One run of the sender now, through `mailer`, with the keys the app sees.
async fn send_now(app: &TestApp, mailer: &Mailer) -> send::Run {
    let site = app.state.site.get().await;
    send::run_once(
        &app.db,
        &app.state.versions,
        &site,
        Some(mailer),
        store::now(),
    )
    .await
    .unwrap()
}

/// The real binary on the app's database: (exit code, stdout, stderr).
fn orchestra(app: &TestApp, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(BIN)
        .args(args)
        .env_clear()
        .env("ORCHESTRA_DATABASE_URL", &app.database.url)
        .env("ORCHESTRA_LANG", "en")
        .stdin(Stdio::null())
        .output()
        .expect("run orchestra");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A contract review (legal and finance asked at once) and a supplier onboarding, every
/// participant with an address, their first emails sent: the links each was emailed.
async fn two_running(app: &TestApp, smtp: &Smtp, mailer: &Mailer) -> (i64, i64, Vec<String>) {
    let review = start_with(
        app,
        "contract_review",
        &[
            contact("legal", "lea@legal.example", "Léa", "en"),
            contact("finance", "finn@finance.example", "Finn", "fr"),
        ],
    )
    .await
    .unwrap();
    let supplier = start_with(
        app,
        "supplier_onboarding",
        &[contact("supplier", "sam@supplier.example", "Sam", "en")],
    )
    .await
    .unwrap();
    assert_eq!(send_now(app, mailer).await.sent, 3);
    let links = smtp.received().iter().map(|m| m.link_path()).collect();
    (review, supplier, links)
}

/// An app with a contract review whose legal participant has an address (finance has none).
async fn review_with_legal_on_file() -> (TestApp, i64) {
    let app = spawn_now(Flood::Memory).await;
    let id = start_with(
        &app,
        "contract_review",
        &[contact("legal", "lea@legal.example", "Léa", "en")],
    )
    .await
    .unwrap();
    (app, id)
}

/// The states of an instance's links as the API lists them, newest first.
async fn api_states(app: &TestApp, instance: i64) -> Vec<String> {
    let keys = store::keys::load(&app.db).await.unwrap();
    let scope = Scope {
        reach: Reach::All,
        ..Scope::default()
    };
    let name = format!("reader-{}", orchestra::domain::keys::random_token());
    let token = orchestra::domain::api::create_scoped_token(
        &app.db,
        &keys,
        &name[..30],
        None,
        None,
        &scope,
    )
    .await
    .unwrap()
    .unwrap();
    let page = helpers::read(
        app.client()
            .get(app.url(&format!("/api/v1/instances/{instance}/links")))
            .bearer_auth(token),
    )
    .await;
    assert_eq!(page.status, 200, "{}", page.body);
    let json: serde_json::Value = serde_json::from_str(&page.body).unwrap();
    json["links"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["state"].as_str().unwrap().to_owned())
        .collect()
}

async fn pending_link_mails(app: &TestApp) -> i64 {
    let url = store::normalize_url(&app.database.url).unwrap().1;
    let pool = sqlx::AnyPool::connect(&url).await.unwrap();
    let count =
        sqlx::query_scalar("SELECT COUNT(*) FROM mails WHERE kind = 'link' AND state = 'pending'")
            .fetch_one(&pool)
            .await
            .unwrap();
    pool.close().await;
    count
}

#[tokio::test]
async fn after_keys_rotate_resend_everyone_still_asked_gets_a_working_link_and_the_old_ones_show_void()
 {
    let app = spawn_now(Flood::Memory).await;
    let smtp = Smtp::start();
    let mailer = Mailer::new(&smtp.url(), FROM).unwrap();
    let (review, supplier, old) = two_running(&app, &smtp, &mailer).await;
    // One more, issued by hand: the rotation voids it too.
    let issued = app.link(review, Some("legal")).await;
    let client = app.client();
    for link in old.iter().chain([&issued]) {
        assert_eq!(get(&client, &app, link).await.status, 200, "works before");
    }

    let (code, stdout, stderr) = orchestra(&app, &["keys", "rotate", "--yes", "--resend"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.starts_with("New site keys are in place."),
        "{stderr}"
    );
    assert_eq!(
        stdout,
        "3 fresh link emails queued over 2 running instances.\n"
    );
    // The server's snapshot still holds the old keys for a few seconds: its sender signs
    // under the keys in force all the same.
    assert_eq!(send_now(&app, &mailer).await.sent, 3);
    app.state.site.refresh().await;
    for link in old.iter().chain([&issued]) {
        assert_eq!(get(&client, &app, link).await.status, 404, "voided");
    }
    let received = smtp.received();
    let fresh: Vec<_> = received[3..].iter().collect();
    let mut to: Vec<&str> = fresh.iter().map(|m| m.to[0].as_str()).collect();
    to.sort();
    assert_eq!(
        to,
        [
            "finn@finance.example",
            "lea@legal.example",
            "sam@supplier.example"
        ]
    );
    for email in &fresh {
        let page = get(&client, &app, &email.link_path()).await;
        assert_eq!(page.status, 200, "the fresh link works");
        assert!(page.has("form input[name=_step]"), "{}", page.body);
    }

    // The admin's instance page: the three old links Void, with no Revoke button.
    let admin = {
        app.create_admin().await;
        sign_in(&app).await
    };
    let page = get(&admin, &app, &format!("/admin/instances/{review}")).await;
    assert_eq!(page.text("tr.link-state-void td.link-state").len(), 3);
    assert_eq!(
        page.text("tr.link-state-void td.link-state")[0],
        "Void (site keys rotated)"
    );
    assert!(
        !page.has("tr.link-state-void form"),
        "no Revoke on a void link"
    );
    assert_eq!(page.text("tr.link-state-active").len(), 2);
    let fr = get(&admin, &app, &format!("/admin/instances/{review}?lang=fr")).await;
    assert_eq!(
        fr.text("tr.link-state-void td.link-state")[0],
        "Annulé (clés du site changées)"
    );

    // The API's view of the same links.
    let mut states = api_states(&app, review).await;
    states.sort();
    assert_eq!(states, ["active", "active", "void", "void", "void"]);
    assert_eq!(api_states(&app, supplier).await, ["active", "void"]);
}

#[tokio::test]
async fn without_resend_the_count_is_printed_and_on_the_status_report_until_fresh_links_are_sent() {
    let app = spawn_now(Flood::Memory).await;
    let smtp = Smtp::start();
    let mailer = Mailer::new(&smtp.url(), FROM).unwrap();
    two_running(&app, &smtp, &mailer).await;
    let (code, stdout, _) = orchestra(&app, &["status"]);
    assert!(!stdout.contains("voided"), "{code} {stdout}");

    let (code, stdout, stderr) = orchestra(&app, &["keys", "rotate", "--yes"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stdout,
        "2 running instances have no working link left. Send fresh links with: orchestra keys resend\n"
    );
    let (_, status, _) = orchestra(&app, &["status"]);
    assert!(
        status.contains(
            "Links voided by a key rotation: 2 running instances have no working link left"
        ),
        "{status}"
    );
    assert!(status.contains("orchestra keys resend"), "{status}");
    let admin = {
        app.create_admin().await;
        sign_in(&app).await
    };
    let page = get(&admin, &app, "/admin/reports/status").await;
    assert_eq!(
        page.text("#check-voided_links .value"),
        ["2 running instances have no working link left"]
    );
    assert_eq!(
        page.attr("#check-voided_links .fix a", "href").as_deref(),
        Some("/admin/reports/status/keys")
    );
    let fr = get(&admin, &app, "/admin/reports/status?lang=fr").await;
    assert!(
        fr.text("#check-voided_links .description")[0].contains("lancez\u{202f}: "),
        "{:?}",
        fr.text("#check-voided_links .description")
    );

    // The admin's "Send fresh links", on the Rotate keys page.
    let keys_page = get(&admin, &app, "/admin/reports/status/keys").await;
    assert_eq!(keys_page.status, 200);
    assert!(keys_page.has("form#rotate-keys input[name=resend][checked]"));
    let csrf = keys_page.csrf();
    let done = post(
        &admin,
        &app,
        "/admin/reports/status/keys/resend",
        &[("csrf", csrf.as_str())],
    )
    .await;
    assert_eq!(done.status, 303);
    assert_eq!(pending_link_mails(&app).await, 3);
    let page = get(&admin, &app, "/admin/reports/status").await;
    assert!(
        !page.has("#check-voided_links"),
        "fresh links are on their way"
    );
    assert_eq!(send_now(&app, &mailer).await.sent, 3);
    let (_, status, _) = orchestra(&app, &["status"]);
    assert!(!status.contains("Links voided"), "{status}");
}

#[tokio::test]
async fn a_voided_or_expired_links_refused_page_offers_a_fresh_link_and_a_made_up_links_does_not() {
    let (app, id) = review_with_legal_on_file().await;
    let link = app.link(id, Some("legal")).await;
    let short = app.link_for(id, "finance", 60).await;
    // The same link with its signature's last digit changed: well formed, never signed.
    let mut made_up = link.clone();
    let last = made_up.pop().unwrap();
    made_up.push(if last == '0' { '1' } else { '0' });
    let client = app.client();
    let refused = get(&client, &app, &made_up).await;
    assert_eq!(refused.status, 404);
    assert!(!refused.has("form.fresh-link"));
    let before = pending_link_mails(&app).await;

    rotation::rotate_keys(&app.db).await.unwrap();
    app.state.site.refresh().await;
    let voided = get(&client, &app, &link).await;
    assert_eq!(voided.status, 404);
    assert_eq!(voided.text("p.refused"), refused.text("p.refused"));
    let action = voided.attr("form.fresh-link", "action").expect("the offer");
    assert_eq!(action, format!("{link}/fresh"));
    assert_eq!(
        voided.first("form.fresh-link button"),
        "Email me a fresh link"
    );
    let fr = get(&app.client(), &app, &helpers::with_lang(&link, "fr")).await;
    assert_eq!(
        fr.first("form.fresh-link button"),
        "M'envoyer un nouveau lien"
    );
    assert!(!get(&client, &app, &made_up).await.has("form.fresh-link"));
    // Rotated again: the keys of both rotations still recognise it.
    rotation::rotate_keys(&app.db).await.unwrap();
    app.state.site.refresh().await;
    assert!(get(&client, &app, &link).await.has("form.fresh-link"));

    let asked = post(&client, &app, &action, &[]).await;
    assert_eq!(asked.status, 200);
    assert_eq!(asked.first("p.fresh-sent"), SENT_WORDS);
    assert_eq!(pending_link_mails(&app).await, before + 1, "legal's email");
    // A made-up link's request: the one refusal, and nothing queued.
    let nothing = post(&client, &app, &format!("{made_up}/fresh"), &[]).await;
    assert_eq!(nothing.status, 404);
    assert!(nothing.has("p.refused") && !nothing.has("form.fresh-link"));
    assert_eq!(pending_link_mails(&app).await, before + 1);

    // An expired link (finance's, issued under the first keys and voided since) is genuine all
    // the same; finance has no address: the same words, and nothing queued.
    app.clock.advance(Duration::from_secs(120));
    let expired = get(&client, &app, &short).await;
    assert!(expired.has("form.fresh-link"));
    let asked = post(&client, &app, &format!("{short}/fresh"), &[]).await;
    assert_eq!(asked.first("p.fresh-sent"), SENT_WORDS);
    assert_eq!(pending_link_mails(&app).await, before + 1);

    // Under the current keys, an expired link is recognised too.
    let current = app.link_for(id, "legal", 60).await;
    app.clock.advance(Duration::from_secs(120));
    assert!(get(&client, &app, &current).await.has("form.fresh-link"));
    // Once no link signed under the retired keys can be unexpired, cron deletes them: the
    // voided link gets the plain refusal.
    let url = store::normalize_url(&app.database.url).unwrap().1;
    let pool = sqlx::AnyPool::connect(&url).await.unwrap();
    sqlx::query("UPDATE retired_link_keys SET keep_until = 1")
        .execute(&pool)
        .await
        .unwrap();
    orchestra::run_cron(&app.db, &app.state.guard)
        .await
        .unwrap();
    let left: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM retired_link_keys")
        .fetch_one(&pool)
        .await
        .unwrap();
    pool.close().await;
    assert_eq!(left, 0, "pruned");
    app.state.site.refresh().await;
    let plain = get(&client, &app, &link).await;
    assert!(plain.has("p.refused") && !plain.has("form.fresh-link"));

    // The app's own lines hold none of the links.
    let logs = crate::doorway::app_lines(&app);
    assert!(
        logs.iter()
            .any(|l| l.contains("a fresh link was asked for"))
    );
    for secret in [&link, &short, &current, &made_up] {
        let signature = secret.rsplit('.').next().unwrap();
        assert!(
            !logs.iter().any(|l| l.contains(signature)),
            "a link in the logs"
        );
    }
}

#[tokio::test]
async fn a_fresh_link_is_asked_at_most_three_times_per_link_and_counted_by_the_guard() {
    let (app, id) = review_with_legal_on_file().await;
    let link = app.link(id, Some("legal")).await;
    let other = app.link(id, Some("legal")).await;
    rotation::rotate_keys(&app.db).await.unwrap();
    app.state.site.refresh().await;
    let client = app.client();
    let fresh = format!("{link}/fresh");
    // Legal's first email, queued at the start.
    let before = pending_link_mails(&app).await;
    for _ in 0..3 {
        let page = post(&client, &app, &fresh, &[]).await;
        assert_eq!(page.status, 200);
    }
    assert_eq!(pending_link_mails(&app).await, before + 3);
    let past: Page = post(&client, &app, &fresh, &[]).await;
    assert_eq!(past.status, 429, "past its limit");
    assert_eq!(
        pending_link_mails(&app).await,
        before + 3,
        "nothing more queued"
    );

    // The guard counts the request under its link: with 2 requests per link, the second
    // link's page and one request fill it, and the next is the guard's refusal.
    app.set(&[
        ("orchestra.request_limits.enabled", "true"),
        ("orchestra.request_limits.period", "600"),
        ("interaction.limits.per_link", "2"),
        ("interaction.limits.total", "1000"),
    ])
    .await;
    assert!(get(&client, &app, &other).await.has("form.fresh-link"));
    assert_eq!(
        post(&client, &app, &format!("{other}/fresh"), &[])
            .await
            .status,
        200
    );
    let refused = post(&client, &app, &format!("{other}/fresh"), &[]).await;
    assert_eq!(refused.status, 429);
    assert_eq!(pending_link_mails(&app).await, before + 4);
    // A cross-site form is refused before anything is counted on the record.
    let cross = helpers::read(
        client
            .post(app.url(&fresh))
            .header("sec-fetch-site", "cross-site"),
    )
    .await;
    assert_eq!(cross.status, 403);
}

/// A database made before key generations: its site keys and a running instance's link, as the
/// previous main wrote them. After the upgrade the link still works, shows Active, and a
/// rotation then voids it.
#[tokio::test]
async fn a_database_made_before_key_generations_upgrades_and_its_running_links_keep_working() {
    let database = helpers::fresh_database().await;
    let pool = helpers::schema_before(&database.url, 25).await;
    let keys = orchestra::domain::keys::SiteKeys::from_bytes([7; 32], [9; 32]);
    let exec = |sql: &str, args: Vec<String>| {
        let sql = sql.to_owned();
        let pool = pool.clone();
        async move {
            let mut q = sqlx::query(&sql);
            for a in args {
                q = q.bind(a);
            }
            q.execute(&pool).await.unwrap();
        }
    };
    exec(
        "INSERT INTO site_keys (id, private_key, hash_salt, created_at, provider_key, token_key) \
         VALUES (1, $1, $2, 1700000000, $3, $3)",
        vec![
            hex::encode([7; 32]),
            hex::encode([9; 32]),
            hex::encode([5; 32]),
        ],
    )
    .await;
    let definition = orchestra::domain::workflow::Definition::parse(
        "form: Supplier details | Company*\nreview: Check the supplier\n",
    )
    .unwrap()
    .to_json();
    exec(
        "INSERT INTO workflows (name, label, created_at, updated_at) \
         VALUES ('upgrade_flow', 'Upgrade flow', 1700000000, 1700000000)",
        vec![],
    )
    .await;
    exec(
        "INSERT INTO workflow_versions (workflow_id, number, definition, created_at, running) \
         SELECT id, 1, $1, 1700000000, 1 FROM workflows WHERE name = 'upgrade_flow'",
        vec![definition],
    )
    .await;
    exec(
        "INSERT INTO instances (workflow_id, version_id, subject_title, subject_body, token, \
         step_index, state, created_at, updated_at) SELECT w.id, v.id, 'Acme', '', 'token-acme', \
         0, 'active', 1700000000, 1700000000 FROM workflows w JOIN workflow_versions v \
         ON v.workflow_id = w.id WHERE w.name = 'upgrade_flow'",
        vec![],
    )
    .await;
    let instance: i64 = sqlx::query_scalar("SELECT id FROM instances WHERE subject_title = 'Acme'")
        .fetch_one(&pool)
        .await
        .unwrap();
    let claims = orchestra::domain::capability::Claims {
        kind: orchestra::domain::capability::Kind::Link,
        instance,
        branch: None,
        // The app's clock starts at 1,900,000,000 (`helpers::spawn_on`).
        expires: 1_900_000_000 + 3600,
    };
    let link = orchestra::domain::capability::sign(&keys, &claims, "token-acme");
    let record = format!(
        "INSERT INTO links (instance_id, hash, participant, expires, issued_by, issued_at) \
         SELECT id, $1, 'default', {}, 'cli', 1700000000 FROM instances \
         WHERE subject_title = 'Acme'",
        claims.expires
    );
    exec(&record, vec![keys.keyed_hash("link", &link)]).await;
    pool.close().await;

    let app = helpers::spawn_on(database, |_, clock| {
        std::sync::Arc::new(orchestra::limits::flood::MemoryFlood::new(4096, clock))
    })
    .await;
    let client = app.client();
    let path = format!("/interaction/{link}");
    let page = get(&client, &app, &path).await;
    assert_eq!(page.status, 200, "the link works after the upgrade");
    assert_eq!(api_states(&app, instance).await, ["active"]);
    rotation::rotate_keys(&app.db).await.unwrap();
    app.state.site.refresh().await;
    let voided = get(&client, &app, &path).await;
    assert_eq!(voided.status, 404);
    assert!(voided.has("form.fresh-link"), "recognised as voided");
    assert_eq!(api_states(&app, instance).await, ["void"]);
}

/// The admin's Rotate keys page asks first; rotating from it with "Email a fresh link" ticked
/// voids the links, queues the fresh ones, and signs the administrator out with everyone else.
#[tokio::test]
async fn the_admins_rotate_keys_page_rotates_and_queues_fresh_links() {
    let (app, id) = review_with_legal_on_file().await;
    let old = app.link(id, Some("legal")).await;
    let admin = {
        app.create_admin().await;
        sign_in(&app).await
    };
    let status = get(&admin, &app, "/admin/reports/status").await;
    assert_eq!(
        status.attr("#rotate-keys-link", "href").as_deref(),
        Some("/admin/reports/status/keys")
    );
    let page = get(&admin, &app, "/admin/reports/status/keys?lang=fr").await;
    assert_eq!(page.first("h1"), "Changer les clés");
    let page = get(&admin, &app, "/admin/reports/status/keys").await;
    let before = pending_link_mails(&app).await;
    let csrf = page.csrf();
    let done = post(
        &admin,
        &app,
        "/admin/reports/status/keys",
        &[("csrf", csrf.as_str()), ("resend", "1")],
    )
    .await;
    assert_eq!((done.status, done.location()), (303, "/admin/login".into()));
    assert_eq!(store::keys::generation(&app.db).await.unwrap(), 1);
    assert_eq!(
        pending_link_mails(&app).await,
        before + 1,
        "legal's fresh link"
    );
    assert_eq!(get(&app.client(), &app, &old).await.status, 404);
    assert_eq!(get(&admin, &app, "/admin").await.status, 303, "signed out");
}
