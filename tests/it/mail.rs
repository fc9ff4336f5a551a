//! Issue 22's emails, through a real SMTP server on loopback: a participant with an address is
//! emailed their link when their step starts, in their language; the emailed link answers the
//! step; reminders and deadlines happen at their times; with the server down the emails wait and
//! go once it is back; a rolled-back answer sends nothing; two senders send each email once.

use orchestra::domain::instance::{self, Actor, Refusal};
use orchestra::domain::mail::{ContactInput, Mailer, Part, send};
use orchestra::store::{self, mails};

use crate::helpers::{Flood, Smtp, TestApp, answer_step, events, spawn_now, state_of};

const FROM: &str = "Orchestra <orchestra@example.org>";

const SUPPLIER: [(&str, &str); 4] = [
    ("company", "Acme & Sons"),
    ("contact_email", "buyer@acme.example"),
    ("yearly_volume", "1200"),
    ("notes", ""),
];

pub(crate) fn contact(participant: &str, email: &str, name: &str, lang: &str) -> ContactInput {
    ContactInput {
        participant: participant.into(),
        email: email.into(),
        name: name.into(),
        lang: lang.into(),
    }
}

/// Starts an instance of a workflow (by name) with contacts, as an administrator would.
pub(crate) async fn start_with(
    app: &TestApp,
    workflow: &str,
    contacts: &[ContactInput],
) -> Result<i64, Vec<Refusal>> {
    let w = store::workflows::by_name(&app.db, workflow)
        .await
        .unwrap()
        .expect("the workflow exists");
    instance::start(
        &app.db,
        &instance::Start {
            contacts,
            ..instance::Start::new(w.id, "Acme onboarding", &Actor::Admin("ada".into()))
        },
    )
    .await
    .map_err(|e| e.refusals().unwrap())
}

/// One run of the sender at `now` through `mailer`.
pub(crate) async fn run(app: &TestApp, mailer: Option<&Mailer>, now: i64) -> send::Run {
    let site = app.state.site.get().await;
    send::run_once(&app.db, &app.state.versions, &site, mailer, now)
        .await
        .unwrap()
}

async fn workflow(app: &TestApp, name: &str, text: &str) {
    let definition = orchestra::domain::workflow::Definition::parse(text).unwrap();
    store::workflows::create(&app.db, name, name, &definition.to_json())
        .await
        .unwrap();
}

#[tokio::test]
async fn each_participant_is_emailed_their_link_in_their_language_and_it_answers_their_step() {
    let app = spawn_now(Flood::Memory).await;
    let smtp = Smtp::start();
    let mailer = Mailer::new(&smtp.url(), FROM).unwrap();
    let id = start_with(
        &app,
        "supplier_onboarding",
        &[
            contact("supplier", "sam@supplier.example", "Sam Supplier", "en"),
            contact("reviewer", "rosa@review.example", "Rosa", "fr"),
        ],
    )
    .await
    .unwrap();

    // Without an SMTP server nothing goes, and nothing is lost.
    assert_eq!(run(&app, None, store::now()).await.sent, 0);
    let sent = run(&app, Some(&mailer), store::now()).await;
    assert_eq!((sent.sent, sent.skipped), (1, 0), "{sent:?}");
    let first = smtp.received();
    assert_eq!(
        first.len(),
        1,
        "only the first step's participant is emailed"
    );
    let email = &first[0];
    assert_eq!(email.to, ["sam@supplier.example"]);
    assert_eq!(email.subject(), "Supplier details – Acme onboarding");
    let text = email.part("text/plain");
    assert!(text.starts_with("Hello Sam Supplier,"), "{text}");
    assert!(
        text.contains("asks you to answer a step of \"Acme onboarding\""),
        "{text}"
    );
    assert!(text.contains("This link works until"), "{text}");
    let html = email.part("text/html");
    assert!(html.contains("<html lang=\"en\">"), "{html}");
    assert!(html.contains("Open your step"), "{html}");
    assert!(email.header("To").unwrap().contains("Sam Supplier"));

    // Nothing is sent twice.
    assert_eq!(run(&app, Some(&mailer), store::now()).await.sent, 0);

    let client = app.client();
    let answered = answer_step(&client, &app, &email.link_path(), &SUPPLIER).await;
    assert_eq!(answered.status, 200, "the emailed link answers the step");
    assert_eq!(state_of(&app, id).await, ("active".into(), 1));

    assert_eq!(run(&app, Some(&mailer), store::now()).await.sent, 1);
    let second = smtp.received();
    assert_eq!(second.len(), 2);
    let email = &second[1];
    assert_eq!(email.to, ["rosa@review.example"]);
    assert_eq!(email.subject(), "Vérifier le fournisseur – Acme onboarding");
    let text = email.part("text/plain");
    assert!(text.starts_with("Bonjour Rosa,"), "{text}");
    assert!(text.contains("vous demande de répondre"), "{text}");
    assert!(email.part("text/html").contains("<html lang=\"fr\">"));
    let done = answer_step(
        &client,
        &app,
        &email.link_path(),
        &[("decision", "approve"), ("comment", "")],
    )
    .await;
    assert_eq!(done.status, 200);
    assert_eq!(state_of(&app, id).await.0, "complete");

    // The history says who was emailed, at which step.
    let lines = events(&app, id).await;
    let emailed: Vec<(i64, &str)> = lines
        .iter()
        .filter(|(_, _, e)| e == "emailed")
        .map(|(s, _, _)| (*s, "emailed"))
        .collect();
    assert_eq!(emailed, [(0, "emailed"), (1, "emailed")], "{lines:?}");
    // Each emailed link has its record (a keyed hash), issued by the sender.
    let records = store::links::list(&app.db, id).await.unwrap();
    assert_eq!(records.len(), 2);
    assert!(records.iter().all(|l| l.issued_by == "mail"));

    // No address, no link in a log line or a row of the queue.
    let logs = app.logs();
    for secret in [
        "sam@supplier.example",
        "rosa@review.example",
        second[0].link_path().rsplit('/').next().unwrap(),
        second[1].link_path().rsplit('/').next().unwrap(),
    ] {
        assert!(!logs.contains(secret), "a log line holds {secret}");
    }
    let rows = format!("{:?}", mails::of_instance(&app.db, id, 50).await.unwrap());
    assert!(
        !rows.contains("/interaction/") && !rows.contains('@'),
        "{rows}"
    );
}

#[tokio::test]
async fn contacts_are_checked_at_entry_and_a_refused_start_saves_nothing() {
    let app = spawn_now(Flood::Memory).await;
    let before = store::instances::recent(&app.db, 10).await.unwrap().len();
    let refused = start_with(
        &app,
        "supplier_onboarding",
        &[
            contact("supplier", "not an address", "", "en"),
            contact("reviewer", "rosa@review.example", "Rosa", "de"),
            contact("stranger", "x@example.org", "", ""),
        ],
    )
    .await
    .unwrap_err();
    let parts: Vec<(String, Part)> = refused
        .iter()
        .map(|r| match r {
            Refusal::Contact(c) => (c.participant.clone(), c.part),
            other => panic!("not a contact's refusal: {other:?}"),
        })
        .collect();
    assert_eq!(
        parts,
        [
            ("supplier".into(), Part::Email),
            ("reviewer".into(), Part::Lang),
            ("stranger".into(), Part::Participant),
        ]
    );
    assert_eq!(
        store::instances::recent(&app.db, 10).await.unwrap().len(),
        before,
        "nothing was started"
    );
    // A blank row is no contact; a missing language is English.
    let id = start_with(
        &app,
        "supplier_onboarding",
        &[
            contact("supplier", "  ", "", ""),
            contact("reviewer", "rosa@review.example", "", ""),
        ],
    )
    .await
    .unwrap();
    let kept = mails::contacts_of(&app.db, id).await.unwrap();
    assert_eq!(kept.len(), 1);
    assert_eq!(
        (kept[0].participant.as_str(), kept[0].lang.as_str()),
        ("reviewer", "en")
    );
}

#[tokio::test]
async fn with_the_smtp_server_down_emails_wait_and_go_once_it_is_back() {
    let app = spawn_now(Flood::Memory).await;
    // A port nobody listens on: the server is down.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let mailer = Mailer::new(&format!("smtp://{addr}"), FROM).unwrap();
    let id = start_with(
        &app,
        "contract_review",
        &[
            contact("legal", "lee@legal.example", "Lee", "en"),
            contact("finance", "fay@finance.example", "Fay", "fr"),
        ],
    )
    .await
    .unwrap();
    let now = store::now();
    let down = run(&app, Some(&mailer), now).await;
    assert_eq!(
        (down.sent, down.retried, down.failed),
        (0, 2, 0),
        "{down:?}"
    );
    // Not due again before its wait, and no link record left behind for an email not sent.
    assert_eq!(run(&app, Some(&mailer), now + 1).await.claimed, 0);
    assert!(store::links::list(&app.db, id).await.unwrap().is_empty());
    let (oldest, _) = mails::waiting(&app.db).await.unwrap();
    assert!(
        oldest.is_some_and(|at| at > now),
        "they wait, due again later"
    );

    // The server comes back on that port; the emails go at their next try.
    let smtp = Smtp::on(std::net::TcpListener::bind(addr).unwrap());
    let back = run(&app, Some(&mailer), now + 120).await;
    assert_eq!(back.sent, 2, "{back:?}");
    let mut to: Vec<String> = smtp.received().iter().map(|r| r.to.join(",")).collect();
    to.sort();
    assert_eq!(to, ["fay@finance.example", "lee@legal.example"]);
    assert_eq!(mails::waiting(&app.db).await.unwrap().0, None);
}

#[tokio::test]
async fn a_step_reminds_at_its_times_and_expires_at_its_deadline() {
    let app = spawn_now(Flood::Memory).await;
    let smtp = Smtp::start();
    let mailer = Mailer::new(&smtp.url(), FROM).unwrap();
    workflow(
        &app,
        "sign_off",
        "review@legal: Sign the contract | remind 1h x2 | expires 5h\n\
         review@finance: Pay the deposit\n",
    )
    .await;
    let id = start_with(
        &app,
        "sign_off",
        &[contact("legal", "lee@legal.example", "Lee", "en")],
    )
    .await
    .unwrap();
    let t0 = store::now();
    assert_eq!(run(&app, Some(&mailer), t0).await.sent, 1, "the link");
    assert_eq!(run(&app, Some(&mailer), t0 + 1800).await.sent, 0, "not yet");
    assert_eq!(
        run(&app, Some(&mailer), t0 + 3601).await.sent,
        1,
        "the first reminder"
    );
    assert_eq!(run(&app, Some(&mailer), t0 + 3602).await.sent, 0);
    assert_eq!(
        run(&app, Some(&mailer), t0 + 7300).await.sent,
        1,
        "the second"
    );
    assert_eq!(
        run(&app, Some(&mailer), t0 + 11_000).await.sent,
        0,
        "x2: no third"
    );
    let got = smtp.received();
    assert_eq!(got.len(), 3);
    assert_eq!(
        got[1].subject(),
        "Reminder: Sign the contract – Acme onboarding"
    );
    assert!(
        got[1]
            .part("text/plain")
            .contains("still waiting for your answer")
    );
    // A reminder's link is fresh, and revokes none: the first one still answers.
    assert_ne!(got[0].link_path(), got[1].link_path());
    assert_eq!(state_of(&app, id).await, ("active".into(), 0));

    let lapsed = run(&app, Some(&mailer), t0 + 5 * 3600 + 1).await;
    assert_eq!(lapsed.lapsed, 1, "{lapsed:?}");
    assert_eq!(state_of(&app, id).await.0, "expired");
    let lines: Vec<String> = events(&app, id)
        .await
        .into_iter()
        .map(|(_, _, e)| e)
        .collect();
    assert_eq!(
        lines,
        ["started", "emailed", "reminded", "reminded", "expired"],
        "{lines:?}"
    );
    let ended = store::outbox::for_instance(&app.db, id).await.unwrap();
    let last = ended.last().unwrap();
    assert_eq!(
        (last.event.as_str(), last.state.as_deref()),
        ("instance.ended", Some("expired"))
    );
    // The emailed link of an expired instance answers nothing.
    let page = crate::helpers::get(&app.client(), &app, &got[0].link_path()).await;
    assert!(
        page.body.contains("expired before it was answered"),
        "{}",
        page.body
    );
}

#[tokio::test]
async fn a_step_answered_in_time_is_neither_reminded_nor_expired_and_then_next_moves_on() {
    let app = spawn_now(Flood::Memory).await;
    let smtp = Smtp::start();
    let mailer = Mailer::new(&smtp.url(), FROM).unwrap();
    workflow(
        &app,
        "two_steps",
        "review@legal: Sign | remind 1h x3 | expires 2h then next\n\
         review@finance: Pay | expires 3h\n",
    )
    .await;
    let contacts = [
        contact("legal", "lee@legal.example", "", "en"),
        contact("finance", "fay@finance.example", "", "en"),
    ];
    // One instance answered at once: its reminders and deadline are set aside.
    let answered = start_with(&app, "two_steps", &contacts).await.unwrap();
    let t0 = store::now();
    assert_eq!(run(&app, Some(&mailer), t0).await.sent, 1);
    let link = smtp.received()[0].link_path();
    let page = answer_step(
        &app.client(),
        &app,
        &link,
        &[("decision", "approve"), ("comment", "")],
    )
    .await;
    assert_eq!(page.status, 200, "{}", page.body);
    // One left waiting: at two hours it moves on to finance, who is emailed.
    let waiting = start_with(&app, "two_steps", &contacts).await.unwrap();
    let later = run(&app, Some(&mailer), t0 + 2 * 3600 + 5).await;
    // The answered one: finance's link. The waiting one: legal's link (late, still due), its
    // first reminder, then its deadline moved it on (finance's link waits for the next run).
    assert_eq!(state_of(&app, answered).await, ("active".into(), 1));
    assert_eq!(state_of(&app, waiting).await, ("active".into(), 1));
    assert_eq!(later.lapsed, 1, "{later:?}");
    let next = run(&app, Some(&mailer), t0 + 2 * 3600 + 6).await;
    assert!(next.sent >= 1, "{next:?}");
    let to_finance = smtp
        .received()
        .iter()
        .filter(|r| r.to == ["fay@finance.example"])
        .count();
    assert_eq!(to_finance, 2, "each instance's finance step emailed once");
    let lines: Vec<String> = events(&app, waiting)
        .await
        .into_iter()
        .map(|(_, _, e)| e)
        .collect();
    assert!(lines.contains(&"step_expired".to_owned()), "{lines:?}");
    // The answered one was never reminded.
    let lines: Vec<String> = events(&app, answered)
        .await
        .into_iter()
        .map(|(_, _, e)| e)
        .collect();
    assert!(!lines.contains(&"reminded".to_owned()), "{lines:?}");
}

#[tokio::test]
async fn an_answer_that_rolls_back_queues_no_email() {
    let app = spawn_now(Flood::Memory).await;
    let id = start_with(
        &app,
        "supplier_onboarding",
        &[contact("reviewer", "rosa@review.example", "", "fr")],
    )
    .await
    .unwrap();
    let reviewer = orchestra::domain::workflow::Participant::parse("reviewer").unwrap();
    let next = [reviewer];
    let answer = store::instances::Answer {
        instance: id,
        step: 0,
        branch: "",
        answer_json: "{}",
        branches: &[String::new()],
        rejects: false,
        needed: 1,
        step_title: "Supplier details",
        kind: "form",
        participant: "supplier",
        then: store::instances::Then {
            step: Some(1),
            start: orchestra::domain::workflow::StepStart {
                participants: &next,
                ..Default::default()
            },
            ..Default::default()
        },
        on_reject: None,
        rounds: 5,
        notify: &[],
        files: &[],
        by: Default::default(),
    };
    let pool = sqlx::AnyPool::connect(&store::normalize_url(&app.database.url).unwrap().1)
        .await
        .unwrap();
    let mut tx = pool.begin().await.unwrap();
    let recorded = store::instances::record_answer_in(&mut tx, &answer)
        .await
        .unwrap();
    assert_eq!(recorded, store::instances::Recorded::Advanced);
    let queued: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM mails WHERE instance_id = $1")
        .bind(id)
        .fetch_one(&mut *tx)
        .await
        .unwrap();
    assert_eq!(
        queued, 1,
        "inside the transaction, the reviewer's email is queued"
    );
    tx.rollback().await.unwrap();
    assert!(
        mails::of_instance(&app.db, id, 10)
            .await
            .unwrap()
            .is_empty()
    );
    // Committed, it is there.
    store::instances::record_answer(&app.db, &answer)
        .await
        .unwrap();
    assert_eq!(mails::of_instance(&app.db, id, 10).await.unwrap().len(), 1);
}

#[tokio::test]
async fn two_senders_at_once_send_each_email_once() {
    let app = spawn_now(Flood::Memory).await;
    let smtp = Smtp::start();
    let mailer = Mailer::new(&smtp.url(), FROM).unwrap();
    for _ in 0..15 {
        start_with(
            &app,
            "contract_review",
            &[
                contact("legal", "lee@legal.example", "", "en"),
                contact("finance", "fay@finance.example", "", "en"),
            ],
        )
        .await
        .unwrap();
    }
    let now = store::now();
    let mut total = 0;
    // Two senders side by side, each on its own pool, as two processes on one database are.
    let other = orchestra::store::Db::connect(&app.database.url)
        .await
        .unwrap();
    let site = app.state.site.get().await;
    let versions = orchestra::domain::workflow::versions::Cache::default();
    for _ in 0..3 {
        let (a, b) = tokio::join!(
            run(&app, Some(&mailer), now),
            send::run_once(&other, &versions, &site, Some(&mailer), now)
        );
        total += a.sent + b.unwrap().sent;
    }
    assert_eq!(total, 30);
    assert_eq!(smtp.received().len(), 30, "each email once");
}

#[tokio::test]
async fn the_api_takes_contacts_shows_them_to_their_token_alone_and_sends_on_request() {
    use crate::api::{call, json, scoped, token};
    let app = spawn_now(Flood::Memory).await;
    let smtp = Smtp::start();
    let mailer = Mailer::new(&smtp.url(), FROM).unwrap();
    let a = token(&app, "crm", None, None).await;
    let all = scoped(&app, "auditor", Some(&["read"]), Some("all"), None).await;
    let before = store::instances::recent(&app.db, 100).await.unwrap().len();
    for (body, field) in [
        (
            r#"{"workflow":"contract_review","subject":{"title":"Lease"},"participants":{"legal":{"email":"not-an-address"}}}"#,
            "participants.legal.email",
        ),
        (
            r#"{"workflow":"contract_review","subject":{"title":"Lease"},"participants":{"legal":{"email":"lee@legal.example","lang":"de"}}}"#,
            "participants.legal.lang",
        ),
        (
            r#"{"workflow":"contract_review","subject":{"title":"Lease"},"participants":{"stranger":{"email":"x@example.org"}}}"#,
            "participants.stranger",
        ),
        (
            r#"{"workflow":"contract_review","subject":{"title":"Lease"},"participants":{"legal":{"name":"Lee"}}}"#,
            "participants.legal.email",
        ),
    ] {
        let page = call(&app, "POST", "/api/v1/instances", &a, Some(body)).await;
        assert_eq!(page.status, 422, "{}", page.body);
        assert_eq!(json(&page)["field"], field, "{}", page.body);
    }
    assert_eq!(
        store::instances::recent(&app.db, 100).await.unwrap().len(),
        before,
        "a refused start saves nothing"
    );

    let started = call(
        &app,
        "POST",
        "/api/v1/instances",
        &a,
        Some(
            r#"{"workflow":"contract_review","subject":{"title":"Lease"},
               "participants":{"legal":{"email":"lee@legal.example","name":"Lee","lang":"fr"}}}"#,
        ),
    )
    .await;
    assert_eq!(started.status, 201, "{}", started.body);
    let body = json(&started);
    assert_eq!(body["participants"]["legal"]["email"], "lee@legal.example");
    assert_eq!(body["participants"]["legal"]["lang"], "fr");
    let id = body["id"].as_i64().unwrap();
    let path = format!("/api/v1/instances/{id}");
    let own = call(&app, "GET", &path, &a, None).await;
    assert_eq!(json(&own)["participants"]["legal"]["name"], "Lee");
    let other = call(&app, "GET", &path, &all, None).await;
    assert_eq!(other.status, 200);
    assert!(
        json(&other).get("participants").is_none() && !other.body.contains("lee@legal.example"),
        "another token sees no address: {}",
        other.body
    );

    // The start's email, then one sent on request.
    assert_eq!(run(&app, Some(&mailer), store::now()).await.sent, 1);
    let links = format!("/api/v1/instances/{id}/links");
    let sent = call(
        &app,
        "POST",
        &links,
        &a,
        Some(r#"{"participant":"legal","send":true}"#),
    )
    .await;
    assert_eq!(sent.status, 202, "{}", sent.body);
    assert!(
        !sent.body.contains("/interaction/"),
        "no link in the answer"
    );
    assert_eq!(run(&app, Some(&mailer), store::now()).await.sent, 1);
    assert_eq!(smtp.received().len(), 2);
    assert_eq!(smtp.received()[1].to, ["lee@legal.example"]);
    let send = |body: &'static str| call(&app, "POST", &links, &a, Some(body));
    // finance has no address: nothing to send to.
    let none = send(r#"{"participant":"finance","send":true}"#).await;
    assert_eq!(none.status, 422, "{}", none.body);
    assert_eq!(json(&none)["field"], "participant");
    let with_ttl = send(r#"{"participant":"legal","send":true,"ttl_seconds":3600}"#).await;
    assert_eq!(json(&with_ttl)["field"], "ttl_seconds");

    // An emailed link counts toward the instance's daily cap of links, as an issued one does:
    // a token cannot flood a participant's inbox. Two link emails so far (the start's, one
    // asked for); with a cap of 3, one more, then 403 link_cap and nothing queued.
    app.set(&[("api.caps.links_per_instance_per_day", "3")])
        .await;
    let third = send(r#"{"participant":"legal","send":true}"#).await;
    assert_eq!(third.status, 202, "{}", third.body);
    let queued = mails::of_instance(&app.db, id, 50).await.unwrap().len();
    let over = send(r#"{"participant":"legal","send":true}"#).await;
    assert_eq!(over.status, 403, "{}", over.body);
    assert_eq!(json(&over)["error"], "link_cap");
    assert_eq!(
        mails::of_instance(&app.db, id, 50).await.unwrap().len(),
        queued
    );
}

#[tokio::test]
async fn the_start_form_lists_the_participants_keeps_what_was_typed_and_saves_contacts() {
    use crate::helpers::{get, post, with_lang};
    let app = spawn_now(Flood::Memory).await;
    let client = app.admin_client().await;
    let review = store::workflows::by_name(&app.db, "contract_review")
        .await
        .unwrap()
        .unwrap();
    let form = get(
        &client,
        &app,
        &format!("/admin/instances/new?workflow={}", review.id),
    )
    .await;
    assert_eq!(form.status, 200);
    let rows: Vec<String> = form
        .text(".contact-row .contact-who")
        .into_iter()
        .map(|t| t.trim().to_owned())
        .collect();
    assert_eq!(rows, ["legal", "finance"]);
    assert!(form.has("input[name='email.legal'][type=email]"));
    // The rows come in the administrator's language.
    let french = get(
        &client,
        &app,
        &with_lang(
            &format!("/admin/instances/new?workflow={}", review.id),
            "fr",
        ),
    )
    .await;
    assert!(
        french.body.contains("Courriels des participants"),
        "{}",
        french.body
    );

    let workflow = review.id.to_string();
    let csrf = form.csrf();
    let bad = post(
        &client,
        &app,
        "/admin/instances/new",
        &[
            ("csrf", &csrf),
            ("workflow", &workflow),
            ("title", "Lease 12"),
            ("body", "Kept"),
            ("email.legal", "lee at legal"),
            ("name.legal", "Lee"),
            ("lang.legal", "fr"),
            ("email.finance", "fay@finance.example"),
            ("lang.finance", "en"),
        ],
    )
    .await;
    assert_eq!(bad.status, 422);
    assert_eq!(
        bad.attr("input[name='email.legal']", "value").as_deref(),
        Some("lee at legal")
    );
    assert_eq!(
        bad.attr("input[name='name.legal']", "value").as_deref(),
        Some("Lee")
    );
    assert!(bad.has("select[name='lang.legal'] option[value=fr][selected]"));
    assert_eq!(
        bad.attr("input[name='email.finance']", "value").as_deref(),
        Some("fay@finance.example")
    );
    assert_eq!(
        bad.attr("input[name=title]", "value").as_deref(),
        Some("Lease 12")
    );
    assert!(
        bad.has("[data-field='email.legal']"),
        "the error is beside its field"
    );
    assert!(bad.has("input[name='email.legal'][aria-invalid=true]"));
    assert!(
        store::instances::recent(&app.db, 10)
            .await
            .unwrap()
            .is_empty(),
        "nothing saved"
    );

    // "Show its participants" shows another workflow's rows, keeping the title.
    let supplier = store::workflows::by_name(&app.db, "supplier_onboarding")
        .await
        .unwrap()
        .unwrap()
        .id
        .to_string();
    let chosen = post(
        &client,
        &app,
        "/admin/instances/new",
        &[
            ("csrf", &csrf),
            ("workflow", &supplier),
            ("title", "Lease 12"),
            ("choose", "1"),
        ],
    )
    .await;
    assert_eq!(chosen.status, 200);
    assert!(chosen.has("input[name='email.supplier']") && !chosen.has("input[name='email.legal']"));
    assert!(
        store::instances::recent(&app.db, 10)
            .await
            .unwrap()
            .is_empty(),
        "nothing started"
    );

    let good = post(
        &client,
        &app,
        "/admin/instances/new",
        &[
            ("csrf", &csrf),
            ("workflow", &workflow),
            ("title", "Lease 12"),
            ("email.legal", "lee@legal.example"),
            ("name.legal", "Lee"),
            ("lang.legal", "fr"),
            ("email.finance", ""),
            ("lang.finance", "en"),
        ],
    )
    .await;
    assert_eq!(good.status, 303, "{}", good.body);
    let landed = get(&client, &app, &with_lang(&good.location(), "en")).await;
    // This app has no SMTP server: the page says the emails wait (mail_headers.rs has both).
    assert!(
        landed
            .body
            .contains("emails wait and will go once one is set"),
        "{}",
        landed.body
    );
    let id = store::instances::recent(&app.db, 1).await.unwrap()[0].id;
    let kept = mails::contacts_of(&app.db, id).await.unwrap();
    assert_eq!(kept.len(), 1);
    assert_eq!(
        (
            kept[0].participant.as_str(),
            kept[0].email.as_str(),
            kept[0].name.as_str(),
            kept[0].lang.as_str()
        ),
        ("legal", "lee@legal.example", "Lee", "fr")
    );
    let page = get(
        &client,
        &app,
        &with_lang(&format!("/admin/instances/{id}"), "en"),
    )
    .await;
    assert!(
        page.text(".emails .contacts li")
            .join(" ")
            .contains("Lee <lee@legal.example>")
    );
    assert_eq!(page.text("table.emails .mail-state"), ["Waiting"]);
    // Send by email, from the page: for legal (an address), not finance (none).
    let csrf = page.csrf();
    let sent = post(
        &client,
        &app,
        &format!("/admin/instances/{id}/links"),
        &[
            ("csrf", &csrf),
            ("participant", "legal"),
            ("ttl", "7d"),
            ("send", "1"),
        ],
    )
    .await;
    assert_eq!(sent.status, 303);
    assert_eq!(mails::of_instance(&app.db, id, 10).await.unwrap().len(), 2);
    let refused = post(
        &client,
        &app,
        &format!("/admin/instances/{id}/links"),
        &[
            ("csrf", &csrf),
            ("participant", "finance"),
            ("ttl", "7d"),
            ("send", "1"),
        ],
    )
    .await;
    assert_eq!(refused.status, 422);
    assert!(
        refused.body.contains("finance has no email address"),
        "{}",
        refused.body
    );
    assert_eq!(mails::of_instance(&app.db, id, 10).await.unwrap().len(), 2);
}

#[tokio::test]
async fn the_status_report_says_when_emails_cannot_go() {
    let app = spawn_now(Flood::Memory).await;
    let report = |state: &orchestra::http::AppState| {
        let state = state.clone();
        async move { orchestra::http::admin::status::report(&state).await }
    };
    let mail = |r: &orchestra::domain::status::Report| {
        r.checks
            .iter()
            .find(|c| c.id == "mail")
            .map(|c| (c.severity, c.value.render(orchestra::i18n::Lang::En)))
    };
    // No server, no address: nothing to say.
    assert_eq!(mail(&report(&app.state).await), None);
    start_with(
        &app,
        "contract_review",
        &[contact("legal", "lee@legal.example", "", "en")],
    )
    .await
    .unwrap();
    let (severity, value) = mail(&report(&app.state).await).unwrap();
    assert_eq!(severity, orchestra::domain::status::Severity::Warning);
    assert!(value.contains("No SMTP server is set"), "{value}");

    // A server set that does not answer: said, and the email waits.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let down = app
        .state
        .clone()
        .with_mailer(Some(Mailer::new(&format!("smtp://{addr}"), FROM).unwrap()));
    let site = app.state.site.get().await;
    let now = store::now();
    send::run_once(
        &app.db,
        &app.state.versions,
        &site,
        down.mailer.as_deref(),
        now,
    )
    .await
    .unwrap();
    let (severity, value) = mail(&report(&down).await).unwrap();
    assert_eq!(severity, orchestra::domain::status::Severity::Warning);
    assert!(
        value.contains(&format!("The SMTP server {addr} does not answer")),
        "{value}"
    );

    // Back: the email goes, and all is well.
    let smtp = Smtp::on(std::net::TcpListener::bind(addr).unwrap());
    send::run_once(
        &app.db,
        &app.state.versions,
        &site,
        down.mailer.as_deref(),
        now + 120,
    )
    .await
    .unwrap();
    assert_eq!(smtp.received().len(), 1);
    let (severity, value) = mail(&report(&down).await).unwrap();
    assert_eq!(severity, orchestra::domain::status::Severity::Ok, "{value}");
    assert!(value.contains("none waits"), "{value}");
}

/// Runs the binary with the test's database and these variables; (exit code, stdout, stderr).
pub(crate) fn binary(database: &str, args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_orchestra"))
        .args(args)
        .env_clear()
        .env("ORCHESTRA_DATABASE_URL", database)
        .env("ORCHESTRA_LANG", "en")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test]
async fn the_binary_emails_from_serve_and_from_cron_and_never_prints_the_smtp_password() {
    use crate::helpers::serve;
    let database = crate::helpers::fresh_database().await;
    let db = &database.url;
    serve::cli(env!("CARGO_BIN_EXE_orchestra"), db, &["init"]);
    let smtp = Smtp::start();
    let url = smtp.url();
    let with_smtp = [
        ("ORCHESTRA_SMTP_URL", url.as_str()),
        ("ORCHESTRA_MAIL_FROM", FROM),
    ];

    // The CLI's spelling, and its refusals.
    let (code, _, err) = binary(
        db,
        &["instance", "start", "contract_review", "--contact", "legal"],
        &[],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("PARTICIPANT=VALUE"), "{err}");
    let (code, _, err) = binary(
        db,
        &[
            "instance",
            "start",
            "contract_review",
            "--contact",
            "legal=nope",
            "--contact-lang",
            "finance=fr",
        ],
        &[],
    );
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = binary(
        db,
        &[
            "instance",
            "start",
            "contract_review",
            "--contact",
            "legal=nope",
        ],
        &[],
    );
    assert_eq!(code, 2);
    assert!(err.starts_with("legal: Enter an email address"), "{err}");
    let (code, out, err) = binary(
        db,
        &[
            "instance",
            "start",
            "contract_review",
            "--subject",
            "Lease",
            "--contact",
            "legal=lee@legal.example",
            "--contact-name",
            "legal=Lee",
            "--contact-lang",
            "legal=fr",
            "--contact",
            "finance=fay@finance.example",
        ],
        &[],
    );
    assert_eq!(code, 0, "{err}");
    let id = out.trim().to_owned();

    // `serve` sends what is due, off every request.
    let metrics = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let bind = metrics.to_string();
    let mut env = with_smtp.to_vec();
    env.push(("ORCHESTRA_METRICS_BIND", bind.as_str()));
    let served = serve::serve(env!("CARGO_BIN_EXE_orchestra"), db, &env);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while smtp.received().len() < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "serve sent {} of 2",
            smtp.received().len()
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let mut subjects: Vec<String> = smtp.received().iter().map(|r| r.subject()).collect();
    subjects.sort();
    assert_eq!(
        subjects,
        [
            "Approuver le contrat – Lease",
            "Approve the contract – Lease"
        ]
    );
    // The run's figures are added once the run ends, a moment after the server took both.
    let figures = loop {
        let figures = reqwest::get(format!("http://{bind}/metrics"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        if figures.contains("orchestra_mails_total{result=\"sent\"} 2") {
            break figures;
        }
        assert!(std::time::Instant::now() < deadline, "{figures}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    assert!(figures.contains("orchestra_mails_waiting 0"), "{figures}");
    // The business figures are wired into the binary's endpoint.
    for series in [
        "orchestra_emails_total{kind=\"link\",outcome=\"sent\"} 2",
        "orchestra_instances{workflow=\"contract_review\",state=\"active\"} 1",
    ] {
        assert!(figures.contains(series), "{series} in {figures}");
    }
    assert!(
        figures.contains("orchestra_webhook_deliveries_total{result=\"delivered\"} 0"),
        "{figures}"
    );
    drop(served);

    // `link issue --send`, then `cron` sends it where no server runs.
    let (code, out, err) = binary(
        db,
        &["link", "issue", &id, "--participant", "legal", "--send"],
        &[],
    );
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    assert!(err.contains("emailed"), "{err}");
    let (code, _, err) = binary(
        db,
        &[
            "link",
            "issue",
            &id,
            "--participant",
            "legal",
            "--send",
            "--ttl",
            "1h",
        ],
        &[],
    );
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = binary(db, &["cron"], &with_smtp);
    assert_eq!(code, 0, "{err}");
    assert_eq!(smtp.received().len(), 3);
    assert_eq!(smtp.received()[2].to, ["lee@legal.example"]);

    // A password in the URL is never printed: not by the status report, not by a refusal.
    let secret = "s3cr3t-pa55";
    let with_password = format!("smtp://mailer:{secret}@{}", smtp.addr);
    let (_, out, err) = binary(
        db,
        &["status"],
        &[
            ("ORCHESTRA_SMTP_URL", with_password.as_str()),
            ("ORCHESTRA_MAIL_FROM", FROM),
        ],
    );
    assert!(out.contains("Email"), "{out}");
    assert!(!out.contains(secret) && !err.contains(secret), "{out}{err}");
    let bad = format!("smtpx://mailer:{secret}@mail.example.org");
    let (code, out, err) = binary(
        db,
        &["status"],
        &[
            ("ORCHESTRA_SMTP_URL", bad.as_str()),
            ("ORCHESTRA_MAIL_FROM", FROM),
        ],
    );
    assert_eq!(code, 2);
    assert!(err.contains("ORCHESTRA_SMTP_URL must be"), "{err}");
    assert!(!out.contains(secret) && !err.contains(secret), "{out}{err}");
    let (code, _, err) = binary(db, &["status"], &[("ORCHESTRA_SMTP_URL", url.as_str())]);
    assert_eq!(code, 2);
    assert!(err.contains("Set both"), "{err}");
}

/// A database as the main before the emails left it (migrations 1 to 16): a workflow and a
/// running instance. After the upgrade the instance is answered and moves on (no contact, so no
/// email), and a new start with contacts queues its participants' emails.
#[tokio::test]
async fn a_database_made_before_the_emails_upgrades_and_keeps_working() {
    let database = crate::helpers::fresh_database().await;
    let pool = crate::helpers::schema_before(&database.url, 17).await;
    let definition = orchestra::domain::workflow::Definition::parse(
        "review@legal: Approve | remind 1d\nreview@finance: Pay\n",
    )
    .unwrap()
    .to_json();
    for (sql, arg) in [
        (
            "INSERT INTO workflows (name, label, created_at, updated_at) VALUES ('two', 'Two', 1700000000, 1700000000)",
            None,
        ),
        (
            "INSERT INTO workflow_versions (workflow_id, number, definition, created_at) VALUES (1, 1, $1, 1700000000)",
            Some(definition.as_str()),
        ),
        (
            "INSERT INTO instances (workflow_id, version_id, subject_title, subject_body, token, step_index, state, created_at, updated_at) VALUES (1, 1, 'Old', '', 'instance-token', 0, 'active', 1700000000, 1700000000)",
            None,
        ),
        (
            "INSERT INTO history (instance_id, step_index, branch, event, answer, at) VALUES (1, 0, '', 'started', '{}', 1700000000)",
            None,
        ),
    ] {
        let mut q = sqlx::query(sql);
        if let Some(a) = arg {
            q = q.bind(a);
        }
        q.execute(&pool).await.unwrap();
    }
    pool.close().await;
    let app = crate::helpers::spawn_on(database, |db, clock| {
        std::sync::Arc::new(orchestra::limits::flood::SqlFlood::new(
            db.clone(),
            4096,
            clock,
        ))
    })
    .await;
    let smtp = Smtp::start();
    let mailer = Mailer::new(&smtp.url(), FROM).unwrap();
    let link = app.link(1, Some("legal")).await;
    let page = answer_step(
        &app.client(),
        &app,
        &link,
        &[("decision", "approve"), ("comment", "")],
    )
    .await;
    assert_eq!(page.status, 200);
    assert_eq!(state_of(&app, 1).await, ("active".into(), 1));
    assert_eq!(
        run(&app, Some(&mailer), store::now()).await.claimed,
        0,
        "no contact, no email"
    );
    let id = start_with(
        &app,
        "two",
        &[contact("legal", "lee@legal.example", "", "en")],
    )
    .await
    .unwrap();
    assert_eq!(run(&app, Some(&mailer), store::now()).await.sent, 1);
    assert_eq!(
        mails::of_instance(&app.db, id, 10).await.unwrap().len(),
        2,
        "the link and its reminder"
    );
}

#[tokio::test]
async fn a_silent_smtp_server_slows_no_request() {
    let app = spawn_now(Flood::Memory).await;
    // A server that takes the connection and never says a word.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = silent.local_addr().unwrap();
    let (accepted_tx, accepted_rx) = tokio::sync::oneshot::channel();
    let holder = tokio::spawn(async move {
        let (conn, _) = silent.accept().await.unwrap();
        let _ = accepted_tx.send(());
        tokio::time::sleep(std::time::Duration::from_secs(60)).await;
        drop(conn);
    });
    let id = start_with(
        &app,
        "supplier_onboarding",
        &[contact("supplier", "sam@supplier.example", "", "en")],
    )
    .await
    .unwrap();
    let mailer = Mailer::new(&format!("smtp://{addr}"), FROM).unwrap();
    let sender = {
        let state = app.state.clone();
        tokio::spawn(async move {
            let site = state.site.get().await;
            send::run_once(
                &state.db,
                &state.versions,
                &site,
                Some(&mailer),
                store::now(),
            )
            .await
        })
    };
    accepted_rx.await.unwrap();
    // The sender waits on the server; a visitor and an administrator are answered meanwhile.
    let link = app.link(id, Some("supplier")).await;
    let page = crate::helpers::get(&app.client(), &app, &link).await;
    assert_eq!(page.status, 200);
    let answered = answer_step(&app.client(), &app, &link, &SUPPLIER).await;
    assert_eq!(answered.status, 200);
    assert!(
        !sender.is_finished(),
        "the sender is still waiting on the silent server"
    );
    sender.abort();
    holder.abort();
}

#[tokio::test]
async fn an_emailed_link_lives_until_its_steps_deadline_when_that_is_later() {
    let app = spawn_now(Flood::Memory).await;
    let smtp = Smtp::start();
    let mailer = Mailer::new(&smtp.url(), FROM).unwrap();
    workflow(
        &app,
        "long",
        "review@legal: Sign | expires 30d\nreview@finance: Pay\n",
    )
    .await;
    let contacts = [
        contact("legal", "lee@legal.example", "", "en"),
        contact("finance", "fay@finance.example", "", "en"),
    ];
    let id = start_with(&app, "long", &contacts).await.unwrap();
    let now = store::now();
    run(&app, Some(&mailer), now).await;
    let default_ttl = app.state.site.get().await.settings.default_link_ttl as i64;
    assert!(
        default_ttl < 30 * 86_400,
        "the default is shorter than the deadline"
    );
    let link = &store::links::list(&app.db, id).await.unwrap()[0];
    assert!(
        (link.expires - (now + 30 * 86_400)).abs() <= 5,
        "until the deadline: {} vs {}",
        link.expires,
        now + 30 * 86_400
    );
    // The next step has no deadline: the site's default.
    let page = answer_step(
        &app.client(),
        &app,
        &smtp.received()[0].link_path(),
        &[("decision", "approve"), ("comment", "")],
    )
    .await;
    assert_eq!(page.status, 200);
    let later = store::now() + 1;
    run(&app, Some(&mailer), later).await;
    let link = &store::links::list(&app.db, id).await.unwrap()[0];
    assert_eq!(link.participant, "finance");
    assert_eq!(link.expires, later + default_ttl);
}
