//! A claim sent back for changes, answered again in a real browser at desktop and phone width
//! in both languages; the workflow page checked by axe-core (Deque's engine, from npm:
//! `.ci/run` installs it and sets `ORCHESTRA_AXE` to its `axe.min.js`).

use std::time::Duration;

use crate::browser::{Browser, sign_in, start};
use crate::helpers::{Flood, TestApp, answer_step, spawn, state_of};

const CLAIM: &str = "form@employee: Expense claim | Amount* (number), Purpose* (choice: Travel / Meals / Other)\n\
                     review@manager: Manager review | show 1 | on reject back to 1 | rounds 3 | forward\n\
                     review@finance: Finance review | show 1 | only if Amount > 1000\n\
                     review[alice,bob,carol]: Directors sign off | 2 of 3\n";

/// axe-core's serious and critical violations on the page the browser shows, as `rule: count`
/// lines; `None` when axe-core is not installed here (and not required).
async fn serious_violations(b: &Browser) -> Option<Vec<String>> {
    let Some(path) = std::env::var_os("ORCHESTRA_AXE") else {
        assert!(
            std::env::var_os("ORCHESTRA_BROWSER_REQUIRED").is_none(),
            "ORCHESTRA_BROWSER_REQUIRED is set but ORCHESTRA_AXE names no axe.min.js"
        );
        eprintln!("axe-core check skipped: set ORCHESTRA_AXE to axe-core's axe.min.js");
        return None;
    };
    let source = std::fs::read_to_string(&path).expect("read axe.min.js");
    b.script(&format!("{source}\n;return true;")).await;
    // WebDriver waits for a promise a script returns.
    let found = b
        .script(
            "return axe.run(document, {resultTypes: ['violations']}).then(r => r.violations \
             .filter(v => v.impact === 'serious' || v.impact === 'critical') \
             .map(v => v.id + ': ' + v.nodes.length + ' ' + v.nodes.map(n => n.target.join(' ')).join(', ')));",
        )
        .await;
    Some(
        found
            .as_array()
            .expect("axe's answer is a list")
            .iter()
            .map(|v| v.as_str().unwrap_or_default().to_owned())
            .collect(),
    )
}

async fn claim_sent_back(app: &TestApp) -> (i64, i64) {
    let definition = orchestra::domain::workflow::Definition::parse(CLAIM).unwrap();
    let workflow = orchestra::store::workflows::create(
        &app.db,
        "claim",
        "Expense claim",
        &definition.to_json(),
    )
    .await
    .unwrap();
    let id = app.start("claim", "Team dinner").await;
    let employee = app.link(id, Some("employee")).await;
    let filed = answer_step(
        &app.client(),
        app,
        &employee,
        &[("amount", "1500"), ("purpose", "meals")],
    )
    .await;
    assert_eq!(filed.status, 200);
    let manager = app.link(id, Some("manager")).await;
    let rejected = answer_step(
        &app.client(),
        app,
        &manager,
        &[
            ("decision", "reject"),
            ("comment", "Split the bar bill out, please."),
        ],
    )
    .await;
    assert_eq!(rejected.status, 200);
    (workflow.expect("a new workflow"), id)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_sent_back_is_answered_again_in_a_real_browser() {
    let Some(mut b) = start().await else {
        return;
    };
    let app: TestApp = spawn(Flood::Memory).await;
    app.set(&[("orchestra.base_url", app.base.as_str())]).await;
    app.create_admin().await;
    b.app_base = app.base.clone();
    let (workflow, id) = claim_sent_back(&app).await;
    let employee = app.link_for(id, "employee", 3 * 86_400).await;
    for lang in ["en", "fr"] {
        for (width, height, name) in [
            (1280, 900, "doorway-sent-back"),
            (390, 844, "doorway-sent-back-phone"),
        ] {
            b.resize(width, height).await;
            b.goto(&format!("{employee}?lang={lang}")).await;
            let notice = b.text("p.notice").await;
            assert!(
                notice.contains("Split the bar bill out, please.") && notice.contains("manager"),
                "{lang}: {notice}"
            );
            assert_eq!(b.prop("#f-amount", "value").await, "1500");
            assert_eq!(b.prop("#f-purpose", "value").await, "meals");
            assert!(
                !b.scrolls_sideways().await,
                "the sent-back step ({lang}) at {width} px"
            );
            b.screenshot(&format!("{name}-{lang}")).await;
        }
    }
    // Answered again in the browser: the claim goes back to the manager.
    b.resize(1280, 900).await;
    b.goto(&format!("{employee}?lang=en")).await;
    b.clear("#f-amount").await;
    b.type_into("#f-amount", "800").await;
    b.follow("form.stack button[type=submit]").await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(state_of(&app, id).await, ("active".to_owned(), 1));

    // The manager's page offers to forward the step: the form opened, at both widths and in
    // both languages, with nothing sideways.
    let manager = app.link_for(id, "manager", 3 * 86_400).await;
    for lang in ["en", "fr"] {
        for (width, name) in [(1280, "doorway-forward"), (390, "doorway-forward-phone")] {
            b.resize(width, 900).await;
            b.goto(&format!("{manager}?lang={lang}")).await;
            b.click("details.forward summary").await;
            assert_eq!(
                b.count("details.forward[open] input[name=_fwd_email]")
                    .await,
                1
            );
            assert!(
                !b.scrolls_sideways().await,
                "the forward form ({lang}) at {width} px"
            );
            b.script("document.querySelector('details.forward').scrollIntoView(); return true;")
                .await;
            b.screenshot(&format!("{name}-{lang}")).await;
        }
    }

    // The instance page's hand-over forms, at both widths and in both languages.
    sign_in(&mut b).await;
    for lang in ["en", "fr"] {
        for (width, name) in [
            (1280, "instance-handover"),
            (390, "instance-handover-phone"),
        ] {
            b.resize(width, 900).await;
            b.goto(&format!("/admin/instances/{id}?lang={lang}#handover"))
                .await;
            assert!(b.count("section.handover form").await >= 1);
            assert!(
                !b.scrolls_sideways().await,
                "the hand-over ({lang}) at {width} px"
            );
            b.screenshot(&format!("{name}-{lang}")).await;
        }
    }

    // The workflow page: no serious accessibility violation, in either language or width.
    for lang in ["en", "fr"] {
        for width in [1280, 390] {
            b.resize(width, 900).await;
            b.goto(&format!("/admin/workflows/{workflow}?lang={lang}"))
                .await;
            if let Some(violations) = serious_violations(&b).await {
                assert!(
                    violations.is_empty(),
                    "{lang} at {width} px: {violations:?}"
                );
            }
            assert!(
                !b.scrolls_sideways().await,
                "the workflow page ({lang}) at {width} px"
            );
            let name = if width < 500 {
                "workflow-routes-phone"
            } else {
                "workflow-routes"
            };
            b.screenshot(&format!("{name}-{lang}")).await;
        }
    }
    b.check_console().await;
}
