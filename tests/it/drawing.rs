//! The drawing of a flow over real TCP: a workflow's page draws its steps, an instance's page
//! draws where the instance stands, both as an image with a title and the flow in words, in
//! the reader's language, every user text escaped.

use crate::helpers::{Flood, Page, TestApp, answer_step, get, spawn};

async fn workflow_id(app: &TestApp, name: &str) -> i64 {
    let w = orchestra::store::workflows::by_name(&app.db, name).await;
    w.unwrap().expect("the workflow exists").id
}

/// The drawing's title and its words, read back from the page as a browser parses it.
fn drawing(page: &Page) -> (String, String) {
    assert!(page.has("svg.flow[role=img]"), "{}", page.body);
    assert_eq!(
        page.attr("svg.flow", "aria-labelledby").as_deref(),
        Some("flow-title")
    );
    assert_eq!(
        page.attr("svg.flow", "aria-describedby").as_deref(),
        Some("flow-desc")
    );
    (
        page.first("svg.flow title#flow-title"),
        page.first("svg.flow desc#flow-desc"),
    )
}

#[tokio::test]
async fn a_workflows_page_draws_its_steps_in_the_readers_language() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;
    let id = workflow_id(&app, "supplier_onboarding").await;
    let page = get(&admin, &app, &format!("/admin/workflows/{id}?lang=en")).await;
    assert_eq!(page.status, 200);
    assert!(page.header("content-security-policy").is_some());
    let (title, words) = drawing(&page);
    assert_eq!(title, "Flow of Supplier onboarding: 2 steps");
    assert!(
        words.starts_with("Step 1 of 2 (Form): Supplier details. By supplier."),
        "{words}"
    );
    assert!(words.contains("Step 2 of 2 (Review): Check the supplier. By reviewer."));
    assert!(words.ends_with("Then the end."), "{words}");
    assert_eq!(page.text("svg.flow g.flow-step").len(), 2);

    let page = get(&admin, &app, &format!("/admin/workflows/{id}?lang=fr")).await;
    let (title, words) = drawing(&page);
    assert_eq!(
        title,
        "Déroulement de Intégration des fournisseurs : 2 étapes"
    );
    assert!(
        words.starts_with("Étape 1 sur 2 (Formulaire) : Coordonnées du fournisseur. Par supplier."),
        "{words}"
    );
    assert!(words.ends_with("Puis la fin."), "{words}");
}

#[tokio::test]
async fn a_workflows_label_and_titles_are_text_in_the_drawing() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;
    let id = workflow_id(&app, "contract_review").await;
    let def = orchestra::domain::workflow::Definition::parse(
        "review[a,b]: Sign <script>alert(1)</script> & co | any\n",
    )
    .unwrap();
    orchestra::store::workflows::save(&app.db, id, "R&D <b>deals</b>", &def.to_json())
        .await
        .unwrap();
    let page = get(&admin, &app, &format!("/admin/workflows/{id}")).await;
    let (title, words) = drawing(&page);
    assert_eq!(title, "Flow of R&D <b>deals</b>: one step");
    assert!(
        words.contains("Sign <script>alert(1)</script> & co."),
        "{words}"
    );
    assert!(words.contains("1 of 2 needed"), "{words}");
    assert!(!page.has("svg.flow script") && !page.has("svg.flow b"));
}

#[tokio::test]
async fn an_instances_page_draws_where_it_stands_and_how_it_ended() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;
    let id = app.start("supplier_onboarding", "Acme").await;
    let supplier = app.link(id, Some("supplier")).await;
    let filed = answer_step(
        &app.client(),
        &app,
        &supplier,
        &[
            ("company", "Acme"),
            ("contact_email", "buyer@acme.example"),
            ("yearly_volume", "12"),
            ("notes", ""),
        ],
    )
    .await;
    assert_eq!(filed.status, 200);
    let page = get(&admin, &app, &format!("/admin/instances/{id}?lang=en")).await;
    let (title, words) = drawing(&page);
    assert_eq!(title, "Where this instance stands in Supplier onboarding");
    assert!(
        words.contains("Supplier details. By supplier. Done."),
        "{words}"
    );
    assert!(
        words.contains("Check the supplier. By reviewer. Current step."),
        "{words}"
    );
    assert!(page.has("svg.flow g.flow-step.done[data-step='1']"));
    assert!(page.has("svg.flow g.flow-step.current[data-step='2']"));
    assert!(!page.has("svg.flow g.flow-end.reached"));
    let page = get(&admin, &app, &format!("/admin/instances/{id}?lang=fr")).await;
    let (title, words) = drawing(&page);
    assert_eq!(
        title,
        "Où en est cette instance dans Intégration des fournisseurs"
    );
    assert!(
        words.contains("Vérifier le fournisseur. Par reviewer. Étape en cours."),
        "{words}"
    );

    let reviewer = app.link(id, Some("reviewer")).await;
    let rejected = answer_step(
        &app.client(),
        &app,
        &reviewer,
        &[("decision", "reject"), ("comment", "No papers.")],
    )
    .await;
    assert_eq!(rejected.status, 200);
    let page = get(&admin, &app, &format!("/admin/instances/{id}?lang=en")).await;
    let (_, words) = drawing(&page);
    assert!(words.contains("By reviewer. Rejected here."), "{words}");
    assert!(words.ends_with("End: Rejected."), "{words}");
    assert!(page.has("svg.flow g.flow-step.ended[data-step='2']"));
    assert!(page.has("svg.flow g.flow-end.reached.rejected"));
    let page = get(&admin, &app, &format!("/admin/instances/{id}?lang=fr")).await;
    let (_, words) = drawing(&page);
    assert!(words.ends_with("Fin : Refusée."), "{words}");
}
