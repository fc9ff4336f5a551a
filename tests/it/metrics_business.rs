//! The business figures of the Prometheus endpoint, over real TCP on the database under test
//! (SQLite, or PostgreSQL with `ORCHESTRA_TEST_POSTGRES_URL`): instances by workflow and state,
//! how long answered steps waited, and emails by kind and outcome through a real SMTP server
//! on loopback and an unreachable one. No label carries an address, a link or a title.

use orchestra::domain::mail::{ContactInput, Mailer, send};
use orchestra::http::metrics::{INSTANCES, Metrics, STEP_WAIT_SECONDS};
use orchestra::store;

use crate::helpers::{Flood, Smtp, TestApp, answer_step, spawn, state_of};
use crate::mail::{contact, start_with};
use crate::metrics::{Scrape, scrape, serve_on_loopback};

const FROM: &str = "Orchestra <orchestra@example.org>";
/// The title `mail::start_with` gives its instances.
const TITLE: &str = "Acme onboarding";
const APPROVE: [(&str, &str); 2] = [("decision", "approve"), ("comment", "")];
const REJECT: [(&str, &str); 2] = [("decision", "reject"), ("comment", "No.")];

/// The app's metrics with its instances and its answered steps' waits.
fn business(app: &TestApp) -> Metrics {
    Metrics::new(app.state.guard.clone())
        .with_instances(app.db.clone())
        .with_step_waits(&app.state.step_waits)
}

/// The scrape's text, checked for what no label may carry, then parsed.
async fn scrape_clean(base: &str) -> Scrape {
    let text = reqwest::get(format!("{base}/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for secret in [
        TITLE,
        "@legal.example",
        "/interaction/",
        "Sign the lease",
        "A label",
    ] {
        assert!(!text.contains(secret), "{secret:?} in the figures");
    }
    Scrape::parse(&text)
}

/// Three workflows: "lease" of two steps, "permit" of one, "board" of one step of two branches.
async fn lease_and_permit(app: &TestApp) {
    for (name, text) in [
        (
            "lease",
            "review@legal: Sign the lease\nreview@finance: Pay\n",
        ),
        ("permit", "review@legal: Grant\n"),
        ("board", "review[alice,bob]: Sign off\n"),
    ] {
        let definition = orchestra::domain::workflow::Definition::parse(text).unwrap();
        store::workflows::create(&app.db, name, "A label, not a name", &definition.to_json())
            .await
            .unwrap();
    }
}

/// Starts an instance of a workflow (by name), with contacts.
async fn start(app: &TestApp, workflow: &str, contacts: &[ContactInput]) -> i64 {
    start_with(app, workflow, contacts).await.unwrap()
}

/// Answers the instance's current step through the doorway, as a browser would.
async fn answer(app: &TestApp, id: i64, form: &[(&str, &str)]) -> String {
    let link = app.link(id, None).await;
    let page = answer_step(&app.client(), app, &link, form).await;
    assert_eq!(page.status, 200, "{}", page.body);
    link
}

/// Runs one write of two numbers, committed.
async fn write(app: &TestApp, sql: &str, a: i64, b: i64) {
    let mut tx = app.db.write().await.unwrap();
    sqlx::query(sql)
        .bind(a)
        .bind(b)
        .execute(&mut *tx)
        .await
        .unwrap();
    tx.commit().await.unwrap();
}

/// Moves an instance's history `seconds` into the past, as if its steps had waited so long
/// (its row's `updated_at` stays now).
async fn age(app: &TestApp, id: i64, seconds: i64) {
    let sql = "UPDATE history SET at = at - $1 WHERE instance_id = $2";
    write(app, sql, seconds, id).await;
}

fn instances(s: &Scrape, workflow: &str, state: &str) -> f64 {
    s.get(INSTANCES, &[("workflow", workflow), ("state", state)])
}

#[tokio::test]
async fn instances_are_counted_by_workflow_and_state_and_kept_a_few_seconds() {
    let app = spawn(Flood::Memory).await;
    lease_and_permit(&app).await;
    let waiting = start(&app, "lease", &[]).await;
    answer(&app, waiting, &APPROVE).await;
    let complete = start(&app, "lease", &[]).await;
    answer(&app, complete, &APPROVE).await;
    answer(&app, complete, &APPROVE).await;
    let rejected = start(&app, "lease", &[]).await;
    answer(&app, rejected, &REJECT).await;
    let cancelled = start(&app, "lease", &[]).await;
    assert!(
        store::instances::cancel(&app.db, cancelled, "fresh", "cli", "{}", &[])
            .await
            .unwrap()
    );
    start(&app, "permit", &[]).await;
    start(&app, "permit", &[]).await;
    assert_eq!(state_of(&app, waiting).await, ("active".into(), 1));

    let base = serve_on_loopback(business(&app)).await;
    let s = scrape_clean(&base).await;
    for (state, n) in [
        ("active", 1.0),
        ("complete", 1.0),
        ("rejected", 1.0),
        ("cancelled", 1.0),
        ("expired", 0.0),
    ] {
        assert_eq!(instances(&s, "lease", state), n, "lease {state}");
    }
    assert_eq!(instances(&s, "permit", "active"), 2.0);
    assert_eq!(instances(&s, "permit", "complete"), 0.0);

    // A third permit: the next scrape, within the few seconds, shows the counts it read.
    start(&app, "permit", &[]).await;
    assert_eq!(instances(&scrape(&base).await, "permit", "active"), 2.0);
    // A server reading them anew counts it.
    let fresh = serve_on_loopback(business(&app)).await;
    assert_eq!(instances(&scrape(&fresh).await, "permit", "active"), 3.0);
}

#[tokio::test]
async fn each_answer_observes_how_long_its_step_waited_since_it_was_asked() {
    let app = spawn(Flood::Memory).await;
    lease_and_permit(&app).await;
    let base = serve_on_loopback(business(&app)).await;
    let count = |s: &Scrape, workflow: &str| {
        s.get(
            &format!("{STEP_WAIT_SECONDS}_count"),
            &[("workflow", workflow)],
        )
    };
    let bucket = |s: &Scrape, le: &str| {
        s.get(
            &format!("{STEP_WAIT_SECONDS}_bucket"),
            &[("workflow", "lease"), ("le", le)],
        )
    };

    // The first step was asked two hours ago; the second, asked by the first one's answer,
    // 25 hours before it is answered.
    let id = start(&app, "lease", &[]).await;
    age(&app, id, 7_200).await;
    let first = answer(&app, id, &APPROVE).await;
    let s = scrape_clean(&base).await;
    assert_eq!(count(&s, "lease"), 1.0);
    assert_eq!(bucket(&s, "3600"), 0.0);
    assert_eq!(bucket(&s, "14400"), 1.0);
    age(&app, id, 90_000).await;
    answer(&app, id, &APPROVE).await;
    // The first link again: the step moved on, nothing is recorded, nothing observed.
    let stale = answer_step(&app.client(), &app, &first, &APPROVE).await;
    assert_ne!(stale.status, 500);
    let p = start(&app, "permit", &[]).await;
    answer(&app, p, &APPROVE).await;

    // Two branches: each answer's wait runs from the step's start, not from the other's answer.
    let b = start(&app, "board", &[]).await;
    age(&app, b, 10_800).await;
    answer(&app, b, &APPROVE).await;
    age(&app, b, 10_800).await;
    answer(&app, b, &APPROVE).await;
    assert_eq!(state_of(&app, b).await.0, "complete");

    let s = scrape_clean(&base).await;
    assert_eq!(count(&s, "board"), 2.0);
    let sum = s.get(
        &format!("{STEP_WAIT_SECONDS}_sum"),
        &[("workflow", "board")],
    );
    assert!(
        (32_400.0..32_400.0 + 60.0).contains(&sum),
        "three hours, then six: {sum}"
    );
    assert_eq!(count(&s, "lease"), 2.0, "one per answer");
    assert_eq!(count(&s, "permit"), 1.0);
    assert_eq!(bucket(&s, "14400"), 1.0);
    assert_eq!(bucket(&s, "86400"), 1.0);
    assert_eq!(bucket(&s, "172800"), 2.0);
    let sum = s.get(
        &format!("{STEP_WAIT_SECONDS}_sum"),
        &[("workflow", "lease")],
    );
    assert!(
        (97_200.0..97_200.0 + 60.0).contains(&sum),
        "two hours, then 25: {sum}"
    );
}

#[tokio::test]
async fn emails_are_counted_by_kind_and_outcome() {
    let app = spawn(Flood::Memory).await;
    lease_and_permit(&app).await;
    let contacts = [contact("legal", "lee@legal.example", "Lee", "en")];
    let smtp = Smtp::start();
    let up = Mailer::new(&smtp.url(), FROM).unwrap();
    // A port where nothing answers, for a mailer that counts into the same figures.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = closed.local_addr().unwrap();
    drop(closed);
    let mut down = Mailer::new(&format!("smtp://{addr}"), FROM).unwrap();
    down.figures = up.figures.clone();
    let base = serve_on_loopback(business(&app).with_mail(Some(up.figures.clone()))).await;
    let emails = |s: &Scrape, kind: &str, outcome: &str| {
        s.get(
            "orchestra_emails_total",
            &[("kind", kind), ("outcome", outcome)],
        )
    };
    let site = app.state.site.get().await;
    let run = |mailer: &Mailer, now: i64| {
        let (app, site, mailer) = (&app, site.clone(), mailer.clone());
        async move {
            send::run_once(&app.db, &app.state.versions, &site, Some(&mailer), now)
                .await
                .unwrap()
        }
    };

    start(&app, "lease", &contacts).await;
    // Each run at the moment it is made: an email queued after `now` is not due at `now`.
    assert_eq!(run(&up, store::now()).await.sent, 1);
    assert_eq!(smtp.received().len(), 1);
    let second = start(&app, "lease", &contacts).await;
    assert_eq!(run(&down, store::now()).await.retried, 1);
    // Its last try: the schedule spent, the next failure is for good.
    let sql = "UPDATE mails SET attempts = $1 WHERE instance_id = $2";
    write(&app, sql, send::BACKOFF.len() as i64, second).await;
    assert_eq!(run(&down, store::now() + 86_400).await.failed, 1);

    let s = scrape_clean(&base).await;
    assert_eq!(emails(&s, "link", "sent"), 1.0);
    assert_eq!(emails(&s, "link", "retried"), 1.0);
    assert_eq!(emails(&s, "link", "failed"), 1.0);
    assert_eq!(emails(&s, "reminder", "sent"), 0.0);
    assert_eq!(emails(&s, "outcome", "failed"), 0.0);
    assert_eq!(
        s.get("orchestra_mails_total", &[("result", "sent")]),
        1.0,
        "the total by result is the same count"
    );
}

#[tokio::test]
async fn a_payment_step_answered_by_the_providers_notice_is_observed_too() {
    use crate::integrity::{notice, send_notice, start_payment};
    let app = spawn(Flood::Memory).await;
    let base = serve_on_loopback(business(&app)).await;
    let id = app.start("order_payment", "Order").await;
    start_payment(&app, id).await;
    let figures = |s: &Scrape| {
        let labels = [("workflow", "order_payment")];
        let count = format!("{STEP_WAIT_SECONDS}_count");
        let sum = format!("{STEP_WAIT_SECONDS}_sum");
        let seen = s.0.keys().any(|k| k.starts_with(&count));
        // Before the workflow's first observation, its series is not there yet.
        if seen {
            (s.get(&count, &labels), s.get(&sum, &labels))
        } else {
            (0.0, 0.0)
        }
    };
    let (count, sum) = figures(&scrape(&base).await);
    // The payment step was asked five hours ago.
    age(&app, id, 18_000).await;
    let (body, signature) = notice(&app, id, "paid", app.clock.now_secs()).await;
    let answer = send_notice(&app, &body, &signature).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(state_of(&app, id).await.0, "complete");
    let (after, after_sum) = figures(&scrape(&base).await);
    assert_eq!(after, count + 1.0);
    assert!(
        (18_000.0..18_060.0).contains(&(after_sum - sum)),
        "{after_sum} - {sum}"
    );
}
