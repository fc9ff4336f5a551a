//! A new site's dashboard: until a first instance has started, it lists the first steps in
//! order, each marked done or not, instead of a box of warnings any new site has; an error still
//! shows the box.

use crate::helpers::{Flood, Page, TestApp, get, spawn};

/// The first steps' links, and whether each is marked done, as the dashboard shows them.
async fn dashboard(app: &TestApp, lang: &str) -> (Page, Vec<(String, bool)>) {
    let admin = app.admin_client().await;
    let page = get(&admin, app, &format!("/admin?lang={lang}")).await;
    assert_eq!(page.status, 200);
    let steps = attrs(&page, "#first-steps li > a", "href")
        .into_iter()
        .zip(attrs(&page, "#first-steps li", "class"))
        .map(|(href, class)| (href, class == "done"))
        .collect();
    (page, steps)
}

/// An attribute of every element a selector finds, in order.
fn attrs(page: &Page, selector: &str, attr: &str) -> Vec<String> {
    let doc = scraper::Html::parse_document(&page.body);
    let selector = scraper::Selector::parse(selector).unwrap();
    doc.select(&selector)
        .filter_map(|e| e.value().attr(attr).map(str::to_owned))
        .collect()
}

#[tokio::test]
async fn a_new_sites_dashboard_lists_the_first_steps_instead_of_warnings() {
    let app = spawn(Flood::Memory).await;
    for (lang, title, report) in [
        ("en", "Getting started", "See the full status report"),
        ("fr", "Pour bien démarrer", "Voir le rapport d'état complet"),
    ] {
        let (page, steps) = dashboard(&app, lang).await;
        assert_eq!(page.first("#first-steps h2"), title, "{lang}");
        assert!(!page.has("section.attention"), "{lang}: no warning box");
        assert!(!page.has("#dashboard-status"), "{lang}");
        assert_eq!(
            steps,
            [
                ("/admin/config/orchestra".to_owned(), false),
                ("/admin/config/orchestra".to_owned(), false),
                ("/admin/workflows".to_owned(), false),
                ("/admin/instances/new".to_owned(), false),
                ("/admin/admins".to_owned(), false),
            ],
            "{lang}"
        );
        assert_eq!(
            attrs(&page, "#first-steps p.summary a", "href"),
            ["/admin/reports/status"]
        );
        assert_eq!(page.first("#first-steps p.summary a"), report, "{lang}");
        let words = page.text("#first-steps").join(" ");
        for jargon in ["flood", "bucket", "percentile"] {
            assert!(!words.to_lowercase().contains(jargon), "{lang}: {words}");
        }
    }
}

#[tokio::test]
async fn a_step_is_marked_done_once_it_is_done() {
    let app = spawn(Flood::Memory).await;
    app.set(&[("orchestra.base_url", "https://forms.example.org")])
        .await;
    orchestra::store::admins::create(&app.db, "grace", "not a real hash")
        .await
        .unwrap();
    let (page, steps) = dashboard(&app, "en").await;
    let done: Vec<bool> = steps.iter().map(|(_, done)| *done).collect();
    assert_eq!(done, [true, false, false, false, true]);
    assert_eq!(
        page.text("#first-steps li .step-state"),
        ["Done", "To do", "To do", "To do", "Done"]
    );
    let (french, _) = dashboard(&app, "fr").await;
    assert_eq!(
        french.text("#first-steps li .step-state"),
        ["Fait", "À faire", "À faire", "À faire", "Fait"]
    );
}

#[tokio::test]
async fn once_an_instance_has_started_the_dashboard_shows_the_warnings_again() {
    let app = spawn(Flood::Memory).await;
    app.start("contract_review", "Lease 2027").await;
    let (page, steps) = dashboard(&app, "en").await;
    assert!(steps.is_empty(), "{steps:?}");
    assert!(!page.has("#first-steps"));
    assert_eq!(page.first("#dashboard-status h2"), "Needs attention");
    assert!(page.has("section.attention li"));
}

/// The first steps in a real browser, at desktop and phone width, in both languages: nothing
/// scrolls sideways.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_steps_fit_a_phone_in_a_real_browser() {
    let Some(mut b) = crate::browser::start().await else {
        return;
    };
    let app = spawn(Flood::Memory).await;
    b.app_base = app.base.clone();
    app.admin_client().await;
    crate::browser::sign_in(&mut b).await;
    for lang in ["en", "fr"] {
        for (width, height, name) in [(1280, 900, "first-day"), (390, 844, "first-day-phone")] {
            b.resize(width, height).await;
            b.goto(&format!("/admin?lang={lang}")).await;
            assert_eq!(b.count("#first-steps li").await, 5, "{lang} at {width} px");
            assert!(!b.scrolls_sideways().await, "{lang} at {width} px");
            b.screenshot(&format!("{name}-{lang}")).await;
        }
    }
    b.check_console().await;
}

/// An error is never hidden behind the first steps: with the site's keys gone, a new site's
/// dashboard opens on the box that says so.
#[tokio::test]
async fn an_error_on_a_new_site_still_shows_the_box_that_needs_attention() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;
    let url = orchestra::store::normalize_url(&app.database.url)
        .unwrap()
        .1;
    let pool = sqlx::AnyPool::connect(&url).await.unwrap();
    sqlx::query("DELETE FROM site_keys")
        .execute(&pool)
        .await
        .unwrap();
    let page = get(&admin, &app, "/admin").await;
    assert_eq!(page.status, 200);
    assert!(!page.has("#first-steps"));
    assert_eq!(page.first("#dashboard-status h2"), "Needs attention");
}
