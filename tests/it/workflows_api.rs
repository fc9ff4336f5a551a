//! Workflow definitions through the API over real TCP: made, saved as new versions and read
//! back as the command line prints them, under an ability of their own, checked by the one
//! check the CLI and the admin editor use. Every answer is held to the OpenAPI description.

use orchestra::domain::workflow::Definition;
use orchestra::store;

use crate::api::{call, described, json, scoped, token};
use crate::helpers::{Flood, Page, TestApp, get, post, read, spawn, with_lang};

const CLAIM: &str = "form@employee: Expense claim | Amount* (number), Purpose (long)\n  \
                     fr: Note de frais | Montant, Objet\nreview@manager: Manager review | show 1\n";

/// A PUT with a JSON body, held to the description (`api::call` sends no PUT).
async fn put(app: &TestApp, path: &str, token: &str, body: &str) -> Page {
    let request = app
        .client()
        .put(app.url(path))
        .header("authorization", format!("Bearer {token}"))
        .header("content-type", "application/json")
        .body(body.to_owned());
    let page = read(request).await;
    described::holds("PUT", path, &page);
    page
}

fn body(fields: &[(&str, &str)]) -> String {
    let map: serde_json::Map<String, serde_json::Value> = fields
        .iter()
        .map(|(k, v)| ((*k).to_owned(), serde_json::Value::from(*v)))
        .collect();
    serde_json::Value::Object(map).to_string()
}

/// The workflow's newest version number and definition as `orchestra workflow show` prints it.
async fn stored(app: &TestApp, name: &str) -> Option<(i64, String)> {
    let row = store::workflows::by_name(&app.db, name).await.unwrap()?;
    let text = Definition::from_json(&row.definition).unwrap().to_text();
    Some((row.version, text))
}

#[tokio::test]
async fn a_definition_is_created_saved_and_read_back_as_the_command_line_prints_it() {
    let app = spawn(Flood::Memory).await;
    let t = scoped(&app, "ci", Some(&["workflows"]), None, None).await;
    let create = body(&[
        ("name", "expense_claim"),
        ("label", "Expense claim"),
        ("definition", CLAIM),
    ]);
    let made = call(&app, "POST", "/api/v1/workflows", &t, Some(&create)).await;
    assert_eq!(made.status, 201, "{}", made.body);
    assert_eq!(
        made.header("location"),
        Some("/api/v1/workflows/expense_claim")
    );
    let made = json(&made);
    assert_eq!(made["definition"], CLAIM);
    assert_eq!(
        (made["version"].as_i64(), made["label"].as_str()),
        (Some(1), Some("Expense claim"))
    );

    let path = "/api/v1/workflows/expense_claim";
    let shown = call(&app, "GET", path, &t, None).await;
    assert_eq!(shown.status, 200, "{}", shown.body);
    let text = json(&shown)["definition"].as_str().unwrap().to_owned();
    assert_eq!(text, CLAIM);
    assert_eq!(Some((1, text.clone())), stored(&app, "expense_claim").await);

    // What was read, saved back, is the same version; a changed one is the next.
    let same = put(&app, path, &t, &body(&[("definition", &text)])).await;
    assert_eq!(
        (same.status, json(&same)["version"].as_i64()),
        (200, Some(1))
    );
    let changed = format!("{text}review@finance: Finance review\n");
    let saved = put(
        &app,
        path,
        &t,
        &body(&[("definition", &changed), ("label", "Claims")]),
    )
    .await;
    assert_eq!(saved.status, 200, "{}", saved.body);
    let saved = json(&saved);
    assert_eq!(
        (saved["version"].as_i64(), saved["label"].as_str()),
        (Some(2), Some("Claims"))
    );
    assert_eq!(saved["definition"], changed.as_str());
    let shown = json(&call(&app, "GET", path, &t, None).await);
    assert_eq!(shown["definition"], changed.as_str());
    assert_eq!(Some((2, changed)), stored(&app, "expense_claim").await);

    // The name is taken now; an unknown workflow is not found.
    let again = call(&app, "POST", "/api/v1/workflows", &t, Some(&create)).await;
    assert_eq!(
        (again.status, json(&again)["error"].as_str()),
        (409, Some("name_taken"))
    );
    let nope = put(
        &app,
        "/api/v1/workflows/nope",
        &t,
        &body(&[("definition", CLAIM)]),
    )
    .await;
    assert_eq!(nope.status, 404);
    assert_eq!(
        call(&app, "GET", "/api/v1/workflows/nope", &t, None)
            .await
            .status,
        404
    );
}

/// Every wrong line is refused, each naming its line and what is wrong, with the words the
/// command line says; nothing is saved.
#[tokio::test]
async fn a_bad_definition_names_each_wrong_line_and_saves_nothing() {
    let app = spawn(Flood::Memory).await;
    let t = scoped(&app, "ci", Some(&["workflows"]), None, None).await;
    let bad = "form: Claim | Receipt* (picture)\nreview Check\n";
    let refused = call(
        &app,
        "POST",
        "/api/v1/workflows",
        &t,
        Some(&body(&[
            ("name", "claim"),
            ("label", "Claim"),
            ("definition", bad),
        ])),
    )
    .await;
    assert_eq!(refused.status, 422, "{}", refused.body);
    let answer = json(&refused);
    assert_eq!(
        (answer["error"].as_str(), answer["field"].as_str()),
        (Some("invalid"), Some("definition"))
    );
    let problems = answer["problems"].as_array().unwrap();
    let lines: Vec<_> = problems.iter().map(|p| p["line"].as_i64()).collect();
    assert_eq!(lines, [Some(1), Some(2)]);
    assert_eq!(
        problems[1]["message"],
        "Line 2: put a colon after the kind, as in \"review: Check the order\"."
    );
    assert_eq!(answer["message"], problems[0]["message"]);
    assert_eq!(stored(&app, "claim").await, None);

    // A save of a seeded workflow, refused, leaves its newest version as it was.
    let before = stored(&app, "contract_review").await;
    let path = "/api/v1/workflows/contract_review";
    let refused = put(&app, path, &t, &body(&[("definition", bad)])).await;
    assert_eq!(
        (refused.status, json(&refused)["field"].as_str()),
        (422, Some("definition"))
    );
    assert_eq!(stored(&app, "contract_review").await, before);
    // The name and the label are checked as the editor checks them.
    let refused = call(
        &app,
        "POST",
        "/api/v1/workflows",
        &t,
        Some(&body(&[
            ("name", "Bad Name"),
            ("label", "x"),
            ("definition", CLAIM),
        ])),
    )
    .await;
    assert_eq!(
        (refused.status, json(&refused)["field"].as_str()),
        (422, Some("name"))
    );
    let refused = put(
        &app,
        path,
        &t,
        &body(&[("definition", CLAIM), ("label", " ")]),
    )
    .await;
    assert_eq!(
        (refused.status, json(&refused)["field"].as_str()),
        (422, Some("label"))
    );
    assert_eq!(stored(&app, "contract_review").await, before);
}

/// Editing definitions is an ability of its own: a token without it is refused, however much
/// else it may do, and a token kept to some workflows may make and save only those.
#[tokio::test]
async fn editing_definitions_needs_its_own_ability_and_the_tokens_workflows() {
    let app = spawn(Flood::Memory).await;
    let everything_else = token(&app, "crm", None, None).await;
    let create = body(&[("name", "claim"), ("label", "Claim"), ("definition", CLAIM)]);
    let refused = call(
        &app,
        "POST",
        "/api/v1/workflows",
        &everything_else,
        Some(&create),
    )
    .await;
    assert_eq!(
        (refused.status, json(&refused)["error"].as_str()),
        (403, Some("forbidden_scope"))
    );
    let path = "/api/v1/workflows/contract_review";
    let before = stored(&app, "contract_review").await;
    let refused = put(
        &app,
        path,
        &everything_else,
        &body(&[("definition", CLAIM)]),
    )
    .await;
    assert_eq!(
        (refused.status, json(&refused)["error"].as_str()),
        (403, Some("forbidden_scope"))
    );
    assert_eq!(stored(&app, "contract_review").await, before);
    assert_eq!(stored(&app, "claim").await, None);
    // Reading one needs no ability, as listing them does.
    assert_eq!(
        call(&app, "GET", path, &everything_else, None).await.status,
        200
    );

    let kept = scoped(&app, "kept", Some(&["workflows"]), None, Some(&["claim"])).await;
    let refused = put(&app, path, &kept, &body(&[("definition", CLAIM)])).await;
    assert_eq!(refused.status, 404, "beyond its workflows, as if missing");
    assert_eq!(call(&app, "GET", path, &kept, None).await.status, 404);
    let other = body(&[("name", "other"), ("label", "Other"), ("definition", CLAIM)]);
    let refused = call(&app, "POST", "/api/v1/workflows", &kept, Some(&other)).await;
    assert_eq!(
        (refused.status, json(&refused)["error"].as_str()),
        (403, Some("forbidden_scope"))
    );
    let made = call(&app, "POST", "/api/v1/workflows", &kept, Some(&create)).await;
    assert_eq!(made.status, 201, "{}", made.body);
    assert_eq!(stored(&app, "contract_review").await, before);
    assert_eq!(stored(&app, "other").await, None);
}

/// Null and `""` in each field of a create and a save are answered as the description says:
/// taken where it takes them, a 422 naming the field where it does not.
#[tokio::test]
async fn null_and_empty_in_each_field_are_answered_as_described() {
    use serde_json::{Value, json as j};
    let app = spawn(Flood::Memory).await;
    let t = scoped(&app, "ci", Some(&["workflows"]), None, None).await;
    let (mut taken, mut refused) = (0, 0);
    for (method, field) in [
        ("POST", "name"),
        ("POST", "label"),
        ("POST", "definition"),
        ("PUT", "definition"),
        ("PUT", "label"),
    ] {
        for (i, value) in [Value::Null, Value::String(String::new())]
            .into_iter()
            .enumerate()
        {
            let mut body =
                j!({"name": format!("w_{field}_{i}"), "label": "W", "definition": CLAIM});
            let path = if method == "POST" {
                "/api/v1/workflows".to_owned()
            } else {
                body.as_object_mut().unwrap().remove("name");
                "/api/v1/workflows/contract_review".to_owned()
            };
            body[field] = value.clone();
            let described = described::takes(method, &path, &body);
            let page = if method == "POST" {
                call(&app, "POST", &path, &t, Some(&body.to_string())).await
            } else {
                put(&app, &path, &t, &body.to_string()).await
            };
            let said = format!("{method} {field}={value}: {} {}", page.status, page.body);
            match described {
                Ok(()) => {
                    assert!(
                        matches!(page.status, 200 | 201),
                        "taken as described: {said}"
                    );
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
    // Only a save's null label is taken (the label is kept).
    assert_eq!((taken, refused), (1, 9));
}

/// An administrator grants the ability on the tokens page: its box is there, unticked on a
/// blank form, labelled in the reader's language, and a token made with it may save.
#[tokio::test]
async fn an_administrator_grants_the_editing_of_definitions_on_the_tokens_page() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;
    let boxed = "input[name=ability][value=workflows]";
    let page = get(&admin, &app, "/admin/config/api").await;
    assert!(page.has(boxed), "{}", page.body);
    assert!(
        !page.has(&format!("{boxed}[checked]")),
        "not ticked unless chosen"
    );
    assert!(
        page.body
            .contains("Create workflows and save new versions of their definitions")
    );
    let french = get(&admin, &app, &with_lang("/admin/config/api", "fr")).await;
    assert!(
        french
            .body
            .contains("Créer des processus et enregistrer de nouvelles versions")
    );
    let made = post(
        &admin,
        &app,
        "/admin/config/api",
        &[
            ("csrf", &page.csrf()),
            ("name", "ci"),
            ("rate", ""),
            ("burst", ""),
            ("ability", "workflows"),
            ("reach", "own"),
        ],
    )
    .await;
    assert_eq!(made.status, 303, "{}", made.body);
    let shown = get(&admin, &app, "/admin/config/api").await;
    let text = shown.attr("input#new-token", "value").expect("shown once");
    let path = "/api/v1/workflows/contract_review";
    let definition = stored(&app, "contract_review").await.unwrap().1;
    let changed = format!("{definition}review[legal]: Sign it\n");
    let saved = put(&app, path, &text, &body(&[("definition", &changed)])).await;
    assert_eq!(
        (saved.status, json(&saved)["version"].as_i64()),
        (200, Some(2)),
        "{}",
        saved.body
    );
}
