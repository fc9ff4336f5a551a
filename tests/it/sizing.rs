//! The sizing charts over real TCP: a known pattern of requests to each guarded address (the
//! doorway, provider notices, the sign-in's two limits), and the figures the settings pages and
//! the status report draw from it (requests in total, the busiest caller as a keyed hash, the
//! 99th percentile, refusals real or would-be).

use std::time::Duration;

use crate::helpers::{self, Flood, Page, TestApp, get, spawn};

const BACKENDS: [fn() -> Flood; 2] = [|| Flood::Memory, || Flood::Sql];
const SETTINGS: &str = "/admin/config/orchestra/interaction";
const LOGIN_SETTINGS: &str = "/admin/config/orchestra";
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

/// The current period's row of one chart's table (`doorway`, `notice`, `login-address`,
/// `login-account`), cell by cell.
fn current_row(page: &Page, chart: &str) -> [String; 6] {
    let cell = |class: &str| page.first(&format!("#sizing-{chart}-table tr.current td.{class}"));
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
                let page = get(&admin, &app, &helpers::with_lang(path, lang)).await;
                assert_eq!(page.status, 200, "{what} {path} {lang}");
                assert_eq!(
                    current_row(&page, "doorway"),
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
                for panel in ["total", "per-caller"] {
                    let svg = format!("#sizing-doorway-{panel} svg");
                    assert_eq!(
                        page.attr(&svg, "role").as_deref(),
                        Some("img"),
                        "{what} {path} {lang} {panel}"
                    );
                    assert!(!page.first(&format!("{svg} > title")).is_empty());
                    assert!(page.has(&format!("{svg} line.limit")), "{panel} limit line");
                    assert_eq!(
                        page.text(&format!("#sizing-doorway-{panel} .chart-legend li"))
                            .len(),
                        4
                    );
                }
                assert!(
                    page.has("#sizing-doorway-total rect.bar.refusals"),
                    "{what}"
                );
                assert_eq!(
                    page.first("#sizing-doorway-total .limit-label"),
                    "1000",
                    "{what}: the total limit's line is labelled"
                );
                let desc = page.first("#sizing-doorway-per-caller svg > desc");
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
    let column = |class: &str| page.text(&format!("#sizing-doorway-table tbody td.{class}"));
    // Newest first: the current period, then the one two hours back (the empty one between
    // is drawn, not listed).
    assert_eq!(column("requests"), ["1", "158"]);
    assert_eq!(column("busiest-count"), ["1", "5"]);
    assert_eq!(column("p99"), ["1", "3"]);
    assert_eq!(column("refused"), ["0", "2"]);
    assert_eq!(page.text("#sizing-doorway-table tr.current").len(), 1);
    // The total panel names no limit: that tier is off, and no line is drawn.
    assert!(!page.has("#sizing-doorway-total line.limit"));
    assert!(page.has("#sizing-doorway-per-caller line.limit"));
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
            assert!(
                !page.has("#sizing-doorway"),
                "{path}: a chart while nothing counts"
            );
        }
        // Counting, before any request: said in words, in both languages, with no chart.
        limits(&app, 5, 100, false).await;
        for (lang, words) in [
            ("en", "Nothing has been counted yet"),
            ("fr", "Rien n'a encore été compté"),
        ] {
            for path in [SETTINGS, STATUS] {
                let page = get(&admin, &app, &helpers::with_lang(path, lang)).await;
                assert!(
                    page.first("#sizing-doorway-empty").starts_with(words),
                    "{path} {lang}: {}",
                    page.first("#sizing-doorway-empty")
                );
                assert!(!page.has("#sizing-doorway svg"), "{path} {lang}");
            }
        }
        // Counting, then switched off: the history is not shown.
        status_of(&app, &made_up_link(1)).await;
        assert!(get(&admin, &app, SETTINGS).await.has("#sizing-doorway svg"));
        app.set(&[("orchestra.request_limits.enabled", "false")])
            .await;
        assert!(!get(&admin, &app, SETTINGS).await.has("#sizing-doorway"));
    }
}

/// The page's chart sections, markup and all.
fn charts_of(body: &str) -> String {
    body.split("<section class=\"sizing\"")
        .skip(1)
        .map(|rest| rest.split("</section>").next().unwrap_or(""))
        .collect()
}

async fn sign_in(app: &TestApp, client: &reqwest::Client, name: &str) -> u16 {
    let csrf = get(client, app, "/admin/login").await.csrf();
    helpers::read(client.post(app.url("/admin/login")).form(&[
        ("csrf", csrf.as_str()),
        ("name", name),
        ("password", "not the password"),
    ]))
    .await
    .status
}

async fn notice(app: &TestApp, payment: &str) -> u16 {
    helpers::read(
        app.client()
            .post(app.url("/notice/test-provider"))
            // Unsigned: counted per payment among forged notices, then refused as unsigned (or
            // too many).
            .body(format!(
                r#"{{"payment":"{payment}","outcome":"paid","timestamp":1}}"#
            )),
    )
    .await
    .status
}

/// Provider notices and the sign-in get the doorway's chart, each for its own limits: the
/// notices on the Interaction settings page, the sign-in's two limits on the Orchestra
/// settings page, all of them on the status report; each caller a keyed hash.
#[tokio::test]
async fn notices_and_sign_in_attempts_have_charts_of_their_own() {
    for flood in BACKENDS {
        let app = spawn(flood()).await;
        app.set(&[
            ("orchestra.request_limits.enabled", "true"),
            ("orchestra.request_limits.period", "3600"),
            ("notice.limits.per_payment", "2"),
            ("notice.limits.total", "50"),
            ("login.limits.per_address", "5"),
            ("login.limits.address_period", "3600"),
            ("login.limits.per_account", "2"),
            ("login.limits.account_period", "3600"),
        ])
        .await;
        // The administrator's own sign-in is the first attempt from this address.
        let admin = app.admin_client().await;

        // Notices: "p-a" four times (two refused), "p-b" and "p-c" once.
        let mut statuses = Vec::new();
        for payment in ["p-a", "p-a", "p-a", "p-a", "p-b", "p-c"] {
            statuses.push(notice(&app, payment).await);
        }
        assert_eq!(statuses.iter().filter(|&&s| s == 429).count(), 2);

        // Sign-in: after the administrator, alice twice, bob, carol (no account: counted per
        // address only), alice (her 2 failures from this address spent: refused by the
        // account), carol twice (the address's 5 spent: refused by the address).
        for name in ["alice", "bob"] {
            let hash = orchestra::domain::password::hash("her own password").unwrap();
            orchestra::store::admins::create(&app.db, name, &hash)
                .await
                .unwrap();
        }
        let visitor = app.client();
        let mut statuses = Vec::new();
        for name in ["alice", "alice", "bob", "carol", "alice", "carol", "carol"] {
            statuses.push(sign_in(&app, &visitor, name).await);
        }
        assert!(statuses[..4].iter().all(|&s| s != 429), "{statuses:?}");
        assert_eq!(statuses[4..], [429, 429, 429]);

        let keys = app.state.site.get().await.keys.clone();
        let hash = |h: String| h[..16].to_owned();
        // Forged notices' callers are named under a purpose of their own.
        let payment = hash(keys.keyed_hash("notice-forged", "p-a"));
        let address = hash(orchestra::domain::login::address_key(
            &keys,
            "127.0.0.1".parse().unwrap(),
        ));
        let alice_id = orchestra::store::admins::by_name(&app.db, "alice")
            .await
            .unwrap()
            .unwrap()
            .id;
        let alice = hash(
            orchestra::domain::login::account_keys(
                &keys,
                alice_id,
                0,
                "127.0.0.1".parse().unwrap(),
            )
            .pair,
        );
        // requests, busiest (hash, count), p99, refused, would refuse.
        let notices = ["6", &payment, "2", "2", "2", "0"].map(String::from);
        let by_address = ["7", &address, "5", "5", "2", "0"].map(String::from);
        let by_account = ["5", &alice, "2", "2", "1", "0"].map(String::from);
        for lang in ["en", "fr"] {
            let on = |path: &str| helpers::with_lang(path, lang);
            let interaction = get(&admin, &app, &on(SETTINGS)).await;
            assert_eq!(current_row(&interaction, "notice"), notices, "{lang}");
            assert!(!interaction.has("#sizing-login-address"), "{lang}");
            let settings = get(&admin, &app, &on(LOGIN_SETTINGS)).await;
            assert_eq!(settings.status, 200);
            assert_eq!(
                current_row(&settings, "login-address"),
                by_address,
                "{lang}"
            );
            assert_eq!(
                current_row(&settings, "login-account"),
                by_account,
                "{lang}"
            );
            assert!(!settings.has("#sizing-notice"), "{lang}");
            let status = get(&admin, &app, &on(STATUS)).await;
            assert_eq!(current_row(&status, "notice"), notices, "{lang}");
            assert_eq!(current_row(&status, "login-address"), by_address, "{lang}");
            assert_eq!(current_row(&status, "login-account"), by_account, "{lang}");
            // The doorway's limits are 0 as shipped: it counts nothing, and has no chart.
            assert!(!status.has("#sizing-doorway"), "{lang}");
            // No caller in the clear: no name, payment or address in any chart.
            for page in [&interaction, &settings, &status] {
                let charts = charts_of(&page.body);
                assert!(charts.contains("sizing-table"), "{lang}");
                for clear in ["alice", "bob", "carol", "p-a", "p-b", "127.0.0.1"] {
                    assert!(!charts.contains(clear), "{lang}: {clear} in a chart");
                }
            }
            // Each chart names its callers in the page's language, and ids stay unique.
            let legend = settings.text("#sizing-login-account-per-caller .chart-legend li");
            let expected = match lang {
                "en" => "The most tried account's attempts from one address",
                _ => "Les tentatives sur le compte le plus visé depuis une même adresse",
            };
            assert_eq!(legend[0], expected, "{lang}");
            assert_eq!(
                status.text("svg[role=img]").len(),
                6,
                "{lang}: two panels for each of notices and the sign-in's two limits"
            );
            assert_eq!(
                status.first("#sizing-notice-per-caller .limit-label"),
                "2",
                "{lang}: the per-payment limit's line"
            );
        }
    }
}
