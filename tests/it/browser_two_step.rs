//! Two-step sign-in in a real browser, at desktop and phone width, in English and French: an
//! administrator turns it on from their account page (the QR code and the key, confirmed with
//! a first code, then the recovery codes), signs out, and signs in with the password and a code.
//! The codes are computed here by RFC 6238 (`domain::totp`, checked against the RFC's vectors
//! and, in tests/it/two_step.rs, against pyotp) from the key the page shows.

use orchestra::domain::totp::{Secret, step_of};

use crate::browser::{Browser, start};
use crate::helpers::{ADMIN, Flood, PASSWORD, TestApp, spawn_now};
use crate::two_step::base32_decode;

const WIDTHS: [(u32, &str); 2] = [(1280, ""), (390, "-phone")];

/// Screenshots of the current page at both widths, checked not to scroll sideways.
async fn at_both_widths(b: &mut Browser, path: Option<&str>, name: &str, lang: &str) {
    for (width, suffix) in WIDTHS {
        b.resize(width, 900).await;
        if let Some(path) = path {
            b.goto(path).await;
        }
        assert!(!b.scrolls_sideways().await, "{name} ({lang}) at {width} px");
        b.script("document.querySelector('h1').scrollIntoView(); return true;")
            .await;
        b.screenshot(&format!("{name}{suffix}-{lang}")).await;
    }
    b.resize(1280, 900).await;
}

/// A fresh browser (no cookies) through the sign-in form's password.
async fn password(b: &mut Browser, lang: &str) {
    b.delete_cookies().await;
    b.goto(&format!("/admin/login?lang={lang}")).await;
    b.fill("#name", ADMIN).await;
    b.fill("#password", PASSWORD).await;
    b.follow("form button[type=submit]").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_step_sign_in_is_turned_on_and_used_in_a_real_browser() {
    let Some(mut b) = start().await else {
        return;
    };
    let app: TestApp = spawn_now(Flood::Memory).await;
    app.create_admin().await;
    b.app_base = app.base.clone();
    let now = app.clock.now_secs();
    let id = orchestra::store::admins::by_name(&app.db, ADMIN)
        .await
        .unwrap()
        .unwrap()
        .id;
    for (lang, on, code_title) in [
        ("en", "Two-step sign-in is on.", "Enter your code"),
        (
            "fr",
            "La connexion en deux étapes est activée.",
            "Entrez votre code",
        ),
    ] {
        password(&mut b, lang).await;
        assert_eq!(b.path().await, "/admin");

        b.goto(&format!("/admin/account/two-step?lang={lang}"))
            .await;
        b.follow("main form button[type=submit]").await;
        at_both_widths(&mut b, None, "two-step-setup", lang).await;
        assert_eq!(b.count("#two-step-qr svg").await, 1);
        let secret = Secret::from_bytes(base32_decode(&b.text("#two-step-secret").await));
        b.fill("#code", &secret.code_at(step_of(now))).await;
        b.follow("main form button[type=submit]").await;
        assert_eq!(b.count("ul.recovery-codes li").await, 10, "{lang}");
        at_both_widths(&mut b, None, "two-step-recovery-codes", lang).await;
        b.goto(&format!("/admin/account/two-step?lang={lang}"))
            .await;
        assert_eq!(b.text("#two-step-state").await, on);

        // Signed out, the password alone leads to the code page; a code signs in.
        password(&mut b, lang).await;
        assert_eq!(b.path().await, "/admin/login/code");
        assert_eq!(b.text("h1").await, code_title);
        assert_eq!(b.attr("#code", "name").await.as_deref(), Some("code"));
        at_both_widths(&mut b, None, "two-step-code", lang).await;
        b.fill("#code", &secret.code_at(step_of(now) + 1)).await;
        b.follow("main form button[type=submit]").await;
        assert_eq!(b.path().await, "/admin", "{lang}");

        // Off again for the next language's round.
        orchestra::domain::two_step::turn_off(&app.db, id)
            .await
            .unwrap();
    }
    b.check_console().await;
}
