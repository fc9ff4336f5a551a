//! Emails as mail systems and their readers expect, through a real SMTP server on loopback:
//! each carries its own `Message-ID`, a `Date` and `Auto-Submitted: auto-generated`; French
//! words keep their narrow no-break space before a colon; the expiry is said in words; and a
//! start that gives addresses on a site with no SMTP server says its emails wait, on the CLI and
//! on the admin form.

use orchestra::domain::instance::{self, Actor};
use orchestra::domain::mail::{ContactInput, Mailer, send};
use orchestra::store;

use crate::helpers::{Flood, Smtp, TestApp, spawn_now};
use crate::mail::binary;

const FROM: &str = "Orchestra <orchestra@example.org>";

async fn start(app: &TestApp, workflow: &str, email: &str, lang: &str) -> i64 {
    let w = store::workflows::by_name(&app.db, workflow)
        .await
        .unwrap()
        .expect("the workflow exists");
    let contacts = [ContactInput {
        participant: "legal".into(),
        email: email.into(),
        name: "Lee".into(),
        lang: lang.into(),
    }];
    instance::start(
        &app.db,
        &instance::Start {
            contacts: &contacts,
            ..instance::Start::new(w.id, "Achat de bureaux", &Actor::Admin("ada".into()))
        },
    )
    .await
    .map_err(|e| e.refusals())
    .unwrap()
}

async fn run(app: &TestApp, mailer: &Mailer, now: i64) -> send::Run {
    let site = app.state.site.get().await;
    send::run_once(&app.db, &app.state.versions, &site, Some(mailer), now)
        .await
        .unwrap()
}

const FRENCH_MONTHS: [&str; 12] = [
    "janvier",
    "février",
    "mars",
    "avril",
    "mai",
    "juin",
    "juillet",
    "août",
    "septembre",
    "octobre",
    "novembre",
    "décembre",
];

#[tokio::test]
async fn each_email_has_its_own_id_a_date_and_auto_submitted_and_speaks_as_its_reader_writes() {
    let app = spawn_now(Flood::Memory).await;
    let smtp = Smtp::start();
    let mailer = Mailer::new(&smtp.url(), FROM).unwrap();
    let definition = orchestra::domain::workflow::Definition::parse(
        "review@legal: Sign the contract | remind 1h x1 | expires 5h\n",
    )
    .unwrap();
    store::workflows::create(&app.db, "sign_off", "sign_off", &definition.to_json())
        .await
        .unwrap();
    start(&app, "sign_off", "lee@legal.example", "fr").await;
    start(&app, "sign_off", "lou@legal.example", "en").await;
    let t0 = store::now();
    assert_eq!(run(&app, &mailer, t0).await.sent, 2, "the links");
    assert_eq!(run(&app, &mailer, t0 + 3601).await.sent, 2, "the reminders");
    let got = smtp.received();
    assert_eq!(got.len(), 4);

    // Each its own id, on the site's host, holding no link, token or address.
    let base = app.state.site.get().await.settings.base_url.clone();
    let host = url::Url::parse(&base)
        .unwrap()
        .host_str()
        .unwrap()
        .to_owned();
    let mut ids: Vec<String> = got
        .iter()
        .map(|e| {
            e.expected_headers();
            e.header("Message-ID").unwrap()
        })
        .collect();
    for (id, email) in ids.iter().zip(&got) {
        assert!(id.ends_with(&format!("@{host}>")), "{id} on {base}");
        let token = email.link_path().rsplit('/').next().unwrap().to_owned();
        assert!(
            !id.contains(&token) && !id.contains("legal.example"),
            "{id}"
        );
    }
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 4, "one Message-ID per email");

    let french: Vec<_> = got
        .iter()
        .filter(|e| e.to == ["lee@legal.example"])
        .collect();
    assert_eq!(french.len(), 2);
    for email in french {
        let text = email.part("text/plain");
        assert!(text.contains("Ouvrir votre étape\u{202F}:\n"), "{text:?}");
        assert!(
            text.contains("une étape de la demande « Achat de bureaux »\u{202F}:"),
            "{text}"
        );
        assert!(!text.contains(" :") && !text.contains(" ;"), "{text:?}");
        // The expiry in words: "… jusqu'au 6 décembre 2026 à 22:47 UTC."
        let line = text
            .lines()
            .find(|l| l.starts_with("Ce lien fonctionne jusqu'au "))
            .unwrap_or_else(|| panic!("{text}"));
        assert!(
            FRENCH_MONTHS
                .iter()
                .any(|m| line.contains(&format!(" {m} ")))
                && line.contains(" à ")
                && line.ends_with(" UTC."),
            "{line}"
        );
        let words = line.trim_start_matches("Ce lien fonctionne jusqu'au ");
        assert!(email.part("text/html").contains(words), "{words}");
    }
    let english = got.iter().find(|e| e.to == ["lou@legal.example"]).unwrap();
    let text = english.part("text/plain");
    assert!(text.contains("Open your step:\n"), "{text}");
    let line = text
        .lines()
        .find(|l| l.starts_with("This link works until "))
        .unwrap();
    // "This link works until December 6, 2026 at 22:47 UTC.", never "2026-12-06 22:47 UTC".
    let words = line.trim_start_matches("This link works until ");
    assert!(
        words.chars().next().unwrap().is_ascii_uppercase()
            && words.contains(", 20")
            && words.contains(" at ")
            && words.ends_with(" UTC."),
        "{line}"
    );
}

#[tokio::test]
async fn a_start_with_addresses_and_no_smtp_server_says_its_emails_wait() {
    use crate::helpers::serve;
    let database = crate::helpers::fresh_database().await;
    let db = &database.url;
    serve::cli(env!("CARGO_BIN_EXE_orchestra"), db, &["init"]);
    let smtp = Smtp::start();
    let url = smtp.url();
    let start = [
        "instance",
        "start",
        "contract_review",
        "--contact",
        "legal=lee@legal.example",
    ];
    for (lang, words) in [
        ("en", "Warning: no SMTP server is set (ORCHESTRA_SMTP_URL"),
        ("fr", "Attention\u{202F}: aucun serveur SMTP n'est défini"),
    ] {
        let (code, out, err) = binary(db, &start, &[("ORCHESTRA_LANG", lang)]);
        assert_eq!(code, 0, "{err}");
        assert!(out.trim().parse::<i64>().is_ok(), "the id alone: {out:?}");
        assert!(err.contains(words), "{lang}: {err:?}");
    }
    // With a server, nothing to say; without an address, neither.
    let with_smtp = [
        ("ORCHESTRA_LANG", "en"),
        ("ORCHESTRA_SMTP_URL", url.as_str()),
        ("ORCHESTRA_MAIL_FROM", FROM),
    ];
    let (code, out, err) = binary(db, &start, &with_smtp);
    assert_eq!(code, 0, "{err}");
    assert!(out.trim().parse::<i64>().is_ok(), "{out:?}");
    assert!(!err.contains("SMTP"), "{err:?}");
    let (code, _, err) = binary(
        db,
        &["instance", "start", "contract_review"],
        &[("ORCHESTRA_LANG", "en")],
    );
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("SMTP"), "{err:?}");

    // The admin form's page after the start: the same word, and none with a server.
    let without = spawn_now(Flood::Memory).await;
    let mailer = Mailer::new(&url, FROM).unwrap();
    let with = crate::helpers::spawn_now_mailing(Flood::Memory, mailer).await;
    for (app, waits) in [(&without, true), (&with, false)] {
        let landed = start_on_the_form(app).await;
        assert_eq!(
            landed.contains("emails wait and will go once one is set"),
            waits,
            "{landed}"
        );
        assert_eq!(landed.contains("ORCHESTRA_SMTP_URL"), waits, "{landed}");
        assert_eq!(
            !waits,
            landed.contains("the Emails section below follows them"),
            "{landed}"
        );
    }
}

/// Starts an instance on `/admin/instances/new` with an address for legal: the page landed on.
async fn start_on_the_form(app: &TestApp) -> String {
    use crate::helpers::{get, post, with_lang};
    let client = app.admin_client().await;
    let review = store::workflows::by_name(&app.db, "contract_review")
        .await
        .unwrap()
        .unwrap()
        .id
        .to_string();
    let form = get(
        &client,
        app,
        &format!("/admin/instances/new?workflow={review}"),
    )
    .await;
    let csrf = form.csrf();
    let good = post(
        &client,
        app,
        "/admin/instances/new",
        &[
            ("csrf", &csrf),
            ("workflow", &review),
            ("title", "Lease 12"),
            ("email.legal", "lee@legal.example"),
            ("lang.legal", "en"),
            ("email.finance", ""),
            ("lang.finance", "en"),
        ],
    )
    .await;
    assert_eq!(good.status, 303, "{}", good.body);
    get(&client, app, &with_lang(&good.location(), "en"))
        .await
        .body
}
