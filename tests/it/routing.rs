//! Workflows that route: a step asked only when its conditions on earlier answers hold, the
//! others passed over and noted in the history, over the real doorway.

use crate::helpers::{Flood, TestApp, answer_step, events, spawn, state_of};

/// The evaluator's expense claim: finance reviews only above 1,000.
const CLAIM: &str = "form@employee: Expense claim | Amount* (number), Purpose* (choice: Travel / Meals / Other)\n\
                     review@manager: Manager review | show 1\n\
                     review@finance: Finance review | only if Amount > 1000\n";

async fn claim(app: &TestApp, title: &str) -> i64 {
    let definition = orchestra::domain::workflow::Definition::parse(CLAIM).unwrap();
    if orchestra::store::workflows::by_name(&app.db, "expense_claim")
        .await
        .unwrap()
        .is_none()
    {
        orchestra::store::workflows::create(
            &app.db,
            "expense_claim",
            "Expense claim",
            &definition.to_json(),
        )
        .await
        .unwrap();
    }
    app.start("expense_claim", title).await
}

/// Files the claim and has the manager approve it; gives the instance.
async fn filed_and_approved(app: &TestApp, amount: &str) -> i64 {
    let id = claim(app, &format!("Claim of {amount}")).await;
    let client = app.client();
    let employee = app.link(id, Some("employee")).await;
    let filed = answer_step(
        &client,
        app,
        &employee,
        &[("amount", amount), ("purpose", "travel")],
    )
    .await;
    assert_eq!(filed.status, 200, "{}", filed.body);
    let manager = app.link(id, Some("manager")).await;
    let approved = answer_step(
        &client,
        app,
        &manager,
        &[("decision", "approve"), ("comment", "")],
    )
    .await;
    assert_eq!(approved.status, 200, "{}", approved.body);
    id
}

#[tokio::test]
async fn under_a_thousand_finance_is_skipped_and_the_history_says_so() {
    let app = spawn(Flood::Memory).await;
    let id = filed_and_approved(&app, "500").await;
    assert_eq!(state_of(&app, id).await.0, "complete");
    let history = events(&app, id).await;
    assert!(
        history.contains(&(2, String::new(), "skipped".to_owned())),
        "{history:?}"
    );
    // Finance was never asked: no email, no link, no answer.
    assert!(
        !history
            .iter()
            .any(|(step, _, e)| *step == 2 && e != "skipped"),
        "{history:?}"
    );
}

#[tokio::test]
async fn above_a_thousand_finance_reviews_the_claim() {
    let app = spawn(Flood::Memory).await;
    let id = filed_and_approved(&app, "1500.50").await;
    assert_eq!(state_of(&app, id).await, ("active".to_owned(), 2));
    assert!(
        !events(&app, id)
            .await
            .iter()
            .any(|(_, _, e)| e == "skipped")
    );
    let finance = app.link(id, Some("finance")).await;
    let done = answer_step(
        &app.client(),
        &app,
        &finance,
        &[("decision", "approve"), ("comment", "")],
    )
    .await;
    assert_eq!(done.status, 200);
    assert_eq!(state_of(&app, id).await.0, "complete");
}

const DIRECTORS: &str = "form@employee: Expense claim | Amount* (number)\n\
                         review[alice,bob,carol]: Directors sign off | 2 of 3\n";

async fn directors(app: &TestApp) -> i64 {
    let definition = orchestra::domain::workflow::Definition::parse(DIRECTORS).unwrap();
    orchestra::store::workflows::create(&app.db, "sign_off", "Sign-off", &definition.to_json())
        .await
        .unwrap();
    let id = app.start("sign_off", "Two of three").await;
    let employee = app.link(id, Some("employee")).await;
    let filed = answer_step(&app.client(), app, &employee, &[("amount", "42")]).await;
    assert_eq!(filed.status, 200);
    id
}

async fn decide(app: &TestApp, link: &str, decision: &str) {
    let page = answer_step(
        &app.client(),
        app,
        link,
        &[("decision", decision), ("comment", "Because.")],
    )
    .await;
    assert_eq!(page.status, 200, "{}", page.body);
}

#[tokio::test]
async fn two_of_three_directors_close_the_step_and_the_third_link_offers_nothing() {
    let app = spawn(Flood::Memory).await;
    let id = directors(&app).await;
    let carol = app.link(id, Some("carol")).await;
    decide(&app, &app.link(id, Some("alice")).await, "approve").await;
    assert_eq!(state_of(&app, id).await, ("active".to_owned(), 1));
    // A rejection of three leaves two who can still approve: the step still waits.
    decide(&app, &carol, "reject").await;
    assert_eq!(state_of(&app, id).await, ("active".to_owned(), 1));
    decide(&app, &app.link(id, Some("bob")).await, "approve").await;
    assert_eq!(state_of(&app, id).await.0, "complete");
    assert!(
        events(&app, id)
            .await
            .iter()
            .all(|(_, _, e)| e != "closed_by_quorum"),
        "all three answered: nothing closed early"
    );

    // Two approvals first: the step closes before carol, whose link then offers nothing.
    let id = directors(&app).await;
    let carol = app.link(id, Some("carol")).await;
    decide(&app, &app.link(id, Some("alice")).await, "approve").await;
    decide(&app, &app.link(id, Some("bob")).await, "approve").await;
    assert_eq!(state_of(&app, id).await.0, "complete");
    assert!(
        events(&app, id)
            .await
            .contains(&(1, String::new(), "closed_by_quorum".to_owned()))
    );
    let told = orchestra::store::outbox::for_instance(&app.db, id)
        .await
        .unwrap();
    assert!(
        told.iter()
            .any(|m| m.event.as_str() == "step.closed" && m.step_index == Some(1)),
        "webhooks are told the step closed early"
    );
    let page = crate::helpers::get(&app.client(), &app, &carol).await;
    assert_eq!(page.status, 200);
    assert!(!page.has("input[name=decision]"), "{}", page.body);
}

#[tokio::test]
async fn two_rejections_of_three_reject_the_step_at_once() {
    let app = spawn(Flood::Memory).await;
    let id = directors(&app).await;
    decide(&app, &app.link(id, Some("alice")).await, "reject").await;
    assert_eq!(state_of(&app, id).await.0, "active");
    decide(&app, &app.link(id, Some("bob")).await, "reject").await;
    assert_eq!(state_of(&app, id).await.0, "rejected");
}

/// The employee who filed the claim is told the outcome by email, in their language, with the
/// last comment and a copy of what they submitted; a director not needed is told the step
/// closed, with no link.
#[tokio::test]
async fn the_requester_is_told_the_outcome_and_a_director_not_needed_that_the_step_closed() {
    use orchestra::domain::instance::{self, Actor};
    use orchestra::domain::mail::{ContactInput, Mailer, send};

    let app = crate::helpers::spawn_now(Flood::Memory).await;
    let smtp = crate::helpers::Smtp::start();
    let mailer = Mailer::new(&smtp.url(), "Orchestra <orchestra@example.org>").unwrap();
    let definition = orchestra::domain::workflow::Definition::parse(DIRECTORS).unwrap();
    let w =
        orchestra::store::workflows::create(&app.db, "sign_off", "Sign-off", &definition.to_json())
            .await
            .unwrap()
            .unwrap();
    let contact = |participant: &str, email: &str, lang: &str| ContactInput {
        participant: participant.into(),
        email: email.into(),
        name: String::new(),
        lang: lang.into(),
    };
    let contacts = [
        contact("employee", "eve@office.example", "fr"),
        contact("carol", "carol@office.example", "en"),
    ];
    let id = instance::start(
        &app.db,
        &instance::Start {
            contacts: &contacts,
            ..instance::Start::new(w, "Trip to Lyon", &Actor::Admin("ada".into()))
        },
    )
    .await
    .unwrap();
    let run = || async {
        let site = app.state.site.get().await;
        send::run_once(
            &app.db,
            &app.state.versions,
            &site,
            Some(&mailer),
            orchestra::store::now(),
        )
        .await
        .unwrap()
    };
    run().await;
    let employee = app.link(id, Some("employee")).await;
    let filed = answer_step(&app.client(), &app, &employee, &[("amount", "1200")]).await;
    assert_eq!(filed.status, 200);
    run().await;
    decide(&app, &app.link(id, Some("alice")).await, "approve").await;
    let page = answer_step(
        &app.client(),
        &app,
        &app.link(id, Some("bob")).await,
        &[("decision", "approve"), ("comment", "Bon voyage.")],
    )
    .await;
    assert_eq!(page.status, 200);
    assert_eq!(state_of(&app, id).await.0, "complete");
    run().await;

    let received = smtp.received();
    let outcome = received
        .iter()
        .find(|m| m.to == ["eve@office.example"] && m.subject().starts_with("Approuvé"))
        .unwrap_or_else(|| {
            panic!(
                "no outcome email: {:?}",
                received.iter().map(|m| m.subject()).collect::<Vec<_>>()
            )
        });
    assert_eq!(outcome.subject(), "Approuvé\u{202f}: Trip to Lyon");
    let text = outcome.part("text/plain");
    assert!(
        text.contains("La demande « Trip to Lyon » sur Orchestra est terminée"),
        "{text}"
    );
    assert!(text.contains("Bon voyage."), "the last comment: {text}");
    assert!(
        text.contains("Amount\u{202f}: 1\u{202f}200"),
        "a copy of what was filed, the number in the reader's writing: {text}"
    );
    assert!(!text.contains("/interaction/"), "no link: {text}");
    assert!(outcome.part("text/html").contains("<html lang=\"fr\">"));

    let closed: Vec<_> = received
        .iter()
        .filter(|m| m.to == ["carol@office.example"])
        .collect();
    assert_eq!(
        closed.len(),
        2,
        "her link, then the notice: {:?}",
        closed.iter().map(|m| m.subject()).collect::<Vec<_>>()
    );
    assert_eq!(
        closed[1].subject(),
        "No longer needed: Directors sign off – Trip to Lyon"
    );
    assert!(!closed[1].part("text/plain").contains("/interaction/"));
    // Each told once.
    run().await;
    assert_eq!(smtp.received().len(), received.len());
}

/// A manager on holiday is handed over: their old link offers nothing, the new contact is
/// emailed a link that answers, and the history says so.
#[tokio::test]
async fn a_reassigned_managers_old_link_offers_nothing_and_the_new_one_answers() {
    use orchestra::domain::instance::{self, Actor, Refusal};
    use orchestra::domain::mail::{ContactInput, Mailer, send};

    let app = crate::helpers::spawn_now(Flood::Memory).await;
    let smtp = crate::helpers::Smtp::start();
    let mailer = Mailer::new(&smtp.url(), "Orchestra <orchestra@example.org>").unwrap();
    let id = claim(&app, "Taxi").await;
    let employee = app.link(id, Some("employee")).await;
    let filed = answer_step(
        &app.client(),
        &app,
        &employee,
        &[("amount", "80"), ("purpose", "travel")],
    )
    .await;
    assert_eq!(filed.status, 200);
    let old = app.link(id, Some("manager")).await;
    let new_contact = ContactInput {
        participant: "manager".into(),
        email: "nina@office.example".into(),
        name: "Nina".into(),
        lang: "fr".into(),
    };
    let by = Actor::Admin("ada".into());
    instance::reassign(&app.db, &app.state.versions, id, &new_contact, &by)
        .await
        .unwrap();
    let page = crate::helpers::get(&app.client(), &app, &old).await;
    assert!(
        !page.has("input[name=decision]"),
        "the old link offers nothing: {}",
        page.body
    );
    let site = app.state.site.get().await;
    send::run_once(
        &app.db,
        &app.state.versions,
        &site,
        Some(&mailer),
        orchestra::store::now(),
    )
    .await
    .unwrap();
    let emails = smtp.received();
    let to_nina: Vec<_> = emails
        .iter()
        .filter(|m| m.to == ["nina@office.example"])
        .collect();
    assert_eq!(to_nina.len(), 1);
    assert!(to_nina[0].part("text/plain").starts_with("Bonjour Nina,"));
    decide(&app, &to_nina[0].link_path(), "approve").await;
    assert_eq!(state_of(&app, id).await.0, "complete");
    assert!(
        events(&app, id)
            .await
            .contains(&(1, String::new(), "reassigned".to_owned()))
    );
    // A participant with nothing left, or an ended instance, is refused.
    let refused = instance::reassign(&app.db, &app.state.versions, id, &new_contact, &by)
        .await
        .unwrap_err()
        .refusal()
        .unwrap();
    assert_eq!(refused, Refusal::InstanceOver);
}
