//! How many statements a request costs. Versions never change, so the doorway keeps them
//! in memory: a page reads the instance (with its link's record) and what was answered, no
//! more. An API caller past its bucket costs none, signed or not. Each app's log holds its own
//! statements only, so these tests run beside any others.

use crate::helpers::{Flood, TestApp, get, read, spawn};
use std::time::Duration;

/// The statements sqlx ran for an app since a mark in its log (sqlx logs each one under the
/// `sqlx::query` target).
fn statements_since(app: &TestApp, mark: usize) -> Vec<String> {
    app.logs()[mark..]
        .lines()
        .filter(|l| l.contains("sqlx::query"))
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn a_doorway_page_reads_the_database_at_most_twice() {
    let app = spawn(Flood::Memory).await;
    let id = app.start("order_payment", "Reads").await;
    let payer = app.link(id, Some("payer")).await;
    let client = app.client();
    // The first visit reads the version once; the settings snapshot is warm from the start.
    assert_eq!(get(&client, &app, &payer).await.status, 200);

    let mark = app.logs().len();
    let page = get(&client, &app, &payer).await;
    let read = statements_since(&app, mark);
    assert_eq!(page.status, 200);
    assert!(page.has("section.step-form"));
    assert!(
        !read.is_empty(),
        "sqlx's statement log is captured (else this test counts nothing)"
    );
    assert!(
        read.len() <= 2,
        "a step page read {} statements: {read:#?}",
        read.len()
    );
    assert!(read.iter().all(|l| l.contains("SELECT")), "{read:#?}");

    // A link for someone with nothing to answer now reads the instance alone.
    let mark = app.logs().len();
    let refused = get(&client, &app, "/interaction/l.999999..1900000000.00").await;
    assert_eq!(refused.status, 404);
    assert!(statements_since(&app, mark).len() <= 1);
}

/// Requests carrying `Orchestra-Key-Id` are weighed against their token's bucket before the
/// signature's key is looked up: once a bad signature has spent the bucket, the next ones are
/// refused without a statement (before, each read the token and the key, and answered 401).
#[tokio::test]
async fn signed_requests_past_the_bucket_are_refused_without_reading_the_database() {
    let app = spawn(Flood::Memory).await;
    app.set(&[
        ("orchestra.request_limits.enabled", "true"),
        ("api.limits.signed_multiplier", "1"),
    ])
    .await;
    let keys = orchestra::store::keys::load(&app.db).await.unwrap();
    let token = orchestra::domain::api::create_token(&app.db, &keys, "crm", Some(1), Some(2))
        .await
        .unwrap()
        .unwrap();
    let signed = |at: i64| {
        app.client()
            .get(app.url("/api/v1/workflows"))
            .header("authorization", format!("Bearer {token}"))
            .header("orchestra-key-id", "ik_made_up")
            .header("orchestra-timestamp", at.to_string())
            .header("orchestra-signature", "00".repeat(32))
    };
    let now = app.clock.now_secs();
    let plain = read(
        app.client()
            .get(app.url("/api/v1/workflows"))
            .header("authorization", format!("Bearer {token}")),
    )
    .await;
    assert_eq!(plain.status, 200);
    let mark = app.logs().len();
    let bad = read(signed(now)).await;
    assert_eq!(bad.status, 401, "{}", bad.body);
    // The statement's log line may land a moment after the answer on a loaded machine.
    for _ in 0..50 {
        if !statements_since(&app, mark).is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        !statements_since(&app, mark).is_empty(),
        "a signature within the bucket is checked against the database"
    );
    let mark = app.logs().len();
    for i in 1..=20 {
        let page = read(signed(now + i)).await;
        assert_eq!(page.status, 429, "{}", page.body);
    }
    let read = statements_since(&app, mark);
    assert!(read.is_empty(), "{} statements: {read:#?}", read.len());
}

/// The doorway counts before it resolves anything: a refused request reads no statement (no
/// instance, no link record, no version), where the answered request before it read some.
/// The site's own refresh of its settings and keys, every `CACHE_TTL` whatever the requests,
/// is left out of the count.
#[tokio::test]
async fn a_refused_doorway_request_reads_nothing() {
    let app = spawn(Flood::Memory).await;
    app.set(&[
        ("orchestra.request_limits.enabled", "true"),
        ("interaction.limits.per_link", "1"),
    ])
    .await;
    let id = app.start("order_payment", "Refused").await;
    let payer = app.link(id, Some("payer")).await;
    let client = app.client();
    let by_requests = |mark| -> Vec<String> {
        statements_since(&app, mark)
            .into_iter()
            .filter(|l| !l.contains("FROM settings") && !l.contains("FROM site_keys"))
            .collect()
    };
    let mark = app.logs().len();
    assert_eq!(get(&client, &app, &payer).await.status, 200);
    assert!(
        !by_requests(mark).is_empty(),
        "the answered request read nothing (else this test counts nothing)"
    );

    // A made-up link spends its one request too (it reads the newest instance in its place).
    let made_up = "/interaction/l.999999..1900000000.00";
    assert_eq!(get(&client, &app, made_up).await.status, 404);

    let mark = app.logs().len();
    for link in [payer.as_str(), made_up] {
        for _ in 0..5 {
            assert_eq!(get(&client, &app, link).await.status, 429, "{link}");
        }
    }
    let read = by_requests(mark);
    assert!(read.is_empty(), "{} statements: {read:#?}", read.len());
}

/// Anyone may fetch the receipts' key set: a flood of fetches reads the keys once in a few
/// seconds, not once each.
#[tokio::test]
async fn the_key_set_is_read_once_for_many_fetches() {
    let app = spawn(Flood::Memory).await;
    let client = app.client();
    let first = get(&client, &app, "/.well-known/jwks.json").await;
    assert_eq!(first.status, 200);
    let mark = app.logs().len();
    for _ in 0..50 {
        let again = get(&client, &app, "/.well-known/jwks.json").await;
        assert_eq!(again.body, first.body);
    }
    let read = statements_since(&app, mark);
    assert!(
        read.iter().filter(|l| l.contains("receipt_keys")).count() <= 1,
        "{read:#?}"
    );
}
