//! Routes on an answer over the real doorway: a rejection sends the claim back to the employee
//! with what they typed and the reviewer's words, the steps from there are asked again, rounds
//! stop; `on approve go`, `if … go` and `go end` jump.

use crate::helpers::{Flood, TestApp, answer_step, answers, events, get, spawn, state_of};

/// The evaluator's expense claim, sent back to the employee on a manager's rejection.
const CLAIM: &str = "form@employee: Expense claim | Amount* (number), Purpose* (choice: Travel / Meals / Other)\n\
                     review@manager: Manager review | show 1 | on reject back to 1 | rounds 3\n\
                     review@finance: Finance review | only if Amount > 1000\n";

async fn started(app: &TestApp, name: &str, definition: &str) -> i64 {
    let definition = orchestra::domain::workflow::Definition::parse(definition).unwrap();
    orchestra::store::workflows::create(&app.db, name, "Expense claim", &definition.to_json())
        .await
        .unwrap();
    app.start(name, "Claim").await
}

async fn answer(app: &TestApp, id: i64, who: &str, form: &[(&str, &str)]) {
    let link = app.link(id, Some(who)).await;
    let page = answer_step(&app.client(), app, &link, form).await;
    assert_eq!(page.status, 200, "{}", page.body);
}

async fn round_of(app: &TestApp, id: i64) -> i64 {
    orchestra::store::instances::by_id(&app.db, id)
        .await
        .unwrap()
        .unwrap()
        .round
}

#[tokio::test]
async fn a_rejection_sends_the_claim_back_with_what_was_typed_and_the_reviewers_words() {
    let app = spawn(Flood::Memory).await;
    let id = started(&app, "claim", CLAIM).await;
    answer(
        &app,
        id,
        "employee",
        &[("amount", "1500"), ("purpose", "meals")],
    )
    .await;
    answer(
        &app,
        id,
        "manager",
        &[
            ("decision", "reject"),
            ("comment", "The receipt is missing."),
        ],
    )
    .await;
    assert_eq!(state_of(&app, id).await, ("active".to_owned(), 0));
    assert_eq!(round_of(&app, id).await, 1);

    // The employee's page: the manager's words above the form, the earlier answers in it.
    let employee = app.link(id, Some("employee")).await;
    let page = get(&app.client(), &app, &employee).await;
    assert_eq!(page.status, 200);
    assert!(
        page.body.contains("The receipt is missing."),
        "{}",
        page.body
    );
    assert_eq!(
        page.attr("input[name=amount]", "value").as_deref(),
        Some("1500")
    );
    assert_eq!(
        page.attr("select[name=purpose] option[selected]", "value")
            .as_deref(),
        Some("meals")
    );
    // The manager's old link has nothing to answer until the claim comes back.
    let manager = app.link(id, Some("manager")).await;
    let waiting = get(&app.client(), &app, &manager).await;
    assert!(!waiting.has("input[name=decision]"), "{}", waiting.body);

    // Answered again, the claim goes on: the manager sees the new amount, not the old.
    answer(
        &app,
        id,
        "employee",
        &[("amount", "800"), ("purpose", "meals")],
    )
    .await;
    assert_eq!(state_of(&app, id).await, ("active".to_owned(), 1));
    // The instance's page knows the manager has something to answer again in this round: a
    // link may be issued and the step handed over.
    let admin = app.admin_client().await;
    let shown = get(&admin, &app, &format!("/admin/instances/{id}")).await;
    assert!(
        shown.has("form.contact-row[data-participant=manager]"),
        "{}",
        shown.body
    );
    let review = get(&app.client(), &app, &manager).await;
    assert!(review.has("input[name=decision]"), "{}", review.body);
    assert!(review.body.contains("800"), "{}", review.body);
    assert!(!review.body.contains("1500"), "{}", review.body);
    answer(
        &app,
        id,
        "manager",
        &[("decision", "approve"), ("comment", "")],
    )
    .await;
    // 800 is under 1,000: finance, asked only above, is skipped on the new answers.
    assert_eq!(state_of(&app, id).await.0, "complete");

    // The history keeps every round: both answers of the employee, the send-back between.
    let history: Vec<(i64, String)> = events(&app, id)
        .await
        .into_iter()
        .filter(|(_, _, e)| e != "emailed" && e != "link_issued")
        .map(|(step, _, e)| (step, e))
        .collect();
    let expected: Vec<(i64, String)> = [
        (0, "started"),
        (0, "answered"),
        (1, "answered"),
        (0, "reopened"),
        (0, "answered"),
        (1, "answered"),
        (2, "skipped"),
        (3, "complete"),
    ]
    .into_iter()
    .map(|(s, e)| (s, e.to_owned()))
    .collect();
    assert_eq!(history, expected);
    let given = answers(&app, id).await;
    assert_eq!(given[0]["fields"][0]["value"], "1500");
    assert_eq!(given[2]["fields"][0]["value"], "800");
    // Webhooks are told: the step sent back (by the manager), the step skipped.
    let told: Vec<(String, Option<i64>, Option<String>)> =
        orchestra::store::outbox::for_instance(&app.db, id)
            .await
            .unwrap()
            .into_iter()
            .filter(|m| {
                m.event.as_str().starts_with("step.") && m.event.as_str() != "step.answered"
            })
            .map(|m| (m.event.as_str().to_owned(), m.step_index, m.participant))
            .collect();
    assert_eq!(
        told,
        [
            (
                "step.reopened".to_owned(),
                Some(0),
                Some("manager".to_owned())
            ),
            ("step.skipped".to_owned(), Some(2), None),
        ]
    );
}

#[tokio::test]
async fn rounds_stop_and_the_claim_ends_as_rejected() {
    let app = spawn(Flood::Memory).await;
    let definition = CLAIM.replace("rounds 3", "rounds 2");
    let id = started(&app, "claim", &definition).await;
    let reject = [("decision", "reject"), ("comment", "No.")];
    answer(
        &app,
        id,
        "employee",
        &[("amount", "10"), ("purpose", "meals")],
    )
    .await;
    answer(&app, id, "manager", &reject).await;
    assert_eq!(state_of(&app, id).await, ("active".to_owned(), 0));
    answer(
        &app,
        id,
        "employee",
        &[("amount", "12"), ("purpose", "meals")],
    )
    .await;
    answer(&app, id, "manager", &reject).await;
    // Two rounds were allowed: the second rejection ends it.
    assert_eq!(state_of(&app, id).await.0, "rejected");
    assert_eq!(round_of(&app, id).await, 1);
}

#[tokio::test]
async fn a_rejection_without_a_route_still_ends_the_claim() {
    let app = spawn(Flood::Memory).await;
    let definition = CLAIM.replace(" | on reject back to 1 | rounds 3", "");
    let id = started(&app, "claim", &definition).await;
    answer(
        &app,
        id,
        "employee",
        &[("amount", "10"), ("purpose", "meals")],
    )
    .await;
    answer(
        &app,
        id,
        "manager",
        &[("decision", "reject"), ("comment", "No.")],
    )
    .await;
    assert_eq!(state_of(&app, id).await.0, "rejected");
}

/// A form routes on its own answer; a review's approval jumps to the end.
const JUMPS: &str = "form@employee: Expense claim | Amount* (number) | if Amount > 5000 go 3\n\
                     review@manager: Manager review | on approve go end\n\
                     review@board: Board review\n";

#[tokio::test]
async fn a_form_routes_on_its_answer_and_an_approval_may_go_to_the_end() {
    let app = spawn(Flood::Memory).await;
    let large = started(&app, "jumps", JUMPS).await;
    answer(&app, large, "employee", &[("amount", "6000")]).await;
    assert_eq!(state_of(&app, large).await, ("active".to_owned(), 2));
    assert!(
        events(&app, large)
            .await
            .contains(&(1, String::new(), "skipped".to_owned()))
    );

    let small = app.start("jumps", "Small").await;
    answer(&app, small, "employee", &[("amount", "60")]).await;
    assert_eq!(state_of(&app, small).await, ("active".to_owned(), 1));
    answer(
        &app,
        small,
        "manager",
        &[("decision", "approve"), ("comment", "")],
    )
    .await;
    // `go end`: the board is not asked.
    assert_eq!(state_of(&app, small).await.0, "complete");
}

/// A database as the previous main left it (migrations 1 to 20), with a claim in flight: the
/// employee answered 1,500, the manager has not. After the upgrade the definition means what it
/// meant (finance asked above 1,000), the manager's link answers, and the claim goes on to
/// finance and completes, all in round 0.
#[tokio::test]
async fn a_claim_in_flight_before_rounds_goes_on_after_the_upgrade() {
    let old = "form@employee: Expense claim | Amount* (number), Purpose* (choice: Travel / Meals / Other)\n\
               review@manager: Manager review | show 1\n\
               review@finance: Finance review | only if Amount > 1000\n";
    let definition = orchestra::domain::workflow::Definition::parse(old).unwrap();
    let database = crate::helpers::fresh_database().await;
    let pool = crate::helpers::schema_before(&database.url, 21).await;
    let answered = serde_json::json!({"fields": [
        {"name": "amount", "label": "Amount", "value": "1500"},
        {"name": "purpose", "label": "Purpose", "value": "Travel"},
    ]})
    .to_string();
    sqlx::query("INSERT INTO workflows (name, label, created_at, updated_at) VALUES ('claim', 'Claim', 1700000000, 1700000000)")
        .execute(&pool).await.unwrap();
    sqlx::query("INSERT INTO workflow_versions (workflow_id, number, definition, created_at) VALUES (1, 1, $1, 1700000000)")
        .bind(definition.to_json())
        .execute(&pool).await.unwrap();
    sqlx::query("INSERT INTO instances (workflow_id, version_id, subject_title, subject_body, token, step_index, state, created_at, updated_at) VALUES (1, 1, 'Old claim', '', 'instance-token', 1, 'active', 1700000000, 1700000000)")
        .execute(&pool).await.unwrap();
    for (step, event, answer) in [(0, "started", "{}"), (0, "answered", answered.as_str())] {
        sqlx::query("INSERT INTO history (instance_id, step_index, branch, event, answer, at, participant) VALUES (1, $1, '', $2, $3, 1700000000, 'employee')")
            .bind(step)
            .bind(event)
            .bind(answer)
            .execute(&pool)
            .await
            .unwrap();
    }
    pool.close().await;
    let app = crate::helpers::spawn_on(database, |_, clock| {
        std::sync::Arc::new(orchestra::limits::flood::MemoryFlood::new(4096, clock))
    })
    .await;
    let stored = orchestra::store::workflows::version(&app.db, 1)
        .await
        .unwrap()
        .unwrap();
    let read = orchestra::domain::workflow::Definition::from_json(&stored.definition).unwrap();
    assert_eq!(read, definition);
    assert_eq!(read.to_text(), old);
    let manager = app.link(1, Some("manager")).await;
    let page = get(&app.client(), &app, &manager).await;
    assert!(page.has("input[name=decision]"), "{}", page.body);
    assert!(page.body.contains("1,500"), "the earlier answer is shown");
    answer(
        &app,
        1,
        "manager",
        &[("decision", "approve"), ("comment", "")],
    )
    .await;
    assert_eq!(state_of(&app, 1).await, ("active".to_owned(), 2));
    answer(
        &app,
        1,
        "finance",
        &[("decision", "approve"), ("comment", "")],
    )
    .await;
    assert_eq!(state_of(&app, 1).await.0, "complete");
    assert_eq!(round_of(&app, 1).await, 0);
}

/// The workflow page says what a link may ask of the doorway, every round counted, and warns
/// when the per-link limit is below it: the employee's page, answer and thank-you page, three
/// rounds over, is 9 requests; a limit of 6 would refuse them in the third round.
#[tokio::test]
async fn the_workflow_page_warns_when_the_per_link_limit_is_below_the_rounds() {
    let app = spawn(Flood::Memory).await;
    started(&app, "claim", CLAIM).await;
    let id = orchestra::store::workflows::by_name(&app.db, "claim")
        .await
        .unwrap()
        .unwrap()
        .id;
    app.set(&[
        ("orchestra.request_limits.enabled", "true"),
        ("interaction.limits.per_link", "6"),
    ])
    .await;
    let admin = app.admin_client().await;
    let page = get(&admin, &app, &format!("/admin/workflows/{id}?lang=en")).await;
    assert!(
        page.has("p#requests-per-link.notice-warning"),
        "{}",
        page.body
    );
    assert!(
        page.first("p#requests-per-link")
            .contains("up to 9 requests")
    );
    app.set(&[("interaction.limits.per_link", "12")]).await;
    let page = get(&admin, &app, &format!("/admin/workflows/{id}?lang=fr")).await;
    assert!(
        !page.has("p#requests-per-link.notice-warning"),
        "{}",
        page.body
    );
    assert!(
        page.first("p#requests-per-link")
            .contains("jusqu'à 9 requêtes")
    );
}
