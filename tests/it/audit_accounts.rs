//! What the parts of administrators' accounts tell the audit log and the administrator: the
//! second step's failure and sign-in (the password alone records no sign-in), two-step turned
//! on and off by the operator, a role changed, each with who did it; and the email telling an
//! administrator that their second factor changed, through a real SMTP server.

use crate::admin_email::send;
use crate::helpers::{self, ADMIN, Flood, PASSWORD, Smtp, TestApp, get, read, spawn_now_mailing};
use crate::two_step::send_code;
use orchestra::domain::mail::Mailer;
use orchestra::store;

const BIN: &str = env!("CARGO_BIN_EXE_orchestra");
const FROM: &str = "Orchestra <orchestra@example.org>";

/// Every event as (kind, actor, actor's name, detail), oldest first.
async fn events(app: &TestApp) -> Vec<(String, String, Option<String>, String)> {
    let filter = store::audit::Filter::default();
    let (rows, _) = store::audit::page(&app.db, &filter, None, 1_000)
        .await
        .unwrap();
    rows.into_iter()
        .rev()
        .map(|r| (r.kind, r.actor, r.actor_name, r.detail))
        .collect()
}

async fn kinds(app: &TestApp) -> Vec<String> {
    events(app).await.into_iter().map(|e| e.0).collect()
}

#[tokio::test]
async fn the_second_step_two_step_and_roles_are_in_the_audit_log_with_who_did_them() {
    let smtp = Smtp::start();
    let mailer = Mailer::new(&smtp.url(), FROM).unwrap();
    let app = spawn_now_mailing(Flood::Memory, mailer.clone()).await;
    app.create_admin().await;
    let admin = store::admins::by_name(&app.db, ADMIN)
        .await
        .unwrap()
        .unwrap();
    assert!(
        store::admin_mails::set_email(&app.db, admin.id, Some("ada@example.org"), Some("en"))
            .await
            .unwrap()
    );
    let url = app.database.url.clone();

    // The operator turns two-step sign-in on: logged as the CLI's, and told to Ada by email.
    let printed = helpers::serve::cli(BIN, &url, &["admin", "two-step", ADMIN]);
    let recovery: Vec<&str> = printed.lines().skip(1).collect();
    assert_eq!(recovery.len(), 10, "{printed}");

    // The password alone: no sign-in recorded. A wrong code: a failed one, by Ada.
    let client = app.client();
    let form = get(&client, &app, "/admin/login").await;
    let password = read(client.post(app.url("/admin/login")).form(&[
        ("csrf", form.csrf().as_str()),
        ("name", ADMIN),
        ("password", PASSWORD),
    ]))
    .await;
    assert_eq!(password.status, 303, "{}", password.body);
    assert!(!kinds(&app).await.contains(&"signed_in".to_owned()));
    let code_step = |code| send_code(&client, &app, code);
    assert_eq!(code_step("AAAAA-BBBBB").await.status, 401);
    assert_eq!(code_step(recovery[0]).await.status, 303);

    // A second owner, made an editor by the operator; two-step turned off by the operator.
    store::admins::create(&app.db, "grace", "not a real hash")
        .await
        .unwrap()
        .unwrap();
    helpers::serve::cli(BIN, &url, &["admin", "role", "grace", "editor"]);
    helpers::serve::cli(BIN, &url, &["admin", "two-step", ADMIN, "--off"]);

    let events = events(&app).await;
    let by = |kind: &str| {
        events
            .iter()
            .filter(|e| e.0 == kind)
            .map(|e| (e.1.as_str(), e.2.as_deref()))
            .collect::<Vec<_>>()
    };
    assert_eq!(by("two_step_on"), [("cli", Some("cli"))], "{events:#?}");
    assert_eq!(by("two_step_off"), [("cli", Some("cli"))], "{events:#?}");
    assert_eq!(
        by("sign_in_failed"),
        [("admin", Some(ADMIN))],
        "{events:#?}"
    );
    assert_eq!(by("signed_in"), [("admin", Some(ADMIN))], "{events:#?}");
    assert_eq!(by("role_changed"), [("cli", Some("cli"))], "{events:#?}");
    let role = events.iter().find(|e| e.0 == "role_changed").unwrap();
    let detail: serde_json::Value = serde_json::from_str(&role.3).unwrap();
    assert_eq!(
        (
            detail["admin"].as_str(),
            detail["old"].as_str(),
            detail["new"].as_str()
        ),
        (Some("grace"), Some("owner"), Some("editor")),
        "{detail}"
    );
    // The failure comes before the sign-in, and both after the switch was turned on.
    let order: Vec<&str> = events
        .iter()
        .map(|e| e.0.as_str())
        .filter(|k| ["two_step_on", "sign_in_failed", "signed_in", "two_step_off"].contains(k))
        .collect();
    assert_eq!(
        order,
        ["two_step_on", "sign_in_failed", "signed_in", "two_step_off"]
    );

    // Ada hears of both changes of her second factor.
    send(&app, Some(&mailer), store::now()).await;
    let subjects: Vec<String> = smtp
        .received()
        .iter()
        .filter(|m| m.to.iter().any(|t| t.contains("ada@example.org")))
        .filter_map(|m| {
            m.raw
                .lines()
                .find(|l| l.starts_with("Subject:"))
                .map(str::to_owned)
        })
        .collect();
    assert!(
        subjects.iter().any(|s| s.contains("is on"))
            && subjects.iter().any(|s| s.contains("is off")),
        "{subjects:?}"
    );
}
