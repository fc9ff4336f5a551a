//! What a visitor following a link sees, over real TCP: the earlier answers a step shows (and
//! only those), the step in their own language, when their link expires, an answer on a link
//! that has just expired given back, and a reload after an answer that posts nothing.

use std::time::Duration;

use crate::helpers::{
    Flood, TestApp, answer_step, answers, events, get, post, spawn, state_of, with_lang,
};

const SUPPLIER: [(&str, &str); 4] = [
    ("company", "<b>Acme</b> & Sons"),
    ("contact_email", "buyer@acme.example"),
    ("yearly_volume", "1200"),
    ("notes", "Deliveries on Tuesdays."),
];

async fn link(app: &TestApp, id: i64, participant: &str, ttl: u64) -> String {
    app.link_for(id, participant, ttl).await
}

/// The review of *Supplier onboarding* shows what the supplier typed, escaped, under the
/// labels of the visitor's language; the supplier's own link shows nothing of the review.
#[tokio::test]
async fn the_reviewer_sees_the_suppliers_answers_escaped_and_in_their_language() {
    let app = spawn(Flood::Memory).await;
    let id = app.start("supplier_onboarding", "Acme").await;
    let supplier = link(&app, id, "supplier", 86_400 * 3).await;
    let client = app.client();
    let first = get(&client, &app, &supplier).await;
    assert!(
        !first.has("section.earlier"),
        "the first step shows nothing"
    );
    assert_eq!(
        answer_step(&client, &app, &supplier, &SUPPLIER)
            .await
            .status,
        200
    );

    let reviewer = link(&app, id, "reviewer", 86_400 * 3).await;
    let page = get(&app.client(), &app, &with_lang(&reviewer, "en")).await;
    assert_eq!(page.status, 200);
    assert_eq!(page.first("section.earlier h4"), "Supplier details");
    assert_eq!(
        page.text("section.earlier dt"),
        [
            "Company",
            "Contact email",
            "Yearly volume",
            "Insurance certificate",
            "Notes"
        ]
    );
    assert_eq!(
        page.text("section.earlier dd"),
        [
            "<b>Acme</b> & Sons",
            "buyer@acme.example",
            "1,200",
            "",
            "Deliveries on Tuesdays."
        ]
    );
    assert!(
        !page.body.contains("<b>Acme"),
        "what the supplier typed is text, never markup"
    );
    let french = get(&app.client(), &app, &with_lang(&reviewer, "fr")).await;
    assert_eq!(
        french.first("section.earlier h4"),
        "Coordonnées du fournisseur"
    );
    assert_eq!(
        french.text("section.earlier dt"),
        [
            "Société",
            "Adresse e-mail du contact",
            "Volume annuel",
            "Attestation d'assurance",
            "Remarques"
        ]
    );

    // The review is the reviewer's: the supplier's link never shows it.
    let decided = answer_step(
        &app.client(),
        &app,
        &reviewer,
        &[("decision", "reject"), ("comment", "Missing VAT number.")],
    )
    .await;
    assert_eq!(decided.status, 200);
    let after = get(&app.client(), &app, &supplier).await;
    assert!(!after.has("section.earlier"));
    assert!(!after.body.contains("Missing VAT number."));
}

/// A step shows nothing the definition does not ask for: in *Contract review* the legal
/// branch never sees what finance answered.
#[tokio::test]
async fn a_branch_sees_nothing_of_the_other_branch_unless_asked() {
    let app = spawn(Flood::Memory).await;
    let id = app.start("contract_review", "Lease").await;
    let finance = link(&app, id, "finance", 86_400).await;
    let legal = link(&app, id, "legal", 86_400).await;
    let answered = answer_step(
        &app.client(),
        &app,
        &finance,
        &[("decision", "approve"), ("comment", "Budget is fine.")],
    )
    .await;
    assert_eq!(answered.status, 200);
    let page = get(&app.client(), &app, &legal).await;
    assert!(page.has("section.step-review"));
    assert!(!page.has("section.earlier"));
    assert!(!page.body.contains("Budget is fine."));
}

/// A French visitor of each seeded workflow reads its steps in French: no English title or
/// label is on any page their links show.
#[tokio::test]
async fn a_french_visitor_of_each_seeded_workflow_sees_no_english() {
    let app = spawn(Flood::Memory).await;
    let english = [
        "Supplier details",
        "Company",
        "Contact email",
        "Yearly volume",
        "Notes",
        "Check the supplier",
        "Approve the contract",
        "Delivery address",
        "Name",
        "Address",
        "Email",
        "Pay the order",
    ];
    let seen_in_french = |body: &str, what: &str| {
        for words in english {
            // Field names (name="company") are not words a visitor reads.
            let text = body.replace(&format!("\"{}\"", words.to_lowercase()), "");
            assert!(
                !text.contains(&format!(">{words}<"))
                    && !text.contains(&format!(">{words} <"))
                    && !text.contains(&format!("<title>{words}")),
                "{what}: «{words}» in English"
            );
        }
    };
    let supplier_onboarding = app.start("supplier_onboarding", "Fournisseur").await;
    let contract = app.start("contract_review", "Bail").await;
    let order = app.start("order_payment", "Commande").await;

    let supplier = link(&app, supplier_onboarding, "supplier", 86_400 * 3).await;
    let page = get(&app.client(), &app, &with_lang(&supplier, "fr")).await;
    assert_eq!(page.lang(), "fr");
    seen_in_french(&page.body, "the supplier's form");
    assert_eq!(
        answer_step(&app.client(), &app, &supplier, &SUPPLIER)
            .await
            .status,
        200
    );
    let reviewer = link(&app, supplier_onboarding, "reviewer", 86_400 * 3).await;
    let page = get(&app.client(), &app, &with_lang(&reviewer, "fr")).await;
    seen_in_french(&page.body, "the review");
    assert_eq!(page.first("section.step h2"), "Vérifier le fournisseur");

    for branch in ["legal", "finance"] {
        let l = link(&app, contract, branch, 86_400 * 3).await;
        let page = get(&app.client(), &app, &with_lang(&l, "fr")).await;
        seen_in_french(&page.body, branch);
        assert_eq!(page.first("section.step h2"), "Approuver le contrat");
    }

    let payer = link(&app, order, "payer", 86_400 * 3).await;
    let client = app.client();
    let page = get(&client, &app, &with_lang(&payer, "fr")).await;
    seen_in_french(&page.body, "the delivery form");
    assert_eq!(
        page.text("section.step label"),
        ["Nom *", "Adresse *", "Adresse e-mail *"]
    );
    let sent = post(
        &client,
        &app,
        &with_lang(&payer, "fr"),
        &[
            ("name", "Grace"),
            ("address", "1 rue du Port"),
            ("email", "grace@example.org"),
        ],
    )
    .await;
    assert_eq!(sent.status, 303);
    let page = get(&client, &app, &sent.location()).await;
    seen_in_french(&page.body, "the payment step");
    assert_eq!(page.first("section.step h2"), "Régler la commande");
}

/// After an answer the browser is sent to a page (303): reloading it shows the thanks again
/// and posts nothing.
#[tokio::test]
async fn a_reload_after_an_answer_does_not_post_again() {
    let app = spawn(Flood::Memory).await;
    let id = app.start("contract_review", "Lease").await;
    let legal = link(&app, id, "legal", 86_400).await;
    let client = app.client();
    let posted = post(
        &client,
        &app,
        &with_lang(&legal, "fr"),
        &[("decision", "approve"), ("comment", "")],
    )
    .await;
    assert_eq!(posted.status, 303, "post/redirect/get");
    assert_eq!(posted.location(), format!("{legal}?thanks&lang=fr"));
    let recorded = events(&app, id).await;
    for _ in 0..3 {
        let page = get(&client, &app, &posted.location()).await;
        assert_eq!(page.status, 200);
        assert_eq!(page.lang(), "fr");
        assert_eq!(page.first("h1"), "Merci");
        assert_eq!(
            page.first("p.done"),
            "Votre réponse a été enregistrée. D'autres personnes doivent encore répondre à cette étape."
        );
    }
    assert_eq!(events(&app, id).await, recorded, "a reload records nothing");
    assert_eq!(answers(&app, id).await.len(), 1);

    // Without `?thanks` the same link's page says plainly that it has answered.
    let plain = get(&app.client(), &app, &legal).await;
    assert_eq!(plain.first("h1"), "Nothing to answer here");
}

/// The step page says when its link stops working, as a `<time>` the page's script shows in
/// the visitor's zone, and warns when that is less than a day away.
#[tokio::test]
async fn the_step_page_says_when_its_link_expires_and_warns_when_it_is_close() {
    let app = spawn(Flood::Memory).await;
    let id = app.start("contract_review", "Lease").await;
    let now = app.clock.now_secs();
    let far = link(&app, id, "legal", 3 * 86_400).await;
    let page = get(&app.client(), &app, &far).await;
    let expires = orchestra::time::format_iso(now + 3 * 86_400);
    assert_eq!(page.attr("p.expiry time", "datetime"), Some(expires));
    assert_eq!(
        page.first("p.expiry time"),
        orchestra::time::format_utc(now + 3 * 86_400)
    );
    assert!(!page.has(".expires-soon"));

    let near = link(&app, id, "finance", 2 * 3600 + 30).await;
    for (lang, warning) in [
        (
            "en",
            "This link expires in about 2 hours: answer before then, or ask for a new link.",
        ),
        (
            "fr",
            "Ce lien expire dans 2\u{a0}heures environ\u{202f}: répondez d'ici là, ou demandez un nouveau lien.",
        ),
    ] {
        let page = get(&app.client(), &app, &with_lang(&near, lang)).await;
        assert_eq!(page.first(".expires-soon"), warning.replace('\u{a0}', " "));
    }
    app.clock.advance(Duration::from_secs(2 * 3600 - 60));
    let page = get(&app.client(), &app, &near).await;
    assert_eq!(
        page.first(".expires-soon"),
        "This link expires in a minute: answer now, or ask for a new link."
    );
}

/// An answer posted on a link that expired moments before is not silently lost: the page
/// gives back what was typed (escaped) and says what happened; nothing is recorded. After the
/// grace, or on a page view, it is the plain refusal like any bad link.
#[tokio::test]
async fn an_answer_on_a_link_that_has_just_expired_is_given_back_and_not_recorded() {
    let app = spawn(Flood::Memory).await;
    let id = app.start("supplier_onboarding", "Acme").await;
    let supplier = link(&app, id, "supplier", 600).await;
    assert_eq!(get(&app.client(), &app, &supplier).await.status, 200);
    // The supplier types for eleven minutes.
    app.clock.advance(Duration::from_secs(660));

    let posted = post(&app.client(), &app, &supplier, &SUPPLIER).await;
    assert_eq!(posted.status, 410);
    assert_eq!(posted.first("h1"), "This link has expired");
    assert!(
        posted
            .first("p.notice")
            .starts_with("Your answer was not recorded")
    );
    assert_eq!(
        posted.text("dd[data-kept]"),
        [
            "<b>Acme</b> & Sons",
            "buyer@acme.example",
            "1200",
            "Deliveries on Tuesdays."
        ]
    );
    assert!(!posted.body.contains("<b>Acme"), "escaped");
    assert!(answers(&app, id).await.is_empty(), "nothing recorded");
    assert_eq!(state_of(&app, id).await, ("active".into(), 0));
    let french = post(&app.client(), &app, &with_lang(&supplier, "fr"), &SUPPLIER).await;
    assert_eq!(french.first("h1"), "Ce lien a expiré");
    assert_eq!(french.first("dt"), "Société");

    // A page view of it is refused like any bad link; so is an answer a day later.
    assert_eq!(get(&app.client(), &app, &supplier).await.status, 404);
    app.clock.advance(Duration::from_secs(86_400));
    let late = post(&app.client(), &app, &supplier, &SUPPLIER).await;
    assert_eq!(late.status, 404);
    assert_eq!(late.first("h1"), "This link cannot be used");

    // A forged expiry on a genuine link is no way in: the signature covers it.
    let fresh = link(&app, id, "supplier", 600).await;
    app.clock.advance(Duration::from_secs(700));
    let mut parts: Vec<String> = fresh.split('.').map(str::to_owned).collect();
    let expiry_at = parts
        .iter()
        .position(|p| p.parse::<i64>().is_ok_and(|n| n > 1_000_000_000))
        .expect("the link carries its expiry");
    parts[expiry_at] = (app.clock.now_secs() - 10).to_string();
    let forged = parts.join(".");
    let refused = post(&app.client(), &app, &forged, &SUPPLIER).await;
    assert_eq!(refused.status, 404, "a changed expiry breaks the signature");
    assert!(answers(&app, id).await.is_empty());
}

/// A choice field and a step's help, in the visitor's language: the options offered, an
/// unknown one refused with the form kept, the option recorded in the definition's own words
/// and shown to a later step in the reader's.
#[tokio::test]
async fn a_choice_and_its_help_speak_the_visitors_language() {
    let app = spawn(Flood::Memory).await;
    let text = "form@buyer: Order | Size* (choice: Small / Medium / Large), Note | help: Pick the size you wear.\n\
                \x20 fr: Commande | Taille (Petit / Moyen / Grand), Remarque | help: Choisissez votre taille.\n\
                review@checker: Check the order | show 1\n\
                \x20 fr: Vérifier la commande\n";
    let def = orchestra::domain::workflow::Definition::parse(text).unwrap();
    orchestra::store::workflows::create(&app.db, "shirts", "Shirts", &def.to_json())
        .await
        .unwrap();
    let id = app.start("shirts", "Shirt").await;
    let buyer = link(&app, id, "buyer", 86_400).await;
    let en = get(&app.client(), &app, &with_lang(&buyer, "en")).await;
    assert_eq!(en.first("p.step-help"), "Pick the size you wear.");
    assert_eq!(
        en.text("select#f-size option"),
        ["Choose…", "Small", "Medium", "Large"]
    );
    let fr = get(&app.client(), &app, &with_lang(&buyer, "fr")).await;
    assert_eq!(fr.first("p.step-help"), "Choisissez votre taille.");
    assert_eq!(
        fr.text("select#f-size option"),
        ["Choisissez…", "Petit", "Moyen", "Grand"]
    );
    assert_eq!(
        fr.attr("select#f-size option:nth-child(3)", "value")
            .as_deref(),
        Some("medium")
    );

    let bad = post(
        &app.client(),
        &app,
        &buyer,
        &[("size", "huge"), ("note", "Blue please")],
    )
    .await;
    assert_eq!(bad.status, 422);
    assert_eq!(
        bad.first(".field-error[data-field=size]"),
        "Choose one of the options."
    );
    assert_eq!(
        bad.attr("input#f-note", "value").as_deref(),
        Some("Blue please")
    );
    assert!(answers(&app, id).await.is_empty());

    let sent = answer_step(
        &app.client(),
        &app,
        &buyer,
        &[("size", "medium"), ("note", "Blue please")],
    )
    .await;
    assert_eq!(sent.status, 200);
    assert_eq!(answers(&app, id).await[0]["fields"][0]["value"], "Medium");
    let checker = link(&app, id, "checker", 86_400).await;
    let shown = get(&app.client(), &app, &with_lang(&checker, "fr")).await;
    assert_eq!(
        shown.text("section.earlier dd"),
        ["Moyen", "Blue please"],
        "the option in the reader's language"
    );
    assert_eq!(shown.text("section.earlier dt"), ["Taille", "Remarque"]);
}
