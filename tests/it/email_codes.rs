//! A `| verify email` step over real TCP, with a real SMTP server on loopback: before its
//! code, the link's page and its answers show and record nothing of the step; the code comes
//! by email, opens the step in the browser that typed it, and the answer's line of history
//! says it was verified by email; five wrong codes lock even the right one; a code expires;
//! codes are sent a few times an hour at most; one link's code opens no other link; and the
//! code is nowhere in the database in clear.

use std::time::Duration;

use orchestra::domain::mail::{Mailer, send};
use orchestra::store;
use sqlx::Row;

use crate::helpers::{Flood, Page, Smtp, TestApp, events, get, post, spawn_now, state_of};
use crate::mail::{contact, start_with};

const FROM: &str = "Orchestra <orchestra@example.org>";

const DEFINITION: &str = "form@supplier: Supplier details | Company* (text), IBAN* (text)\n\
     form@reviewer: Bank check | show 1 | verify email | Checked* (checkbox), Note (text)";

const SECRET_COMPANY: &str = "Acme Hidden Holdings";
const SECRET_IBAN: &str = "FR7630006000011234567890189";

/// The app, its SMTP server and mailer, and an instance whose first step is answered: its
/// second step (`verify email`) waits for the reviewer, who has an address.
pub(crate) struct Case {
    pub(crate) app: TestApp,
    smtp: Smtp,
    mailer: Mailer,
    pub(crate) id: i64,
}

pub(crate) async fn case() -> Case {
    case_on(Flood::Memory).await
}

async fn case_on(flood: Flood) -> Case {
    let app = spawn_now(flood).await;
    let smtp = Smtp::start();
    let mailer = Mailer::new(&smtp.url(), FROM).unwrap();
    let definition = orchestra::domain::workflow::Definition::parse(DEFINITION).unwrap();
    store::workflows::create(&app.db, "bank_check", "Bank check", &definition.to_json())
        .await
        .unwrap();
    let id = start_with(
        &app,
        "bank_check",
        &[
            contact("supplier", "sam@supplier.example", "Sam", "en"),
            contact("reviewer", "rosa@review.example", "Rosa", "fr"),
        ],
    )
    .await
    .unwrap();
    let first = app.link(id, Some("supplier")).await;
    let answered = post(
        &app.client(),
        &app,
        &first,
        &[("company", SECRET_COMPANY), ("iban", SECRET_IBAN)],
    )
    .await;
    assert_eq!(answered.status, 303, "{}", answered.body);
    assert_eq!(state_of(&app, id).await, ("active".into(), 1));
    Case {
        app,
        smtp,
        mailer,
        id,
    }
}

impl Case {
    /// Runs the sender.
    async fn send_emails(&self) {
        let site = self.app.state.site.get().await;
        send::run_once(
            &self.app.db,
            &self.app.state.versions,
            &site,
            Some(&self.mailer),
            store::now(),
        )
        .await
        .unwrap();
    }

    /// Runs the sender; the newest code's email and its code.
    async fn newest(&self) -> (crate::helpers::Received, String) {
        self.send_emails().await;
        self.smtp
            .received()
            .into_iter()
            .rev()
            .find_map(|e| Some((code_in(&e.part("text/plain"))?, e)))
            .map(|(code, e)| (e, code))
            .expect("a code's email")
    }

    pub(crate) async fn newest_code(&self) -> String {
        self.newest().await.1
    }

    /// A link of the reviewer's, a browser that asked for its code, and the code emailed.
    async fn asked(&self) -> (String, reqwest::Client, String) {
        let link = self.app.link(self.id, Some("reviewer")).await;
        let client = self.app.client();
        assert_eq!(send_code(self, &client, &link).await.status, 303);
        (link, client, self.newest_code().await)
    }
}

/// The six digits standing alone on a line of an email's text.
fn code_in(text: &str) -> Option<String> {
    text.lines()
        .map(str::trim)
        .find(|l| l.len() == 6 && l.chars().all(|c| c.is_ascii_digit()))
        .map(str::to_owned)
}

/// A wrong code: the right one with its last digit changed.
fn wrong(code: &str) -> String {
    let last = code.as_bytes()[5] - b'0';
    format!("{}{}", &code[..5], (last + 1) % 10)
}

/// Asserts a page shows nothing of the step: not its title, its fields or the earlier answers
/// it shows, nor the instance's subject.
fn shows_nothing_of_the_step(page: &Page) {
    for secret in [
        "Bank check",
        "Checked",
        SECRET_COMPANY,
        SECRET_IBAN,
        "Supplier details",
        "Acme onboarding",
    ] {
        assert!(!page.body.contains(secret), "{secret} shown: {}", page.body);
    }
    assert!(!page.has("input[name=checked]"), "{}", page.body);
    assert!(!page.has("input[name=_step]"), "{}", page.body);
}

async fn send_code(case: &Case, client: &reqwest::Client, link: &str) -> Page {
    post(client, &case.app, link, &[("_code", "send")]).await
}

async fn check(case: &Case, client: &reqwest::Client, link: &str, code: &str) -> Page {
    post(
        client,
        &case.app,
        link,
        &[("_code", "check"), ("code", code)],
    )
    .await
}

const ANSWER: [(&str, &str); 3] = [("_step", "2"), ("checked", "yes"), ("note", "fine")];

#[tokio::test]
async fn a_verify_email_step_shows_and_records_nothing_before_its_emailed_code() {
    let case = case().await;
    let app = &case.app;
    let link = app.link(case.id, Some("reviewer")).await;
    let client = app.client();

    let page = get(&client, app, &link).await;
    assert_eq!(page.status, 200);
    shows_nothing_of_the_step(&page);
    assert_eq!(
        page.attr("input[name=_code]", "value").as_deref(),
        Some("send")
    );
    assert!(
        !page.has("input[name=code]"),
        "no code to type before one is sent"
    );

    // An answer posted before the code records nothing.
    let history = events(app, case.id).await;
    let refused = post(&client, app, &link, &ANSWER).await;
    assert_eq!(refused.status, 403);
    shows_nothing_of_the_step(&refused);
    assert_eq!(events(app, case.id).await, history);
    assert_eq!(state_of(app, case.id).await, ("active".into(), 1));

    // The code is asked for, and goes to the participant's address.
    let asked = send_code(&case, &client, &link).await;
    assert_eq!(asked.status, 303);
    let page = get(&client, app, &link).await;
    shows_nothing_of_the_step(&page);
    assert!(
        page.first(".code-sent").contains("r•••@review.example"),
        "{}",
        page.body
    );
    assert_eq!(
        page.attr("input[name=code]", "autocomplete").as_deref(),
        Some("one-time-code")
    );
    assert_eq!(
        page.attr("input[name=code]", "inputmode").as_deref(),
        Some("numeric")
    );
    let (email, code) = case.newest().await;
    assert_eq!(email.to, ["rosa@review.example"]);
    assert!(!email.subject().contains(&code), "{}", email.subject());
    assert!(email.part("text/plain").starts_with("Bonjour Rosa,"));

    let right = check(&case, &client, &link, &code).await;
    assert_eq!(right.status, 303, "{}", right.body);
    assert!(
        right
            .header("set-cookie")
            .is_some_and(|c| c.contains("HttpOnly"))
    );
    let page = get(&client, app, &link).await;
    assert_eq!(page.first("h2"), "Bank check");
    assert!(page.body.contains(SECRET_COMPANY) && page.has("input[name=checked]"));

    let answered = post(&client, app, &link, &ANSWER).await;
    assert_eq!(answered.status, 303, "{}", answered.body);
    assert_eq!(state_of(app, case.id).await.0, "complete");
    let pool = sqlx::AnyPool::connect(&app.database.url).await.unwrap();
    let verified: Vec<(i64, Option<String>)> = sqlx::query(
        "SELECT step_index, verified FROM history WHERE instance_id = $1 \
         AND event = 'answered' ORDER BY step_index",
    )
    .bind(case.id)
    .fetch_all(&pool)
    .await
    .unwrap()
    .iter()
    .map(|r| (r.get(0), r.get(1)))
    .collect();
    assert_eq!(verified, [(0, None), (1, Some("email".to_owned()))]);
    // The evidence record says so, in its JSON and on its page.
    let record = orchestra::domain::instance::evidence::read(
        &app.db,
        &app.state.versions,
        "http://example.org",
        case.id,
        0,
    )
    .await
    .unwrap()
    .unwrap();
    let page =
        orchestra::domain::instance::evidence_page::document(&record, orchestra::i18n::Lang::En);
    assert!(page.contains("verified by an emailed code"));
    let lines = record.json["history"].as_array().unwrap();
    assert!(
        lines
            .iter()
            .any(|l| l["event"] == "answered" && l["verified"] == "email")
    );
}

#[tokio::test]
async fn five_wrong_codes_lock_even_the_right_one_until_a_new_code_is_sent() {
    for flood in [Flood::Memory, Flood::Sql] {
        five_wrong_codes_lock(flood).await;
    }
}

/// The lock over either flood store: the guard's count in memory, or in the database.
async fn five_wrong_codes_lock(flood: Flood) {
    let case = case_on(flood).await;
    let app = &case.app;
    let (link, client, code) = case.asked().await;
    for left in (1..5).rev() {
        let page = check(&case, &client, &link, &wrong(&code)).await;
        assert_eq!(page.status, 422);
        let said = page.first("[role=alert]");
        let expected = match left {
            1 => "One more wrong code locks it.".to_owned(),
            n => format!("{n} more wrong codes lock it."),
        };
        assert!(said.ends_with(&expected), "{said}");
        shows_nothing_of_the_step(&page);
    }
    let fifth = check(&case, &client, &link, &wrong(&code)).await;
    assert_eq!(fifth.status, 429);
    let right = check(&case, &client, &link, &code).await;
    assert_eq!(right.status, 429, "the right code is refused once locked");
    assert!(
        right.first("[role=alert]").contains("Too many wrong codes"),
        "{}",
        right.body
    );
    assert!(right.header("set-cookie").is_none());
    let page = get(&client, app, &link).await;
    shows_nothing_of_the_step(&page);
    assert!(
        !page.has("input[name=code]"),
        "a locked code is not asked for"
    );

    // A new code opens a new count.
    assert_eq!(send_code(&case, &client, &link).await.status, 303);
    let second = case.newest_code().await;
    assert_eq!(check(&case, &client, &link, &second).await.status, 303);
    assert_eq!(get(&client, app, &link).await.first("h2"), "Bank check");
}

#[tokio::test]
async fn an_expired_code_is_refused() {
    let case = case().await;
    let app = &case.app;
    let (link, client, code) = case.asked().await;
    app.clock.advance(Duration::from_secs(601));
    let late = check(&case, &client, &link, &code).await;
    assert_eq!(late.status, 422);
    assert!(
        late.first("[role=alert]").contains("No code is waiting"),
        "{}",
        late.body
    );
    shows_nothing_of_the_step(&get(&client, app, &link).await);
}

#[tokio::test]
async fn at_most_three_codes_are_sent_an_hour() {
    let case = case().await;
    let app = &case.app;
    // Lives past the hour the test waits.
    let link = app.link_for(case.id, "reviewer", 7200).await;
    let client = app.client();
    for _ in 0..3 {
        assert_eq!(send_code(&case, &client, &link).await.status, 303);
    }
    let fourth = send_code(&case, &client, &link).await;
    assert_eq!(fourth.status, 429);
    assert!(
        fourth.first(".code-sends").contains("3 codes were sent"),
        "{}",
        fourth.body
    );
    assert!(!fourth.has("input[value=send]"));
    let queued = store::mails::of_instance(&app.db, case.id, 100)
        .await
        .unwrap();
    assert_eq!(queued.iter().filter(|m| m.kind == "code").count(), 3);
    // Only the newest of the three waiting is sent: the others' codes were replaced.
    case.send_emails().await;
    let codes = case.smtp.received().into_iter();
    assert_eq!(
        codes
            .filter(|e| code_in(&e.part("text/plain")).is_some())
            .count(),
        1
    );

    app.clock.advance(Duration::from_secs(3601));
    assert_eq!(send_code(&case, &client, &link).await.status, 303);
}

#[tokio::test]
async fn one_links_code_opens_no_other_link() {
    let case = case().await;
    let app = &case.app;
    let first = app.link(case.id, Some("reviewer")).await;
    let second = app.link_for(case.id, "reviewer", 7200).await;
    assert_ne!(first, second);
    let client = app.client();
    assert_eq!(send_code(&case, &client, &first).await.status, 303);
    let code = case.newest_code().await;
    assert_eq!(check(&case, &client, &first, &code).await.status, 303);
    assert_eq!(get(&client, app, &first).await.first("h2"), "Bank check");

    // The same browser, the other link: asked for its own code; the first's does not work.
    let other = get(&client, app, &second).await;
    shows_nothing_of_the_step(&other);
    let history = events(app, case.id).await;
    assert_eq!(post(&client, app, &second, &ANSWER).await.status, 403);
    assert_eq!(events(app, case.id).await, history);
    assert_eq!(check(&case, &client, &second, &code).await.status, 422);
    shows_nothing_of_the_step(&get(&client, app, &second).await);
}

#[tokio::test]
async fn the_code_is_nowhere_in_the_database_in_clear() {
    let case = case().await;
    let app = &case.app;
    let (link, client, code) = case.asked().await;
    let dump = dump(&app.database.url).await;
    assert!(
        dump.contains("rosa@review.example"),
        "the dump reads values"
    );
    // As a value of its own: hex hashes may hold any six digits inside a longer run.
    let alone = dump
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|word| *word == code)
        .count();
    assert_eq!(alone, 0, "the code {code} is stored in clear");
    assert_eq!(check(&case, &client, &link, &code).await.status, 303);
}

/// Every value of every table, as text.
async fn dump(url: &str) -> String {
    let postgres = url.starts_with("postgres");
    let (pool, tables) = crate::helpers::tables_at(url).await;
    let mut out = String::new();
    for table in tables {
        // Names from the catalogue, not input; a row as text on PostgreSQL, each value as text
        // (a blob as hex) on SQLite.
        let sql = if postgres {
            format!("SELECT t::text FROM \"{table}\" t")
        } else {
            let columns: Vec<String> =
                sqlx::query(&format!("SELECT name FROM pragma_table_info('{table}')"))
                    .fetch_all(&pool)
                    .await
                    .unwrap()
                    .iter()
                    .map(|r| r.get::<String, _>(0))
                    .collect();
            let each: Vec<String> = columns
                .iter()
                .map(|c| {
                    format!(
                        "COALESCE(CASE WHEN typeof(\"{c}\") = 'blob' THEN hex(\"{c}\") \
                         ELSE CAST(\"{c}\" AS TEXT) END, '')"
                    )
                })
                .collect();
            format!("SELECT {} FROM \"{table}\"", each.join(" || ',' || "))
        };
        for row in sqlx::query(&sql).fetch_all(&pool).await.unwrap() {
            out.push_str(&row.get::<String, _>(0));
            out.push('\n');
        }
    }
    pool.close().await;
    out
}

#[tokio::test]
async fn a_file_an_earlier_step_brought_is_not_downloaded_before_the_code() {
    let app = crate::helpers::spawn(Flood::Memory).await;
    let id = crate::uploads::started(
        &app,
        "form@supplier: Supplier details | Company*, Certificate* (file, pdf)\n\
         review@buyer: Check the certificate | show 1 | verify email",
    )
    .await;
    let supplier = app.link(id, Some("supplier")).await;
    let certificate = crate::uploads::pdf(4 << 10);
    let posted = crate::uploads::upload(
        &app,
        &supplier,
        &[("_step", "1"), ("company", "Acme")],
        &[("certificate", "certificate.pdf", &certificate)],
    )
    .await;
    assert_eq!(posted.status, 303, "{}", posted.body);
    let (pool, _) = crate::helpers::tables_at(&app.database.url).await;
    let file: i64 = sqlx::query_scalar("SELECT id FROM files")
        .fetch_one(&pool)
        .await
        .unwrap();
    let buyer = app.link(id, Some("buyer")).await;
    let keys = store::keys::load_or_create(&app.db).await.unwrap();
    let token = buyer.trim_start_matches(orchestra::http::doorway::PREFIX);
    let href = orchestra::http::doorway::download_path(&keys, token, file);
    let refused = get(&app.client(), &app, &href).await;
    assert_eq!(refused.status, 404, "the one refusal, before the code");
    assert!(!refused.body.contains("%PDF"));
}

#[tokio::test]
async fn a_start_that_leaves_a_code_step_without_an_address_warns() {
    use crate::helpers::serve;
    use crate::mail::binary;
    let database = crate::helpers::fresh_database().await;
    let db = &database.url;
    serve::cli(env!("CARGO_BIN_EXE_orchestra"), db, &["init"]);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bank_check.txt");
    std::fs::write(&file, DEFINITION).unwrap();
    let file = file.display().to_string();
    let (code, _, err) = binary(
        db,
        &[
            "workflow",
            "create",
            "bank_check",
            "--label",
            "Bank check",
            "--file",
            &file,
        ],
        &[],
    );
    assert_eq!(code, 0, "{err}");
    let start = [
        "instance",
        "start",
        "bank_check",
        "--contact",
        "supplier=sam@supplier.example",
    ];
    for (lang, words) in [
        (
            "en",
            "Warning: reviewer must type a code emailed to their address before step 2",
        ),
        (
            "fr",
            "Attention\u{202F}: reviewer doit saisir un code envoyé à son adresse avant l'étape 2",
        ),
    ] {
        let (code, out, err) = binary(db, &start, &[("ORCHESTRA_LANG", lang)]);
        assert_eq!(code, 0, "{err}");
        assert!(out.trim().parse::<i64>().is_ok(), "the id alone: {out:?}");
        assert!(err.contains(words), "{lang}: {err:?}");
    }
    let both = [
        "instance",
        "start",
        "bank_check",
        "--contact",
        "supplier=sam@supplier.example",
        "--contact",
        "reviewer=rosa@review.example",
    ];
    let (code, _, err) = binary(db, &both, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("code emailed"), "{err:?}");

    // The admin form's page after the start says it too.
    let app = spawn_now(Flood::Memory).await;
    let definition = orchestra::domain::workflow::Definition::parse(DEFINITION).unwrap();
    let workflow =
        store::workflows::create(&app.db, "bank_check", "Bank check", &definition.to_json())
            .await
            .unwrap()
            .unwrap()
            .to_string();
    let client = app.admin_client().await;
    let form = get(
        &client,
        &app,
        &format!("/admin/instances/new?workflow={workflow}"),
    )
    .await;
    let started = post(
        &client,
        &app,
        "/admin/instances/new",
        &[
            ("csrf", &form.csrf()),
            ("workflow", &workflow),
            ("title", "Acme"),
            ("email.supplier", "sam@supplier.example"),
            ("lang.supplier", "en"),
            ("email.reviewer", ""),
            ("lang.reviewer", "en"),
        ],
    )
    .await;
    assert_eq!(started.status, 303, "{}", started.body);
    let landed = get(&client, &app, &started.location()).await;
    assert!(
        landed
            .body
            .contains("someone it asks has none: they cannot answer it"),
        "{}",
        landed.body
    );
}
