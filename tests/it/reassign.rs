//! Handing a participant of a running instance to a new contact, from the admin page and the
//! API, over real TCP: the old contact's links offer nothing, the new contact is emailed (a
//! loopback SMTP server takes the email), and what may not be handed over is refused with
//! nothing changed.

use orchestra::domain::mail::{Mailer, send};
use orchestra::store;

use crate::api::{call, described, json, scoped, started_by, token};
use crate::api_idempotency::keyed;
use crate::helpers::{self, Flood, Page, Smtp, TestApp, get, post, spawn};

/// Sends what the outbox holds through a loopback SMTP server; what it was given.
async fn emails_sent(app: &TestApp, smtp: &Smtp) -> Vec<helpers::Received> {
    let mailer = Mailer::new(&smtp.url(), "Orchestra <orchestra@example.org>").unwrap();
    let site = app.state.site.get().await;
    send::run_once(
        &app.db,
        &app.state.versions,
        &site,
        Some(&mailer),
        app.clock.now_secs(),
    )
    .await
    .unwrap();
    smtp.received()
}

/// Whether a link's page offers the review's decision (a link revoked or used up offers none).
async fn offers_a_decision(app: &TestApp, link: &str) -> bool {
    get(&app.client(), app, link)
        .await
        .has("input[name=decision]")
}

async fn reassigned_lines(app: &TestApp, id: i64) -> Vec<String> {
    store::instances::history(&app.db, id)
        .await
        .unwrap()
        .into_iter()
        .filter(|h| h.event.as_str() == "reassigned")
        .map(|h| h.actor)
        .collect()
}

async fn legal_email(app: &TestApp, id: i64) -> Option<String> {
    store::mails::contact(&app.db, id, "legal")
        .await
        .unwrap()
        .map(|c| c.email)
}

/// Finance approves the review: it has nothing left to answer.
async fn finance_approves(app: &TestApp, id: i64) {
    let finance = app.link(id, Some("finance")).await;
    let form = [("decision", "approve"), ("comment", "Fine.")];
    let answered = helpers::answer_step(&app.client(), app, &finance, &form).await;
    assert_eq!(answered.status, 200);
}

/// The instance page's hand-over form for `participant`, posted with these fields.
async fn hand_over(
    client: &reqwest::Client,
    app: &TestApp,
    id: i64,
    csrf: &str,
    fields: &[(&str, &str)],
) -> Page {
    let mut form = vec![("csrf", csrf)];
    form.extend_from_slice(fields);
    post(
        client,
        app,
        &format!("/admin/instances/{id}/handover"),
        &form,
    )
    .await
}

#[tokio::test]
async fn an_administrator_hands_a_participant_over_and_the_old_link_offers_nothing() {
    let app = spawn(Flood::Memory).await;
    let smtp = Smtp::start();
    let id = app.start("contract_review", "Lease").await;
    let old = app.link(id, Some("legal")).await;
    let admin = app.admin_client().await;
    let page = get(&admin, &app, &format!("/admin/instances/{id}")).await;
    assert_eq!(page.status, 200);
    for who in ["legal", "finance"] {
        assert!(
            page.has(&format!(
                "section.handover form[data-participant={who}] input[name=email]"
            )),
            "a form for {who}: {}",
            page.body
        );
    }
    let csrf = page.csrf();

    // A forged post (no token) is refused and changes nothing.
    let forged = post(
        &admin,
        &app,
        &format!("/admin/instances/{id}/handover"),
        &[("participant", "legal"), ("email", "lea@example.org")],
    )
    .await;
    assert_eq!(forged.status, 403);

    // A bad address keeps what was typed, says why beside the field, saves nothing.
    let fields = [
        ("participant", "legal"),
        ("email", "not-an-address"),
        ("name", "Léa"),
        ("lang", "fr"),
    ];
    let refused = hand_over(&admin, &app, id, &csrf, &fields).await;
    assert_eq!(refused.status, 422, "{}", refused.body);
    let form = "form[data-participant=legal]";
    assert_eq!(
        refused.attr(&format!("{form} input[name=email]"), "value"),
        Some("not-an-address".to_owned())
    );
    assert_eq!(
        refused.attr(&format!("{form} input[name=name]"), "value"),
        Some("Léa".to_owned())
    );
    assert_eq!(
        refused.attr(&format!("{form} option[selected]"), "value"),
        Some("fr".to_owned())
    );
    assert!(
        refused
            .first(&format!("{form} .field-error[data-field=email]"))
            .starts_with("Enter an email address")
    );
    // The other participant's form is left as it was.
    assert_eq!(
        refused.attr("form[data-participant=finance] input[name=email]", "value"),
        Some(String::new())
    );
    // In the administrator's language.
    let french = post(
        &admin,
        &app,
        &helpers::with_lang(&format!("/admin/instances/{id}/handover"), "fr"),
        &[
            ("csrf", csrf.as_str()),
            ("participant", "legal"),
            ("email", "x"),
        ],
    )
    .await;
    assert_eq!(french.status, 422);
    assert_eq!(french.lang(), "fr");
    assert!(
        french
            .first(&format!("{form} .field-error[data-field=email]"))
            .starts_with("Saisissez"),
        "{}",
        french.first(".field-error")
    );
    assert!(reassigned_lines(&app, id).await.is_empty());
    assert_eq!(legal_email(&app, id).await, None);
    assert!(offers_a_decision(&app, &old).await);

    let done = hand_over(
        &admin,
        &app,
        id,
        &csrf,
        &[
            ("participant", "legal"),
            ("email", "lea@example.org"),
            ("name", "Léa"),
            ("lang", "fr"),
        ],
    )
    .await;
    assert_eq!(done.status, 303, "{}", done.body);
    assert_eq!(done.location(), format!("/admin/instances/{id}"));
    let after = get(
        &admin,
        &app,
        &helpers::with_lang(&format!("/admin/instances/{id}"), "en"),
    )
    .await;
    assert!(
        after
            .body
            .contains("The participant was handed to the new contact."),
        "{}",
        after.text(".flash").join("|")
    );
    assert!(
        !offers_a_decision(&app, &old).await,
        "the old link offers nothing"
    );
    let sent = emails_sent(&app, &smtp).await;
    let to_lea: Vec<_> = sent
        .iter()
        .filter(|m| m.to == ["lea@example.org"])
        .collect();
    assert_eq!(to_lea.len(), 1, "{sent:#?}");
    assert!(to_lea[0].part("text/plain").starts_with("Bonjour Léa,"));
    assert!(offers_a_decision(&app, &to_lea[0].link_path()).await);
    assert_eq!(reassigned_lines(&app, id).await, ["admin:ada"]);
}

/// What may not be handed over is refused and changes nothing: a participant who has answered,
/// one the workflow does not have, an ended instance, a missing one.
#[tokio::test]
async fn the_hand_over_form_refuses_what_cannot_be_handed_over() {
    let app = spawn(Flood::Memory).await;
    let id = app.start("contract_review", "Lease").await;
    let admin = app.admin_client().await;
    let csrf = get(&admin, &app, &format!("/admin/instances/{id}"))
        .await
        .csrf();
    finance_approves(&app, id).await;
    let page = get(&admin, &app, &format!("/admin/instances/{id}")).await;
    assert!(
        !page.has("form[data-participant=finance]"),
        "finance is done"
    );
    for who in ["finance", "nobody"] {
        let fields = [("participant", who), ("email", "x@example.org")];
        let refused = hand_over(&admin, &app, id, &csrf, &fields).await;
        assert_eq!(refused.status, 422, "{who}: {}", refused.body);
        assert!(refused.has("#handover-error"), "{who}: {}", refused.body);
    }
    let cancel = post(
        &admin,
        &app,
        &format!("/admin/instances/{id}/cancel"),
        &[("csrf", csrf.as_str())],
    )
    .await;
    assert_eq!(cancel.status, 303);
    let fields = [("participant", "legal"), ("email", "x@example.org")];
    let ended = hand_over(&admin, &app, id, &csrf, &fields).await;
    assert_eq!(ended.status, 409, "{}", ended.body);
    assert!(ended.has("#handover-error"));
    assert!(
        !ended.has("section.handover"),
        "an ended instance offers no form"
    );
    let missing = hand_over(&admin, &app, id + 100, &csrf, &fields).await;
    assert_eq!(missing.status, 404);
    assert!(reassigned_lines(&app, id).await.is_empty());
}

#[tokio::test]
async fn a_token_hands_a_participant_over_and_what_it_may_not_is_refused() {
    let app = spawn(Flood::Memory).await;
    let smtp = Smtp::start();
    let t = token(&app, "crm", None, None).await;
    let id = started_by(&app, &t, "contract_review").await;
    let old = app.link(id, Some("legal")).await;
    let path = format!("/api/v1/instances/{id}/reassign");
    let good = r#"{"participant":"legal","email":"lea@example.org","name":"Léa","lang":"fr"}"#;

    let reader = scoped(&app, "reader", Some(&["read", "links"]), Some("all"), None).await;
    let refused = call(&app, "POST", &path, &reader, Some(good)).await;
    assert_eq!(
        (refused.status, json(&refused)["error"].as_str()),
        (403, Some("forbidden_scope"))
    );
    // Another token's instance is as if it did not exist.
    let other = token(&app, "other", None, None).await;
    assert_eq!(
        call(&app, "POST", &path, &other, Some(good)).await.status,
        404
    );
    for (body, field) in [
        (
            r#"{"participant":"nobody","email":"a@example.org"}"#,
            "participant",
        ),
        (r#"{"email":"a@example.org"}"#, "participant"),
        (r#"{"participant":"legal","email":"nobody"}"#, "email"),
        (r#"{"participant":"legal"}"#, "email"),
        (
            r#"{"participant":"legal","email":"a@example.org","lang":"de"}"#,
            "lang",
        ),
    ] {
        let page = call(&app, "POST", &path, &t, Some(body)).await;
        assert_eq!(
            (page.status, json(&page)["field"].as_str()),
            (422, Some(field)),
            "{body}: {}",
            page.body
        );
    }
    assert!(reassigned_lines(&app, id).await.is_empty());
    assert!(offers_a_decision(&app, &old).await);

    let done = call(&app, "POST", &path, &t, Some(good)).await;
    assert_eq!(done.status, 200, "{}", done.body);
    let view = json(&done);
    assert_eq!(view["state"], "active");
    assert_eq!(view["participants"]["legal"]["email"], "lea@example.org");
    assert_eq!(
        view["history"].as_array().unwrap().last().unwrap()["event"],
        "reassigned"
    );
    assert!(
        !offers_a_decision(&app, &old).await,
        "the old link offers nothing"
    );
    let sent = emails_sent(&app, &smtp).await;
    let to_lea: Vec<_> = sent
        .iter()
        .filter(|m| m.to == ["lea@example.org"])
        .collect();
    assert_eq!(to_lea.len(), 1, "{sent:#?}");
    let new = get(&app.client(), &app, &to_lea[0].link_path()).await;
    assert!(
        new.has("input[name=decision]"),
        "{} {}",
        new.status,
        new.body
    );
    assert_eq!(reassigned_lines(&app, id).await, ["api:crm"]);

    // A participant who answered has nothing to hand over; an ended instance neither.
    finance_approves(&app, id).await;
    let body = r#"{"participant":"finance","email":"f@example.org"}"#;
    let page = call(&app, "POST", &path, &t, Some(body)).await;
    assert_eq!(
        (page.status, json(&page)["field"].as_str()),
        (422, Some("participant"))
    );
    let cancelled = call(
        &app,
        "POST",
        &format!("/api/v1/instances/{id}/cancel"),
        &t,
        None,
    )
    .await;
    assert_eq!(cancelled.status, 200);
    let page = call(&app, "POST", &path, &t, Some(good)).await;
    assert_eq!(
        (page.status, json(&page)["error"].as_str()),
        (409, Some("ended"))
    );
    assert_eq!(reassigned_lines(&app, id).await.len(), 1);
}

/// A hand-over retried with its Idempotency-Key hands over and emails once; and a token's
/// hand-overs count toward its hourly quota of link emails, so it cannot flood an inbox.
#[tokio::test]
async fn a_retried_hand_over_emails_once_and_the_email_quota_holds() {
    let app = spawn(Flood::Memory).await;
    app.set(&[("api.caps.emails_per_address_per_hour", "2")])
        .await;
    let t = token(&app, "crm", None, None).await;
    let id = started_by(&app, &t, "contract_review").await;
    let path = format!("/api/v1/instances/{id}/reassign");
    let body = r#"{"participant":"legal","email":"lea@example.org"}"#;
    let first = keyed(&app, &t, &path, "handover-1", body).await;
    let again = keyed(&app, &t, &path, "handover-1", body).await;
    assert_eq!((first.status, again.status), (200, 200), "{}", again.body);
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    assert_eq!(again.body, first.body);
    assert_eq!(reassigned_lines(&app, id).await.len(), 1);
    // The second email to this address in the hour is the last the quota takes.
    assert_eq!(call(&app, "POST", &path, &t, Some(body)).await.status, 200);
    let spent = call(&app, "POST", &path, &t, Some(body)).await;
    assert_eq!(
        (spent.status, json(&spent)["error"].as_str()),
        (429, Some("email_rate")),
        "{}",
        spent.body
    );
    assert_eq!(reassigned_lines(&app, id).await.len(), 2);
}

/// Null and `""` in each field of a hand-over are answered as the description says: taken
/// where it takes them, a 422 naming the field where it does not.
#[tokio::test]
async fn null_and_empty_in_each_field_of_a_hand_over_are_answered_as_described() {
    use serde_json::{Value, json as j};
    let app = spawn(Flood::Memory).await;
    let t = token(&app, "crm", None, None).await;
    let good =
        j!({"participant": "legal", "email": "lea@example.org", "name": "Léa", "lang": "fr"});
    let (mut taken, mut refused) = (0, 0);
    for field in ["participant", "email", "name", "lang"] {
        for value in [Value::Null, Value::String(String::new())] {
            let mut body = good.clone();
            body[field] = value.clone();
            let path = format!(
                "/api/v1/instances/{}/reassign",
                started_by(&app, &t, "contract_review").await
            );
            let described = described::takes("POST", &path, &body);
            let page = call(&app, "POST", &path, &t, Some(&body.to_string())).await;
            let said = format!("{field}={value}: {} {}", page.status, page.body);
            match described {
                Ok(()) => {
                    assert_eq!(page.status, 200, "taken as described: {said}");
                    taken += 1;
                }
                Err(why) => {
                    assert_eq!(page.status, 422, "refused as described ({why}): {said}");
                    assert_eq!(json(&page)["field"], field, "{said}");
                    refused += 1;
                }
            }
        }
    }
    // participant and email refuse both; name and lang take both.
    assert_eq!((taken, refused), (4, 4));
}
