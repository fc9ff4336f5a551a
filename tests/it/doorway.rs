//! The interaction doorway over real TCP: each interaction kind answered end to end through a
//! link, the test provider's round trip on a continuation handle, the one refusal every bad
//! link gets, the credential headers, and the defence against cross-site posts.

use std::time::Duration;

use orchestra::domain::capability::{self, Claims, Kind};

use crate::helpers::{
    self, Flood, Page, TestApp, answer_step, answers, assert_credential_headers, event, events,
    get, read, sign_in, spawn, state_of, with_lang,
};

const SUPPLIER: [(&str, &str); 4] = [
    ("company", "Acme & Sons <Ltd>"),
    ("contact_email", "buyer@acme.example"),
    ("yearly_volume", "1200.5"),
    ("notes", "Deliveries on Tuesdays.\nNo pallets."),
];

const DELIVERY: [(&str, &str); 3] = [
    ("name", "Grace Hopper"),
    ("address", "1 Harbour Road\nPortsmouth"),
    ("email", "grace@example.org"),
];

/// A link signed with the app's keys for any claims, as a forger holding the keys would.
async fn signed(app: &TestApp, claims: &Claims, instance_token: &str) -> String {
    let keys = app.state.site.get().await.keys.clone();
    format!(
        "/interaction/{}",
        capability::sign(&keys, claims, instance_token)
    )
}

async fn instance_token(app: &TestApp, id: i64) -> String {
    orchestra::store::instances::by_id(&app.db, id)
        .await
        .unwrap()
        .unwrap()
        .token
}

/// Answers a review through a link.
async fn review(app: &TestApp, link: &str, decision: &str, comment: &str) -> Page {
    answer_step(
        &app.client(),
        app,
        link,
        &[("decision", decision), ("comment", comment)],
    )
    .await
}

/// Answers the delivery form of `order_payment`, then opens its payment step and posts it;
/// returns the provider's path (with its handle) the doorway redirected to.
async fn to_the_provider(app: &TestApp, link: &str) -> String {
    let client = app.client();
    let form = answer_step(&client, app, link, &DELIVERY).await;
    assert_eq!(form.status, 303, "the delivery form is accepted");
    let step = get(&client, app, link).await;
    assert!(step.has("section.step-payment"), "the payment step follows");
    let pay = answer_step(&client, app, link, &[("action", "pay")]).await;
    assert_eq!(pay.status, 303, "paying sends the payer to the provider");
    assert_credential_headers(&pay, "the redirect to the provider");
    pay.location()
}

/// Presses a button of the test provider's page (`paid` or `failed`): the provider sends its
/// signed notice, then the payer back. Returns the doorway path it sends them to.
async fn press(app: &TestApp, provider: &str, outcome: &str) -> String {
    let page = answer_step(&app.client(), app, provider, &[("outcome", outcome)]).await;
    assert_eq!(page.status, 303, "{}", page.body);
    assert_credential_headers(&page, "a provider button");
    page.location()
}

/// A link sent before links had a nonce (`l.{instance}.{branch}.{expires}.{signature}`) still
/// opens its step, and one of its form answers it, as it did (issue 20: old links keep working).
#[tokio::test]
async fn a_link_sent_before_links_had_a_nonce_still_works() {
    let app = spawn(Flood::Memory).await;
    let id = app.start("supplier_onboarding", "Acme onboarding").await;
    let keys = app.state.site.get().await.keys.clone();
    let who = app.current_participant(id).await;
    let claims = Claims {
        kind: Kind::Link,
        instance: id,
        branch: orchestra::domain::workflow::Participant::parse(&who).and_then(|p| p.claim()),
        expires: app.clock.now_secs() + 3600,
    };
    let old = capability::sign_without_nonce(&keys, &claims, &instance_token(&app, id).await);
    assert_eq!(old.split('.').count(), 5, "the old form");
    let link = format!("/interaction/{old}");
    let client = app.client();
    let page = get(&client, &app, &link).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert_eq!(page.first("section.step-form h2"), "Supplier details");
    let answered = answer_step(&client, &app, &link, &SUPPLIER).await;
    assert_eq!(answered.status, 200, "{}", answered.body);
    assert_eq!(state_of(&app, id).await.1, 1, "on to the review");
}

#[tokio::test]
async fn a_form_answered_through_its_link_moves_the_instance_on_to_the_next_step() {
    let app = spawn(Flood::Memory).await;
    let id = app.start("supplier_onboarding", "Acme onboarding").await;
    let link = app.link(id, None).await;
    let client = app.client();

    let page = get(&client, &app, &link).await;
    assert_eq!(page.status, 200);
    assert_eq!(
        page.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    assert_credential_headers(&page, "a form step");
    assert_eq!(page.first("h1.subject-title"), "Acme onboarding");
    assert_eq!(page.first(".subject-body"), "The body of the subject.");
    assert_eq!(page.first("section.step-form h2"), "Supplier details");
    assert_eq!(page.first("p.progress"), "Step 1 / 2");
    for field in ["company", "contact_email", "yearly_volume"] {
        assert!(page.has(&format!("form input[name={field}]")), "{field}");
    }
    assert!(page.has("form textarea[name=notes]"));
    assert_eq!(
        page.attr("input#f-contact_email", "type").as_deref(),
        Some("email")
    );

    let answered = answer_step(&client, &app, &link, &SUPPLIER).await;
    assert_eq!(answered.status, 200);
    assert_credential_headers(&answered, "an accepted form");
    assert_eq!(
        answered.first("p.done"),
        "Your answer was recorded. The next step is in other hands; there is nothing more for you to do.",
        "the review is the reviewer's, not the supplier's"
    );
    assert_eq!(state_of(&app, id).await, ("active".into(), 1));
    let fields = answers(&app, id).await[0]["fields"].clone();
    for (name, value) in SUPPLIER {
        let field = fields
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["name"] == name)
            .unwrap_or_else(|| panic!("{name} is recorded"));
        assert_eq!(field["value"], value, "{name} is recorded as typed");
    }
    assert_eq!(fields[1]["label"], "Contact email", "with the label it had");

    let reviewer = app.link(id, Some("reviewer")).await;
    let next = get(&client, &app, &reviewer).await;
    assert_eq!(next.status, 200);
    assert!(next.has("section.step-review"));
    assert_eq!(next.first("p.progress"), "Step 2 / 2");
    assert_eq!(next.first("section.step-review h2"), "Check the supplier");
}

#[tokio::test]
async fn a_rejected_form_keeps_what_was_typed_and_records_nothing() {
    let app = spawn(Flood::Memory).await;
    let id = app.start("supplier_onboarding", "Acme onboarding").await;
    let link = app.link(id, None).await;
    let before = events(&app, id).await;

    let typed = [
        ("company", "Acme & Sons <Ltd>"),
        ("contact_email", "not-an-email"),
        ("yearly_volume", "a great many"),
        ("notes", "Deliveries on Tuesdays.\nNo pallets."),
    ];
    let page = answer_step(&app.client(), &app, &link, &typed).await;

    assert_eq!(page.status, 422);
    assert_credential_headers(&page, "a rejected form");
    assert_eq!(
        page.first("section.step-form .errors"),
        "Some answers need your attention. Nothing was sent yet."
    );
    assert_eq!(
        page.attr("input#f-company", "value").as_deref(),
        Some("Acme & Sons <Ltd>")
    );
    assert_eq!(
        page.attr("input#f-contact_email", "value").as_deref(),
        Some("not-an-email")
    );
    assert_eq!(
        page.attr("input#f-yearly_volume", "value").as_deref(),
        Some("a great many")
    );
    assert_eq!(
        page.first("textarea#f-notes"),
        "Deliveries on Tuesdays.\nNo pallets."
    );
    assert_eq!(
        page.first("p.field-error[data-field=contact_email]"),
        "Enter an email address such as name@example.org."
    );
    assert_eq!(
        page.first("p.field-error[data-field=yearly_volume]"),
        "Enter a number, such as 12 or 4.5."
    );
    assert!(!page.has("p.field-error[data-field=company]"));
    assert!(!page.has("p.field-error[data-field=notes]"));
    assert_eq!(
        page.attr("input#f-contact_email", "aria-invalid")
            .as_deref(),
        Some("true")
    );
    assert_eq!(page.attr("input#f-company", "aria-invalid"), None);

    assert_eq!(events(&app, id).await, before, "nothing is recorded");
    assert_eq!(state_of(&app, id).await, ("active".into(), 0));
}

#[tokio::test]
async fn a_required_field_left_empty_is_named_beside_the_field() {
    let app = spawn(Flood::Memory).await;
    let id = app.start("supplier_onboarding", "Acme onboarding").await;
    let link = app.link(id, None).await;

    let page = answer_step(
        &app.client(),
        &app,
        &link,
        &[("company", "   "), ("contact_email", "buyer@acme.example")],
    )
    .await;

    assert_eq!(page.status, 422);
    assert_eq!(
        page.first("p.field-error[data-field=company]"),
        "This field is required."
    );
    assert_eq!(
        page.attr("input#f-contact_email", "value").as_deref(),
        Some("buyer@acme.example")
    );
    assert_eq!(page.text("p.field-error").len(), 1);
    assert!(answers(&app, id).await.is_empty());
}

#[tokio::test]
async fn an_approved_review_completes_the_instance_with_its_history_in_order() {
    let app = spawn(Flood::Memory).await;
    let id = app.start("supplier_onboarding", "Acme onboarding").await;
    let supplier = app.link(id, None).await;
    let client = app.client();
    assert_eq!(
        answer_step(&client, &app, &supplier, &SUPPLIER)
            .await
            .status,
        200
    );
    let link = app.link(id, None).await;

    let done = answer_step(
        &client,
        &app,
        &link,
        &[("decision", "approve"), ("comment", "All in order.")],
    )
    .await;

    assert_eq!(done.status, 200);
    assert_credential_headers(&done, "a thank-you page");
    assert_eq!(done.first("h1"), "Thank you");
    assert_eq!(
        done.first("p.done"),
        "Your answer was recorded, and everything is now complete."
    );
    assert_eq!(done.first("p.subject-title"), "Acme onboarding");
    assert_eq!(state_of(&app, id).await.0, "complete");
    assert_eq!(
        events(&app, id).await,
        [
            event(0, "", "started"),
            event(0, "", "link_issued"),
            event(0, "", "answered"),
            event(1, "", "link_issued"),
            event(1, "", "answered"),
            event(2, "", "complete"),
        ]
    );
    assert_eq!(
        answers(&app, id).await[1],
        serde_json::json!({ "decision": "approve", "comment": "All in order." })
    );

    let closed = get(&client, &app, &link).await;
    assert_eq!(closed.status, 200);
    assert_eq!(closed.first("h1"), "Nothing left to answer");
    assert!(
        !closed.has("form"),
        "a complete instance offers nothing to answer"
    );
}

#[tokio::test]
async fn a_rejection_needs_a_comment_and_then_ends_the_instance_rejected() {
    let app = spawn(Flood::Memory).await;
    let id = app.start("contract_review", "Lease renewal").await;
    let legal = app.link(id, Some("legal")).await;
    // Issued before the end: once the instance has ended, no link is issued for it.
    let finance = app.link(id, Some("finance")).await;
    let before = events(&app, id).await;

    let bare = review(&app, &legal, "reject", "  ").await;
    assert_eq!(bare.status, 422);
    assert_credential_headers(&bare, "a rejected review");
    assert_eq!(
        bare.text("p#comment-error.field-error"),
        ["Say why you reject it in the comment."]
    );
    assert_eq!(
        bare.attr("input[name=decision][value=reject]", "checked")
            .as_deref(),
        Some("")
    );
    assert_eq!(
        bare.attr("input[name=decision][value=approve]", "checked"),
        None
    );
    assert_eq!(events(&app, id).await, before, "nothing is recorded");

    let done = review(&app, &legal, "reject", "Clause 7 is unacceptable.").await;
    assert_eq!(done.status, 200);
    assert_eq!(
        done.first("p.done"),
        "The request was rejected; there is nothing more to answer."
    );
    assert_eq!(state_of(&app, id).await.0, "rejected");
    let history = events(&app, id).await;
    assert_eq!(
        history[history.len() - 2..],
        [event(0, "legal", "answered"), event(0, "", "rejected")]
    );
    assert_eq!(
        answers(&app, id).await,
        [serde_json::json!({ "decision": "reject", "comment": "Clause 7 is unacceptable." })]
    );

    let late = get(&app.client(), &app, &finance).await;
    assert_eq!(late.status, 200);
    assert_eq!(
        late.first("p.done"),
        "The request was rejected; there is nothing more to answer."
    );
    assert!(!late.has("form"));
}

#[tokio::test]
async fn a_review_without_a_decision_keeps_the_comment() {
    let app = spawn(Flood::Memory).await;
    let id = app.start("contract_review", "Lease renewal").await;
    let legal = app.link(id, Some("legal")).await;

    let page = answer_step(
        &app.client(),
        &app,
        &legal,
        &[("comment", "Not sure yet & thinking")],
    )
    .await;

    assert_eq!(page.status, 422);
    assert_eq!(page.text(".errors p"), ["Choose approve or reject."]);
    assert_eq!(page.first("textarea#comment"), "Not sure yet & thinking");
    assert!(answers(&app, id).await.is_empty());
}

#[tokio::test]
async fn parallel_branches_move_the_instance_on_only_when_both_have_answered() {
    let app = spawn(Flood::Memory).await;
    let id = app.start("contract_review", "Lease renewal").await;
    let legal = app.link(id, Some("legal")).await;
    let finance = app.link(id, Some("finance")).await;

    let shown = get(&app.client(), &app, &finance).await;
    assert_eq!(shown.status, 200);
    assert_eq!(shown.first("span.branch"), "finance");

    let first = review(&app, &legal, "approve", "").await;
    assert_eq!(first.status, 200);
    assert_eq!(
        first.first("p.done"),
        "Your answer was recorded. Others still have to answer this step."
    );
    assert_eq!(state_of(&app, id).await, ("active".into(), 0));

    let second = review(&app, &finance, "approve", "Within budget.").await;
    assert_eq!(second.status, 200);
    assert_eq!(
        second.first("p.done"),
        "Your answer was recorded, and everything is now complete."
    );
    assert_eq!(state_of(&app, id).await.0, "complete");
    assert_eq!(
        events(&app, id).await,
        [
            event(0, "", "started"),
            event(0, "", "link_issued"),
            event(0, "", "link_issued"),
            event(0, "legal", "answered"),
            event(0, "finance", "answered"),
            event(1, "", "complete"),
        ]
    );
}

#[tokio::test]
async fn a_branch_link_cannot_answer_twice() {
    let app = spawn(Flood::Memory).await;
    let id = app.start("contract_review", "Lease renewal").await;
    let legal = app.link(id, Some("legal")).await;
    assert_eq!(review(&app, &legal, "approve", "").await.status, 200);

    let again = review(&app, &legal, "reject", "Changed my mind.").await;
    assert_eq!(again.status, 303, "a stale answer goes to the link's page");
    assert_eq!(again.location(), legal, "without the thanks");
    let again = get(&app.client(), &app, &again.location()).await;

    assert_eq!(again.status, 200);
    assert_eq!(again.first("h1"), "Nothing to answer here");
    assert_eq!(
        again.first("p.done"),
        "This step was already answered with this link."
    );
    assert_eq!(
        answers(&app, id).await,
        [serde_json::json!({ "decision": "approve", "comment": "" })]
    );
    assert_eq!(state_of(&app, id).await, ("active".into(), 0));

    let reopened = get(&app.client(), &app, &legal).await;
    assert_eq!(reopened.status, 200);
    assert!(
        !reopened.has("form"),
        "a branch that has answered is not offered the form again"
    );
    assert_eq!(
        reopened.first("p.done"),
        "This step was already answered with this link."
    );
}

#[tokio::test]
async fn a_link_for_one_branch_cannot_answer_for_another() {
    let app = spawn(Flood::Memory).await;
    let id = app.start("contract_review", "Lease renewal").await;
    let legal = app.link(id, Some("legal")).await;
    let refusal = get(&app.client(), &app, "/interaction/not-a-link").await;
    let swapped = legal.replace(".legal.", ".finance.");
    assert!(swapped != legal);

    let shown = get(&app.client(), &app, &swapped).await;
    let posted = review(&app, &swapped, "approve", "").await;

    for page in [&shown, &posted] {
        assert_eq!(page.status, 404);
        assert_eq!(page.body, refusal.body);
    }
    // A form field naming another branch changes nothing: the link says which branch answers.
    let smuggled = answer_step(
        &app.client(),
        &app,
        &legal,
        &[("decision", "approve"), ("branch", "finance")],
    )
    .await;
    assert_eq!(smuggled.status, 200);
    let answered: Vec<_> = events(&app, id)
        .await
        .into_iter()
        .filter(|e| e.2 == "answered")
        .collect();
    assert_eq!(answered, [event(0, "legal", "answered")]);
    assert_eq!(state_of(&app, id).await, ("active".into(), 0));

    // A link for the default participant has nothing to answer on a step of named ones.
    let plain = signed(
        &app,
        &Claims {
            kind: Kind::Link,
            instance: id,
            branch: None,
            expires: app.clock.now_secs() + 60,
        },
        &instance_token(&app, id).await,
    )
    .await;
    let page = answer_step(&app.client(), &app, &plain, &[("decision", "approve")]).await;
    assert_eq!(page.status, 200);
    assert_eq!(page.first("h1"), "Nothing to answer here");
    assert_eq!(answers(&app, id).await.len(), 1);
}

/// A link to a missing instance reads the newest instance in its place (so both cost the
/// same): that row must never answer it, even for a forger who signs with the newest
/// instance's own token. Links and handles alike get the one refusal.
#[tokio::test]
async fn the_row_read_for_a_missing_instance_never_answers_its_link() {
    let app = spawn(Flood::Memory).await;
    let newest = app.start("contract_review", "Lease renewal").await;
    let token = instance_token(&app, newest).await;
    let client = app.client();
    for kind in [Kind::Link, Kind::Handle] {
        let forged = signed(
            &app,
            &Claims {
                kind,
                instance: newest + 1,
                branch: Some("legal".into()),
                expires: app.clock.now_secs() + 60,
            },
            &token,
        )
        .await;
        let page = get(&client, &app, &forged).await;
        assert_eq!(page.status, 404, "{kind:?}");
        assert_eq!(page.first("h1"), "This link cannot be used");
        let page = answer_step(&client, &app, &forged, &[("decision", "approve")]).await;
        assert_eq!(page.status, 404, "{kind:?}");
    }
    assert_eq!(answers(&app, newest).await.len(), 0);
}

#[tokio::test]
async fn the_test_provider_round_trip_records_the_payment_and_completes() {
    let app = spawn(Flood::Memory).await;
    let id = app.start("order_payment", "Order 1042").await;
    let link = app.link(id, None).await;
    let client = app.client();

    let step = to_the_provider(&app, &link).await;
    assert!(step.starts_with("/test-provider/h."));
    assert!(
        !step.contains('?'),
        "the amount is read from the payment, not the URL"
    );
    assert_eq!(state_of(&app, id).await, ("active".into(), 1));

    let provider = get(&client, &app, &step).await;
    assert_eq!(provider.status, 200);
    assert_credential_headers(&provider, "the provider page");
    assert_eq!(provider.first("h1"), "Test payment provider");
    assert_eq!(
        provider.first(".test-banner"),
        "TEST MODE: this is Orchestra's built-in test provider. No money moves."
    );
    assert_eq!(provider.first("strong.amount"), "49.90 EUR");
    assert!(provider.has("form button#pay") && provider.has("form button#cancel"));
    // The amount as the visitor's language writes it.
    let french = get(&app.client(), &app, &format!("{step}?lang=fr")).await;
    assert_eq!(french.first("strong.amount"), "49,90 EUR");
    let handle = step.strip_prefix("/test-provider/").unwrap();

    let back = press(&app, &step, "paid").await;
    assert_eq!(back, format!("/interaction/{handle}"), "back on the handle");
    let done = get(&client, &app, &back).await;
    assert_eq!(done.status, 200);
    assert_credential_headers(&done, "the payment return");
    assert_eq!(done.first("h1"), "Payment confirmed");
    assert_eq!(state_of(&app, id).await.0, "complete");
    let paid = &answers(&app, id).await[1];
    assert_eq!(
        (
            &paid["status"],
            &paid["amount"],
            &paid["amount_cents"],
            &paid["currency"],
            &paid["provider"]
        ),
        (
            &serde_json::json!("paid"),
            &serde_json::json!("49.90"),
            &serde_json::json!(4990),
            &serde_json::json!("EUR"),
            &serde_json::json!("test")
        )
    );
    assert_eq!(
        events(&app, id).await,
        [
            event(0, "", "started"),
            event(0, "", "link_issued"),
            event(0, "", "answered"),
            event(1, "", "answered"),
            event(2, "", "complete"),
        ]
    );
}

#[tokio::test]
async fn a_payment_return_shows_the_payment_again_and_records_nothing_more() {
    let app = spawn(Flood::Memory).await;
    let id = app.start("order_payment", "Order 1042").await;
    let link = app.link(id, None).await;
    let client = app.client();
    let step = to_the_provider(&app, &link).await;
    let back = press(&app, &step, "paid").await;
    let after = events(&app, id).await;

    for _ in 0..2 {
        let again = get(&client, &app, &back).await;
        assert_eq!(again.status, 200);
        assert_credential_headers(&again, "a return trip seen again");
        assert_eq!(again.first("h1"), "Payment confirmed");
    }
    // Pressing *Pay* again on the provider's page changes nothing: the notice joins.
    let settled = get(&client, &app, &step).await;
    assert_eq!(settled.first("p.settled"), "This payment is settled.");
    assert!(
        !settled.has("button#pay"),
        "a settled payment offers no button"
    );
    let pressed = answer_step(&client, &app, &step, &[("outcome", "paid")]).await;
    assert_eq!(pressed.status, 303);
    assert_eq!(events(&app, id).await, after);
}

#[tokio::test]
async fn a_cancelled_payment_shows_the_step_again_and_a_new_payment_pays() {
    let app = spawn(Flood::Memory).await;
    let id = app.start("order_payment", "Order 1042").await;
    let link = app.link(id, None).await;
    let client = app.client();
    let step = to_the_provider(&app, &link).await;
    let before = events(&app, id).await;

    let back = press(&app, &step, "failed").await;
    let cancelled = get(&client, &app, &back).await;

    assert_eq!(cancelled.status, 200);
    assert_credential_headers(&cancelled, "a cancelled return");
    assert!(cancelled.has("section.step-payment form button"));
    assert_eq!(
        cancelled.first("p.notice.notice-warning"),
        "The payment was cancelled. You can try again."
    );
    assert_eq!(
        events(&app, id).await,
        before,
        "a cancellation records nothing"
    );
    assert_eq!(state_of(&app, id).await, ("active".into(), 1));

    // Paying again from the page the handle shows starts a new payment.
    let again = answer_step(&client, &app, &back, &[("action", "pay")]).await;
    assert_eq!(again.status, 303);
    let provider = again.location();
    // Signed in the same second, the handle is the same one: it now returns to the new payment.
    let page = get(&client, &app, &provider).await;
    assert!(page.has("button#pay"), "the new payment is to be made");
    let back = press(&app, &provider, "paid").await;
    assert_eq!(
        get(&client, &app, &back).await.first("h1"),
        "Payment confirmed"
    );
    assert_eq!(state_of(&app, id).await.0, "complete");
}

#[tokio::test]
async fn a_plain_link_cannot_claim_a_payment_through_the_return_query() {
    let app = spawn(Flood::Memory).await;
    let id = app.start("order_payment", "Order 1042").await;
    let link = app.link(id, None).await;
    let client = app.client();
    assert_eq!(
        answer_step(&client, &app, &link, &DELIVERY).await.status,
        303
    );

    let page = get(&client, &app, &format!("{link}?outcome=paid")).await;

    assert_eq!(page.status, 200);
    assert!(page.has("section.step-payment"));
    assert!(
        !page.has("p.notice:not(.expires-soon)"),
        "no payment notice"
    );
    assert_eq!(answers(&app, id).await.len(), 1, "only the delivery form");
    assert_eq!(state_of(&app, id).await, ("active".into(), 1));
}

#[tokio::test]
async fn a_continuation_handle_expires_after_half_an_hour() {
    let app = spawn(Flood::Memory).await;
    let id = app.start("order_payment", "Order 1042").await;
    let link = app.link(id, None).await;
    let client = app.client();
    let step = to_the_provider(&app, &link).await;
    let paid = step.replace("/test-provider/", "/interaction/");
    assert_eq!(get(&client, &app, &paid).await.status, 200);
    let refusal = get(&client, &app, "/interaction/not-a-link").await;

    app.clock.advance(Duration::from_secs(30 * 60));
    let late = get(&client, &app, &paid).await;

    assert_eq!(late.status, 404);
    assert_eq!(late.body, refusal.body);
    assert_eq!(state_of(&app, id).await, ("active".into(), 1));
}

#[tokio::test]
async fn every_doorway_response_carries_the_credential_headers() {
    let app = spawn(Flood::Memory).await;
    let id = app.start("order_payment", "Order 1042").await;
    let link = app.link(id, None).await;
    let client = app.client();

    let cases = [
        ("a good link", get(&client, &app, &link).await),
        (
            "a good link in French",
            get(&client, &app, &with_lang(&link, "fr")).await,
        ),
        (
            "a malformed link",
            get(&client, &app, "/interaction/x").await,
        ),
        (
            "an over-long link",
            get(&client, &app, &format!("/interaction/{}", "a".repeat(400))).await,
        ),
        (
            "a rejected post",
            answer_step(&client, &app, &link, &[]).await,
        ),
        (
            "a refused post",
            answer_step(&client, &app, "/interaction/x", &[]).await,
        ),
        (
            "a cross-site post",
            read(
                client
                    .post(app.url(&link))
                    .header("sec-fetch-site", "cross-site")
                    .form(&[("name", "x")]),
            )
            .await,
        ),
        (
            "an accepted post",
            answer_step(&client, &app, &link, &DELIVERY).await,
        ),
        ("the payment step", get(&client, &app, &link).await),
        (
            "a payment post",
            answer_step(&client, &app, &link, &[("action", "pay")]).await,
        ),
        (
            "a provider page for a malformed handle",
            get(&client, &app, "/test-provider/x").await,
        ),
        ("a head request", read(client.head(app.url(&link))).await),
        (
            "a link with a trailing slash",
            get(&client, &app, &format!("{link}/")).await,
        ),
        (
            "a link with more after it",
            get(&client, &app, &format!("{link}/more")).await,
        ),
        (
            "a provider path with more after it",
            get(&client, &app, "/test-provider/x/more").await,
        ),
    ];
    let provider_path = cases[9].1.location();
    let provider = get(&client, &app, &provider_path).await;
    let done = get(&client, &app, &press(&app, &provider_path, "paid").await).await;

    let statuses: Vec<u16> = cases.iter().map(|(_, p)| p.status).collect();
    assert_eq!(
        statuses,
        [
            200, 200, 404, 404, 422, 404, 403, 303, 200, 303, 404, 200, 404, 404, 404
        ]
    );
    for (what, page) in &cases {
        assert_credential_headers(page, what);
    }
    assert_credential_headers(&provider, "the provider page");
    assert_credential_headers(&done, "the thank-you page after paying");
}

#[tokio::test]
async fn expired_tampered_wrong_branch_revoked_and_unknown_links_get_the_same_refusal() {
    let app = spawn(Flood::Memory).await;
    app.create_admin().await;
    let id = app.start("contract_review", "Lease renewal").await;
    let revoked_id = app.start("contract_review", "Revoked lease").await;
    let legal = app.link(id, Some("legal")).await;
    let token = instance_token(&app, id).await;
    let now = app.clock.now_secs();

    let expired = signed(
        &app,
        &Claims {
            kind: Kind::Link,
            instance: id,
            branch: Some("legal".into()),
            expires: now,
        },
        &token,
    )
    .await;
    let (head, signature) = legal.rsplit_once('.').unwrap();
    let flipped = if signature.starts_with('0') { "1" } else { "0" };
    let tampered_signature = format!("{head}.{flipped}{}", &signature[1..]);
    let later = (now + 3600 + 1).to_string();
    let tampered_expiry = legal.replace(&(now + 3600).to_string(), &later);
    let wrong_branch = legal.replace(".legal.", ".finance.");
    let unknown = signed(
        &app,
        &Claims {
            kind: Kind::Link,
            instance: id + 1000,
            branch: None,
            expires: now + 3600,
        },
        "no-such-token",
    )
    .await;
    let other = app.link(revoked_id, Some("legal")).await;
    let as_handle = legal.replacen("/interaction/l.", "/interaction/h.", 1);

    let admin = sign_in(&app).await;
    let page = get(&admin, &app, &format!("/admin/instances/{revoked_id}")).await;
    let revoke = read(
        admin
            .post(app.url(&format!("/admin/instances/{revoked_id}/revoke")))
            .form(&[("csrf", page.csrf().as_str())]),
    )
    .await;
    assert_eq!(revoke.status, 303);
    let revoked = other;

    let bad = [
        ("expired", expired),
        ("tampered signature", tampered_signature),
        ("tampered expiry", tampered_expiry),
        ("wrong branch", wrong_branch),
        ("revoked", revoked),
        ("unknown instance", unknown),
        ("a link presented as a handle", as_handle),
        ("malformed", "/interaction/l.1..2.zz".to_owned()),
    ];
    for lang in ["en", "fr"] {
        let mut bodies = Vec::new();
        for (what, link) in &bad {
            let client = app.client();
            let mut pages = vec![get(&client, &app, &with_lang(link, lang)).await];
            // An answer on a link that has just expired is given back to its holder instead
            // (`an_answer_on_a_link_that_has_just_expired_is_given_back_and_not_recorded`).
            if *what != "expired" {
                pages.push(
                    answer_step(
                        &client,
                        &app,
                        &with_lang(link, lang),
                        &[("decision", "approve")],
                    )
                    .await,
                );
            }
            for page in pages {
                assert_eq!(page.status, 404, "{what}");
                assert_eq!(
                    page.header("content-type"),
                    Some("text/html; charset=utf-8"),
                    "{what}"
                );
                assert_credential_headers(&page, what);
                assert_eq!(page.lang(), lang, "{what}");
                // Only the expired link is genuine: its holder is offered a fresh one.
                assert_eq!(page.has("form.fresh-link"), *what == "expired", "{what}");
                bodies.push(without_offer(&page.body));
            }
        }
        assert!(
            bodies.iter().all(|b| *b == bodies[0]),
            "every refusal in {lang} is the same, byte for byte"
        );
        let refused = helpers::Page {
            status: 404,
            headers: Default::default(),
            body: bodies[0].clone(),
        };
        let title = refused.first("h1");
        match lang {
            "en" => assert_eq!(title, "This link cannot be used"),
            _ => assert_eq!(title, "Ce lien ne peut pas être utilisé"),
        }
    }

    // The good link still works, and nothing was recorded by any of the refused posts.
    assert_eq!(get(&app.client(), &app, &legal).await.status, 200);
    assert!(answers(&app, id).await.is_empty());
    assert!(answers(&app, revoked_id).await.is_empty());
}

#[tokio::test]
async fn a_link_stops_working_the_second_it_expires() {
    let app = spawn(Flood::Memory).await;
    let id = app.start("contract_review", "Lease renewal").await;
    let legal = app.link(id, Some("legal")).await;
    let client = app.client();
    let refusal = get(&client, &app, "/interaction/not-a-link").await;

    app.clock.advance(Duration::from_secs(3599));
    assert_eq!(get(&client, &app, &legal).await.status, 200);

    app.clock.advance(Duration::from_secs(1));
    let late = get(&client, &app, &legal).await;
    assert_eq!(late.status, 404);
    // The one refusal, with the offer of a fresh link a genuine link's holder gets.
    assert_eq!(without_offer(&late.body), refusal.body);
    assert!(late.has("form.fresh-link"));
}

/// The app's own log lines: the test's own client and HTML parser log what they read, and
/// only the app's lines count.
pub(crate) fn app_lines(app: &TestApp) -> Vec<String> {
    let client_side = [
        "html5ever",
        "selectors",
        "scraper",
        "markup5ever",
        "reqwest",
        "cookie_store",
    ];
    app.logs()
        .lines()
        .filter(|l| !client_side.iter().any(|c| l.contains(&format!(" {c}"))))
        .map(str::to_owned)
        .collect()
}

/// A refused page without the fresh-link form a genuine link that expired or was voided gets:
/// the rest is the one refusal, byte for byte.
pub(crate) fn without_offer(body: &str) -> String {
    match (body.find("\n<form method=\"post\""), body.find("</form>")) {
        (Some(start), Some(end)) => {
            format!("{}{}", &body[..start], &body[end + "</form>\n".len()..])
        }
        _ => body.to_owned(),
    }
}

#[tokio::test]
async fn rotating_the_site_keys_voids_every_outstanding_link() {
    let app = spawn(Flood::Memory).await;
    let id = app.start("order_payment", "Order 1042").await;
    let link = app.link(id, None).await;
    let client = app.client();
    let step = to_the_provider(&app, &link).await;
    let paid = step.replace("/test-provider/", "/interaction/");
    let refusal = get(&client, &app, "/interaction/not-a-link").await;

    orchestra::domain::rotation::rotate_keys(&app.db)
        .await
        .unwrap();
    app.state.site.refresh().await;

    for path in [&link, &paid] {
        let page = get(&client, &app, path).await;
        assert_eq!(page.status, 404);
        assert_eq!(without_offer(&page.body), refusal.body);
    }
    assert_eq!(state_of(&app, id).await, ("active".into(), 1));
    let fresh = app.link(id, None).await;
    assert_eq!(get(&client, &app, &fresh).await.status, 200);
}

#[tokio::test]
async fn a_cross_site_post_is_refused_and_records_nothing() {
    let app = spawn(Flood::Memory).await;
    let id = app.start("contract_review", "Lease renewal").await;
    let legal = app.link(id, Some("legal")).await;
    let client = app.client();
    let host = app.base.trim_start_matches("http://").to_owned();
    let before = events(&app, id).await;

    let forged = [
        ("sec-fetch-site", "cross-site"),
        ("sec-fetch-site", "same-site"),
        ("origin", "https://evil.example"),
        ("origin", "null"),
    ];
    for (header, value) in forged {
        let page = read(
            client
                .post(app.url(&legal))
                .header(header, value)
                .form(&[("decision", "approve")]),
        )
        .await;
        assert_eq!(page.status, 403, "{header}: {value}");
        assert_credential_headers(&page, "a cross-site post");
        assert_eq!(page.first("h1"), "Not allowed", "{header}: {value}");
    }
    // A foreign origin is refused even when the browser says nothing else.
    let page = read(
        client
            .post(app.url(&legal))
            .header("origin", format!("http://{host}.evil.example"))
            .form(&[("decision", "approve")]),
    )
    .await;
    assert_eq!(page.status, 403);
    assert_eq!(events(&app, id).await, before, "nothing is recorded");

    let same_origin = read(
        client
            .post(app.url(&legal))
            .header("origin", app.base.as_str())
            .form(&[("decision", "approve")]),
    )
    .await;
    assert_eq!(same_origin.status, 303, "a same-origin post is answered");
    assert_eq!(same_origin.location(), format!("{legal}?thanks"));
    assert_eq!(answers(&app, id).await.len(), 1);
}

/// An origin is a scheme and a host: on a site whose base URL is https, a post whose
/// `Origin` is the same host over plain http came from another origin (a page a network
/// attacker can write), and is refused; the https origin is answered.
#[tokio::test]
async fn an_origin_on_the_other_scheme_is_another_site() {
    let app = spawn(Flood::Memory).await;
    let host = app.base.trim_start_matches("http://").to_owned();
    app.set(&[("orchestra.base_url", &format!("https://{host}"))])
        .await;
    let id = app.start("contract_review", "Lease renewal").await;
    let legal = app.link(id, Some("legal")).await;
    let client = app.client();
    let plain = read(
        client
            .post(app.url(&legal))
            .header("origin", format!("http://{host}"))
            .form(&[("decision", "approve")]),
    )
    .await;
    assert_eq!(plain.status, 403, "http:// under an https site");
    assert_eq!(answers(&app, id).await.len(), 0, "nothing is recorded");
    let secure = read(
        client
            .post(app.url(&legal))
            .header("origin", format!("https://{host}"))
            .form(&[("decision", "approve")]),
    )
    .await;
    assert_eq!(secure.status, 303, "the site's own origin is answered");
    assert_eq!(answers(&app, id).await.len(), 1);
}

#[tokio::test]
async fn no_link_or_handle_reaches_the_logs() {
    let app = spawn(Flood::Memory).await;
    let id = app.start("order_payment", "Order 1042").await;
    let link = app.link(id, None).await;
    let client = app.client();
    let step = to_the_provider(&app, &link).await;
    assert_eq!(get(&client, &app, &step).await.status, 200);
    let paid = press(&app, &step, "paid").await;
    assert_eq!(get(&client, &app, &paid).await.status, 200);
    let mut forged = paid.clone();
    forged.pop();
    assert_eq!(get(&client, &app, &forged).await.status, 404);

    let logs = app_lines(&app);
    assert!(logs.iter().any(|l| l.contains("step answered")));
    assert!(logs.iter().any(|l| l.contains("payment settled")));
    for secret in [&link, &paid] {
        let signature = secret
            .split('?')
            .next()
            .and_then(|p| p.rsplit('.').next())
            .unwrap();
        assert!(
            !logs.iter().any(|l| l.contains(signature)),
            "a credential was logged"
        );
    }
}

/// A link spelled slightly wrong matches no route and is not counted, but it is still a
/// credential: no log line of any level may hold it (the tests log at DEBUG).
#[tokio::test]
async fn a_link_spelled_slightly_wrong_reaches_no_log_line() {
    let app = spawn(Flood::Memory).await;
    let id = app.start("order_payment", "Order 2077").await;
    let link = app.link(id, None).await;
    let tail = link.strip_prefix("/interaction/").unwrap();
    let signature = tail.rsplit('.').next().unwrap().to_owned();
    let client = app.client();
    for path in [
        format!("//interaction/{tail}"),
        format!("/Interaction/{tail}"),
        format!("/%69nteraction/{tail}"),
        format!("/interaction%2F{tail}"),
        format!("/admin/{tail}"),
        format!("/api/{tail}"),
        format!("/test-provider%2F{tail}"),
    ] {
        let page = get(&client, &app, &path).await;
        assert_eq!(page.status, 404, "{path}");
    }
    let logs = app.logs();
    assert!(
        !logs.lines().any(|l| l.contains(&signature)),
        "a link spelled slightly wrong was logged"
    );
    assert!(
        logs.contains("(no route)"),
        "the requests were logged, without their paths"
    );
}

/// The test provider's pages resolve the handle they carry (a database read each), so they
/// are counted under the doorway's guard as that handle: a handle at its limit is refused on
/// the provider's pages too, and made-up handles there are counted like any other.
#[tokio::test]
async fn the_test_providers_pages_are_counted_as_the_handle_they_carry() {
    let app = spawn(Flood::Memory).await;
    let id = app.start("order_payment", "Order 3001").await;
    let link = app.link(id, None).await;
    let provider = to_the_provider(&app, &link).await;
    assert!(provider.starts_with("/test-provider/"), "{provider}");
    let handle = provider.strip_prefix("/test-provider/").unwrap();
    app.set(&[
        ("orchestra.request_limits.enabled", "true"),
        ("interaction.limits.per_link", "3"),
    ])
    .await;
    let client = app.client();
    // One count on the doorway's return path, two on the provider's page: the handle's three.
    let back = get(&client, &app, &format!("/interaction/{handle}")).await;
    assert_eq!(back.status, 200);
    for _ in 0..2 {
        assert_eq!(get(&client, &app, &provider).await.status, 200);
    }
    let refused = get(&client, &app, &provider).await;
    assert_eq!(
        refused.status, 429,
        "the provider's page counts as the handle"
    );
    assert_eq!(
        get(&client, &app, &format!("/interaction/{handle}"))
            .await
            .status,
        429,
        "and the doorway sees the same count"
    );
    let pressed = answer_step(&client, &app, &provider, &[("outcome", "paid")]).await;
    assert_eq!(pressed.status, 429, "a press is counted too");
    assert_eq!(
        state_of(&app, id).await.0,
        "active",
        "a refused press pays nothing"
    );

    // Made-up handles on the provider's pages are counted per handle as well.
    let made_up = format!("/test-provider/h.{id}..9999999999.{}", "0".repeat(64));
    for _ in 0..3 {
        assert_eq!(get(&client, &app, &made_up).await.status, 404);
    }
    assert_eq!(get(&client, &app, &made_up).await.status, 429);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_branches_answering_at_the_same_moment_complete_the_instance_once() {
    let app = spawn(Flood::Memory).await;
    for round in 0..5 {
        let id = app.start("contract_review", "Lease renewal").await;
        let legal = app.link(id, Some("legal")).await;
        let finance = app.link(id, Some("finance")).await;

        let (a, b) = tokio::join!(
            review(&app, &legal, "approve", ""),
            review(&app, &finance, "approve", "")
        );

        assert_eq!((a.status, b.status), (200, 200), "round {round}");
        assert_eq!(state_of(&app, id).await.0, "complete", "round {round}");
        let history = events(&app, id).await;
        let ends = history.iter().filter(|e| e.2 == "complete").count();
        assert_eq!(ends, 1, "round {round}");
        assert_eq!(answers(&app, id).await.len(), 2, "round {round}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_sent_twice_at_once_is_recorded_once() {
    let app = spawn(Flood::Memory).await;
    for round in 0..5 {
        let id = app.start("supplier_onboarding", "Acme onboarding").await;
        let link = app.link(id, None).await;
        let page = get(&app.client(), &app, &link).await;
        let shown = page.attr("form input[name=_step]", "value").unwrap();
        assert_eq!(shown, "1");
        let mut form = SUPPLIER.to_vec();
        form.push(("_step", &shown));

        let (one, two) = (app.client(), app.client());
        let (a, b) = tokio::join!(
            answer_step(&one, &app, &link, &form),
            answer_step(&two, &app, &link, &form)
        );

        // The loser either lost inside the store (200, "already answered") or saw the next
        // step already (303, sent to it); neither answers anything.
        for page in [&a, &b] {
            assert!([200, 303].contains(&page.status), "round {round}");
        }
        assert_eq!(answers(&app, id).await.len(), 1, "round {round}");
        assert_eq!(state_of(&app, id).await, ("active".into(), 1));
    }
}

#[tokio::test]
async fn a_form_sent_again_after_it_was_answered_does_not_answer_the_next_step() {
    let app = spawn(Flood::Memory).await;
    let definition = orchestra::domain::workflow::Definition::parse(
        "form: Order | Name*\nform: Invoice | Name*\n",
    )
    .unwrap();
    let workflow = orchestra::store::workflows::create(
        &app.db,
        "two_forms",
        "Two forms",
        &definition.to_json(),
    )
    .await
    .unwrap()
    .unwrap();
    let id = orchestra::domain::instance::start(
        &app.db,
        &orchestra::domain::instance::Start {
            ..orchestra::domain::instance::Start::new(
                workflow,
                "Order 7",
                &orchestra::domain::instance::Actor::CommandLine,
            )
        },
    )
    .await
    .unwrap();
    let link = app.link(id, None).await;
    let client = app.client();
    let page = get(&client, &app, &link).await;
    let shown = page.attr("form input[name=_step]", "value").unwrap();
    let form = [("name", "Grace"), ("_step", shown.as_str())];
    assert_eq!(answer_step(&client, &app, &link, &form).await.status, 303);

    let again = answer_step(&client, &app, &link, &form).await;

    assert_eq!(again.status, 303, "sent to the step that is current now");
    assert!(again.location() == link);
    assert_credential_headers(&again, "a post for an earlier step");
    assert_eq!(answers(&app, id).await.len(), 1);
    assert_eq!(state_of(&app, id).await, ("active".into(), 1));
    let next = get(&client, &app, &link).await;
    assert_eq!(next.first("section.step-form h2"), "Invoice");
    assert_eq!(
        next.attr("form input[name=_step]", "value").as_deref(),
        Some("2")
    );
}

/// With nothing counting, the doorway returns before naming its caller: no keyed hash (an HMAC
/// over the link) is computed for any request, good link or bad, even with the numbers kept
/// under a switched-off switch. Switched on, each request names its caller once, so the
/// silence before means something.
#[tokio::test]
async fn with_the_switch_off_a_doorway_request_computes_no_keyed_hash() {
    let app = spawn(Flood::Memory).await;
    app.set(&[
        ("interaction.limits.per_link", "5"),
        ("interaction.limits.total", "50"),
    ])
    .await;
    let id = app.start("contract_review", "Unhashed").await;
    let good = app.link(id, Some("legal")).await;
    let client = app.client();
    let before = app.state.site.callers_hashed();
    for _ in 0..5 {
        assert_eq!(get(&client, &app, &good).await.status, 200);
        assert_eq!(
            get(&client, &app, "/interaction/l.999999..1900000000.00")
                .await
                .status,
            404
        );
    }
    assert_eq!(
        app.state.site.callers_hashed(),
        before,
        "a caller was hashed"
    );

    app.set(&[("orchestra.request_limits.enabled", "true")])
        .await;
    for _ in 0..3 {
        assert_eq!(get(&client, &app, &good).await.status, 200);
    }
    assert_eq!(app.state.site.callers_hashed(), before + 3);
}
