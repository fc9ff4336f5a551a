//! Workflows people can trust, over real TCP on a real database: versions that never rewrite
//! history, links that answer only their participant's steps, links recorded and revoked one
//! by one, and payments confirmed only by the provider's signed notice.

use std::sync::Arc;

use orchestra::domain::interaction::payment;
use orchestra::store;

use crate::helpers::{
    self, Flood, Page, TestApp, answer_step, answers, get, on_postgres, read, sign_in, spawn,
    state_of,
};

const SUPPLIER: [(&str, &str); 4] = [
    ("company", "Acme"),
    ("contact_email", "buyer@acme.example"),
    ("yearly_volume", "12"),
    ("notes", ""),
];

const DELIVERY: [(&str, &str); 3] = [
    ("name", "Grace Hopper"),
    ("address", "1 Harbour Road"),
    ("email", "grace@example.org"),
];

/// Every line of an instance's history, whole, as the store holds it.
async fn history(app: &TestApp, id: i64) -> Vec<store::instances::HistoryRow> {
    store::instances::history(&app.db, id).await.unwrap()
}

/// Saves a new definition for a seeded workflow, as the edit form does.
async fn redefine(app: &TestApp, name: &str, text: &str) {
    let w = store::workflows::by_name(&app.db, name)
        .await
        .unwrap()
        .unwrap();
    let def = orchestra::domain::workflow::Definition::parse(text).unwrap();
    store::workflows::save(&app.db, w.id, &w.label, &def.to_json())
        .await
        .unwrap();
}

#[tokio::test]
async fn a_definition_edited_mid_flight_leaves_running_and_ended_instances_as_they_were() {
    let app = spawn(Flood::Memory).await;
    let client = app.client();
    // One instance ended, one at its second (last) step.
    let ended = app.start("supplier_onboarding", "Ended").await;
    let supplier = app.link(ended, Some("supplier")).await;
    assert_eq!(
        answer_step(&client, &app, &supplier, &SUPPLIER)
            .await
            .status,
        200
    );
    let reviewer = app.link(ended, Some("reviewer")).await;
    let done = answer_step(&client, &app, &reviewer, &[("decision", "approve")]).await;
    assert_eq!(done.status, 200);
    assert_eq!(state_of(&app, ended).await.0, "complete");
    let running = app.start("supplier_onboarding", "Running").await;
    let link = app.link(running, Some("supplier")).await;
    assert_eq!(
        answer_step(&client, &app, &link, &SUPPLIER).await.status,
        200
    );
    let ended_before = history(&app, ended).await;
    let running_before = history(&app, running).await;

    // Shortened to one step with other titles and another participant.
    redefine(
        &app,
        "supplier_onboarding",
        "form@buyer: Something else | Name*\n",
    )
    .await;

    assert_eq!(
        history(&app, ended).await,
        ended_before,
        "ended history unchanged"
    );
    assert_eq!(history(&app, running).await, running_before);
    // The running instance still waits for its reviewer on its own version: step 2 of 2.
    let review_link = app.link(running, Some("reviewer")).await;
    let page = get(&client, &app, &review_link).await;
    assert_eq!(page.status, 200);
    assert_eq!(
        page.first("p.progress").split(" · ").next(),
        Some("Step 2 / 2")
    );
    assert_eq!(page.first("section.step h2"), "Check the supplier");
    let answered = answer_step(&client, &app, &review_link, &[("decision", "approve")]).await;
    assert_eq!(answered.status, 200);
    assert_eq!(state_of(&app, running).await.0, "complete");
    // New instances take the newest version.
    let fresh = app.start("supplier_onboarding", "Fresh").await;
    assert_eq!(app.current_participant(fresh).await, "buyer");
    // The history names what was answered, at the time.
    let titles: Vec<String> = history(&app, running)
        .await
        .into_iter()
        .filter(|h| h.event.as_str() == "answered")
        .map(|h| format!("{}/{}/{}", h.step_title, h.kind, h.participant))
        .collect();
    assert_eq!(
        titles,
        [
            "Supplier details/form/supplier",
            "Check the supplier/review/reviewer"
        ]
    );
}

#[tokio::test]
async fn the_workflow_page_lists_versions_and_refuses_to_delete_what_runs() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;
    let running = app.start("contract_review", "Lease").await;
    redefine(&app, "contract_review", "review@legal: Approve the lease\n").await;
    let w = store::workflows::by_name(&app.db, "contract_review")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(w.version, 2);

    let page = get(&admin, &app, &format!("/admin/workflows/{}", w.id)).await;
    assert_eq!(page.status, 200);
    let rows = page.text("table.versions tbody tr td.running");
    assert_eq!(
        rows,
        ["0", "1"],
        "version 2 runs nothing, version 1 runs one"
    );
    let edit = get(&admin, &app, &format!("/admin/workflows/{}/edit", w.id)).await;
    assert!(
        edit.first("p.notice")
            .contains("the one running instance stays")
    );

    // Deleting the workflow, or version 1, is refused while the instance runs.
    let form = get(&admin, &app, &format!("/admin/workflows/{}/delete", w.id)).await;
    assert_eq!(form.status, 200);
    let refused = answer_step(
        &admin,
        &app,
        &format!("/admin/workflows/{}/delete", w.id),
        &[("csrf", &form.csrf())],
    )
    .await;
    assert_eq!(refused.status, 409);
    assert!(
        refused
            .first(".errors")
            .contains("one instance is still running")
    );
    let path = format!("/admin/workflows/{}/versions/1/delete", w.id);
    let form = get(&admin, &app, &path).await;
    let refused = answer_step(&admin, &app, &path, &[("csrf", &form.csrf())]).await;
    assert_eq!(refused.status, 409);
    assert!(
        store::workflows::by_id(&app.db, w.id)
            .await
            .unwrap()
            .is_some()
    );

    // Once it ends, version 1 goes, then the workflow; the instance keeps its history.
    let legal = app.link(running, Some("legal")).await;
    let finance = app.link(running, Some("finance")).await;
    let client = app.client();
    answer_step(&client, &app, &legal, &[("decision", "approve")]).await;
    answer_step(&client, &app, &finance, &[("decision", "approve")]).await;
    assert_eq!(state_of(&app, running).await.0, "complete");
    let before = history(&app, running).await;
    let gone = answer_step(&admin, &app, &path, &[("csrf", &form.csrf())]).await;
    assert_eq!(gone.status, 303);
    let delete = format!("/admin/workflows/{}/delete", w.id);
    let gone = answer_step(&admin, &app, &delete, &[("csrf", &form.csrf())]).await;
    assert_eq!(gone.status, 303);
    assert!(
        store::workflows::by_id(&app.db, w.id)
            .await
            .unwrap()
            .is_none()
    );
    assert_eq!(history(&app, running).await, before);
    let instance = get(&admin, &app, &format!("/admin/instances/{running}")).await;
    assert_eq!(
        instance.status, 200,
        "an ended instance of a deleted workflow still shows"
    );
}

/// Posts whatever answers the step a page shows.
async fn answer_shown(app: &TestApp, link: &str, page: &Page) -> Page {
    let client = app.client();
    if page.has("section.step-form") {
        let fields = if page.has("#f-company") {
            &SUPPLIER[..]
        } else {
            &DELIVERY[..]
        };
        answer_step(&client, app, link, fields).await
    } else if page.has("section.step-review") {
        answer_step(&client, app, link, &[("decision", "approve")]).await
    } else {
        answer_step(&client, app, link, &[("action", "pay")]).await
    }
}

#[tokio::test]
async fn no_participant_can_answer_another_participants_step_in_any_seeded_workflow() {
    let app = spawn(Flood::Memory).await;
    let client = app.client();
    for (name, _, _) in orchestra::domain::workflow::seed::EXAMPLES {
        let id = app.start(name, "Every step").await;
        let w = store::workflows::by_name(&app.db, name)
            .await
            .unwrap()
            .unwrap();
        let def = orchestra::domain::workflow::Definition::from_json(&w.definition).unwrap();
        let everyone: Vec<String> = def
            .participants()
            .iter()
            .map(|p| p.as_str().to_owned())
            .collect();
        for (index, step) in def.steps.iter().enumerate() {
            let answering: Vec<&str> = step.participants().iter().map(|p| p.as_str()).collect();
            for other in everyone.iter().filter(|p| !answering.contains(&p.as_str())) {
                // A link for another participant, signed for this instance: it shows nothing to
                // answer, and posting every kind of answer records nothing.
                let keys = store::keys::load(&app.db).await.unwrap();
                let row = store::instances::by_id(&app.db, id).await.unwrap().unwrap();
                let foreign = format!(
                    "/interaction/{}",
                    orchestra::domain::capability::sign(
                        &keys,
                        &orchestra::domain::capability::Claims {
                            kind: orchestra::domain::capability::Kind::Link,
                            instance: id,
                            branch: orchestra::domain::workflow::Participant::parse(other)
                                .unwrap()
                                .claim(),
                            expires: app.clock.now_secs() + 3600,
                        },
                        &row.token
                    )
                );
                let before = history(&app, id).await;
                let page = get(&client, &app, &foreign).await;
                assert_eq!(page.status, 200, "{name} step {index} by {other}");
                assert_eq!(page.first("h1"), "Nothing to answer here");
                assert!(!page.has("section.step"), "{name} step {index} by {other}");
                for attempt in [
                    &[("decision", "approve"), ("_step", "1")][..],
                    &SUPPLIER[..],
                    &DELIVERY[..],
                    &[("action", "pay")][..],
                ] {
                    let tried = answer_step(&client, &app, &foreign, attempt).await;
                    assert!(tried.status < 500, "{name} step {index} by {other}");
                }
                assert_eq!(
                    history(&app, id).await,
                    before,
                    "{name} step {index} by {other}"
                );
                let started: i64 = store::payments::by_handle(&app.db, "", 0)
                    .await
                    .unwrap()
                    .map_or(0, |_| 1);
                assert_eq!(started, 0);
            }
            // The step's own participants answer it, and the instance moves on.
            for who in &answering {
                let link = app.link(id, Some(who)).await;
                let page = get(&client, &app, &link).await;
                assert!(page.has("section.step"), "{name} step {index} for {who}");
                let answered = answer_shown(&app, &link, &page).await;
                if page.has("section.step-payment") {
                    assert_eq!(answered.status, 303);
                    pay_by_notice(&app, id).await;
                } else {
                    assert!(matches!(answered.status, 200 | 303), "{name} {index} {who}");
                }
            }
        }
        assert_eq!(state_of(&app, id).await.0, "complete", "{name}");
    }
}

#[tokio::test]
async fn the_seeded_examples_use_participants_as_the_issue_describes() {
    let app = spawn(Flood::Memory).await;
    let client = app.client();
    // Supplier onboarding: the supplier's link shows nothing once the form is in.
    let id = app.start("supplier_onboarding", "Acme").await;
    let supplier = app.link(id, Some("supplier")).await;
    let after = answer_step(&client, &app, &supplier, &SUPPLIER).await;
    assert_eq!(after.status, 200);
    assert_eq!(
        after.first("p.done"),
        "Your answer was recorded. The next step is in other hands; there is nothing more for you to do."
    );
    let again = get(&client, &app, &supplier).await;
    assert!(
        !again.has("section.step-review"),
        "the supplier cannot review itself"
    );
    // Order payment: the payer's one link goes from the form straight on to the payment.
    let id = app.start("order_payment", "Order").await;
    let payer = app.link(id, Some("payer")).await;
    let after = answer_step(&client, &app, &payer, &DELIVERY).await;
    assert_eq!(after.status, 303, "the same link answers the payment next");
    assert!(get(&client, &app, &payer).await.has("section.step-payment"));
}

#[tokio::test]
async fn issuing_a_link_for_someone_with_nothing_left_or_on_an_ended_instance_is_refused() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;
    let id = app.start("supplier_onboarding", "Acme").await;
    let supplier = app.link(id, Some("supplier")).await;
    answer_step(&app.client(), &app, &supplier, &SUPPLIER).await;

    let page = get(&admin, &app, &format!("/admin/instances/{id}")).await;
    let offered = page.text("select#participant option");
    assert_eq!(
        offered,
        ["reviewer"],
        "the form offers who has something left"
    );
    let refused = answer_step(
        &admin,
        &app,
        &format!("/admin/instances/{id}/links"),
        &[
            ("csrf", &page.csrf()),
            ("participant", "supplier"),
            ("ttl", "1h"),
        ],
    )
    .await;
    assert_eq!(refused.status, 422);
    assert_eq!(
        refused.first("#link-error"),
        "supplier has nothing left to answer in this instance."
    );
    let unknown = answer_step(
        &admin,
        &app,
        &format!("/admin/instances/{id}/links"),
        &[
            ("csrf", &page.csrf()),
            ("participant", "payer"),
            ("ttl", "1h"),
        ],
    )
    .await;
    assert_eq!(unknown.status, 422);
    let links_before = store::links::list(&app.db, id).await.unwrap().len();
    assert_eq!(links_before, 1, "refusals record no link");
}

#[tokio::test]
async fn links_are_recorded_listed_and_revoked_one_by_one() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;
    let client = app.client();
    let id = app.start("contract_review", "Lease").await;
    let legal = app.link(id, Some("legal")).await;
    let finance = app.link(id, Some("finance")).await;
    let refusal = get(&client, &app, "/interaction/not-a-link").await;

    let page = get(&admin, &app, &format!("/admin/instances/{id}")).await;
    assert_eq!(
        page.text("table.issued-links td.participant"),
        ["finance", "legal"]
    );
    assert_eq!(
        page.text("table.issued-links td.link-state"),
        ["Active", "Active"]
    );
    // The record holds a keyed hash, never the link.
    let token = legal.trim_start_matches("/interaction/");
    let stored: Vec<String> = sqlx::query_scalar::<_, String>("SELECT hash FROM links")
        .fetch_all(&sqlx::AnyPool::connect(&app.database.url).await.unwrap())
        .await
        .unwrap();
    assert!(stored.iter().all(|h| h.len() == 64 && !h.contains(token)));

    // Revoke the legal link alone.
    let records = store::links::list(&app.db, id).await.unwrap();
    let legal_id = records
        .iter()
        .find(|l| l.participant == "legal")
        .unwrap()
        .id;
    let revoked = answer_step(
        &admin,
        &app,
        &format!("/admin/instances/{id}/links/{legal_id}/revoke"),
        &[("csrf", &page.csrf())],
    )
    .await;
    assert_eq!(revoked.status, 303);
    let gone = get(&client, &app, &legal).await;
    assert_eq!(gone.status, 404);
    assert_eq!(
        gone.body, refusal.body,
        "a revoked link gets the one refusal"
    );
    assert!(
        get(&client, &app, &finance)
            .await
            .has("section.step-review")
    );
    let page = get(&admin, &app, &format!("/admin/instances/{id}")).await;
    assert_eq!(
        page.text("table.issued-links td.link-state"),
        ["Active", "Revoked"]
    );
    let said: Vec<String> = history(&app, id)
        .await
        .into_iter()
        .map(|h| format!("{} {} {}", h.event.as_str(), h.participant, h.actor))
        .collect();
    assert!(said.contains(&format!("link_revoked legal admin:{}", helpers::ADMIN)));
    assert!(said.contains(&"link_issued legal cli".to_owned()));

    // Revoke all asks first; cancelling changes nothing.
    let confirm = get(&admin, &app, &format!("/admin/instances/{id}/revoke")).await;
    assert_eq!(confirm.status, 200);
    assert!(confirm.has("form button.danger"));
    assert_eq!(
        confirm.attr("a.secondary", "href").unwrap(),
        format!("/admin/instances/{id}")
    );
    assert!(
        get(&client, &app, &finance)
            .await
            .has("section.step-review")
    );
    let all = answer_step(
        &admin,
        &app,
        &format!("/admin/instances/{id}/revoke"),
        &[("csrf", &confirm.csrf())],
    )
    .await;
    assert_eq!(all.status, 303);
    assert_eq!(get(&client, &app, &finance).await.status, 404);
}

#[tokio::test]
async fn an_expired_link_gets_the_one_refusal_and_is_listed_expired() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;
    let id = app.start("contract_review", "Lease").await;
    let legal = app.link(id, Some("legal")).await;
    let refusal = get(&app.client(), &app, "/interaction/not-a-link").await;
    app.clock.advance(std::time::Duration::from_secs(3600));
    let late = get(&app.client(), &app, &legal).await;
    let late_body = crate::doorway::without_offer(&late.body);
    assert_eq!((late.status, late_body), (404, refusal.body));
    // The list reads the store's clock: the app's manual clock is far ahead of it, so only
    // the state wording is checked here, not which.
    let page = get(&admin, &app, &format!("/admin/instances/{id}")).await;
    assert_eq!(page.text("table.issued-links td.participant"), ["legal"]);
}

/// Starts the payment of an `order_payment` instance through its payer's link; returns the
/// provider's path.
pub(crate) async fn start_payment(app: &TestApp, id: i64) -> String {
    let client = app.client();
    let payer = app.link(id, Some("payer")).await;
    if get(&client, app, &payer).await.has("section.step-form") {
        assert_eq!(
            answer_step(&client, app, &payer, &DELIVERY).await.status,
            303
        );
    }
    let pay = answer_step(&client, app, &payer, &[("action", "pay")]).await;
    assert_eq!(pay.status, 303);
    pay.location()
}

/// A notice for the instance's pending payment, signed as the provider signs it.
pub(crate) async fn notice(app: &TestApp, id: i64, outcome: &str, at: i64) -> (String, String) {
    let reference: String = sqlx::query_scalar(
        "SELECT reference FROM payments WHERE instance_id = $1 ORDER BY id DESC LIMIT 1",
    )
    .bind(id)
    .fetch_one(&sqlx::AnyPool::connect(&app.database.url).await.unwrap())
    .await
    .unwrap();
    let body =
        serde_json::json!({"payment": reference, "outcome": outcome, "timestamp": at}).to_string();
    let keys = store::keys::load(&app.db).await.unwrap();
    let signature = payment::sign(&keys, body.as_bytes());
    (body, signature)
}

pub(crate) async fn send_notice(app: &TestApp, body: &str, signature: &str) -> Page {
    read(
        app.client()
            .post(app.url("/notice/test-provider"))
            .header("content-type", "application/json")
            .header(payment::SIGNATURE_HEADER, signature)
            .body(body.to_owned()),
    )
    .await
}

async fn pay_by_notice(app: &TestApp, id: i64) {
    let (body, signature) = notice(app, id, "paid", app.clock.now_secs()).await;
    let answer = send_notice(app, &body, &signature).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
}

#[tokio::test]
async fn a_return_trip_without_a_notice_pays_nothing() {
    let app = spawn(Flood::Memory).await;
    let id = app.start("order_payment", "Order").await;
    let provider = start_payment(&app, id).await;
    let handle = provider.trim_start_matches("/test-provider/");
    let client = app.client();

    for path in [
        format!("/interaction/{handle}?outcome=paid"),
        format!("/interaction/{handle}"),
    ] {
        let page = get(&client, &app, &path).await;
        assert_eq!(page.status, 200);
        assert_eq!(page.first("h1"), "Waiting for the payment");
        assert_eq!(
            page.attr("meta[http-equiv=refresh]", "content").as_deref(),
            Some("3")
        );
    }
    assert_eq!(state_of(&app, id).await, ("active".into(), 1));
    assert_eq!(answers(&app, id).await.len(), 1, "only the delivery form");

    // The notice pays; the same return trip now says so.
    pay_by_notice(&app, id).await;
    let page = get(&client, &app, &format!("/interaction/{handle}")).await;
    assert_eq!(page.first("h1"), "Payment confirmed");
    assert_eq!(state_of(&app, id).await.0, "complete");
}

#[tokio::test]
async fn the_test_provider_pays_through_a_signed_notice_and_cancel_lets_the_payer_try_again() {
    let app = spawn(Flood::Memory).await;
    let id = app.start("order_payment", "Order").await;
    let provider = start_payment(&app, id).await;
    let client = app.client();
    let page = get(&client, &app, &provider).await;
    assert_eq!(page.first("strong.amount"), "49.90 EUR");

    let cancelled = answer_step(&client, &app, &provider, &[("outcome", "failed")]).await;
    assert_eq!(cancelled.status, 303);
    let back = get(&client, &app, &cancelled.location()).await;
    assert!(back.has("section.step-payment"));
    assert!(
        back.has("p.notice-warning"),
        "a cancellation is a warning, not a success"
    );
    assert_eq!(state_of(&app, id).await, ("active".into(), 1));

    // Pay again: a new payment, paid through the provider's notice.
    let provider = start_payment(&app, id).await;
    let paid = answer_step(&client, &app, &provider, &[("outcome", "paid")]).await;
    assert_eq!(paid.status, 303);
    let back = get(&client, &app, &paid.location()).await;
    assert_eq!(back.first("h1"), "Payment confirmed");
    assert_eq!(state_of(&app, id).await.0, "complete");
    let recorded = answers(&app, id).await;
    assert_eq!(recorded[1]["status"], "paid");
    assert_eq!(recorded[1]["amount_cents"], 4990);
}

#[tokio::test]
async fn a_forged_stale_or_replayed_notice_changes_nothing() {
    let app = spawn(Flood::Memory).await;
    let id = app.start("order_payment", "Order").await;
    start_payment(&app, id).await;
    let now = app.clock.now_secs();
    let before = history(&app, id).await;

    let (body, _) = notice(&app, id, "paid", now).await;
    let forged = send_notice(&app, &body, &"0".repeat(64)).await;
    let (stale, stale_sig) = notice(&app, id, "paid", now - 301).await;
    let stale = send_notice(&app, &stale, &stale_sig).await;
    let (future, future_sig) = notice(&app, id, "paid", now + 301).await;
    let future = send_notice(&app, &future, &future_sig).await;
    let unsigned = send_notice(&app, &body, "").await;
    let garbage = send_notice(&app, "{not json", "").await;
    for refused in [&forged, &stale, &future, &unsigned, &garbage] {
        assert_eq!(refused.status, 400);
        assert_eq!(
            refused.body, r#"{"error":"refused"}"#,
            "every refusal is the same"
        );
    }
    assert_eq!(history(&app, id).await, before);

    let (body, signature) = notice(&app, id, "paid", now).await;
    let first = send_notice(&app, &body, &signature).await;
    assert_eq!(first.body, r#"{"changed":true,"state":"paid"}"#);
    let after = history(&app, id).await;
    let replayed = send_notice(&app, &body, &signature).await;
    assert_eq!(replayed.status, 200);
    assert_eq!(replayed.body, r#"{"changed":false,"state":"paid"}"#);
    let (failed, failed_sig) = notice(&app, id, "failed", now).await;
    let late_failure = send_notice(&app, &failed, &failed_sig).await;
    assert_eq!(late_failure.body, r#"{"changed":false,"state":"paid"}"#);
    assert_eq!(history(&app, id).await, after);
}

#[tokio::test]
async fn concurrent_notices_make_exactly_one_change() {
    let app = Arc::new(spawn(Flood::Memory).await);
    let id = app.start("order_payment", "Order").await;
    start_payment(&app, id).await;
    let (body, signature) = notice(&app, id, "paid", app.clock.now_secs()).await;

    let mut tasks = Vec::new();
    for _ in 0..24 {
        let (app, body, signature) = (app.clone(), body.clone(), signature.clone());
        tasks.push(tokio::spawn(async move {
            send_notice(&app, &body, &signature).await
        }));
    }
    let mut changed = 0;
    for t in tasks {
        let page = t.await.unwrap();
        assert_eq!(page.status, 200, "{}", page.body);
        let v: serde_json::Value = serde_json::from_str(&page.body).unwrap();
        assert_eq!(v["state"], "paid");
        if v["changed"] == true {
            changed += 1;
        }
    }
    assert_eq!(changed, 1, "one notice made the change, the rest joined it");
    let paid: Vec<_> = answers(&app, id)
        .await
        .into_iter()
        .filter(|a| a["status"] == "paid")
        .collect();
    assert_eq!(paid.len(), 1);
    assert_eq!(state_of(&app, id).await.0, "complete");
}

#[tokio::test]
async fn a_recording_that_fails_leaves_the_notice_usable() {
    let app = spawn(Flood::Memory).await;
    let id = app.start("order_payment", "Order").await;
    start_payment(&app, id).await;
    let (body, signature) = notice(&app, id, "paid", app.clock.now_secs()).await;
    let pool = sqlx::AnyPool::connect(&app.database.url).await.unwrap();
    // The history refuses every new line: recording the payment's answer fails.
    if on_postgres() {
        sqlx::query(
            "CREATE FUNCTION refuse() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'injected'; END $$ LANGUAGE plpgsql",
        )
        .execute(&pool)
        .await
        .unwrap();
        sqlx::query(
            "CREATE TRIGGER refuse BEFORE INSERT ON history FOR EACH ROW EXECUTE FUNCTION refuse()",
        )
        .execute(&pool)
        .await
        .unwrap();
    } else {
        sqlx::query("CREATE TRIGGER refuse BEFORE INSERT ON history BEGIN SELECT RAISE(ABORT, 'injected'); END")
            .execute(&pool)
            .await
            .unwrap();
    }

    let failed = send_notice(&app, &body, &signature).await;
    assert_eq!(failed.status, 500);
    let state: String = sqlx::query_scalar("SELECT state FROM payments WHERE instance_id = $1")
        .bind(id)
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(
        state, "pending",
        "the payment's change was rolled back with the answer"
    );

    sqlx::query("DROP TRIGGER refuse ON history")
        .execute(&pool)
        .await
        .or(sqlx::query("DROP TRIGGER refuse").execute(&pool).await)
        .unwrap();
    let retried = send_notice(&app, &body, &signature).await;
    assert_eq!(retried.body, r#"{"changed":true,"state":"paid"}"#);
    assert_eq!(state_of(&app, id).await.0, "complete");
}

#[tokio::test]
async fn two_payment_starts_at_once_answer_without_a_server_error() {
    let app = Arc::new(spawn(Flood::Memory).await);
    let id = app.start("order_payment", "Order").await;
    let payer = app.link(id, Some("payer")).await;
    assert_eq!(
        answer_step(&app.client(), &app, &payer, &DELIVERY)
            .await
            .status,
        303
    );

    for _round in 0..3 {
        let mut tasks = Vec::new();
        for _ in 0..8 {
            let (app, payer) = (app.clone(), payer.clone());
            tasks.push(tokio::spawn(async move {
                answer_step(&app.client(), &app, &payer, &[("action", "pay")]).await
            }));
        }
        for t in tasks {
            let page = t.await.unwrap();
            assert_eq!(page.status, 303, "{}", page.body);
            assert!(page.location().starts_with("/test-provider/h."));
        }
    }
    let pending: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM payments WHERE instance_id = $1 AND state = 'pending'",
    )
    .bind(id)
    .fetch_one(&sqlx::AnyPool::connect(&app.database.url).await.unwrap())
    .await
    .unwrap();
    assert_eq!(pending, 1, "every start joined the one payment under way");
}

#[tokio::test]
async fn the_status_report_warns_while_the_test_provider_takes_payments_on_an_https_site() {
    let app = spawn(Flood::Memory).await;
    let line = |r: &orchestra::domain::status::Report| {
        r.checks
            .iter()
            .find(|c| c.id == "payment_provider")
            .unwrap()
            .severity
    };
    let report = orchestra::domain::status::build(&app.db, "memory").await;
    assert_eq!(line(&report), orchestra::domain::status::Severity::Ok);
    app.set(&[("orchestra.base_url", "https://flows.example.org")])
        .await;
    let report = orchestra::domain::status::build(&app.db, "memory").await;
    assert_eq!(line(&report), orchestra::domain::status::Severity::Warning);
    app.set(&[("orchestra.test_provider", "false")]).await;
    let report = orchestra::domain::status::build(&app.db, "memory").await;
    assert_eq!(line(&report), orchestra::domain::status::Severity::Ok);
    // Switched off, the provider's pages are not found and a payment step cannot start.
    let id = app.start("order_payment", "Order").await;
    let payer = app.link(id, Some("payer")).await;
    answer_step(&app.client(), &app, &payer, &DELIVERY).await;
    let pay = answer_step(&app.client(), &app, &payer, &[("action", "pay")]).await;
    assert_eq!(pay.status, 503);
    assert!(pay.has(".errors"));
}

#[tokio::test]
async fn an_admin_reads_the_history_in_words() {
    let app = spawn(Flood::Memory).await;
    let id = app.start("contract_review", "Lease").await;
    let legal = app.link(id, Some("legal")).await;
    answer_step(
        &app.client(),
        &app,
        &legal,
        &[("decision", "reject"), ("comment", "No.")],
    )
    .await;
    let admin = sign_in_admin(&app).await;
    let page = get(&admin, &app, &format!("/admin/instances/{id}")).await;
    let cells = page.text("table.history td div");
    assert!(
        cells.contains(&"Decision: Rejected".to_owned()),
        "{cells:?}"
    );
    assert!(cells.contains(&"Comment: No.".to_owned()));
    let fr = get(&admin, &app, &format!("/admin/instances/{id}?lang=fr")).await;
    assert!(
        fr.text("table.history td div")
            .contains(&"Décision\u{202f}: Refusé".to_owned())
    );
}

async fn sign_in_admin(app: &TestApp) -> reqwest::Client {
    app.create_admin().await;
    sign_in(app).await
}

/// Applies only the first migration, as the previous main left a database.
async fn previous_schema(url: &str) -> sqlx::AnyPool {
    helpers::schema_before(url, 2).await
}

async fn exec(pool: &sqlx::AnyPool, sql: &str, args: &[&str]) {
    let mut q = sqlx::query(sql);
    for a in args {
        q = q.bind(*a);
    }
    q.execute(pool).await.unwrap();
}

#[tokio::test]
async fn a_database_made_by_the_previous_schema_upgrades_and_its_links_keep_working() {
    let database = helpers::fresh_database().await;
    let pool = previous_schema(&database.url).await;
    // What the previous main wrote: keys, the examples as they were (no participants), an
    // instance half way through each, one ended, their history in the old answer format.
    let keys = orchestra::domain::keys::SiteKeys::from_bytes([7; 32], [9; 32]);
    let hex = |b: [u8; 32]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    exec(
        &pool,
        "INSERT INTO site_keys (id, private_key, hash_salt, created_at) VALUES (1, $1, $2, 1700000000)",
        &[&hex([7; 32]), &hex([9; 32])],
    )
    .await;
    let old = |text: &str| {
        orchestra::domain::workflow::Definition::parse(text)
            .unwrap()
            .to_json()
    };
    let supplier_json = old(
        "form: Supplier details | Company*, Contact email* (email)\nreview: Check the supplier\n",
    );
    assert!(!supplier_json.contains("participant"), "the old JSON shape");
    exec(&pool, "INSERT INTO workflows (name, label, definition, created_at, updated_at) VALUES ('supplier_onboarding', 'Supplier onboarding', $1, 1700000000, 1700000000)", &[&supplier_json]).await;
    exec(&pool, "INSERT INTO workflows (name, label, definition, created_at, updated_at) VALUES ('contract_review', 'Contract review', $1, 1700000000, 1700000000)", &[&old("review[legal,finance]: Approve the contract\n")]).await;
    for (workflow, title, step, state) in [
        ("1", "Acme", "1", "active"),
        ("2", "Lease", "0", "active"),
        ("2", "Old lease", "1", "complete"),
    ] {
        exec(&pool, &format!("INSERT INTO instances (workflow_id, subject_title, subject_body, token, step_index, state, created_at, updated_at) VALUES ({workflow}, $1, '', $2, {step}, $3, 1700000000, 1700000000)"), &[title, &format!("token-{title}"), state]).await;
    }
    for (instance, step, branch, event, answer) in [
        (1, 0, "", "started", "{}"),
        (1, 0, "", "link_issued", "{}"),
        (
            1,
            0,
            "",
            "answered",
            r#"{"fields":{"company":"Acme","contact_email":"a@acme.example"}}"#,
        ),
        (2, 0, "", "started", "{}"),
        (
            2,
            0,
            "legal",
            "answered",
            r#"{"decision":"approve","comment":""}"#,
        ),
        (
            3,
            0,
            "legal",
            "answered",
            r#"{"decision":"approve","comment":""}"#,
        ),
        (
            3,
            0,
            "finance",
            "answered",
            r#"{"decision":"approve","comment":""}"#,
        ),
        (3, 1, "", "complete", "{}"),
    ] {
        exec(&pool, &format!("INSERT INTO history (instance_id, step_index, branch, event, answer, at) VALUES ({instance}, {step}, $1, $2, $3, 1700000000)"), &[branch, event, answer]).await;
    }
    exec(
        &pool,
        "INSERT INTO handles (hash, instance_id, expires) VALUES ('an-old-handle', 1, 2000000000)",
        &[],
    )
    .await;
    pool.close().await;

    // The new code opens it: the upgrade runs, and the links signed before it still work.
    let url = database.url.clone();
    let app = helpers::spawn_on(database, |_, clock| {
        Arc::new(orchestra::limits::flood::MemoryFlood::new(4096, clock))
    })
    .await;
    let sign = |instance: i64, branch: Option<&str>, token: &str| {
        format!(
            "/interaction/{}",
            orchestra::domain::capability::sign(
                &keys,
                &orchestra::domain::capability::Claims {
                    kind: orchestra::domain::capability::Kind::Link,
                    instance,
                    branch: branch.map(str::to_owned),
                    expires: app.clock.now_secs() + 3600,
                },
                token
            )
        )
    };
    let client = app.client();
    // The supplier onboarding's old link (no participant) answers its review, as it did.
    let acme = sign(1, None, "token-Acme");
    let page = get(&client, &app, &acme).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert_eq!(page.first("section.step-review h2"), "Check the supplier");
    assert_eq!(
        answer_step(&client, &app, &acme, &[("decision", "approve")])
            .await
            .status,
        200
    );
    assert_eq!(state_of(&app, 1).await.0, "complete");
    // The contract's finance link completes the step legal answered before the upgrade.
    let finance = sign(2, Some("finance"), "token-Lease");
    assert_eq!(
        answer_step(&client, &app, &finance, &[("decision", "approve")])
            .await
            .status,
        200
    );
    assert_eq!(state_of(&app, 2).await.0, "complete");
    // The history before the upgrade names its steps now, from version 1.
    let ended = history(&app, 3).await;
    assert_eq!(ended[0].step_title, "Approve the contract");
    assert_eq!(ended[0].participant, "legal");
    // Version 1 holds the old definition; saving makes version 2; the workflows list works.
    let w = store::workflows::by_name(&app.db, "supplier_onboarding")
        .await
        .unwrap()
        .unwrap();
    assert_eq!((w.version, w.definition), (1, supplier_json));
    // The admin pages read the old answers, and a new link can be issued and recorded.
    let admin = app.admin_client().await;
    let shown = get(&admin, &app, "/admin/instances/1").await;
    assert_eq!(shown.status, 200);
    assert!(
        shown
            .text("table.history td div")
            .contains(&"company: Acme".to_owned())
    );
    let lease = app.start("contract_review", "New lease").await;
    assert!(
        app.link(lease, Some("legal"))
            .await
            .starts_with("/interaction/l.")
    );
    let provider_key: Option<String> = sqlx::query_scalar("SELECT provider_key FROM site_keys")
        .fetch_one(
            &sqlx::AnyPool::connect(&store::normalize_url(&url).unwrap().1)
                .await
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(
        provider_key.map(|k| k.len()),
        Some(64),
        "a provider key was made"
    );
}

#[tokio::test]
async fn an_attacker_gets_one_plain_refusal_from_the_notice_route_and_the_provider() {
    let app = spawn(Flood::Memory).await;
    let id = app.start("order_payment", "Order").await;
    let provider = start_payment(&app, id).await;
    let before = history(&app, id).await;
    let (body, signature) = notice(&app, id, "paid", app.clock.now_secs()).await;
    let refused = send_notice(&app, &body, &"0".repeat(64)).await;

    // An oversized body, a body padded past the limit, a wrong content type: the same refusal.
    let huge = format!("{{\"payment\":\"{}\"}}", "x".repeat(8192));
    let padded = format!("{}{}", body, " ".repeat(5000));
    for page in [
        send_notice(&app, &huge, &signature).await,
        send_notice(&app, &padded, &signature).await,
    ] {
        assert_eq!(
            (page.status, page.body.as_str()),
            (400, refused.body.as_str())
        );
        assert_eq!(page.header("x-content-type-options"), Some("nosniff"));
    }
    // The provider's buttons refuse a cross-site post, and a handle that is not one.
    let cross = read(
        app.client()
            .post(app.url(&provider))
            .header("sec-fetch-site", "cross-site")
            .form(&[("outcome", "paid")]),
    )
    .await;
    assert_eq!(cross.status, 403);
    let mut forged = provider.clone();
    forged.pop();
    let page = answer_step(&app.client(), &app, &forged, &[("outcome", "paid")]).await;
    assert_eq!(page.status, 404);
    assert!(page.has("h1"), "the themed page, not a framework message");
    let odd = answer_step(&app.client(), &app, &provider, &[("outcome", "refunded")]).await;
    assert_eq!(odd.status, 400);
    assert_eq!(history(&app, id).await, before, "nothing was recorded");
    assert_eq!(state_of(&app, id).await, ("active".into(), 1));
}

/// Issue 20: nothing ended an instance. An administrator cancels one (a confirmation page, a
/// reason): it ends as cancelled, its links and its payment return get the one refusal any bad
/// link gets, the pending payment is closed so a later notice is answered and changes nothing,
/// the history says who and why (escaped), and the page offers no more revokes or cancel.
#[tokio::test]
async fn a_cancelled_instances_links_handles_and_notices_change_nothing() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;
    let id = app.start("order_payment", "Order").await;
    let provider = start_payment(&app, id).await;
    let handle = provider.trim_start_matches("/test-provider/").to_owned();
    let payer = app.link(id, Some("payer")).await;
    let client = app.client();
    let refusal = get(&client, &app, "/interaction/not-a-link").await;
    assert_eq!(get(&client, &app, &payer).await.status, 200);
    let shown = get(&admin, &app, &format!("/admin/instances/{id}")).await;
    assert!(shown.has("a#cancel-instance"));

    let path = format!("/admin/instances/{id}/cancel");
    let form = get(&admin, &app, &path).await;
    assert_eq!(form.status, 200);
    assert!(form.has("form textarea#reason") && form.has("form button.danger"));
    let french = get(&admin, &app, &helpers::with_lang(&path, "fr")).await;
    assert!(
        french.first("h1").starts_with("Annuler #"),
        "{}",
        french.first("h1")
    );
    // Back to English (the choice is kept in a cookie).
    get(&admin, &app, &helpers::with_lang(&path, "en")).await;
    let done = answer_step(
        &admin,
        &app,
        &path,
        &[
            ("csrf", &form.csrf()),
            ("reason", "  Customer <b>withdrew</b>  "),
        ],
    )
    .await;
    assert_eq!(
        (done.status, done.location().as_str()),
        (303, path.trim_end_matches("/cancel"))
    );
    assert_eq!(state_of(&app, id).await.0, "cancelled");

    // Every link and handle of it: the one refusal, word for word.
    // (Named, not printed: a link is a credential, even in a test's message.)
    for (what, path) in [
        ("the payer's link", payer.clone()),
        ("the payment return", format!("/interaction/{handle}")),
        ("the provider's page", provider.clone()),
    ] {
        let page = get(&client, &app, &path).await;
        assert_eq!(page.status, 404, "{what}");
        if path.starts_with("/interaction/") {
            assert_eq!(page.body, refusal.body, "{what}");
        }
    }
    // The payment is closed: the provider's later notice is answered and changes nothing.
    let state: String = sqlx::query_scalar("SELECT state FROM payments WHERE instance_id = $1")
        .bind(id)
        .fetch_one(&sqlx::AnyPool::connect(&app.database.url).await.unwrap())
        .await
        .unwrap();
    assert_eq!(state, "cancelled");
    let before = history(&app, id).await;
    let (body, signature) = notice(&app, id, "paid", app.clock.now_secs()).await;
    let answer = send_notice(&app, &body, &signature).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(
        history(&app, id).await,
        before,
        "the notice changed nothing"
    );
    assert_eq!(state_of(&app, id).await.0, "cancelled");

    // The history says who and why, once.
    let cancelled: Vec<_> = before
        .iter()
        .filter(|h| h.event == orchestra::domain::workflow::history::Event::Cancelled)
        .collect();
    assert_eq!(cancelled.len(), 1);
    assert_eq!(cancelled[0].actor, format!("admin:{}", helpers::ADMIN));
    let page = get(&admin, &app, &format!("/admin/instances/{id}")).await;
    assert_eq!(page.first("dd.state"), "Cancelled");
    // The reason as typed, trimmed, and text: no element made of it.
    assert!(
        page.text("td div")
            .iter()
            .any(|t| t == "Reason: Customer <b>withdrew</b>"),
        "{:?}",
        page.text("td div")
    );
    assert!(!page.has("td div b"), "escaped");
    assert!(!page.has("a#cancel-instance"), "nothing left to cancel");
    assert!(!page.body.contains(&format!("/admin/instances/{id}/revoke")));
    assert!(
        !page.has("table.issued-links form"),
        "no revoke buttons on an ended instance"
    );

    // Twice is refused, and changes nothing; so is a new link.
    let again = answer_step(
        &admin,
        &app,
        &path,
        &[("csrf", &form.csrf()), ("reason", "")],
    )
    .await;
    assert_eq!(again.status, 409);
    assert!(
        again.first(".errors").contains("already ended"),
        "{}",
        again.first(".errors")
    );
    assert_eq!(history(&app, id).await, before);
    let issued = answer_step(
        &admin,
        &app,
        &format!("/admin/instances/{id}/links"),
        &[
            ("csrf", &form.csrf()),
            ("participant", "payer"),
            ("ttl", "1h"),
        ],
    )
    .await;
    assert_eq!(issued.status, 422);
}

/// A reason longer than the cancel keeps is refused beside the field, keeping what was typed;
/// nothing changes. An instance that is not there is the 404 page.
#[tokio::test]
async fn a_cancel_with_a_reason_too_long_keeps_it_and_cancels_nothing() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;
    let id = app.start("contract_review", "Lease").await;
    let legal = app.link(id, Some("legal")).await;
    let path = format!("/admin/instances/{id}/cancel");
    let form = get(&admin, &app, &path).await;
    let long = "é".repeat(orchestra::domain::instance::MAX_REASON + 1);
    let refused = answer_step(
        &admin,
        &app,
        &path,
        &[("csrf", &form.csrf()), ("reason", &long)],
    )
    .await;
    assert_eq!(refused.status, 422, "{}", refused.body);
    assert_eq!(refused.first("textarea#reason"), long);
    assert!(refused.has("p.field-error[data-field=reason]"));
    assert_eq!(state_of(&app, id).await.0, "active");
    assert_eq!(
        get(&app.client(), &app, &legal).await.status,
        200,
        "its links still work"
    );
    let missing = get(&admin, &app, "/admin/instances/999999/cancel").await;
    assert_eq!(missing.status, 404);
}

/// A workflow whose instances have all ended may be deleted: a cancel ends the last one.
#[tokio::test]
async fn a_workflow_whose_last_running_instance_is_cancelled_can_be_deleted() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;
    let id = app.start("contract_review", "Lease").await;
    let w = store::workflows::by_name(&app.db, "contract_review")
        .await
        .unwrap()
        .unwrap();
    let delete = format!("/admin/workflows/{}/delete", w.id);
    let form = get(&admin, &app, &delete).await;
    let refused = answer_step(&admin, &app, &delete, &[("csrf", &form.csrf())]).await;
    assert_eq!(refused.status, 409);
    let cancel = format!("/admin/instances/{id}/cancel");
    let done = answer_step(
        &admin,
        &app,
        &cancel,
        &[("csrf", &form.csrf()), ("reason", "")],
    )
    .await;
    assert_eq!(done.status, 303);
    let gone = answer_step(&admin, &app, &delete, &[("csrf", &form.csrf())]).await;
    assert_eq!(gone.status, 303, "{}", gone.body);
    assert!(
        store::workflows::by_id(&app.db, w.id)
            .await
            .unwrap()
            .is_none()
    );
}

/// A site made by an earlier release has the examples in English alone: on its next start an
/// example still exactly as shipped gets its French words (and the review its view of the
/// supplier's form) as a new version; an example an administrator changed is left alone.
#[tokio::test]
async fn examples_left_as_shipped_get_their_french_words_on_upgrade() {
    let app = spawn(Flood::Memory).await;
    redefine(
        &app,
        "supplier_onboarding",
        "form@supplier: Supplier details | Company*, Contact email* (email), Yearly volume (number), Notes (long)\n\
         review@reviewer: Check the supplier\n",
    )
    .await;
    let changed = "review[legal,finance]: Approve the lease\n";
    redefine(&app, "contract_review", changed).await;
    let running = app.start("supplier_onboarding", "On the old version").await;
    let old_version = store::instances::by_id(&app.db, running)
        .await
        .unwrap()
        .unwrap()
        .version_id;

    orchestra::domain::workflow::seed::seed_examples(&app.db)
        .await
        .unwrap();

    let newest = |name: &'static str| {
        let db = app.db.clone();
        async move {
            let w = store::workflows::by_name(&db, name).await.unwrap().unwrap();
            orchestra::domain::workflow::Definition::from_json(&w.definition).unwrap()
        }
    };
    let supplier = newest("supplier_onboarding").await;
    assert_eq!(
        supplier.steps[0].title_in(orchestra::i18n::Lang::Fr),
        "Coordonnées du fournisseur"
    );
    assert_eq!(supplier.steps[1].shows, [0]);
    assert_eq!(
        newest("contract_review").await,
        orchestra::domain::workflow::Definition::parse(changed).unwrap(),
        "a changed example is the administrator's"
    );
    let still = store::instances::by_id(&app.db, running)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        still.version_id, old_version,
        "a running instance keeps its version"
    );
    // A second start changes nothing more.
    let versions = store::workflows::versions(&app.db, still.workflow_id)
        .await
        .unwrap()
        .len();
    orchestra::domain::workflow::seed::seed_examples(&app.db)
        .await
        .unwrap();
    assert_eq!(
        store::workflows::versions(&app.db, still.workflow_id)
            .await
            .unwrap()
            .len(),
        versions
    );
}

/// A database as the main before issue 20 left it (migrations 1 to 8): an administrator, a
/// workflow version, an instance started by an API token with a recorded link out. After the
/// upgrade the link answers, the token reads and starts, and the administrator signs in.
#[tokio::test]
async fn a_database_made_by_the_main_before_issue_20_upgrades_and_keeps_working() {
    use hmac::Mac;
    let database = helpers::fresh_database().await;
    let pool = helpers::schema_before(&database.url, 9).await;
    let keys =
        orchestra::domain::keys::SiteKeys::from_bytes([7; 32], [9; 32]).with_token_key([5; 32]);
    let hex = |b: [u8; 32]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    exec(
        &pool,
        "INSERT INTO site_keys (id, private_key, hash_salt, created_at, token_key) VALUES (1, $1, $2, 1700000000, $3)",
        &[&hex([7; 32]), &hex([9; 32]), &hex([5; 32])],
    )
    .await;
    let password = orchestra::domain::password::hash(helpers::PASSWORD).unwrap();
    exec(
        &pool,
        "INSERT INTO admins (name, password_hash, created_at) VALUES ($1, $2, 1700000000)",
        &[helpers::ADMIN, &password],
    )
    .await;
    let definition = orchestra::domain::workflow::Definition::parse(
        "review[legal,finance]: Approve the contract\n",
    )
    .unwrap()
    .to_json();
    exec(&pool, "INSERT INTO workflows (name, label, created_at, updated_at) VALUES ('contract_review', 'Contract review', 1700000000, 1700000000)", &[]).await;
    exec(&pool, "INSERT INTO workflow_versions (workflow_id, number, definition, created_at) VALUES (1, 1, $1, 1700000000)", &[&definition]).await;
    let token_text = "orch_0123456789abcdef0123456789abcdef";
    let mut mac = keys.token_hasher();
    mac.update(token_text.as_bytes());
    let token_hash = hex::encode(mac.finalize().into_bytes());
    exec(
        &pool,
        "INSERT INTO api_tokens (name, hash, created_at) VALUES ('crm', $1, 1700000000)",
        &[&token_hash],
    )
    .await;
    exec(&pool, "INSERT INTO instances (workflow_id, version_id, subject_title, subject_body, token, step_index, state, created_at, updated_at, api_token_id) VALUES (1, 1, 'Lease', '', 'instance-token', 0, 'active', 1700000000, 1700000000, 1)", &[]).await;
    exec(&pool, "INSERT INTO history (instance_id, step_index, branch, event, answer, at) VALUES (1, 0, '', 'started', '{}', 1700000000)", &[]).await;
    // The test apps' clock reads 1,900,000,000 seconds (2030): a day after it.
    let expires = 1_900_000_000 + 86_400;
    let link = orchestra::domain::capability::sign(
        &keys,
        &orchestra::domain::capability::Claims {
            kind: orchestra::domain::capability::Kind::Link,
            instance: 1,
            branch: Some("legal".into()),
            expires,
        },
        "instance-token",
    );
    exec(
        &pool,
        &format!("INSERT INTO links (instance_id, hash, participant, expires, issued_by, issued_at) VALUES (1, $1, 'legal', {expires}, 'cli', 1700000000)"),
        &[&keys.keyed_hash("link", &link)],
    )
    .await;
    pool.close().await;

    let app = helpers::spawn_on(database, |_, clock| {
        Arc::new(orchestra::limits::flood::MemoryFlood::new(4096, clock))
    })
    .await;
    // The link answers its step.
    let path = format!("/interaction/{link}");
    let page = get(&app.client(), &app, &path).await;
    assert_eq!(page.status, 200, "the link issued before the upgrade");
    assert!(page.has("section.step-review"));
    let answered = answer_step(&app.client(), &app, &path, &[("decision", "approve")]).await;
    assert_eq!(answered.status, 200);
    assert_eq!(answered.first("h1"), "Thank you");
    // The token reads its instance and starts another.
    let view = read(
        app.client()
            .get(app.url("/api/v1/instances/1"))
            .header("authorization", format!("Bearer {token_text}")),
    )
    .await;
    assert_eq!(view.status, 200, "{}", view.body);
    let started = read(
        app.client()
            .post(app.url("/api/v1/instances"))
            .header("authorization", format!("Bearer {token_text}"))
            .header("content-type", "application/json")
            .body(r#"{"workflow":"contract_review","subject":{"title":"After"}}"#),
    )
    .await;
    assert_eq!(started.status, 201, "{}", started.body);
    // The administrator signs in and sees the instance.
    let admin = sign_in(&app).await;
    let shown = get(&admin, &app, "/admin/instances/1").await;
    assert_eq!(shown.status, 200);
    assert_eq!(shown.first("h1"), "#1 Lease");
}

/// A version's running and ended figures, and a token's running figure, are kept by the starts,
/// ends and cancels themselves: after each they equal a count of the instances.
#[tokio::test]
async fn the_kept_counts_follow_starts_ends_and_cancels() {
    let app = spawn(Flood::Memory).await;
    let client = app.client();
    let w = store::workflows::by_name(&app.db, "contract_review")
        .await
        .unwrap()
        .unwrap();
    let url = app.database.url.clone();
    let truth = |version: i64| {
        let url = url.clone();
        async move {
            let pool = sqlx::AnyPool::connect(&store::normalize_url(&url).unwrap().1)
                .await
                .unwrap();
            let counted: (i64, i64) = sqlx::query_as(
                "SELECT CAST(COALESCE(SUM(CASE WHEN state = 'active' THEN 1 ELSE 0 END), 0) AS BIGINT), \
                 CAST(COALESCE(SUM(CASE WHEN state <> 'active' THEN 1 ELSE 0 END), 0) AS BIGINT) \
                 FROM instances WHERE version_id = $1",
            )
            .bind(version)
            .fetch_one(&pool)
            .await
            .unwrap();
            pool.close().await;
            counted
        }
    };
    let kept = |workflow: i64| {
        let db = app.db.clone();
        async move {
            store::workflows::versions(&db, workflow)
                .await
                .unwrap()
                .into_iter()
                .map(|v| (v.id, v.running, v.ended))
                .collect::<Vec<_>>()
        }
    };
    let a = app.start("contract_review", "A").await;
    let b = app.start("contract_review", "B").await;
    let _c = app.start("contract_review", "C").await;
    assert_eq!(kept(w.id).await, [(w.version_id, 3, 0)]);
    // A ends complete through its links; B is cancelled; C runs on.
    for branch in ["legal", "finance"] {
        let l = app.link(a, Some(branch)).await;
        let page = answer_step(&client, &app, &l, &[("decision", "approve")]).await;
        assert_eq!(page.status, 200);
    }
    orchestra::domain::instance::cancel(
        &app.db,
        b,
        &orchestra::domain::instance::Actor::CommandLine,
        "",
    )
    .await
    .unwrap();
    assert_eq!(kept(w.id).await, [(w.version_id, 1, 2)]);
    assert_eq!(truth(w.version_id).await, (1, 2));
    // A cancel of an ended instance changes nothing.
    assert!(
        orchestra::domain::instance::cancel(
            &app.db,
            b,
            &orchestra::domain::instance::Actor::CommandLine,
            ""
        )
        .await
        .is_err()
    );
    assert_eq!(kept(w.id).await, [(w.version_id, 1, 2)]);
}
