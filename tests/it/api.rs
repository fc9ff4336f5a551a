//! The integrator API over real TCP: bearer tokens, a token bucket per token with the
//! RateLimit fields on every reply, Retry-After, the signed integrator tier, the hard caps, and
//! the OpenAPI description matching the routes.

use std::sync::Arc;
use std::time::Duration;

use orchestra::domain::api::scope::Scope;
use orchestra::store;

use crate::helpers::{self, Flood, Page, TestApp, TestDb, read, spawn, spawn_on};

pub(crate) async fn token(
    app: &TestApp,
    name: &str,
    rate: Option<u32>,
    burst: Option<u32>,
) -> String {
    let keys = store::keys::load(&app.db).await.unwrap();
    orchestra::domain::api::create_token(&app.db, &keys, name, rate, burst)
        .await
        .unwrap()
        .expect("a new name")
}

pub(crate) async fn call(
    app: &TestApp,
    method: &str,
    path: &str,
    token: &str,
    body: Option<&str>,
) -> Page {
    let client = app.client();
    let mut req = match method {
        "POST" => client.post(app.url(path)),
        "DELETE" => client.delete(app.url(path)),
        _ => client.get(app.url(path)),
    };
    if !token.is_empty() {
        req = req.header("authorization", format!("Bearer {token}"));
    }
    if let Some(b) = body {
        req = req
            .header("content-type", "application/json")
            .body(b.to_owned());
    }
    let page = read(req).await;
    described::holds(method, path, &page);
    page
}

/// Deletes every token behind the server's back, as another process could: only a request
/// that reads the database finds out.
async fn delete_every_token(app: &TestApp) {
    let pool = sqlx::AnyPool::connect(&store::normalize_url(&app.database.url).unwrap().1)
        .await
        .unwrap();
    sqlx::query("DELETE FROM api_tokens")
        .execute(&pool)
        .await
        .unwrap();
}

pub(crate) fn json(page: &Page) -> serde_json::Value {
    serde_json::from_str(&page.body).unwrap_or_else(|_| panic!("JSON: {}", page.body))
}

async fn limits_on(app: &TestApp) {
    app.set(&[("orchestra.request_limits.enabled", "true")])
        .await;
}

#[tokio::test]
async fn a_missing_bad_or_revoked_token_gets_one_plain_401_and_the_text_is_never_stored() {
    let app = spawn(Flood::Memory).await;
    let good = token(&app, "crm", None, None).await;
    assert!(good.starts_with("orch_"));
    let ok = call(&app, "GET", "/api/v1/workflows", &good, None).await;
    assert_eq!(ok.status, 200);
    assert_eq!(json(&ok)["workflows"].as_array().unwrap().len(), 3);

    let missing = call(&app, "GET", "/api/v1/workflows", "", None).await;
    let bad = call(&app, "GET", "/api/v1/workflows", "orch_0000", None).await;
    assert!(
        store::api::revoke_token(&app.db, "crm")
            .await
            .unwrap()
            .is_some()
    );
    // Revoked as another process would (the CLI): refused once this process's read of it is
    // older than `api::FRESH`.
    app.clock.advance(orchestra::domain::api::FRESH);
    let revoked = call(&app, "GET", "/api/v1/workflows", &good, None).await;
    for page in [&missing, &bad, &revoked] {
        assert_eq!(page.status, 401);
        assert_eq!(page.header("content-type"), Some("application/json"));
        assert_eq!(page.body, missing.body, "one answer, that says no more");
        assert_eq!(json(page)["error"], "unauthorized");
    }
    // The text is in no table and no log line.
    let pool = sqlx::AnyPool::connect(&store::normalize_url(&app.database.url).unwrap().1)
        .await
        .unwrap();
    let hashes: Vec<String> = sqlx::query_scalar("SELECT hash FROM api_tokens")
        .fetch_all(&pool)
        .await
        .unwrap();
    assert!(hashes.iter().all(|h| !h.contains(&good[5..])));
    assert!(!app.logs().contains(&good[5..]));
}

#[tokio::test]
async fn the_bucket_gives_its_burst_then_refills_continuously_with_the_fields_on_every_reply() {
    let app = spawn(Flood::Memory).await;
    limits_on(&app).await;
    let t = token(&app, "crm", Some(60), Some(3)).await;
    for left in [2, 1, 0] {
        let page = call(&app, "GET", "/api/v1/workflows", &t, None).await;
        assert_eq!(page.status, 200);
        assert_eq!(page.header("ratelimit-policy"), Some("\"token\";q=3;w=3"));
        assert_eq!(
            page.header("ratelimit"),
            Some(format!("\"token\";r={left};t={}", 3 - left).as_str())
        );
    }
    let refused = call(&app, "GET", "/api/v1/workflows", &t, None).await;
    assert_eq!(refused.status, 429);
    assert_eq!(refused.header("retry-after"), Some("1"));
    assert_eq!(
        json(&refused),
        serde_json::json!({"error": "rate_limited", "retry_after_seconds": 1})
    );
    assert_eq!(
        refused.header("ratelimit"),
        Some("\"token\";r=0;t=1"),
        "t names Retry-After's moment, not the full bucket's"
    );
    app.clock.advance(Duration::from_millis(999));
    assert_eq!(
        call(&app, "GET", "/api/v1/workflows", &t, None)
            .await
            .status,
        429
    );
    app.clock.advance(Duration::from_millis(1));
    assert_eq!(
        call(&app, "GET", "/api/v1/workflows", &t, None)
            .await
            .status,
        200
    );
    // Another token has its own bucket.
    let other = token(&app, "erp", Some(60), Some(3)).await;
    assert_eq!(
        call(&app, "GET", "/api/v1/workflows", &other, None)
            .await
            .status,
        200
    );
}

/// A token over its bucket is refused from memory, before the database and the layers every
/// page goes through (`http::api::refusal`), with the same answer `gate` gives: the database is
/// not read (a token deleted behind the server's back is still refused by its bucket, not
/// found missing), and the answer carries the security headers. Once the bucket has room the
/// database is read again, and says the token is gone.
#[tokio::test]
async fn a_token_over_its_bucket_is_refused_without_the_database_with_the_same_answer() {
    let app = spawn(Flood::Memory).await;
    limits_on(&app).await;
    let t = token(&app, "fast", Some(60), Some(1)).await;
    assert_eq!(
        call(&app, "GET", "/api/v1/workflows", &t, None)
            .await
            .status,
        200
    );
    delete_every_token(&app).await;
    let refused = call(&app, "GET", "/api/v1/workflows", &t, None).await;
    assert_eq!(
        refused.status, 429,
        "refused by its bucket: {}",
        refused.body
    );
    assert_eq!(refused.header("retry-after"), Some("1"));
    assert_eq!(
        json(&refused),
        serde_json::json!({"error": "rate_limited", "retry_after_seconds": 1})
    );
    assert_eq!(refused.header("content-type"), Some("application/json"));
    assert_eq!(
        refused.header("ratelimit-policy"),
        Some("\"token\";q=1;w=1")
    );
    assert_eq!(refused.header("ratelimit"), Some("\"token\";r=0;t=1"));
    assert_eq!(refused.header("x-content-type-options"), Some("nosniff"));
    assert!(refused.header("content-security-policy").is_some());
    assert_eq!(refused.header("x-frame-options"), Some("DENY"));
    // A signed request is weighed at the signed tier (4 × the burst): that bucket is empty too,
    // so it is refused from memory before its signature or its key is looked at.
    let signed = app
        .client()
        .get(app.url("/api/v1/workflows"))
        .header("authorization", format!("Bearer {t}"))
        .header("orchestra-key-id", "nobody")
        .header("orchestra-timestamp", "0")
        .header("orchestra-signature", "00");
    assert_eq!(read(signed).await.status, 429);
    // With room in the bucket, the database is asked, and the token is gone from then on.
    app.clock.advance(Duration::from_secs(1));
    let gone = call(&app, "GET", "/api/v1/workflows", &t, None).await;
    assert_eq!(gone.status, 401);
    assert_eq!(
        call(&app, "GET", "/api/v1/workflows", &t, None)
            .await
            .status,
        401,
        "forgotten once the database said so, even with an empty bucket"
    );
}

/// On a 429, the `RateLimit` field's `t` names the moment `Retry-After` names (the IETF draft:
/// both SHOULD reference the same point in time), from `gate` and from the fast refusal alike,
/// while an answered request's `t` stays the seconds until the bucket is full.
#[tokio::test]
async fn a_refusal_s_ratelimit_reset_is_its_retry_after() {
    let app = spawn(Flood::Memory).await;
    limits_on(&app).await;
    // 7 a minute, a burst of 3: full again 26 s after it empties, one request back after 9.
    let t = token(&app, "slow", Some(7), Some(3)).await;
    for _ in 0..3 {
        let page = call(&app, "GET", "/api/v1/workflows", &t, None).await;
        assert_eq!(page.status, 200);
    }
    let reset = |page: &Page| {
        let field = page.header("ratelimit").expect("the field").to_owned();
        let t = field.rsplit(";t=").next().unwrap().to_owned();
        t.parse::<u64>().unwrap()
    };
    // A second apart: 9, 8, 7, the two numbers moving together.
    for _ in 0..3 {
        let refused = call(&app, "GET", "/api/v1/workflows", &t, None).await;
        assert_eq!(refused.status, 429);
        let retry_after: u64 = refused.header("retry-after").unwrap().parse().unwrap();
        assert_eq!(
            reset(&refused),
            retry_after,
            "{:?}",
            refused.header("ratelimit")
        );
        assert_eq!(json(&refused)["retry_after_seconds"], retry_after);
        app.clock.advance(Duration::from_millis(1_000));
    }
    // Answered once a request fits: `t` is again the seconds until the bucket is full.
    app.clock.advance(Duration::from_millis(6_000));
    let page = call(&app, "GET", "/api/v1/workflows", &t, None).await;
    assert_eq!(page.status, 200);
    assert_eq!(reset(&page), 26);
}

#[tokio::test]
async fn retry_after_is_whole_seconds_rounded_up_never_below_one_and_equal_to_the_json() {
    let app = spawn(Flood::Memory).await;
    limits_on(&app).await;
    let t = token(&app, "slow", Some(7), Some(1)).await;
    assert_eq!(
        call(&app, "GET", "/api/v1/workflows", &t, None)
            .await
            .status,
        200
    );
    let refused = call(&app, "GET", "/api/v1/workflows", &t, None).await;
    assert_eq!(
        refused.header("retry-after"),
        Some("9"),
        "60/7 = 8.6 s, rounded up"
    );
    assert_eq!(json(&refused)["retry_after_seconds"], 9);
    app.clock.advance(Duration::from_millis(8_560));
    let refused = call(&app, "GET", "/api/v1/workflows", &t, None).await;
    assert_eq!(refused.status, 429);
    assert_eq!(
        refused.header("retry-after"),
        Some("1"),
        "a few ms left is 1, never 0"
    );
    assert_eq!(json(&refused)["retry_after_seconds"], 1);
}

#[tokio::test]
async fn with_the_site_switch_off_nothing_is_limited() {
    let app = spawn(Flood::Memory).await;
    let t = token(&app, "crm", Some(60), Some(1)).await;
    for _ in 0..5 {
        let page = call(&app, "GET", "/api/v1/workflows", &t, None).await;
        assert_eq!(page.status, 200);
        assert_eq!(page.header("ratelimit"), None);
    }
}

#[tokio::test]
async fn an_integrator_starts_an_instance_reads_it_issues_and_revokes_a_link() {
    let app = spawn(Flood::Memory).await;
    limits_on(&app).await;
    let t = token(&app, "crm", None, None).await;
    let started = call(
        &app,
        "POST",
        "/api/v1/instances",
        &t,
        Some(r#"{"workflow":"contract_review","subject":{"title":"Lease","body":"The lease."}}"#),
    )
    .await;
    assert_eq!(started.status, 201, "{}", started.body);
    assert!(started.header("ratelimit").is_some());
    let view = json(&started);
    let id = view["id"].as_i64().unwrap();
    assert_eq!(view["state"], "active");
    assert_eq!(
        view["participants_left"],
        serde_json::json!(["legal", "finance"])
    );

    let issued = call(
        &app,
        "POST",
        &format!("/api/v1/instances/{id}/links"),
        &t,
        Some(r#"{"participant":"legal","ttl_seconds":3600}"#),
    )
    .await;
    assert_eq!(issued.status, 201, "{}", issued.body);
    let link = json(&issued);
    let url = link["url"].as_str().unwrap();
    let path = helpers::path_of(url);
    assert_eq!(helpers::get(&app.client(), &app, &path).await.status, 200);

    let read_back = call(&app, "GET", &format!("/api/v1/instances/{id}"), &t, None).await;
    let events: Vec<String> = json(&read_back)["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["event"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(events, ["started", "link_issued"]);

    let gone = call(
        &app,
        "DELETE",
        &format!("/api/v1/instances/{id}/links/{}", link["id"]),
        &t,
        None,
    )
    .await;
    assert_eq!(gone.status, 204);
    assert_eq!(helpers::get(&app.client(), &app, &path).await.status, 404);
    let again = call(
        &app,
        "DELETE",
        &format!("/api/v1/instances/{id}/links/{}", link["id"]),
        &t,
        None,
    )
    .await;
    assert_eq!(
        (again.status, json(&again)["error"].clone()),
        (404, "not_found".into())
    );
    let history = store::instances::history(&app.db, id).await.unwrap();
    assert_eq!(history.last().unwrap().actor, "api:crm");
}

#[tokio::test]
async fn bad_input_is_a_422_naming_the_field_never_a_500() {
    let app = spawn(Flood::Memory).await;
    let t = token(&app, "crm", None, None).await;
    let id = started_by(&app, &t, "contract_review").await;
    for (path, body, field) in [
        ("/api/v1/instances", "{not json", "body"),
        (
            "/api/v1/instances",
            r#"{"subject":{"title":"x"}}"#,
            "workflow",
        ),
        (
            "/api/v1/instances",
            r#"{"workflow":"nope","subject":{"title":"x"}}"#,
            "workflow",
        ),
        (
            "/api/v1/instances",
            r#"{"workflow":"contract_review","subject":{"title":"  "}}"#,
            "subject.title",
        ),
        (
            "/api/v1/instances",
            r#"{"workflow":"contract_review"}"#,
            "subject.title",
        ),
    ] {
        let page = call(&app, "POST", path, &t, Some(body)).await;
        assert_eq!(page.status, 422, "{body}: {}", page.body);
        assert_eq!(json(&page)["field"], field, "{body}");
        assert_eq!(json(&page)["error"], "invalid");
    }
    let links = format!("/api/v1/instances/{id}/links");
    for (body, field) in [
        (r#"{"participant":"marketing"}"#, "participant"),
        (r#"{}"#, "participant"),
        (r#"{"participant":"legal","ttl_seconds":5}"#, "ttl_seconds"),
        // A number no lifetime can be is the field's error (issue 20: a type error names its
        // field); it was `body` while serde's errors were not read.
        (r#"{"participant":"legal","ttl_seconds":-5}"#, "ttl_seconds"),
    ] {
        let page = call(&app, "POST", &links, &t, Some(body)).await;
        assert_eq!(page.status, 422, "{body}: {}", page.body);
        assert_eq!(json(&page)["field"], field, "{body}");
    }
    let page = call(&app, "GET", "/api/v1/instances/abc", &t, None).await;
    assert!(page.status == 404 || page.status == 400, "{}", page.status);
    let page = call(&app, "GET", "/api/v1/instances/999999", &t, None).await;
    assert_eq!(
        (page.status, json(&page)["error"].clone()),
        (404, "not_found".into())
    );
}

#[tokio::test]
async fn the_hard_caps_hold_with_the_limiter_off() {
    let app = spawn(Flood::Memory).await;
    app.set(&[
        ("api.caps.running_instances_per_token", "2"),
        ("api.caps.links_per_instance_per_day", "2"),
    ])
    .await;
    let t = token(&app, "crm", None, None).await;
    let start = r#"{"workflow":"contract_review","subject":{"title":"Lease"}}"#;
    let mut ids = Vec::new();
    for _ in 0..2 {
        let page = call(&app, "POST", "/api/v1/instances", &t, Some(start)).await;
        assert_eq!(page.status, 201);
        ids.push(json(&page)["id"].as_i64().unwrap());
    }
    let capped = call(&app, "POST", "/api/v1/instances", &t, Some(start)).await;
    assert_eq!(capped.status, 403);
    assert_eq!(json(&capped)["error"], "running_instance_cap");
    let other = token(&app, "erp", None, None).await;
    assert_eq!(
        call(&app, "POST", "/api/v1/instances", &other, Some(start))
            .await
            .status,
        201,
        "the cap is per token"
    );

    let links = format!("/api/v1/instances/{}/links", ids[0]);
    for who in ["legal", "finance"] {
        let body = format!(r#"{{"participant":"{who}"}}"#);
        assert_eq!(
            call(&app, "POST", &links, &t, Some(&body)).await.status,
            201
        );
    }
    let capped = call(&app, "POST", &links, &t, Some(r#"{"participant":"legal"}"#)).await;
    assert_eq!(capped.status, 403);
    assert_eq!(json(&capped)["error"], "link_cap");
}

/// Concurrent requests cannot both take the last place under a hard cap: twelve starts at once
/// under a cap of three start three, twelve link issues at once under a cap of two issue two.
#[tokio::test]
async fn concurrent_requests_cannot_both_take_the_last_place_under_a_cap() {
    let app = spawn(Flood::Memory).await;
    app.set(&[
        ("api.caps.running_instances_per_token", "3"),
        ("api.caps.links_per_instance_per_day", "2"),
    ])
    .await;
    let t = token(&app, "crm", None, None).await;
    let start = r#"{"workflow":"contract_review","subject":{"title":"Lease"}}"#;
    let starts = at_once(&app, "/api/v1/instances", &t, |_| start.to_owned()).await;
    assert_eq!(
        starts.iter().filter(|s| **s == 201).count(),
        3,
        "{starts:?}"
    );
    assert_eq!(starts.iter().filter(|s| **s == 403).count(), 9);

    let other = token(&app, "erp", None, None).await;
    let page = call(&app, "POST", "/api/v1/instances", &other, Some(start)).await;
    let links = format!("/api/v1/instances/{}/links", json(&page)["id"]);
    let issues = at_once(&app, &links, &other, |i| {
        // Each its own link (the same link issued twice in a second is one record).
        let who = if i % 2 == 0 { "legal" } else { "finance" };
        format!(r#"{{"participant":"{who}","ttl_seconds":{}}}"#, 3600 + i)
    })
    .await;
    assert_eq!(
        issues.iter().filter(|s| **s == 201).count(),
        2,
        "{issues:?}"
    );
}

/// The hard caps hold across processes: two servers on one database, twelve starts at once
/// spread over both under a cap of three start three, and twelve issues under a cap of two
/// issue two. (A lock in one process could not see the other's requests.)
#[tokio::test]
async fn the_hard_caps_hold_across_two_servers_on_one_database() {
    let one = spawn(Flood::Memory).await;
    one.set(&[
        ("api.caps.running_instances_per_token", "3"),
        ("api.caps.links_per_instance_per_day", "2"),
    ])
    .await;
    let t = token(&one, "crm", None, None).await;
    let other = token(&one, "erp", None, None).await;
    let two = spawn_on(TestDb::at(one.database.url.clone()), |_, clock| {
        Arc::new(orchestra::limits::flood::MemoryFlood::new(1024, clock))
    })
    .await;
    let start = r#"{"workflow":"contract_review","subject":{"title":"Lease"}}"#;
    let starts = on_both(&one, &two, "/api/v1/instances", &t, |_| start.to_owned()).await;
    assert_eq!(
        starts.iter().filter(|s| **s == 201).count(),
        3,
        "{starts:?}"
    );
    assert_eq!(starts.iter().filter(|s| **s == 403).count(), 9);

    let page = call(&one, "POST", "/api/v1/instances", &other, Some(start)).await;
    let links = format!("/api/v1/instances/{}/links", json(&page)["id"]);
    let issues = on_both(&one, &two, &links, &other, |i| {
        let who = if i % 2 == 0 { "legal" } else { "finance" };
        format!(r#"{{"participant":"{who}","ttl_seconds":{}}}"#, 3600 + i)
    })
    .await;
    assert_eq!(
        issues.iter().filter(|s| **s == 201).count(),
        2,
        "{issues:?}"
    );
    assert_eq!(issues.iter().filter(|s| **s == 403).count(), 10);
}

/// Twelve POSTs of `body(i)` to `path` at once, every other one to each server; statuses.
async fn on_both(
    one: &TestApp,
    two: &TestApp,
    path: &str,
    token: &str,
    body: impl Fn(usize) -> String,
) -> Vec<u16> {
    let mut set = tokio::task::JoinSet::new();
    for i in 0..12 {
        let app = if i % 2 == 0 { one } else { two };
        let req = app
            .client()
            .post(app.url(path))
            .header("authorization", format!("Bearer {token}"))
            .header("content-type", "application/json")
            .body(body(i));
        set.spawn(async move { read(req).await.status });
    }
    set.join_all().await
}

/// Twelve POSTs of `body(i)` to `path` at once; their statuses.
async fn at_once(
    app: &TestApp,
    path: &str,
    token: &str,
    body: impl Fn(usize) -> String,
) -> Vec<u16> {
    let mut set = tokio::task::JoinSet::new();
    for i in 0..12 {
        let req = app
            .client()
            .post(app.url(path))
            .header("authorization", format!("Bearer {token}"))
            .header("content-type", "application/json")
            .body(body(i));
        set.spawn(async move { read(req).await.status });
    }
    set.join_all().await
}

/// Signs a request as a trusted integrator does.
fn signed(
    app: &TestApp,
    token: &str,
    key: &(String, String),
    path: &str,
    at: i64,
) -> reqwest::RequestBuilder {
    signed_for(app, token, key, path, path, at)
}

/// A request to `path` carrying a signature made for `signed_path`.
fn signed_for(
    app: &TestApp,
    token: &str,
    key: &(String, String),
    path: &str,
    signed_path: &str,
    at: i64,
) -> reqwest::RequestBuilder {
    let input = orchestra::domain::api::signing_input("GET", signed_path, b"", &at.to_string());
    app.client()
        .get(app.url(path))
        .header("authorization", format!("Bearer {token}"))
        .header("orchestra-key-id", &key.0)
        .header("orchestra-timestamp", at.to_string())
        .header(
            "orchestra-signature",
            orchestra::domain::api::sign(&key.1, &input),
        )
}

#[tokio::test]
async fn a_signed_request_gets_the_integrators_tier_and_a_bad_signature_is_refused() {
    let app = spawn(Flood::Memory).await;
    limits_on(&app).await;
    app.set(&[("api.limits.signed_multiplier", "3")]).await;
    let t = token(&app, "crm", Some(60), Some(2)).await;
    let key = orchestra::domain::api::create_integrator_key(&app.db, "acme")
        .await
        .unwrap();
    let now = app.clock.now_secs();
    let path = "/api/v1/workflows";

    let good = read(signed(&app, &t, &key, path, now)).await;
    assert_eq!(good.status, 200, "{}", good.body);
    assert_eq!(
        good.header("ratelimit-policy"),
        Some("\"token\";q=6;w=2"),
        "3 × the burst"
    );

    let replayed = read(signed(&app, &t, &key, path, now)).await;
    let stale = read(signed(&app, &t, &key, path, now - 301)).await;
    let tampered = read(signed_for(
        &app,
        &t,
        &key,
        path,
        "/api/v1/instances/1",
        now + 1,
    ))
    .await;
    let unknown = read(signed(
        &app,
        &t,
        &("ik_nope".into(), key.1.clone()),
        path,
        now + 3,
    ))
    .await;
    for page in [&replayed, &stale, &tampered, &unknown] {
        assert_eq!(page.status, 401);
        assert_eq!(json(page)["error"], "bad_signature");
    }
    // Identity is a tier, not a gate: unsigned with a good token works at the base rate.
    let plain = call(&app, "GET", path, &t, None).await;
    assert_eq!(plain.status, 200);
    assert_eq!(plain.header("ratelimit-policy"), Some("\"token\";q=2;w=2"));
    // The four bad signatures spent their requests too (docs/api.md): refill before going on.
    app.clock.advance(Duration::from_secs(10));
    // Rotating the key: the old one stops signing.
    let rotated = orchestra::domain::api::create_integrator_key(&app.db, "acme")
        .await
        .unwrap();
    assert_eq!(
        read(signed(&app, &t, &key, path, now + 4)).await.status,
        401
    );
    assert_eq!(
        read(signed(&app, &t, &rotated, path, now + 5)).await.status,
        200
    );
}

#[tokio::test]
async fn the_api_and_the_doorway_count_apart() {
    let app = spawn(Flood::Memory).await;
    app.set(&[
        ("orchestra.request_limits.enabled", "true"),
        ("interaction.limits.total", "1"),
    ])
    .await;
    let t = token(&app, "crm", Some(60), Some(50)).await;
    for _ in 0..5 {
        assert_eq!(
            call(&app, "GET", "/api/v1/workflows", &t, None)
                .await
                .status,
            200
        );
    }
    let id = app.start("contract_review", "Lease").await;
    let legal = app.link(id, Some("legal")).await;
    assert_eq!(
        helpers::get(&app.client(), &app, &legal).await.status,
        200,
        "the doorway's total is untouched by the API"
    );
    assert_eq!(helpers::get(&app.client(), &app, &legal).await.status, 429);
    let page = call(&app, "GET", "/api/v1/workflows", &t, None).await;
    assert_eq!(page.status, 200);
    assert_eq!(
        page.header("ratelimit"),
        Some("\"token\";r=44;t=6"),
        "the doorway spent none of it"
    );
}

#[tokio::test]
async fn the_openapi_description_matches_the_routes() {
    let app = spawn(Flood::Memory).await;
    let t = token(&app, "crm", None, None).await;
    let page = call(&app, "GET", "/api/v1/openapi.json", "", None).await;
    assert_eq!(page.status, 200);
    let doc = json(&page);
    assert_eq!(doc["openapi"], "3.1.0");
    let mut described = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            described.push((method.to_uppercase(), path.clone()));
        }
    }
    described.sort();
    let mut routed: Vec<(String, String)> = orchestra::http::api::ROUTES
        .iter()
        .map(|(m, p)| (m.to_string(), p.to_string()))
        .collect();
    routed.sort();
    assert_eq!(described, routed);
    // Every described route answers (not the router's 404 or 405).
    for (method, path) in &routed {
        let concrete = path.replace("{id}", "1").replace("{link}", "1");
        let page = call(&app, method, &concrete, &t, Some("{}")).await;
        assert!(
            page.status != 405 && page.header("content-type") == Some("application/json")
                || page.status == 204,
            "{method} {path}: {} {}",
            page.status,
            page.body
        );
    }
}

/// Every answer these tests get is held to the description (`described::holds`, in `call`);
/// here, answers no other test asks for, and the check itself refusing what it must.
#[tokio::test]
async fn every_answer_is_as_the_description_says_and_the_check_can_fail() {
    let app = spawn(Flood::Memory).await;
    let t = token(&app, "crm", None, None).await;
    let big = format!(r#"{{"workflow":"{}"}}"#, "x".repeat(70 * 1024));
    let page = call(&app, "POST", "/api/v1/instances", &t, Some(&big)).await;
    assert_eq!(page.status, 413);
    let page = call(&app, "GET", "/api/v1/instances/not-a-number", &t, None).await;
    assert_eq!(
        (page.status, json(&page)["error"].as_str()),
        (404, Some("not_found"))
    );

    let doc: serde_json::Value = serde_json::from_str(orchestra::http::api::description()).unwrap();
    let as_json = |status: u16, body: &str| {
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert("content-type", "application/json".parse().unwrap());
        Page {
            status,
            headers,
            body: body.to_owned(),
        }
    };
    let link = r#"{"id":1,"url":"https://example.org/i/x","expires":9}"#;
    let path = "/api/v1/instances/7/links";
    assert_eq!(
        described::check(&doc, "POST", path, &as_json(201, link)),
        Ok(())
    );
    for (status, body, why) in [
        (
            201,
            r#"{"id":1,"url":"u","expires":9,"secret":"x"}"#,
            "secret is sent but not described",
        ),
        (
            201,
            r#"{"id":1,"expires":9}"#,
            "the required url is missing",
        ),
        (201, r#"{"id":"1","url":"u","expires":9}"#, "is not of type"),
        (418, link, "lists no 418"),
        (
            403,
            r#"{"error":"forbidden_scope"}"#,
            "the required message is missing",
        ),
    ] {
        let said = described::check(&doc, "POST", path, &as_json(status, body)).unwrap_err();
        assert!(said.contains(why), "{said}");
    }
    let instance = r#"{"id":1,"workflow":null,"version":1,"state":"paused","subject":{"title":"","body":""},"current_step":null,"steps":1,"participants_left":[],"history":[],"history_total":0,"history_cursor":null,"files":[]}"#;
    let said = described::check(&doc, "GET", "/api/v1/instances/1", &as_json(200, instance));
    assert!(said.unwrap_err().contains("not one of"), "an unknown state");
    let mut html = as_json(404, "<p>gone</p>");
    html.headers
        .insert("content-type", "text/html".parse().unwrap());
    let said = described::check(&doc, "GET", "/api/v1/instances/1", &html).unwrap_err();
    assert!(said.contains("content type"), "{said}");
}

/// Under `/api/v1/` every answer is the API's JSON, with the site's security headers: a path no
/// route has (with a token or without), a method a route does not take (with its `Allow`), in
/// the caller's language.
#[tokio::test]
async fn a_path_or_a_method_the_api_does_not_have_is_answered_in_json() {
    let app = spawn(Flood::Memory).await;
    let t = token(&app, "crm", None, None).await;
    let client = app.client();
    for (method, path, with_token) in [
        ("GET", "/api/v1/nothing/here", false),
        ("GET", "/api/v1/nothing/here", true),
        ("POST", "/api/v1/instances/1/nothing", true),
        ("GET", "/api/v1/workflows/", true),
    ] {
        let mut request = client.request(method.parse().unwrap(), app.url(path));
        if with_token {
            request = request.header("authorization", format!("Bearer {t}"));
        }
        let page = read(request).await;
        assert_eq!(page.status, 404, "{method} {path}: {}", page.body);
        assert_eq!(page.header("content-type"), Some("application/json"));
        assert_eq!(json(&page)["error"], "not_found");
        assert_eq!(page.header("x-content-type-options"), Some("nosniff"));
    }
    let page = read(
        client
            .put(app.url("/api/v1/workflows"))
            .header("authorization", format!("Bearer {t}")),
    )
    .await;
    assert_eq!(page.status, 405, "{}", page.body);
    assert_eq!(page.header("content-type"), Some("application/json"));
    assert_eq!(json(&page)["error"], "method_not_allowed");
    assert!(
        page.header("allow").is_some_and(|a| a.contains("GET")),
        "{:?}",
        page.headers
    );
    let french = read(
        client
            .delete(app.url("/api/v1/instances"))
            .header("authorization", format!("Bearer {t}"))
            .header("accept-language", "fr"),
    )
    .await;
    assert_eq!(french.status, 405);
    assert!(
        json(&french)["message"]
            .as_str()
            .unwrap()
            .contains("méthode"),
        "{}",
        french.body
    );
}

/// A failure of ours is the API's JSON `internal` error, its message in the caller's language
/// like every other (it is made where the language is not known, and said again in it), and
/// says nothing of the failure itself.
#[tokio::test]
async fn a_failure_of_ours_is_answered_in_json_in_the_callers_language() {
    let app = spawn(Flood::Memory).await;
    let t = token(&app, "crm", None, None).await;
    let url = orchestra::store::normalize_url(&app.database.url)
        .unwrap()
        .1;
    let raw = sqlx::AnyPool::connect(&url).await.unwrap();
    sqlx::query("ALTER TABLE workflows RENAME TO workflows_gone")
        .execute(&raw)
        .await
        .unwrap();
    let client = app.client();
    for (lang, expected) in [
        ("en", "Something went wrong on our side."),
        ("fr", "Une erreur s'est produite de notre côté."),
    ] {
        let page = read(
            client
                .get(app.url("/api/v1/workflows"))
                .header("authorization", format!("Bearer {t}"))
                .header("accept-language", lang),
        )
        .await;
        assert_eq!(page.status, 500, "{}", page.body);
        assert_eq!(page.header("content-type"), Some("application/json"));
        assert_eq!(json(&page)["error"], "internal");
        assert_eq!(json(&page)["message"], expected, "{lang}");
        assert!(!page.body.contains("workflows"), "{}", page.body);
    }
}

/// A body of the wrong shape names what is wrong: the field whose type is wrong (a nested one by
/// its dotted path), or `body` when it is no JSON or not an object.
#[tokio::test]
async fn a_wrong_type_names_its_field() {
    let app = spawn(Flood::Memory).await;
    let t = token(&app, "crm", None, None).await;
    for (body, field) in [
        (r#"{"workflow":2}"#, "workflow"),
        (
            r#"{"workflow":"contract_review","subject":{"title":5}}"#,
            "subject.title",
        ),
        (
            r#"{"workflow":"contract_review","subject":"Lease"}"#,
            "subject",
        ),
        (r#"{"workflow":"#, "body"),
        ("[1]", "body"),
    ] {
        let page = call(&app, "POST", "/api/v1/instances", &t, Some(body)).await;
        assert_eq!(page.status, 422, "{body}: {}", page.body);
        assert_eq!(json(&page)["field"], field, "{body}");
    }
    let page = call(
        &app,
        "POST",
        "/api/v1/instances/1/links",
        &t,
        Some(r#"{"ttl_seconds":"an hour"}"#),
    )
    .await;
    assert_eq!(
        (page.status, json(&page)["field"].as_str()),
        (422, Some("ttl_seconds"))
    );
}

/// A `201` says where what it made lives: the instance's path, which reads it; the link's, which
/// revokes it.
#[tokio::test]
async fn what_a_call_makes_is_answered_with_its_location() {
    let app = spawn(Flood::Memory).await;
    let t = token(&app, "crm", None, None).await;
    let made = call(&app, "POST", "/api/v1/instances", &t, Some(START)).await;
    assert_eq!(made.status, 201);
    let id = json(&made)["id"].as_i64().unwrap();
    let location = made.header("location").unwrap().to_owned();
    assert_eq!(location, format!("/api/v1/instances/{id}"));
    assert_eq!(call(&app, "GET", &location, &t, None).await.status, 200);
    let issued = call(
        &app,
        "POST",
        &format!("{location}/links"),
        &t,
        Some(r#"{"participant":"legal"}"#),
    )
    .await;
    assert_eq!(issued.status, 201, "{}", issued.body);
    let link = issued.header("location").unwrap().to_owned();
    assert_eq!(link, format!("{location}/links/{}", json(&issued)["id"]));
    assert_eq!(call(&app, "DELETE", &link, &t, None).await.status, 204);
}

/// Issue 20's "a revoked link comes back": a participant's link revoked and a new one issued
/// with the same lifetime in the same second (the test's clock does not move) were one text, so
/// the new one was the revoked one and refused. Every issued link is distinct now.
#[tokio::test]
async fn a_link_issued_after_a_revoke_in_the_same_second_is_new_and_the_revoked_one_stays_refused()
{
    let app = spawn(Flood::Memory).await;
    let t = token(&app, "crm", None, None).await;
    let id = started_by(&app, &t, "contract_review").await;
    let (first_id, first) = issued_by(&app, &t, id).await;
    let revoke = format!("/api/v1/instances/{id}/links/{first_id}");
    assert_eq!(call(&app, "DELETE", &revoke, &t, None).await.status, 204);
    let (_, second) = issued_by(&app, &t, id).await;
    assert_ne!(second, first, "a new link, not the revoked one again");
    let client = app.client();
    assert_eq!(helpers::get(&client, &app, &second).await.status, 200);
    assert_eq!(
        helpers::get(&client, &app, &first).await.status,
        404,
        "still revoked"
    );
    // And two live links issued in one second for one participant are two links.
    let (_, third) = issued_by(&app, &t, id).await;
    assert_ne!(third, second);
    assert_eq!(helpers::get(&client, &app, &third).await.status, 200);
    assert_eq!(helpers::get(&client, &app, &second).await.status, 200);
}

/// Issue 20: an abandoned start held its place under the running-instance cap for ever. A token
/// that may start cancels what it reaches: the place is freed, the history names the token and
/// the reason, a second cancel is a 409 that changes nothing; a token without the start ability
/// is refused, and one that does not reach the instance gets the 404 a missing one gets.
#[tokio::test]
async fn cancelling_through_the_api_frees_the_running_cap() {
    let app = spawn(Flood::Memory).await;
    app.set(&[("api.caps.running_instances_per_token", "1")])
        .await;
    let t = token(&app, "crm", None, None).await;
    let id = started_by(&app, &t, "contract_review").await;
    let capped = call(&app, "POST", "/api/v1/instances", &t, Some(START)).await;
    assert_eq!(
        (capped.status, json(&capped)["error"].as_str()),
        (403, Some("running_instance_cap"))
    );

    let reader = scoped(&app, "reader", Some(&["read"]), Some("all"), None).await;
    let other = token(&app, "other", None, None).await;
    let cancel = format!("/api/v1/instances/{id}/cancel");
    let refused = call(&app, "POST", &cancel, &reader, None).await;
    assert_eq!(
        (refused.status, json(&refused)["error"].as_str()),
        (403, Some("forbidden_scope"))
    );
    let unseen = call(&app, "POST", &cancel, &other, None).await;
    assert_eq!(
        unseen.status, 404,
        "another token's instance, as if missing"
    );
    let long = format!(
        r#"{{"reason":"{}"}}"#,
        "x".repeat(orchestra::domain::instance::MAX_REASON + 1)
    );
    let too_long = call(&app, "POST", &cancel, &t, Some(&long)).await;
    assert_eq!(
        (too_long.status, json(&too_long)["field"].as_str()),
        (422, Some("reason"))
    );

    let done = call(
        &app,
        "POST",
        &cancel,
        &t,
        Some(r#"{"reason":"abandoned cart"}"#),
    )
    .await;
    assert_eq!(done.status, 200, "{}", done.body);
    let instance = json(&done);
    assert_eq!(instance["state"], "cancelled");
    assert_eq!(instance["current_step"], serde_json::Value::Null);
    let last = instance["history"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["event"], "cancelled");
    assert_eq!(last["answer"]["reason"], "abandoned cart");
    let history = store::instances::history(&app.db, id).await.unwrap();
    assert_eq!(history.last().unwrap().actor, "api:crm");

    let again = call(&app, "POST", &cancel, &t, None).await;
    assert_eq!(
        (again.status, json(&again)["error"].as_str()),
        (409, Some("ended"))
    );
    assert_eq!(
        store::instances::history(&app.db, id).await.unwrap().len(),
        history.len()
    );
    let freed = call(&app, "POST", "/api/v1/instances", &t, Some(START)).await;
    assert_eq!(
        freed.status, 201,
        "the cancelled instance's place is free: {}",
        freed.body
    );
}

#[tokio::test]
async fn an_administrator_creates_a_token_sees_it_once_and_revokes_it_after_confirming() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;
    let page = helpers::get(&admin, &app, "/admin/config/api").await;
    assert_eq!(page.status, 200);
    let bad = helpers::post(
        &admin,
        &app,
        "/admin/config/api",
        &[
            ("csrf", &page.csrf()),
            ("name", "Bad Name"),
            ("rate", "0"),
            ("burst", "5"),
        ],
    )
    .await;
    assert_eq!(bad.status, 422);
    assert_eq!(bad.attr("input#name", "value").as_deref(), Some("Bad Name"));
    assert!(bad.has("p.field-error[data-field=name]") && bad.has("p.field-error[data-field=rate]"));
    assert!(
        store::api::tokens(&app.db).await.unwrap().is_empty(),
        "nothing saved"
    );

    let made = helpers::post(
        &admin,
        &app,
        "/admin/config/api",
        &[
            ("csrf", &page.csrf()),
            ("name", "crm"),
            ("rate", "120"),
            ("burst", ""),
            // What a browser sends from a blank form: the default scope, ticked.
            ("ability", "read"),
            ("ability", "start"),
            ("ability", "links"),
            ("reach", "own"),
        ],
    )
    .await;
    assert_eq!(
        (made.status, made.location().as_str()),
        (303, "/admin/config/api")
    );
    let shown = helpers::get(&admin, &app, "/admin/config/api").await;
    let text = shown.attr("input#new-token", "value").expect("shown once");
    assert_eq!(shown.header("cache-control"), Some("no-store"));
    assert_eq!(shown.text("table.tokens td.name"), ["crm"]);
    assert!(
        !helpers::get(&admin, &app, "/admin/config/api")
            .await
            .has("input#new-token"),
        "only once"
    );
    assert_eq!(
        call(&app, "GET", "/api/v1/workflows", &text, None)
            .await
            .status,
        200
    );

    let confirm = helpers::get(&admin, &app, "/admin/config/api/crm/revoke").await;
    assert_eq!(confirm.status, 200);
    assert!(confirm.has("form button.danger"));
    assert_eq!(
        call(&app, "GET", "/api/v1/workflows", &text, None)
            .await
            .status,
        200,
        "asking revokes nothing"
    );
    let revoked = helpers::post(
        &admin,
        &app,
        "/admin/config/api/crm/revoke",
        &[("csrf", &confirm.csrf())],
    )
    .await;
    assert_eq!(revoked.status, 303);
    assert_eq!(
        call(&app, "GET", "/api/v1/workflows", &text, None)
            .await
            .status,
        401
    );
    assert_eq!(
        helpers::get(&admin, &app, "/admin/config/api/crm/revoke")
            .await
            .status,
        404
    );
}

#[tokio::test]
async fn the_request_limits_section_sets_the_apis_default_bucket_and_keeps_a_bad_value() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;
    let page = helpers::get(&admin, &app, "/admin/config/orchestra").await;
    assert_eq!(page.attr("input#api_rate", "value").as_deref(), Some("60"));
    let form = |rate: &'static str| {
        vec![
            ("site_name", "Orchestra"),
            ("base_url", "http://127.0.0.1:8080"),
            ("default_link_ttl", "604800"),
            ("period", "3600"),
            ("api_rate", rate),
            ("api_burst", "7"),
        ]
    };
    let mut bad = form("lots");
    let csrf = page.csrf();
    bad.push(("csrf", &csrf));
    let refused = helpers::post(&admin, &app, "/admin/config/orchestra", &bad).await;
    assert_eq!(refused.status, 422);
    assert_eq!(
        refused.attr("input#api_rate", "value").as_deref(),
        Some("lots")
    );
    assert!(refused.has("p.field-error[data-field=api_rate]"));
    assert_eq!(
        app.state.site.get().await.settings.api_burst,
        20,
        "nothing saved"
    );
    let mut good = form("90");
    good.push(("csrf", &csrf));
    assert_eq!(
        helpers::post(&admin, &app, "/admin/config/orchestra", &good)
            .await
            .status,
        303
    );
    let settings = app.state.site.get().await.settings.clone();
    assert_eq!((settings.api_rate_per_minute, settings.api_burst), (90, 7));
}

/// A token this site does not know costs a keyed hash and a database read. Past the sign-in's
/// per-address limit, failures from one address are refused with their own code and a
/// `Retry-After`; a valid token is never refused for them: one this server already let in, and
/// one it has not seen yet, sent while bad ones flood from the same address. A limit of 0 turns
/// it off.
#[tokio::test]
async fn failed_authentications_from_one_address_are_refused_yet_a_valid_token_gets_in() {
    let app = spawn(Flood::Memory).await;
    app.set(&[
        ("login.limits.per_address", "3"),
        ("login.limits.address_period", "600"),
    ])
    .await;
    let known = token(&app, "known", None, None).await;
    let fresh = token(&app, "fresh", None, None).await;
    assert_eq!(
        call(&app, "GET", "/api/v1/workflows", &known, None)
            .await
            .status,
        200
    );
    // Well formed, one character off: it reaches the database, and is not there.
    let mut made_up = known.clone();
    let last = made_up.pop().unwrap();
    made_up.push(if last == 'a' { 'b' } else { 'a' });
    for _ in 0..3 {
        let page = call(&app, "GET", "/api/v1/workflows", &made_up, None).await;
        assert_eq!(page.status, 401);
    }
    let refused = call(&app, "GET", "/api/v1/workflows", &made_up, None).await;
    assert_eq!(refused.status, 429);
    assert_eq!(json(&refused)["error"], "too_many_failures");
    assert_eq!(refused.header("retry-after"), Some("600"));
    assert_eq!(refused.header("content-type"), Some("application/json"));
    // The site's headers, and nothing about the token.
    assert_eq!(refused.header("x-content-type-options"), Some("nosniff"));
    assert!(!refused.body.contains(&made_up[5..]));
    // A good token this server has not let in yet is read and let in, while bad ones from the
    // same address go on being refused around it.
    let flood: Vec<_> = (0..4)
        .map(|_| {
            let (client, url, bad) = (app.client(), app.url("/api/v1/workflows"), made_up.clone());
            tokio::spawn(async move {
                for _ in 0..50 {
                    let r = client
                        .get(&url)
                        .header("authorization", format!("Bearer {bad}"))
                        .send()
                        .await
                        .expect("an answer");
                    assert_eq!(r.status(), 429);
                }
            })
        })
        .collect();
    let unseen = call(&app, "GET", "/api/v1/workflows", &fresh, None).await;
    assert_eq!(unseen.status, 200, "{}", unseen.body);
    for f in flood {
        f.await.unwrap();
    }
    // Still past the limit: a request with no token at all is refused without a read.
    let none = call(&app, "GET", "/api/v1/workflows", "", None).await;
    assert_eq!(json(&none)["error"], "too_many_failures");
    // A token this server already let in is not locked out by its neighbours' failures.
    assert_eq!(
        call(&app, "GET", "/api/v1/workflows", &known, None)
            .await
            .status,
        200
    );
    // In the caller's language.
    let french = read(
        app.client()
            .get(app.url("/api/v1/workflows"))
            .header("authorization", format!("Bearer {made_up}"))
            .header("accept-language", "fr"),
    )
    .await;
    assert!(
        json(&french)["message"]
            .as_str()
            .unwrap()
            .starts_with("Trop de requêtes"),
        "{}",
        french.body
    );
    // The sign-in's per-address limit at 0: nothing is counted, a plain 401 again.
    app.set(&[("login.limits.per_address", "0")]).await;
    assert_eq!(
        call(&app, "GET", "/api/v1/workflows", &made_up, None)
            .await
            .status,
        401
    );
}

/// The API's failed tokens are counted by the guard under the sign-in's per-address limit, so
/// they follow its mode: in report-only mode every one is answered (401), and what enforcing
/// would have refused is tallied under their own address.
#[tokio::test]
async fn failed_authentications_in_report_only_mode_are_answered_and_tallied() {
    use orchestra::limits::guard::Address;
    let app = spawn(Flood::Memory).await;
    app.set(&[
        ("login.limits.per_address", "2"),
        ("login.limits.address_period", "600"),
        ("login.limits.report_only", "true"),
    ])
    .await;
    for n in 0..4 {
        let page = call(&app, "GET", "/api/v1/workflows", "orc_not_a_token", None).await;
        assert_eq!(page.status, 401, "attempt {n} is answered, not refused");
    }
    let seen = app
        .state
        .guard
        .would_refuse(Address::ApiAuthFailure, Duration::from_secs(600));
    assert_eq!(seen.current, [2, 0], "two past a limit of 2");
    let decisions = app.state.guard.decisions().read(Address::ApiAuthFailure);
    assert_eq!((decisions.allowed, decisions.refused), (2, [0, 0]));
    // The sign-in's own counters saw none of it.
    assert_eq!(
        app.state.guard.decisions().read(Address::SignInAddress),
        Default::default()
    );
    // Enforcing, the counts are kept: the next one is refused.
    app.set(&[("login.limits.report_only", "false")]).await;
    let page = call(&app, "GET", "/api/v1/workflows", "orc_not_a_token", None).await;
    assert_eq!(page.status, 429);
}

/// While the flood store fails and the site chose `on_store_fault = refuse`, a token that
/// this process has not let in is refused (429) before the database, as a sign-in is.
#[tokio::test]
async fn failed_authentications_are_refused_while_the_store_fails_under_refuse() {
    use orchestra::limits::guard::Address;
    let app = spawn(Flood::Sql).await;
    app.set(&[
        ("login.limits.per_address", "5"),
        ("orchestra.request_limits.on_store_fault", "refuse"),
    ])
    .await;
    let page = call(&app, "GET", "/api/v1/workflows", "orc_not_a_token", None).await;
    assert_eq!(page.status, 401, "the store works: a plain 401");
    // A real fault on either backend (it assumed SQLite, and failed on every PostgreSQL pass).
    let fault = helpers::FloodFault::start(&app.database).await;
    assert!(
        app.state.guard.sync().await.is_err(),
        "the store's fault fails the sync"
    );
    let page = call(&app, "GET", "/api/v1/workflows", "orc_not_a_token", None).await;
    assert_eq!(page.status, 429, "{}", page.body);
    assert_eq!(json(&page)["error"], "too_many_failures");
    let decisions = app.state.guard.decisions().read(Address::ApiAuthFailure);
    assert_eq!(decisions.refused, [0, 1], "refused under the total tier");
    assert_eq!(app.state.guard.health().decisions_without_store(), 1);
    fault.end().await;
    app.state.guard.sync().await.expect("the store is back");
    let page = call(&app, "GET", "/api/v1/workflows", "orc_not_a_token", None).await;
    assert_eq!(page.status, 401, "counting through the store again");
}

/// A token with the scope named as the CLI writes it (`None`: that part's default).
pub(crate) async fn scoped(
    app: &TestApp,
    name: &str,
    abilities: Option<&[&str]>,
    reach: Option<&str>,
    workflows: Option<&[&str]>,
) -> String {
    let keys = store::keys::load(&app.db).await.unwrap();
    let scope = Scope::default()
        .with_words(
            abilities.map(|a| a.iter().copied()),
            reach,
            workflows.map(|w| w.iter().copied()),
        )
        .unwrap();
    orchestra::domain::api::create_scoped_token(&app.db, &keys, name, None, None, &scope)
        .await
        .unwrap()
        .expect("a new name")
}

pub(crate) const START: &str = r#"{"workflow":"contract_review","subject":{"title":"Lease"}}"#;

/// Starts an instance through the API as `token`; its id.
pub(crate) async fn started_by(app: &TestApp, token: &str, workflow: &str) -> i64 {
    let body = format!(r#"{{"workflow":"{workflow}","subject":{{"title":"Mine"}}}}"#);
    let page = call(app, "POST", "/api/v1/instances", token, Some(&body)).await;
    assert_eq!(page.status, 201, "{}", page.body);
    json(&page)["id"].as_i64().unwrap()
}

/// Issues a link through the API as `token`; its id and path.
async fn issued_by(app: &TestApp, token: &str, instance: i64) -> (i64, String) {
    let page = call(
        app,
        "POST",
        &format!("/api/v1/instances/{instance}/links"),
        token,
        Some(r#"{"participant":"legal"}"#),
    )
    .await;
    assert_eq!(page.status, 201, "{}", page.body);
    let link = json(&page);
    (
        link["id"].as_i64().unwrap(),
        helpers::path_of(link["url"].as_str().unwrap()),
    )
}

/// The history names who started the instance and who issued a link: an integrator's line reads "API token <name>" in the
/// reader's language, never the raw stored `api:<name>`.
#[tokio::test]
async fn a_link_an_integrator_issued_names_its_token_in_the_history() {
    let app = spawn(Flood::Memory).await;
    let t = token(&app, "billing", None, None).await;
    let id = started_by(&app, &t, "contract_review").await;
    issued_by(&app, &t, id).await;
    let admin = app.admin_client().await;
    let page = format!("/admin/instances/{id}");
    let actors = |lang| {
        let admin = admin.clone();
        let app = &app;
        let page = helpers::with_lang(&page, lang);
        async move {
            helpers::get(&admin, app, &page)
                .await
                .text("table.history .actor")
        }
    };
    // The start's line and the issue's: since issue 21 a start names who started too.
    assert_eq!(actors("en").await, ["(API token billing)"; 2]);
    assert_eq!(actors("fr").await, ["(jeton d'API billing)"; 2]);
}

/// A new token reaches what it started and nothing else: another token's instance and an
/// administrator's get the very answer a missing instance gets, for reading, issuing and
/// revoking alike, and the other token's link still works afterwards.
#[tokio::test]
async fn token_a_cannot_read_or_touch_token_bs_instances_nor_an_administrators() {
    let app = spawn(Flood::Memory).await;
    let a = token(&app, "a", None, None).await;
    let b = token(&app, "b", None, None).await;
    let own = started_by(&app, &a, "contract_review").await;
    let theirs = started_by(&app, &b, "contract_review").await;
    let (their_link, their_path) = issued_by(&app, &b, theirs).await;
    let admins = app.start("contract_review", "The administrator's").await;
    let admin_link = app.link(admins, Some("legal")).await;
    let admin_link_id = store::links::list(&app.db, admins).await.unwrap()[0].id;

    assert_eq!(
        call(&app, "GET", &format!("/api/v1/instances/{own}"), &a, None)
            .await
            .status,
        200
    );
    let missing = call(&app, "GET", "/api/v1/instances/999999", &a, None).await;
    assert_eq!(missing.status, 404);
    assert_eq!(json(&missing)["error"], "not_found");
    for (other, link) in [(theirs, their_link), (admins, admin_link_id)] {
        let read = call(&app, "GET", &format!("/api/v1/instances/{other}"), &a, None).await;
        let issue = call(
            &app,
            "POST",
            &format!("/api/v1/instances/{other}/links"),
            &a,
            Some(r#"{"participant":"legal"}"#),
        )
        .await;
        let revoke = call(
            &app,
            "DELETE",
            &format!("/api/v1/instances/{other}/links/{link}"),
            &a,
            None,
        )
        .await;
        for page in [&read, &issue, &revoke] {
            assert_eq!(page.status, 404, "{other}: {}", page.body);
            assert_eq!(page.header("content-type"), Some("application/json"));
            assert_eq!(page.body, missing.body, "{other}: as if it did not exist");
        }
    }
    // Nothing was issued or revoked: B's link and the administrator's still open their step.
    let client = app.client();
    assert_eq!(helpers::get(&client, &app, &their_path).await.status, 200);
    assert_eq!(helpers::get(&client, &app, &admin_link).await.status, 200);
    let events: Vec<String> = store::instances::history(&app.db, admins)
        .await
        .unwrap()
        .into_iter()
        .map(|h| h.event.as_str().to_owned())
        .collect();
    assert_eq!(
        events,
        ["started", "link_issued"],
        "only the administrator's"
    );
    // B still manages its own.
    let gone = call(
        &app,
        "DELETE",
        &format!("/api/v1/instances/{theirs}/links/{their_link}"),
        &b,
        None,
    )
    .await;
    assert_eq!(gone.status, 204);
}

/// Abilities are checked before anything is read: a read-only token over every instance reads
/// every instance but gets `403 forbidden_scope` for starting, issuing and revoking, in the
/// caller's language; a scope widened behind the server's back holds from the next request.
#[tokio::test]
async fn a_token_that_may_read_every_instance_reads_them_but_cannot_start_or_issue() {
    let app = spawn(Flood::Memory).await;
    limits_on(&app).await;
    let reader = scoped(&app, "reader", Some(&["read"]), Some("all"), None).await;
    let crm = token(&app, "crm", None, None).await;
    let theirs = started_by(&app, &crm, "contract_review").await;
    let admins = app.start("contract_review", "The administrator's").await;
    for id in [theirs, admins] {
        let page = call(
            &app,
            "GET",
            &format!("/api/v1/instances/{id}"),
            &reader,
            None,
        )
        .await;
        assert_eq!(page.status, 200, "{}", page.body);
        assert_eq!(json(&page)["id"], id);
    }
    let refusals = [
        call(&app, "POST", "/api/v1/instances", &reader, Some(START)).await,
        call(
            &app,
            "POST",
            &format!("/api/v1/instances/{admins}/links"),
            &reader,
            Some(r#"{"participant":"legal"}"#),
        )
        .await,
        call(
            &app,
            "DELETE",
            &format!("/api/v1/instances/{admins}/links/1"),
            &reader,
            None,
        )
        .await,
        // Not even an instance that does not exist: the answer says nothing about instances.
        call(
            &app,
            "POST",
            "/api/v1/instances/999999/links",
            &reader,
            Some("{}"),
        )
        .await,
    ];
    for page in &refusals {
        assert_eq!(page.status, 403, "{}", page.body);
        assert_eq!(page.header("content-type"), Some("application/json"));
        assert_eq!(json(page)["error"], "forbidden_scope");
        assert!(page.header("ratelimit").is_some(), "a call like any other");
    }
    assert!(
        json(&refusals[0])["message"]
            .as_str()
            .unwrap()
            .contains("start"),
        "{}",
        refusals[0].body
    );
    let french = read(
        app.client()
            .post(app.url("/api/v1/instances"))
            .header("authorization", format!("Bearer {reader}"))
            .header("accept-language", "fr")
            .body(START),
    )
    .await;
    assert!(
        json(&french)["message"]
            .as_str()
            .unwrap()
            .starts_with("La portée de ce jeton"),
        "{}",
        french.body
    );
    let running = store::instances::recent(&app.db, 100).await.unwrap().len();
    assert_eq!(running, 2, "nothing was started");
    // `orchestra token scope` in another process: the next request once this process's read of
    // the token is older than `api::FRESH` has the new scope.
    let wider = Scope::default()
        .with_words(Some(["read", "start"]), Some("all"), NONE)
        .unwrap();
    assert!(
        store::api::set_scope(&app.db, "reader", &wider)
            .await
            .unwrap()
            .is_some()
    );
    app.clock.advance(orchestra::domain::api::FRESH);
    assert_eq!(
        call(&app, "POST", "/api/v1/instances", &reader, Some(START))
            .await
            .status,
        201
    );
}

const NONE: Option<[&str; 0]> = None;

/// A token limited to some workflows lists, starts and reaches only those; naming another
/// workflow to start is one answer whether that workflow exists or not.
#[tokio::test]
async fn a_workflow_limited_token_lists_starts_and_reaches_only_its_workflows() {
    let app = spawn(Flood::Memory).await;
    let t = scoped(&app, "legal", None, Some("all"), Some(&["contract_review"])).await;
    let listed = call(&app, "GET", "/api/v1/workflows", &t, None).await;
    let names: Vec<String> = json(&listed)["workflows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["contract_review"]);
    started_by(&app, &t, "contract_review").await;
    for workflow in ["supplier_onboarding", "no_such_workflow"] {
        let body = format!(r#"{{"workflow":"{workflow}","subject":{{"title":"x"}}}}"#);
        let page = call(&app, "POST", "/api/v1/instances", &t, Some(&body)).await;
        assert_eq!(page.status, 403, "{workflow}: {}", page.body);
        assert_eq!(json(&page)["error"], "forbidden_scope");
        assert!(json(&page)["message"].as_str().unwrap().contains(workflow));
    }
    let contract = app.start("contract_review", "In scope").await;
    let supplier = app.start("supplier_onboarding", "Out of scope").await;
    let read = |id: i64| {
        let path = format!("/api/v1/instances/{id}");
        let app = &app;
        let t = &t;
        async move { call(app, "GET", &path, t, None).await.status }
    };
    assert_eq!(read(contract).await, 200, "reach all, in its workflow");
    assert_eq!(read(supplier).await, 404, "another workflow: as if missing");
    let issue = call(
        &app,
        "POST",
        &format!("/api/v1/instances/{supplier}/links"),
        &t,
        Some(r#"{"participant":"default"}"#),
    )
    .await;
    assert_eq!(issue.status, 404);
}

/// A database made before scopes: its token keeps every ability and every workflow but reaches
/// only the instances it started (the migration's choice, docs/api.md).
#[tokio::test]
async fn a_token_made_before_scopes_keeps_what_it_started_and_nothing_more() {
    let database = helpers::fresh_database().await;
    let pool = helpers::schema_before(&database.url, 7).await;
    let keys = orchestra::domain::keys::SiteKeys::from_bytes([7; 32], [9; 32]);
    let hex = |b: [u8; 32]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    let text = format!("orch_{}", "5".repeat(64));
    let hash = orchestra::domain::api::bearer_hash(&keys, &text).unwrap();
    let definition =
        orchestra::domain::workflow::Definition::parse("review[legal,finance]: Approve it\n")
            .unwrap()
            .to_json();
    for (sql, args) in [
        (
            "INSERT INTO site_keys (id, private_key, hash_salt, created_at) VALUES (1, $1, $2, 1700000000)",
            vec![hex([7; 32]), hex([9; 32])],
        ),
        (
            "INSERT INTO workflows (name, label, created_at, updated_at) VALUES ('contract_review', 'Contract review', 1700000000, 1700000000)",
            vec![],
        ),
        (
            "INSERT INTO workflow_versions (workflow_id, number, definition, created_at) VALUES (1, 1, $1, 1700000000)",
            vec![definition],
        ),
        (
            "INSERT INTO api_tokens (name, hash, created_at) VALUES ('crm', $1, 1700000000)",
            vec![hash],
        ),
        (
            "INSERT INTO instances (workflow_id, version_id, subject_title, subject_body, token, step_index, state, created_at, updated_at, api_token_id) VALUES (1, 1, 'Its own', '', 'token-1', 0, 'active', 1700000000, 1700000000, 1)",
            vec![],
        ),
        (
            "INSERT INTO instances (workflow_id, version_id, subject_title, subject_body, token, step_index, state, created_at, updated_at) VALUES (1, 1, 'An administrator''s', '', 'token-2', 0, 'active', 1700000000, 1700000000)",
            vec![],
        ),
    ] {
        let mut query = sqlx::query(sql);
        for a in args {
            query = query.bind(a);
        }
        query.execute(&pool).await.unwrap();
    }
    pool.close().await;

    let app = helpers::spawn_on(database, |_, clock| {
        std::sync::Arc::new(orchestra::limits::flood::MemoryFlood::new(4096, clock))
    })
    .await;
    let tokens = store::api::tokens(&app.db).await.unwrap();
    assert_eq!(
        tokens[0].scope,
        Scope::default(),
        "own instances, all abilities"
    );
    let own = call(&app, "GET", "/api/v1/instances/1", &text, None).await;
    assert_eq!(own.status, 200, "{}", own.body);
    assert_eq!(json(&own)["subject"]["title"], "Its own");
    assert_eq!(
        call(&app, "GET", "/api/v1/instances/2", &text, None)
            .await
            .status,
        404
    );
    issued_by(&app, &text, 1).await;
    started_by(&app, &text, "contract_review").await;
}

/// Bad signatures are counted: each takes a request from the token's bucket before its key is
/// looked up (so past the bucket it is a 429, never another 401), and each is a failure of its
/// client address, as a bad token is.
#[tokio::test]
async fn bad_signatures_spend_the_bucket_and_count_as_failures_of_their_address() {
    let app = spawn(Flood::Memory).await;
    limits_on(&app).await;
    app.set(&[
        ("api.limits.signed_multiplier", "1"),
        ("login.limits.per_address", "2"),
        ("login.limits.address_period", "600"),
    ])
    .await;
    let t = token(&app, "crm", Some(60), Some(3)).await;
    let key = orchestra::domain::api::create_integrator_key(&app.db, "acme")
        .await
        .unwrap();
    let forged = ("ik_nope".to_owned(), key.1.clone());
    let now = app.clock.now_secs();
    let path = "/api/v1/workflows";
    assert_eq!(call(&app, "GET", path, &t, None).await.status, 200);
    for i in 0..2 {
        let page = read(signed(&app, &t, &forged, path, now + i)).await;
        assert_eq!(page.status, 401);
        assert_eq!(json(&page)["error"], "bad_signature");
    }
    // The bucket of 3 is spent: one good call, two bad signatures.
    let past = read(signed(&app, &t, &forged, path, now + 2)).await;
    assert_eq!(past.status, 429, "{}", past.body);
    assert_eq!(json(&past)["error"], "rate_limited");
    let good = read(signed(&app, &t, &key, path, now + 3)).await;
    assert_eq!(
        good.status, 429,
        "a good signature waits for the bucket too"
    );
    // The two bad signatures are this address's two failures: a token this site does not know
    // is now refused as past the limit.
    let stranger = call(&app, "GET", path, &format!("orch_{}", "0".repeat(64)), None).await;
    assert_eq!(
        (stranger.status, json(&stranger)["error"].clone()),
        (429, "too_many_failures".into())
    );
}

/// The auth scheme is case-insensitive (RFC 9110, 11.1): `bearer`, `BEARER` are `Bearer`, in
/// `gate` and in the fast refusal alike.
#[tokio::test]
async fn the_bearer_scheme_is_read_in_any_case() {
    let app = spawn(Flood::Memory).await;
    limits_on(&app).await;
    let t = token(&app, "crm", Some(60), Some(2)).await;
    let with = |scheme: &str| {
        app.client()
            .get(app.url("/api/v1/workflows"))
            .header("authorization", format!("{scheme} {t}"))
    };
    for scheme in ["bearer", "BEARER"] {
        let page = read(with(scheme)).await;
        assert_eq!(page.status, 200, "{scheme}: {}", page.body);
    }
    // The bucket is empty: a lower-case caller is refused from memory too, before the
    // database (which no longer has the token).
    delete_every_token(&app).await;
    let refused = read(with("bearer")).await;
    assert_eq!(refused.status, 429, "{}", refused.body);
    assert_eq!(json(&refused)["error"], "rate_limited");
    assert_eq!(read(with("Basic")).await.status, 401, "another scheme");
}

/// The new-token form chooses the scope; a bad one keeps what was typed and ticked and names
/// its fieldset; the list shows each token's scope, in English and French.
#[tokio::test]
async fn an_administrator_chooses_a_tokens_scope_and_the_list_shows_it() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;
    let page = helpers::get(&admin, &app, "/admin/config/api").await;
    assert_eq!(
        page.text("fieldset#abilities input[checked]").len(),
        3,
        "every ability ticked on a blank form"
    );
    assert_eq!(
        page.attr("fieldset#reach input[checked]", "value")
            .as_deref(),
        Some("own")
    );
    assert!(page.has("fieldset#workflows input[value=contract_review]"));
    let csrf = page.csrf();
    let bad = helpers::post(
        &admin,
        &app,
        "/admin/config/api",
        &[
            ("csrf", &csrf),
            ("name", "reader"),
            ("reach", "all"),
            ("workflow", "contract_review"),
            ("workflow", "deleted_long_ago"),
        ],
    )
    .await;
    assert_eq!(bad.status, 422);
    assert!(
        bad.has("p.field-error[data-field=abilities]"),
        "none ticked"
    );
    assert!(bad.has("p.field-error[data-field=workflows]"));
    assert_eq!(bad.attr("input#name", "value").as_deref(), Some("reader"));
    assert_eq!(
        bad.attr("fieldset#reach input[checked]", "value")
            .as_deref(),
        Some("all")
    );
    assert!(bad.has("fieldset#workflows input[value=contract_review][checked]"));
    assert!(store::api::tokens(&app.db).await.unwrap().is_empty());

    let made = helpers::post(
        &admin,
        &app,
        "/admin/config/api",
        &[
            ("csrf", &csrf),
            ("name", "reader"),
            ("ability", "read"),
            ("ability", "links"),
            ("reach", "all"),
            ("workflow", "contract_review"),
        ],
    )
    .await;
    assert_eq!(made.status, 303);
    let shown = helpers::get(&admin, &app, "/admin/config/api").await;
    let text = shown.attr("input#new-token", "value").unwrap();
    assert_eq!(shown.text("td.scope .abilities"), ["read, links"]);
    assert_eq!(shown.text("td.scope .reach"), ["every instance"]);
    assert_eq!(shown.text("td.scope .workflows"), ["contract_review"]);
    let fr = helpers::get(&admin, &app, "/admin/config/api?lang=fr").await;
    assert_eq!(fr.text("td.scope .reach"), ["toutes les instances"]);
    assert!(fr.has("fieldset#workflows legend"));
    assert_eq!(fr.first("fieldset#reach legend"), "Quelles instances");
    let refused = call(&app, "POST", "/api/v1/instances", &text, Some(START)).await;
    assert_eq!(json(&refused)["error"], "forbidden_scope");
}

/// Every answer of these tests is held to the OpenAPI description the server serves: its status
/// is one the operation lists, its body has the listed type and fits the listed schema, with no
/// field the schema does not name. So the description cannot drift from what the server sends
/// (the schemas are generated from the handlers' own types, and this checks the handlers send
/// what they say).
pub(crate) mod described {
    use std::sync::LazyLock;

    use serde_json::Value;

    use crate::helpers::Page;

    static DOC: LazyLock<Value> = LazyLock::new(|| {
        serde_json::from_str(orchestra::http::api::description()).expect("the description is JSON")
    });

    /// Panics, saying why, unless `page` is an answer the description lists for this call.
    pub fn holds(method: &str, path: &str, page: &Page) {
        if let Err(e) = check(&DOC, method, path, page) {
            panic!(
                "{method} {path} answered {}, not as described: {e}\n{}",
                page.status, page.body
            );
        }
    }

    pub fn check(doc: &Value, method: &str, path: &str, page: &Page) -> Result<(), String> {
        let path = path.split('?').next().unwrap_or(path);
        let Some(template) = doc["paths"]
            .as_object()
            .unwrap()
            .keys()
            .find(|t| matches(t, path))
        else {
            return Err("no such path in the description".into());
        };
        let operation = &doc["paths"][template][method.to_lowercase()];
        if operation.is_null() {
            return Err(format!("{template} has no {method}"));
        }
        let response = &operation["responses"][page.status.to_string()];
        if response.is_null() {
            return Err(format!("{method} {template} lists no {}", page.status));
        }
        let Some(content) = response["content"].as_object() else {
            return match page.body.is_empty() {
                true => Ok(()),
                false => Err("a body where the description lists none".into()),
            };
        };
        let kind = page.header("content-type").unwrap_or_default();
        // A download is described as any type: its bytes are the file's, not JSON.
        if content.contains_key("*/*") {
            return Ok(());
        }
        let Some(media) = content.get(kind) else {
            return Err(format!(
                "content type {kind:?}, not one of {:?}",
                content.keys()
            ));
        };
        let Some(schema) = media.get("schema") else {
            return Ok(());
        };
        let body: Value = serde_json::from_str(&page.body).map_err(|e| format!("not JSON: {e}"))?;
        fits(doc, schema, &body, "body")
    }

    /// Whether the description says `body` is a request `method` on `path` takes: `Err` says
    /// where it does not.
    pub fn takes(method: &str, path: &str, body: &Value) -> Result<(), String> {
        let template = DOC["paths"]
            .as_object()
            .unwrap()
            .keys()
            .find(|t| matches(t, path))
            .unwrap_or_else(|| panic!("{path} is described"));
        let schema = &DOC["paths"][template][method.to_lowercase()]["requestBody"]["content"]["application/json"]
            ["schema"];
        assert!(!schema.is_null(), "{method} {path} describes its body");
        fits(&DOC, schema, body, "body")
    }

    fn matches(template: &str, path: &str) -> bool {
        let (t, p): (Vec<_>, Vec<_>) = (template.split('/').collect(), path.split('/').collect());
        t.len() == p.len()
            && t.iter()
                .zip(&p)
                .all(|(t, p)| t == p || (t.starts_with('{') && !p.is_empty()))
    }

    /// Whether `value` fits `schema`, for the part of JSON Schema the description uses.
    pub fn fits(doc: &Value, schema: &Value, value: &Value, at: &str) -> Result<(), String> {
        if let Some(reference) = schema["$ref"].as_str() {
            let name = reference.trim_start_matches("#/components/schemas/");
            let target = &doc["components"]["schemas"][name];
            if target.is_null() {
                return Err(format!("{at}: {reference} names no schema"));
            }
            return fits(doc, target, value, at);
        }
        if let Some(alternatives) = schema["oneOf"].as_array() {
            let fitting = alternatives
                .iter()
                .filter(|a| fits(doc, a, value, at).is_ok())
                .count();
            return match fitting {
                1 => Ok(()),
                n => Err(format!(
                    "{at}: fits {n} of oneOf's {} schemas: {value}",
                    alternatives.len()
                )),
            };
        }
        let types: Vec<&str> = match &schema["type"] {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        let is = |t: &str| match t {
            "null" => value.is_null(),
            "object" => value.is_object(),
            "array" => value.is_array(),
            "string" => value.is_string(),
            "boolean" => value.is_boolean(),
            "integer" => value.is_i64() || value.is_u64(),
            "number" => value.is_number(),
            _ => false,
        };
        if !types.is_empty() && !types.iter().any(|t| is(t)) {
            return Err(format!("{at}: {value} is not of type {types:?}"));
        }
        if let Some(allowed) = schema["enum"].as_array() {
            if !allowed.contains(value) {
                return Err(format!("{at}: {value} is not one of {allowed:?}"));
            }
        }
        if let (Some(min), Some(n)) = (schema["minimum"].as_f64(), value.as_f64()) {
            if n < min {
                return Err(format!("{at}: {n} is below {min}"));
            }
        }
        if let (Some(max), Some(n)) = (schema["maximum"].as_f64(), value.as_f64()) {
            if n > max {
                return Err(format!("{at}: {n} is above {max}"));
            }
        }
        if let (Some(max), Some(s)) = (schema["maxLength"].as_u64(), value.as_str()) {
            if s.chars().count() as u64 > max {
                return Err(format!("{at}: longer than {max} characters"));
            }
        }
        if let (Some(min), Some(s)) = (schema["minLength"].as_u64(), value.as_str()) {
            if (s.chars().count() as u64) < min {
                return Err(format!("{at}: shorter than {min} characters"));
            }
        }
        if let Some(object) = value.as_object() {
            let properties = schema["properties"].as_object();
            for name in schema["required"].as_array().into_iter().flatten() {
                let name = name.as_str().unwrap_or_default();
                if !object.contains_key(name) {
                    return Err(format!("{at}: the required {name} is missing"));
                }
            }
            // A schema that names no properties (a form's answer) takes any.
            if let Some(properties) = properties {
                for (name, field) in object {
                    let Some(described) = properties.get(name) else {
                        return Err(format!("{at}: {name} is sent but not described"));
                    };
                    fits(doc, described, field, &format!("{at}.{name}"))?;
                }
            }
        }
        if let (Some(items), Some(array)) = (schema.get("items"), value.as_array()) {
            for (i, item) in array.iter().enumerate() {
                fits(doc, items, item, &format!("{at}[{i}]"))?;
            }
        }
        Ok(())
    }
}

/// Issue 20: API tokens get a key of their own. A database made before it upgrades with its
/// tokens working (the token key starts as the hash salt their stored hashes were made with,
/// computed here by hand as the old code did); a rotation of the site keys then leaves them
/// working, and only the token key's own rotation voids them.
#[tokio::test]
async fn a_token_made_before_the_token_key_survives_the_upgrade_and_a_rotation_of_the_site_keys() {
    use hmac::Mac;
    let database = helpers::fresh_database().await;
    let pool = helpers::schema_before(&database.url, 8).await;
    let (private_key, salt) = ([3u8; 32], [4u8; 32]);
    let text = format!("orch_{}", "6".repeat(64));
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(&salt).unwrap();
    mac.update(b"api-token\0");
    mac.update(text.as_bytes());
    let stored = hex::encode(mac.finalize().into_bytes());
    for (sql, args) in [
        (
            "INSERT INTO site_keys (id, private_key, hash_salt, created_at, provider_key) VALUES (1, $1, $2, 1700000000, $3)",
            vec![
                hex::encode(private_key),
                hex::encode(salt),
                hex::encode([5u8; 32]),
            ],
        ),
        (
            "INSERT INTO api_tokens (name, hash, created_at) VALUES ('crm', $1, 1700000000)",
            vec![stored],
        ),
    ] {
        let mut query = sqlx::query(sql);
        for a in args {
            query = query.bind(a);
        }
        query.execute(&pool).await.unwrap();
    }
    pool.close().await;

    let app = helpers::spawn_on(database, |_, clock| {
        std::sync::Arc::new(orchestra::limits::flood::MemoryFlood::new(4096, clock))
    })
    .await;
    let status = |app: &TestApp| {
        let text = text.clone();
        let url = app.url("/api/v1/workflows");
        async move {
            helpers::read(reqwest::Client::new().get(url).bearer_auth(text))
                .await
                .status
        }
    };
    assert_eq!(status(&app).await, 200, "the upgrade keeps the token");
    orchestra::domain::rotation::rotate_keys(&app.db)
        .await
        .unwrap();
    app.state.site.refresh().await;
    assert_eq!(
        status(&app).await,
        200,
        "a rotation of the site keys keeps it"
    );
    store::keys::rotate_token_key(&app.db).await.unwrap();
    app.state.site.refresh().await;
    assert_eq!(status(&app).await, 401, "the token key's rotation voids it");
}

/// Issue 20: the description and the server agree on `null` and `""`. Each field of each POST
/// is sent as `null` and as `""` in an otherwise good body; where the description takes the
/// body the call succeeds, and where it does not the answer is the `422` naming that field (a
/// missing subject is named by its title, the field that is then missing). A field whose
/// description and server disagree fails here (both ways: the counts below show each way is
/// met).
#[tokio::test]
async fn null_and_empty_in_each_field_are_answered_as_the_description_says() {
    use serde_json::{Value, json as j};
    let app = spawn(Flood::Memory).await;
    let t = token(&app, "crm", None, None).await;
    // A workflow whose step names no participant: a link's participant left out names its
    // one unnamed participant.
    let definition =
        orchestra::domain::workflow::Definition::parse("form: Order | Name*\n").unwrap();
    store::workflows::create(&app.db, "one_form", "One form", &definition.to_json())
        .await
        .unwrap()
        .unwrap();
    // (the call, its good body, the fields to try as dotted paths)
    let start = j!({"workflow": "contract_review", "subject": {"title": "Lease", "body": "x"}});
    let issue = j!({"participant": "", "ttl_seconds": 3600});
    let cancel = j!({"reason": "done"});
    let cases: [(&str, &Value, &[&str]); 3] = [
        (
            "start",
            &start,
            &["workflow", "subject", "subject.title", "subject.body"],
        ),
        ("issue", &issue, &["participant", "ttl_seconds"]),
        ("cancel", &cancel, &["reason"]),
    ];
    let (mut taken, mut refused) = (0, 0);
    for (call_name, good, fields) in cases {
        for field in fields.iter().copied() {
            for value in [Value::Null, Value::String(String::new())] {
                let mut body = good.clone();
                let mut at = &mut body;
                let parts: Vec<&str> = field.split('.').collect();
                for part in &parts[..parts.len() - 1] {
                    at = &mut at[*part];
                }
                at[parts[parts.len() - 1]] = value.clone();
                // A fresh instance each time (a cancel ends it).
                let path = match call_name {
                    "start" => "/api/v1/instances".to_owned(),
                    "issue" => format!(
                        "/api/v1/instances/{}/links",
                        started_by(&app, &t, "one_form").await
                    ),
                    _ => format!(
                        "/api/v1/instances/{}/cancel",
                        started_by(&app, &t, "one_form").await
                    ),
                };
                let described = described::takes("POST", &path, &body);
                let page = call(&app, "POST", &path, &t, Some(&body.to_string())).await;
                let said = format!("{call_name} {field}={value}: {} {}", page.status, page.body);
                match described {
                    Ok(()) => {
                        assert!(
                            matches!(page.status, 200 | 201),
                            "taken as described: {said}"
                        );
                        taken += 1;
                    }
                    Err(why) => {
                        assert_eq!(page.status, 422, "refused as described ({why}): {said}");
                        let named = json(&page)["field"].as_str().unwrap_or_default().to_owned();
                        assert!(named.starts_with(field), "names {field}: {said}");
                        refused += 1;
                    }
                }
            }
        }
    }
    // workflow, subject and title refuse both; body, participant, ttl_seconds (null), reason
    // take null; an empty ttl_seconds is no number.
    assert_eq!((taken, refused), (7, 7));
}

/// The API's instance view says which earlier answers its current step shows (the seeded
/// review shows the supplier's form), and holds those answers, labelled, in its history.
#[tokio::test]
async fn the_instance_view_says_what_its_step_shows() {
    let app = spawn(Flood::Memory).await;
    let t = token(&app, "crm", None, None).await;
    let id = started_by(&app, &t, "supplier_onboarding").await;
    let path = format!("/api/v1/instances/{id}");
    let first = json(&call(&app, "GET", &path, &t, None).await);
    assert_eq!(first["current_step"]["shows"], serde_json::json!([]));
    let supplier = app.link_for(id, "supplier", 3600).await;
    let answered = helpers::answer_step(
        &app.client(),
        &app,
        &supplier,
        &[("company", "Acme"), ("contact_email", "buyer@acme.example")],
    )
    .await;
    assert_eq!(answered.status, 200);
    let view = json(&call(&app, "GET", &path, &t, None).await);
    assert_eq!(view["current_step"]["number"], 2);
    assert_eq!(view["current_step"]["shows"], serde_json::json!([1]));
    let answer = view["history"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["event"] == "answered")
        .expect("the supplier's answer")["answer"]["fields"][0]
        .clone();
    assert_eq!(
        answer,
        serde_json::json!({"name": "company", "label": "Company", "value": "Acme"})
    );
    let workflows = json(&call(&app, "GET", "/api/v1/workflows", &t, None).await);
    let onboarding = workflows["workflows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["name"] == "supplier_onboarding")
        .unwrap()
        .clone();
    assert_eq!(onboarding["steps"][1]["shows"], serde_json::json!([1]));
}

/// The read's "participants left" after one branch of a parallel step answered: read from the
/// history page when it holds the whole history, the same as the database says.
#[tokio::test]
async fn the_read_says_who_is_left_after_one_branch_answered() {
    let app = spawn(Flood::Memory).await;
    let t = token(&app, "crm", None, None).await;
    let started = call(
        &app,
        "POST",
        "/api/v1/instances",
        &t,
        Some(r#"{"workflow":"contract_review","subject":{"title":"Lease"}}"#),
    )
    .await;
    let id = json(&started)["id"].as_i64().unwrap();
    let link = app.link(id, Some("legal")).await;
    let answered = crate::helpers::answer_step(
        &app.client(),
        &app,
        &link,
        &[("decision", "approve"), ("comment", "")],
    )
    .await;
    assert_eq!(answered.status, 200);
    let read = call(&app, "GET", &format!("/api/v1/instances/{id}"), &t, None).await;
    assert_eq!(read.status, 200, "{}", read.body);
    let view = json(&read);
    assert_eq!(view["participants_left"], serde_json::json!(["finance"]));
    assert_eq!(
        view["history_total"].as_u64().unwrap() as usize,
        view["history"].as_array().unwrap().len(),
        "the first page, not full, counted from itself"
    );
    let row = orchestra::store::instances::by_id(&app.db, id)
        .await
        .unwrap()
        .unwrap();
    let definition = app
        .state
        .versions
        .get(&app.db, row.version_id)
        .await
        .unwrap();
    let left = orchestra::domain::instance::participants_left(&app.db, &row, &definition)
        .await
        .unwrap();
    assert_eq!(
        left.iter().map(|p| p.as_str()).collect::<Vec<_>>(),
        ["finance"]
    );
}
