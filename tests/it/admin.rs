//! The admin area over real TCP: signing in and out, the CSRF check, workflows and instances
//! edited through their forms, links issued and revoked, settings, and the first-run setup URL.

use crate::helpers::{
    self, ADMIN, Flood, PASSWORD, TestApp, assert_credential_headers, event, events, get, path_of,
    post, read, sign_in, spawn,
};

const SESSION: &str = "orchestra_session";

async fn workflow_count(app: &TestApp) -> i64 {
    orchestra::store::workflows::count(&app.db).await.unwrap()
}

async fn workflow_id(app: &TestApp, name: &str) -> i64 {
    orchestra::store::workflows::by_name(&app.db, name)
        .await
        .unwrap()
        .expect("the workflow exists")
        .id
}

/// Posts an admin form with the CSRF token of the page it is on.
async fn submit(
    client: &reqwest::Client,
    app: &TestApp,
    page: &str,
    action: &str,
    fields: &[(&str, &str)],
) -> helpers::Page {
    let csrf = get(client, app, page).await.csrf();
    let mut form = vec![("csrf", csrf.as_str())];
    form.extend_from_slice(fields);
    read(client.post(app.url(action)).form(&form)).await
}

#[tokio::test]
async fn an_unauthenticated_admin_page_redirects_to_the_login_page() {
    let app = spawn(Flood::Memory).await;
    app.create_admin().await;
    let client = app.client();
    let pages = [
        ("/admin", "%2Fadmin"),
        ("/admin/workflows", "%2Fadmin%2Fworkflows"),
        ("/admin/workflows/new", "%2Fadmin%2Fworkflows%2Fnew"),
        ("/admin/workflows/1", "%2Fadmin%2Fworkflows%2F1"),
        ("/admin/instances", "%2Fadmin%2Finstances"),
        ("/admin/instances/new", "%2Fadmin%2Finstances%2Fnew"),
        ("/admin/instances/1", "%2Fadmin%2Finstances%2F1"),
        ("/admin/config/orchestra", "%2Fadmin%2Fconfig%2Forchestra"),
        (
            "/admin/config/orchestra/interaction",
            "%2Fadmin%2Fconfig%2Forchestra%2Finteraction",
        ),
        ("/admin/reports/status", "%2Fadmin%2Freports%2Fstatus"),
    ];
    for (path, encoded) in pages {
        let page = get(&client, &app, path).await;
        assert_eq!(page.status, 303, "{path}");
        assert_eq!(
            page.header("location"),
            Some(format!("/admin/login?destination={encoded}").as_str()),
            "{path}"
        );
    }

    let login = get(
        &client,
        &app,
        "/admin/login?destination=%2Fadmin%2Fworkflows",
    )
    .await;
    assert_eq!(login.status, 200);
    assert_eq!(
        login.attr("input[name=destination]", "value").as_deref(),
        Some("/admin/workflows")
    );
    let signed_in = read(client.post(app.url("/admin/login")).form(&[
        ("csrf", login.csrf().as_str()),
        ("name", ADMIN),
        ("password", PASSWORD),
        ("destination", "/admin/workflows"),
    ]))
    .await;
    assert_eq!(signed_in.status, 303);
    assert_eq!(signed_in.header("location"), Some("/admin/workflows"));
    assert_eq!(get(&client, &app, "/admin/workflows").await.status, 200);
}

#[tokio::test]
async fn a_signed_out_visitor_cannot_post_to_the_admin_either() {
    let app = spawn(Flood::Memory).await;
    let client = app.client();
    let before = workflow_count(&app).await;

    let page = post(
        &client,
        &app,
        "/admin/workflows/new",
        &[
            ("name", "forged"),
            ("label", "Forged"),
            ("definition", "review: x"),
        ],
    )
    .await;

    assert_eq!(page.status, 403);
    assert_eq!(workflow_count(&app).await, before);

    // Signing in needs the login form's token too, so no other site can sign a visitor in.
    app.create_admin().await;
    let login = post(
        &client,
        &app,
        "/admin/login",
        &[("name", helpers::ADMIN), ("password", helpers::PASSWORD)],
    )
    .await;
    assert_eq!(login.status, 403);
    assert_eq!(login.cookie(SESSION), None);
}

#[tokio::test]
async fn the_login_page_never_sends_a_visitor_to_another_site() {
    let app = spawn(Flood::Memory).await;
    app.create_admin().await;
    for destination in [
        "https://evil.example/admin",
        "//evil.example/admin",
        "/admin//evil.example",
        "/elsewhere",
    ] {
        let client = app.client();
        let login = get(&client, &app, "/admin/login").await;
        let page = read(client.post(app.url("/admin/login")).form(&[
            ("csrf", login.csrf().as_str()),
            ("name", ADMIN),
            ("password", PASSWORD),
            ("destination", destination),
        ]))
        .await;
        assert_eq!(page.status, 303, "{destination}");
        assert_eq!(page.header("location"), Some("/admin"), "{destination}");
    }
}

#[tokio::test]
async fn a_wrong_password_is_refused_with_401_and_keeps_the_typed_name() {
    let app = spawn(Flood::Memory).await;
    app.create_admin().await;
    let client = app.client();
    let login = get(&client, &app, "/admin/login").await;

    for name in [ADMIN, "nobody & co"] {
        let page = read(client.post(app.url("/admin/login")).form(&[
            ("csrf", login.csrf().as_str()),
            ("name", name),
            ("password", "not the password"),
        ]))
        .await;
        assert_eq!(page.status, 401, "{name}");
        assert_eq!(page.attr("input#name", "value").as_deref(), Some(name));
        assert_eq!(page.attr("input#password", "value"), None);
        assert_eq!(
            page.first(".errors[role=alert]"),
            "Unknown name or wrong password."
        );
        assert_eq!(page.first("h1"), "Sign in");
    }
    assert_eq!(get(&client, &app, "/admin").await.status, 303);
}

#[tokio::test]
async fn signing_in_gives_the_session_a_new_id() {
    let app = spawn(Flood::Memory).await;
    app.create_admin().await;
    // An id planted in the visitor's browser before sign-in (the login form itself stores no
    // session: tests/it/security.rs).
    let before = tower_sessions::session::Id::default().to_string();
    let jar = std::sync::Arc::new(reqwest::cookie::Jar::default());
    jar.add_cookie_str(
        &format!("{SESSION}={before}; Path=/"),
        &app.base.parse().unwrap(),
    );
    let client = reqwest::Client::builder()
        .cookie_provider(jar)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let login = get(&client, &app, "/admin/login").await;
    // No session for the form: at most the planted cookie is removed.
    assert!(login.cookie(SESSION).is_none_or(|v| v.is_empty()));

    let page = read(client.post(app.url("/admin/login")).form(&[
        ("csrf", login.csrf().as_str()),
        ("name", ADMIN),
        ("password", PASSWORD),
    ]))
    .await;

    assert_eq!(page.status, 303);
    let after = page
        .cookie(SESSION)
        .expect("signing in sets the session cookie");
    assert!(!after.is_empty());
    assert!(before != after, "the session id changes at sign-in");
    let cookie = page
        .headers
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with(SESSION))
        .unwrap()
        .to_ascii_lowercase();
    assert!(cookie.contains("httponly"));
    assert!(cookie.contains("samesite=lax"));

    // The id planted before sign-in is worth nothing after it.
    let planted = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let page = read(
        planted
            .get(app.url("/admin"))
            .header("cookie", format!("{SESSION}={before}")),
    )
    .await;
    assert_eq!(page.status, 303);
    assert_eq!(get(&client, &app, "/admin").await.status, 200);
}

#[tokio::test]
async fn a_post_without_a_csrf_token_is_refused_and_saves_nothing() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;
    let before = workflow_count(&app).await;
    let fields = [
        ("name", "forged"),
        ("label", "Forged"),
        ("definition", "review: Forged"),
    ];

    let without = post(&admin, &app, "/admin/workflows/new", &fields).await;
    let mut wrong_form = vec![("csrf", "not-the-token")];
    wrong_form.extend_from_slice(&fields);
    let wrong = post(&admin, &app, "/admin/workflows/new", &wrong_form).await;
    let settings = post(
        &admin,
        &app,
        "/admin/config/orchestra",
        &[
            ("site_name", "Forged"),
            ("base_url", "https://evil.example"),
        ],
    )
    .await;

    for page in [&without, &wrong, &settings] {
        assert_eq!(page.status, 403);
        assert_eq!(page.first("h1"), "Not allowed");
    }
    assert_eq!(workflow_count(&app).await, before);
    let saved = orchestra::domain::settings::Settings::load(&app.db)
        .await
        .unwrap();
    assert_eq!(saved.site_name, "Orchestra");
    assert_eq!(saved.base_url, "http://127.0.0.1:8080");
    // Still signed in: a refused form does not end the session.
    assert_eq!(get(&admin, &app, "/admin").await.status, 200);
}

/// The CSRF check finds the token by its field, without decoding the body: the right token
/// under another name, percent-escaped, or after a wrong `csrf` field does not pass, and saves
/// nothing. A rejected form drawn again carries the token the check computed, which passes.
#[tokio::test]
async fn only_the_csrf_field_as_a_browser_sends_it_passes() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;
    let token = get(&admin, &app, "/admin/config/orchestra").await.csrf();
    let escaped: String = token.bytes().map(|b| format!("%{b:02X}")).collect();
    let settings = |csrf_part: String| {
        format!(
            "{csrf_part}&site_name=Forged&base_url=https%3A%2F%2Fforged.example&default_link_ttl=3600&period=60"
        )
    };
    for body in [
        settings(format!("xcsrf={token}")),
        settings(format!("csrf={escaped}")),
        settings(format!("%63srf={token}")),
        settings(format!("csrf=wrong&csrf={token}")),
    ] {
        let page = read(
            admin
                .post(app.url("/admin/config/orchestra"))
                .header("content-type", "application/x-www-form-urlencoded")
                .header("sec-fetch-site", "same-origin")
                .body(body.clone()),
        )
        .await;
        assert_eq!(page.status, 403, "{body}");
    }
    let saved = orchestra::domain::settings::Settings::load(&app.db)
        .await
        .unwrap();
    assert_eq!(saved.site_name, "Orchestra");
    // A form the settings reject is drawn again, keeping what was typed, with a token that
    // passes the next time.
    let rejected = post(
        &admin,
        &app,
        "/admin/config/orchestra",
        &[
            ("csrf", token.as_str()),
            ("site_name", "Kept"),
            ("base_url", "not a url"),
            ("default_link_ttl", "3600"),
            ("period", "60"),
        ],
    )
    .await;
    assert_eq!(rejected.status, 422);
    assert_eq!(rejected.csrf(), token);
    assert!(rejected.body.contains("Kept"));
    let saved = post(
        &admin,
        &app,
        "/admin/config/orchestra",
        &[
            ("csrf", rejected.csrf().as_str()),
            ("site_name", "Kept"),
            ("base_url", "https://kept.example"),
            ("default_link_ttl", "3600"),
            ("period", "60"),
        ],
    )
    .await;
    assert_eq!(saved.status, 303);
    assert_eq!(app.state.site.get().await.settings.site_name, "Kept");
}

#[tokio::test]
async fn a_csrf_token_from_another_session_is_refused() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;
    let other = sign_in(&app).await;
    let theirs = get(&other, &app, "/admin/workflows/new").await.csrf();
    get(&admin, &app, "/admin/workflows/new").await;

    let page = read(admin.post(app.url("/admin/workflows/new")).form(&[
        ("csrf", theirs.as_str()),
        ("name", "forged"),
        ("label", "Forged"),
        ("definition", "review: Forged"),
    ]))
    .await;

    assert_eq!(page.status, 403);
    assert!(
        orchestra::store::workflows::by_name(&app.db, "forged")
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn signing_out_ends_the_session() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;
    let dashboard = get(&admin, &app, "/admin").await;
    assert_eq!(dashboard.first("header .who"), ADMIN);

    let page = read(
        admin
            .post(app.url("/admin/logout"))
            .form(&[("csrf", dashboard.csrf().as_str())]),
    )
    .await;

    assert_eq!(page.status, 303);
    assert_eq!(page.header("location"), Some("/admin/login"));
    let login = get(&admin, &app, "/admin/login").await;
    assert_eq!(
        login.first("p.flash.flash-success[role=status]"),
        "You are signed out."
    );
    let login = get(&admin, &app, "/admin/login").await;
    assert!(!login.has("p.flash"), "the message is shown once");
    let after = get(&admin, &app, "/admin").await;
    assert_eq!(after.status, 303);
    assert_eq!(
        after.header("location"),
        Some("/admin/login?destination=%2Fadmin")
    );
}

#[tokio::test]
async fn a_new_workflow_with_a_bad_definition_keeps_the_text_and_shows_the_error_beside_it() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;
    let before = workflow_count(&app).await;
    let typed = "form: Details | Name*, Born (time)\nreview: Check <it> & sign\n";

    let page = submit(
        &admin,
        &app,
        "/admin/workflows/new",
        "/admin/workflows/new",
        &[
            ("name", "hiring"),
            ("label", "Hiring & onboarding"),
            ("definition", typed),
        ],
    )
    .await;

    assert_eq!(page.status, 422);
    assert_eq!(
        page.first("[role=alert]"),
        "Some fields need your attention; nothing was saved."
    );
    assert_eq!(page.first("textarea#definition"), typed.trim_end());
    assert_eq!(page.attr("input#name", "value").as_deref(), Some("hiring"));
    assert_eq!(
        page.attr("input#label", "value").as_deref(),
        Some("Hiring & onboarding")
    );
    assert_eq!(
        page.first("textarea#definition + p.field-error[data-field=definition]"),
        "Line 1: the field “Born” has the type “time”, which is none; use text, long, number, \
         email, date, checkbox, url, choice, file."
    );
    assert!(!page.has("p.field-error[data-field=name]"));
    assert!(!page.has("p.field-error[data-field=label]"));
    // Marked as the doorway marks its fields, the error and the help read with the field.
    assert_eq!(
        page.attr("textarea#definition", "aria-invalid").as_deref(),
        Some("true")
    );
    assert_eq!(
        page.attr("textarea#definition", "aria-describedby")
            .as_deref(),
        Some("definition-help definition-error")
    );
    assert!(page.has("#definition-help") && page.has("p#definition-error.field-error"));
    assert_eq!(page.attr("input#label", "aria-invalid"), None);
    assert_eq!(workflow_count(&app).await, before);
}

#[tokio::test]
async fn a_new_workflow_with_a_bad_name_says_so_beside_the_name() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;

    for (name, taken) in [("Not A Slug", false), ("contract_review", true)] {
        let page = submit(
            &admin,
            &app,
            "/admin/workflows/new",
            "/admin/workflows/new",
            &[
                ("name", name),
                ("label", "Anything"),
                ("definition", "review: Look"),
            ],
        )
        .await;
        assert_eq!(page.status, 422, "{name}");
        assert_eq!(page.attr("input#name", "value").as_deref(), Some(name));
        assert!(page.has("p.field-error[data-field=name]"), "{name}");
        assert!(!page.has("p.field-error[data-field=definition]"), "{name}");
        let expected = if taken {
            "Another workflow already has this machine name."
        } else {
            "Use 1 to 64 lowercase letters, digits or underscores."
        };
        assert_eq!(page.first("p.field-error[data-field=name]"), expected);
    }
    assert_eq!(workflow_count(&app).await, 3);
}

#[tokio::test]
async fn a_workflow_is_created_and_then_edited_through_its_forms() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;
    let definition = "form: Candidate | Name*, Email* (email)\nreview[hr,lead]: Interview\n";

    let created = submit(
        &admin,
        &app,
        "/admin/workflows/new",
        "/admin/workflows/new",
        &[
            ("name", "hiring"),
            ("label", "Hiring"),
            ("definition", definition),
        ],
    )
    .await;

    assert_eq!(created.status, 303);
    let id = workflow_id(&app, "hiring").await;
    let show = format!("/admin/workflows/{id}");
    assert_eq!(created.header("location"), Some(show.as_str()));
    let shown = get(&admin, &app, &show).await;
    assert_eq!(shown.status, 200);
    assert_eq!(shown.first("p.flash"), "The workflow was saved.");
    assert_eq!(shown.first("h1"), "Hiring");
    assert_eq!(shown.text("table.versions td.running"), ["0"]);
    let edit = format!("/admin/workflows/{id}/edit");
    let page = get(&admin, &app, &edit).await;
    assert_eq!(page.status, 200);
    assert_eq!(page.first("h1"), "Edit workflow");
    assert_eq!(page.attr("input#name", "readonly").as_deref(), Some(""));
    assert_eq!(
        page.first("textarea#definition"),
        "form: Candidate | Name* (text), Email* (email)\nreview[hr,lead]: Interview"
    );
    let list = get(&admin, &app, "/admin/workflows").await;
    assert!(
        list.text("table.workflows td")
            .contains(&"Hiring".to_owned())
    );

    let bad = "review[hr,hr]: Interview\n";
    let rejected = submit(
        &admin,
        &app,
        &edit,
        &edit,
        &[("label", "Hiring, renamed"), ("definition", bad)],
    )
    .await;
    assert_eq!(rejected.status, 422);
    assert_eq!(rejected.first("textarea#definition"), bad.trim_end());
    assert_eq!(
        rejected.attr("input#label", "value").as_deref(),
        Some("Hiring, renamed")
    );
    assert!(rejected.has("p.field-error[data-field=definition]"));
    let stored = orchestra::store::workflows::by_id(&app.db, id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.label, "Hiring");

    let saved = submit(
        &admin,
        &app,
        &edit,
        &edit,
        &[
            ("name", "renamed_by_a_forged_field"),
            ("label", "Hiring, renamed"),
            ("definition", "review: Interview\n"),
        ],
    )
    .await;
    assert_eq!(saved.status, 303);
    let stored = orchestra::store::workflows::by_id(&app.db, id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.label, "Hiring, renamed");
    assert_eq!(stored.name, "hiring", "a workflow's name does not change");
    assert_eq!(
        get(&admin, &app, "/admin/workflows/999999").await.status,
        404
    );
}

#[tokio::test]
async fn an_instance_started_from_the_admin_shows_its_subject_and_history() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;
    let workflow = workflow_id(&app, "contract_review").await.to_string();

    let page = submit(
        &admin,
        &app,
        "/admin/instances/new",
        "/admin/instances/new",
        &[
            ("workflow", &workflow),
            ("title", "Lease renewal"),
            ("body", "The lease for the Harbour Road warehouse."),
        ],
    )
    .await;

    assert_eq!(page.status, 303);
    let location = page.location();
    let id: i64 = location
        .strip_prefix("/admin/instances/")
        .and_then(|id| id.parse().ok())
        .expect("the instance page");
    let shown = get(&admin, &app, &location).await;
    assert_eq!(shown.status, 200);
    assert_eq!(shown.first("h1"), format!("#{id} Lease renewal"));
    assert_eq!(
        shown.first(".subject-body"),
        "The lease for the Harbour Road warehouse."
    );
    assert_eq!(shown.first("dd.state"), "In progress");
    assert_eq!(shown.text("table.history tbody tr").len(), 1);
    assert!(shown.has("p.flash"));
    assert_eq!(
        shown.text("select#participant option"),
        ["legal", "finance"]
    );
    assert_eq!(events(&app, id).await, [event(0, "", "started")]);

    let list = get(&admin, &app, "/admin/instances").await;
    assert!(
        list.text("table.instances td a")
            .contains(&"Lease renewal".to_owned())
    );
    let dashboard = get(&admin, &app, "/admin").await;
    assert!(
        dashboard
            .text("ul.recent a")
            .iter()
            .any(|a| a.ends_with("Lease renewal"))
    );
}

#[tokio::test]
async fn an_instance_form_with_errors_keeps_what_was_typed() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;
    let workflow = workflow_id(&app, "order_payment").await;
    let before = orchestra::store::instances::recent(&app.db, 10)
        .await
        .unwrap()
        .len();

    let page = submit(
        &admin,
        &app,
        "/admin/instances/new",
        "/admin/instances/new",
        &[
            ("workflow", &workflow.to_string()),
            ("title", "   "),
            ("body", "Two chairs & a <table>."),
        ],
    )
    .await;

    assert_eq!(page.status, 422);
    assert!(page.has("p.field-error[data-field=title]"));
    assert_eq!(page.first("textarea#body"), "Two chairs & a <table>.");
    assert_eq!(
        page.attr("select#workflow option[selected]", "value"),
        Some(workflow.to_string())
    );
    let after = orchestra::store::instances::recent(&app.db, 10)
        .await
        .unwrap()
        .len();
    assert_eq!(after, before);
}

#[tokio::test]
async fn a_link_issued_from_the_admin_page_is_shown_once_and_works() {
    let app = spawn(Flood::Memory).await;
    app.set(&[("orchestra.base_url", app.base.as_str())]).await;
    let admin = app.admin_client().await;
    let id = app.start("contract_review", "Lease renewal").await;
    let page = format!("/admin/instances/{id}");

    let issued = submit(
        &admin,
        &app,
        &page,
        &format!("{page}/links"),
        &[("participant", "finance"), ("ttl", "2h")],
    )
    .await;

    // Post/redirect/get: the POST answers with a redirect whose address holds no link, and
    // the page it leads to shows the link once, kept out of caches.
    assert_eq!(issued.status, 303);
    assert_eq!(issued.location(), page);
    let issued = get(&admin, &app, &page).await;
    assert_eq!(issued.status, 200);
    assert_eq!(issued.header("cache-control"), Some("no-store"));
    assert_eq!(
        issued.first("p.flash.flash-success"),
        "A link was issued. It is shown below, this once."
    );
    let url = issued
        .attr("input#issued-url", "value")
        .expect("the URL is shown");
    assert!(url.starts_with(&format!("{}/interaction/l.{id}.finance.", app.base)));
    assert_eq!(
        issued.attr("button[data-copy]", "data-copy").as_deref(),
        Some("issued-url"),
        "a Copy button names the field it copies"
    );
    assert_eq!(
        issued.attr("input#issued-url", "readonly").as_deref(),
        Some("")
    );
    assert_eq!(
        issued
            .attr("select#participant option[selected]", "value")
            .as_deref(),
        Some("finance")
    );
    assert_eq!(
        events(&app, id).await,
        [event(0, "", "started"), event(0, "", "link_issued")]
    );

    let doorway = get(&app.client(), &app, &path_of(&url)).await;
    assert_eq!(doorway.status, 200);
    assert_eq!(doorway.first("span.branch"), "finance");
    assert!(doorway.has("section.step-review form"));

    let again = get(&admin, &app, &page).await;
    assert!(!again.has("input#issued-url"), "the URL is shown once");
    assert_eq!(
        events(&app, id).await.len(),
        2,
        "reloading the page issues nothing"
    );
}

#[tokio::test]
async fn a_link_with_a_bad_lifetime_or_branch_is_not_issued() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;
    let id = app.start("contract_review", "Lease renewal").await;
    let page = format!("/admin/instances/{id}");

    for (branch, ttl) in [("legal", "forever"), ("legal", "10"), ("marketing", "1h")] {
        let issued = submit(
            &admin,
            &app,
            &page,
            &format!("{page}/links"),
            &[("participant", branch), ("ttl", ttl)],
        )
        .await;
        assert_eq!(issued.status, 422, "{branch} {ttl}");
        assert!(!issued.has("input#issued-url"));
        assert!(issued.has(".links p.field-error[role=alert]"));
        assert_eq!(issued.attr("input#ttl", "value").as_deref(), Some(ttl));
    }
    assert_eq!(events(&app, id).await, [event(0, "", "started")]);
}

#[tokio::test]
async fn revoking_from_the_admin_page_voids_the_instance_links() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;
    let id = app.start("contract_review", "Lease renewal").await;
    let legal = app.link(id, Some("legal")).await;
    let page = format!("/admin/instances/{id}");

    let revoked = submit(&admin, &app, &page, &format!("{page}/revoke"), &[]).await;

    assert_eq!(revoked.status, 303);
    assert_eq!(revoked.header("location"), Some(page.as_str()));
    let shown = get(&admin, &app, &page).await;
    assert_eq!(
        shown.first("p.flash"),
        "Every link of this instance was revoked."
    );
    assert_eq!(shown.text("table.history tbody tr").len(), 3);
    assert_eq!(
        events(&app, id).await.last(),
        Some(&event(0, "", "links_revoked"))
    );
    assert_eq!(get(&app.client(), &app, &legal).await.status, 404);
    let fresh = app.link(id, Some("legal")).await;
    assert_eq!(get(&app.client(), &app, &fresh).await.status, 200);

    let unknown = submit(&admin, &app, &page, "/admin/instances/999999/revoke", &[]).await;
    assert_eq!(unknown.status, 404);
}

#[tokio::test]
async fn a_bad_setting_keeps_what_was_typed_and_saves_nothing() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;

    let page = submit(
        &admin,
        &app,
        "/admin/config/orchestra",
        "/admin/config/orchestra",
        &[
            ("site_name", "Flows & Co"),
            ("base_url", "ftp://flows.example"),
            ("default_link_ttl", "12"),
            ("period", "3600"),
        ],
    )
    .await;

    assert_eq!(page.status, 422);
    assert_eq!(
        page.attr("input#site_name", "value").as_deref(),
        Some("Flows & Co")
    );
    assert_eq!(
        page.attr("input#base_url", "value").as_deref(),
        Some("ftp://flows.example")
    );
    assert_eq!(
        page.attr("input#default_link_ttl", "value").as_deref(),
        Some("12")
    );
    assert!(page.has("p.field-error[data-field=base_url]"));
    assert!(page.has("p.field-error[data-field=default_link_ttl]"));
    assert!(!page.has("p.field-error[data-field=site_name]"));
    let saved = orchestra::domain::settings::Settings::load(&app.db)
        .await
        .unwrap();
    assert_eq!(saved.site_name, "Orchestra");
}

#[tokio::test]
async fn saved_settings_take_effect_at_once() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;

    let page = submit(
        &admin,
        &app,
        "/admin/config/orchestra",
        "/admin/config/orchestra",
        &[
            ("site_name", "Flows & Co"),
            ("base_url", "https://flows.example"),
            ("default_link_ttl", "86400"),
            ("period", "3600"),
        ],
    )
    .await;

    assert_eq!(page.status, 303);
    assert_eq!(page.header("location"), Some("/admin/config/orchestra"));
    let shown = get(&admin, &app, "/admin/config/orchestra").await;
    assert_eq!(shown.first("header .brand"), "Flows & Co");
    assert!(shown.has("p.flash"));
    assert_eq!(
        shown.attr("input#base_url", "value").as_deref(),
        Some("https://flows.example")
    );
    let id = app.start("contract_review", "Lease renewal").await;
    let instance = get(&admin, &app, &format!("/admin/instances/{id}")).await;
    assert_eq!(instance.attr("input#ttl", "value").as_deref(), Some("1d"));
    // A lifetime as the link forms take it (issue 20): `2d` is kept as its seconds.
    let page = submit(
        &admin,
        &app,
        "/admin/config/orchestra",
        "/admin/config/orchestra",
        &[
            ("site_name", "Flows & Co"),
            ("base_url", "https://flows.example"),
            ("default_link_ttl", "2d"),
            ("period", "3600"),
        ],
    )
    .await;
    assert_eq!(page.status, 303);
    let shown = get(&admin, &app, "/admin/config/orchestra").await;
    assert_eq!(
        shown.attr("input#default_link_ttl", "value").as_deref(),
        Some("172800")
    );
}

#[tokio::test]
async fn the_status_report_lists_its_checks() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;

    let page = get(&admin, &app, "/admin/reports/status").await;

    assert_eq!(page.status, 200);
    let rows = page.text("table.status tbody tr td.title");
    assert!(
        rows.len() >= 4,
        "database, site keys, last cron run, version"
    );
    for severity in page.text("table.status tbody td.severity") {
        assert!(["OK", "Note", "Warning", "Error"].contains(&severity.as_str()));
    }
    assert!(page.has("tr#check-database.severity-ok"));
}

/// Puts a setup token in place as `orchestra serve` does on an empty database.
async fn setup_token(app: &TestApp) -> String {
    let token = orchestra::domain::keys::random_token();
    let keys = app.state.site.get().await.keys.clone();
    orchestra::store::admins::put_setup_token(
        &app.db,
        &keys.keyed_hash("setup", &token),
        orchestra::store::now() + 3600,
    )
    .await
    .unwrap();
    format!("/setup/{token}")
}

#[tokio::test]
async fn the_first_run_setup_url_creates_the_first_administrator_once() {
    let app = spawn(Flood::Memory).await;
    let setup = setup_token(&app).await;
    let client = app.client();

    let form = get(&client, &app, &setup).await;
    assert_eq!(form.status, 200);
    assert_credential_headers(&form, "the setup page");
    assert_eq!(form.first("h1"), "Create the first administrator");

    let page = read(client.post(app.url(&setup)).form(&[
        ("csrf", form.csrf().as_str()),
        ("name", "grace"),
        ("password", "a long enough password"),
        ("confirm", "a long enough password"),
    ]))
    .await;

    assert_eq!(page.status, 303);
    assert_credential_headers(&page, "the setup result");
    assert_eq!(page.header("location"), Some("/admin"));
    let dashboard = get(&client, &app, "/admin").await;
    assert_eq!(dashboard.status, 200, "the new administrator is signed in");
    assert_eq!(dashboard.first("header .who"), "grace");
    assert!(dashboard.has("p.flash"));
    assert_eq!(orchestra::store::admins::count(&app.db).await.unwrap(), 1);

    let reused = get(&app.client(), &app, &setup).await;
    assert_eq!(reused.status, 404, "the setup URL works once");
    let again = read(client.post(app.url(&setup)).form(&[
        ("csrf", dashboard.csrf().as_str()),
        ("name", "mallory"),
        ("password", "a long enough password"),
        ("confirm", "a long enough password"),
    ]))
    .await;
    assert_eq!(again.status, 404);
    assert_eq!(orchestra::store::admins::count(&app.db).await.unwrap(), 1);

    let other = sign_in_as(&app, "grace", "a long enough password").await;
    assert_eq!(get(&other, &app, "/admin").await.status, 200);
}

async fn sign_in_as(app: &TestApp, name: &str, password: &str) -> reqwest::Client {
    let client = app.client();
    let form = get(&client, app, "/admin/login").await;
    let page = read(client.post(app.url("/admin/login")).form(&[
        ("csrf", form.csrf().as_str()),
        ("name", name),
        ("password", password),
    ]))
    .await;
    assert_eq!(page.status, 303);
    client
}

#[tokio::test]
async fn a_setup_form_with_errors_keeps_the_name_and_creates_nobody() {
    let app = spawn(Flood::Memory).await;
    let setup = setup_token(&app).await;
    let client = app.client();
    let form = get(&client, &app, &setup).await;

    let page = read(client.post(app.url(&setup)).form(&[
        ("csrf", form.csrf().as_str()),
        ("name", "grace hopper"),
        ("password", "short"),
        ("confirm", "different"),
    ]))
    .await;

    assert_eq!(page.status, 422);
    assert_eq!(
        page.attr("input#name", "value").as_deref(),
        Some("grace hopper")
    );
    assert_eq!(page.attr("input#password", "value"), None);
    assert_eq!(
        page.text("p.field-error").len(),
        3,
        "name, password and confirmation"
    );
    assert!(page.has("p.field-error#name-error"));
    assert_eq!(orchestra::store::admins::count(&app.db).await.unwrap(), 0);
    assert_eq!(
        get(&app.client(), &app, &setup).await.status,
        200,
        "still usable"
    );
}

#[tokio::test]
async fn a_setup_url_is_refused_once_an_administrator_exists_or_when_unknown() {
    let app = spawn(Flood::Memory).await;
    let setup = setup_token(&app).await;
    assert_eq!(
        get(&app.client(), &app, "/setup/not-the-token")
            .await
            .status,
        404
    );
    let unknown = get(&app.client(), &app, "/setup/not-the-token").await;
    assert_credential_headers(&unknown, "an unknown setup URL");

    app.create_admin().await;

    assert_eq!(get(&app.client(), &app, &setup).await.status, 404);
}

#[tokio::test]
async fn every_admin_page_has_a_skip_link_breadcrumbs_and_marks_where_it_is() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;
    let id = app.start("contract_review", "Lease renewal").await;
    let workflow = workflow_id(&app, "contract_review").await;
    let pages: [(String, &str, Vec<&str>); 8] = [
        ("/admin".into(), "/admin", vec![]),
        (
            "/admin/workflows".into(),
            "/admin/workflows",
            vec!["/admin"],
        ),
        (
            format!("/admin/workflows/{workflow}"),
            "/admin/workflows",
            vec!["/admin", "/admin/workflows"],
        ),
        (
            format!("/admin/workflows/{workflow}/edit"),
            "/admin/workflows",
            vec!["/admin", "/admin/workflows", "/admin/workflows/{w}"],
        ),
        (
            format!("/admin/instances/{id}"),
            "/admin/instances",
            vec!["/admin", "/admin/instances"],
        ),
        (
            "/admin/config/orchestra".into(),
            "/admin/config/orchestra",
            vec!["/admin"],
        ),
        (
            "/admin/config/orchestra/interaction".into(),
            "/admin/config/orchestra",
            vec!["/admin", "/admin/config/orchestra"],
        ),
        (
            "/admin/reports/status".into(),
            "/admin/reports/status",
            vec!["/admin"],
        ),
    ];
    for (path, section, crumbs) in pages {
        let page = get(&admin, &app, &path).await;
        assert_eq!(page.status, 200, "{path}");
        assert_eq!(
            page.attr("a.skip-link", "href").as_deref(),
            Some("#main"),
            "{path}"
        );
        assert!(page.has("main#main"), "{path}");
        assert_eq!(
            page.attr("nav.admin a[aria-current=page]", "href")
                .as_deref(),
            Some(section),
            "{path}"
        );
        let hrefs: Vec<String> = scraper::Html::parse_document(&page.body)
            .select(&scraper::Selector::parse("nav.breadcrumbs li a").unwrap())
            .filter_map(|a| a.value().attr("href").map(str::to_owned))
            .collect();
        let expected: Vec<String> = crumbs
            .iter()
            .map(|c| c.replace("{w}", &workflow.to_string()))
            .collect();
        assert_eq!(hrefs, expected, "{path}");
        assert!(
            !page.first("nav.breadcrumbs [aria-current=page]").is_empty(),
            "{path}: the page itself is the last crumb"
        );
    }
    for (path, tab) in [
        ("/admin/config/orchestra", "/admin/config/orchestra"),
        (
            "/admin/config/orchestra/interaction",
            "/admin/config/orchestra/interaction",
        ),
        ("/admin/config/api", "/admin/config/api"),
    ] {
        let page = get(&admin, &app, path).await;
        assert_eq!(page.text("nav.tabs a").len(), 3, "{path}");
        assert_eq!(
            page.attr("nav.tabs a[aria-current=page]", "href")
                .as_deref(),
            Some(tab),
            "{path}"
        );
    }
}

#[tokio::test]
async fn the_language_switch_keeps_the_query_and_every_page_has_a_favicon() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;
    let page = get(
        &admin,
        &app,
        "/admin/login?destination=%2Fadmin%2Fworkflows&lang=en",
    )
    .await;
    assert_eq!(
        page.attr("nav.languages a[hreflang=fr]", "href").as_deref(),
        Some("?destination=%2Fadmin%2Fworkflows&lang=fr")
    );
    assert_eq!(
        page.attr("link[rel=icon]", "href").as_deref(),
        Some("/favicon.svg")
    );
    for path in ["/favicon.svg", "/favicon.ico"] {
        let icon = get(&app.client(), &app, path).await;
        assert_eq!(icon.status, 200, "{path}");
        assert_eq!(icon.header("content-type"), Some("image/svg+xml"));
        assert!(icon.body.starts_with("<svg"));
    }
}

/// The notices box on Interaction settings says what the notices' limits do, in its own words:
/// not the doorway's sentence ("the switch is on, but both limits are 0") under a banner that
/// says the switch is off. In English and French.
#[tokio::test]
async fn the_notices_box_says_what_the_notices_limits_do_in_both_languages() {
    let app = spawn(Flood::Memory).await;
    app.create_admin().await;
    let admin = sign_in(&app).await;
    let cases = [
        // The switch off, the numbers kept.
        (
            &[
                ("orchestra.request_limits.enabled", "false"),
                ("notice.limits.per_payment", "10"),
                ("notice.limits.total", "100"),
            ][..],
            [
                "Notices are not counted: the request limits switch is off, so these numbers are kept but nothing is counted.",
                "Les avis ne sont pas comptés : l'interrupteur des limites de requêtes est éteint, ces nombres sont conservés mais rien n'est compté.",
            ],
        ),
        // The switch on, both notice limits 0.
        (
            &[
                ("orchestra.request_limits.enabled", "true"),
                ("notice.limits.per_payment", "0"),
                ("notice.limits.total", "0"),
            ][..],
            [
                "Notices are not counted: the switch is on, but both limits are 0.",
                "Les avis ne sont pas comptés : l'interrupteur est allumé, mais les deux limites valent 0.",
            ],
        ),
        (
            &[("notice.limits.per_payment", "10")][..],
            [
                "Each payment's notices are capped, but the total is off: notices for many payments are not capped.",
                "Les avis de chaque paiement sont limités, mais le total est désactivé : les avis de nombreux paiements ne sont pas limités.",
            ],
        ),
        (
            &[("notice.limits.total", "100")][..],
            [
                "Notices are being counted and limited.",
                "Les avis sont comptés et limités.",
            ],
        ),
    ];
    for (settings, said) in cases {
        app.set(settings).await;
        for (lang, said) in ["en", "fr"].into_iter().zip(said) {
            let page = get(
                &admin,
                &app,
                &format!("/admin/config/orchestra/interaction?lang={lang}"),
            )
            .await;
            assert_eq!(page.status, 200);
            assert_eq!(page.attr("html", "lang").as_deref(), Some(lang));
            assert_eq!(
                page.text("#payment-notices .notices-state"),
                [said],
                "{settings:?}"
            );
        }
    }
}

/// Issue 20: the dashboard's first box said "Needs attention" over nothing. It is headed so only
/// when something needs it; with every check well, it is "The site" and lists nothing.
#[tokio::test]
async fn the_dashboard_says_needs_attention_only_over_something_to_attend_to() {
    let app = spawn(Flood::Memory).await;
    // A brand-new site shows its first steps instead (`first_day.rs`); one instance in, the
    // dashboard reports the site's checks.
    app.start("contract_review", "Lease 2027").await;
    let admin = app.admin_client().await;
    let shipped = get(&admin, &app, "/admin").await;
    assert!(
        shipped.has("section.attention li"),
        "as shipped the doorway is uncapped"
    );
    assert_eq!(shipped.first("#dashboard-status h2"), "Needs attention");
    app.set(&[
        ("orchestra.request_limits.enabled", "true"),
        ("interaction.limits.per_link", "30"),
        ("interaction.limits.total", "5000"),
        ("notice.limits.per_payment", "20"),
        ("notice.limits.total", "2000"),
    ])
    .await;
    orchestra::run_cron(&app.db, &app.state.guard)
        .await
        .unwrap();
    let well = get(&admin, &app, "/admin").await;
    assert!(
        well.has("section.all-ok") && !well.has("#dashboard-status li"),
        "{:?}",
        well.text("#dashboard-status li")
    );
    assert_eq!(well.first("#dashboard-status h2"), "The site");
    let french = get(&admin, &app, "/admin?lang=fr").await;
    assert_eq!(french.first("#dashboard-status h2"), "Le site");
}

/// Issue 20: a workflow's page offers *Start an instance*, which opens the form with that
/// workflow chosen; an id that is not offered leaves the first one chosen, never an error.
#[tokio::test]
async fn a_workflows_page_starts_an_instance_of_it() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;
    let w = orchestra::store::workflows::by_name(&app.db, "order_payment")
        .await
        .unwrap()
        .unwrap();
    let page = get(&admin, &app, &format!("/admin/workflows/{}", w.id)).await;
    let href = page.attr("a#start-instance", "href").expect("the button");
    assert_eq!(href, format!("/admin/instances/new?workflow={}", w.id));
    let form = get(&admin, &app, &href).await;
    assert_eq!(form.status, 200);
    assert_eq!(
        form.attr("select#workflow option[selected]", "value"),
        Some(w.id.to_string())
    );
    let first = get(&admin, &app, "/admin/instances/new").await;
    let first = first.attr("select#workflow option[selected]", "value");
    for odd in ["999999", "-1", "x"] {
        let page = get(
            &admin,
            &app,
            &format!("/admin/instances/new?workflow={odd}"),
        )
        .await;
        assert_eq!(page.status, 200);
        assert_eq!(
            page.attr("select#workflow option[selected]", "value"),
            first
        );
    }
}

/// Issue 20: the definition editor reported the first bad line only, so a definition with three
/// mistakes took three saves. Every bad line is said at once, in order; nothing is saved.
#[tokio::test]
async fn the_definition_editor_reports_every_bad_line() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;
    let before = workflow_count(&app).await;
    let typed = "form: Details | Name*, Born (time)\nreview: Fine\nreview Check\nwait: Later\n";
    let page = submit(
        &admin,
        &app,
        "/admin/workflows/new",
        "/admin/workflows/new",
        &[
            ("name", "hiring"),
            ("label", "Hiring"),
            ("definition", typed),
        ],
    )
    .await;
    assert_eq!(page.status, 422);
    let said = page.first("p#definition-error");
    for line in ["Line 1:", "Line 3:", "Line 4:"] {
        assert!(said.contains(line), "{line} in {said}");
    }
    assert!(
        !said.contains("Line 2:"),
        "a good line says nothing: {said}"
    );
    assert!(
        said.find("Line 1:") < said.find("Line 3:") && said.find("Line 3:") < said.find("Line 4:")
    );
    assert_eq!(page.first("textarea#definition"), typed.trim_end());
    assert_eq!(workflow_count(&app).await, before);
}

/// A page that is not there, for a signed-in administrator, keeps the navigation and the
/// sign-out button, in their language; for anyone else it is the sign-in page first.
#[tokio::test]
async fn an_admin_404_keeps_the_navigation() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;
    for (path, lang, title) in [
        ("/admin/no-such-page", "en", "Page not found"),
        ("/admin/instances/987654", "en", "Page not found"),
        (
            "/admin/workflows/987654/edit?lang=fr",
            "fr",
            "Page introuvable",
        ),
    ] {
        let page = get(&admin, &app, path).await;
        assert_eq!(page.status, 404, "{path}");
        assert_eq!(page.lang(), lang, "{path}");
        assert_eq!(page.first("h1"), title, "{path}");
        assert!(page.has("nav.admin a[href='/admin/instances']"), "{path}");
        assert!(page.has("form.logout input[name=csrf]"), "{path}");
        assert!(!page.csrf().is_empty(), "{path}: the sign-out button works");
    }
    let stranger = get(&app.client(), &app, "/admin/no-such-page").await;
    assert_eq!(
        stranger.status, 404,
        "not signed in: the plain 404, no redirect"
    );
    assert!(!stranger.has("nav.admin"));
    // A known page still sends a stranger to sign in.
    let known = get(&app.client(), &app, "/admin/instances").await;
    assert_eq!(known.status, 303);
}

/// A workflow's page shows an older version's steps when asked, so an administrator can read
/// what the instances still on it answer.
#[tokio::test]
async fn a_workflows_page_shows_an_older_versions_definition() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;
    let id = workflow_id(&app, "contract_review").await;
    let w = orchestra::store::workflows::by_id(&app.db, id)
        .await
        .unwrap()
        .unwrap();
    let def =
        orchestra::domain::workflow::Definition::parse("review@boss: Sign the lease\n").unwrap();
    orchestra::store::workflows::save(&app.db, id, &w.label, &def.to_json())
        .await
        .unwrap();
    let page = get(&admin, &app, &format!("/admin/workflows/{id}")).await;
    assert_eq!(page.first("h2#definition"), "Steps");
    assert!(page.first("pre.definition").contains("Sign the lease"));
    assert!(page.has(&format!(
        "a[href='/admin/workflows/{id}?version=1#definition']"
    )));
    let older = get(&admin, &app, &format!("/admin/workflows/{id}?version=1")).await;
    assert_eq!(older.status, 200);
    assert_eq!(older.first("h2#definition"), "Steps of version 1");
    assert!(
        older
            .first("pre.definition")
            .contains("Approve the contract")
    );
    assert_eq!(
        older.attr("pre.definition", "data-version").as_deref(),
        Some("1")
    );
    let french = get(
        &admin,
        &app,
        &format!("/admin/workflows/{id}?version=1&lang=fr"),
    )
    .await;
    assert_eq!(french.first("h2#definition"), "Étapes de la version 1");
    assert_eq!(
        get(&admin, &app, &format!("/admin/workflows/{id}?version=9"))
            .await
            .status,
        404
    );
    let bad = get(&admin, &app, &format!("/admin/workflows/{id}?version=x")).await;
    assert_eq!(bad.status, 400);
    assert!(bad.has("nav.admin"), "the themed page, with the navigation");
}

/// The history names each step in the reader's language when the instance's version has its
/// words; the recorded title otherwise.
#[tokio::test]
async fn the_history_names_steps_in_the_readers_language() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;
    let id = app.start("supplier_onboarding", "Acme").await;
    let supplier = app.link(id, Some("supplier")).await;
    let filed = crate::helpers::answer_step(
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
    let steps =
        |page: &crate::helpers::Page| page.text("table.history tbody td[data-label]:nth-child(2)");
    let english = get(&admin, &app, &format!("/admin/instances/{id}?lang=en")).await;
    assert!(
        steps(&english).contains(&"Supplier details".to_owned()),
        "{:?}",
        steps(&english)
    );
    let french = get(&admin, &app, &format!("/admin/instances/{id}?lang=fr")).await;
    assert!(
        steps(&french).contains(&"Coordonnées du fournisseur".to_owned()),
        "{:?}",
        steps(&french)
    );
    assert!(!steps(&french).contains(&"Supplier details".to_owned()));
}
