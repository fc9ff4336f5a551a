//! A step handed to someone else by its own participant (`| forward`, from the link's page) or
//! by its deadline (`| expires 3d then to director`), over the real doorway and a real SMTP
//! server on loopback: the right person is emailed, the old link offers nothing.

use orchestra::domain::instance::{self, Actor};
use orchestra::domain::mail::{ContactInput, Mailer, send};
use orchestra::store;

use crate::helpers::{Smtp, TestApp, answer_step, events, get, post, spawn_now, state_of};

const CLAIM: &str = "form@employee: Expense claim | Amount* (number)\n\
                     review@manager: Manager review | forward | expires 3d then to director\n\
                     review@director: Director review | only if Amount > 1000000\n";

fn contact(participant: &str, email: &str, name: &str) -> ContactInput {
    ContactInput {
        participant: participant.into(),
        email: email.into(),
        name: name.into(),
        lang: "en".into(),
    }
}

/// A claim filed by the employee, waiting for the manager (who has an address, as has the
/// director), and a mailer on a loopback SMTP server.
async fn waiting_for_the_manager(app: &TestApp) -> (i64, Smtp, Mailer) {
    let id = filed(app, "claim", CLAIM).await;
    let smtp = Smtp::start();
    let mailer = Mailer::new(&smtp.url(), "Orchestra <orchestra@example.org>").unwrap();
    (id, smtp, mailer)
}

/// A workflow `name` of `text`, an instance of it with the manager's and the director's
/// addresses, and the employee's claim of 80 filed.
async fn filed(app: &TestApp, name: &str, text: &str) -> i64 {
    let definition = orchestra::domain::workflow::Definition::parse(text).unwrap();
    let w = store::workflows::create(&app.db, name, "Expense claim", &definition.to_json())
        .await
        .unwrap()
        .unwrap();
    let contacts = [
        contact("manager", "mia@office.example", "Mia"),
        contact("director", "dora@office.example", "Dora"),
    ];
    let id = instance::start(
        &app.db,
        &instance::Start {
            contacts: &contacts,
            ..instance::Start::new(w, "Taxi", &Actor::Admin("ada".into()))
        },
    )
    .await
    .unwrap();
    let employee = app.link(id, Some("employee")).await;
    let filed = answer_step(&app.client(), app, &employee, &[("amount", "80")]).await;
    assert_eq!(filed.status, 200, "{}", filed.body);
    id
}

async fn run(app: &TestApp, mailer: &Mailer, now: i64) {
    let site = app.state.site.get().await;
    send::run_once(&app.db, &app.state.versions, &site, Some(mailer), now)
        .await
        .unwrap();
}

/// The links emailed to an address, oldest first.
fn links_to(smtp: &Smtp, address: &str) -> Vec<String> {
    smtp.received()
        .iter()
        .filter(|m| m.to == [address])
        .map(|m| m.link_path())
        .collect()
}

async fn approve(app: &TestApp, link: &str) {
    let page = answer_step(
        &app.client(),
        app,
        link,
        &[("decision", "approve"), ("comment", "")],
    )
    .await;
    assert_eq!(page.status, 200, "{}", page.body);
}

#[tokio::test]
async fn a_manager_forwards_the_step_and_the_colleague_answers() {
    let app = spawn_now(crate::helpers::Flood::Memory).await;
    let (id, smtp, mailer) = waiting_for_the_manager(&app).await;
    run(&app, &mailer, store::now()).await;
    let mia = links_to(&smtp, "mia@office.example");
    assert_eq!(mia.len(), 1);
    let page = get(&app.client(), &app, &mia[0]).await;
    assert!(
        page.has("details.forward input[name=_fwd_email]"),
        "{}",
        page.body
    );

    // A bad address keeps what was typed, says what is wrong, and forwards nothing.
    let bad = post(
        &app.client(),
        &app,
        &mia[0],
        &[
            ("_step", "2"),
            ("_forward", "1"),
            ("_fwd_email", "not an address"),
            ("_fwd_name", "Paul"),
            ("_fwd_lang", "fr"),
        ],
    )
    .await;
    assert_eq!(bad.status, 422, "{}", bad.body);
    assert!(bad.has("details.forward[open]"));
    assert_eq!(
        bad.attr("input[name=_fwd_name]", "value").as_deref(),
        Some("Paul")
    );
    assert!(
        bad.has("p.field-error[data-field=_fwd_email]"),
        "{}",
        bad.body
    );
    assert!(
        !events(&app, id)
            .await
            .iter()
            .any(|(_, _, e)| e == "reassigned")
    );

    let done = post(
        &app.client(),
        &app,
        &mia[0],
        &[
            ("_step", "2"),
            ("_forward", "1"),
            ("_fwd_email", "paul@office.example"),
            ("_fwd_name", "Paul"),
            ("_fwd_lang", "fr"),
        ],
    )
    .await;
    assert_eq!(done.status, 200, "{}", done.body);
    assert!(done.body.contains("Paul"), "{}", done.body);
    // Mia's link stopped working; Paul is emailed in French and answers.
    assert_eq!(get(&app.client(), &app, &mia[0]).await.status, 404);
    run(&app, &mailer, store::now()).await;
    let paul: Vec<_> = smtp
        .received()
        .into_iter()
        .filter(|m| m.to == ["paul@office.example"])
        .collect();
    assert_eq!(paul.len(), 1);
    assert!(paul[0].part("text/plain").starts_with("Bonjour Paul,"));
    approve(&app, &paul[0].link_path()).await;
    assert_eq!(state_of(&app, id).await.0, "complete");
    let history = store::instances::history(&app.db, id).await.unwrap();
    let forwarded = history
        .iter()
        .find(|h| h.event.as_str() == "reassigned")
        .expect("a history line for the forward");
    assert_eq!(forwarded.actor, "forward:manager");
    assert!(forwarded.answer.contains("Paul"), "{}", forwarded.answer);
    // Webhooks are told a participant was handed over, never to whom.
    let told = store::outbox::for_instance(&app.db, id).await.unwrap();
    let reassigned: Vec<_> = told
        .iter()
        .filter(|m| m.event.as_str() == "step.reassigned")
        .collect();
    assert_eq!(reassigned.len(), 1);
    assert_eq!(reassigned[0].participant.as_deref(), Some("manager"));
    assert_eq!(reassigned[0].step_index, Some(1));
}

#[tokio::test]
async fn forwards_are_bounded_and_a_step_without_the_option_offers_none() {
    let app = spawn_now(crate::helpers::Flood::Memory).await;
    let (id, smtp, mailer) = waiting_for_the_manager(&app).await;
    run(&app, &mailer, store::now()).await;
    let mut link = links_to(&smtp, "mia@office.example").remove(0);
    for n in 0..instance_forwards() {
        let address = format!("colleague{n}@office.example");
        let page = post(
            &app.client(),
            &app,
            &link,
            &[("_step", "2"), ("_forward", "1"), ("_fwd_email", &address)],
        )
        .await;
        assert_eq!(page.status, 200, "{}", page.body);
        run(&app, &mailer, store::now()).await;
        link = links_to(&smtp, &address).remove(0);
    }
    let refused = post(
        &app.client(),
        &app,
        &link,
        &[
            ("_step", "2"),
            ("_forward", "1"),
            ("_fwd_email", "one.more@office.example"),
        ],
    )
    .await;
    assert_eq!(refused.status, 422, "{}", refused.body);
    assert!(links_to(&smtp, "one.more@office.example").is_empty());
    // The employee's step has no `| forward`: a forward posted there does nothing.
    let other = app.start("claim", "Another").await;
    let employee = app.link(other, Some("employee")).await;
    let page = get(&app.client(), &app, &employee).await;
    assert!(!page.has("details.forward"));
    let posted = post(
        &app.client(),
        &app,
        &employee,
        &[
            ("_step", "1"),
            ("_forward", "1"),
            ("_fwd_email", "x@office.example"),
        ],
    )
    .await;
    assert_eq!(posted.status, 422);
    assert!(
        !events(&app, other)
            .await
            .iter()
            .any(|(_, _, e)| e == "reassigned")
    );
    let _ = id;
}

fn instance_forwards() -> i64 {
    orchestra::domain::interaction::forward::MAX_FORWARDS
}

#[tokio::test]
async fn at_its_deadline_the_managers_step_goes_to_the_director() {
    let app = spawn_now(crate::helpers::Flood::Memory).await;
    let (id, smtp, mailer) = waiting_for_the_manager(&app).await;
    run(&app, &mailer, store::now()).await;
    let mia = links_to(&smtp, "mia@office.example");
    // Two days on, nothing; past three, the step is Dora's.
    run(&app, &mailer, store::now() + 2 * 86_400).await;
    assert!(links_to(&smtp, "dora@office.example").is_empty());
    run(&app, &mailer, store::now() + 3 * 86_400 + 60).await;
    run(&app, &mailer, store::now() + 3 * 86_400 + 120).await;
    let dora = links_to(&smtp, "dora@office.example");
    assert_eq!(dora.len(), 1, "the director is emailed once");
    assert_eq!(state_of(&app, id).await, ("active".to_owned(), 1));
    assert!(
        !get(&app.client(), &app, &mia[0])
            .await
            .has("input[name=decision]")
    );
    approve(&app, &dora[0]).await;
    assert_eq!(state_of(&app, id).await.0, "complete");
    let history = store::instances::history(&app.db, id).await.unwrap();
    assert!(
        history
            .iter()
            .any(|h| h.event.as_str() == "reassigned" && h.actor == "deadline")
    );
}

/// `notify: director`: besides the requester, the director is emailed the outcome (when the
/// instance ends), though their own step was never asked; the manager, not named, is not.
#[tokio::test]
async fn whoever_the_definition_names_is_told_the_outcome() {
    let app = spawn_now(crate::helpers::Flood::Memory).await;
    let text = format!("{CLAIM}notify: director\n");
    let definition = orchestra::domain::workflow::Definition::parse(&text).unwrap();
    let written = definition.to_text();
    assert!(written.ends_with("notify: director\n"), "{written}");
    assert_eq!(
        orchestra::domain::workflow::Definition::parse(&written).unwrap(),
        definition
    );
    let id = filed(&app, "told", &text).await;
    approve(&app, &app.link(id, Some("manager")).await).await;
    assert_eq!(state_of(&app, id).await.0, "complete");
    let smtp = Smtp::start();
    let mailer = Mailer::new(&smtp.url(), "Orchestra <orchestra@example.org>").unwrap();
    run(&app, &mailer, store::now()).await;
    let subjects = |to: &str| -> Vec<String> {
        smtp.received()
            .iter()
            .filter(|m| m.to == [to])
            .map(|m| m.subject())
            .collect()
    };
    assert_eq!(subjects("dora@office.example"), ["Approved: Taxi"]);
    assert!(
        !subjects("mia@office.example")
            .iter()
            .any(|s| s.starts_with("Approved")),
        "{:?}",
        subjects("mia@office.example")
    );
}

/// An attacker's view of the forward: a made-up or forged link gets the plain refusal and
/// writes nothing; a name past its bound is refused with what was typed kept, and nobody is
/// emailed; the page never echoes the address into a log-like error.
#[tokio::test]
async fn a_forward_on_a_made_up_link_or_with_a_bad_name_writes_nothing() {
    let app = spawn_now(crate::helpers::Flood::Memory).await;
    let (id, smtp, mailer) = waiting_for_the_manager(&app).await;
    let forward = |email: &'static str, name: String| {
        vec![
            ("_step".to_owned(), "2".to_owned()),
            ("_forward".to_owned(), "1".to_owned()),
            ("_fwd_email".to_owned(), email.to_owned()),
            ("_fwd_name".to_owned(), name),
        ]
    };
    let manager = app.link(id, Some("manager")).await;
    // A link with its signature altered, and one for an instance that does not exist.
    let mut forged = manager.clone();
    let last = forged.pop().unwrap();
    forged.push(if last == 'A' { 'B' } else { 'A' });
    for path in [forged, "/interaction/made-up".to_owned()] {
        let body = forward("x@office.example", "X".into());
        let form: Vec<(&str, &str)> = body.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let page = post(&app.client(), &app, &path, &form).await;
        assert_eq!(page.status, 404, "{path}");
        assert!(!page.body.contains("x@office.example"));
    }
    // A name of 10,000 characters: refused, kept, nothing changed.
    let long = "N".repeat(10_000);
    let body = forward("ok@office.example", long.clone());
    let form: Vec<(&str, &str)> = body.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let page = post(&app.client(), &app, &manager, &form).await;
    assert_eq!(page.status, 422, "{}", page.body);
    assert!(
        page.has("p.field-error[data-field=_fwd_name]"),
        "{}",
        page.body
    );
    assert!(
        !events(&app, id)
            .await
            .iter()
            .any(|(_, _, e)| e == "reassigned")
    );
    run(&app, &mailer, store::now()).await;
    assert!(links_to(&smtp, "ok@office.example").is_empty());
    assert!(links_to(&smtp, "x@office.example").is_empty());
}
