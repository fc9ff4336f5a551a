//! A form's typed fields over the real doorway: numbers, dates, web addresses and checkboxes
//! typed as a visitor writes them, stored in one spelling, shown back in the reader's, refused
//! beside their field with what was typed kept; and every error tied to its input.

use scraper::{Html, Selector};

use crate::helpers::{
    Flood, Page, TestApp, answer_step, answers, events, get, post, spawn, state_of, with_lang,
};

const CLAIM: &str = "form@employee: Claim | Amount* (number, 0..100000), Due* (date), Site (url), Agree* (checkbox), Note\n\
                     review@manager: Check | show 1\n\
                     review@finance: Finance | only if Amount > 1000 | show 1\n";

async fn started(app: &TestApp) -> i64 {
    let definition = orchestra::domain::workflow::Definition::parse(CLAIM).unwrap();
    orchestra::store::workflows::create(&app.db, "claim", "Claim", &definition.to_json())
        .await
        .unwrap();
    app.start("claim", "Claim").await
}

/// A good answer to the claim's form, with `changes` over it.
fn claim<'a>(changes: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut form = vec![
        ("amount", "12"),
        ("due", "2027-12-31"),
        ("site", "https://example.org/"),
        ("agree", "yes"),
        ("note", "Hello & <goodbye>"),
    ];
    for (name, value) in changes {
        form.retain(|(k, _)| k != name);
        if !value.is_empty() {
            form.push((name, value));
        }
    }
    form
}

/// No answer was recorded past the `count` there were, and the instance has not moved.
async fn assert_nothing_recorded(app: &TestApp, id: i64, count: usize) {
    assert_eq!(answers(app, id).await.len(), count, "nothing is recorded");
    let answered = events(app, id).await;
    assert_eq!(
        answered.iter().filter(|(_, _, e)| e == "answered").count(),
        count
    );
}

async fn employee_answers(app: &TestApp, id: i64, lang: &str, form: &[(&str, &str)]) -> Page {
    let link = app.link(id, Some("employee")).await;
    answer_step(&app.client(), app, &with_lang(&link, lang), form).await
}

/// The stored value of field `name` in the instance's first answer.
async fn stored(app: &TestApp, id: i64, name: &str) -> String {
    let answers = answers(app, id).await;
    let fields = answers[0]["fields"].as_array().expect("a form's answer");
    let field = fields
        .iter()
        .find(|f| f["name"] == name)
        .expect("the field");
    field["value"].as_str().expect("a string").to_owned()
}

/// The manager's page (which shows step 1) in a language.
async fn manager_page(app: &TestApp, id: i64, lang: &str) -> Page {
    let link = app.link(id, Some("manager")).await;
    let page = get(&app.client(), app, &with_lang(&link, lang)).await;
    assert_eq!(page.status, 200, "{}", page.body);
    page
}

async fn manager_approves(app: &TestApp, id: i64) {
    let manager = app.link(id, Some("manager")).await;
    let form = [("decision", "approve"), ("comment", "")];
    let approved = answer_step(&app.client(), app, &manager, &form).await;
    assert_eq!(approved.status, 200, "{}", approved.body);
}

/// The value shown for the label `label` in a page's show block.
fn shown(page: &Page, label: &str) -> String {
    let html = Html::parse_document(&page.body);
    let dt = Selector::parse(".earlier dl.answer dt").unwrap();
    let found = html
        .select(&dt)
        .find(|e| e.text().collect::<String>().trim() == label)
        .unwrap_or_else(|| panic!("no {label} shown: {}", page.body));
    let dd = found
        .next_siblings()
        .find_map(scraper::ElementRef::wrap)
        .expect("its value");
    dd.text().collect::<String>().trim().to_owned()
}

#[tokio::test]
async fn a_number_typed_with_spaces_is_stored_as_its_shortest_decimal_and_compares_as_one() {
    let app = spawn(Flood::Memory).await;
    started(&app).await;
    // Started through the API, to read it there: a token reads the instances it started.
    let token = crate::api::token(&app, "crm", None, None).await;
    let body = r#"{"workflow":"claim","subject":{"title":"Claim","body":""}}"#;
    let made = crate::api::call(&app, "POST", "/api/v1/instances", &token, Some(body)).await;
    assert_eq!(made.status, 201, "{}", made.body);
    let id = serde_json::from_str::<serde_json::Value>(&made.body).unwrap()["id"]
        .as_i64()
        .unwrap();
    let page = employee_answers(&app, id, "en", &claim(&[("amount", "1 250,50")])).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert_eq!(stored(&app, id, "amount").await, "1250.5");
    let read = crate::api::call(
        &app,
        "GET",
        &format!("/api/v1/instances/{id}"),
        &token,
        None,
    )
    .await;
    let view: serde_json::Value = serde_json::from_str(&read.body).unwrap();
    let answered = view["history"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["event"] == "answered")
        .expect("the answer in the API's history");
    assert_eq!(answered["answer"]["fields"][0]["value"], "1250.5");

    // Shown in the reader's writing: a narrow no-break space between thousands in French.
    assert_eq!(
        shown(&manager_page(&app, id, "en").await, "Amount"),
        "1,250.5"
    );
    assert_eq!(
        shown(&manager_page(&app, id, "fr").await, "Amount"),
        "1\u{202f}250,5"
    );
    // `only if Amount > 1000` holds: the manager's approval goes on to finance.
    manager_approves(&app, id).await;
    assert_eq!(state_of(&app, id).await, ("active".to_owned(), 2));
    // And compares as a number, not as text: 800 is not over 1000, though "800" > "1000".
    let small = app.start("claim", "Claim").await;
    let page = employee_answers(&app, small, "fr", &claim(&[("amount", "800,00")])).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert_eq!(stored(&app, small, "amount").await, "800");
    manager_approves(&app, small).await;
    assert_eq!(
        state_of(&app, small).await.0,
        "complete",
        "finance is skipped"
    );

    // Each spelling of the same amount is one value, in either language.
    for (lang, typed) in [
        ("fr", "1\u{a0}250,50"),
        ("fr", "1\u{202f}250,50"),
        ("en", "1250,50"),
        ("en", "1,250.50"),
        ("fr", "1250.50"),
    ] {
        let id = app.start("claim", "Claim").await;
        let page = employee_answers(&app, id, lang, &claim(&[("amount", typed)])).await;
        assert_eq!(page.status, 200, "{typed}: {}", page.body);
        assert_eq!(stored(&app, id, "amount").await, "1250.5", "{typed}");
    }
}

#[tokio::test]
async fn a_number_out_of_bounds_or_ambiguous_is_refused_naming_why() {
    let app = spawn(Flood::Memory).await;
    let id = started(&app).await;
    let link = app.link(id, Some("employee")).await;
    let form = get(&app.client(), &app, &link).await;
    assert_eq!(
        form.attr("input#f-amount", "inputmode").as_deref(),
        Some("decimal")
    );
    assert_eq!(form.attr("input#f-amount", "type"), None);
    for (lang, typed, error) in [
        ("en", "100 001", "Enter a number from 0 to 100,000."),
        ("fr", "-1", "Saisissez un nombre de 0 à 100\u{202f}000."),
        (
            "fr",
            "1.250",
            "« 1.250 » se lit de deux façons : écrivez 1250 ou 1,250.",
        ),
    ] {
        let page = employee_answers(&app, id, lang, &claim(&[("amount", typed)])).await;
        assert_eq!(page.status, 422, "{typed}");
        assert_eq!(page.first("p#f-amount-error"), error);
        assert_eq!(page.attr("input#f-amount", "value").as_deref(), Some(typed));
    }
    assert_nothing_recorded(&app, id, 0).await;
}

#[tokio::test]
async fn an_impossible_french_date_is_refused_with_what_was_typed_kept_and_a_good_one_stored_iso() {
    let app = spawn(Flood::Memory).await;
    let id = started(&app).await;
    let page = employee_answers(
        &app,
        id,
        "fr",
        &claim(&[("due", "31/02/2027"), ("amount", "1 250,50")]),
    )
    .await;
    assert_eq!(page.status, 422, "{}", page.body);
    assert_eq!(page.lang(), "fr");
    assert_eq!(
        page.first("p#f-due-error"),
        "Le 31/02/2027 n'est pas un jour du calendrier : vérifiez le jour et le mois."
    );
    assert_eq!(page.attr("input#f-due", "type").as_deref(), Some("date"));
    assert_eq!(
        page.attr("input#f-due", "value").as_deref(),
        Some("31/02/2027")
    );
    // The other fields come back as typed, the box still ticked.
    assert_eq!(
        page.attr("input#f-amount", "value").as_deref(),
        Some("1 250,50")
    );
    assert_eq!(
        page.attr("input#f-note", "value").as_deref(),
        Some("Hello & <goodbye>")
    );
    assert_eq!(page.attr("input#f-agree", "checked").as_deref(), Some(""));
    assert!(!page.has("p#f-amount-error"));
    assert_nothing_recorded(&app, id, 0).await;

    // Day first in French; month first in English refuses the same text.
    let english = employee_answers(&app, id, "en", &claim(&[("due", "31/12/2027")])).await;
    assert_eq!(english.status, 422);
    assert_eq!(
        english.first("p#f-due-error"),
        "31/12/2027 is not a day of the calendar: check the day and the month."
    );
    let page = employee_answers(&app, id, "fr", &claim(&[("due", "31/12/2027")])).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert_eq!(stored(&app, id, "due").await, "2027-12-31");
    assert_eq!(
        shown(&manager_page(&app, id, "fr").await, "Due"),
        "31 décembre 2027"
    );
    assert_eq!(
        shown(&manager_page(&app, id, "en").await, "Due"),
        "December 31, 2027"
    );
}

#[tokio::test]
async fn a_web_address_is_shown_as_a_link_to_later_steps_and_a_script_is_refused() {
    let app = spawn(Flood::Memory).await;
    let id = started(&app).await;
    for bad in [
        "javascript:alert(1)",
        "data:text/html,<b>hi</b>",
        "/admin",
        "example.org",
    ] {
        let page = employee_answers(&app, id, "en", &claim(&[("site", bad)])).await;
        assert_eq!(page.status, 422, "{bad}");
        assert_eq!(
            page.first("p#f-site-error"),
            "Enter a web address starting with https:// or http://, such as https://example.org."
        );
    }
    let long = format!("https://example.org/{}", "a".repeat(2000));
    let page = employee_answers(&app, id, "en", &claim(&[("site", &long)])).await;
    assert_eq!(page.status, 422);
    assert_eq!(
        page.first("p#f-site-error"),
        "This is too long: at most 2000 characters."
    );
    assert_nothing_recorded(&app, id, 0).await;

    let page = employee_answers(
        &app,
        id,
        "en",
        &claim(&[("site", "HTTPS://Example.org/a b")]),
    )
    .await;
    assert_eq!(page.status, 200, "{}", page.body);
    let normalised = "https://example.org/a%20b";
    assert_eq!(stored(&app, id, "site").await, normalised);
    let manager = manager_page(&app, id, "en").await;
    let link = format!(".earlier dd a[href=\"{normalised}\"]");
    assert_eq!(
        manager.attr(&link, "rel").as_deref(),
        Some("noopener noreferrer nofollow")
    );
    assert_eq!(manager.first(&link), normalised);

    // The admin instance page's history shows it as the same link.
    let admin = app.admin_client().await;
    let page = get(&admin, &app, &format!("/admin/instances/{id}")).await;
    assert_eq!(page.status, 200);
    assert_eq!(
        page.attr(&format!("td a[href=\"{normalised}\"]"), "rel")
            .as_deref(),
        Some("noopener noreferrer nofollow")
    );
    // A number there is in the reader's writing too.
    let french = get(&admin, &app, &format!("/admin/instances/{id}?lang=fr")).await;
    assert!(french.body.contains("31 décembre 2027"), "{}", french.body);
}

#[tokio::test]
async fn a_required_checkbox_left_unticked_is_refused_and_a_ticked_one_stored_yes() {
    let app = spawn(Flood::Memory).await;
    let id = started(&app).await;
    for (lang, error) in [
        ("en", "Tick this box to go on."),
        ("fr", "Cochez cette case pour continuer."),
    ] {
        let page = employee_answers(&app, id, lang, &claim(&[("agree", "")])).await;
        assert_eq!(page.status, 422);
        assert_eq!(page.first("p#f-agree-error"), error);
        assert_eq!(
            page.attr("input#f-agree", "type").as_deref(),
            Some("checkbox")
        );
        assert_eq!(page.attr("input#f-agree", "checked"), None);
    }
    assert_nothing_recorded(&app, id, 0).await;
    let page = employee_answers(&app, id, "en", &claim(&[])).await;
    assert_eq!(page.status, 200);
    assert_eq!(stored(&app, id, "agree").await, "yes");
    assert_eq!(shown(&manager_page(&app, id, "fr").await, "Agree"), "Oui");
}

/// Every input marked invalid names, in `aria-describedby`, an element that exists and holds
/// its error; every field error is named so by its input. Returns the errors' texts by id.
fn errors_tied_to_inputs(page: &Page) -> Vec<(String, String)> {
    let html = Html::parse_document(&page.body);
    let invalid = Selector::parse("[aria-invalid=true]").unwrap();
    let mut tied = Vec::new();
    for input in html.select(&invalid) {
        let described = input
            .value()
            .attr("aria-describedby")
            .unwrap_or_else(|| panic!("{:?} has no aria-describedby", input.value()));
        let selector = Selector::parse(&format!("#{described}")).unwrap();
        let error = html
            .select(&selector)
            .next()
            .unwrap_or_else(|| panic!("no element #{described}"));
        assert!(error.value().classes().any(|c| c == "field-error"));
        let text = error.text().collect::<String>().trim().to_owned();
        assert!(!text.is_empty(), "#{described} is empty");
        tied.push((described.to_owned(), text));
    }
    let errors = Selector::parse(".field-error").unwrap();
    assert_eq!(
        html.select(&errors).count(),
        tied.len(),
        "an error no input points at: {}",
        page.body
    );
    tied
}

#[tokio::test]
async fn every_field_error_is_tied_to_its_input() {
    let app = spawn(Flood::Memory).await;
    let id = started(&app).await;
    for lang in ["en", "fr"] {
        let page = employee_answers(
            &app,
            id,
            lang,
            &claim(&[
                ("amount", "lots"),
                ("due", "tomorrow"),
                ("site", "ftp://example.org/"),
                ("agree", ""),
            ]),
        )
        .await;
        assert_eq!(page.status, 422);
        let ids: Vec<String> = errors_tied_to_inputs(&page)
            .into_iter()
            .map(|(id, _)| id)
            .collect();
        assert_eq!(
            ids,
            [
                "f-amount-error",
                "f-due-error",
                "f-site-error",
                "f-agree-error"
            ],
            "{lang}"
        );
        // The summary says something needs attention; the errors are beside their fields.
        assert_eq!(page.text(".errors[role=alert] p").len(), 1);
    }
}

#[tokio::test]
async fn a_refused_reviews_comment_box_is_marked_with_its_error() {
    let app = spawn(Flood::Memory).await;
    let id = started(&app).await;
    assert_eq!(
        employee_answers(&app, id, "en", &claim(&[])).await.status,
        200
    );
    let manager = app.link(id, Some("manager")).await;
    let long = "x".repeat(2001);
    for (decision, comment, error) in [
        ("reject", "", "Say why you reject it in the comment."),
        (
            "approve",
            long.as_str(),
            "This is too long: at most 2000 characters.",
        ),
    ] {
        let page = post(
            &app.client(),
            &app,
            &manager,
            &[("decision", decision), ("comment", comment)],
        )
        .await;
        assert_eq!(page.status, 422);
        assert_eq!(
            errors_tied_to_inputs(&page),
            [("comment-error".to_owned(), error.to_owned())]
        );
        assert_eq!(
            page.attr("textarea#comment", "aria-describedby").as_deref(),
            Some("comment-error")
        );
    }
    // A missing decision is no field's: it stays in the summary.
    let page = post(&app.client(), &app, &manager, &[("comment", "")]).await;
    assert_eq!(page.status, 422);
    assert!(errors_tied_to_inputs(&page).is_empty());
    assert_eq!(page.text(".errors p"), ["Choose approve or reject."]);
    assert_nothing_recorded(&app, id, 1).await;
}

#[tokio::test]
async fn a_number_sent_back_for_changes_is_given_back_as_the_visitors_language_reads_it() {
    let app = spawn(Flood::Memory).await;
    let text = "form@employee: Claim | Amount* (number), Due (date)\n\
                review@manager: Check | show 1 | on reject back to 1\n";
    let definition = orchestra::domain::workflow::Definition::parse(text).unwrap();
    orchestra::store::workflows::create(&app.db, "back", "Back", &definition.to_json())
        .await
        .unwrap();
    let id = app.start("back", "Claim").await;
    let form = [("amount", "1,125"), ("due", "31/12/2027")];
    assert_eq!(employee_answers(&app, id, "fr", &form).await.status, 200);
    assert_eq!(stored(&app, id, "amount").await, "1.125");
    let manager = app.link(id, Some("manager")).await;
    let rejected = answer_step(
        &app.client(),
        &app,
        &manager,
        &[("decision", "reject"), ("comment", "Trop précis.")],
    )
    .await;
    assert_eq!(rejected.status, 200, "{}", rejected.body);

    // The French form holds 1,125 (1.125 would read two ways in French), the date as ISO for
    // the date input; posted back unchanged, it is the same answer.
    let link = app.link(id, Some("employee")).await;
    let page = get(&app.client(), &app, &with_lang(&link, "fr")).await;
    let amount = page.attr("input#f-amount", "value").unwrap();
    let due = page.attr("input#f-due", "value").unwrap();
    assert_eq!((amount.as_str(), due.as_str()), ("1,125", "2027-12-31"));
    let again = [("amount", amount.as_str()), ("due", due.as_str())];
    let page = employee_answers(&app, id, "fr", &again).await;
    assert_eq!(page.status, 200, "{}", page.body);
    let answers = answers(&app, id).await;
    assert_eq!(answers.len(), 3);
    assert_eq!(answers[2]["fields"][0]["value"], "1.125");
}

/// In a real browser: the French form's date input is a calendar that posts ISO, the number
/// takes a French comma and narrow no-break spaces, a refused answer marks each field with its
/// error, the box ticked by a click is stored `yes`, and the manager follows the link given.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_browser_fills_the_typed_fields_in_french() {
    let Some(mut b) = crate::browser::start().await else {
        return;
    };
    let app = spawn(Flood::Memory).await;
    b.app_base = app.base.clone();
    let id = started(&app).await;
    let link = app.link_for(id, "employee", 86_400).await;
    b.goto(&with_lang(&link, "fr")).await;
    assert_eq!(b.prop("#f-due", "type").await, "date");
    assert_eq!(b.prop("#f-amount", "inputMode").await, "decimal");
    // Nothing ticked, a script for an address: refused, each error beside its field.
    b.type_into("#f-amount", "1\u{202f}250,50").await;
    b.script("document.querySelector('#f-due').value = '2027-12-31'; return true;")
        .await;
    b.type_into("#f-site", "javascript:alert(1)").await;
    b.follow("form.stack button[type=submit]").await;
    for (input, error) in [("#f-site", "f-site-error"), ("#f-agree", "f-agree-error")] {
        assert_eq!(
            b.attr(input, "aria-describedby").await.as_deref(),
            Some(error)
        );
        assert!(!b.text(&format!("#{error}")).await.is_empty());
    }
    assert_eq!(b.prop("#f-due", "value").await, "2027-12-31", "kept");
    assert_eq!(
        b.prop("#f-amount", "value").await,
        "1\u{202f}250,50",
        "kept"
    );
    assert_nothing_recorded(&app, id, 0).await;

    b.fill("#f-site", "https://example.org/reçu").await;
    b.click("#f-agree").await;
    b.follow("form.stack button[type=submit]").await;
    assert_eq!(stored(&app, id, "amount").await, "1250.5");
    assert_eq!(stored(&app, id, "due").await, "2027-12-31");
    assert_eq!(stored(&app, id, "agree").await, "yes");
    assert_eq!(
        stored(&app, id, "site").await,
        "https://example.org/re%C3%A7u"
    );

    let manager = app.link_for(id, "manager", 86_400).await;
    b.goto(&with_lang(&manager, "fr")).await;
    let link = ".earlier dd a[rel='noopener noreferrer nofollow']";
    assert_eq!(b.prop(link, "href").await, "https://example.org/re%C3%A7u");
    assert_eq!(b.text(".earlier dd").await, "1\u{202f}250,5");
}

#[tokio::test]
async fn the_editors_help_lists_every_field_type_in_the_readers_language() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;
    let types = orchestra::domain::workflow::options::TYPES;
    for (lang, checkbox) in [("en", "one box to tick"), ("fr", "une case à cocher")] {
        let page = get(&admin, &app, &with_lang("/admin/workflows/new", lang)).await;
        assert_eq!(page.status, 200);
        let lines = page.text("#definition-help ul.types li");
        assert_eq!(lines.len(), types.len());
        for (line, documented) in lines.iter().zip(types) {
            assert!(line.starts_with(documented.example), "{line}");
        }
        assert!(lines[5].contains("(checkbox)") && lines[5].contains(checkbox));
    }
}
