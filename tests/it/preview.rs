//! The workflow editor's *Preview* over real TCP: the typed definition shown as each step's
//! participant will see it, and drawn, with nothing saved and what was typed kept.

use crate::helpers::{Flood, Page, TestApp, get, post, spawn};

/// Posts the editor at `path` with its CSRF token and the *Preview* button.
async fn preview(
    admin: &reqwest::Client,
    app: &TestApp,
    path: &str,
    fields: &[(&str, &str)],
) -> Page {
    let csrf = get(admin, app, path).await.csrf();
    let mut form = vec![("csrf", csrf.as_str()), ("preview", "1")];
    form.extend_from_slice(fields);
    post(admin, app, path, &form).await
}

const TYPED: &str = "form@buyer: Request | Amount* (number), Size (choice: Small / Large)\n\
                     \x20 fr: Demande | Montant, Taille (Petite / Grande)\n\
                     review[legal,finance]: Approve <it> & sign | only if Amount > 1000\n\
                     payment@buyer: Pay | 5.00 EUR\n";

#[tokio::test]
async fn a_new_workflow_is_previewed_step_by_step_and_nothing_is_saved() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;
    let before = orchestra::store::workflows::count(&app.db).await.unwrap();
    let fields = [("name", "spend"), ("label", "Spend"), ("definition", TYPED)];
    let page = preview(&admin, &app, "/admin/workflows/new?lang=en", &fields).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert_eq!(
        orchestra::store::workflows::count(&app.db).await.unwrap(),
        before
    );
    // What was typed is kept.
    assert_eq!(page.attr("input#name", "value").as_deref(), Some("spend"));
    assert_eq!(page.first("textarea#definition"), TYPED.trim_end());
    // Each step as its participant sees it, read-only, outside the editor's form.
    assert_eq!(
        page.text("section#preview section.preview-step h3"),
        ["Request", "Approve <it> & sign", "Pay"]
    );
    assert_eq!(
        page.text("section#preview label[for='p1-amount']"),
        ["Amount *"]
    );
    assert_eq!(
        page.text("section#preview select#p1-size option"),
        ["Choose…", "Small", "Large"]
    );
    assert!(page.has("section#preview section[data-step='2'] input[type=radio]"));
    assert_eq!(page.first("section#preview strong.amount"), "5.00 EUR");
    assert!(page.has("section#preview fieldset[disabled]"));
    assert!(!page.has("form section#preview"));
    // And drawn.
    assert!(page.has("section#preview svg#preview-flow[role=img]"));
    assert_eq!(
        page.first("svg#preview-flow title"),
        "Flow of Spend: 3 steps"
    );
    assert!(
        page.first("svg#preview-flow desc")
            .contains("only if Amount > 1000")
    );

    let page = preview(&admin, &app, "/admin/workflows/new?lang=fr", &fields).await;
    assert_eq!(page.status, 200);
    assert_eq!(page.first("section#preview h2"), "Aperçu");
    assert_eq!(
        page.text("section#preview select#p1-size option"),
        ["Choisissez…", "Petite", "Grande"]
    );
    assert_eq!(page.first("section#preview strong.amount"), "5,00 EUR");
    assert!(
        page.first("svg#preview-flow desc")
            .starts_with("Étape 1 sur 3 (Formulaire) : Demande.")
    );
}

#[tokio::test]
async fn a_bad_definition_is_not_previewed_but_its_errors_are_shown() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;
    let id = orchestra::store::workflows::by_name(&app.db, "contract_review")
        .await
        .unwrap()
        .unwrap()
        .id;
    let edit = format!("/admin/workflows/{id}/edit");
    let bad = "review: Fine\nfrom: Nope\n";
    let page = preview(
        &admin,
        &app,
        &edit,
        &[("label", "Contracts"), ("definition", bad)],
    )
    .await;
    assert_eq!(page.status, 422);
    assert!(page.has("p#definition-error"));
    assert!(!page.has("section#preview"));
    assert_eq!(page.first("textarea#definition"), bad.trim_end());
    // A good one on an existing workflow makes no version.
    let good = "review@boss: Sign the lease\n";
    let page = preview(
        &admin,
        &app,
        &edit,
        &[("label", "Contracts"), ("definition", good)],
    )
    .await;
    assert_eq!(page.status, 200);
    assert_eq!(page.text("section#preview h3"), ["Sign the lease"]);
    let w = orchestra::store::workflows::by_id(&app.db, id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((w.version, w.label.as_str()), (1, "Contract review"));
}
