//! Every page in English and in French, chosen by `?lang=` and by `Accept-Language`, with
//! `<html lang>` to match; and the language switcher, remembered in a cookie.

use reqwest::Client;

use crate::helpers::{Flood, Page, TestApp, answer_step, get, read, sign_in, spawn, with_lang};

const FRENCH: &str = "fr-FR,fr;q=0.9,en;q=0.5";
const LANG_COOKIE: &str = "orchestra_lang";

/// Asserts one page in both languages: the same status, `<html lang>` right, the switcher
/// there, and the text at `selector` translated.
fn assert_translated(en: &Page, fr: &Page, selector: &str, what: &str) {
    assert_eq!(
        en.status, fr.status,
        "{what}: the same status in both languages"
    );
    assert_eq!(en.lang(), "en", "{what}");
    assert_eq!(fr.lang(), "fr", "{what}");
    for page in [en, fr] {
        assert!(page.has("nav.languages"), "{what}: the language switcher");
    }
    let (en_text, fr_text) = (en.first(selector), fr.first(selector));
    assert!(!en_text.is_empty(), "{what}: {selector} in English");
    assert!(!fr_text.is_empty(), "{what}: {selector} in French");
    assert_ne!(en_text, fr_text, "{what}: {selector} is translated");
}

/// A page fetched with `?lang=en` and `?lang=fr`, then by `Accept-Language` on a client that
/// never chose; checks both ways give the same language.
async fn check(
    chooser: &Client,
    browser: &Client,
    app: &TestApp,
    path: &str,
    selector: &str,
    status: u16,
) {
    let en = get(chooser, app, &with_lang(path, "en")).await;
    let fr = get(chooser, app, &with_lang(path, "fr")).await;
    assert_eq!(en.status, status, "{selector} page");
    assert_translated(&en, &fr, selector, selector);

    let plain = get(browser, app, path).await;
    let french = read(browser.get(app.url(path)).header("accept-language", FRENCH)).await;
    assert_eq!(plain.status, status);
    assert_eq!(plain.lang(), "en", "English unless asked otherwise");
    assert_eq!(french.lang(), "fr", "Accept-Language: fr");
    assert_eq!(plain.first(selector), en.first(selector));
    assert_eq!(french.first(selector), fr.first(selector));
}

#[tokio::test]
async fn every_admin_page_is_rendered_in_english_and_in_french() {
    let app = spawn(Flood::Memory).await;
    let chooser = app.admin_client().await;
    let browser = sign_in(&app).await;
    let id = app.start("contract_review", "Lease renewal").await;
    let workflow = orchestra::store::workflows::by_name(&app.db, "order_payment")
        .await
        .unwrap()
        .unwrap()
        .id;

    let pages = [
        ("/admin".to_owned(), "h1"),
        ("/admin".to_owned(), "nav.admin a[href='/admin/workflows']"),
        ("/admin/workflows".to_owned(), "h1"),
        (
            "/admin/workflows".to_owned(),
            "table.workflows td:nth-child(4)",
        ),
        (
            "/admin/workflows".to_owned(),
            "table.workflows th:nth-child(4)",
        ),
        ("/admin/workflows/new".to_owned(), "h1"),
        (format!("/admin/workflows/{workflow}"), "p.actions a.button"),
        (
            format!("/admin/workflows/{workflow}"),
            "table.versions th:nth-child(3)",
        ),
        (format!("/admin/workflows/{workflow}/edit"), "h1"),
        (
            format!("/admin/workflows/{workflow}/edit"),
            "label[for=definition]",
        ),
        (format!("/admin/workflows/{workflow}/edit"), "p.notice"),
        (format!("/admin/workflows/{workflow}/delete"), "h1"),
        (
            format!("/admin/workflows/{workflow}/delete"),
            "form button.danger",
        ),
        (format!("/admin/instances/{id}/revoke"), "h1"),
        (format!("/admin/instances/{id}/revoke"), "p.confirm-what"),
        (format!("/admin/instances/{id}/cancel"), "h1"),
        (format!("/admin/instances/{id}/cancel"), "p.confirm-what"),
        (format!("/admin/instances/{id}/cancel"), "label[for=reason]"),
        (format!("/admin/instances/{id}"), "a#cancel-instance"),
        ("/admin/instances".to_owned(), "a.button"),
        (
            "/admin/instances".to_owned(),
            "table.instances th:nth-child(2)",
        ),
        ("/admin/instances/new".to_owned(), "h1"),
        (format!("/admin/instances/{id}"), "section.links h2"),
        (format!("/admin/instances/{id}"), "dd.state"),
        (
            format!("/admin/instances/{id}"),
            "table.history td:nth-child(4)",
        ),
        ("/admin/config/orchestra".to_owned(), "h1"),
        (
            "/admin/config/orchestra".to_owned(),
            "fieldset#request-limits legend",
        ),
        ("/admin/config/orchestra/interaction".to_owned(), "h1"),
        // "Webhooks" is French too: the page's other words are compared.
        ("/admin/webhooks".to_owned(), "p.empty"),
        ("/admin/webhooks".to_owned(), "h2"),
        ("/admin/webhooks".to_owned(), "p#url-help"),
        ("/admin/reports/status".to_owned(), "h1"),
        (
            "/admin/reports/status".to_owned(),
            "tr#check-database td.title",
        ),
    ];
    for (path, selector) in &pages {
        check(&chooser, &browser, &app, path, selector, 200).await;
    }
}

#[tokio::test]
async fn the_admin_forms_show_their_errors_in_the_visitors_language() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;
    let mut errors = Vec::new();
    for lang in ["en", "fr"] {
        let path = with_lang("/admin/workflows/new", lang);
        let csrf = get(&admin, &app, &path).await.csrf();
        let page = read(admin.post(app.url(&path)).form(&[
            ("csrf", csrf.as_str()),
            ("name", "Bad Name"),
            ("label", ""),
            ("definition", "quiz: What?"),
        ]))
        .await;
        assert_eq!(page.status, 422);
        assert_eq!(page.lang(), lang);
        errors.push(page);
    }
    for selector in [
        "[role=alert]",
        "p.field-error[data-field=name]",
        "p.field-error[data-field=label]",
        "p.field-error[data-field=definition]",
    ] {
        assert_translated(&errors[0], &errors[1], selector, "a rejected workflow form");
    }
}

#[tokio::test]
async fn the_login_page_and_its_refusal_are_rendered_in_both_languages() {
    let app = spawn(Flood::Memory).await;
    app.create_admin().await;
    check(
        &app.client(),
        &app.client(),
        &app,
        "/admin/login",
        "h1",
        200,
    )
    .await;
    check(
        &app.client(),
        &app.client(),
        &app,
        "/admin/login",
        "label[for=password]",
        200,
    )
    .await;

    let mut refused = Vec::new();
    for lang in ["en", "fr"] {
        let client = app.client();
        let path = with_lang("/admin/login", lang);
        let csrf = get(&client, &app, &path).await.csrf();
        let page = read(client.post(app.url(&path)).form(&[
            ("csrf", csrf.as_str()),
            ("name", "ada"),
            ("password", "wrong password"),
        ]))
        .await;
        assert_eq!(page.status, 401);
        refused.push(page);
    }
    assert_translated(&refused[0], &refused[1], ".errors", "a failed sign-in");
}

#[tokio::test]
async fn the_setup_page_is_rendered_in_both_languages() {
    let app = spawn(Flood::Memory).await;
    let token = orchestra::domain::keys::random_token();
    let keys = app.state.site.get().await.keys.clone();
    orchestra::store::admins::put_setup_token(
        &app.db,
        &keys.keyed_hash("setup", &token),
        orchestra::store::now() + 3600,
    )
    .await
    .unwrap();
    let setup = format!("/setup/{token}");

    check(&app.client(), &app.client(), &app, &setup, "h1", 200).await;
    check(&app.client(), &app.client(), &app, &setup, "button", 200).await;

    let mut rejected = Vec::new();
    for lang in ["en", "fr"] {
        let client = app.client();
        let path = with_lang(&setup, lang);
        let csrf = get(&client, &app, &path).await.csrf();
        let page = read(client.post(app.url(&path)).form(&[
            ("csrf", csrf.as_str()),
            ("name", "grace"),
            ("password", "short"),
            ("confirm", "short"),
        ]))
        .await;
        assert_eq!(page.status, 422);
        rejected.push(page);
    }
    assert_translated(
        &rejected[0],
        &rejected[1],
        "p.field-error",
        "a rejected setup form",
    );
}

#[tokio::test]
async fn every_doorway_step_is_rendered_in_english_and_in_french() {
    let app = spawn(Flood::Memory).await;
    let form = app.start("supplier_onboarding", "Acme onboarding").await;
    let form_link = app.link(form, None).await;
    let contract = app.start("contract_review", "Lease renewal").await;
    let legal = app.link(contract, Some("legal")).await;
    let order = app.start("order_payment", "Order 1042").await;
    let order_link = app.link(order, None).await;
    let delivery = [
        ("name", "Grace Hopper"),
        ("address", "1 Harbour Road"),
        ("email", "grace@example.org"),
    ];
    assert_eq!(
        answer_step(&app.client(), &app, &order_link, &delivery)
            .await
            .status,
        303
    );

    for (path, selector) in [
        (&form_link, "p.progress"),
        (&form_link, "form button"),
        (&legal, "legend"),
        (&legal, "label[for=comment]"),
        (&legal, "form button"),
        (&order_link, "section.step-payment p"),
        (&order_link, "form button"),
    ] {
        check(&app.client(), &app.client(), &app, path, selector, 200).await;
    }
    let en = get(&app.client(), &app, &with_lang(&form_link, "en")).await;
    let fr = get(&app.client(), &app, &with_lang(&form_link, "fr")).await;
    let mark = |p: &Page| p.attr("label[for=f-company] .required", "title");
    assert_eq!(mark(&en).as_deref(), Some("required"));
    assert!(
        mark(&fr).is_some_and(|t| t != "required"),
        "the required mark is translated"
    );
}

#[tokio::test]
async fn doorway_answers_and_refusals_are_rendered_in_english_and_in_french() {
    let app = spawn(Flood::Memory).await;

    // A rejected form, and then thanks, in each language, each on its own instance.
    let mut rejected = Vec::new();
    let mut thanks = Vec::new();
    let mut waiting = Vec::new();
    let mut closed = Vec::new();
    for lang in ["en", "fr"] {
        let id = app.start("supplier_onboarding", "Acme onboarding").await;
        let link = with_lang(&app.link(id, None).await, lang);
        let client = app.client();
        let page = answer_step(&client, &app, &link, &[("contact_email", "nope")]).await;
        assert_eq!(page.status, 422);
        rejected.push(page);
        let answered = answer_step(
            &client,
            &app,
            &link,
            &[("company", "Acme"), ("contact_email", "a@acme.example")],
        )
        .await;
        assert_eq!(answered.status, 200);
        let link = with_lang(&app.link(id, Some("reviewer")).await, lang);
        let done = answer_step(&client, &app, &link, &[("decision", "approve")]).await;
        assert_eq!(done.status, 200);
        thanks.push(done);
        closed.push(get(&client, &app, &link).await);

        let id = app.start("contract_review", "Lease renewal").await;
        let legal = with_lang(&app.link(id, Some("legal")).await, lang);
        waiting.push(answer_step(&client, &app, &legal, &[("decision", "approve")]).await);
    }
    for selector in [
        "section.step-form .errors",
        "p.field-error[data-field=company]",
        "p.field-error[data-field=contact_email]",
    ] {
        assert_translated(&rejected[0], &rejected[1], selector, "a rejected form");
    }
    assert_translated(&thanks[0], &thanks[1], "h1", "the thank-you page");
    assert_translated(&thanks[0], &thanks[1], "p.done", "the thank-you page");
    assert_translated(&waiting[0], &waiting[1], "p.done", "waiting for a branch");
    assert_translated(&closed[0], &closed[1], "h1", "a closed instance");

    // A review refused for want of a reason.
    let id = app.start("contract_review", "Lease renewal").await;
    let finance = app.link(id, Some("finance")).await;
    let mut reasons = Vec::new();
    for lang in ["en", "fr"] {
        let page = answer_step(
            &app.client(),
            &app,
            &with_lang(&finance, lang),
            &[("decision", "reject")],
        )
        .await;
        assert_eq!(page.status, 422);
        reasons.push(page);
    }
    assert_translated(
        &reasons[0],
        &reasons[1],
        ".errors p",
        "a review without reason",
    );

    // The refusal, and the page for a cross-site post.
    check(
        &app.client(),
        &app.client(),
        &app,
        "/interaction/not-a-link",
        "h1",
        404,
    )
    .await;
    check(
        &app.client(),
        &app.client(),
        &app,
        "/interaction/not-a-link",
        "p.refused",
        404,
    )
    .await;
    let mut forbidden = Vec::new();
    for lang in ["en", "fr"] {
        let page = read(
            app.client()
                .post(app.url(&with_lang(&finance, lang)))
                .header("sec-fetch-site", "cross-site")
                .form(&[("decision", "approve")]),
        )
        .await;
        assert_eq!(page.status, 403);
        forbidden.push(page);
    }
    assert_translated(&forbidden[0], &forbidden[1], "h1", "a cross-site post");
}

#[tokio::test]
async fn the_test_provider_and_the_payment_return_are_rendered_in_both_languages() {
    let app = spawn(Flood::Memory).await;
    let id = app.start("order_payment", "Order 1042").await;
    let link = app.link(id, None).await;
    let client = app.client();
    let delivery = [
        ("name", "Grace Hopper"),
        ("address", "1 Harbour Road"),
        ("email", "grace@example.org"),
    ];
    assert_eq!(
        answer_step(&client, &app, &link, &delivery).await.status,
        303
    );
    let provider = answer_step(&client, &app, &link, &[("action", "pay")])
        .await
        .location();

    for selector in ["h1", ".test-banner", "button#pay", "button#cancel"] {
        check(&app.client(), &app.client(), &app, &provider, selector, 200).await;
    }
    // Waiting for the provider's notice, then cancelled: each page in both languages.
    let back = provider.replace("/test-provider/", "/interaction/");
    check(&app.client(), &app.client(), &app, &back, "h1", 200).await;
    check(&app.client(), &app.client(), &app, &back, "p.done", 200).await;
    let cancelled = answer_step(&client, &app, &provider, &[("outcome", "failed")]).await;
    assert_eq!(cancelled.location(), back);
    check(&app.client(), &app.client(), &app, &back, "p.notice", 200).await;
    check(
        &app.client(),
        &app.client(),
        &app,
        &provider,
        "p.settled",
        200,
    )
    .await;
}

#[tokio::test]
async fn error_pages_are_rendered_in_the_visitors_language() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;
    for path in ["/nowhere", "/admin/nowhere", "/test-provider/x"] {
        check(&app.client(), &app.client(), &app, path, "h1", 404).await;
        check(
            &app.client(),
            &app.client(),
            &app,
            path,
            "p.error-message",
            404,
        )
        .await;
    }
    for path in ["/admin/instances/999", "/admin/nowhere"] {
        check(&admin, &sign_in(&app).await, &app, path, "h1", 404).await;
    }

    let mut forbidden = Vec::new();
    for lang in ["en", "fr"] {
        let page = answer_step(
            &admin,
            &app,
            &with_lang("/admin/config/orchestra", lang),
            &[("site_name", "Forged")],
        )
        .await;
        assert_eq!(page.status, 403);
        forbidden.push(page);
    }
    assert_translated(
        &forbidden[0],
        &forbidden[1],
        "h1",
        "a form without its token",
    );
    assert_translated(
        &forbidden[0],
        &forbidden[1],
        "p.error-message",
        "a form without its token",
    );
}

#[tokio::test]
async fn choosing_a_language_is_remembered_in_a_cookie() {
    let app = spawn(Flood::Memory).await;
    app.create_admin().await;
    let id = app.start("contract_review", "Lease renewal").await;
    let legal = app.link(id, Some("legal")).await;
    let client = app.client();

    let first = get(&client, &app, "/admin/login").await;
    assert_eq!(first.lang(), "en");
    assert_eq!(first.cookie(LANG_COOKIE), None, "no choice, no cookie");
    assert_eq!(first.first("nav.languages [aria-current=true]"), "English");
    assert_eq!(
        first
            .attr("nav.languages a[hreflang=fr]", "href")
            .as_deref(),
        Some("?lang=fr")
    );

    let chosen = get(&client, &app, "/admin/login?lang=fr").await;
    assert_eq!(chosen.lang(), "fr");
    assert_eq!(chosen.cookie(LANG_COOKIE).as_deref(), Some("fr"));
    let set_cookie = chosen
        .headers
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with(LANG_COOKIE))
        .unwrap()
        .to_owned();
    assert!(set_cookie.contains("Path=/"));
    assert!(set_cookie.contains("SameSite=Lax"));
    assert_eq!(
        chosen.first("nav.languages [aria-current=true]"),
        "Français"
    );
    assert_eq!(
        chosen
            .attr("nav.languages a[hreflang=en]", "href")
            .as_deref(),
        Some("?lang=en")
    );

    // Later pages, anywhere on the site, come in French without asking again, even when the
    // browser prefers English.
    for path in ["/admin/login", legal.as_str(), "/nowhere"] {
        let page = read(
            client
                .get(app.url(path))
                .header("accept-language", "en-GB,en;q=0.9"),
        )
        .await;
        assert_eq!(page.lang(), "fr", "a later page");
        assert_eq!(page.cookie(LANG_COOKIE), None, "the cookie is set once");
    }
    let step = get(&client, &app, &legal).await;
    assert_eq!(step.first("p.progress").split(' ').next(), Some("Étape"));

    let back = get(&client, &app, &with_lang(&legal, "en")).await;
    assert_eq!(back.lang(), "en");
    assert_eq!(back.cookie(LANG_COOKIE).as_deref(), Some("en"));
    assert_eq!(get(&client, &app, "/admin/login").await.lang(), "en");
}

#[tokio::test]
async fn accept_language_is_followed_until_the_visitor_chooses() {
    let app = spawn(Flood::Memory).await;
    app.create_admin().await;
    let client = app.client();
    let ask = |accept: &'static str| {
        let request = client
            .get(app.url("/admin/login"))
            .header("accept-language", accept);
        async move { read(request).await.lang() }
    };

    assert_eq!(ask("fr").await, "fr");
    assert_eq!(ask("de-DE,fr;q=0.8,en;q=0.5").await, "fr");
    assert_eq!(ask("en;q=0.4,fr;q=0.9").await, "fr");
    assert_eq!(ask("de, es").await, "en", "English when nothing matches");
    assert_eq!(ask("fr;q=0").await, "en", "q=0 means not this one");

    let unknown = get(&client, &app, "/admin/login?lang=de").await;
    assert_eq!(unknown.lang(), "en");
    assert_eq!(
        unknown.cookie(LANG_COOKIE),
        None,
        "an unknown choice is not kept"
    );

    get(&client, &app, "/admin/login?lang=en").await;
    assert_eq!(
        ask("fr").await,
        "en",
        "a choice beats the browser's preference"
    );
}
