//! The sizing chart over real TCP: a known pattern of doorway requests, and the figures the
//! Interaction settings page and the status report draw from it (requests in total, the
//! busiest link as a keyed hash, the 99th percentile, refusals real or would-be).

mod common;
mod support;

use std::time::Duration;

use common::{Flood, TestApp, spawn};
use support::{Page, get};

const BACKENDS: [fn() -> Flood; 2] = [|| Flood::Memory, || Flood::Sql];
const SETTINGS: &str = "/admin/config/orchestra/interaction";
const STATUS: &str = "/admin/reports/status";

/// A well-formed link to an instance that does not exist: counted and answered (404).
fn made_up_link(n: u64) -> String {
    format!(
        "/interaction/l.{}..4000000000.{}",
        900_000 + n,
        "cd".repeat(32)
    )
}

async fn limits(app: &TestApp, per_link: u64, total: u64, report_only: bool) {
    app.set(&[
        ("orchestra.request_limits.enabled", "true"),
        ("orchestra.request_limits.period", "3600"),
        ("interaction.limits.per_link", &per_link.to_string()),
        ("interaction.limits.total", &total.to_string()),
        (
            "interaction.limits.report_only",
            if report_only { "true" } else { "false" },
        ),
    ])
    .await;
}

async fn status_of(app: &TestApp, path: &str) -> u16 {
    app.client()
        .get(app.url(path))
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

/// Link A 7 times (a real link), link B 3 times, 148 other links once each: 158 requests from
/// 150 links. Returns A's path and the status codes A got.
async fn send_the_pattern(app: &TestApp) -> (String, Vec<u16>) {
    let id = app.start("contract_review", "Sizing").await;
    let a = app.link(id, Some("legal")).await;
    let mut a_statuses = Vec::new();
    for _ in 0..7 {
        a_statuses.push(status_of(app, &a).await);
    }
    for _ in 0..3 {
        assert_eq!(status_of(app, &made_up_link(0)).await, 404);
    }
    for n in 1..=148 {
        assert_eq!(status_of(app, &made_up_link(n)).await, 404);
    }
    (a, a_statuses)
}

/// The current period's row of the chart's table, cell by cell.
fn current_row(page: &Page) -> [String; 6] {
    let cell = |class: &str| page.first(&format!("#sizing-table tr.current td.{class}"));
    [
        cell("requests"),
        cell("busiest"),
        cell("busiest-count"),
        cell("p99"),
        cell("refused"),
        cell("would-refuse"),
    ]
}

#[tokio::test]
async fn the_chart_s_figures_are_the_requests_sent_enforcing_or_report_only() {
    for (backend, report_only) in [(0, false), (1, false), (0, true), (1, true)] {
        let app = spawn(BACKENDS[backend]()).await;
        let admin = app.admin_client().await;
        limits(&app, 5, 1000, report_only).await;
        let (a, a_statuses) = send_the_pattern(&app).await;
        let what = format!("flood backend {backend}, report only {report_only}");
        let refused = a_statuses.iter().filter(|&&s| s == 429).count();
        assert_eq!(refused, if report_only { 0 } else { 2 }, "{what}");

        let token = a.trim_start_matches("/interaction/").to_owned();
        let snapshot = app.state.site.get().await;
        let a_hash = snapshot.caller_id(&token).as_str()[..16].to_owned();
        let busiest = if report_only { "7" } else { "5" };
        let (real, would) = if report_only { ("0", "2") } else { ("2", "0") };
        for path in [SETTINGS, STATUS] {
            for lang in ["en", "fr"] {
                let page = get(&admin, &app, &support::with_lang(path, lang)).await;
                assert_eq!(page.status, 200, "{what} {path} {lang}");
                assert_eq!(
                    current_row(&page),
                    ["158", &a_hash, busiest, "3", real, would].map(String::from),
                    "{what} {path} {lang}: total, busiest (hash, count), p99, refused, would refuse"
                );
                // Nor any part of the link's signature, which is what makes it a credential.
                let signature = token.rsplit('.').next().unwrap();
                assert!(
                    !page.body.contains(&token) && !page.body.contains(&signature[..12]),
                    "{what} {path} {lang}: the link is on the page"
                );
                // Both panels are drawn, each labelled, with its limit as a line.
                for panel in ["total", "per-link"] {
                    let svg = format!("#sizing-{panel} svg");
                    assert_eq!(
                        page.attr(&svg, "role").as_deref(),
                        Some("img"),
                        "{what} {path} {lang} {panel}"
                    );
                    assert!(!page.first(&format!("{svg} > title")).is_empty());
                    assert!(page.has(&format!("{svg} line.limit")), "{panel} limit line");
                    assert_eq!(
                        page.text(&format!("#sizing-{panel} .chart-legend li"))
                            .len(),
                        4
                    );
                }
                assert!(page.has("#sizing-total rect.bar.refusals"), "{what}");
                assert_eq!(
                    page.first("#sizing-total .limit-label"),
                    "1000",
                    "{what}: the total limit's line is labelled"
                );
                let desc = page.first("#sizing-per-link svg > desc");
                let expected = match lang {
                    "en" => format!("The busiest link made at most {busiest} requests"),
                    _ => format!("Le lien le plus actif a fait au plus {busiest} requêtes"),
                };
                assert!(desc.contains(&expected), "{what} {lang}: {desc}");
            }
        }
    }
}

#[tokio::test]
async fn closed_periods_keep_their_figures_and_a_new_one_starts_from_nothing() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;
    limits(&app, 5, 0, false).await;
    send_the_pattern(&app).await;
    app.clock.advance(Duration::from_secs(2 * 3600));
    assert_eq!(status_of(&app, &made_up_link(1)).await, 404);
    let page = get(&admin, &app, SETTINGS).await;
    let column = |class: &str| page.text(&format!("#sizing-table tbody td.{class}"));
    // Newest first: the current period, then the one two hours back (the empty one between
    // is drawn, not listed).
    assert_eq!(column("requests"), ["1", "158"]);
    assert_eq!(column("busiest-count"), ["1", "5"]);
    assert_eq!(column("p99"), ["1", "3"]);
    assert_eq!(column("refused"), ["0", "2"]);
    assert_eq!(page.text("#sizing-table tr.current").len(), 1);
    // The per-link panel names no total limit: that tier is off, and no line is drawn.
    assert!(!page.has("#sizing-total line.limit"));
    assert!(page.has("#sizing-per-link line.limit"));
}

#[tokio::test]
async fn an_address_that_does_not_count_shows_no_chart_and_an_empty_history_says_so() {
    for flood in BACKENDS {
        let app = spawn(flood()).await;
        let admin = app.admin_client().await;
        // As shipped: nothing counts, so nothing is kept and nothing is drawn.
        for n in 0..5 {
            status_of(&app, &made_up_link(n)).await;
        }
        for path in [SETTINGS, STATUS] {
            let page = get(&admin, &app, path).await;
            assert_eq!(page.status, 200);
            assert!(!page.has("#sizing"), "{path}: a chart while nothing counts");
        }
        // Counting, before any request: said in words, in both languages, with no chart.
        limits(&app, 5, 100, false).await;
        for (lang, words) in [
            ("en", "Nothing has been counted yet"),
            ("fr", "Rien n'a encore été compté"),
        ] {
            for path in [SETTINGS, STATUS] {
                let page = get(&admin, &app, &support::with_lang(path, lang)).await;
                assert!(
                    page.first("#sizing-empty").starts_with(words),
                    "{path} {lang}: {}",
                    page.first("#sizing-empty")
                );
                assert!(!page.has("#sizing svg"), "{path} {lang}");
            }
        }
        // Counting, then switched off: the history is not shown.
        status_of(&app, &made_up_link(1)).await;
        assert!(get(&admin, &app, SETTINGS).await.has("#sizing svg"));
        app.set(&[("orchestra.request_limits.enabled", "false")])
            .await;
        assert!(!get(&admin, &app, SETTINGS).await.has("#sizing"));
    }
}
