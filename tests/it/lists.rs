//! Lists that page (issue 21): the admin instance list, an instance's links and history, the
//! API's list and `orchestra instance list`, each a page at a time on keyset cursors.

use std::collections::BTreeSet;

use orchestra::domain::instance::Actor;

use crate::api::{call, json, token};
use crate::helpers::{self, Flood, TestApp, get, spawn};

async fn start_as(app: &TestApp, workflow: &str, title: &str, by: &Actor) -> i64 {
    let w = orchestra::store::workflows::by_name(&app.db, workflow)
        .await
        .unwrap()
        .unwrap();
    orchestra::domain::instance::start(
        &app.db,
        &orchestra::domain::instance::Start {
            ..orchestra::domain::instance::Start::new(w.id, title, by)
        },
    )
    .await
    .unwrap()
}

/// The ids of the rows of an admin list page.
fn ids(page: &helpers::Page) -> Vec<i64> {
    page.text("table.instances tbody td[data-label='#']")
        .iter()
        .map(|t| t.parse().unwrap())
        .collect()
}

#[tokio::test]
async fn paging_the_admin_list_visits_every_instance_once_while_new_ones_start() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;
    let mut started = BTreeSet::new();
    for n in 0..120 {
        started.insert(app.start("contract_review", &format!("Contract {n}")).await);
    }
    let mut seen = Vec::new();
    let mut url = "/admin/instances".to_owned();
    let mut pages = 0;
    loop {
        let page = get(&admin, &app, &url).await;
        assert_eq!(page.status, 200, "{url}");
        let rows = ids(&page);
        assert!(rows.len() <= 50, "{}", rows.len());
        assert!(
            rows.windows(2).all(|w| w[0] > w[1]),
            "newest first: {rows:?}"
        );
        seen.extend(rows);
        pages += 1;
        // Someone starts an instance between page loads: it is newer than every page read on.
        app.start("contract_review", "Started meanwhile").await;
        match page.attr("a#older", "href") {
            Some(next) => {
                assert!(next.contains("before="), "{next}");
                url = next.replace("&amp;", "&");
            }
            None => break,
        }
    }
    assert_eq!(pages, 3);
    let unique: BTreeSet<i64> = seen.iter().copied().collect();
    assert_eq!(unique.len(), seen.len(), "none repeated");
    assert_eq!(unique, started, "none skipped");

    // The second page's "Newer" link leads back to rows newer than its first.
    let second = get(
        &admin,
        &app,
        &format!("/admin/instances?before={}", seen[49] + 1),
    )
    .await;
    let newer = second.attr("a#newer", "href").expect("a newer link");
    let back = get(&admin, &app, &newer.replace("&amp;", "&")).await;
    assert!(ids(&back).iter().all(|id| *id > seen[49]));
    assert_eq!(ids(&back).len(), 50);
}

#[tokio::test]
async fn the_admin_list_filters_searches_and_counts_in_both_languages() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;
    let a = start_as(
        &app,
        "contract_review",
        "Lease of the HARBOUR office",
        &Actor::Admin("ada".into()),
    )
    .await;
    let c = start_as(&app, "order_payment", "Order 7", &Actor::CommandLine).await;
    let p = start_as(
        &app,
        "contract_review",
        "Harbour crane 50%",
        &Actor::Api("crm".into()),
    )
    .await;
    orchestra::domain::instance::cancel(&app.db, c, &Actor::CommandLine, "")
        .await
        .unwrap();
    let workflow = orchestra::store::workflows::by_name(&app.db, "contract_review")
        .await
        .unwrap()
        .unwrap()
        .id;
    for (query, expected, total) in [
        ("", vec![p, c, a], "3 instances"),
        (
            &format!("?workflow={workflow}") as &str,
            vec![p, a],
            "2 instances",
        ),
        ("?state=cancelled", vec![c], "One instance"),
        ("?by=cli", vec![c], "One instance"),
        ("?by=api", vec![p], "One instance"),
        ("?by=admin", vec![a], "One instance"),
        ("?q=harbour", vec![p, a], "2 instances"),
        ("?q=%2050%25", vec![p], "One instance"),
        ("?q=50_", vec![], "No instance"),
        (
            &format!("?q=HARB&by=admin&workflow={workflow}&state=active"),
            vec![a],
            "One instance",
        ),
        // What is not a filter is left out, never an error.
        (
            "?state=lost&by=nobody&workflow=x&before=abc&after=-3",
            vec![p, c, a],
            "3 instances",
        ),
    ] {
        let page = get(&admin, &app, &format!("/admin/instances{query}")).await;
        assert_eq!(page.status, 200, "{query}");
        assert_eq!(ids(&page), expected, "{query}");
        assert_eq!(page.first("#instances-total"), total, "{query}");
    }
    // The form keeps what was chosen.
    let page = get(&admin, &app, "/admin/instances?state=cancelled&q=Order").await;
    assert_eq!(page.attr("#f-q", "value").as_deref(), Some("Order"));
    assert_eq!(page.first("#f-state option[selected]"), "Cancelled");

    let french = get(&admin, &app, "/admin/instances?lang=fr&state=active").await;
    assert_eq!(french.lang(), "fr");
    assert_eq!(
        french.first("#instances-total"),
        "2\u{a0}instances".replace('\u{a0}', " ")
    );
    assert_eq!(french.first("label[for=f-by]"), "Démarrée par");
    assert_eq!(
        french
            .attr("table.instances td.state", "data-label")
            .as_deref(),
        Some("État")
    );
}

#[tokio::test]
async fn paging_keeps_the_filters_in_its_links() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;
    for n in 0..55 {
        start_as(
            &app,
            "order_payment",
            &format!("Order {n}"),
            &Actor::CommandLine,
        )
        .await;
        start_as(
            &app,
            "contract_review",
            &format!("Contract {n}"),
            &Actor::CommandLine,
        )
        .await;
    }
    let first = get(&admin, &app, "/admin/instances?by=cli&q=order").await;
    assert_eq!(ids(&first).len(), 50);
    assert_eq!(first.first("#instances-total"), "55 instances");
    let older = first.attr("a#older", "href").unwrap().replace("&amp;", "&");
    assert!(
        older.contains("by=cli") && older.contains("q=order"),
        "{older}"
    );
    let second = get(&admin, &app, &older).await;
    assert_eq!(ids(&second).len(), 5);
    assert!(
        second
            .text("table.instances a")
            .iter()
            .all(|t| t.starts_with("Order"))
    );
    assert!(second.attr("a#older", "href").is_none());
}

#[tokio::test]
async fn an_instance_page_shows_its_newest_links_and_history_and_pages_to_older_ones() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;
    let id = app.start("contract_review", "Many links").await;
    for _ in 0..60 {
        app.link(id, None).await;
    }
    // 1 started line and 60 issued ones; 60 links.
    let page = get(&admin, &app, &format!("/admin/instances/{id}")).await;
    assert_eq!(page.status, 200);
    assert_eq!(page.text("table.issued-links tbody tr").len(), 50);
    assert_eq!(page.text("table.history tbody tr").len(), 50);
    assert_eq!(page.first("#links-total"), "60 links issued, newest first.");
    assert!(page.first("#history-total").starts_with("61 events"));
    let older_links = page.attr("a#links-older", "href").unwrap();
    let older_history = page.attr("a#history-older", "href").unwrap();
    let links = get(&admin, &app, &older_links.replace("&amp;", "&")).await;
    assert_eq!(links.text("table.issued-links tbody tr").len(), 10);
    assert_eq!(
        links.text("table.history tbody tr").len(),
        50,
        "history stays put"
    );
    assert!(links.attr("a#links-older", "href").is_none());
    assert!(links.has("a#links-newest"));
    let history = get(&admin, &app, &older_history.replace("&amp;", "&")).await;
    let lines = history.text("table.history tbody tr td[data-label=Event]");
    assert_eq!(lines.len(), 11);
    assert_eq!(lines[0], "Started (ada)");
    // Bad cursors are the newest page, never an error.
    let bad = get(
        &admin,
        &app,
        &format!("/admin/instances/{id}?links_before=x&history_before=-1"),
    )
    .await;
    assert_eq!(bad.status, 200);
    assert_eq!(bad.text("table.issued-links tbody tr").len(), 50);

    let french = get(&admin, &app, &format!("/admin/instances/{id}?lang=fr")).await;
    assert_eq!(french.lang(), "fr");
    assert_eq!(
        french.first("#links-total"),
        "60 liens émis, les plus récents d'abord."
    );
    assert_eq!(french.first("a#history-older"), "Historique antérieur");
}

#[tokio::test]
async fn the_api_lists_a_page_at_a_time_within_the_tokens_scope() {
    let app = spawn(Flood::Memory).await;
    let mine = token(&app, "crm", None, None).await;
    let theirs = token(&app, "erp", None, None).await;
    let mut started = BTreeSet::new();
    for n in 0..7 {
        let body = format!(r#"{{"workflow":"contract_review","subject":{{"title":"Lease {n}"}}}}"#);
        let made = call(&app, "POST", "/api/v1/instances", &mine, Some(&body)).await;
        assert_eq!(made.status, 201, "{}", made.body);
        started.insert(json(&made)["id"].as_i64().unwrap());
    }
    let body = r#"{"workflow":"order_payment","subject":{"title":"Their order"}}"#;
    assert_eq!(
        call(&app, "POST", "/api/v1/instances", &theirs, Some(body))
            .await
            .status,
        201
    );
    app.start("contract_review", "An administrator's lease")
        .await;

    let mut seen = Vec::new();
    let mut path = "/api/v1/instances?limit=3".to_owned();
    loop {
        let page = call(&app, "GET", &path, &mine, None).await;
        assert_eq!(page.status, 200, "{}", page.body);
        let body = json(&page);
        for i in body["instances"].as_array().unwrap() {
            assert_eq!(i["started_by"], "api");
            seen.push(i["id"].as_i64().unwrap());
        }
        let Some(next) = body["next_cursor"].as_str() else {
            break;
        };
        path = format!("/api/v1/instances?limit=3&cursor={next}");
    }
    assert_eq!(seen.len(), 7, "only its own: {seen:?}");
    assert_eq!(seen.iter().copied().collect::<BTreeSet<_>>(), started);

    let search = json(
        &call(
            &app,
            "GET",
            "/api/v1/instances?q=LEASE%203&state=active&workflow=contract_review",
            &mine,
            None,
        )
        .await,
    );
    assert_eq!(search["instances"].as_array().unwrap().len(), 1);
    assert_eq!(search["instances"][0]["title"], "Lease 3");
    assert!(search["next_cursor"].is_null());
    let other = json(
        &call(
            &app,
            "GET",
            "/api/v1/instances?workflow=order_payment",
            &mine,
            None,
        )
        .await,
    );
    assert!(
        other["instances"].as_array().unwrap().is_empty(),
        "another token's are invisible"
    );
    let theirs_list = json(&call(&app, "GET", "/api/v1/instances", &theirs, None).await);
    assert_eq!(theirs_list["instances"].as_array().unwrap().len(), 1);

    for (query, field) in [
        ("cursor=42", "cursor"),
        ("cursor=zz", "cursor"),
        ("limit=0", "limit"),
        ("limit=201", "limit"),
        ("limit=ten", "limit"),
        ("state=lost", "state"),
    ] {
        let bad = call(
            &app,
            "GET",
            &format!("/api/v1/instances?{query}"),
            &mine,
            None,
        )
        .await;
        assert_eq!(bad.status, 422, "{query}");
        assert_eq!(json(&bad)["field"], field, "{query}");
        assert_eq!(json(&bad)["error"], "invalid");
    }
}

#[tokio::test]
async fn the_api_instance_view_pages_its_history() {
    let app = spawn(Flood::Memory).await;
    let crm = token(&app, "crm", None, None).await;
    let body = r#"{"workflow":"contract_review","subject":{"title":"Lease"}}"#;
    let id = json(&call(&app, "POST", "/api/v1/instances", &crm, Some(body)).await)["id"]
        .as_i64()
        .unwrap();
    for _ in 0..120 {
        app.link(id, None).await;
    }
    let view = json(&call(&app, "GET", &format!("/api/v1/instances/{id}"), &crm, None).await);
    assert_eq!(view["history"].as_array().unwrap().len(), 100);
    assert_eq!(view["history_total"], 121);
    assert_eq!(view["history"][99]["event"], "link_issued");
    let cursor = view["history_cursor"].as_str().unwrap();
    let older = json(
        &call(
            &app,
            "GET",
            &format!("/api/v1/instances/{id}?history_cursor={cursor}"),
            &crm,
            None,
        )
        .await,
    );
    assert_eq!(older["history"].as_array().unwrap().len(), 21);
    assert_eq!(older["history"][0]["event"], "started");
    assert!(older["history_cursor"].is_null());
    let bad = call(
        &app,
        "GET",
        &format!("/api/v1/instances/{id}?history_cursor=1"),
        &crm,
        None,
    )
    .await;
    assert_eq!(bad.status, 422);
    assert_eq!(json(&bad)["field"], "history_cursor");
}

/// A filter naming several workflows (an API token's scope) with a second filter reads its
/// ids workflow by workflow (`store::lists::page_ids`) and keeps the newest: paged a few at a
/// time backwards and forwards again, each instance of those workflows started that way comes
/// once, in order, and none of another workflow or another starter.
#[tokio::test]
async fn a_page_over_several_workflows_keeps_the_newest_of_each_in_order() {
    use orchestra::store::lists::{self, Filter, From};
    let app = spawn(Flood::Memory).await;
    let names = ["contract_review", "order_payment", "supplier_onboarding"];
    let mut workflow_ids = Vec::new();
    for name in names {
        let w = orchestra::store::workflows::by_name(&app.db, name)
            .await
            .unwrap()
            .unwrap();
        workflow_ids.push(w.id);
    }
    let mut expected = Vec::new();
    for i in 0..30 {
        let name = names[i % 3];
        let by = if i % 4 == 0 {
            Actor::Admin("ada".into())
        } else {
            Actor::CommandLine
        };
        let id = start_as(&app, name, &format!("Mixed {i}"), &by).await;
        if name != "order_payment" && matches!(by, Actor::CommandLine) {
            expected.push(id);
        }
    }
    expected.reverse(); // newest first
    let filter = Filter {
        workflows: Some(vec![workflow_ids[0], workflow_ids[2]]),
        started_by: Some("cli"),
        ..Filter::default()
    };
    let mut seen = Vec::new();
    let mut from = From::Newest;
    loop {
        let page = lists::page(&app.db, &filter, from, 4).await.unwrap();
        seen.extend(page.rows.iter().map(|r| r.id));
        match page.more {
            Some(last) => from = From::Before(last),
            None => break,
        }
    }
    assert_eq!(seen, expected, "backwards, newest first, each once");
    // Forwards from the oldest: the same rows, each page newest first.
    let oldest = *expected.last().unwrap();
    let mut forward = Vec::new();
    let mut from = From::After(oldest);
    loop {
        let page = lists::page(&app.db, &filter, from, 4).await.unwrap();
        let mut rows: Vec<i64> = page.rows.iter().map(|r| r.id).collect();
        rows.reverse();
        forward.extend(rows);
        match page.more {
            Some(next) => from = From::After(next),
            None => break,
        }
    }
    let mut older_first = expected.clone();
    older_first.reverse();
    assert_eq!(
        forward,
        older_first[1..],
        "forwards, oldest first, each once"
    );
}
