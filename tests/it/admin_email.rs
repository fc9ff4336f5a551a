//! Administrators' addresses and emails, through a real SMTP server on loopback: an emailed
//! invitation and reset link open the password page and sign in; a password change is told by
//! email; with the server down an invitation waits and goes once; without a server the link is
//! shown; the commands `admin create --email` and `admin invite --email`; the account page's
//! address; and one's sessions listed and ended everywhere else, and what a stranger gets.

use std::process::Command;

use orchestra::domain::admins::{SecurityChange, notify_security_change};
use orchestra::domain::mail::Mailer;
use orchestra::store;
use reqwest::Client;

use crate::helpers::{
    self, ADMIN, Flood, PASSWORD, Page, Received, Smtp, TestApp, get, path_of, post, read, spawn,
    spawn_now, spawn_now_mailing, with_lang,
};

const BIN: &str = env!("CARGO_BIN_EXE_orchestra");
const FROM: &str = "Orchestra <orchestra@example.org>";
const NEW_PASSWORD: &str = "a brand new passphrase";
const FIREFOX: &str = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0";
const SAFARI: &str = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1";

/// One run of the email sender, as `serve`'s background task makes it.
pub(crate) async fn send(app: &TestApp, mailer: Option<&Mailer>, now: i64) {
    let site = app.state.site.get().await;
    orchestra::domain::mail::send::run_once(&app.db, &app.state.versions, &site, mailer, now)
        .await
        .unwrap();
}

/// A client with its own cookies and User-Agent, not following redirects.
fn browser(agent: &str) -> Client {
    Client::builder()
        .cookie_store(true)
        .user_agent(agent)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

async fn sign_in_as(app: &TestApp, client: &Client, name: &str, password: &str) {
    let form = get(client, app, "/admin/login").await;
    let page = read(client.post(app.url("/admin/login")).form(&[
        ("csrf", form.csrf().as_str()),
        ("name", name),
        ("password", password),
    ]))
    .await;
    assert_eq!(page.status, 303, "{name} could not sign in: {}", page.body);
}

/// Posts a form with the CSRF token of the page at `from`.
async fn submit(
    client: &Client,
    app: &TestApp,
    from: &str,
    path: &str,
    form: &[(&str, &str)],
) -> Page {
    let token = get(client, app, from).await.csrf();
    let mut fields = vec![("csrf", token.as_str())];
    fields.extend_from_slice(form);
    post(client, app, path, &fields).await
}

/// The one-time link an email's text part carries, as a path.
fn setup_link(email: &Received) -> String {
    let text = email.part("text/plain");
    let start = text.find("/setup/").expect("a link in the email");
    text[start..].split_whitespace().next().unwrap().to_owned()
}

/// Sets a password through a one-time link's page on a fresh client.
async fn spend(app: &TestApp, path: &str) -> Page {
    let visitor = app.client();
    let page = get(&visitor, app, path).await;
    assert_eq!(page.status, 200, "the link's page: {}", page.body);
    post(
        &visitor,
        app,
        path,
        &[
            ("csrf", page.csrf().as_str()),
            ("password", NEW_PASSWORD),
            ("confirm", NEW_PASSWORD),
        ],
    )
    .await
}

async fn admin_mail_states(app: &TestApp) -> Vec<(String, String)> {
    sqlx::any::install_default_drivers();
    let (_, url) = store::normalize_url(&app.database.url).unwrap();
    let pool = sqlx::AnyPool::connect(&url).await.unwrap();
    let rows = sqlx::query_as("SELECT kind, state FROM admin_mails ORDER BY id")
        .fetch_all(&pool)
        .await
        .unwrap();
    pool.close().await;
    rows
}

fn app_logs(app: &TestApp) -> String {
    crate::doorway::app_lines(app).join("\n")
}

async fn give_email(app: &TestApp, name: &str, email: &str) -> i64 {
    let admin = store::admins::by_name(&app.db, name)
        .await
        .unwrap()
        .unwrap();
    assert!(
        store::admin_mails::set_email(&app.db, admin.id, Some(email), Some("en"))
            .await
            .unwrap()
    );
    admin.id
}

#[tokio::test]
async fn an_emailed_invitation_opens_the_password_page_and_its_administrator_signs_in() {
    let smtp = Smtp::start();
    let mailer = Mailer::new(&smtp.url(), FROM).unwrap();
    let app = spawn_now_mailing(Flood::Memory, mailer.clone()).await;
    let ada = app.admin_client().await;
    let made = submit(
        &ada,
        &app,
        "/admin/admins",
        "/admin/admins",
        &[("name", "bob"), ("email", "Bob@Example.org")],
    )
    .await;
    assert_eq!(made.status, 303, "{}", made.body);
    let list = get(&ada, &app, "/admin/admins").await;
    assert!(!list.has("#admin-link"), "an emailed link is not shown too");
    assert!(list.first(".flash").contains("emailed"), "{}", list.body);
    assert!(smtp.received().is_empty(), "sent off the request's path");

    send(&app, Some(&mailer), store::now()).await;
    let got = smtp.received();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].to, vec!["bob@example.org".to_owned()]);
    assert!(got[0].subject().contains("invited"), "{}", got[0].subject());
    let path = setup_link(&got[0]);
    assert!(path.starts_with("/setup/invite/"), "{path}");
    let done = spend(&app, &path).await;
    assert_eq!(done.status, 303, "{}", done.body);
    sign_in_as(&app, &app.client(), "bob", NEW_PASSWORD).await;
    let bob = store::admins::by_name(&app.db, "bob")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(bob.email.as_deref(), Some("bob@example.org"));
    // Sent once; the link never reached a log line.
    send(&app, Some(&mailer), store::now() + 3600).await;
    assert_eq!(smtp.received().len(), 1);
    let token = path.trim_start_matches("/setup/invite/");
    assert!(!app_logs(&app).contains(token), "the link reached the logs");
    assert!(app_logs(&app).contains("an administrator's email was sent"));
}

#[tokio::test]
async fn an_emailed_reset_sets_a_new_password_and_the_change_is_told() {
    let smtp = Smtp::start();
    let mailer = Mailer::new(&smtp.url(), FROM).unwrap();
    let app = spawn_now_mailing(Flood::Memory, mailer.clone()).await;
    let ada = app.admin_client().await;
    let hash = orchestra::domain::password::hash("carol's old password").unwrap();
    store::admins::create(&app.db, "carol", &hash)
        .await
        .unwrap();
    let carol = give_email(&app, "carol", "carol@example.org").await;
    let made = submit(
        &ada,
        &app,
        "/admin/admins",
        &format!("/admin/admins/{carol}/reset"),
        &[],
    )
    .await;
    assert_eq!(made.status, 303);
    let list = get(&ada, &app, "/admin/admins").await;
    assert!(!list.has("#admin-link"));
    assert_eq!(
        list.first("tr[data-admin=\"carol\"] .email"),
        "carol@example.org"
    );
    send(&app, Some(&mailer), store::now()).await;
    let got = smtp.received();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].to, vec!["carol@example.org".to_owned()]);
    let path = setup_link(&got[0]);
    assert!(path.starts_with("/setup/reset/"), "{path}");
    assert_eq!(spend(&app, &path).await.status, 303);
    sign_in_as(&app, &app.client(), "carol", NEW_PASSWORD).await;
    // The reset used is told to the address.
    send(&app, Some(&mailer), store::now()).await;
    let got = smtp.received();
    assert_eq!(got.len(), 2);
    assert!(
        got[1].subject().contains("password"),
        "{}",
        got[1].subject()
    );
    assert!(!got[1].part("text/plain").contains("/setup/"));
}

#[tokio::test]
async fn a_password_change_is_told_by_email_to_the_address_on_the_account_page() {
    let smtp = Smtp::start();
    let mailer = Mailer::new(&smtp.url(), FROM).unwrap();
    let app = spawn_now_mailing(Flood::Memory, mailer.clone()).await;
    let ada = app.admin_client().await;
    let saved = submit(
        &ada,
        &app,
        "/admin/account",
        "/admin/account?lang=fr",
        &[("email", "ada@example.org")],
    )
    .await;
    assert_eq!(saved.status, 303, "{}", saved.body);
    let changed = submit(
        &ada,
        &app,
        "/admin/admins/password",
        "/admin/admins/password",
        &[
            ("current", PASSWORD),
            ("password", NEW_PASSWORD),
            ("confirm", NEW_PASSWORD),
        ],
    )
    .await;
    assert_eq!(changed.status, 303, "{}", changed.body);
    send(&app, Some(&mailer), store::now()).await;
    let got = smtp.received();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].to, vec!["ada@example.org".to_owned()]);
    // In the language of the page the address was saved from.
    assert!(
        got[0].subject().contains("mot de passe"),
        "{}",
        got[0].subject()
    );

    // The domain function the two-step pages call: queued for an address, nothing without.
    let id = store::admins::by_name(&app.db, ADMIN)
        .await
        .unwrap()
        .unwrap()
        .id;
    assert!(notify_security_change(&app.db, id, SecurityChange::Password).await);
    send(&app, Some(&mailer), store::now()).await;
    assert_eq!(smtp.received().len(), 2);
    store::admin_mails::set_email(&app.db, id, None, None)
        .await
        .unwrap();
    assert!(!notify_security_change(&app.db, id, SecurityChange::TwoStepOn).await);
}

#[tokio::test]
async fn with_the_smtp_server_down_the_invitation_waits_and_goes_once_it_is_back() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let mailer = Mailer::new(&format!("smtp://{addr}"), FROM).unwrap();
    let app = spawn_now_mailing(Flood::Memory, mailer.clone()).await;
    let ada = app.admin_client().await;
    let made = submit(
        &ada,
        &app,
        "/admin/admins",
        "/admin/admins",
        &[("name", "dan"), ("email", "dan@example.org")],
    )
    .await;
    assert_eq!(made.status, 303);
    let now = store::now();
    send(&app, Some(&mailer), now).await;
    assert_eq!(
        admin_mail_states(&app).await,
        vec![("invite".to_owned(), "pending".to_owned())]
    );
    // Back on the same port: the retry, once its wait is over, goes once.
    let smtp = Smtp::on(std::net::TcpListener::bind(addr).unwrap());
    send(&app, Some(&mailer), now + 10).await;
    assert!(smtp.received().is_empty(), "tried again before its wait");
    send(&app, Some(&mailer), now + 120).await;
    send(&app, Some(&mailer), now + 4000).await;
    let got = smtp.received();
    assert_eq!(got.len(), 1);
    assert_eq!(
        admin_mail_states(&app).await,
        vec![("invite".to_owned(), "sent".to_owned())]
    );
    assert_eq!(spend(&app, &setup_link(&got[0])).await.status, 303);
}

#[tokio::test]
async fn without_an_smtp_server_the_link_is_shown_and_nothing_is_queued() {
    let app = spawn_now(Flood::Memory).await;
    let ada = app.admin_client().await;
    let made = submit(
        &ada,
        &app,
        "/admin/admins",
        "/admin/admins",
        &[("name", "erin"), ("email", "erin@example.org")],
    )
    .await;
    assert_eq!(made.status, 303);
    let list = get(&ada, &app, "/admin/admins").await;
    let url = list
        .attr("#admin-link", "value")
        .expect("the link is shown");
    assert!(admin_mail_states(&app).await.is_empty());
    assert_eq!(spend(&app, &path_of(&url)).await.status, 303);
    let erin = store::admins::by_name(&app.db, "erin")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(erin.email.as_deref(), Some("erin@example.org"));
}

#[tokio::test]
async fn a_bad_or_taken_address_is_a_field_error_that_keeps_what_was_typed() {
    let app = spawn(Flood::Memory).await;
    let ada = app.admin_client().await;
    give_email(&app, ADMIN, "ada@example.org").await;
    for (typed, error) in [
        ("not an address", "Enter an email address"),
        ("ADA@example.org", "already has this address"),
    ] {
        let page = submit(
            &ada,
            &app,
            "/admin/admins",
            "/admin/admins",
            &[("name", "fay"), ("email", typed)],
        )
        .await;
        assert_eq!(page.status, 422, "{typed}");
        assert_eq!(page.attr("input#email", "value").as_deref(), Some(typed));
        assert_eq!(page.attr("input#name", "value").as_deref(), Some("fay"));
        assert!(page.first("#email-error").contains(error), "{}", page.body);
        let account = submit(
            &ada,
            &app,
            "/admin/account",
            "/admin/account",
            &[("email", typed)],
        )
        .await;
        if typed.starts_with("ADA") {
            // One's own address again is no conflict.
            assert_eq!(account.status, 303);
        } else {
            assert_eq!(account.status, 422);
            assert_eq!(account.attr("input#email", "value").as_deref(), Some(typed));
            assert!(account.first("#email-error").contains(error));
        }
    }
    let hash = orchestra::domain::password::hash("gus's password!").unwrap();
    store::admins::create(&app.db, "gus", &hash).await.unwrap();
    let gus = app.client();
    sign_in_as(&app, &gus, "gus", "gus's password!").await;
    let taken = submit(
        &gus,
        &app,
        "/admin/account",
        "/admin/account",
        &[("email", "ada@example.org")],
    )
    .await;
    assert_eq!(taken.status, 422);
    assert!(
        taken
            .first("#email-error")
            .contains("already has this address")
    );
    // Both languages, with the two-step section's link.
    for (lang, title) in [("en", "My account"), ("fr", "Mon compte")] {
        let page = get(&ada, &app, &with_lang("/admin/account", lang)).await;
        assert_eq!(page.status, 200);
        assert_eq!(page.lang(), lang);
        assert_eq!(page.first("h1"), title);
        assert!(page.has("#account-two-step a[href=\"/admin/account/two-step\"]"));
        let sessions = get(&ada, &app, &with_lang("/admin/account/sessions", lang)).await;
        assert_eq!(sessions.status, 200);
        assert_eq!(sessions.lang(), lang);
    }
}

#[tokio::test]
async fn admin_create_and_admin_invite_take_an_address_through_the_binary() {
    let smtp = Smtp::start();
    let mailer = Mailer::new(&smtp.url(), FROM).unwrap();
    let app = spawn_now_mailing(Flood::Memory, mailer.clone()).await;
    let url = app.database.url.clone();
    let run = |args: &[&str], smtp_url: Option<&str>| {
        let mut command = Command::new(BIN);
        command
            .args(args)
            .env("ORCHESTRA_DATABASE_URL", &url)
            .env("ORCHESTRA_ADMIN_PASSWORD", "hal's long password");
        if let Some(s) = smtp_url {
            command
                .env("ORCHESTRA_SMTP_URL", s)
                .env("ORCHESTRA_MAIL_FROM", FROM);
        }
        command.output().unwrap()
    };
    let out = run(
        &["admin", "create", "hal", "--email", "Hal@Example.org"],
        None,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let hal = store::admins::by_name(&app.db, "hal")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(hal.email.as_deref(), Some("hal@example.org"));
    let taken = run(
        &["admin", "create", "ian", "--email", "hal@example.org"],
        None,
    );
    assert_eq!(taken.status.code(), Some(2));
    assert!(
        store::admins::by_name(&app.db, "ian")
            .await
            .unwrap()
            .is_none()
    );
    let bad = run(&["admin", "invite", "ian", "--email", "nope"], None);
    assert_eq!(bad.status.code(), Some(2));

    let out = run(
        &["admin", "invite", "ian", "--email", "ian@example.org"],
        Some(&smtp.url()),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    assert!(printed.contains("/setup/invite/"), "{printed}");
    send(&app, Some(&mailer), store::now()).await;
    let got = smtp.received();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].to, vec!["ian@example.org".to_owned()]);
    // The printed link and the emailed one are the same link.
    assert_eq!(setup_link(&got[0]), path_of(&printed));
    assert_eq!(spend(&app, &path_of(&printed)).await.status, 303);
    // Without an email server, the link is printed and nothing waits.
    let out = run(
        &["admin", "invite", "jo", "--email", "jo@example.org"],
        None,
    );
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("/setup/invite/"));
    assert_eq!(admin_mail_states(&app).await.len(), 1);
}

/// The rows of the sessions page: (browser, this session).
fn sessions_listed(page: &Page) -> Vec<(String, bool)> {
    let doc = scraper::Html::parse_document(&page.body);
    let row = scraper::Selector::parse("tr.session").unwrap();
    let agent = scraper::Selector::parse("td.agent").unwrap();
    doc.select(&row)
        .map(|r| {
            let text: String = r.select(&agent).next().unwrap().text().collect();
            (
                text.split(" (").next().unwrap().trim().to_owned(),
                r.value().classes().any(|c| c == "this"),
            )
        })
        .collect()
}

#[tokio::test]
async fn sign_out_everywhere_ends_the_other_session_and_keeps_this_one() {
    let app = spawn(Flood::Memory).await;
    app.create_admin().await;
    let here = browser(FIREFOX);
    let there = browser(SAFARI);
    sign_in_as(&app, &here, ADMIN, PASSWORD).await;
    sign_in_as(&app, &there, ADMIN, PASSWORD).await;
    assert_eq!(get(&there, &app, "/admin").await.status, 200);
    let page = get(&here, &app, "/admin/account/sessions").await;
    assert_eq!(page.status, 200);
    assert_eq!(page.header("cache-control"), Some("no-store"));
    let mut listed = sessions_listed(&page);
    listed.sort();
    assert_eq!(
        listed,
        vec![
            ("Firefox · Linux".to_owned(), true),
            ("Safari · iOS".to_owned(), false)
        ]
    );
    // No session id on the page, in clear or as its row's key.
    for row_id in sqlx_session_ids(&app).await {
        assert!(!page.body.contains(&row_id));
    }

    let ended = post(
        &here,
        &app,
        "/admin/account/sessions/end",
        &[("csrf", page.csrf().as_str())],
    )
    .await;
    assert_eq!(ended.status, 303);
    assert_eq!(ended.location(), "/admin/account/sessions");
    let gone = get(&there, &app, "/admin").await;
    assert_eq!(gone.status, 303);
    assert!(
        gone.location().starts_with("/admin/login"),
        "{}",
        gone.location()
    );
    let page = get(&here, &app, "/admin/account/sessions").await;
    assert_eq!(page.status, 200, "this session stays signed in");
    assert_eq!(
        sessions_listed(&page),
        vec![("Firefox · Linux".to_owned(), true)]
    );
    assert!(page.first(".flash").contains("Every other session"));
}

async fn sqlx_session_ids(app: &TestApp) -> Vec<String> {
    sqlx::any::install_default_drivers();
    let (_, url) = store::normalize_url(&app.database.url).unwrap();
    let pool = sqlx::AnyPool::connect(&url).await.unwrap();
    let rows = sqlx::query_scalar("SELECT id FROM sessions")
        .fetch_all(&pool)
        .await
        .unwrap();
    pool.close().await;
    rows
}

#[tokio::test]
async fn a_stranger_sees_no_ones_sessions_and_cannot_end_them() {
    let app = spawn(Flood::Memory).await;
    app.create_admin().await;
    let hash = orchestra::domain::password::hash("bob's long password").unwrap();
    store::admins::create(&app.db, "bob", &hash).await.unwrap();
    let ada = browser(FIREFOX);
    let ada2 = browser(SAFARI);
    sign_in_as(&app, &ada, ADMIN, PASSWORD).await;
    sign_in_as(&app, &ada2, ADMIN, PASSWORD).await;
    get(&ada2, &app, "/admin").await;

    // Signed out: the way to the sign-in, for the page and the form.
    let stranger = app.client();
    let page = get(&stranger, &app, "/admin/account/sessions").await;
    assert_eq!(page.status, 303);
    assert!(page.location().starts_with("/admin/login"));
    let csrf = get(&stranger, &app, "/admin/login").await.csrf();
    let forged = post(
        &stranger,
        &app,
        "/admin/account/sessions/end",
        &[("csrf", csrf.as_str())],
    )
    .await;
    assert_eq!(forged.status, 303);
    assert!(forged.location().starts_with("/admin/login"));

    // Another administrator sees their own session only.
    let bob = browser("curl/8.5.0");
    sign_in_as(&app, &bob, "bob", "bob's long password").await;
    let page = get(&bob, &app, "/admin/account/sessions").await;
    assert_eq!(sessions_listed(&page), vec![("curl".to_owned(), true)]);
    let ended = post(
        &bob,
        &app,
        "/admin/account/sessions/end",
        &[("csrf", page.csrf().as_str())],
    )
    .await;
    assert_eq!(ended.status, 303);
    assert_eq!(
        get(&ada2, &app, "/admin").await.status,
        200,
        "bob ended ada's session"
    );

    // A post without its CSRF token ends nothing.
    let forged = post(
        &ada,
        &app,
        "/admin/account/sessions/end",
        &[("csrf", "forged")],
    )
    .await;
    assert_eq!(forged.status, 403);
    assert_eq!(get(&ada2, &app, "/admin").await.status, 200);
}

/// A session row written before migration 30 names no administrator: the upgrade gives it
/// its administrator, so it keeps working, is listed, and is ended by sign out everywhere.
#[tokio::test]
async fn sessions_from_before_the_upgrade_keep_working_and_are_ended_everywhere() {
    let database = helpers::fresh_database().await;
    let pool = helpers::schema_before(&database.url, 30).await;
    sqlx::query(
        "INSERT INTO admins (id, name, password_hash, created_at, auth_epoch) \
         VALUES (7, 'old', 'x', 1700000000, 2)",
    )
    .execute(&pool)
    .await
    .unwrap();
    // A live session, one from before a password change (another epoch), one unreadable.
    sqlx::query(
        "INSERT INTO sessions (id, data, expiry) VALUES \
         ('old', '{\"admin_id\":7,\"admin_epoch\":2}', 4000000000), \
         ('stale', '{\"admin_id\":7,\"admin_epoch\":1}', 4000000000), \
         ('odd', 'not json', 4000000000)",
    )
    .execute(&pool)
    .await
    .unwrap();
    pool.close().await;
    let app = helpers::spawn_on(database, |_, clock| {
        std::sync::Arc::new(orchestra::limits::flood::MemoryFlood::new(4096, clock))
    })
    .await;
    let of_seven = store::sessions::of_admin(&app.db, 7, store::now())
        .await
        .unwrap();
    assert_eq!(of_seven.len(), 1);
    assert_eq!(of_seven[0].agent, "");

    // A live session whose row names no administrator (as one from before the upgrade whose
    // data the upgrade could not read): still signed in, and ended by the epoch's move.
    app.create_admin().await;
    let here = browser(FIREFOX);
    let there = browser(SAFARI);
    sign_in_as(&app, &here, ADMIN, PASSWORD).await;
    sign_in_as(&app, &there, ADMIN, PASSWORD).await;
    let (_, url) = store::normalize_url(&app.database.url).unwrap();
    sqlx::any::install_default_drivers();
    let pool = sqlx::AnyPool::connect(&url).await.unwrap();
    sqlx::query("UPDATE sessions SET admin_id = NULL")
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;
    let page = get(&here, &app, "/admin/account/sessions").await;
    assert_eq!(page.status, 200);
    let ended = post(
        &here,
        &app,
        "/admin/account/sessions/end",
        &[("csrf", page.csrf().as_str())],
    )
    .await;
    assert_eq!(ended.status, 303);
    assert_eq!(get(&there, &app, "/admin").await.status, 303);
    assert_eq!(get(&here, &app, "/admin").await.status, 200);
}

/// Two senders at once (two processes' background tasks, or one and cron) over the same queued
/// invitations: each is claimed by one and sent once, and a later run sends nothing again.
#[tokio::test]
async fn two_senders_at_once_send_each_invitation_once() {
    let smtp = Smtp::start();
    let mailer = Mailer::new(&smtp.url(), FROM).unwrap();
    let app = spawn_now_mailing(Flood::Memory, mailer.clone()).await;
    let site = app.state.site.get().await;
    for n in 0..6 {
        let name = format!("invitee{n}");
        let email = format!("invitee{n}@example.org");
        let invitation = orchestra::domain::admins::Invitation {
            name: &name,
            email: &email,
            lang: orchestra::i18n::Lang::En,
            emailing: true,
            role: orchestra::domain::roles::Role::Editor,
        };
        let made = orchestra::domain::admins::invite_with(
            &app.db,
            &site.keys,
            &site.settings.base_url,
            None,
            &invitation,
        )
        .await
        .unwrap();
        assert!(made.emailed);
    }
    let now = store::now();
    tokio::join!(
        send(&app, Some(&mailer), now),
        send(&app, Some(&mailer), now)
    );
    send(&app, Some(&mailer), now + 3600).await;
    let mut to: Vec<String> = smtp.received().iter().map(|r| r.to.join(",")).collect();
    to.sort();
    let expected: Vec<String> = (0..6).map(|n| format!("invitee{n}@example.org")).collect();
    assert_eq!(to, expected, "each invitation once");
}
