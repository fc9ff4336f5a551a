//! Managing administrators (issue 20): invitations and reset links used once, one's own
//! password changed with the others' sessions signed out, disable, enable, remove (never the
//! last active one), unlock of one account held by the sign-in limits, the same from the
//! command line, and what a stranger gets from each new route.

use std::io::Write;
use std::process::{Command, Stdio};

use orchestra::store;
use reqwest::Client;

use crate::helpers::{
    self, ADMIN, Flood, PASSWORD, Page, TestApp, get, path_of, post, read, sign_in, spawn,
    with_lang,
};

const BIN: &str = env!("CARGO_BIN_EXE_orchestra");
const NEW_PASSWORD: &str = "a brand new passphrase";

/// Creates another administrator directly in the store; its id.
pub(crate) async fn other_admin(app: &TestApp, name: &str, password: &str) -> i64 {
    let hash = orchestra::domain::password::hash(password).unwrap();
    store::admins::create(&app.db, name, &hash)
        .await
        .unwrap()
        .expect("a new name")
}

/// One sign-in attempt on a fresh client: its answer, and the client (signed in on a 303).
async fn attempt(app: &TestApp, name: &str, password: &str) -> (Client, Page) {
    let client = app.client();
    let form = get(&client, app, "/admin/login").await;
    let page = read(client.post(app.url("/admin/login")).form(&[
        ("csrf", form.csrf().as_str()),
        ("name", name),
        ("password", password),
    ]))
    .await;
    (client, page)
}

pub(crate) async fn signed_in_as(app: &TestApp, name: &str, password: &str) -> Client {
    let (client, page) = attempt(app, name, password).await;
    assert_eq!(page.status, 303, "{name} could not sign in: {}", page.body);
    client
}

/// Whether a client still has a working session: the dashboard, or the way to the sign-in.
async fn still_signed_in(app: &TestApp, client: &Client) -> bool {
    let page = get(client, app, "/admin").await;
    match page.status {
        200 => true,
        303 => {
            assert!(
                page.location().starts_with("/admin/login"),
                "{}",
                page.location()
            );
            false
        }
        other => panic!("unexpected {other} on the dashboard"),
    }
}

/// Posts a form of a page the client just saw, with that page's CSRF token.
pub(crate) async fn submit(
    client: &Client,
    app: &TestApp,
    path: &str,
    form: &[(&str, &str)],
) -> Page {
    let token = get(client, app, "/admin/admins").await.csrf();
    let mut fields = vec![("csrf", token.as_str())];
    fields.extend_from_slice(form);
    post(client, app, path, &fields).await
}

/// The one-time link the list shows after an invitation or a reset, as a path.
pub(crate) async fn link_shown(client: &Client, app: &TestApp) -> String {
    let page = get(client, app, "/admin/admins").await;
    assert_eq!(page.status, 200);
    let url = page
        .attr("#admin-link", "value")
        .expect("the link is shown once");
    let again = get(client, app, "/admin/admins").await;
    assert!(!again.has("#admin-link"), "a reload shows the link again");
    path_of(&url)
}

/// Sets a password through a one-time link's page, on a fresh client; that client and the
/// answer.
pub(crate) async fn spend_link(
    app: &TestApp,
    path: &str,
    password: &str,
    confirm: &str,
) -> (Client, Page) {
    let visitor = app.client();
    let page = get(&visitor, app, path).await;
    assert_eq!(page.status, 200, "the link's page: {}", page.body);
    let answer = post(
        &visitor,
        app,
        path,
        &[
            ("csrf", page.csrf().as_str()),
            ("password", password),
            ("confirm", confirm),
        ],
    )
    .await;
    (visitor, answer)
}

/// The one-time links stored, spent or not yet.
async fn waiting_links(app: &TestApp) -> i64 {
    sqlx::any::install_default_drivers();
    let (_, url) = store::normalize_url(&app.database.url).unwrap();
    let pool = sqlx::AnyPool::connect(&url).await.unwrap();
    let rows = sqlx::query_scalar("SELECT COUNT(*) FROM setup_tokens")
        .fetch_one(&pool)
        .await
        .unwrap();
    pool.close().await;
    rows
}

/// The app's own log lines: the test's client and HTML parser log what they read.
fn app_logs(app: &TestApp) -> String {
    crate::doorway::app_lines(app).join("\n")
}

pub(crate) fn row(page: &Page, name: &str, cell: &str) -> String {
    page.first(&format!("tr[data-admin=\"{name}\"] {cell}"))
}

#[tokio::test]
async fn an_admin_invites_another_through_a_link_that_works_once() {
    let app = spawn(Flood::Memory).await;
    let ada = app.admin_client().await;
    let made = submit(&ada, &app, "/admin/admins", &[("name", "bob")]).await;
    assert_eq!(made.status, 303);
    assert_eq!(made.location(), "/admin/admins");
    let path = link_shown(&ada, &app).await;
    assert!(path.starts_with("/setup/invite/"), "{path}");
    let token = path.trim_start_matches("/setup/invite/").to_owned();
    assert!(
        store::admins::by_name(&app.db, "bob")
            .await
            .unwrap()
            .is_none(),
        "nobody is created before the invitee chooses a password"
    );

    let (bob, done) = spend_link(&app, &path, NEW_PASSWORD, NEW_PASSWORD).await;
    assert_eq!(done.status, 303);
    assert_eq!(done.location(), "/admin");
    assert!(
        still_signed_in(&app, &bob).await,
        "the invitee is signed in"
    );
    signed_in_as(&app, "bob", NEW_PASSWORD).await;

    // Spent: the page and its form are the plain refusal, never a second administrator.
    let visitor = app.client();
    assert_eq!(get(&visitor, &app, &path).await.status, 404);
    let csrf = get(&visitor, &app, "/admin/login").await.csrf();
    let again = post(
        &visitor,
        &app,
        &path,
        &[
            ("csrf", csrf.as_str()),
            ("password", "another password!"),
            ("confirm", "another password!"),
        ],
    )
    .await;
    assert_eq!(again.status, 404);
    assert_eq!(store::admins::count(&app.db).await.unwrap(), 2);
    let logs = app_logs(&app);
    assert!(logs.contains("administrator invitation made"), "{logs}");
    assert!(logs.contains("invited administrator chose a password"));
    assert!(!logs.contains(&token), "the invitation reached the logs");
    assert!(!logs.contains(NEW_PASSWORD));
    // The stored row holds no token, only its keyed hash (and nothing once spent).
    let rows = waiting_links(&app).await;
    assert_eq!(rows, 0);
}

#[tokio::test]
async fn a_bad_form_keeps_what_was_typed_but_passwords_and_saves_nothing() {
    let app = spawn(Flood::Memory).await;
    let ada = app.admin_client().await;
    for (name, error) in [
        ("no spaces", "Use 1 to 60 letters"),
        (ADMIN, "An administrator named ada already exists."),
    ] {
        let page = submit(&ada, &app, "/admin/admins", &[("name", name)]).await;
        assert_eq!(page.status, 422, "{name}");
        assert_eq!(page.attr("input#name", "value").as_deref(), Some(name));
        assert!(
            page.first("#name-error").starts_with(error),
            "{}",
            page.first("#name-error")
        );
    }
    let rows = waiting_links(&app).await;
    assert_eq!(rows, 0, "a refused invitation stored a link");

    // The invitee's page: a mismatch or a short password keeps the name, never a password,
    // and spends nothing.
    submit(&ada, &app, "/admin/admins", &[("name", "bob")]).await;
    let path = link_shown(&ada, &app).await;
    for (password, confirm, field) in [
        (NEW_PASSWORD, "something else entirely", "#confirm-error"),
        ("short", "short", "#password-error"),
    ] {
        let (_, page) = spend_link(&app, &path, password, confirm).await;
        assert_eq!(page.status, 422);
        assert!(page.has(field), "{field}");
        assert_eq!(page.attr("input#name", "value").as_deref(), Some("bob"));
        assert!(!page.body.contains(password), "a password was drawn back");
        assert_eq!(page.attr("input#password", "value"), None);
    }
    assert!(
        store::admins::by_name(&app.db, "bob")
            .await
            .unwrap()
            .is_none()
    );
    let (_, page) = spend_link(&app, &path, NEW_PASSWORD, NEW_PASSWORD).await;
    assert_eq!(page.status, 303, "the link still works after refused tries");

    // One's own password: a wrong current one changes nothing, and shows no password.
    let page = submit(
        &ada,
        &app,
        "/admin/admins/password",
        &[
            ("current", "not my password"),
            ("password", NEW_PASSWORD),
            ("confirm", NEW_PASSWORD),
        ],
    )
    .await;
    assert_eq!(page.status, 422);
    assert!(page.has("#current-error"));
    assert!(!page.body.contains(NEW_PASSWORD) && !page.body.contains("not my password"));
    signed_in_as(&app, ADMIN, PASSWORD).await;
}

#[tokio::test]
async fn changing_ones_password_needs_the_current_one_and_signs_out_only_the_other_sessions() {
    let app = spawn(Flood::Memory).await;
    let here = app.admin_client().await;
    let elsewhere = sign_in(&app).await;
    let page = submit(
        &here,
        &app,
        "/admin/admins/password",
        &[
            ("current", PASSWORD),
            ("password", NEW_PASSWORD),
            ("confirm", NEW_PASSWORD),
        ],
    )
    .await;
    assert_eq!(page.status, 303, "{}", page.body);
    assert!(still_signed_in(&app, &here).await, "this session goes on");
    assert!(
        !still_signed_in(&app, &elsewhere).await,
        "the other one is signed out"
    );
    let (_, old) = attempt(&app, ADMIN, PASSWORD).await;
    assert_eq!(old.status, 401);
    signed_in_as(&app, ADMIN, NEW_PASSWORD).await;
    assert!(!app_logs(&app).contains(NEW_PASSWORD));
}

#[tokio::test]
async fn a_reset_link_sets_a_password_and_signs_the_target_out() {
    let app = spawn(Flood::Memory).await;
    let ada = app.admin_client().await;
    let bob_id = other_admin(&app, "bob", "bob's old password").await;
    let bob = signed_in_as(&app, "bob", "bob's old password").await;
    let made = submit(&ada, &app, &format!("/admin/admins/{bob_id}/reset"), &[]).await;
    assert_eq!(made.status, 303);
    let path = link_shown(&ada, &app).await;
    assert!(path.starts_with("/setup/reset/"), "{path}");
    assert!(
        still_signed_in(&app, &bob).await,
        "making the link signs nobody out"
    );

    let (bob_again, done) = spend_link(&app, &path, NEW_PASSWORD, NEW_PASSWORD).await;
    assert_eq!(done.status, 303);
    assert!(
        !still_signed_in(&app, &bob).await,
        "the old session is signed out"
    );
    assert!(still_signed_in(&app, &bob_again).await);
    assert!(
        still_signed_in(&app, &ada).await,
        "another admin's session is not touched"
    );
    assert_eq!(
        attempt(&app, "bob", "bob's old password").await.1.status,
        401
    );
    signed_in_as(&app, "bob", NEW_PASSWORD).await;
    assert_eq!(
        get(&app.client(), &app, &path).await.status,
        404,
        "used twice"
    );
    let token = path.trim_start_matches("/setup/reset/");
    assert!(!app_logs(&app).contains(token));
}

#[tokio::test]
async fn a_disabled_admin_cannot_sign_in_and_their_session_stops() {
    let app = spawn(Flood::Memory).await;
    let ada = app.admin_client().await;
    let bob_id = other_admin(&app, "bob", "bob's password").await;
    let bob = signed_in_as(&app, "bob", "bob's password").await;
    let path = format!("/admin/admins/{bob_id}/disable");
    let confirm = get(&ada, &app, &path).await;
    assert_eq!(confirm.status, 200);
    assert!(confirm.has("button.danger"));
    let done = post(&ada, &app, &path, &[("csrf", confirm.csrf().as_str())]).await;
    assert_eq!(done.status, 303);
    assert!(
        !still_signed_in(&app, &bob).await,
        "the session stops at once"
    );

    // The sign-in says what it says of a wrong password, or of a name nobody has.
    let (_, disabled) = attempt(&app, "bob", "bob's password").await;
    let (_, wrong) = attempt(&app, ADMIN, "a wrong password").await;
    let (_, nobody) = attempt(&app, "nobody", "bob's password").await;
    assert_eq!(disabled.status, 401);
    assert_eq!(disabled.first(".errors"), wrong.first(".errors"));
    assert_eq!(disabled.first(".errors"), nobody.first(".errors"));
    assert!(!disabled.first(".errors").is_empty());

    let list = get(&ada, &app, "/admin/admins").await;
    assert_eq!(row(&list, "bob", ".admin-state"), "Disabled");
    assert_eq!(row(&list, ADMIN, ".admin-state"), "Active");

    let enabled = submit(&ada, &app, &format!("/admin/admins/{bob_id}/enable"), &[]).await;
    assert_eq!(enabled.status, 303);
    signed_in_as(&app, "bob", "bob's password").await;
}

#[tokio::test]
async fn the_last_active_admin_can_be_neither_disabled_nor_removed() {
    let app = spawn(Flood::Memory).await;
    let ada = app.admin_client().await;
    let id = store::admins::by_name(&app.db, ADMIN)
        .await
        .unwrap()
        .unwrap()
        .id;
    let bob_id = other_admin(&app, "bob", "bob's password").await;
    // Bob disabled: ada is the only active one.
    let page = get(&ada, &app, &format!("/admin/admins/{bob_id}/disable")).await;
    post(
        &ada,
        &app,
        &format!("/admin/admins/{bob_id}/disable"),
        &[("csrf", page.csrf().as_str())],
    )
    .await;
    // The list offers neither to the last active one (the disabled one can still go).
    let list = get(&ada, &app, "/admin/admins").await;
    assert!(!list.has(&format!("a[href='/admin/admins/{id}/disable']")));
    assert!(!list.has(&format!("a[href='/admin/admins/{id}/remove']")));
    assert!(list.has(&format!("a[href='/admin/admins/{bob_id}/remove']")));
    for action in ["disable", "remove"] {
        let path = format!("/admin/admins/{id}/{action}");
        let page = get(&ada, &app, &path).await;
        assert_eq!(page.status, 409, "{action}");
        assert!(!page.has("button.danger"), "no button to do it");
        assert!(page.first(".errors").contains("last active administrator"));
        let refused = post(&ada, &app, &path, &[("csrf", page.csrf().as_str())]).await;
        assert_eq!(refused.status, 409, "{action}");
        assert!(
            refused
                .first(".errors")
                .contains("last active administrator")
        );
    }
    let me = store::admins::by_id(&app.db, id).await.unwrap().unwrap();
    assert!(me.disabled_at.is_none());
    assert!(still_signed_in(&app, &ada).await);
    // The disabled one may go.
    let page = get(&ada, &app, &format!("/admin/admins/{bob_id}/remove")).await;
    assert_eq!(page.status, 200);
    let gone = post(
        &ada,
        &app,
        &format!("/admin/admins/{bob_id}/remove"),
        &[("csrf", page.csrf().as_str())],
    )
    .await;
    assert_eq!(gone.status, 303);
    assert!(
        store::admins::by_id(&app.db, bob_id)
            .await
            .unwrap()
            .is_none()
    );

    // And from the command line.
    let cli = run(&app, &["admin", "disable", ADMIN], None);
    assert_eq!(cli.0, 2);
    assert_eq!(
        cli.2,
        "ada is the last active administrator: the site would have no one left to manage it. Invite or enable another first.\n"
    );
    assert_eq!(run(&app, &["admin", "remove", ADMIN, "--yes"], None).0, 2);
    assert_eq!(store::admins::count(&app.db).await.unwrap(), 1);
}

#[tokio::test]
async fn unlock_clears_one_accounts_lockout_and_leaves_the_limit_and_the_others() {
    let app = spawn(Flood::Sql).await;
    let ada = app.admin_client().await;
    let bob_id = other_admin(&app, "bob", "bob's password").await;
    other_admin(&app, "carol", "carol's password").await;
    for name in ["bob", "carol"] {
        for _ in 0..5 {
            assert_eq!(attempt(&app, name, "a wrong guess").await.1.status, 401);
        }
        assert_eq!(
            attempt(&app, name, &format!("{name}'s password"))
                .await
                .1
                .status,
            429,
            "{name} is locked out"
        );
    }
    let list = get(&ada, &app, "/admin/admins").await;
    assert!(list.has("tr[data-admin=\"bob\"] .admin-lock.locked"));
    assert!(list.has("tr[data-admin=\"carol\"] .admin-lock.locked"));
    assert!(!list.has("tr[data-admin=\"ada\"] .admin-lock.locked"));

    let done = submit(&ada, &app, &format!("/admin/admins/{bob_id}/unlock"), &[]).await;
    assert_eq!(done.status, 303);
    signed_in_as(&app, "bob", "bob's password").await;
    assert_eq!(
        attempt(&app, "carol", "carol's password").await.1.status,
        429,
        "another account's lock is kept"
    );
    let list = get(&ada, &app, "/admin/admins").await;
    assert!(!list.has("tr[data-admin=\"bob\"] .admin-lock.locked"));
    assert!(list.has("tr[data-admin=\"carol\"] .admin-lock.locked"));
    // The limit is still on for bob: five more wrong guesses lock him out again.
    for _ in 0..5 {
        attempt(&app, "bob", "a wrong guess").await;
    }
    assert_eq!(attempt(&app, "bob", "bob's password").await.1.status, 429);
    // The command line unlocks too (a running server reads the account's keys each attempt).
    let (code, _, err) = run(&app, &["admin", "unlock", "bob"], None);
    assert_eq!(
        (code, err.as_str()),
        (
            0,
            "Administrator bob unlocked: their failed sign-ins count afresh.\n"
        )
    );
    signed_in_as(&app, "bob", "bob's password").await;
}

/// Runs the binary on the app's database: exit code, standard output, standard error.
pub(crate) fn run(app: &TestApp, args: &[&str], stdin: Option<&str>) -> (i32, String, String) {
    run_in(app, args, stdin, "en")
}

pub(crate) fn run_in(
    app: &TestApp,
    args: &[&str],
    stdin: Option<&str>,
    lang: &str,
) -> (i32, String, String) {
    let mut child = Command::new(BIN)
        .args(args)
        .env_clear()
        .env("ORCHESTRA_DATABASE_URL", &app.database.url)
        .env("ORCHESTRA_LANG", lang)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start orchestra");
    if let Some(input) = stdin {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().expect("exited"),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[tokio::test]
async fn the_command_line_lists_and_manages_administrators() {
    let app = spawn(Flood::Memory).await;
    app.create_admin().await;
    other_admin(&app, "bob", "bob's password").await;
    let (code, out, _) = run(&app, &["admin", "list"], None);
    assert_eq!(code, 0);
    let lines: Vec<Vec<&str>> = out.lines().map(|l| l.split('\t').collect()).collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert_eq!(
        (lines[0][1], lines[0][2], lines[0][4]),
        (ADMIN, "active", "never")
    );
    assert_eq!((lines[1][1], lines[1][2]), ("bob", "active"));

    let bob = signed_in_as(&app, "bob", "bob's password").await;
    let (code, _, err) = run(
        &app,
        &["admin", "password", "bob"],
        Some(&format!("{NEW_PASSWORD}\n")),
    );
    assert_eq!(
        (code, err.as_str()),
        (0, "Password of bob set; their sessions are signed out.\n")
    );
    assert!(!still_signed_in(&app, &bob).await);
    let bob = signed_in_as(&app, "bob", NEW_PASSWORD).await;
    let (code, _, err) = run(&app, &["admin", "password", "bob"], Some("short\n"));
    assert_eq!((code, err.as_str()), (2, "Use at least 10 characters.\n"));
    let (code, _, err) = run_in(
        &app,
        &["admin", "password", "nobody"],
        Some("long enough pw\n"),
        "fr",
    );
    assert_eq!(
        (code, err.as_str()),
        (2, "Aucun administrateur ne s’appelle nobody.\n")
    );

    let (code, _, err) = run(&app, &["admin", "disable", "bob"], None);
    assert_eq!(
        (code, err.as_str()),
        (
            0,
            "Administrator bob disabled; their sessions are signed out.\n"
        )
    );
    assert!(!still_signed_in(&app, &bob).await);
    let (_, out, _) = run(&app, &["admin", "list"], None);
    assert!(
        out.lines()
            .any(|l| l.split('\t').nth(2) == Some("disabled") && l.contains("\tbob\t"))
    );
    assert_eq!(attempt(&app, "bob", NEW_PASSWORD).await.1.status, 401);
    let (code, _, _) = run(&app, &["admin", "reset", "bob"], None);
    assert_eq!(code, 2, "no reset link for a disabled administrator");
    let (code, _, err) = run(&app, &["admin", "enable", "bob"], None);
    assert_eq!((code, err.as_str()), (0, "Administrator bob enabled.\n"));
    signed_in_as(&app, "bob", NEW_PASSWORD).await;

    let (code, url, err) = run(&app, &["admin", "reset", "bob"], None);
    assert_eq!((code, err.as_str()), (0, ""));
    assert_eq!(url.lines().count(), 1);
    let (_, done) = spend_link(
        &app,
        &path_of(url.trim()),
        "reset from the cli",
        "reset from the cli",
    )
    .await;
    assert_eq!(done.status, 303);
    signed_in_as(&app, "bob", "reset from the cli").await;

    let (code, _, err) = run(&app, &["admin", "unlock", "nobody"], None);
    assert_eq!(
        (code, err.as_str()),
        (2, "No administrator is named nobody.\n")
    );
    // Removing asks first: without --yes and without a terminal nothing is done.
    let (code, _, _) = run(&app, &["admin", "remove", "bob"], None);
    assert_eq!(code, 2);
    assert!(
        store::admins::by_name(&app.db, "bob")
            .await
            .unwrap()
            .is_some()
    );
    let (code, _, err) = run(&app, &["admin", "remove", "bob", "--yes"], None);
    assert_eq!((code, err.as_str()), (0, "Administrator bob removed.\n"));
    assert!(
        store::admins::by_name(&app.db, "bob")
            .await
            .unwrap()
            .is_none()
    );
    assert_eq!(
        attempt(&app, "bob", "reset from the cli").await.1.status,
        401
    );
}

#[tokio::test]
async fn strangers_forged_posts_and_bad_links_are_refused() {
    let app = spawn(Flood::Memory).await;
    app.create_admin().await;
    let id = store::admins::by_name(&app.db, ADMIN)
        .await
        .unwrap()
        .unwrap()
        .id;
    let stranger = app.client();
    for path in [
        "/admin/admins".to_owned(),
        "/admin/admins/password".to_owned(),
        format!("/admin/admins/{id}/disable"),
        format!("/admin/admins/{id}/remove"),
    ] {
        let page = get(&stranger, &app, &path).await;
        assert_eq!(page.status, 303, "{path}");
        assert!(
            page.location().starts_with("/admin/login?destination="),
            "{path}"
        );
    }
    // A stranger's post with a valid CSRF token of its own is sent to sign in; nothing changes.
    let csrf = get(&stranger, &app, "/admin/login").await.csrf();
    for path in [
        "/admin/admins".to_owned(),
        "/admin/admins/password".to_owned(),
        format!("/admin/admins/{id}/reset"),
        format!("/admin/admins/{id}/disable"),
        format!("/admin/admins/{id}/enable"),
        format!("/admin/admins/{id}/remove"),
        format!("/admin/admins/{id}/unlock"),
    ] {
        let page = post(
            &stranger,
            &app,
            &path,
            &[
                ("csrf", csrf.as_str()),
                ("name", "mallory"),
                ("current", PASSWORD),
                ("password", "mallory's password"),
                ("confirm", "mallory's password"),
            ],
        )
        .await;
        assert_eq!(page.status, 303, "{path}");
        assert!(page.location().starts_with("/admin/login"), "{path}");
    }
    // A signed-in administrator's browser, made to post from another site: refused, nothing done.
    let ada = sign_in(&app).await;
    for (path, form) in [
        ("/admin/admins".to_owned(), vec![("name", "mallory")]),
        (format!("/admin/admins/{id}/reset"), vec![]),
        (
            "/admin/admins/password".to_owned(),
            vec![
                ("current", PASSWORD),
                ("password", "mallory's password"),
                ("confirm", "mallory's password"),
            ],
        ),
    ] {
        let page = read(
            ada.post(app.url(&path))
                .header("sec-fetch-site", "cross-site")
                .form(&form),
        )
        .await;
        assert_eq!(page.status, 403, "{path}");
    }
    let other = other_admin(&app, "bob", "bob's password").await;
    for action in ["disable", "remove"] {
        let path = format!("/admin/admins/{other}/{action}");
        let page = read(
            ada.post(app.url(&path))
                .header("sec-fetch-site", "cross-site"),
        )
        .await;
        assert_eq!(page.status, 403, "{path}");
    }
    assert_eq!(store::admins::count(&app.db).await.unwrap(), 2);
    let bob = store::admins::by_id(&app.db, other).await.unwrap().unwrap();
    assert!(bob.disabled_at.is_none());
    signed_in_as(&app, ADMIN, PASSWORD).await;
    let rows = waiting_links(&app).await;
    assert_eq!(rows, 0);

    // Bad links: the plain refusal, never a 500, for a page or a post.
    let csrf = get(&stranger, &app, "/admin/login").await.csrf();
    for path in [
        "/setup/invite/nonsense",
        "/setup/reset/nonsense",
        &format!("/setup/invite/{}", "a".repeat(64)),
        &format!("/setup/reset/{}", "0".repeat(64)),
        "/setup/reset/%00",
    ] {
        assert_eq!(get(&stranger, &app, path).await.status, 404, "{path}");
        let page = post(
            &stranger,
            &app,
            path,
            &[
                ("csrf", csrf.as_str()),
                ("password", "long enough pw"),
                ("confirm", "long enough pw"),
            ],
        )
        .await;
        assert_eq!(page.status, 404, "{path}");
    }
    // An invitation's token does not open the reset page, nor the other way round.
    let made = submit(&ada, &app, "/admin/admins", &[("name", "carol")]).await;
    assert_eq!(made.status, 303);
    let invite = link_shown(&ada, &app).await;
    let token = invite.trim_start_matches("/setup/invite/");
    assert_eq!(
        get(&stranger, &app, &format!("/setup/reset/{token}"))
            .await
            .status,
        404
    );
    assert_eq!(
        get(&stranger, &app, &format!("/setup/{token}"))
            .await
            .status,
        404
    );
    // A kind of link that does not exist is the same plain page as a bad link, read or
    // posted, and its body is held to the sign-in forms' small cap before any check.
    let bad = get(&stranger, &app, "/setup/reset/nope").await;
    for path in [
        format!("/setup/admin/{token}"),
        format!("/setup/%00/{token}"),
    ] {
        let page = get(&stranger, &app, &path).await;
        assert_eq!(
            (page.status, page.first("h1")),
            (404, bad.first("h1")),
            "{path}"
        );
    }
    let big = "x".repeat(orchestra::http::body::SIGN_IN + 1);
    let posted = stranger
        .post(app.url(&format!("/setup/admin/{token}")))
        .header("sec-fetch-site", "same-origin")
        .form(&[("password", big.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(posted.status(), 413);
    let logs = app_logs(&app);
    for secret in [token, PASSWORD, "mallory's password"] {
        assert!(
            !logs.contains(secret),
            "{secret} reached the logs: {}",
            logs.lines()
                .filter(|l| l.contains(secret))
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}

#[tokio::test]
async fn every_administrators_page_is_drawn_in_english_and_french() {
    let app = spawn(Flood::Memory).await;
    let ada = app.admin_client().await;
    let bob = other_admin(&app, "bob", "bob's password").await;
    submit(&ada, &app, "/admin/admins", &[("name", "carol")]).await;
    let invite = link_shown(&ada, &app).await;
    submit(&ada, &app, &format!("/admin/admins/{bob}/reset"), &[]).await;
    let reset = link_shown(&ada, &app).await;
    let pages = [
        (
            "/admin/admins".to_owned(),
            "Administrators",
            "Administrateurs",
        ),
        (
            "/admin/admins/password".to_owned(),
            "Change my password",
            "Changer mon mot de passe",
        ),
        (
            format!("/admin/admins/{bob}/disable"),
            "Disable bob",
            "Désactiver bob",
        ),
        (
            format!("/admin/admins/{bob}/remove"),
            "Remove bob",
            "Supprimer bob",
        ),
        (invite, "Welcome, carol", "Bienvenue, carol"),
        (
            reset,
            "New password for bob",
            "Nouveau mot de passe pour bob",
        ),
    ];
    let visitor = app.client();
    for (path, en, fr) in pages {
        let client = if path.starts_with("/setup") {
            &visitor
        } else {
            &ada
        };
        for (code, title) in [("en", en), ("fr", fr)] {
            let page = get(client, &app, &with_lang(&path, code)).await;
            assert_eq!(page.status, 200, "{path} in {code}");
            assert_eq!(page.lang(), code, "{path}");
            assert_eq!(page.first("h1"), title, "{path} in {code}");
        }
    }
    let list = get(&ada, &app, &with_lang("/admin/admins", "fr")).await;
    assert_eq!(
        list.first("nav.admin a[aria-current=page]"),
        "Administrateurs"
    );
    assert_eq!(row(&list, "bob", ".admin-state"), "Actif");
}

/// A database made before migration 9, with an administrator and a session of the old code,
/// upgrades with that administrator active and signed in, and able to sign in again.
#[tokio::test]
async fn an_administrator_made_before_the_upgrade_stays_active() {
    let database = helpers::fresh_database().await;
    let pool = helpers::schema_before(&database.url, 9).await;
    let hash = orchestra::domain::password::hash(PASSWORD).unwrap();
    sqlx::query("INSERT INTO admins (name, password_hash, created_at) VALUES ($1, $2, 1700000000)")
        .bind(ADMIN)
        .bind(&hash)
        .execute(&pool)
        .await
        .unwrap();
    sqlx::query("INSERT INTO setup_tokens (token_hash, expires) VALUES ('old', 1)")
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;
    let app = helpers::spawn_on(database, |_, clock| {
        std::sync::Arc::new(orchestra::limits::flood::MemoryFlood::new(4096, clock))
    })
    .await;
    let ada = store::admins::by_name(&app.db, ADMIN)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (ada.disabled_at, ada.auth_epoch, ada.login_epoch),
        (None, 0, 0)
    );
    let client = sign_in(&app).await;
    assert!(still_signed_in(&app, &client).await);
    let list = get(&client, &app, "/admin/admins").await;
    assert_eq!(row(&list, ADMIN, ".admin-state"), "Active");
}
