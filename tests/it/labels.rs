//! A workflow's label in each language: an email names the workflow in its reader's language,
//! the admin pages in the admin's; the editor and the command line set it; a database made
//! before labels had languages keeps its workflows.

use std::process::Command;

use orchestra::domain::instance::{self, Actor};
use orchestra::domain::mail::{ContactInput, Mailer, send};
use orchestra::store;

use crate::helpers::{Flood, Smtp, TestApp, get, post, spawn, spawn_now, with_lang};

const BIN: &str = env!("CARGO_BIN_EXE_orchestra");

fn contact(participant: &str, email: &str, lang: &str) -> ContactInput {
    ContactInput {
        participant: participant.into(),
        email: email.into(),
        name: String::new(),
        lang: lang.into(),
    }
}

async fn labels_of(app: &TestApp, name: &str) -> (String, String) {
    let w = store::workflows::by_name(&app.db, name)
        .await
        .unwrap()
        .expect("the workflow exists");
    (w.label, w.labels)
}

#[tokio::test]
async fn an_email_names_the_workflow_in_its_readers_language() {
    let app = spawn_now(Flood::Memory).await;
    let smtp = Smtp::start();
    let mailer = Mailer::new(&smtp.url(), "Orchestra <orchestra@example.org>").unwrap();
    let w = store::workflows::by_name(&app.db, "contract_review")
        .await
        .unwrap()
        .unwrap();
    let contacts = [
        contact("legal", "lee@legal.example", "en"),
        contact("finance", "fanny@finance.example", "fr"),
    ];
    instance::start(
        &app.db,
        &instance::Start {
            contacts: &contacts,
            ..instance::Start::new(w.id, "Lease renewal", &Actor::Admin("ada".into()))
        },
    )
    .await
    .unwrap();
    let site = app.state.site.get().await;
    let run = send::run_once(
        &app.db,
        &app.state.versions,
        &site,
        Some(&mailer),
        store::now(),
    )
    .await
    .unwrap();
    assert_eq!(run.sent, 2, "{run:?}");
    let emails = smtp.received();
    let to = |address: &str| {
        let email = emails
            .iter()
            .find(|e| e.to == [address])
            .expect("an email to each reviewer");
        (email.part("text/plain"), email.part("text/html"))
    };
    let (text, html) = to("fanny@finance.example");
    for part in [&text, &html] {
        assert!(part.contains("Revue de contrat"), "{part}");
        assert!(!part.contains("Contract review"), "{part}");
    }
    let (text, html) = to("lee@legal.example");
    for part in [&text, &html] {
        assert!(part.contains("Contract review"), "{part}");
        assert!(!part.contains("Revue de contrat"), "{part}");
    }
}

#[tokio::test]
async fn the_admin_pages_name_a_workflow_in_the_admins_language() {
    let app = spawn(Flood::Memory).await;
    let id = app.start("contract_review", "Lease renewal").await;
    let admin = app.admin_client().await;
    let list = get(&admin, &app, &with_lang("/admin/instances", "fr")).await;
    assert_eq!(list.status, 200);
    assert!(list.body.contains("Revue de contrat"), "{}", list.body);
    assert!(!list.body.contains("Contract review"), "{}", list.body);
    for path in [format!("/admin/instances/{id}"), "/admin/workflows".into()] {
        let page = get(&admin, &app, &path).await;
        assert!(page.body.contains("Revue de contrat"), "{path}");
    }
    let english = get(&admin, &app, &with_lang("/admin/instances", "en")).await;
    assert!(english.body.contains("Contract review"), "{}", english.body);
    assert!(!english.body.contains("Revue de contrat"));
}

#[tokio::test]
async fn the_editor_keeps_a_too_long_french_label_and_saves_nothing() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;
    let w = store::workflows::by_name(&app.db, "contract_review")
        .await
        .unwrap()
        .unwrap();
    let edit = format!("/admin/workflows/{}/edit", w.id);
    let form = get(&admin, &app, &with_lang(&edit, "fr")).await;
    assert_eq!(form.first("label[for=label_fr]"), "Libellé en français");
    assert_eq!(
        form.attr("#label_fr", "value").as_deref(),
        Some("Revue de contrat")
    );
    let definition = "review[legal,finance]: Approve the contract\n";
    let long = "É".repeat(101);
    let csrf = form.csrf();
    let refused = post(
        &admin,
        &app,
        &edit,
        &[
            ("csrf", csrf.as_str()),
            ("label", "Contract review"),
            ("label_fr", &long),
            ("definition", definition),
        ],
    )
    .await;
    assert_eq!(refused.status, 422, "{}", refused.body);
    assert_eq!(refused.attr("#label_fr", "value"), Some(long.clone()));
    assert_eq!(
        refused.first("[data-field=label_fr]"),
        "Saisissez au plus 100 caractères, sur une ligne (ou laissez vide)."
    );
    assert_eq!(
        refused.attr("#label_fr", "aria-invalid").as_deref(),
        Some("true")
    );
    assert_eq!(labels_of(&app, "contract_review").await.1, w.labels);

    let saved = post(
        &admin,
        &app,
        &edit,
        &[
            ("csrf", csrf.as_str()),
            ("label", "Contract review"),
            ("label_fr", " Revue des contrats "),
            ("definition", definition),
        ],
    )
    .await;
    assert_eq!(saved.status, 303, "{}", saved.body);
    assert_eq!(
        labels_of(&app, "contract_review").await.1,
        r#"{"fr":"Revue des contrats"}"#
    );
}

/// A database made before labels had languages: its workflows and labels are kept, each with
/// no other label, but for a shipped example whose label is still the shipped one.
#[tokio::test]
async fn a_database_made_before_keeps_its_workflows_and_labels() {
    let database = crate::helpers::fresh_database().await;
    let pool = crate::helpers::schema_before(&database.url, 22).await;
    let definition = orchestra::domain::workflow::Definition::parse("review@manager: Check\n")
        .unwrap()
        .to_json();
    for (name, label) in [
        ("claim", "Expense claim"),
        ("contract_review", "Contract review"),
        ("order_payment", "Our orders"),
    ] {
        sqlx::query("INSERT INTO workflows (name, label, created_at, updated_at) VALUES ($1, $2, 1700000000, 1700000000)")
            .bind(name)
            .bind(label)
            .execute(&pool)
            .await
            .unwrap();
        sqlx::query("INSERT INTO workflow_versions (workflow_id, number, definition, created_at) VALUES ((SELECT id FROM workflows WHERE name = $1), 1, $2, 1700000000)")
            .bind(name)
            .bind(&definition)
            .execute(&pool)
            .await
            .unwrap();
    }
    pool.close().await;
    let app = crate::helpers::spawn_on(database, |db, clock| Flood::Memory.store(db, clock)).await;
    assert_eq!(
        labels_of(&app, "claim").await,
        ("Expense claim".into(), "{}".into())
    );
    assert_eq!(
        labels_of(&app, "order_payment").await,
        ("Our orders".into(), "{}".into()),
        "an example given another label is the administrator's"
    );
    assert_eq!(
        labels_of(&app, "contract_review").await,
        (
            "Contract review".into(),
            r#"{"fr":"Revue de contrat"}"#.into()
        ),
        "an example left as shipped gets its French label"
    );
    let versions = store::workflows::versions(&app.db, 2).await.unwrap();
    assert_eq!(versions.len(), 1, "a label is no new version");
}

#[tokio::test]
async fn the_command_line_sets_a_label_in_french() {
    let database = crate::helpers::fresh_database().await;
    if let Some(path) = database.url.strip_prefix("sqlite:") {
        std::fs::File::create(path).unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("claim.txt");
    std::fs::write(&file, "review@manager: Check the claim\n").unwrap();
    let file = file.to_str().unwrap();
    let run = |args: &[&str]| {
        let out = Command::new(BIN)
            .args(args)
            .env_clear()
            .env("ORCHESTRA_DATABASE_URL", &database.url)
            .env("ORCHESTRA_LANG", "en")
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let create = ["workflow", "create", "claim", "--label", "Expense claim"];
    let made = run(&[
        &create[..],
        &["--label-in", "fr=Note de frais", "--file", file],
    ]
    .concat());
    assert_eq!(made, (Some(0), String::new()));
    let refused = run(&[
        "workflow",
        "save",
        "claim",
        "--label-in",
        "de=Spesen",
        "--file",
        file,
    ]);
    assert_eq!(
        refused,
        (
            Some(2),
            "--label-in takes LANGUAGE=LABEL, the language one of: fr (not \"de\").\n".into()
        )
    );
    let long = format!("fr={}", "x".repeat(101));
    let too_long = run(&[
        "workflow",
        "save",
        "claim",
        "--label-in",
        &long,
        "--file",
        file,
    ]);
    assert_eq!(too_long.0, Some(2), "{too_long:?}");
    // A save without --label-in keeps the French label.
    let kept = run(&["workflow", "save", "claim", "--file", file]);
    assert_eq!(kept.0, Some(0), "{kept:?}");

    let app = crate::helpers::spawn_on(database, |db, clock| Flood::Memory.store(db, clock)).await;
    assert_eq!(
        labels_of(&app, "claim").await,
        ("Expense claim".into(), r#"{"fr":"Note de frais"}"#.into())
    );
}
