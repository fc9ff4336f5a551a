//! `Idempotency-Key` on the API's POSTs that make something (issue 20), over real TCP: a retry
//! makes nothing new and gets the first answer again, a key names one request of one token,
//! concurrent retries make one thing, a replayed link is kept sealed, keys expire and are
//! cleaned; and a body not declared JSON is the API's `415`. Every answer is held to the
//! OpenAPI description (`api::described`).

use std::time::Duration;

use orchestra::domain::api::idempotency;
use orchestra::store;

use crate::api::{START, call, described, json, started_by, token};
use crate::helpers::{self, Flood, Page, TestApp, read, spawn};

/// A POST with an `Idempotency-Key`, held to the description.
pub(crate) async fn keyed(app: &TestApp, token: &str, path: &str, key: &str, body: &str) -> Page {
    let page = read(request(app, token, path, key, body)).await;
    described::holds("POST", path, &page);
    page
}

fn request(
    app: &TestApp,
    token: &str,
    path: &str,
    key: &str,
    body: &str,
) -> reqwest::RequestBuilder {
    app.client()
        .post(app.url(path))
        .header("authorization", format!("Bearer {token}"))
        .header("content-type", "application/json")
        .header("idempotency-key", key)
        .body(body.to_owned())
}

async fn pool(app: &TestApp) -> sqlx::AnyPool {
    sqlx::any::install_default_drivers();
    sqlx::AnyPool::connect(&store::normalize_url(&app.database.url).unwrap().1)
        .await
        .unwrap()
}

async fn count(app: &TestApp, sql: &str) -> i64 {
    sqlx::query_scalar(sql)
        .fetch_one(&pool(app).await)
        .await
        .unwrap()
}

async fn instances(app: &TestApp) -> i64 {
    count(app, "SELECT COUNT(*) FROM instances").await
}

#[tokio::test]
async fn a_start_retried_with_its_key_makes_one_instance_and_is_answered_the_same() {
    let app = spawn(Flood::Memory).await;
    let t = token(&app, "crm", None, None).await;
    let before = instances(&app).await;
    let first = keyed(&app, &t, "/api/v1/instances", "order-17", START).await;
    assert_eq!(first.status, 201, "{}", first.body);
    assert_eq!(first.header("idempotent-replayed"), None);
    // The same request again, and written otherwise (its fields in another order, spaced):
    // one request, one instance, the first answer each time.
    let reordered = r#"{ "subject": {"title": "Lease"}, "workflow": "contract_review" }"#;
    for body in [START, reordered] {
        let again = keyed(&app, &t, "/api/v1/instances", "order-17", body).await;
        assert_eq!(again.status, 201);
        assert_eq!(again.body, first.body, "the very same answer");
        assert_eq!(again.header("location"), first.header("location"));
        assert_eq!(again.header("content-type"), Some("application/json"));
        assert_eq!(again.header("idempotent-replayed"), Some("true"));
    }
    assert_eq!(instances(&app).await, before + 1, "one instance");
    // Without a key, or with another, a start is a start.
    assert_eq!(
        call(&app, "POST", "/api/v1/instances", &t, Some(START))
            .await
            .status,
        201
    );
    let other = keyed(&app, &t, "/api/v1/instances", "order-18", START).await;
    assert_eq!(other.status, 201);
    assert_ne!(other.header("location"), first.header("location"));
    assert_eq!(instances(&app).await, before + 3);
    // The key's text is stored nowhere.
    let hashes: Vec<String> = sqlx::query_scalar("SELECT key_hash FROM api_idempotency")
        .fetch_all(&pool(&app).await)
        .await
        .unwrap();
    assert_eq!(hashes.len(), 2);
    assert!(hashes.iter().all(|h| !h.contains("order-1")));
    assert!(!app.logs().contains("order-17"));
}

#[tokio::test]
async fn the_same_key_for_another_request_is_refused_and_makes_nothing() {
    let app = spawn(Flood::Memory).await;
    let t = token(&app, "crm", None, None).await;
    let first = keyed(&app, &t, "/api/v1/instances", "k1", START).await;
    assert_eq!(first.status, 201);
    let id = json(&first)["id"].as_i64().unwrap();
    let before = instances(&app).await;
    let other_body = r#"{"workflow":"contract_review","subject":{"title":"Another lease"}}"#;
    let other_path = format!("/api/v1/instances/{id}/links");
    for (path, body) in [
        ("/api/v1/instances", other_body),
        (other_path.as_str(), r#"{"participant":"legal"}"#),
    ] {
        let refused = keyed(&app, &t, path, "k1", body).await;
        assert_eq!(refused.status, 422, "{path}: {}", refused.body);
        assert_eq!(json(&refused)["error"], "idempotency_key_reused");
    }
    assert_eq!(instances(&app).await, before, "nothing made");
    assert_eq!(
        count(&app, "SELECT COUNT(*) FROM links").await,
        0,
        "no link issued"
    );
    // The first request's answer is still there for its retries.
    let again = keyed(&app, &t, "/api/v1/instances", "k1", START).await;
    assert_eq!((again.status, &again.body), (201, &first.body));
}

/// A request refused makes nothing to replay: its key is free for the corrected request.
#[tokio::test]
async fn a_refused_request_leaves_its_key_free() {
    let app = spawn(Flood::Memory).await;
    let t = token(&app, "crm", None, None).await;
    let bad = r#"{"workflow":"contract_review","subject":{"title":"  "}}"#;
    let refused = keyed(&app, &t, "/api/v1/instances", "k", bad).await;
    assert_eq!(refused.status, 422);
    assert_eq!(json(&refused)["field"], "subject.title");
    let made = keyed(&app, &t, "/api/v1/instances", "k", START).await;
    assert_eq!(made.status, 201, "{}", made.body);
    assert_eq!(made.header("idempotent-replayed"), None);
    // And the key is the made request's now.
    let again = keyed(&app, &t, "/api/v1/instances", "k", START).await;
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    assert_eq!(again.body, made.body);
}

#[tokio::test]
async fn a_key_belongs_to_its_token() {
    let app = spawn(Flood::Memory).await;
    let a = token(&app, "crm", None, None).await;
    let b = token(&app, "erp", None, None).await;
    let by_a = keyed(&app, &a, "/api/v1/instances", "shared-key", START).await;
    let by_b = keyed(&app, &b, "/api/v1/instances", "shared-key", START).await;
    assert_eq!((by_a.status, by_b.status), (201, 201));
    assert_eq!(by_b.header("idempotent-replayed"), None);
    assert_ne!(json(&by_a)["id"], json(&by_b)["id"], "two instances");
    // And B's use of the key did not take it from A.
    let again = keyed(&app, &a, "/api/v1/instances", "shared-key", START).await;
    assert_eq!(again.body, by_a.body);
}

/// Twelve starts at once with one key make one instance: each is answered that instance (the
/// first's answer) or told the first is still at work, never a second instance.
#[tokio::test]
async fn concurrent_starts_with_one_key_make_one_instance() {
    let app = spawn(Flood::Memory).await;
    let t = token(&app, "crm", None, None).await;
    let before = instances(&app).await;
    let mut set = tokio::task::JoinSet::new();
    for _ in 0..12 {
        let req = request(&app, &t, "/api/v1/instances", "at-once", START);
        set.spawn(async move { read(req).await });
    }
    let pages = set.join_all().await;
    let made: Vec<&Page> = pages.iter().filter(|p| p.status == 201).collect();
    for page in &pages {
        described::holds("POST", "/api/v1/instances", page);
        assert!(matches!(page.status, 201 | 409), "{}", page.body);
        if page.status == 409 {
            assert_eq!(json(page)["error"], "idempotency_key_in_progress");
        }
    }
    assert!(!made.is_empty());
    assert!(made.iter().all(|p| p.body == made[0].body), "one answer");
    assert_eq!(instances(&app).await, before + 1, "{:?}", statuses(&pages));
    // Once the first is done, every retry is answered it.
    let after = keyed(&app, &t, "/api/v1/instances", "at-once", START).await;
    assert_eq!(after.body, made[0].body);
}

fn statuses(pages: &[Page]) -> Vec<u16> {
    pages.iter().map(|p| p.status).collect()
}

/// An issued link's answer is the link itself: replayed the same, and kept sealed, so a copy of
/// the database (every byte of the file and its WAL on SQLite, every row on PostgreSQL) and the
/// log hold no copy of it.
#[tokio::test]
async fn a_link_issue_retried_gives_the_same_link_and_the_database_holds_it_nowhere() {
    let app = spawn(Flood::Memory).await;
    let t = token(&app, "crm", None, None).await;
    let id = started_by(&app, &t, "contract_review").await;
    let path = format!("/api/v1/instances/{id}/links");
    let body = r#"{"participant":"legal","ttl_seconds":3600}"#;
    let first = keyed(&app, &t, &path, "link-1", body).await;
    assert_eq!(first.status, 201, "{}", first.body);
    let again = keyed(&app, &t, &path, "link-1", body).await;
    assert_eq!(again.status, 201);
    assert_eq!(again.body, first.body, "the same link");
    assert_eq!(again.header("location"), first.header("location"));
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    assert_eq!(count(&app, "SELECT COUNT(*) FROM links").await, 1);
    let url = json(&first)["url"].as_str().unwrap().to_owned();
    let link = helpers::path_of(&url);
    assert_eq!(helpers::get(&app.client(), &app, &link).await.status, 200);
    // The capability: the link's last segment, and the URL whole.
    let capability = link.rsplit('/').next().unwrap().to_owned();
    assert!(capability.len() > 20, "{capability}");
    let copy = database_bytes(&app).await;
    let stored: String = sqlx::query_scalar("SELECT body FROM api_idempotency")
        .fetch_one(&pool(&app).await)
        .await
        .unwrap();
    assert!(!stored.is_empty(), "an answer is stored, sealed");
    for secret in [url.as_str(), capability.as_str()] {
        assert!(
            !holds(&copy, secret.as_bytes()),
            "the database holds {secret}"
        );
        assert!(!app.logs().contains(secret));
    }
}

/// Every byte of the database as a copy of it has them: on SQLite the file and its WAL, on
/// PostgreSQL every row of every table as text.
async fn database_bytes(app: &TestApp) -> Vec<u8> {
    if helpers::on_postgres() {
        let pool = pool(app).await;
        let tables: Vec<String> = sqlx::query_scalar(
            "SELECT table_name::text FROM information_schema.tables WHERE table_schema = 'public'",
        )
        .fetch_all(&pool)
        .await
        .unwrap();
        let mut bytes = Vec::new();
        for table in tables {
            // Names from the catalogue, not input.
            let rows: Vec<String> =
                sqlx::query_scalar(&format!("SELECT CAST(t AS TEXT) FROM \"{table}\" AS t"))
                    .fetch_all(&pool)
                    .await
                    .unwrap();
            for row in rows {
                bytes.extend_from_slice(row.as_bytes());
            }
        }
        return bytes;
    }
    let path = app.database.url.strip_prefix("sqlite:").unwrap().to_owned();
    let mut bytes = std::fs::read(&path).unwrap();
    if let Ok(frames) = std::fs::read(format!("{path}-wal")) {
        bytes.extend_from_slice(&frames);
    }
    bytes
}

fn holds(bytes: &[u8], secret: &[u8]) -> bool {
    bytes.windows(secret.len()).any(|w| w == secret)
}

/// A key holds its answer for a day: past it, the same request makes anew. Expired records are
/// deleted by the cleanup (cron's), and only they.
#[tokio::test]
async fn keys_expire_after_a_day_and_are_cleaned() {
    let app = spawn(Flood::Memory).await;
    let t = token(&app, "crm", None, None).await;
    let first = keyed(&app, &t, "/api/v1/instances", "daily", START).await;
    app.clock
        .advance(Duration::from_secs(idempotency::LIFETIME_SECS as u64 - 1));
    let within = keyed(&app, &t, "/api/v1/instances", "daily", START).await;
    assert_eq!(within.body, first.body, "still within its day");
    app.clock.advance(Duration::from_secs(1));
    let past = keyed(&app, &t, "/api/v1/instances", "daily", START).await;
    assert_eq!(past.status, 201);
    assert_eq!(past.header("idempotent-replayed"), None);
    assert_ne!(
        past.header("location"),
        first.header("location"),
        "made anew"
    );

    let rows = "SELECT COUNT(*) FROM api_idempotency";
    let _young = keyed(&app, &t, "/api/v1/instances", "young", START).await;
    app.clock.advance(Duration::from_secs(60));
    let _younger = keyed(&app, &t, "/api/v1/instances", "younger", START).await;
    assert_eq!(count(&app, rows).await, 3);
    let now = app.clock.now_secs();
    assert_eq!(idempotency::clean(&app.db, now).await.unwrap(), 0);
    // Past the first two's day, not the last one's.
    let cleaned = idempotency::clean(&app.db, now + idempotency::LIFETIME_SECS - 30)
        .await
        .unwrap();
    assert_eq!(cleaned, 2);
    assert_eq!(count(&app, rows).await, 1);
}

/// The cleanup deletes in batches, and deletes them all.
#[tokio::test]
async fn the_cleanup_goes_through_more_than_a_batch() {
    let app = spawn(Flood::Memory).await;
    let t = token(&app, "crm", None, None).await;
    call(&app, "GET", "/api/v1/workflows", &t, None).await;
    let id: i64 = count(&app, "SELECT MIN(id) FROM api_tokens").await;
    for i in 0..1200 {
        assert!(
            store::idempotency::reserve(
                &app.db,
                store::idempotency::Key {
                    token: id,
                    hash: &format!("h{i}")
                },
                "f",
                0,
                10,
            )
            .await
            .unwrap()
        );
    }
    assert_eq!(idempotency::clean(&app.db, 10).await.unwrap(), 1200);
    assert_eq!(count(&app, "SELECT COUNT(*) FROM api_idempotency").await, 0);
}

#[tokio::test]
async fn a_bad_key_is_refused_naming_the_header_and_makes_nothing() {
    let app = spawn(Flood::Memory).await;
    let t = token(&app, "crm", None, None).await;
    let before = instances(&app).await;
    let long = "k".repeat(idempotency::MAX_KEY_LEN + 1);
    for key in [long.as_str(), "with space", "tab\tkey"] {
        let page = keyed(&app, &t, "/api/v1/instances", key, START).await;
        assert_eq!(page.status, 422, "{key:?}: {}", page.body);
        assert_eq!(json(&page)["error"], "invalid");
        assert_eq!(json(&page)["field"], "Idempotency-Key");
    }
    assert_eq!(instances(&app).await, before);
    let longest = "k".repeat(idempotency::MAX_KEY_LEN);
    let page = keyed(&app, &t, "/api/v1/instances", &longest, START).await;
    assert_eq!(page.status, 201, "{}", page.body);
}

/// A POST whose body is not declared JSON is the API's `415`, in JSON, before anything is made;
/// JSON with parameters, or a `+json` type, is JSON; an empty body needs no type.
#[tokio::test]
async fn a_body_not_declared_json_is_a_json_415() {
    let app = spawn(Flood::Memory).await;
    let t = token(&app, "crm", None, None).await;
    let before = instances(&app).await;
    let post = |kind: Option<&str>, body: &str| {
        let mut req = app
            .client()
            .post(app.url("/api/v1/instances"))
            .header("authorization", format!("Bearer {t}"))
            .body(body.to_owned());
        if let Some(kind) = kind {
            req = req.header("content-type", kind);
        }
        req
    };
    for kind in [
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
        Some("application/jsonx"),
        None,
    ] {
        let page = read(post(kind, START)).await;
        described::holds("POST", "/api/v1/instances", &page);
        assert_eq!(page.status, 415, "{kind:?}: {}", page.body);
        assert_eq!(page.header("content-type"), Some("application/json"));
        assert_eq!(json(&page)["error"], "unsupported_media_type");
    }
    assert_eq!(instances(&app).await, before);
    for kind in [
        "application/json; charset=utf-8",
        "Application/JSON",
        "application/merge-patch+json",
    ] {
        let page = read(post(Some(kind), START)).await;
        described::holds("POST", "/api/v1/instances", &page);
        assert_eq!(page.status, 201, "{kind}: {}", page.body);
    }
    let id = started_by(&app, &t, "contract_review").await;
    let cancelled = read(
        app.client()
            .post(app.url(&format!("/api/v1/instances/{id}/cancel")))
            .header("authorization", format!("Bearer {t}")),
    )
    .await;
    assert_eq!(cancelled.status, 200, "{}", cancelled.body);
}

/// Issue 20: an instance names its workflow by the machine name a start names (as well as the
/// label it always showed), in every view of it.
#[tokio::test]
async fn an_instance_names_its_workflow_by_its_machine_name() {
    let app = spawn(Flood::Memory).await;
    let t = token(&app, "crm", None, None).await;
    let started = call(
        &app,
        "POST",
        "/api/v1/instances",
        &t,
        Some(r#"{"workflow":"supplier_onboarding","subject":{"title":"Acme"}}"#),
    )
    .await;
    assert_eq!(started.status, 201);
    let view = json(&started);
    assert_eq!(view["workflow_name"], "supplier_onboarding");
    assert_eq!(view["workflow"], "Supplier onboarding");
    let id = view["id"].as_i64().unwrap();
    let read_back = call(&app, "GET", &format!("/api/v1/instances/{id}"), &t, None).await;
    assert_eq!(json(&read_back)["workflow_name"], "supplier_onboarding");
    let cancelled = call(
        &app,
        "POST",
        &format!("/api/v1/instances/{id}/cancel"),
        &t,
        None,
    )
    .await;
    assert_eq!(json(&cancelled)["workflow_name"], "supplier_onboarding");
}
