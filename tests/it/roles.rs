//! Roles: every admin route a viewer posts to answers 403 and changes nothing (the routes read
//! from the router's own source, not a sample); an editor does the work and is refused the
//! owner's routes; the last active owner is never demoted, disabled nor removed, on the web or
//! the command line; an administrator from before roles is an owner after the upgrade.

use orchestra::domain::roles::Role;
use orchestra::http::admin::roles;
use orchestra::store;
use reqwest::Client;

use crate::admins::{link_shown, other_admin, row, run, signed_in_as, spend_link, submit};
use crate::helpers::{self, ADMIN, Flood, PASSWORD, Page, TestApp, get, sign_in, spawn};

/// The router's source: the routes are read from it, so a route added there is walked too.
const ROUTER: &str = include_str!("../../src/http/admin/mod.rs");

/// The role a refusal names, as the 403 page says it in English.
const ROLE_REFUSAL: &str = "Your role does not allow this.";

/// A route of the signed-in admin area as `mod.rs` declares it, and whether it takes a post.
fn routes() -> Vec<(String, bool)> {
    let start = ROUTER.find("let signed_in").expect("the signed-in routes");
    let block = &ROUTER[start..];
    let block = &block[..block
        .find(".route_layer(")
        .expect("the layers after the routes")];
    block
        .split(".route(")
        .skip(1)
        .map(|chunk| {
            let chunk = chunk.trim_start();
            let path = if let Some(quoted) = chunk.strip_prefix('"') {
                quoted.split('"').next().unwrap().to_owned()
            } else {
                let name = chunk.split(',').next().unwrap().trim();
                match name {
                    "keys::PATH" => orchestra::http::admin::keys::PATH.to_owned(),
                    "UNKNOWN_PAGE" => orchestra::http::admin::UNKNOWN_PAGE.to_owned(),
                    "two_step::PATH" => orchestra::http::admin::two_step_gate::PATH.to_owned(),
                    "audit::PATH" => orchestra::http::admin::audit::PATH.to_owned(),
                    other => panic!("tests/it/roles.rs: say what the route {other} is"),
                }
            };
            (path, chunk.contains("post("))
        })
        .collect()
}

/// The routes a form posts to, but those of one's own account (open to every role).
fn guarded_posts() -> Vec<String> {
    routes()
        .into_iter()
        .filter(|(path, post)| *post && !roles::is_own_account(path))
        .map(|(path, _)| path)
        .collect()
}

#[test]
fn every_post_route_is_classed_and_the_table_names_only_real_routes() {
    let routes = routes();
    let posts: Vec<&String> = routes.iter().filter(|(_, p)| *p).map(|(r, _)| r).collect();
    assert!(posts.len() > 30, "too few routes read: {posts:?}");
    for path in &posts {
        assert!(
            roles::is_own_account(path) || roles::POSTS.iter().any(|(p, _)| p == path),
            "the route {path} is in src/http/admin/mod.rs but not in roles::POSTS: say which role \
             may post to it"
        );
    }
    for (path, _) in roles::POSTS {
        assert!(
            posts.iter().any(|p| p == path),
            "roles::POSTS names {path}, which the router does not post to"
        );
    }
    // The forms every role may use are one's own: signing out, one's password, one's account.
    for path in posts.iter().filter(|p| roles::is_own_account(p)) {
        assert!(
            ["/admin/logout", "/admin/admins/password"].contains(&path.as_str())
                || path.starts_with("/admin/account"),
            "{path} is open to every role"
        );
    }
    assert!(roles::is_own_account("/admin/account/sessions"));
    assert!(!roles::is_own_account("/admin/accounts"));
    assert!(!roles::is_own_account("/admin/admins/password-of-another"));
    assert_eq!(roles::needed("/admin/a-form-nobody-classed"), Role::Owner);
}

/// The ids a walk puts in the routes' paths: every kind of thing one exists of.
struct Things {
    workflow: i64,
    instance: i64,
    link: i64,
    admin: i64,
    webhook: i64,
    token: String,
}

/// An owner (the test administrator), another owner, an instance with a link, an endpoint and
/// an API token: something for every route to change.
async fn seeded(app: &TestApp) -> Things {
    app.create_admin().await;
    let admin = other_admin(app, "olga", "olga's password").await;
    let workflow = store::workflows::by_name(&app.db, "contract_review")
        .await
        .unwrap()
        .expect("a seeded workflow")
        .id;
    let instance = app.start("contract_review", "Lease renewal").await;
    app.link(instance, None).await;
    let keys = store::keys::load_or_create(&app.db).await.unwrap();
    let webhook = orchestra::domain::delivery::endpoints::create(
        &app.db,
        &keys,
        "http://127.0.0.1:9/hook",
        None,
        true,
    )
    .await
    .map_err(|_| "refused")
    .unwrap()
    .id;
    orchestra::domain::api::create_token(&app.db, &keys, "crm", None, None)
        .await
        .unwrap()
        .unwrap();
    let link = fingerprint_rows(app, "SELECT CAST(MAX(id) AS TEXT) FROM links").await[0]
        .parse()
        .unwrap();
    Things {
        workflow,
        instance,
        link,
        admin,
        webhook,
        token: "crm".into(),
    }
}

/// A route's path with the ids of `things` in it.
fn filled(route: &str, t: &Things) -> String {
    let id = if route.starts_with("/admin/workflows/") {
        t.workflow
    } else if route.starts_with("/admin/instances/") {
        t.instance
    } else if route.starts_with("/admin/admins/") {
        t.admin
    } else {
        t.webhook
    };
    route
        .replace("{id}", &id.to_string())
        .replace("{number}", "1")
        .replace("{link}", &t.link.to_string())
        .replace("{delivery}", "1")
        .replace("{name}", &t.token)
}

/// What a form of any of the routes might carry: enough for a handler that ran to change
/// something.
const FIELDS: &[(&str, &str)] = &[
    ("name", "mallory"),
    ("role", "owner"),
    ("url", "http://127.0.0.1:9/other"),
    ("event", "instance.ended"),
    ("participant", "tenant"),
    ("ttl", "1h"),
    ("site_name", "Changed"),
    ("label", "Changed"),
    ("resend", "1"),
    ("confirm", "contract_review"),
    ("reason", "changed"),
    ("email", "mallory@example.com"),
    ("ability", "read"),
];

async fn fingerprint_rows(app: &TestApp, sql: &str) -> Vec<String> {
    sqlx::any::install_default_drivers();
    let (_, url) = store::normalize_url(&app.database.url).unwrap();
    let pool = sqlx::AnyPool::connect(&url).await.unwrap();
    let rows = sqlx::query_scalar::<_, String>(sql)
        .fetch_all(&pool)
        .await
        .unwrap();
    pool.close().await;
    rows
}

/// Everything an admin form can change, as text: administrators, their links, settings, keys,
/// workflows, instances, links, endpoints, tokens and what goes out.
async fn fingerprint(app: &TestApp) -> Vec<String> {
    let t = |c: &str| format!("COALESCE(CAST({c} AS TEXT), '-')");
    let queries = [
        format!(
            "SELECT name || {} || role || {} || {} FROM admins ORDER BY id",
            t("disabled_at"),
            t("auth_epoch"),
            t("login_epoch")
        ),
        "SELECT purpose || COALESCE(name, '-') FROM setup_tokens ORDER BY token_hash".into(),
        "SELECT name || '=' || value FROM settings ORDER BY name".into(),
        format!("SELECT {} || private_key FROM site_keys", t("generation")),
        format!(
            "SELECT name || label || {} || {} FROM workflows ORDER BY id",
            t("updated_at"),
            t("deleted_at")
        ),
        format!(
            "SELECT {} || state || {} || {} FROM instances ORDER BY id",
            t("id"),
            t("step_index"),
            t("updated_at")
        ),
        format!(
            "SELECT {} || {} || {} FROM links ORDER BY id",
            t("id"),
            t("revoked_at"),
            t("expires")
        ),
        format!(
            "SELECT url || {} || {} FROM webhook_endpoints ORDER BY id",
            t("enabled"),
            t("failures")
        ),
        format!(
            "SELECT name || {} FROM api_tokens ORDER BY id",
            t("revoked_at")
        ),
    ];
    let mut all = Vec::new();
    for q in queries {
        all.extend(fingerprint_rows(app, &q).await);
    }
    for table in [
        "workflow_versions",
        "history",
        "contacts",
        "mails",
        "outbox",
        "webhook_deliveries",
    ] {
        let sql = format!("SELECT CAST(COUNT(*) AS TEXT) FROM {table}");
        all.push(format!("{table}: {:?}", fingerprint_rows(app, &sql).await));
    }
    all
}

/// Posts to a route as `client`, with a CSRF token of its own session and `FIELDS`.
async fn post_as(client: &Client, app: &TestApp, path: &str) -> Page {
    submit(client, app, path, FIELDS).await
}

fn refused_for_role(page: &Page) -> bool {
    page.status == 403 && page.body.contains(ROLE_REFUSAL)
}

/// Makes an administrator of a role and signs them in.
async fn signed_in_with(app: &TestApp, name: &str, role: Role) -> Client {
    let id = other_admin(app, name, "their own password").await;
    store::admins::set_role(&app.db, id, role.as_str())
        .await
        .unwrap();
    signed_in_as(app, name, "their own password").await
}

#[tokio::test]
async fn a_viewer_posting_to_any_admin_route_is_refused_and_changes_nothing() {
    let app = spawn(Flood::Memory).await;
    let things = seeded(&app).await;
    let viewer = signed_in_with(&app, "vera", Role::Viewer).await;
    let before = fingerprint(&app).await;
    let posts = guarded_posts();
    for route in &posts {
        let path = filled(route, &things);
        let page = post_as(&viewer, &app, &path).await;
        assert!(
            refused_for_role(&page),
            "a viewer's post to {path} got {}: {}",
            page.status,
            page.body
        );
        assert!(page.has("nav.admin"), "the 403 keeps the navigation");
    }
    assert_eq!(
        fingerprint(&app).await,
        before,
        "a viewer's posts changed something"
    );
    let in_french = post_as(&viewer, &app, "/admin/webhooks?lang=fr").await;
    assert_eq!(in_french.status, 403);
    assert!(
        in_french.body.contains("Votre rôle ne le permet pas."),
        "{}",
        in_french.body
    );
    // Their own account stays theirs: a new password, and signing out.
    let changed = post_as_with(
        &viewer,
        &app,
        "/admin/admins/password",
        &[
            ("current", "their own password"),
            ("password", "a viewer's new password"),
            ("confirm", "a viewer's new password"),
        ],
    )
    .await;
    assert_eq!(changed.status, 303, "{}", changed.body);
    let out = post_as_with(&viewer, &app, "/admin/logout", &[]).await;
    assert_eq!(out.status, 303);
    signed_in_as(&app, "vera", "a viewer's new password").await;
}

async fn post_as_with(client: &Client, app: &TestApp, path: &str, form: &[(&str, &str)]) -> Page {
    submit(client, app, path, form).await
}

#[tokio::test]
async fn a_viewer_reads_the_pages_without_their_forms_or_secrets() {
    let app = spawn(Flood::Memory).await;
    let things = seeded(&app).await;
    let viewer = signed_in_with(&app, "vera", Role::Viewer).await;
    let owner = sign_in(&app).await;
    for (path, form) in [
        ("/admin/admins", "select[name=role]"),
        ("/admin/webhooks", "form[action=\"/admin/webhooks\"]"),
        ("/admin/config/api", "input[name=rate]"),
        ("/admin/config/orchestra", "form.stack button[type=submit]"),
        (
            &format!("/admin/instances/{}", things.instance) as &str,
            "select[name=participant]",
        ),
        ("/admin/reports/status/keys", "#rotate-keys"),
        ("/admin/reports/status", "#rotate-keys-link"),
    ] {
        let seen = get(&viewer, &app, path).await;
        assert_eq!(seen.status, 200, "a viewer reads {path}");
        assert!(!seen.has(form), "a viewer sees {form} on {path}");
        assert!(
            get(&owner, &app, path).await.has(form),
            "the owner sees {form} on {path}"
        );
    }
}

#[tokio::test]
async fn an_editor_does_the_work_and_is_refused_the_owners_routes() {
    let app = spawn(Flood::Memory).await;
    let things = seeded(&app).await;
    app.state
        .webhooks_allow_private
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let editor = signed_in_with(&app, "eddie", Role::Editor).await;
    let before = fingerprint(&app).await;
    let (owners, editors): (Vec<String>, Vec<String>) = guarded_posts()
        .into_iter()
        .partition(|r| roles::needed(r) == Role::Owner);
    assert!(owners.len() >= 10 && editors.len() >= 10);
    for route in &owners {
        let path = filled(route, &things);
        let page = post_as(&editor, &app, &path).await;
        assert!(
            refused_for_role(&page),
            "an editor's post to {path} got {}",
            page.status
        );
    }
    assert_eq!(
        fingerprint(&app).await,
        before,
        "an editor changed an owner's thing"
    );
    // What is theirs: a new endpoint (its secret shown to them), a link issued; every other
    // route of theirs answers as for an owner, never the role's 403.
    let made = post_as_with(
        &editor,
        &app,
        "/admin/webhooks",
        &[
            ("url", "http://127.0.0.1:9/theirs"),
            ("event", "instance.ended"),
        ],
    )
    .await;
    assert_eq!(made.status, 303, "{}", made.body);
    assert!(
        get(&editor, &app, "/admin/webhooks")
            .await
            .has("#webhook-secret")
    );
    for route in &editors {
        let path = filled(route, &things);
        let page = post_as(&editor, &app, &path).await;
        assert!(!refused_for_role(&page), "an editor was refused {path}");
    }
    assert_ne!(fingerprint(&app).await, before);
}

async fn role_of(app: &TestApp, name: &str) -> String {
    store::admins::by_name(&app.db, name)
        .await
        .unwrap()
        .expect("the administrator")
        .role
}

#[tokio::test]
async fn the_last_active_owner_is_never_demoted_disabled_nor_removed_on_the_web() {
    let app = spawn(Flood::Memory).await;
    let ada = app.admin_client().await;
    let me = store::admins::by_name(&app.db, ADMIN)
        .await
        .unwrap()
        .unwrap()
        .id;
    // Another owner, but disabled: not one who could manage the site.
    let olga = other_admin(&app, "olga", "olga's password").await;
    store::admins::disable(&app.db, olga, 1).await.unwrap();
    let bob = other_admin(&app, "bob", "bob's password").await;
    store::admins::set_role(&app.db, bob, "editor")
        .await
        .unwrap();

    let demoted = submit(
        &ada,
        &app,
        &format!("/admin/admins/{me}/role"),
        &[("role", "viewer")],
    )
    .await;
    assert_eq!(demoted.status, 303);
    let list = get(&ada, &app, "/admin/admins").await;
    assert!(
        list.body.contains("That is the last active owner"),
        "{}",
        list.body
    );
    for action in ["disable", "remove"] {
        let page = submit(&ada, &app, &format!("/admin/admins/{me}/{action}"), &[]).await;
        assert_eq!(page.status, 409, "{action}");
        assert!(
            page.body.contains("is the last active owner"),
            "{action}: {}",
            page.body
        );
        // The page before it says so too.
        let form = get(&ada, &app, &format!("/admin/admins/{me}/{action}")).await;
        assert!(form.body.contains("is the last active owner"), "{action}");
    }
    assert_eq!(role_of(&app, ADMIN).await, "owner");
    assert!(
        store::admins::by_id(&app.db, me)
            .await
            .unwrap()
            .unwrap()
            .disabled_at
            .is_none()
    );
    // The page offers neither for the last owner.
    assert!(!list.has(&format!("a[href=\"/admin/admins/{me}/disable\"]")));

    // With another active owner, the first may step down, and is then a viewer.
    let promoted = submit(
        &ada,
        &app,
        &format!("/admin/admins/{bob}/role"),
        &[("role", "owner")],
    )
    .await;
    assert_eq!(promoted.status, 303);
    assert_eq!(role_of(&app, "bob").await, "owner");
    assert_eq!(
        row(
            &get(&ada, &app, "/admin/admins").await,
            "bob",
            ".admin-role select option[selected]"
        ),
        "Owner"
    );
    let down = submit(
        &ada,
        &app,
        &format!("/admin/admins/{me}/role"),
        &[("role", "viewer")],
    )
    .await;
    assert_eq!(down.status, 303);
    assert_eq!(role_of(&app, ADMIN).await, "viewer");
    let page = submit(&ada, &app, &format!("/admin/admins/{bob}/disable"), &[]).await;
    assert!(refused_for_role(&page), "a viewer now: {}", page.status);
    let bad = submit(
        &signed_in_as(&app, "bob", "bob's password").await,
        &app,
        &format!("/admin/admins/{me}/role"),
        &[("role", "king")],
    )
    .await;
    assert_eq!(bad.status, 400);
}

#[tokio::test]
async fn two_owners_demoting_each_other_at_once_leave_one() {
    let app = spawn(Flood::Memory).await;
    app.create_admin().await;
    let ada = store::admins::by_name(&app.db, ADMIN)
        .await
        .unwrap()
        .unwrap()
        .id;
    let bob = other_admin(&app, "bob", "bob's password").await;
    let (a, b) = tokio::join!(
        store::admins::set_role(&app.db, ada, "viewer"),
        store::admins::set_role(&app.db, bob, "editor"),
    );
    let mut outcomes = [a.unwrap(), b.unwrap()];
    outcomes.sort_by_key(|o| format!("{o:?}"));
    assert_eq!(
        outcomes,
        [
            store::admins::Outcome::Done,
            store::admins::Outcome::LastOwner
        ]
    );
    let (c, d) = tokio::join!(
        store::admins::disable(&app.db, ada, 1),
        store::admins::remove(&app.db, bob),
    );
    let left = [c.unwrap(), d.unwrap()];
    assert!(
        left.contains(&store::admins::Outcome::LastOwner)
            || left.contains(&store::admins::Outcome::LastActive),
        "{left:?}"
    );
    let owners = store::admins::list(&app.db)
        .await
        .unwrap()
        .into_iter()
        .filter(|a| a.role == "owner" && a.disabled_at.is_none())
        .count();
    assert_eq!(owners, 1);
}

#[tokio::test]
async fn the_command_line_gives_roles_and_keeps_an_owner() {
    let app = spawn(Flood::Memory).await;
    app.create_admin().await;
    // Another active administrator, but no owner: what refuses is the last owner's rule.
    let bob = other_admin(&app, "bob", "bob's password").await;
    store::admins::set_role(&app.db, bob, "editor")
        .await
        .unwrap();
    let (code, _, err) = run(&app, &["admin", "role", ADMIN, "viewer"], None);
    assert_eq!(
        (code, err.trim()),
        (
            2,
            "ada is the last active owner: the site would have no one left to manage its administrators and keys. Make another administrator an owner first."
        )
    );
    for args in [
        &["admin", "disable", ADMIN][..],
        &["admin", "remove", ADMIN, "--yes"],
    ] {
        let (code, _, err) = run(&app, args, None);
        assert_eq!(code, 2, "{args:?}");
        assert!(err.contains("last active owner"), "{args:?}: {err}");
    }
    let (code, _, err) =
        crate::admins::run_in(&app, &["admin", "role", ADMIN, "editor"], None, "fr");
    assert_eq!(code, 2);
    assert!(err.contains("dernier propriétaire actif"), "{err}");

    let (code, _, err) = run(
        &app,
        &["admin", "create", "carl", "--role", "king"],
        Some("a long password\n"),
    );
    assert_eq!(
        (code, err.trim()),
        (2, "Unknown role king: give owner, editor or viewer.")
    );
    let (code, _, _) = run(
        &app,
        &["admin", "create", "carl", "--role", "editor"],
        Some("a long password\n"),
    );
    assert_eq!(code, 0);
    assert_eq!(role_of(&app, "carl").await, "editor");
    let (code, _, _) = run(
        &app,
        &["admin", "create", "dora"],
        Some("a long password\n"),
    );
    assert_eq!(code, 0);
    assert_eq!(
        role_of(&app, "dora").await,
        "owner",
        "the command line makes owners by default"
    );
    let (code, _, err) = run(&app, &["admin", "role", ADMIN, "viewer"], None);
    assert_eq!((code, err.trim()), (0, "Administrator ada is now viewer."));
    assert_eq!(role_of(&app, ADMIN).await, "viewer");
    let (_, out, _) = run(&app, &["admin", "list"], None);
    let roles: Vec<(String, String)> = out
        .lines()
        .map(|l| {
            let cells: Vec<&str> = l.split('\t').collect();
            (cells[1].to_owned(), cells[6].to_owned())
        })
        .collect();
    assert_eq!(
        roles,
        [
            (ADMIN.to_owned(), "viewer".to_owned()),
            ("bob".into(), "editor".into()),
            ("carl".into(), "editor".into()),
            ("dora".into(), "owner".into())
        ]
    );
}

#[tokio::test]
async fn an_invitation_gives_the_role_it_was_made_with() {
    let app = spawn(Flood::Memory).await;
    let ada = app.admin_client().await;
    let made = submit(
        &ada,
        &app,
        "/admin/admins",
        &[("name", "eve"), ("role", "editor")],
    )
    .await;
    assert_eq!(made.status, 303);
    let path = link_shown(&ada, &app).await;
    let (_, answer) = spend_link(&app, &path, "eve's long password", "eve's long password").await;
    assert!(answer.status < 400, "{}", answer.body);
    assert_eq!(role_of(&app, "eve").await, "editor");
    let eve = signed_in_as(&app, "eve", "eve's long password").await;
    let page = submit(&eve, &app, "/admin/admins", &[("name", "frank")]).await;
    assert!(refused_for_role(&page));
    // An invitation without a role, as the form sent before roles, gives an owner.
    let made = submit(&ada, &app, "/admin/admins", &[("name", "gus")]).await;
    assert_eq!(made.status, 303);
    let path = link_shown(&ada, &app).await;
    spend_link(&app, &path, "gus's long password", "gus's long password").await;
    assert_eq!(role_of(&app, "gus").await, "owner");
}

/// A database made before roles, with an administrator of the old code, upgrades with that
/// administrator an owner who signs in and does what only an owner does.
#[tokio::test]
async fn an_administrator_from_before_roles_is_an_owner_after_the_upgrade() {
    let database = helpers::fresh_database().await;
    let pool = helpers::schema_before(&database.url, 29).await;
    let hash = orchestra::domain::password::hash(PASSWORD).unwrap();
    sqlx::query("INSERT INTO admins (name, password_hash, created_at) VALUES ($1, $2, 1700000000)")
        .bind(ADMIN)
        .bind(&hash)
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;
    let app = helpers::spawn_on(database, |_, clock| {
        std::sync::Arc::new(orchestra::limits::flood::MemoryFlood::new(4096, clock))
    })
    .await;
    assert_eq!(role_of(&app, ADMIN).await, "owner");
    let ada = sign_in(&app).await;
    let list = get(&ada, &app, "/admin/admins").await;
    assert_eq!(
        row(&list, ADMIN, ".admin-role select option[selected]"),
        "Owner"
    );
    let made = submit(
        &ada,
        &app,
        "/admin/admins",
        &[("name", "bob"), ("role", "viewer")],
    )
    .await;
    assert_eq!(made.status, 303);
    let saved = submit(
        &ada,
        &app,
        "/admin/config/orchestra",
        &[("site_name", "Upgraded")],
    )
    .await;
    assert!(
        !refused_for_role(&saved) && saved.status < 500,
        "{}",
        saved.status
    );
}
