//! The owner is never locked out by strangers (OWASP's "device cookies"), over real TCP: a
//! browser that signed in carries a sealed cookie; strangers' failures from every address hold
//! the account for everyone else but not that browser, whose own failures are held apart.

use crate::helpers::{self, ADMIN, Flood, PASSWORD, TestApp, get, post};

const DEVICE: &str = "orchestra_device";

/// One sign-in attempt from `from`, as the trusted proxy in front of the app names it, in
/// `client`'s cookies.
async fn attempt(
    client: &reqwest::Client,
    app: &TestApp,
    from: &str,
    password: &str,
) -> helpers::Page {
    attempt_as(client, app, from, ADMIN, password).await
}

async fn attempt_as(
    client: &reqwest::Client,
    app: &TestApp,
    from: &str,
    name: &str,
    password: &str,
) -> helpers::Page {
    crate::security::attempt_in(client, app, from, name, password, "").await
}

async fn sign_out(client: &reqwest::Client, app: &TestApp) {
    let csrf = get(client, app, "/admin").await.csrf();
    let out = post(client, app, "/admin/logout", &[("csrf", csrf.as_str())]).await;
    assert_eq!(out.status, 303);
}

#[tokio::test]
async fn the_owners_browser_signs_in_while_strangers_hold_the_account_and_is_held_by_its_own_failures()
 {
    let app = helpers::spawn_behind(
        Flood::Sql,
        "127.0.0.1",
        orchestra::proxy::ClientIpHeader::XForwardedFor,
    )
    .await;
    app.create_admin().await;
    let hash = orchestra::domain::password::hash(PASSWORD).unwrap();
    orchestra::store::admins::create(&app.db, "colleague", &hash)
        .await
        .unwrap();
    let owner = app.client();
    let home = "198.51.100.20";
    let first = attempt(&owner, &app, home, PASSWORD).await;
    assert_eq!(first.status, 303);
    assert!(first.cookie(DEVICE).is_some(), "a device cookie at sign-in");
    let set = first
        .headers
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with(DEVICE))
        .unwrap()
        .to_owned();
    for part in [
        "HttpOnly",
        "SameSite=Strict",
        "Path=/admin/login",
        "Max-Age=31536000",
    ] {
        assert!(set.contains(part), "{part} in {set}");
    }
    let value = first.cookie(DEVICE).unwrap();
    assert!(
        !value.contains("admin") && !value.contains("nonce"),
        "the cookie is sealed, not its fields in clear: {value}"
    );
    sign_out(&owner, &app).await;

    // 110 wrong passwords from 22 addresses: the account's total (100) is spent.
    let mut failures = 0;
    for a in 0..22 {
        let from = format!("203.0.113.{}", a + 1);
        let stranger = app.client();
        for _ in 0..5 {
            let page = attempt(&stranger, &app, &from, "wrong password!").await;
            assert!(matches!(page.status, 401 | 429), "{}", page.status);
            failures += usize::from(page.status == 401);
        }
    }
    assert_eq!(failures, 100);

    // A stranger with the right password and no device cookie is held.
    let stranger = attempt(&app.client(), &app, "192.0.2.50", PASSWORD).await;
    assert_eq!(stranger.status, 429, "the account is held for strangers");
    assert!(stranger.cookie(DEVICE).is_none());
    // Another administrator's device cookie is no device for this account.
    let colleague = app.client();
    let signed = attempt_as(&colleague, &app, "192.0.2.51", "colleague", PASSWORD).await;
    assert_eq!(signed.status, 303);
    assert!(signed.cookie(DEVICE).is_some());
    sign_out(&colleague, &app).await;
    let other = attempt(&colleague, &app, "192.0.2.51", PASSWORD).await;
    assert_eq!(other.status, 429, "a device is a device of one account");

    // The owner's browser, from a new address even, is let in.
    let again = attempt(&owner, &app, "198.51.100.21", PASSWORD).await;
    assert_eq!(again.status, 303, "the owner's browser is not held");
    sign_out(&owner, &app).await;

    // Its own failures are held after the per-account limit (5), right password or not.
    for n in 0..5 {
        let page = attempt(&owner, &app, home, "wrong password!").await;
        assert_eq!(page.status, 401, "attempt {n} through the device");
    }
    let held = attempt(&owner, &app, home, PASSWORD).await;
    assert_eq!(held.status, 429, "a device's failures are limited too");
}
