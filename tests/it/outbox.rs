//! The outbox's rules that hold across its two queues and the API that feeds them: a slow
//! endpoint delays only itself, the site's emails go before a token's burst, a token's
//! endpoints and link emails are bounded, and a write that meets another process's write lock
//! is a 503 the caller may retry, never a 500.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use orchestra::domain::delivery::send;

use crate::api::{call, json, token};
use crate::helpers::{self, Flood, Locker, TestApp, spawn};

/// A receiver that answers 200 after `delay`, counting what it was sent.
async fn slow_receiver(delay: Duration) -> (String, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let got = Arc::new(AtomicUsize::new(0));
    let counted = got.clone();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move || {
            let got = counted.clone();
            async move {
                tokio::time::sleep(delay).await;
                got.fetch_add(1, Ordering::SeqCst);
                StatusCode::OK
            }
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, got)
}

async fn hook(app: &TestApp, url: &str) -> i64 {
    let keys = app.state.site.get().await.keys.clone();
    orchestra::domain::delivery::endpoints::create(&app.db, &keys, url, None, true)
        .await
        .unwrap()
        .id
}

/// Two endpoints, the first slow (3 s an answer): the second's message arrives while the first
/// is still being answered, not after it.
#[tokio::test]
async fn a_slow_endpoint_does_not_delay_another() {
    let app = spawn(Flood::Memory).await;
    let (slow, slow_got) = slow_receiver(Duration::from_secs(3)).await;
    let (fast, fast_got) = slow_receiver(Duration::ZERO).await;
    hook(&app, &slow).await;
    hook(&app, &fast).await;
    for n in 0..3 {
        app.start("contract_review", &format!("Lease {n}")).await;
    }
    let sender = send::Sender {
        db: app.db.clone(),
        keys: app.state.site.get().await.keys.clone(),
        allow_private: true,
        figures: Default::default(),
    };
    let started = Instant::now();
    let run = tokio::spawn(async move { sender.run_once(orchestra::store::now()).await });
    while fast_got.load(Ordering::SeqCst) < 3 {
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "the fast endpoint waited behind the slow one"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        slow_got.load(Ordering::SeqCst),
        0,
        "the slow one is still answering"
    );
    assert_eq!(run.await.unwrap().unwrap(), 6);
    assert_eq!(slow_got.load(Ordering::SeqCst), 3);
}

/// A token's 10th endpoint is made, its 11th is refused (403, in the caller's language) and
/// nothing is written; another token still has its own 10.
#[tokio::test]
async fn the_eleventh_endpoint_of_a_token_is_refused() {
    let app = spawn(Flood::Memory).await;
    app.state
        .webhooks_allow_private
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let crm = token(&app, "crm", Some(100_000), Some(100_000)).await;
    let erp = token(&app, "erp", Some(100_000), Some(100_000)).await;
    let body = r#"{"url":"http://127.0.0.1:9/hook","events":["instance.started"]}"#;
    for n in 0..10 {
        let made = call(&app, "POST", "/api/v1/webhooks", &crm, Some(body)).await;
        assert_eq!(made.status, 201, "endpoint {n}: {}", made.body);
    }
    let refused = call(&app, "POST", "/api/v1/webhooks", &crm, Some(body)).await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert_eq!(json(&refused)["error"], "endpoint_cap");
    assert_eq!(
        json(&refused)["message"],
        "This token holds 10 webhook endpoints, as many as it may: delete one first."
    );
    let count = orchestra::store::webhooks::all(&app.db)
        .await
        .unwrap()
        .len();
    assert_eq!(count, 10, "nothing written");
    let other = call(&app, "POST", "/api/v1/webhooks", &erp, Some(body)).await;
    assert_eq!(other.status, 201);
}

fn start_body(email: &str) -> String {
    format!(
        r#"{{"workflow":"contract_review","subject":{{"title":"Lease"}},"participants":{{"legal":{{"email":"{email}"}}}}}}"#
    )
}

async fn instance_count(app: &TestApp) -> i64 {
    let pool = raw_pool(app).await;
    sqlx::query_scalar("SELECT COUNT(*) FROM instances")
        .fetch_one(&pool)
        .await
        .unwrap()
}

/// An API token emails one address 20 times in an hour; the 21st start that would email it is
/// refused with a 429 and starts nothing, while another address is still emailed. The token's
/// own hourly quota holds the same way.
#[tokio::test]
async fn the_twenty_first_api_email_to_one_address_in_an_hour_is_refused() {
    let app = spawn(Flood::Memory).await;
    let crm = token(&app, "crm", Some(100_000), Some(100_000)).await;
    for n in 0..20 {
        let made = call(
            &app,
            "POST",
            "/api/v1/instances",
            &crm,
            Some(&start_body("lee@legal.example")),
        )
        .await;
        assert_eq!(made.status, 201, "start {n}: {}", made.body);
    }
    let before = instance_count(&app).await;
    // The address is compared as written by people: its case does not make it another.
    let refused = call(
        &app,
        "POST",
        "/api/v1/instances",
        &crm,
        Some(&start_body("Lee@Legal.example")),
    )
    .await;
    assert_eq!(refused.status, 429, "{}", refused.body);
    assert_eq!(json(&refused)["error"], "email_rate");
    assert!(
        !refused.body.contains("lee@legal.example")
            && !refused.body.to_lowercase().contains("lee@legal"),
        "the address is not echoed: {}",
        refused.body
    );
    assert_eq!(instance_count(&app).await, before, "nothing started");
    let other = call(
        &app,
        "POST",
        "/api/v1/instances",
        &crm,
        Some(&start_body("ann@legal.example")),
    )
    .await;
    assert_eq!(other.status, 201);
    // The rows that hold the count name no address.
    let pool = raw_pool(&app).await;
    let keys: Vec<String> = sqlx::query_scalar("SELECT key FROM mail_quota")
        .fetch_all(&pool)
        .await
        .unwrap();
    assert!(keys.iter().all(|k| !k.contains('@')), "{keys:?}");

    app.set(&[("api.caps.emails_per_token_per_hour", "21")])
        .await;
    let fr = app
        .client()
        .post(app.url("/api/v1/instances"))
        .header("authorization", format!("Bearer {crm}"))
        .header("accept-language", "fr")
        .header("content-type", "application/json")
        .body(start_body("zoe@legal.example"))
        .send()
        .await
        .unwrap();
    assert_eq!(fr.status(), 429);
    let body: serde_json::Value = serde_json::from_str(&fr.text().await.unwrap()).unwrap();
    assert_eq!(
        body["message"],
        "Ce jeton a demandé 21 courriels de lien cette heure-ci, autant qu'il le peut : réessayez l'heure prochaine."
    );
}

/// A token's burst of emails queues behind the site's own: a participant's email that the site
/// queued after the burst is claimed first.
#[tokio::test]
async fn the_sites_emails_go_before_a_tokens_burst() {
    let app = spawn(Flood::Memory).await;
    app.set(&[("api.caps.emails_per_address_per_hour", "1000")])
        .await;
    let crm = token(&app, "crm", Some(100_000), Some(100_000)).await;
    for n in 0..25 {
        let made = call(
            &app,
            "POST",
            "/api/v1/instances",
            &crm,
            Some(&start_body(&format!("p{n}@x.example"))),
        )
        .await;
        assert_eq!(made.status, 201);
    }
    let admin = app.admin_client().await;
    let _ = admin;
    let w = orchestra::store::workflows::by_name(&app.db, "contract_review")
        .await
        .unwrap()
        .unwrap();
    let honest = orchestra::domain::instance::start(
        &app.db,
        &orchestra::domain::instance::Start {
            contacts: &[orchestra::domain::mail::ContactInput {
                participant: "legal".into(),
                email: "honest@x.example".into(),
                ..Default::default()
            }],
            ..orchestra::domain::instance::Start::new(
                w.id,
                "Honest",
                &orchestra::domain::instance::Actor::CommandLine,
            )
        },
    )
    .await
    .unwrap();
    let claimed =
        orchestra::store::mails::claim(&app.db, orchestra::store::now() + 1, 60, 20, true)
            .await
            .unwrap();
    assert_eq!(claimed.len(), 20);
    assert_eq!(claimed[0].instance_id, honest, "the site's email first");
}

/// SQLite: with another process holding the write lock, an API start answers a 503 `busy` in
/// JSON within the acquire timeout and a second, never a 500.
#[tokio::test]
async fn an_api_start_under_another_process_write_lock_is_a_503() {
    if helpers::on_postgres() {
        return; // SQLite's write lock; PostgreSQL has no such file-wide lock.
    }
    let app = spawn(Flood::Memory).await;
    let crm = token(&app, "crm", Some(100_000), Some(100_000)).await;
    let file = app.database.url.trim_start_matches("sqlite:").to_owned();
    let lock = Locker::hold(std::path::Path::new(&file));
    let started = Instant::now();
    let answer = app
        .client()
        .post(app.url("/api/v1/instances"))
        .header("authorization", format!("Bearer {crm}"))
        .header("content-type", "application/json")
        .body(r#"{"workflow":"contract_review","subject":{"title":"Locked"}}"#)
        .send()
        .await
        .unwrap();
    let took = started.elapsed();
    assert_eq!(answer.status(), 503);
    let body: serde_json::Value = serde_json::from_str(&answer.text().await.unwrap()).unwrap();
    assert_eq!(body["error"], "busy");
    assert!(
        took < orchestra::store::acquire_timeout() + Duration::from_secs(1),
        "{took:?}"
    );
    drop(lock);
}

/// An SMTP server that takes each message 1.5 s after its data ends, counting the messages it
/// began to receive and those it took.
async fn slow_smtp() -> (String, Arc<AtomicUsize>, Arc<AtomicUsize>) {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("smtp://{}", listener.local_addr().unwrap());
    let (begun, taken) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (b, t) = (begun.clone(), taken.clone());
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let (b, t) = (b.clone(), t.clone());
            tokio::spawn(async move {
                let (read, mut write) = stream.into_split();
                let mut lines = BufReader::new(read).lines();
                let _ = write.write_all(b"220 slow.test ESMTP\r\n").await;
                let mut in_data = false;
                while let Ok(Some(line)) = lines.next_line().await {
                    let answer: &[u8] = if in_data {
                        if line != "." {
                            continue;
                        }
                        in_data = false;
                        b.fetch_add(1, Ordering::SeqCst);
                        tokio::time::sleep(Duration::from_millis(1500)).await;
                        t.fetch_add(1, Ordering::SeqCst);
                        b"250 taken\r\n"
                    } else {
                        match line.get(..4).unwrap_or("").to_ascii_uppercase().as_str() {
                            "EHLO" | "HELO" => b"250 slow.test\r\n",
                            "DATA" => {
                                in_data = true;
                                b"354 go on\r\n"
                            }
                            "QUIT" => {
                                let _ = write.write_all(b"221 bye\r\n").await;
                                return;
                            }
                            _ => b"250 ok\r\n",
                        }
                    };
                    if write.write_all(answer).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    (url, begun, taken)
}

/// A graceful stop while an email is in the SMTP exchange: that email is finished and recorded
/// as sent (one link recorded for it), the rest of the batch is handed back unsent, and the next
/// sender sends each of those once: no participant gets a second email with a second link.
#[tokio::test]
async fn a_stop_mid_send_finishes_that_email_and_sends_no_second() {
    let app = spawn(Flood::Memory).await;
    let (url, begun, taken) = slow_smtp().await;
    let mailer =
        orchestra::domain::mail::Mailer::new(&url, "Orchestra <noreply@orchestra.test>").unwrap();
    let w = orchestra::store::workflows::by_name(&app.db, "contract_review")
        .await
        .unwrap()
        .unwrap();
    for n in 0..3 {
        orchestra::domain::instance::start(
            &app.db,
            &orchestra::domain::instance::Start {
                contacts: &[orchestra::domain::mail::ContactInput {
                    participant: "legal".into(),
                    email: format!("legal{n}@x.example"),
                    ..Default::default()
                }],
                ..orchestra::domain::instance::Start::new(
                    w.id,
                    &format!("Lease {n}"),
                    &orchestra::domain::instance::Actor::CommandLine,
                )
            },
        )
        .await
        .unwrap();
    }
    let state = app.state.clone().with_mailer(Some(mailer));
    let (switch, stop) = orchestra::domain::outbox::Stop::new();
    let timers = orchestra::spawn_background(state.clone(), Duration::from_secs(3600), stop);
    let started = Instant::now();
    while begun.load(Ordering::SeqCst) == 0 {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "no email began"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    switch.set();
    tokio::time::timeout(Duration::from_secs(10), timers)
        .await
        .expect("the timers stop once the email in flight is done")
        .unwrap();
    assert_eq!(
        taken.load(Ordering::SeqCst),
        1,
        "the email in flight was finished"
    );
    let pool = raw_pool(&app).await;
    let rows: Vec<(String, Option<i64>)> =
        sqlx::query_as("SELECT state, claimed_until FROM mails WHERE kind = 'link' ORDER BY id")
            .fetch_all(&pool)
            .await
            .unwrap();
    let sent = rows.iter().filter(|r| r.0 == "sent").count();
    assert_eq!(sent, 1, "recorded as sent: {rows:?}");
    assert!(
        rows.iter()
            .filter(|r| r.0 == "pending")
            .all(|r| r.1.is_none()),
        "the rest handed back: {rows:?}"
    );
    // The next sender (another process, or this one restarted) sends the rest, each once.
    let site = state.site.get().await;
    let mailer = state.mailer.clone().unwrap();
    let run = orchestra::domain::mail::send::run_once(
        &state.db,
        &state.versions,
        &site,
        Some(&mailer),
        orchestra::store::now(),
    )
    .await
    .unwrap();
    assert_eq!(run.sent, 2);
    assert_eq!(
        taken.load(Ordering::SeqCst),
        3,
        "three emails in all, one each"
    );
    let links: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM links WHERE issued_by = 'mail'")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(links, 3, "one link per participant");
}

/// A database as the previous main left it (migrations 1 to 19): a disabled endpoint whose
/// delivery was set aside (`skipped`), and a pending email. After the upgrade the set-aside
/// delivery waits for its endpoint (`held`) and goes once it is enabled; the email is claimed.
#[tokio::test]
async fn a_database_made_before_the_outbox_waits_upgrades_and_loses_nothing() {
    let database = crate::helpers::fresh_database().await;
    let pool = crate::helpers::schema_before(&database.url, 20).await;
    for sql in [
        "INSERT INTO workflows (name, label, created_at, updated_at) VALUES ('one', 'One', 1700000000, 1700000000)",
        "INSERT INTO workflow_versions (workflow_id, number, definition, created_at) VALUES (1, 1, '{\"steps\":[]}', 1700000000)",
        "INSERT INTO instances (workflow_id, version_id, subject_title, subject_body, token, step_index, state, created_at, updated_at) VALUES (1, 1, 'Old', '', 'instance-token', 0, 'active', 1700000000, 1700000000)",
        "INSERT INTO outbox (event, instance_id, workflow, created_at) VALUES ('instance.started', 1, 'one', 1700000000)",
        "INSERT INTO webhook_endpoints (url, events, secret, enabled, failures, created_at) VALUES ('http://127.0.0.1:9/hook', '', '', 0, 15, 1700000000)",
        "INSERT INTO webhook_deliveries (outbox_id, endpoint_id, state, next_at, created_at) VALUES (1, 1, 'skipped', 1700000000, 1700000000)",
        "INSERT INTO mails (instance_id, participant, step_index, kind, next_at, created_at) VALUES (1, 'legal', 0, 'deadline', 1700000000, 1700000000)",
    ] {
        sqlx::query(sql).execute(&pool).await.unwrap();
    }
    pool.close().await;
    let app = crate::helpers::spawn_on(database, |db, clock| {
        Arc::new(orchestra::limits::flood::SqlFlood::new(
            db.clone(),
            4096,
            clock,
        ))
    })
    .await;
    let state = orchestra::store::webhooks::deliveries_of(&app.db, 1)
        .await
        .unwrap();
    assert_eq!(state, [(1, "held".to_owned(), 0)]);
    let row = orchestra::store::webhooks::by_id(&app.db, 1)
        .await
        .unwrap()
        .unwrap();
    assert!(row.failing_since.is_some());
    let now = orchestra::store::now();
    assert_eq!(
        orchestra::store::webhooks::enable(&app.db, 1, now)
            .await
            .unwrap(),
        Some(1)
    );
    let state = orchestra::store::webhooks::deliveries_of(&app.db, 1)
        .await
        .unwrap();
    assert_eq!(state, [(1, "pending".to_owned(), 0)]);
    let claimed = orchestra::store::mails::claim(&app.db, now, 60, 20, false)
        .await
        .unwrap();
    assert_eq!(
        claimed.len(),
        1,
        "the old email is claimed in the site's lane"
    );
}

/// SQLite: an API read by a token used within the minute writes nothing (not even the note of
/// its use), so with another process holding the write lock it answers at once, not after the
/// acquire timeout.
#[tokio::test]
async fn an_api_read_writes_nothing_and_answers_at_once_under_another_process_write_lock() {
    if helpers::on_postgres() {
        return; // SQLite's write lock; PostgreSQL has no such file-wide lock.
    }
    let app = spawn(Flood::Memory).await;
    let crm = token(&app, "crm", Some(100_000), Some(100_000)).await;
    let made = call(
        &app,
        "POST",
        "/api/v1/instances",
        &crm,
        Some(r#"{"workflow":"contract_review","subject":{"title":"Read me"}}"#),
    )
    .await;
    assert_eq!(made.status, 201, "{}", made.body);
    let id = json(&made)["id"].as_i64().unwrap();
    let file = app.database.url.trim_start_matches("sqlite:").to_owned();
    let lock = Locker::hold(std::path::Path::new(&file));
    let started = Instant::now();
    let read = call(&app, "GET", &format!("/api/v1/instances/{id}"), &crm, None).await;
    let took = started.elapsed();
    drop(lock);
    assert_eq!(read.status, 200, "{}", read.body);
    assert!(took < Duration::from_millis(1000), "{took:?}");
}

/// A connection of the test's own to the app's database, beside the app's pools.
async fn raw_pool(app: &TestApp) -> sqlx::AnyPool {
    let url = orchestra::store::normalize_url(&app.database.url)
        .unwrap()
        .1;
    sqlx::AnyPool::connect(&url).await.unwrap()
}
