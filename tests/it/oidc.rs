//! OpenID Connect sign-in against a real, certified OpenID Provider: panva's `oidc-provider`
//! (tests/oidc/provider.mjs), run by node on loopback. `.ci/run` installs it and names its
//! `node_modules` in `ORCHESTRA_OIDC_PROVIDER`; without it the tests that need it are skipped,
//! unless `ORCHESTRA_OIDC_PROVIDER_REQUIRED` is set.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};

use orchestra::domain::oidc::OidcConfig;
use reqwest::Client;

use crate::helpers::{self, ADMIN, Flood, Page, TestApp};

const CLIENT_ID: &str = "orchestra";
const CLIENT_SECRET: &str = "a-test-client-secret";
const NAME: &str = "Test Provider";

/// The provider's node process, ended with the test.
struct Provider {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<std::process::ChildStdout>,
    issuer: String,
}

impl Drop for Provider {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Provider {
    /// Starts the provider on a free loopback port; `None` (the test skipped) when it is not
    /// installed and not required.
    fn launch() -> Option<Self> {
        let modules = std::env::var_os("ORCHESTRA_OIDC_PROVIDER")
            .map(std::path::PathBuf::from)
            .or_else(|| {
                let local = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("target/oidc/node_modules");
                local.join("oidc-provider").is_dir().then_some(local)
            });
        let Some(modules) = modules.filter(|m| m.join("oidc-provider").is_dir()) else {
            assert!(
                std::env::var_os("ORCHESTRA_OIDC_PROVIDER_REQUIRED").is_none(),
                "ORCHESTRA_OIDC_PROVIDER_REQUIRED is set but no oidc-provider is installed"
            );
            eprintln!(
                "OpenID Provider test skipped: npm install --prefix target/oidc oidc-provider"
            );
            return None;
        };
        let script =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oidc/provider.mjs");
        let mut child = Command::new("node")
            .arg(script)
            .env("ORCHESTRA_OIDC_PROVIDER_MODULES", &modules)
            .env("OIDC_CLIENT_ID", CLIENT_ID)
            .env("OIDC_CLIENT_SECRET", CLIENT_SECRET)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("node runs");
        let stdin = child.stdin.take();
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut line = String::new();
        stdout
            .read_line(&mut line)
            .expect("the provider's first line");
        let issuer = line
            .strip_prefix("issuer ")
            .unwrap_or_else(|| panic!("the provider said {line:?}"))
            .trim()
            .to_owned();
        Some(Self {
            child,
            stdin,
            stdout,
            issuer,
        })
    }

    /// Registers the app's callback as the client's one redirect URI.
    fn register(&mut self, app: &TestApp) {
        let stdin = self.stdin.as_mut().expect("stdin");
        writeln!(stdin, "{}/admin/login/oidc/callback", app.base).unwrap();
        stdin.flush().unwrap();
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        assert_eq!(line.trim(), "ready");
    }

    fn config(&self) -> OidcConfig {
        OidcConfig::new(&self.issuer, CLIENT_ID, CLIENT_SECRET, Some(NAME))
    }
}

/// The app, configured for `issuer`, its base URL the one the provider sends browsers back to.
async fn app_for(config: OidcConfig) -> TestApp {
    let app = helpers::spawn_now_with(Flood::Memory, move |s| s.with_oidc(Some(config))).await;
    app.set(&[("orchestra.base_url", app.base.as_str())]).await;
    app
}

/// The provider, and the app registered with it: `None` when the provider is not installed.
async fn both() -> Option<(Provider, TestApp)> {
    let mut provider = Provider::launch()?;
    let app = app_for(provider.config()).await;
    provider.register(&app);
    Some((provider, app))
}

/// An administrator with an address, made in the store; their id.
async fn admin_with(app: &TestApp, name: &str, email: &str) -> i64 {
    let hash = orchestra::domain::password::hash(helpers::PASSWORD).unwrap();
    let id = orchestra::store::admins::create(&app.db, name, &hash)
        .await
        .unwrap()
        .expect("a new name");
    let pool = sqlx::AnyPool::connect(
        &orchestra::store::normalize_url(&app.database.url)
            .unwrap()
            .1,
    )
    .await
    .unwrap();
    sqlx::query("UPDATE admins SET email = $1 WHERE id = $2")
        .bind(email)
        .bind(id)
        .execute(&pool)
        .await
        .unwrap();
    id
}

async fn fetch(client: &Client, url: &str) -> Page {
    helpers::read(client.get(url)).await
}

/// Starts the sign-in at the app and signs `user` in at the provider; the callback URL the
/// provider sends the browser back to (not yet opened).
async fn callback_url(provider: &Provider, app: &TestApp, client: &Client, user: &str) -> String {
    let start = fetch(client, &app.url("/admin/login/oidc")).await;
    assert_eq!(start.status, 303, "{}", start.body);
    let authorize = start.location();
    assert!(authorize.starts_with(&provider.issuer), "{authorize}");
    for part in [
        "code_challenge_method=S256",
        "state=",
        "nonce=",
        "scope=openid",
    ] {
        assert!(authorize.contains(part), "{part} in {authorize}");
    }
    let at_provider = fetch(client, &authorize).await;
    assert_eq!(at_provider.status, 303, "{}", at_provider.body);
    let interaction = format!("{}{}?as={user}", provider.issuer, at_provider.location());
    let mut next = fetch(client, &interaction).await.location();
    // Back to the provider's authorization endpoint, which answers with the callback.
    for _ in 0..3 {
        if next.starts_with(&app.base) {
            return next;
        }
        let url = if next.starts_with('/') {
            format!("{}{next}", provider.issuer)
        } else {
            next
        };
        let page = fetch(client, &url).await;
        assert_eq!(page.status, 303, "{url}: {}", page.body);
        next = page.location();
    }
    panic!("the provider never sent the browser back: {next}");
}

/// What the page says for each refusal (locales/en/admin.ftl).
const NOT_FINISHED: &str = "Signing in with Test Provider did not finish.";
const NOT_AN_ADMINISTRATOR: &str = "No administrator of this site has the address";
const NOT_VERIFIED: &str = "Test Provider did not give a verified email address";

/// The sign-in page again, 401, saying `why`.
fn refused_as(page: &Page, what: &str, why: &str) {
    assert_eq!(page.status, 401, "{what}: {}", page.body);
    assert!(
        page.first(".errors").starts_with(why),
        "{what}: {}",
        page.first(".errors")
    );
    assert!(
        page.has("form[action='/admin/login']"),
        "{what}: the sign-in page"
    );
}

fn refused(page: &Page, what: &str) {
    refused_as(page, what, NOT_FINISHED);
}

async fn signed_in(app: &TestApp, client: &Client) -> bool {
    fetch(client, &app.url("/admin")).await.status == 200
}

fn with_param(url: &str, name: &str, value: Option<&str>) -> String {
    let mut parsed = url::Url::parse(url).unwrap();
    let kept: Vec<(String, String)> = parsed
        .query_pairs()
        .filter(|(k, _)| k != name)
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    {
        let mut q = parsed.query_pairs_mut();
        q.clear();
        for (k, v) in &kept {
            q.append_pair(k, v);
        }
        if let Some(v) = value {
            q.append_pair(name, v);
        }
    }
    parsed.to_string()
}

fn param(url: &str, name: &str) -> String {
    url::Url::parse(url)
        .unwrap()
        .query_pairs()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
        .unwrap_or_else(|| panic!("{name} in {url}"))
}

#[tokio::test]
async fn the_provider_signs_in_the_administrator_with_that_address() {
    let Some((provider, app)) = both().await else {
        return;
    };
    // The provider says "Ada@Example.org": addresses are compared lowercased.
    admin_with(&app, ADMIN, "ada@example.org").await;
    let client = app.client();
    let callback = callback_url(&provider, &app, &client, "ada").await;
    let answer = fetch(&client, &callback).await;
    assert_eq!(answer.status, 303, "{}", app.logs());
    assert_eq!(answer.location(), "/admin");
    let dashboard = fetch(&client, &app.url("/admin")).await;
    assert_eq!(dashboard.status, 200);
    assert!(dashboard.body.contains(ADMIN), "signed in as {ADMIN}");
    let code = param(&callback, "code");
    let logs = app.logs();
    assert!(logs.contains("administrator signed in"), "{logs}");
    assert!(!logs.contains(&code), "the code is never logged");
    // The audit log says how: through the provider, by that administrator, and once.
    let (events, _) = orchestra::store::audit::page(
        &app.db,
        &orchestra::store::audit::Filter::default(),
        None,
        100,
    )
    .await
    .unwrap();
    let sign_ins: Vec<(&str, Option<&str>)> = events
        .iter()
        .filter(|e| e.kind.starts_with("signed_in"))
        .map(|e| (e.kind.as_str(), e.actor_name.as_deref()))
        .collect();
    assert_eq!(sign_ins, [("signed_in_oidc", Some(ADMIN))]);
}

#[tokio::test]
async fn an_unknown_address_is_refused_and_no_account_is_made() {
    let Some((provider, app)) = both().await else {
        return;
    };
    admin_with(&app, ADMIN, "ada@example.org").await;
    let client = app.client();
    let callback = callback_url(&provider, &app, &client, "stranger").await;
    refused_as(
        &fetch(&client, &callback).await,
        "an unknown address",
        NOT_AN_ADMINISTRATOR,
    );
    assert!(!signed_in(&app, &client).await);
    let admins = orchestra::store::admins::list(&app.db).await.unwrap();
    assert_eq!(admins.len(), 1, "no account is made");
}

#[tokio::test]
async fn an_unverified_address_is_refused() {
    let Some((provider, app)) = both().await else {
        return;
    };
    admin_with(&app, "una", "unverified@example.org").await;
    let client = app.client();
    let callback = callback_url(&provider, &app, &client, "unverified").await;
    refused_as(
        &fetch(&client, &callback).await,
        "an unverified address",
        NOT_VERIFIED,
    );
    assert!(!signed_in(&app, &client).await);
}

#[tokio::test]
async fn a_disabled_administrator_is_refused() {
    let Some((provider, app)) = both().await else {
        return;
    };
    let id = admin_with(&app, "dora", "disabled@example.org").await;
    admin_with(&app, ADMIN, "ada@example.org").await;
    orchestra::store::admins::disable(&app.db, id, orchestra::store::now())
        .await
        .unwrap();
    let client = app.client();
    let callback = callback_url(&provider, &app, &client, "disabled").await;
    refused_as(
        &fetch(&client, &callback).await,
        "a disabled administrator",
        NOT_AN_ADMINISTRATOR,
    );
    assert!(!signed_in(&app, &client).await);
}

/// A callback the browser's own sign-in did not produce: a real code with another state or
/// none, a made-up code with the right state, a real callback opened by another browser.
#[tokio::test]
async fn forged_callbacks_are_refused() {
    let Some((provider, app)) = both().await else {
        return;
    };
    admin_with(&app, ADMIN, "ada@example.org").await;

    let client = app.client();
    let callback = callback_url(&provider, &app, &client, "ada").await;
    let wrong = with_param(&callback, "state", Some("made-up-state"));
    refused(&fetch(&client, &wrong).await, "a wrong state");
    assert!(!signed_in(&app, &client).await);

    let client = app.client();
    let callback = callback_url(&provider, &app, &client, "ada").await;
    let missing = with_param(&callback, "state", None);
    refused(&fetch(&client, &missing).await, "no state");
    assert!(!signed_in(&app, &client).await);

    let client = app.client();
    let callback = callback_url(&provider, &app, &client, "ada").await;
    let made_up = with_param(&callback, "code", Some("a-made-up-code"));
    refused(&fetch(&client, &made_up).await, "a made-up code");
    assert!(!signed_in(&app, &client).await);

    // Another browser (an attacker's, or a victim's the attacker sends it to): its session
    // started no sign-in.
    let victim = app.client();
    let callback = callback_url(&provider, &app, &app.client(), "ada").await;
    refused(
        &fetch(&victim, &callback).await,
        "another browser's callback",
    );
    assert!(!signed_in(&app, &victim).await);
}

#[tokio::test]
async fn a_replayed_callback_is_refused() {
    let Some((provider, app)) = both().await else {
        return;
    };
    admin_with(&app, ADMIN, "ada@example.org").await;
    let client = app.client();
    let callback = callback_url(&provider, &app, &client, "ada").await;
    assert_eq!(fetch(&client, &callback).await.status, 303);
    let again = fetch(&client, &callback).await;
    refused(&again, "the same callback twice");
    // And in a browser that signed out in between.
    let page = fetch(&client, &app.url("/admin")).await;
    helpers::post(&client, &app, "/admin/logout", &[("csrf", &page.csrf())]).await;
    assert!(!signed_in(&app, &client).await);
    refused(&fetch(&client, &callback).await, "after signing out");
    assert!(!signed_in(&app, &client).await);

    // A sign-in is answered once, even when the first answer was a refusal: a guessed state
    // spends the flow, and the real callback after it finds none.
    let client = app.client();
    let callback = callback_url(&provider, &app, &client, "ada").await;
    let guessed = with_param(&callback, "state", Some("a-guess"));
    refused(&fetch(&client, &guessed).await, "a guessed state");
    refused(
        &fetch(&client, &callback).await,
        "the real callback after a guess",
    );
    assert!(!signed_in(&app, &client).await);
}

/// The callback is counted per client address with every sign-in attempt.
#[tokio::test]
async fn the_callback_is_counted_by_the_sign_in_limits() {
    let Some((_provider, app)) = both().await else {
        return;
    };
    app.set(&[("login.limits.per_address", "3")]).await;
    let client = app.client();
    let forged = app.url("/admin/login/oidc/callback?code=x&state=y");
    for _ in 0..3 {
        refused(&fetch(&client, &forged).await, "a forged callback");
    }
    let held = fetch(&client, &forged).await;
    assert_eq!(held.status, 429, "{}", held.body);
}

/// Starting the flow writes a session row for a stranger: it is counted per address like a
/// sign-in attempt, so one address cannot fill the sessions table.
#[tokio::test]
async fn starting_the_flow_is_counted_by_the_sign_in_limits() {
    let Some((_provider, app)) = both().await else {
        return;
    };
    app.set(&[("login.limits.per_address", "3")]).await;
    sqlx::any::install_default_drivers();
    let (_, url) = orchestra::store::normalize_url(&app.database.url).unwrap();
    let pool = sqlx::AnyPool::connect(&url).await.unwrap();
    let rows = || async {
        sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM sessions")
            .fetch_one(&pool)
            .await
            .unwrap()
    };
    let before = rows().await;
    for _ in 0..3 {
        let started = fetch(&app.client(), &app.url("/admin/login/oidc")).await;
        assert_eq!(started.status, 303, "{}", started.body);
    }
    let held = fetch(&app.client(), &app.url("/admin/login/oidc")).await;
    assert_eq!(held.status, 429, "{}", held.body);
    assert_eq!(
        rows().await,
        before + 3,
        "one row per admitted start, none after"
    );
}

#[tokio::test]
async fn the_sign_in_page_offers_the_provider_only_when_configured() {
    let plain = helpers::spawn(Flood::Memory).await;
    let page = fetch(&plain.client(), &plain.url("/admin/login")).await;
    assert_eq!(page.status, 200);
    assert!(!page.has(".login-oidc"), "no provider, no button");
    assert_eq!(
        fetch(&plain.client(), &plain.url("/admin/login/oidc"))
            .await
            .status,
        404
    );
    assert_eq!(
        fetch(
            &plain.client(),
            &plain.url("/admin/login/oidc/callback?code=x&state=y")
        )
        .await
        .status,
        404
    );

    let app = app_for(OidcConfig::new(
        "https://id.example.org",
        CLIENT_ID,
        CLIENT_SECRET,
        Some(NAME),
    ))
    .await;
    let page = fetch(
        &app.client(),
        &app.url("/admin/login?destination=/admin/instances"),
    )
    .await;
    assert_eq!(page.first(".login-oidc a"), "Sign in with Test Provider");
    assert_eq!(
        page.attr(".login-oidc a", "href").as_deref(),
        Some("/admin/login/oidc?destination=%2Fadmin%2Finstances")
    );
    let page = fetch(&app.client(), &app.url("/admin/login?lang=fr")).await;
    assert_eq!(
        page.first(".login-oidc a"),
        "Se connecter avec Test Provider"
    );
}

/// A provider that cannot be reached is a plain message on the sign-in page, not a 500.
#[tokio::test]
async fn a_provider_that_cannot_be_reached_is_a_plain_message() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let issuer = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let app = app_for(OidcConfig::new(
        &issuer,
        CLIENT_ID,
        CLIENT_SECRET,
        Some(NAME),
    ))
    .await;
    let page = fetch(&app.client(), &app.url("/admin/login/oidc?lang=fr")).await;
    assert_eq!(page.status, 503, "{}", page.body);
    assert!(
        page.first(".errors").contains("injoignable"),
        "{}",
        page.body
    );
    assert_eq!(page.lang(), "fr");
}

/// A sign-in left at the provider longer than the flow lives is refused when it comes back.
#[tokio::test]
async fn a_sign_in_that_took_too_long_is_refused() {
    let Some((provider, app)) = both().await else {
        return;
    };
    admin_with(&app, ADMIN, "ada@example.org").await;
    let client = app.client();
    let callback = callback_url(&provider, &app, &client, "ada").await;
    app.clock.advance(std::time::Duration::from_secs(
        orchestra::domain::oidc::FLOW_SECONDS as u64 + 1,
    ));
    refused(&fetch(&client, &callback).await, "too late");
    assert!(!signed_in(&app, &client).await);
}
