//! Two-step sign-in over real TCP, on SQLite and PostgreSQL: codes computed by an outside TOTP
//! library (Python's pyotp, which `.ci/run` installs) from the secret the page shows or the
//! address the CLI prints finish a sign-in the password alone does not; wrong codes are counted
//! by the sign-in limits; a code is taken once; a recovery code works once; the site setting
//! sends an administrator without it to set it up; the secret never rests in clear.

use std::process::Command;

use orchestra::domain::totp::{Secret, step_of};
use orchestra::domain::two_step;
use reqwest::Client;

use crate::helpers::{
    ADMIN, Flood, PASSWORD, Page, TestApp, get, on_postgres, post, read, spawn_now,
};

const BIN: &str = env!("CARGO_BIN_EXE_orchestra");

/// The interpreter with pyotp: `ORCHESTRA_PYOTP_PYTHON` (`.ci/run`), else the virtualenv it
/// makes. `None` when pyotp is missing, unless CI requires it.
fn pyotp_python() -> Option<String> {
    let python = std::env::var("ORCHESTRA_PYOTP_PYTHON")
        .unwrap_or_else(|_| format!("{}/target/jose-venv/bin/python", env!("CARGO_MANIFEST_DIR")));
    let works = Command::new(&python)
        .args(["-c", "import pyotp"])
        .output()
        .is_ok_and(|o| o.status.success());
    if works {
        return Some(python);
    }
    assert!(
        std::env::var_os("ORCHESTRA_PYTHON_REQUIRED").is_none(),
        "ORCHESTRA_PYTHON_REQUIRED is set and pyotp is missing from {python} (.ci/run installs it)"
    );
    eprintln!("pyotp is missing from {python}: codes are computed in Rust instead");
    None
}

/// The code pyotp computes at `time` for a base32 secret or an `otpauth://` address.
fn pyotp_code(secret_or_url: &str, time: i64) -> String {
    let Some(python) = pyotp_python() else {
        let secret = if let Some(query) = secret_or_url.split_once("secret=") {
            query.1.split('&').next().unwrap().to_owned()
        } else {
            secret_or_url.to_owned()
        };
        return Secret::from_bytes(base32_decode(&secret)).code_at(step_of(time));
    };
    let script = "import pyotp, sys\n\
                  s = sys.argv[1]\n\
                  t = pyotp.parse_uri(s) if s.startswith('otpauth://') else pyotp.TOTP(s)\n\
                  print(t.at(int(sys.argv[2])))";
    let out = Command::new(python)
        .args(["-c", script, secret_or_url, &time.to_string()])
        .output()
        .expect("run pyotp");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

pub(crate) fn base32_decode(text: &str) -> Vec<u8> {
    let (mut out, mut buffer, mut bits) = (Vec::new(), 0u32, 0u32);
    for c in text.bytes() {
        let v = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
            .iter()
            .position(|a| *a == c)
            .unwrap() as u32;
        buffer = (buffer << 5) | v;
        bits += 5;
        if bits >= 8 {
            bits -= 8;
            out.push((buffer >> bits) as u8);
        }
    }
    out
}

/// One text column's values, read as the server wrote them.
async fn column(app: &TestApp, sql: &str) -> Vec<String> {
    let mut tx = app.db.write().await.unwrap();
    let values = sqlx::query_scalar(sql).fetch_all(&mut *tx).await.unwrap();
    tx.commit().await.unwrap();
    values
}

/// A fresh browser's password step: the answer to the sign-in form.
async fn password(app: &TestApp, name: &str) -> (Client, Page) {
    let client = app.client();
    let form = get(&client, app, "/admin/login").await;
    let page = read(client.post(app.url("/admin/login")).form(&[
        ("csrf", form.csrf().as_str()),
        ("name", name),
        ("password", PASSWORD),
    ]))
    .await;
    (client, page)
}

/// The second step: the code page's form, posted with `code`.
pub(crate) async fn send_code(client: &Client, app: &TestApp, code: &str) -> Page {
    let form = get(client, app, "/admin/login/code").await;
    assert_eq!(form.status, 200, "{}", form.body);
    post(
        client,
        app,
        "/admin/login/code",
        &[("csrf", &form.csrf()), ("code", code)],
    )
    .await
}

/// Whether the client is signed in: the dashboard answers rather than sending it to sign in.
async fn signed_in(client: &Client, app: &TestApp) -> bool {
    get(client, app, "/admin").await.status == 200
}

/// Turns two-step sign-in on for the test administrator as the CLI does: its secret (base32)
/// and recovery codes.
async fn turned_on(app: &TestApp) -> (String, Vec<String>) {
    let admin = orchestra::store::admins::by_name(&app.db, ADMIN)
        .await
        .unwrap()
        .unwrap();
    let (setup, codes) = two_step::turn_on(&app.db, admin.id, "Orchestra", ADMIN, 0)
        .await
        .unwrap()
        .unwrap();
    (setup.secret, codes)
}

/// A six-digit code that is none of the right ones around `now`.
fn wrong_code(secret: &str, now: i64) -> String {
    let right: Vec<String> = (-2..=2).map(|d| pyotp_code(secret, now + d * 30)).collect();
    (0..)
        .map(|n: u32| format!("{:06}", (n * 7919) % 1_000_000))
        .find(|c| !right.contains(c))
        .unwrap()
}

#[tokio::test]
async fn a_pyotp_code_of_the_secret_shown_finishes_a_sign_in_the_password_alone_does_not() {
    let app = spawn_now(Flood::Sql).await;
    let me = app.admin_client().await;
    let page = get(&me, &app, "/admin/account/two-step").await;
    assert_eq!(page.first("#two-step-state"), "Two-step sign-in is off.");
    let begun = post(
        &me,
        &app,
        "/admin/account/two-step",
        &[("csrf", &page.csrf()), ("action", "begin")],
    )
    .await;
    assert_eq!(begun.status, 303);
    let setup = get(&me, &app, "/admin/account/two-step").await;
    let secret = setup.first("#two-step-secret");
    assert_eq!(secret.len(), 32, "{secret}");
    assert!(setup.has("#two-step-qr svg"), "an inline QR code");
    assert_eq!(setup.header("cache-control"), Some("no-store"));
    // Not on before its first code: the password alone still signs in.
    let (other, page) = password(&app, ADMIN).await;
    assert_eq!(page.location(), "/admin");
    drop(other);

    let now = app.clock.now_secs();
    let wrong = post(
        &me,
        &app,
        "/admin/account/two-step",
        &[
            ("csrf", &setup.csrf()),
            ("action", "confirm"),
            ("code", &wrong_code(&secret, now)),
        ],
    )
    .await;
    assert_eq!(wrong.status, 422);
    assert!(wrong.has("#two-step-secret"), "still being set up");
    let confirmed = post(
        &me,
        &app,
        "/admin/account/two-step",
        &[
            ("csrf", &setup.csrf()),
            ("action", "confirm"),
            ("code", &pyotp_code(&secret, now)),
        ],
    )
    .await;
    assert_eq!(confirmed.status, 200, "{}", confirmed.body);
    assert_eq!(confirmed.text("ul.recovery-codes li").len(), 10);
    let shown_again = get(&me, &app, "/admin/account/two-step").await;
    assert_eq!(
        shown_again.first("#two-step-state"),
        "Two-step sign-in is on."
    );
    assert!(
        !shown_again.has("ul.recovery-codes"),
        "recovery codes are shown once"
    );

    // The password alone now leads to the code page, signed in as nobody.
    let (browser, page) = password(&app, ADMIN).await;
    assert_eq!(page.status, 303);
    assert_eq!(page.location(), "/admin/login/code");
    assert!(!signed_in(&browser, &app).await);
    let code_page = get(&browser, &app, "/admin/login/code").await;
    assert_eq!(
        code_page.attr("input#code", "name").as_deref(),
        Some("code")
    );
    // The confirming code's step is taken: the next step's code (within the skew) signs in.
    let code = pyotp_code(&secret, now + 30);
    let done = send_code(&browser, &app, &code).await;
    assert_eq!((done.status, done.location().as_str()), (303, "/admin"));
    assert!(signed_in(&browser, &app).await);

    // The same code again is refused: each code is taken once.
    let (replayer, _) = password(&app, ADMIN).await;
    let replayed = send_code(&replayer, &app, &code).await;
    assert_eq!(replayed.status, 401);
    assert!(!signed_in(&replayer, &app).await);

    // The secret rests nowhere in clear: not in its row, the sessions, nor the database file.
    let rows = column(&app, "SELECT secret FROM admin_two_step").await;
    assert_eq!(rows.len(), 1);
    let sessions = column(&app, "SELECT data FROM sessions").await;
    for text in rows.iter().chain(&sessions) {
        assert!(!text.contains(&secret) && !text.contains(&hex::encode(base32_decode(&secret))));
    }
    if !on_postgres() {
        let path = app.database.url.trim_start_matches("sqlite:");
        let path = path.split('?').next().unwrap();
        for file in [path.to_owned(), format!("{path}-wal")] {
            if let Ok(bytes) = std::fs::read(&file) {
                let text = String::from_utf8_lossy(&bytes);
                assert!(!text.contains(&secret), "the secret in clear in {file}");
            }
        }
    }
}

#[tokio::test]
async fn wrong_codes_are_refused_and_counted_by_the_sign_in_limits() {
    let app = spawn_now(Flood::Sql).await;
    app.create_admin().await;
    let (secret, _) = turned_on(&app).await;
    let now = app.clock.now_secs();
    let wrong = wrong_code(&secret, now);
    let (browser, _) = password(&app, ADMIN).await;
    // `login.limits.per_account` is 5 as shipped: five wrong codes from one address.
    for _ in 0..5 {
        let page = send_code(&browser, &app, &wrong).await;
        assert_eq!(page.status, 401, "{}", page.body);
        assert_eq!(
            page.first("p.errors"),
            "That code is not right, or was already used. Try the code the app shows now."
        );
    }
    // Held: even the right code is not checked now.
    let held = send_code(&browser, &app, &pyotp_code(&secret, now)).await;
    assert_eq!(held.status, 429, "{}", held.body);
    assert!(!signed_in(&browser, &app).await);
}

#[tokio::test]
async fn a_recovery_code_signs_in_once_and_not_twice() {
    let app = spawn_now(Flood::Sql).await;
    app.create_admin().await;
    let (_, codes) = turned_on(&app).await;
    assert_eq!(codes.len(), 10);
    let stored = column(&app, "SELECT code_hash FROM admin_recovery_codes").await;
    assert_eq!(stored.len(), 10);
    assert!(
        stored
            .iter()
            .all(|h| !codes.iter().any(|c| h.contains(&c[..5])))
    );
    let (first, _) = password(&app, ADMIN).await;
    let page = send_code(&first, &app, &codes[3].to_uppercase()).await;
    assert_eq!(page.status, 303, "{}", page.body);
    assert!(signed_in(&first, &app).await);
    let (second, _) = password(&app, ADMIN).await;
    assert_eq!(send_code(&second, &app, &codes[3]).await.status, 401);
    assert!(!signed_in(&second, &app).await);
    let left = get(&first, &app, "/admin/account/two-step").await;
    assert_eq!(left.first("#recovery-left"), "9");
}

#[tokio::test]
async fn the_cli_prints_an_address_pyotp_reads_and_off_turns_it_off() {
    let app = spawn_now(Flood::Sql).await;
    app.create_admin().await;
    let run = |args: &[&str]| {
        let out = Command::new(BIN)
            .args(args)
            .env_clear()
            .env("ORCHESTRA_DATABASE_URL", &app.database.url)
            .env("ORCHESTRA_LANG", "en")
            .output()
            .unwrap();
        (
            out.status.code().unwrap(),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let (code, stdout, stderr) = run(&["admin", "two-step", ADMIN]);
    assert_eq!(code, 0, "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines.len(),
        11,
        "the address and ten recovery codes: {stdout}"
    );
    let url = lines[0];
    assert!(
        url.starts_with("otpauth://totp/Orchestra:ada?secret="),
        "{url}"
    );
    assert!(
        stderr.starts_with("Two-step sign-in is on for ada."),
        "{stderr}"
    );
    // Once on, asked again, it says so and changes nothing.
    let (again, _, said) = run(&["admin", "two-step", ADMIN]);
    assert_eq!(again, 2, "{said}");

    let (browser, page) = password(&app, ADMIN).await;
    assert_eq!(page.location(), "/admin/login/code");
    let done = send_code(&browser, &app, &pyotp_code(url, app.clock.now_secs())).await;
    assert_eq!(done.status, 303, "{}", done.body);
    assert!(signed_in(&browser, &app).await);

    let (code, stdout, stderr) = run(&["admin", "two-step", ADMIN, "--off"]);
    assert_eq!((code, stdout.as_str()), (0, ""), "{stderr}");
    assert_eq!(stderr, "Two-step sign-in is off for ada.\n");
    let (_, page) = password(&app, ADMIN).await;
    assert_eq!(
        page.location(),
        "/admin",
        "the password alone signs in again"
    );
}

#[tokio::test]
async fn the_requirement_sends_an_administrator_without_it_to_set_it_up_first() {
    let app = spawn_now(Flood::Sql).await;
    let me = app.admin_client().await;
    // Set on the settings page.
    let settings = get(&me, &app, "/admin/config/orchestra").await;
    assert!(settings.has("input#two_step_required[type=checkbox]"));
    let saved = post(
        &me,
        &app,
        "/admin/config/orchestra",
        &[("csrf", &settings.csrf()), ("two_step_required", "1")],
    )
    .await;
    assert_eq!(saved.status, 303, "{}", saved.body);
    app.state.site.refresh().await;
    for path in ["/admin", "/admin/workflows", "/admin/config/orchestra"] {
        let page = get(&me, &app, path).await;
        assert_eq!(
            (page.status, page.location().as_str()),
            (303, "/admin/account/two-step"),
            "{path}"
        );
    }
    let page = get(&me, &app, "/admin/account/two-step").await;
    assert!(page.has("#two-step-required"));
    post(
        &me,
        &app,
        "/admin/account/two-step",
        &[("csrf", &page.csrf()), ("action", "begin")],
    )
    .await;
    let setup = get(&me, &app, "/admin/account/two-step").await;
    let secret = setup.first("#two-step-secret");
    let code = pyotp_code(&secret, app.clock.now_secs());
    let confirmed = post(
        &me,
        &app,
        "/admin/account/two-step",
        &[
            ("csrf", &setup.csrf()),
            ("action", "confirm"),
            ("code", &code),
        ],
    )
    .await;
    assert_eq!(confirmed.status, 200);
    assert!(signed_in(&me, &app).await, "with it on, every page opens");
}

#[tokio::test]
async fn a_pending_sign_in_expires_and_takes_no_other_accounts_code() {
    let app = spawn_now(Flood::Sql).await;
    app.create_admin().await;
    let (secret, _) = turned_on(&app).await;
    let hash = orchestra::domain::password::hash(PASSWORD).unwrap();
    let bob = orchestra::store::admins::create(&app.db, "bob", &hash)
        .await
        .unwrap()
        .unwrap();
    let bob_setup = two_step::turn_on(&app.db, bob, "Orchestra", "bob", 0)
        .await
        .unwrap()
        .unwrap();
    let now = app.clock.now_secs();
    // Ada's pending sign-in does not take Bob's code, nor his recovery code.
    let (browser, _) = password(&app, ADMIN).await;
    let bobs = pyotp_code(&bob_setup.0.secret, now);
    assert_eq!(send_code(&browser, &app, &bobs).await.status, 401);
    assert_eq!(send_code(&browser, &app, &bob_setup.1[0]).await.status, 401);
    assert!(!signed_in(&browser, &app).await);
    // After five minutes the pending sign-in is gone: back to the password.
    app.clock.advance(std::time::Duration::from_secs(301));
    let later = app.clock.now_secs();
    let page = get(&browser, &app, "/admin/login/code").await;
    assert_eq!(
        (page.status, page.location().as_str()),
        (303, "/admin/login")
    );
    let form = get(&browser, &app, "/admin/login").await;
    let late = post(
        &browser,
        &app,
        "/admin/login/code",
        &[
            ("csrf", &form.csrf()),
            ("code", &pyotp_code(&secret, later)),
        ],
    )
    .await;
    assert_eq!(
        (late.status, late.location().as_str()),
        (303, "/admin/login")
    );
    assert!(!signed_in(&browser, &app).await);
}

#[tokio::test]
async fn a_key_rotation_locks_nobody_out_of_two_step_sign_in() {
    let app = spawn_now(Flood::Sql).await;
    app.create_admin().await;
    let (secret, codes) = turned_on(&app).await;
    orchestra::domain::rotation::rotate_keys(&app.db)
        .await
        .unwrap();
    app.state.site.refresh().await;
    let (browser, _) = password(&app, ADMIN).await;
    let page = send_code(&browser, &app, &pyotp_code(&secret, app.clock.now_secs())).await;
    assert_eq!(
        page.status, 303,
        "the app's code after a rotation: {}",
        page.body
    );
    let (other, _) = password(&app, ADMIN).await;
    let page = send_code(&other, &app, &codes[0]).await;
    assert_eq!(
        page.status, 303,
        "a recovery code after a rotation: {}",
        page.body
    );
}

#[tokio::test]
async fn turning_it_off_asks_for_a_current_code_or_the_password() {
    let app = spawn_now(Flood::Sql).await;
    let me = app.admin_client().await;
    let (secret, _) = turned_on(&app).await;
    let id = orchestra::store::admins::by_name(&app.db, ADMIN)
        .await
        .unwrap()
        .unwrap()
        .id;
    let page = get(&me, &app, "/admin/account/two-step").await;
    let now = app.clock.now_secs();
    let refused = post(
        &me,
        &app,
        "/admin/account/two-step",
        &[
            ("csrf", &page.csrf()),
            ("action", "off"),
            ("code", &wrong_code(&secret, now)),
            ("password", ""),
        ],
    )
    .await;
    assert_eq!(refused.status, 422);
    assert!(two_step::is_on(&app.db, id).await.unwrap());
    let refused = post(
        &me,
        &app,
        "/admin/account/two-step",
        &[
            ("csrf", &page.csrf()),
            ("action", "off"),
            ("code", ""),
            ("password", "wrong one"),
        ],
    )
    .await;
    assert_eq!(refused.status, 422);
    assert!(two_step::is_on(&app.db, id).await.unwrap());
    let off = post(
        &me,
        &app,
        "/admin/account/two-step",
        &[
            ("csrf", &page.csrf()),
            ("action", "off"),
            ("code", &pyotp_code(&secret, now)),
        ],
    )
    .await;
    assert_eq!(
        (off.status, off.location().as_str()),
        (303, "/admin/account/two-step")
    );
    assert!(!two_step::is_on(&app.db, id).await.unwrap());
}

#[tokio::test]
async fn a_reset_link_replaces_the_password_and_still_asks_for_the_code() {
    let app = spawn_now(Flood::Sql).await;
    app.create_admin().await;
    let (secret, _) = turned_on(&app).await;
    let admin = orchestra::store::admins::by_name(&app.db, ADMIN)
        .await
        .unwrap()
        .unwrap();
    let keys = orchestra::store::keys::load(&app.db).await.unwrap();
    let url = orchestra::domain::admins::reset_link(&app.db, &keys, &app.base, None, &admin)
        .await
        .unwrap();
    let path = url.trim_start_matches(&app.base);
    let browser = app.client();
    let page = get(&browser, &app, path).await;
    assert_eq!(page.status, 200, "{}", page.body);
    let new = "a brand new password";
    let done = post(
        &browser,
        &app,
        path,
        &[("csrf", &page.csrf()), ("password", new), ("confirm", new)],
    )
    .await;
    assert_eq!(
        (done.status, done.location().as_str()),
        (303, "/admin/login/code")
    );
    assert!(
        !signed_in(&browser, &app).await,
        "the link alone opens nothing"
    );
    let page = send_code(&browser, &app, &pyotp_code(&secret, app.clock.now_secs())).await;
    assert_eq!((page.status, page.location().as_str()), (303, "/admin"));
    assert!(signed_in(&browser, &app).await);
}
