//! Receipts over real TCP on SQLite and PostgreSQL: offered on the thank-you page, downloaded
//! under the link that answered, verified by an outside JOSE library (Python's jwcrypto, in
//! the virtualenv `.ci/run` makes under target/) against the keys the running server publishes
//! at `/.well-known/jwks.json`, still verifying after `orchestra keys rotate`, checked by
//! `orchestra receipt verify`, carried by the outcome email, counted by the metrics, and never
//! holding the link.

use std::process::Command;

use orchestra::domain::mail::Mailer;
use orchestra::http::metrics::{Metrics, RECEIPTS};
use orchestra::store;

use crate::helpers::{Flood, Smtp, TestApp, answer_step, get, read, spawn, spawn_now};
use crate::mail::{contact, start_with};
use crate::metrics::{scrape, serve_on_loopback};

const BIN: &str = env!("CARGO_BIN_EXE_orchestra");
const CLAIM: &str = "form@employee: Expense claim | Amount* (number), Reason\n\
                     review@manager: Approve the claim\n";

/// A workflow of the test's own, and an instance of it; its id.
async fn claim(app: &TestApp) -> i64 {
    let definition = orchestra::domain::workflow::Definition::parse(CLAIM).unwrap();
    store::workflows::create(&app.db, "claim", "Claim", &definition.to_json())
        .await
        .unwrap()
        .unwrap();
    start_with(app, "claim", &[]).await.unwrap()
}

/// The employee answers through `link`; the thank-you page's receipt address.
async fn answered(app: &TestApp, link: &str) -> String {
    let page = answer_step(
        &app.client(),
        app,
        link,
        &[
            ("_step", "1"),
            ("amount", "42.50"),
            ("reason", "Train to Lyon"),
        ],
    )
    .await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert_eq!(page.first(".receipt h2"), "Your receipt");
    assert_eq!(page.first(".receipt a.button"), "Download your receipt");
    page.attr(".receipt a.button", "href").expect("a receipt")
}

/// The receipt at `href`, with its headers checked.
async fn download(app: &TestApp, href: &str, id: i64) -> String {
    let page = get(&app.client(), app, href).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert_eq!(page.header("content-type"), Some("application/jose"));
    assert_eq!(
        page.header("content-disposition").unwrap_or(""),
        format!("attachment; filename=\"receipt-{id}-1.jws\"")
    );
    assert_eq!(page.header("cache-control"), Some("no-store"));
    assert_eq!(page.header("x-content-type-options"), Some("nosniff"));
    assert!(page.header("content-security-policy").is_some());
    page.body
}

async fn jwks(app: &TestApp) -> serde_json::Value {
    let page = get(&app.client(), app, "/.well-known/jwks.json").await;
    assert_eq!(page.status, 200);
    assert_eq!(page.header("cache-control"), Some("public, max-age=300"));
    assert_eq!(page.header("content-type"), Some("application/json"));
    assert_eq!(page.header("x-content-type-options"), Some("nosniff"));
    let set: serde_json::Value = serde_json::from_str(&page.body).unwrap();
    for key in set["keys"].as_array().expect("keys") {
        let mut members: Vec<&str> = key
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.as_str())
            .collect();
        members.sort_unstable();
        // Public keys only: no `d`.
        assert_eq!(members, ["alg", "crv", "kid", "kty", "use", "x"], "{key}");
        assert_eq!(
            (&key["kty"], &key["crv"]),
            (&"OKP".into(), &"Ed25519".into())
        );
    }
    set
}

/// Python's jwcrypto, from the virtualenv `.ci/run` installs: `None` (the test is skipped)
/// when it is missing, unless CI requires it.
fn outside() -> Option<std::path::PathBuf> {
    let python =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/jose-venv/bin/python");
    if python.exists() {
        return Some(python);
    }
    assert!(
        std::env::var_os("ORCHESTRA_JOSE_REQUIRED").is_none(),
        "ORCHESTRA_JOSE_REQUIRED is set and {} is missing (.ci/run installs it)",
        python.display()
    );
    eprintln!("skipped: no jwcrypto virtualenv at {}", python.display());
    None
}

const VERIFY: &str = r#"
import json, sys
from jwcrypto import jwk, jws
keys = jwk.JWKSet.from_json(open(sys.argv[1]).read())
token = jws.JWS()
token.deserialize(open(sys.argv[2]).read().strip())
token.verify(keys)
print(json.dumps({"header": token.jose_header, "claims": json.loads(token.payload)}))
"#;

/// The outside library's verdict on `token` against `set`: the header and claims it read, or
/// `None` when it refused the receipt.
fn outside_verify(
    python: &std::path::Path,
    set: &serde_json::Value,
    token: &str,
) -> Option<serde_json::Value> {
    let dir = tempfile::tempdir().unwrap();
    let (keys, receipt, script) = (
        dir.path().join("jwks.json"),
        dir.path().join("r.jws"),
        dir.path().join("v.py"),
    );
    std::fs::write(&keys, set.to_string()).unwrap();
    std::fs::write(&receipt, token).unwrap();
    std::fs::write(&script, VERIFY).unwrap();
    let out = Command::new(python)
        .arg(&script)
        .arg(&keys)
        .arg(&receipt)
        .output()
        .unwrap();
    out.status
        .success()
        .then(|| serde_json::from_slice(&out.stdout).expect("the verifier's JSON"))
}

/// One byte of the token changed, in its claims.
fn tampered(token: &str) -> String {
    let mut bytes = token.as_bytes().to_vec();
    let at = token.find('.').unwrap() + 10;
    bytes[at] = if bytes[at] == b'A' { b'B' } else { b'A' };
    String::from_utf8(bytes).unwrap()
}

#[tokio::test]
async fn a_receipt_verifies_with_an_outside_jose_library_and_not_once_a_byte_changed() {
    let Some(python) = outside() else { return };
    let app = spawn(Flood::Memory).await;
    let id = claim(&app).await;
    let link = app.link(id, Some("employee")).await;
    let href = answered(&app, &link).await;
    let token = download(&app, &href, id).await;
    let set = jwks(&app).await;

    let verified = outside_verify(&python, &set, &token).expect("jwcrypto verifies it");
    let line = &store::receipts::lines_of_participant(&app.db, id, "employee")
        .await
        .unwrap()[0];
    assert_eq!(verified["header"]["alg"], "EdDSA");
    assert_eq!(verified["header"]["typ"], "JWT");
    assert_eq!(verified["header"]["kid"], set["keys"][0]["kid"]);
    let claims = &verified["claims"];
    assert_eq!(claims["instance"], id);
    assert_eq!(
        claims["step"],
        serde_json::json!({"number": 1, "title": "Expense claim"})
    );
    assert_eq!(claims["participant"], "employee");
    assert_eq!(claims["round"], 0);
    assert_eq!(
        claims["answer_sha256"],
        line.answer_sha256.clone().unwrap(),
        "the history's SHA-256"
    );
    assert_eq!(claims["link_record"], line.link_id.unwrap());
    assert_eq!(claims["answered_at"], line.at);
    assert_eq!(claims["iss"], app.state.site.get().await.settings.base_url);
    assert_eq!(
        claims["fields"],
        serde_json::json!([
            {"name": "amount", "label": "Amount", "value": "42.5"},
            {"name": "reason", "label": "Reason", "value": "Train to Lyon"},
        ])
    );
    // A second download is the same receipt.
    assert_eq!(download(&app, &href, id).await, token);

    assert!(
        outside_verify(&python, &set, &tampered(&token)).is_none(),
        "a changed byte fails"
    );

    // No link in it, nor the link's signature.
    let secret = link.strip_prefix("/interaction/").unwrap();
    let signature = secret.rsplit('.').next().unwrap();
    let decoded: String = token
        .split('.')
        .take(2)
        .map(|p| String::from_utf8_lossy(&base64_url(p)).into_owned())
        .collect();
    for text in [&token, &decoded] {
        assert!(
            !text.contains(secret) && !text.contains(signature) && !text.contains("/interaction/")
        );
    }
}

fn base64_url(part: &str) -> Vec<u8> {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(part)
        .unwrap()
}

#[tokio::test]
async fn after_a_key_rotation_an_old_receipt_still_verifies_and_a_new_one_has_a_new_kid() {
    let Some(python) = outside() else { return };
    let app = spawn(Flood::Memory).await;
    let first = claim(&app).await;
    let old = download(
        &app,
        &answered(&app, &app.link(first, Some("employee")).await).await,
        first,
    )
    .await;

    let rotated = Command::new(BIN)
        .args(["keys", "rotate", "--yes"])
        .env_clear()
        .env("ORCHESTRA_DATABASE_URL", &app.database.url)
        .env("ORCHESTRA_LANG", "en")
        .output()
        .unwrap();
    assert!(rotated.status.success(), "{rotated:?}");
    app.state.site.refresh().await;

    let second = start_with(&app, "claim", &[]).await.unwrap();
    let new = download(
        &app,
        &answered(&app, &app.link(second, Some("employee")).await).await,
        second,
    )
    .await;
    let set = jwks(&app).await;
    assert_eq!(
        set["keys"].as_array().unwrap().len(),
        2,
        "the old key is kept: {set}"
    );
    let old = outside_verify(&python, &set, &old).expect("the old receipt verifies");
    let new = outside_verify(&python, &set, &new).expect("the new receipt verifies");
    assert_ne!(old["header"]["kid"], new["header"]["kid"]);
}

/// `orchestra receipt verify FILE` against the database the server publishes from.
fn verify_cli(app: &TestApp, file: &std::path::Path, lang: &str) -> (i32, String, String) {
    let out = Command::new(BIN)
        .args(["receipt", "verify"])
        .arg(file)
        .env_clear()
        .env("ORCHESTRA_DATABASE_URL", &app.database.url)
        .env("ORCHESTRA_LANG", lang)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[tokio::test]
async fn the_command_line_verifies_a_good_receipt_and_refuses_a_changed_one() {
    let app = spawn(Flood::Memory).await;
    let id = claim(&app).await;
    let token = download(
        &app,
        &answered(&app, &app.link(id, Some("employee")).await).await,
        id,
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.jws");
    std::fs::write(&good, format!("{token}\n")).unwrap();

    let (code, stdout, stderr) = verify_cli(&app, &good, "en");
    assert_eq!((code, stderr.as_str()), (0, ""), "{stdout}");
    assert!(
        stdout.starts_with("Valid receipt, signed by this site (key "),
        "{stdout}"
    );
    for line in [
        &format!("Instance: {id}\n"),
        "Step: 1 · Expense claim\n",
        "Participant: employee\n",
        "  Amount: 42.5\n",
        "  Reason: Train to Lyon\n",
        "The instance's history still holds this answer, with the same SHA-256.\n",
    ] {
        assert!(stdout.contains(line), "{line:?} in {stdout}");
    }
    let (code, stdout, _) = verify_cli(&app, &good, "fr");
    assert_eq!(code, 0);
    assert!(
        stdout.contains("Participant\u{202f}: employee\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("Étape\u{202f}: 1 · Expense claim\n"),
        "{stdout}"
    );

    let changed = dir.path().join("changed.jws");
    std::fs::write(&changed, tampered(&token)).unwrap();
    assert_eq!(
        verify_cli(&app, &changed, "en"),
        (
            1,
            String::new(),
            "Not a valid receipt: the signature does not match, so it was changed after it was signed.\n"
                .into()
        )
    );
    let garbage = dir.path().join("garbage.jws");
    std::fs::write(&garbage, [0xff, 0x00, b'.', b'.', 0xfe]).unwrap();
    assert_eq!(
        verify_cli(&app, &garbage, "en"),
        (
            1,
            String::new(),
            "Not a valid receipt: this is not a compact JWS (three base64url parts of JSON).\n"
                .into()
        )
    );
    let (code, _, stderr) = verify_cli(&app, &dir.path().join("missing.jws"), "en");
    assert_eq!(code, 1);
    assert!(stderr.starts_with("Cannot read "), "{stderr}");
}

#[tokio::test]
async fn another_link_cannot_fetch_a_receipt_and_the_metrics_count_them() {
    let app = spawn(Flood::Memory).await;
    let base = serve_on_loopback(
        Metrics::new(app.state.guard.clone()).with_receipts(app.state.receipts.clone()),
    )
    .await;
    let id = claim(&app).await;
    let href = answered(&app, &app.link(id, Some("employee")).await).await;
    let line = href.rsplit('/').next().unwrap();
    download(&app, &href, id).await;

    // The manager's link, the employee's link of another instance, and a made-up line under
    // the right link: the one refusal, no receipt.
    let manager = app.link(id, Some("manager")).await;
    let other = start_with(&app, "claim", &[]).await.unwrap();
    let again = app.link(other, Some("employee")).await;
    let link = href.split("/receipt/").next().unwrap();
    for path in [
        format!("{manager}/receipt/{line}"),
        format!("{again}/receipt/{line}"),
        format!("{link}/receipt/{}", line.parse::<i64>().unwrap() + 1),
    ] {
        let refused = read(app.client().get(app.url(&path))).await;
        assert_eq!(refused.status, 404, "{path}");
        assert!(refused.header("content-disposition").is_none());
        assert!(
            refused
                .header("content-type")
                .unwrap_or("")
                .starts_with("text/html")
        );
    }
    let figures = scrape(&base).await;
    assert_eq!(figures.get(RECEIPTS, &[("outcome", "downloaded")]), 1.0);
    assert_eq!(figures.get(RECEIPTS, &[("outcome", "refused")]), 3.0);
    assert_eq!(figures.get(RECEIPTS, &[("outcome", "emailed")]), 0.0);
}

/// The receipt route is under the link's guard: a link at its limit is refused there too.
#[tokio::test]
async fn a_receipt_is_counted_as_the_link_it_is_under() {
    let app = spawn(Flood::Memory).await;
    let id = claim(&app).await;
    let href = answered(&app, &app.link(id, Some("employee")).await).await;
    app.set(&[
        ("orchestra.request_limits.enabled", "true"),
        ("interaction.limits.per_link", "2"),
    ])
    .await;
    let client = app.client();
    for _ in 0..2 {
        assert_eq!(get(&client, &app, &href).await.status, 200);
    }
    assert_eq!(get(&client, &app, &href).await.status, 429);
    let link = href.split("/receipt/").next().unwrap();
    assert_eq!(get(&client, &app, link).await.status, 429, "the same count");
}

#[tokio::test]
async fn the_outcome_email_carries_the_receipt() {
    let app = spawn_now(Flood::Memory).await;
    let smtp = Smtp::start();
    let mailer = Mailer::new(&smtp.url(), "Orchestra <orchestra@example.org>").unwrap();
    let definition = orchestra::domain::workflow::Definition::parse(CLAIM).unwrap();
    store::workflows::create(&app.db, "claim", "Claim", &definition.to_json())
        .await
        .unwrap()
        .unwrap();
    let id = start_with(
        &app,
        "claim",
        &[contact("employee", "eve@office.example", "", "fr")],
    )
    .await
    .unwrap();
    let employee = app.link(id, Some("employee")).await;
    let href = answered(&app, &employee).await;
    let token = download(&app, &href, id).await;
    let decided = answer_step(
        &app.client(),
        &app,
        &app.link(id, Some("manager")).await,
        &[("_step", "2"), ("decision", "approve"), ("comment", "")],
    )
    .await;
    assert_eq!(decided.status, 200, "{}", decided.body);
    // The employee's link, opened again once all is over, still offers the receipt.
    let again = get(&app.client(), &app, &employee).await;
    assert_eq!(
        again.first("h1"),
        "Nothing left to answer",
        "{}",
        again.body
    );
    assert_eq!(again.attr(".receipt a.button", "href"), Some(href));
    crate::mail::run(&app, Some(&mailer), store::now()).await;

    let received = smtp.received();
    let outcome = received
        .iter()
        .find(|m| m.to == ["eve@office.example"] && m.subject().starts_with("Approuvé"))
        .expect("the outcome email");
    assert_eq!(
        outcome.attachments(),
        [(format!("receipt-{id}-1.jws"), token.clone())],
        "the receipt the page gave"
    );
    let text = outcome.part("text/plain");
    assert!(text.contains("Vos reçus sont joints"), "{text}");
    assert!(
        !outcome.raw.contains("/interaction/"),
        "no link in the email"
    );
    assert!(outcome.part("text/html").contains("Vos reçus sont joints"));
    assert_eq!(
        mailer
            .figures
            .receipts
            .read(orchestra::domain::receipts::Outcome::Emailed),
        1
    );
}
