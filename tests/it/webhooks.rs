//! Issue 22's outbox: a message per change, written with the change (an instance started, a
//! step answered, an instance ended, a payment confirmed), none for a change refused or rolled
//! back, and never a link, handle, secret or answer in what a receiver would be sent.

use orchestra::domain::delivery::{self, Topic};
use orchestra::domain::links::Actor;
use orchestra::store::outbox::{self, MessageRow};

use crate::helpers::{Flood, TestApp, answer_step, get, spawn, state_of};

const SUPPLIER: [(&str, &str); 4] = [
    ("company", "Acme & Sons <Ltd>"),
    ("contact_email", "buyer@acme.example"),
    ("yearly_volume", "1200.5"),
    ("notes", "Deliveries on Tuesdays.\nNo pallets."),
];

async fn messages(app: &TestApp, id: i64) -> Vec<MessageRow> {
    outbox::for_instance(&app.db, id).await.unwrap()
}

/// Each message as (event, step, state).
async fn told(app: &TestApp, id: i64) -> Vec<(&'static str, Option<i64>, Option<String>)> {
    messages(app, id)
        .await
        .into_iter()
        .map(|m| (m.event.as_str(), m.step_index, m.state))
        .collect()
}

/// Every payload of an instance, as the text a receiver would be sent, and the rows as stored.
async fn sent_text(app: &TestApp, id: i64) -> String {
    messages(app, id)
        .await
        .iter()
        .map(|m| format!("{} {m:?}", delivery::payload(m)))
        .collect()
}

/// What must never leave: a link's or handle's signed part, the instance's token.
async fn assert_nothing_secret(app: &TestApp, id: i64, secrets: &[&str]) {
    let text = sent_text(app, id).await;
    let token = orchestra::store::instances::by_id(&app.db, id)
        .await
        .unwrap()
        .unwrap()
        .token;
    for secret in secrets.iter().copied().chain([token.as_str()]) {
        let secret = secret.rsplit('/').next().unwrap_or(secret);
        assert!(!text.contains(secret), "{secret} is in a message: {text}");
    }
}

#[tokio::test]
async fn an_instance_driven_through_the_doorway_leaves_a_message_per_change() {
    let app = spawn(Flood::Memory).await;
    let id = app.start("supplier_onboarding", "Acme onboarding").await;
    assert_eq!(told(&app, id).await, [("instance.started", None, None)]);
    let supplier = app.link(id, None).await;
    let client = app.client();
    assert_eq!(
        answer_step(&client, &app, &supplier, &SUPPLIER)
            .await
            .status,
        200
    );
    let reviewer = app.link(id, None).await;
    let done = answer_step(
        &client,
        &app,
        &reviewer,
        &[("decision", "approve"), ("comment", "All in order.")],
    )
    .await;
    assert_eq!(done.status, 200);
    assert_eq!(state_of(&app, id).await.0, "complete");

    assert_eq!(
        told(&app, id).await,
        [
            ("instance.started", None, None),
            ("step.answered", Some(0), None),
            ("step.answered", Some(1), None),
            ("instance.ended", Some(2), Some("complete".into())),
        ]
    );
    let all = messages(&app, id).await;
    assert!(all.iter().all(|m| m.workflow == "supplier_onboarding"));
    let answered = delivery::payload(&all[1]);
    assert_eq!(answered["type"], "step.answered");
    assert_eq!(answered["data"]["instance"], id);
    assert_eq!(answered["data"]["workflow"], "supplier_onboarding");
    assert_eq!(answered["data"]["step"], 0);
    assert!(answered["data"]["participant"].is_string());
    // That a step was answered, never what.
    let text = sent_text(&app, id).await;
    for answer in [
        "Acme & Sons",
        "buyer@acme.example",
        "All in order.",
        "1200.5",
    ] {
        assert!(!text.contains(answer), "{answer} is in a message: {text}");
    }
    assert_nothing_secret(&app, id, &[&supplier, &reviewer]).await;
}

#[tokio::test]
async fn a_refused_answer_or_cancel_leaves_no_message() {
    let app = spawn(Flood::Memory).await;
    let id = app.start("contract_review", "Lease renewal").await;
    let legal = app.link(id, Some("legal")).await;
    let client = app.client();
    let before = told(&app, id).await;

    let bare = answer_step(
        &client,
        &app,
        &legal,
        &[("decision", "reject"), ("comment", "  ")],
    )
    .await;
    assert_eq!(bare.status, 422, "a rejection needs a comment");
    assert_eq!(
        told(&app, id).await,
        before,
        "a refused answer says nothing"
    );

    let long = "x".repeat(10_000);
    assert!(
        orchestra::domain::links::cancel(&app.db, id, &Actor::CommandLine, &long)
            .await
            .unwrap()
            .is_err()
    );
    assert_eq!(
        told(&app, id).await,
        before,
        "a refused cancel says nothing"
    );

    orchestra::domain::links::cancel(&app.db, id, &Actor::CommandLine, "Dropped.")
        .await
        .unwrap()
        .unwrap();
    let after = told(&app, id).await;
    assert_eq!(
        after.last().unwrap(),
        &("instance.ended", Some(0), Some("cancelled".into()))
    );
    assert!(
        orchestra::domain::links::cancel(&app.db, id, &Actor::CommandLine, "Again.")
            .await
            .unwrap()
            .is_err()
    );
    assert_eq!(told(&app, id).await, after, "a second cancel says nothing");
    assert!(!sent_text(&app, id).await.contains("Dropped."));
}

/// A branch's second answer is stale: its transaction writes nothing, and no message either.
#[tokio::test]
async fn a_branch_answering_twice_is_told_once() {
    let app = spawn(Flood::Memory).await;
    let id = app.start("contract_review", "Lease renewal").await;
    let legal = app.link(id, Some("legal")).await;
    let client = app.client();
    let form = [("decision", "approve"), ("comment", "Fine.")];
    assert_eq!(answer_step(&client, &app, &legal, &form).await.status, 200);
    let again = answer_step(&client, &app, &legal, &form).await;
    assert_eq!(again.status, 303, "a stale answer goes to the link's page");
    assert_eq!(again.location(), legal, "without the thanks");
    let answered = told(&app, id)
        .await
        .into_iter()
        .filter(|(e, _, _)| *e == Topic::StepAnswered.as_str())
        .count();
    assert_eq!(answered, 1);
}

/// The payment's confirmation is told with its amount; the handle and the payment's reference
/// are not.
#[tokio::test]
async fn a_confirmed_payment_is_told_without_its_handle() {
    let app = spawn(Flood::Memory).await;
    let id = app.start("order_payment", "Order 1042").await;
    let link = app.link(id, None).await;
    let client = app.client();
    let delivery_form = [
        ("name", "Grace Hopper"),
        ("address", "1 Harbour Road\nPortsmouth"),
        ("email", "grace@example.org"),
    ];
    assert_eq!(
        answer_step(&client, &app, &link, &delivery_form)
            .await
            .status,
        303
    );
    let pay = answer_step(&client, &app, &link, &[("action", "pay")]).await;
    assert_eq!(pay.status, 303);
    let provider = pay.location();
    assert_eq!(get(&client, &app, &provider).await.status, 200);
    let back = answer_step(&app.client(), &app, &provider, &[("outcome", "paid")]).await;
    assert_eq!(back.status, 303, "{}", back.body);

    let all = messages(&app, id).await;
    let paid = all
        .iter()
        .find(|m| m.event == Topic::PaymentConfirmed)
        .expect("the payment is told");
    let payload = delivery::payload(paid);
    assert_eq!(payload["data"]["amount_cents"], 4990);
    assert_eq!(payload["data"]["currency"], "EUR");
    assert_eq!(payload["data"]["step"], 1);
    assert_eq!(
        all.last().map(|m| (m.event, m.state.clone())),
        Some((Topic::InstanceEnded, Some("complete".into())))
    );
    let reference = orchestra::store::payments::by_id(&app.db, 1)
        .await
        .unwrap()
        .map(|p| p.reference)
        .unwrap_or_default();
    assert_nothing_secret(&app, id, &[&link, &provider, &reference]).await;
}

async fn endpoint(app: &TestApp, events: Option<&str>) -> i64 {
    let keys = app.state.site.get().await.keys.clone();
    orchestra::domain::delivery::endpoints::create(
        &app.db,
        &keys,
        "http://127.0.0.1:9/hook",
        events,
        true,
    )
    .await
    .unwrap()
    .unwrap()
    .id
}

/// Each message is queued, in its own transaction, for every enabled endpoint taking its event.
#[tokio::test]
async fn a_message_is_queued_for_each_endpoint_taking_its_event() {
    let app = spawn(Flood::Memory).await;
    let all = endpoint(&app, None).await;
    let ends = endpoint(&app, Some("instance.ended")).await;
    let id = app.start("contract_review", "Lease renewal").await;
    orchestra::domain::links::cancel(&app.db, id, &Actor::CommandLine, "")
        .await
        .unwrap()
        .unwrap();
    let sent = messages(&app, id).await;
    assert_eq!(sent.len(), 2);
    let queued = |m: i64| orchestra::store::webhooks::deliveries_of(&app.db, m);
    assert_eq!(
        queued(sent[0].id).await.unwrap(),
        [(all, "pending".into(), 0)]
    );
    assert_eq!(
        queued(sent[1].id).await.unwrap(),
        [(all, "pending".into(), 0), (ends, "pending".into(), 0)]
    );
}

/// Two workers claiming at once: each delivery goes to exactly one, and a claim holds it from
/// every other until its lease runs out.
#[tokio::test]
async fn two_workers_claim_each_delivery_once() {
    let app = spawn(Flood::Memory).await;
    endpoint(&app, Some("instance.started")).await;
    for n in 0..12 {
        app.start("contract_review", &format!("Lease {n}")).await;
    }
    let now = orchestra::store::now() + 1;
    let (a, b) = tokio::join!(
        orchestra::store::webhooks::claim(&app.db, now, 60, 12),
        orchestra::store::webhooks::claim(&app.db, now, 60, 12),
    );
    let (a, b) = (a.unwrap(), b.unwrap());
    let mut ids: Vec<i64> = a.iter().chain(&b).map(|d| d.id).collect();
    ids.sort_unstable();
    let count = ids.len();
    ids.dedup();
    assert_eq!((count, ids.len()), (12, 12), "each once: {a:?} {b:?}");
    assert!(
        orchestra::store::webhooks::claim(&app.db, now + 30, 60, 12)
            .await
            .unwrap()
            .is_empty(),
        "a live claim holds"
    );
    assert_eq!(
        orchestra::store::webhooks::claim(&app.db, now + 61, 60, 12)
            .await
            .unwrap()
            .len(),
        12,
        "a lapsed claim (its worker died) is taken again"
    );
}

// --- sending ------------------------------------------------------------------------------

use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{Arc, Mutex};

use axum::http::{HeaderMap, StatusCode};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use orchestra::domain::delivery::send;
use sha2::Sha256;

/// A receiver on loopback: records every POST and answers with `status`.
struct Receiver {
    url: String,
    got: Arc<Mutex<Vec<(HeaderMap, String)>>>,
    status: Arc<AtomicU16>,
}

async fn receiver(status: u16) -> Receiver {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let got: Arc<Mutex<Vec<(HeaderMap, String)>>> = Arc::default();
    let status = Arc::new(AtomicU16::new(status));
    let (g, s) = (got.clone(), status.clone());
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |headers: HeaderMap, body: String| {
            let (g, s) = (g.clone(), s.clone());
            async move {
                g.lock().unwrap().push((headers, body));
                StatusCode::from_u16(s.load(Ordering::SeqCst)).unwrap()
            }
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    Receiver { url, got, status }
}

impl Receiver {
    fn got(&self) -> Vec<(HeaderMap, String)> {
        self.got.lock().unwrap().clone()
    }
}

/// An endpoint on the receiver (private addresses allowed, as the flag would); its secret.
async fn hook(app: &TestApp, r: &Receiver, events: Option<&str>) -> (i64, String) {
    let keys = app.state.site.get().await.keys.clone();
    let made = orchestra::domain::delivery::endpoints::create(&app.db, &keys, &r.url, events, true)
        .await
        .unwrap()
        .unwrap();
    (made.id, made.secret.reveal())
}

async fn send_due(app: &TestApp, now: i64, allow_private: bool) -> usize {
    let keys = app.state.site.get().await.keys.clone();
    send::run_once(&app.db, &keys, now, allow_private)
        .await
        .unwrap()
}

/// The check a receiver makes, written here from the specification, not from the sender's code.
fn verifies(secret: &str, headers: &HeaderMap, body: &str) -> bool {
    let key = STANDARD
        .decode(secret.strip_prefix("whsec_").unwrap())
        .unwrap();
    let h = |n: &str| headers[n].to_str().unwrap().to_owned();
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).unwrap();
    mac.update(format!("{}.{}.{body}", h("webhook-id"), h("webhook-timestamp")).as_bytes());
    let expected = format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()));
    h("webhook-signature") == expected
}

#[tokio::test]
async fn a_receiver_gets_each_event_of_an_instance_signed() {
    let app = spawn(Flood::Memory).await;
    let r = receiver(200).await;
    let (endpoint, secret) = hook(&app, &r, None).await;
    let id = app.start("supplier_onboarding", "Acme onboarding").await;
    let supplier = app.link(id, None).await;
    let client = app.client();
    answer_step(&client, &app, &supplier, &SUPPLIER).await;
    let reviewer = app.link(id, None).await;
    let done = answer_step(
        &client,
        &app,
        &reviewer,
        &[("decision", "approve"), ("comment", "All in order.")],
    )
    .await;
    assert_eq!(done.status, 200);
    assert!(r.got().is_empty(), "nothing is sent in a request");

    assert_eq!(send_due(&app, orchestra::store::now(), true).await, 4);
    let got = r.got();
    let types: Vec<String> = got
        .iter()
        .map(|(_, b)| serde_json::from_str::<serde_json::Value>(b).unwrap()["type"].to_string())
        .collect();
    assert_eq!(
        types,
        [
            "\"instance.started\"",
            "\"step.answered\"",
            "\"step.answered\"",
            "\"instance.ended\""
        ]
    );
    let mut ids = Vec::new();
    for (headers, body) in &got {
        assert!(verifies(&secret, headers, body), "{headers:?} {body}");
        assert!(!verifies(&secret, headers, &format!("{body} ")));
        assert_eq!(headers["content-type"], "application/json");
        ids.push(headers["webhook-id"].to_str().unwrap().to_owned());
        for secret_part in [&supplier, &reviewer, &secret] {
            let tail = secret_part.rsplit('/').next().unwrap();
            assert!(!body.contains(tail));
        }
        assert!(!body.contains("All in order."));
    }
    ids.dedup();
    assert_eq!(ids.len(), 4, "each message has its own id");
    assert_eq!(
        send_due(&app, orchestra::store::now() + 100_000, true).await,
        0
    );
    let log = orchestra::store::webhooks::attempts(&app.db, endpoint, 10)
        .await
        .unwrap();
    assert_eq!(log.len(), 4);
    assert!(
        log.iter()
            .all(|(n, s, _, e)| *n == 1 && *s == Some(200) && e.is_none())
    );
    let logs = app.logs();
    assert!(
        !logs.contains(&secret[6..]),
        "the secret reaches no log line"
    );
    assert!(!logs.contains(reviewer.rsplit('/').next().unwrap()));
}

#[tokio::test]
async fn a_failing_receiver_gets_retries_with_the_same_id() {
    let app = spawn(Flood::Memory).await;
    let r = receiver(500).await;
    let (endpoint, secret) = hook(&app, &r, Some("instance.started")).await;
    app.start("contract_review", "Lease renewal").await;
    let now = orchestra::store::now();
    assert_eq!(send_due(&app, now, true).await, 1);
    assert_eq!(
        send_due(&app, now + 1, true).await,
        0,
        "not due before its backoff"
    );
    assert_eq!(send_due(&app, now + 10, true).await, 1, "retried after 5 s");
    r.status.store(204, Ordering::SeqCst);
    assert_eq!(send_due(&app, now + 10 + 400, true).await, 1);
    assert_eq!(
        send_due(&app, now + 100_000, true).await,
        0,
        "delivered: done"
    );
    let got = r.got();
    assert_eq!(got.len(), 3);
    let id = got[0].0["webhook-id"].clone();
    assert!(
        got.iter()
            .all(|(h, b)| h["webhook-id"] == id && verifies(&secret, h, b))
    );
    let log = orchestra::store::webhooks::attempts(&app.db, endpoint, 10)
        .await
        .unwrap();
    let statuses: Vec<(i64, Option<i64>)> = log.iter().map(|(n, s, _, _)| (*n, *s)).collect();
    assert_eq!(statuses, [(3, Some(204)), (2, Some(500)), (1, Some(500))]);
    let row = orchestra::store::webhooks::by_id(&app.db, endpoint)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (row.enabled, row.failures),
        (1, 0),
        "a success resets the run"
    );
}

/// An endpoint made while private addresses were allowed is refused at delivery once they are
/// not: nothing reaches it, and the attempt says why.
#[tokio::test]
async fn an_internal_address_is_refused_at_delivery_too() {
    let app = spawn(Flood::Memory).await;
    let r = receiver(200).await;
    let (endpoint, _) = hook(&app, &r, None).await;
    app.start("contract_review", "Lease renewal").await;
    assert_eq!(send_due(&app, orchestra::store::now(), false).await, 1);
    assert!(r.got().is_empty());
    let log = orchestra::store::webhooks::attempts(&app.db, endpoint, 10)
        .await
        .unwrap();
    assert_eq!(log[0].1, None);
    assert_eq!(log[0].3.as_deref(), Some("refused address"));
}

/// A run of failures disables the endpoint; its later deliveries are set aside untried.
#[tokio::test]
async fn an_endpoint_failing_again_and_again_is_disabled() {
    let app = spawn(Flood::Memory).await;
    let r = receiver(500).await;
    let (endpoint, _) = hook(&app, &r, Some("instance.started")).await;
    for n in 0..send::DISABLE_AFTER {
        app.start("contract_review", &format!("Lease {n}")).await;
    }
    send_due(&app, orchestra::store::now(), true).await;
    let row = orchestra::store::webhooks::by_id(&app.db, endpoint)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((row.enabled, row.failures), (0, send::DISABLE_AFTER));
    let before = r.got().len();
    assert_eq!(
        send_due(&app, orchestra::store::now() + 100_000, true).await,
        0
    );
    assert_eq!(r.got().len(), before, "a disabled endpoint is sent nothing");
}

/// The status report warns while an endpoint is disabled, in both languages.
#[tokio::test]
async fn the_status_report_warns_of_a_disabled_endpoint() {
    let app = spawn(Flood::Memory).await;
    let r = receiver(500).await;
    hook(&app, &r, Some("instance.started")).await;
    let check = |report: orchestra::domain::status::Report| {
        report
            .checks
            .into_iter()
            .find(|c| c.id == "webhooks")
            .expect("a webhooks check")
    };
    let fine = check(orchestra::domain::status::build(&app.db, "memory").await);
    assert_eq!(fine.severity.name(), "ok");
    for n in 0..send::DISABLE_AFTER {
        app.start("contract_review", &format!("Lease {n}")).await;
    }
    send_due(&app, orchestra::store::now(), true).await;
    let warned = check(orchestra::domain::status::build(&app.db, "memory").await);
    assert_eq!(warned.severity.name(), "warning");
    use orchestra::i18n::Lang;
    assert_eq!(warned.value.render(Lang::En), "1 endpoint, 1 disabled");
    assert_eq!(
        warned.value.render(Lang::Fr),
        "1 point de réception, 1 désactivé"
    );
}

/// Two senders at once (two processes' timers, or serve and cron): each message reaches the
/// receiver once.
#[tokio::test]
async fn two_senders_deliver_each_message_once() {
    let app = spawn(Flood::Memory).await;
    let r = receiver(200).await;
    hook(&app, &r, Some("instance.started")).await;
    for n in 0..10 {
        app.start("contract_review", &format!("Lease {n}")).await;
    }
    let now = orchestra::store::now();
    let (a, b) = tokio::join!(send_due(&app, now, true), send_due(&app, now, true));
    assert_eq!(a + b, 10, "{a} + {b}");
    let mut ids: Vec<String> = r
        .got()
        .iter()
        .map(|(h, _)| h["webhook-id"].to_str().unwrap().to_owned())
        .collect();
    ids.sort();
    ids.dedup();
    assert_eq!((r.got().len(), ids.len()), (10, 10));
}

/// An https endpoint is spoken to in TLS: a receiver that does not speak it is a failed attempt
/// (`tls`), never a request sent in clear.
#[tokio::test]
async fn an_https_endpoint_is_never_sent_in_clear() {
    let app = spawn(Flood::Memory).await;
    let r = receiver(200).await;
    let keys = app.state.site.get().await.keys.clone();
    let url = r.url.replace("http://", "https://");
    let endpoint = orchestra::domain::delivery::endpoints::create(&app.db, &keys, &url, None, true)
        .await
        .unwrap()
        .unwrap()
        .id;
    app.start("contract_review", "Lease renewal").await;
    assert_eq!(send_due(&app, orchestra::store::now(), true).await, 1);
    assert!(r.got().is_empty());
    let log = orchestra::store::webhooks::attempts(&app.db, endpoint, 10)
        .await
        .unwrap();
    assert_eq!(log[0].3.as_deref(), Some("tls"));
}
