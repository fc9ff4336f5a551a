//! Issue 22's outbox: a message per change, written with the change (an instance started, a
//! step answered, an instance ended, a payment confirmed), none for a change refused or rolled
//! back, and never a link, handle, secret or answer in what a receiver would be sent.

use orchestra::domain::delivery::{self, Topic};
use orchestra::domain::instance::Actor;
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
        orchestra::domain::instance::cancel(&app.db, id, &Actor::CommandLine, &long)
            .await
            .is_err()
    );
    assert_eq!(
        told(&app, id).await,
        before,
        "a refused cancel says nothing"
    );

    orchestra::domain::instance::cancel(&app.db, id, &Actor::CommandLine, "Dropped.")
        .await
        .unwrap();
    let after = told(&app, id).await;
    assert_eq!(
        after.last().unwrap(),
        &("instance.ended", Some(0), Some("cancelled".into()))
    );
    assert!(
        orchestra::domain::instance::cancel(&app.db, id, &Actor::CommandLine, "Again.")
            .await
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
    .id
}

/// Each message is queued, in its own transaction, for every enabled endpoint taking its event.
#[tokio::test]
async fn a_message_is_queued_for_each_endpoint_taking_its_event() {
    let app = spawn(Flood::Memory).await;
    let all = endpoint(&app, None).await;
    let ends = endpoint(&app, Some("instance.ended")).await;
    let id = app.start("contract_review", "Lease renewal").await;
    orchestra::domain::instance::cancel(&app.db, id, &Actor::CommandLine, "")
        .await
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
    let e = endpoint(&app, Some("instance.started")).await;
    for n in 0..12 {
        app.start("contract_review", &format!("Lease {n}")).await;
    }
    let now = orchestra::store::now() + 1;
    let (a, b) = tokio::join!(
        orchestra::store::webhooks::claim(&app.db, e, now, 60, 12),
        orchestra::store::webhooks::claim(&app.db, e, now, 60, 12),
    );
    let (a, b) = (a.unwrap(), b.unwrap());
    let mut ids: Vec<i64> = a.iter().chain(&b).map(|d| d.id).collect();
    ids.sort_unstable();
    let count = ids.len();
    ids.dedup();
    assert_eq!((count, ids.len()), (12, 12), "each once: {a:?} {b:?}");
    assert!(
        orchestra::store::webhooks::claim(&app.db, e, now + 30, 60, 12)
            .await
            .unwrap()
            .is_empty(),
        "a live claim holds"
    );
    assert_eq!(
        orchestra::store::webhooks::claim(&app.db, e, now + 61, 60, 12)
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
pub(crate) struct Receiver {
    pub(crate) url: String,
    got: Arc<Mutex<Vec<(HeaderMap, String)>>>,
    status: Arc<AtomicU16>,
}

pub(crate) async fn receiver(status: u16) -> Receiver {
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
    pub(crate) fn got(&self) -> Vec<(HeaderMap, String)> {
        self.got.lock().unwrap().clone()
    }
}

/// An endpoint on the receiver (private addresses allowed, as the flag would); its secret.
async fn hook(app: &TestApp, r: &Receiver, events: Option<&str>) -> (i64, String) {
    let keys = app.state.site.get().await.keys.clone();
    let made = orchestra::domain::delivery::endpoints::create(&app.db, &keys, &r.url, events, true)
        .await
        .unwrap();
    (made.id, made.secret.reveal())
}

pub(crate) async fn send_due(app: &TestApp, now: i64, allow_private: bool) -> usize {
    let keys = app.state.site.get().await.keys.clone();
    sender(app, keys, allow_private)
        .run_once(now)
        .await
        .unwrap()
}

fn sender(app: &TestApp, keys: orchestra::domain::keys::SiteKeys, allow: bool) -> send::Sender {
    send::Sender {
        db: app.db.clone(),
        keys,
        allow_private: allow,
        figures: app.state.webhook_figures.clone(),
    }
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

/// Rotating the site keys voids links and sessions, not an endpoint's secret: it is sealed
/// again under the new keys in the rotation's transaction, and what is sent after it is signed
/// with the secret the receiver was given.
#[tokio::test]
async fn an_endpoint_keeps_its_secret_through_a_rotation_of_the_site_keys() {
    let app = spawn(Flood::Memory).await;
    let r = receiver(200).await;
    let (endpoint, secret) = hook(&app, &r, Some("instance.started")).await;
    let sealed_before = orchestra::store::webhooks::by_id(&app.db, endpoint)
        .await
        .unwrap()
        .unwrap()
        .secret;
    let new_keys = orchestra::domain::rotation::rotate_keys(&app.db)
        .await
        .unwrap();
    let row = orchestra::store::webhooks::by_id(&app.db, endpoint)
        .await
        .unwrap()
        .unwrap();
    assert_ne!(row.secret, sealed_before, "sealed again");
    assert!(
        !row.secret.contains(&secret[6..]),
        "still sealed, never in clear"
    );
    app.start("supplier_onboarding", "After the rotation").await;
    let sent = sender(&app, new_keys, true)
        .run_once(orchestra::store::now())
        .await
        .unwrap();
    assert_eq!(sent, 1);
    let got = r.got();
    assert_eq!(got.len(), 1);
    let (headers, body) = &got[0];
    assert!(verifies(&secret, headers, body), "{headers:?} {body}");
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

/// A receiver down for a minute (500 to everything) disables nothing, however many messages
/// fail meanwhile: each is tried again on its schedule, and once one gets through, every
/// message that waited goes out at once, each once.
#[tokio::test]
async fn a_receiver_down_for_a_minute_disables_nothing_and_gets_every_message_once_back() {
    let app = spawn(Flood::Memory).await;
    let r = receiver(500).await;
    let (endpoint, _) = hook(&app, &r, Some("instance.started")).await;
    let mut started = Vec::new();
    for n in 0..30 {
        started.push(app.start("contract_review", &format!("Lease {n}")).await);
    }
    let t0 = orchestra::store::now();
    // The minute: every first attempt fails, and the first retries (5 s on) fail too.
    for t in [t0, t0 + 10, t0 + 30, t0 + 59] {
        while send_due(&app, t, true).await > 0 {}
    }
    let row = orchestra::store::webhooks::by_id(&app.db, endpoint)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(row.enabled, 1, "a minute of failures disables nothing");
    assert!(row.failures >= 30, "{}", row.failures);
    assert!(row.failing_since.is_some());
    // Back: the next try of any message (5 minutes on) gets through, and the rest follow at once
    // instead of waiting out their own backoff.
    r.status.store(204, Ordering::SeqCst);
    for t in [t0 + 400, t0 + 401, t0 + 402] {
        while send_due(&app, t, true).await > 0 {}
    }
    for id in &started {
        let m = messages(&app, *id).await;
        let deliveries = orchestra::store::webhooks::deliveries_of(&app.db, m[0].id)
            .await
            .unwrap();
        assert_eq!(deliveries[0].1, "delivered", "instance {id}");
    }
    let row = orchestra::store::webhooks::by_id(&app.db, endpoint)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((row.enabled, row.failures, row.failing_since), (1, 0, None));
    // Each message was taken once: 30 answers were 204s, one per message id.
    let mut ids: Vec<String> = r
        .got()
        .iter()
        .map(|(h, _)| h["webhook-id"].to_str().unwrap().to_owned())
        .collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 30);
    let statuses = orchestra::store::webhooks::attempts(&app.db, endpoint, 1000)
        .await
        .unwrap();
    assert_eq!(statuses.iter().filter(|a| a.1 == Some(204)).count(), 30);
}

/// The state of the first delivery of the first message about `instance`.
async fn delivery_state(app: &TestApp, instance: i64) -> String {
    let m = messages(app, instance).await;
    orchestra::store::webhooks::deliveries_of(&app.db, m[0].id)
        .await
        .unwrap()[0]
        .1
        .clone()
}

/// Sends what is due at each moment from `from` on, as time goes by, until the endpoint is
/// disabled (a whole retry schedule of days, failing all along) or `rounds` pass; returns the
/// moment it stopped.
async fn fail_for_days(app: &TestApp, endpoint: i64, from: i64, rounds: usize) -> i64 {
    let mut t = from;
    for _ in 0..rounds {
        while send_due(app, t, true).await > 0 {}
        let row = orchestra::store::webhooks::by_id(&app.db, endpoint)
            .await
            .unwrap()
            .unwrap();
        if row.enabled == 0 {
            return t;
        }
        t += 100_000;
    }
    t
}

/// An endpoint that fails every try of a message's whole schedule (about three days), nothing
/// taken meanwhile, is disabled; the message is not lost: it waits, with every message made
/// while the endpoint is disabled, and all of them go out once it is enabled again.
#[tokio::test]
async fn an_endpoint_failing_for_days_is_disabled_and_its_messages_wait_for_it() {
    let app = spawn(Flood::Memory).await;
    let r = receiver(500).await;
    let (endpoint, _) = hook(&app, &r, Some("instance.started")).await;
    let first = app.start("contract_review", "Before the outage").await;
    let t0 = orchestra::store::now();
    let t = fail_for_days(&app, endpoint, t0, 20).await;
    let row = orchestra::store::webhooks::by_id(&app.db, endpoint)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(row.enabled, 0, "disabled after days of failing");
    assert!(
        t - t0 >= send::DISABLE_AFTER,
        "not before its schedule: {}",
        t - t0
    );
    let tries = r.got().len();
    assert_eq!(tries, send::BACKOFF.len() + 1, "every try of the schedule");
    let during = app.start("contract_review", "While disabled").await;
    assert_eq!(delivery_state(&app, first).await, "held");
    assert_eq!(delivery_state(&app, during).await, "held");
    assert_eq!(
        send_due(&app, t + 1_000_000, true).await,
        0,
        "nothing to a disabled one"
    );
    assert_eq!(r.got().len(), tries);

    r.status.store(200, Ordering::SeqCst);
    assert_eq!(
        orchestra::store::webhooks::enable(&app.db, endpoint, orchestra::store::now())
            .await
            .unwrap(),
        Some(2)
    );
    while send_due(&app, orchestra::store::now(), true).await > 0 {}
    let ok: Vec<String> = r.got()[tries..]
        .iter()
        .map(|(h, _)| h["webhook-id"].to_str().unwrap().to_owned())
        .collect();
    assert_eq!(ok.len(), 2, "each waiting message once: {ok:?}");
    assert_eq!(delivery_state(&app, first).await, "delivered");
    assert_eq!(delivery_state(&app, during).await, "delivered");
}

/// The status report warns while an endpoint is disabled, in both languages.
#[tokio::test]
async fn the_status_report_warns_of_a_disabled_endpoint() {
    let app = spawn(Flood::Memory).await;
    let r = receiver(500).await;
    let check = |report: orchestra::domain::status::Report| {
        report
            .checks
            .into_iter()
            .find(|c| c.id == "webhooks")
            .expect("a webhooks check")
    };
    let (endpoint, _) = hook(&app, &r, Some("instance.started")).await;
    let fine = check(orchestra::domain::status::build(&app.db, "memory").await);
    assert_eq!(fine.severity.name(), "ok");
    app.start("contract_review", "Lease").await;
    fail_for_days(&app, endpoint, orchestra::store::now(), 20).await;
    let warned = check(orchestra::domain::status::build(&app.db, "memory").await);
    assert_eq!(warned.severity.name(), "warning");
    use orchestra::i18n::Lang;
    assert_eq!(warned.value.render(Lang::En), "1 endpoint, 1 disabled");
    let _ = r;
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
        .id;
    app.start("contract_review", "Lease renewal").await;
    assert_eq!(send_due(&app, orchestra::store::now(), true).await, 1);
    assert!(r.got().is_empty());
    let log = orchestra::store::webhooks::attempts(&app.db, endpoint, 10)
        .await
        .unwrap();
    assert_eq!(log[0].3.as_deref(), Some("tls"));
}

// --- the admin page -----------------------------------------------------------------------

use orchestra::i18n::{Lang, Message};
use reqwest::Client;

use crate::api::{call, json, token};
use crate::helpers::{Page, post, read, with_lang};

const PAGE: &str = "/admin/webhooks";

/// A signed-in administrator on an app whose endpoints may be on loopback (the flag's effect,
/// for this app only).
async fn admin_allowing_loopback() -> (TestApp, Client) {
    let app = spawn(Flood::Memory).await;
    allow_loopback(&app);
    let admin = app.admin_client().await;
    (app, admin)
}

fn allow_loopback(app: &TestApp) {
    app.state
        .webhooks_allow_private
        .store(true, Ordering::SeqCst);
}

/// Posts a form of the webhooks pages with the page's own CSRF token, in `lang`.
async fn submit(
    client: &Client,
    app: &TestApp,
    path: &str,
    form: &[(&str, &str)],
    lang: &str,
) -> Page {
    let csrf = get(client, app, PAGE).await.csrf();
    let mut fields = vec![("csrf", csrf.as_str())];
    fields.extend_from_slice(form);
    read(
        client
            .post(app.url(path))
            .header("sec-fetch-site", "same-origin")
            .header("accept-language", lang)
            .form(&fields),
    )
    .await
}

async fn endpoint_count(app: &TestApp) -> usize {
    orchestra::store::webhooks::all(&app.db)
        .await
        .unwrap()
        .len()
}

/// Fails an endpoint for days, until it is disabled, as the sender does.
async fn fail_until_disabled(app: &TestApp, r: &Receiver, endpoint: i64) {
    r.status.store(500, Ordering::SeqCst);
    app.start("contract_review", "Failing").await;
    fail_for_days(app, endpoint, orchestra::store::now(), 20).await;
}

#[tokio::test]
async fn the_webhooks_page_lists_each_endpoint_and_why_one_is_disabled_in_both_languages() {
    let (app, admin) = admin_allowing_loopback().await;
    let ok = receiver(200).await;
    let down = receiver(500).await;
    hook(&app, &ok, None).await;
    let (disabled, _) = hook(&app, &down, Some("instance.started")).await;
    fail_until_disabled(&app, &down, disabled).await;

    let en = get(&admin, &app, &with_lang(PAGE, "en")).await;
    let fr = get(&admin, &app, &with_lang(PAGE, "fr")).await;
    for page in [&en, &fr] {
        assert_eq!(page.status, 200);
        assert_eq!(page.header("cache-control"), Some("no-store"));
        assert_eq!(page.text("table.webhooks tbody tr").len(), 2);
        assert_eq!(
            page.attr("nav.admin a[aria-current=page]", "href")
                .as_deref(),
            Some(PAGE)
        );
    }
    let row = |p: &Page, cell: &str| p.first(&format!("tr[data-endpoint='{disabled}'] {cell}"));
    assert_eq!(row(&en, "td.url code"), down.url);
    assert_eq!(row(&en, "td.events"), "instance.started");
    let tries = send::BACKOFF.len() + 1;
    assert_eq!(row(&en, "td.failures"), tries.to_string());
    assert_eq!(row(&en, "td.webhook-state"), "Disabled: its messages wait");
    assert_eq!(
        row(&fr, "td.webhook-state"),
        "Désactivé : ses messages attendent"
    );
    assert_ne!(row(&en, "td.last-attempt"), "Never", "it was tried");
    assert!(en.has(&format!("form[action='{PAGE}/{disabled}/enable']")));
    assert!(en.has(&format!("form[action='{PAGE}/{disabled}/retry']")));
    assert!(!en.has(&format!("form[action='{PAGE}/{disabled}/disable']")));
    assert_eq!(en.first("h1"), "Webhooks");
    assert_eq!(fr.first("nav.admin a[href='/admin/webhooks']"), "Webhooks");
    assert_eq!(en.first("table.webhooks th:nth-child(2)"), "Events");
    assert_eq!(fr.first("table.webhooks th:nth-child(2)"), "Événements");
    assert_ne!(en.first("#events legend"), fr.first("#events legend"));
    let enabled_state = en.first("table.webhooks tbody tr:first-child td.webhook-state");
    assert_eq!(enabled_state, "Enabled");
    assert_eq!(
        fr.first("table.webhooks tbody tr:first-child td.webhook-state"),
        "Actif"
    );
}

/// The checks `orchestra webhook create` makes, on the form: the error beside its field in the
/// visitor's language, what was typed kept, nothing saved.
#[tokio::test]
async fn a_refused_url_or_event_keeps_what_was_typed_and_saves_nothing_in_both_languages() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;
    for (lang, tag) in [(Lang::En, "en"), (Lang::Fr, "fr")] {
        for (url, message) in [
            (
                "ftp://example.org/hook",
                Message::new("webhook-url-invalid"),
            ),
            ("not a url", Message::new("webhook-url-invalid")),
            // Without the flag, loopback is refused, as the CLI refuses it.
            (
                "https://127.0.0.1/hook",
                Message::new("webhook-url-private"),
            ),
            (
                "http://93.184.216.34/hook",
                Message::new("webhook-url-not-https"),
            ),
        ] {
            let page = submit(
                &admin,
                &app,
                PAGE,
                &[("url", url), ("event", "step.answered")],
                tag,
            )
            .await;
            assert_eq!(page.status, 422, "{url}");
            assert_eq!(page.lang(), tag);
            assert_eq!(page.first("#url-error"), message.render(lang), "{url}");
            assert_eq!(page.attr("#url", "aria-invalid").as_deref(), Some("true"));
            assert_eq!(page.attr("#url", "value").as_deref(), Some(url), "kept");
            assert!(page.has("input[name=event][value='step.answered'][checked]"));
            assert!(!page.has("input[name=event][value='instance.ended'][checked]"));
            assert!(!page.has("#events-error"));
            assert!(!page.has("#webhook-secret"));
        }
        let page = submit(
            &admin,
            &app,
            PAGE,
            &[
                ("url", "https://93.184.216.34/hook"),
                ("event", "instance.deleted"),
            ],
            tag,
        )
        .await;
        assert_eq!(page.status, 422);
        assert!(page.first("#events-error").contains("instance.deleted"));
        assert!(!page.has("#url-error"));
        assert_eq!(
            page.attr("#url", "value").as_deref(),
            Some("https://93.184.216.34/hook")
        );
    }
    assert_eq!(endpoint_count(&app).await, 0, "nothing saved");
}

#[tokio::test]
async fn a_new_endpoints_secret_is_shown_once_and_signs_what_it_is_sent() {
    let (app, admin) = admin_allowing_loopback().await;
    let r = receiver(200).await;
    let made = submit(
        &admin,
        &app,
        PAGE,
        &[("url", r.url.as_str()), ("event", "instance.started")],
        "en",
    )
    .await;
    assert_eq!(made.status, 303, "{}", made.body);
    assert_eq!(made.location(), PAGE);
    let shown = get(&admin, &app, PAGE).await;
    let secret = shown
        .attr("#webhook-secret", "value")
        .expect("the secret is shown");
    assert!(secret.starts_with("whsec_"));
    assert_eq!(shown.header("cache-control"), Some("no-store"));
    let again = get(&admin, &app, PAGE).await;
    assert!(!again.has("#webhook-secret"), "shown once");
    assert!(!again.body.contains(&secret[6..]));
    let rows = orchestra::store::webhooks::all(&app.db).await.unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(
        (rows[0].events.as_str(), rows[0].api_token_id),
        ("instance.started", None)
    );
    assert!(!rows[0].secret.contains(&secret[6..]), "stored sealed");

    app.start("contract_review", "Lease renewal").await;
    assert_eq!(send_due(&app, orchestra::store::now(), true).await, 1);
    let got = r.got();
    assert!(verifies(&secret, &got[0].0, &got[0].1));
    // The app's lines, without those of the test's own HTML parsing (which logs what it reads).
    let logs: String = app
        .logs()
        .lines()
        .filter(|l| !l.contains(" html5ever::") && !l.contains(" selectors::"))
        .collect();
    assert!(!logs.contains(&secret[6..]), "in no log line");
}

/// A disabled endpoint is queued nothing; enabled again, its failures are forgotten and new
/// messages are queued for it.
/// Disabled by hand on the page, an endpoint is sent nothing, and what is made meanwhile waits;
/// *Retry now* on a disabled one says it waits for it; *Enable again* sends all of it.
#[tokio::test]
async fn messages_made_while_disabled_go_out_after_enable() {
    let (app, admin) = admin_allowing_loopback().await;
    let r = receiver(200).await;
    let (id, _) = hook(&app, &r, Some("instance.started")).await;
    let disabled = submit(&admin, &app, &format!("{PAGE}/{id}/disable"), &[], "en").await;
    assert_eq!(disabled.status, 303);
    assert_eq!(disabled.location(), PAGE);
    let page = get(&admin, &app, PAGE).await;
    assert_eq!(
        page.first("p.flash"),
        "Endpoint disabled: nothing is sent to it, and its messages wait until it is enabled again."
    );
    let while_off = app.start("contract_review", "While disabled").await;
    assert_eq!(delivery_state(&app, while_off).await, "held");
    assert_eq!(
        send_due(&app, orchestra::store::now() + 100_000, true).await,
        0
    );
    assert!(r.got().is_empty(), "a disabled endpoint is sent nothing");

    let retried = submit(&admin, &app, &format!("{PAGE}/{id}/retry"), &[], "fr").await;
    assert_eq!(retried.status, 303);
    let page = get(&admin, &app, &with_lang(PAGE, "fr")).await;
    assert_eq!(
        page.first("p.flash"),
        "Le point de réception est désactivé : ce qui l'attend part dès que vous le réactivez."
    );
    assert_eq!(send_due(&app, orchestra::store::now(), true).await, 0);

    let enabled = submit(&admin, &app, &format!("{PAGE}/{id}/enable"), &[], "en").await;
    assert_eq!(enabled.status, 303);
    assert_eq!(enabled.location(), PAGE);
    let row = orchestra::store::webhooks::by_id(&app.db, id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((row.enabled, row.failures), (1, 0));
    let page = get(&admin, &app, &with_lang(PAGE, "en")).await;
    assert_eq!(
        page.first("p.flash"),
        "Endpoint enabled again: what waited for it is sent now, and new messages are queued for it."
    );
    assert_eq!(page.first("td.webhook-state"), "Enabled");
    let after = app.start("contract_review", "Enabled again").await;
    let now = orchestra::store::now();
    while send_due(&app, now, true).await > 0 {}
    let told: Vec<i64> = r
        .got()
        .iter()
        .map(|(_, b)| {
            serde_json::from_str::<serde_json::Value>(b).unwrap()["data"]["instance"]
                .as_i64()
                .unwrap()
        })
        .collect();
    assert_eq!(told, [while_off, after], "each once, the waiting one first");

    for action in ["enable", "disable", "retry"] {
        let missing = submit(&admin, &app, &format!("{PAGE}/987654/{action}"), &[], "en").await;
        assert_eq!(missing.status, 404, "{action}");
    }
}

/// *Retry now* sends at once what waits out its backoff, and a message that failed for good
/// (its endpoint took others meanwhile) is sent again with the same `webhook-id`.
#[tokio::test]
async fn retry_now_sends_what_waits_at_once_with_the_same_ids() {
    let (app, admin) = admin_allowing_loopback().await;
    let r = receiver(500).await;
    let (id, _) = hook(&app, &r, Some("instance.started")).await;
    let waiting = app.start("contract_review", "Waits out its backoff").await;
    let now = orchestra::store::now();
    assert_eq!(send_due(&app, now, true).await, 1);
    assert_eq!(send_due(&app, now + 1, true).await, 0, "backing off");
    r.status.store(200, Ordering::SeqCst);
    let retried = submit(&admin, &app, &format!("{PAGE}/{id}/retry"), &[], "en").await;
    assert_eq!(retried.status, 303);
    assert_eq!(
        get(&admin, &app, PAGE).await.first("p.flash"),
        "What waited for this endpoint is due now: it is sent within a few seconds, each message with its own id."
    );
    assert_eq!(send_due(&app, now + 1, true).await, 1, "due at once");
    assert_eq!(delivery_state(&app, waiting).await, "delivered");
    let got = r.got();
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].0["webhook-id"], got[1].0["webhook-id"]);
}

/// The delivery log reads newest first a page at a time by a key, so a page asked for again
/// shows the same attempts however many were made since (an OFFSET would shift them).
#[tokio::test]
async fn the_delivery_log_pages_by_key_newest_first() {
    let (app, admin) = admin_allowing_loopback().await;
    let r = receiver(200).await;
    let (id, _) = hook(&app, &r, Some("instance.started")).await;
    let total = 60;
    for n in 0..total {
        app.start("contract_review", &format!("Lease {n}")).await;
    }
    let now = orchestra::store::now();
    while send_due(&app, now, true).await > 0 {}
    assert_eq!(r.got().len(), total);

    let log = format!("{PAGE}/{id}");
    let first = get(&admin, &app, &log).await;
    assert_eq!(first.status, 200);
    let ids = |p: &Page| p.text("table.webhook-log td.message code");
    let page_one = ids(&first);
    assert_eq!(page_one.len(), 50);
    let newest = messages(&app, app.start("contract_review", "Probe").await).await[0].id;
    assert_eq!(page_one[0], format!("msg_{}", newest - 1), "newest first");
    assert!(!first.has("#newest"));
    assert_eq!(first.first("td.outcome"), "HTTP 200");
    assert_eq!(first.first("td.attempt"), "1");
    assert_eq!(first.first("td.event code"), "instance.started");
    let older = first.attr("#older", "href").expect("an older page");
    assert!(older.starts_with(&format!("{log}?before=")), "{older}");
    let second = get(&admin, &app, &older).await;
    let page_two = ids(&second);
    assert_eq!(page_two.len(), total - 50);
    assert!(second.has("#newest") && !second.has("#older"));
    let mut all: Vec<&String> = page_one.iter().chain(&page_two).collect();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), total, "no attempt twice, none missed");

    // Newer attempts made meanwhile: the older page still shows the same ones.
    while send_due(&app, orchestra::store::now(), true).await > 0 {}
    assert_eq!(ids(&get(&admin, &app, &older).await), page_two);
    assert_eq!(ids(&get(&admin, &app, &log).await).len(), 50);
    // A cursor that is not one is the newest page, never an error.
    assert_eq!(
        get(&admin, &app, &format!("{log}?before=abc")).await.status,
        200
    );
    assert_eq!(
        get(&admin, &app, &format!("{PAGE}/987654")).await.status,
        404
    );
    let fr = get(&admin, &app, &with_lang(&log, "fr")).await;
    assert_eq!(fr.first("h1"), "Journal des envois");
}

#[tokio::test]
async fn send_again_queues_the_delivery_now_with_the_same_message_id() {
    let (app, admin) = admin_allowing_loopback().await;
    let r = receiver(200).await;
    let (id, secret) = hook(&app, &r, Some("instance.started")).await;
    app.start("contract_review", "Lease renewal").await;
    assert_eq!(send_due(&app, orchestra::store::now(), true).await, 1);
    let log = format!("{PAGE}/{id}");
    let page = get(&admin, &app, &log).await;
    let delivery = page
        .attr("table.webhook-log tr[data-delivery]", "data-delivery")
        .unwrap();
    let again = format!("{log}/deliveries/{delivery}/again");
    assert!(page.has(&format!("form[action='{again}']")));
    let queued = submit(&admin, &app, &again, &[], "en").await;
    assert_eq!(queued.status, 303);
    assert_eq!(queued.location(), log);
    assert_eq!(
        send_due(&app, orchestra::store::now(), true).await,
        1,
        "due now"
    );
    let got = r.got();
    assert_eq!(got.len(), 2);
    assert_eq!(
        got[0].0["webhook-id"], got[1].0["webhook-id"],
        "the same message id"
    );
    assert!(verifies(&secret, &got[1].0, &got[1].1));
    let page = get(&admin, &app, &log).await;
    assert_eq!(page.text("td.attempt"), ["2", "1"]);
    let ids = page.text("td.message code");
    assert_eq!(ids[0], ids[1]);
    // Another endpoint's delivery is not this one's to send.
    let other = receiver(200).await;
    let (other_id, _) = hook(&app, &other, Some("instance.started")).await;
    let wrong = submit(
        &admin,
        &app,
        &format!("{PAGE}/{other_id}/deliveries/{delivery}/again"),
        &[],
        "en",
    )
    .await;
    assert_eq!(wrong.status, 404);
}

/// No session: the sign-in page, nothing changed. A signed-in browser's post without the CSRF
/// token, or from another site: refused, nothing changed.
#[tokio::test]
async fn strangers_and_forged_posts_change_no_endpoint() {
    let (app, admin) = admin_allowing_loopback().await;
    let r = receiver(500).await;
    let (id, _) = hook(&app, &r, Some("instance.started")).await;
    fail_until_disabled(&app, &r, id).await;
    let delivery = orchestra::store::webhooks::log(&app.db, id, None, 1)
        .await
        .unwrap()[0]
        .delivery_id;
    let pool = raw(&app).await;
    let queue = || {
        sqlx::query_as::<_, (i64, String, i64)>(
            "SELECT id, state, next_at FROM webhook_deliveries ORDER BY id",
        )
        .fetch_all(&pool)
    };
    let queued = queue().await.unwrap();
    let stranger = app.client();
    for path in [
        PAGE.to_owned(),
        format!("{PAGE}/{id}"),
        format!("{PAGE}/{id}/delete"),
    ] {
        let page = get(&stranger, &app, &path).await;
        assert_eq!(page.status, 303, "{path}");
        assert!(
            page.location().starts_with("/admin/login?destination="),
            "{path}"
        );
    }
    let posts = [
        PAGE.to_owned(),
        format!("{PAGE}/{id}/enable"),
        format!("{PAGE}/{id}/disable"),
        format!("{PAGE}/{id}/retry"),
        format!("{PAGE}/{id}/delete"),
        format!("{PAGE}/{id}/deliveries/{delivery}/again"),
    ];
    let csrf = get(&stranger, &app, "/admin/login").await.csrf();
    for path in &posts {
        let page = post(
            &stranger,
            &app,
            path,
            &[("csrf", csrf.as_str()), ("url", r.url.as_str())],
        )
        .await;
        assert_eq!(page.status, 303, "{path}");
        assert!(page.location().starts_with("/admin/login"), "{path}");
    }
    for path in &posts {
        let bare = post(&admin, &app, path, &[("url", r.url.as_str())]).await;
        assert_eq!(bare.status, 403, "no CSRF token: {path}");
        let forged = read(
            admin
                .post(app.url(path))
                .header("sec-fetch-site", "cross-site")
                .form(&[("url", r.url.as_str())]),
        )
        .await;
        assert_eq!(forged.status, 403, "cross-site: {path}");
    }
    let rows = orchestra::store::webhooks::all(&app.db).await.unwrap();
    assert_eq!(rows.len(), 1, "none made, none deleted");
    assert_eq!(rows[0].enabled, 0, "not enabled");
    assert_eq!(queue().await.unwrap(), queued, "nothing sent again");
}

#[tokio::test]
async fn delete_asks_first_then_deletes_the_endpoint_and_its_log() {
    let (app, admin) = admin_allowing_loopback().await;
    let r = receiver(200).await;
    let (id, _) = hook(&app, &r, None).await;
    let confirm = get(&admin, &app, &format!("{PAGE}/{id}/delete?lang=fr")).await;
    assert_eq!(confirm.status, 200);
    assert_eq!(confirm.lang(), "fr");
    assert!(confirm.first("h1").contains(&r.url));
    assert_eq!(endpoint_count(&app).await, 1, "asking deletes nothing");
    let done = submit(&admin, &app, &format!("{PAGE}/{id}/delete"), &[], "en").await;
    assert_eq!(done.status, 303);
    assert_eq!(endpoint_count(&app).await, 0);
    let gone = submit(&admin, &app, &format!("{PAGE}/{id}/delete"), &[], "en").await;
    assert_eq!(gone.status, 404);
}

// --- endpoints of API tokens --------------------------------------------------------------

fn webhook_body(url: &str, events: &[&str]) -> String {
    serde_json::json!({"url": url, "events": events}).to_string()
}

async fn api_start(app: &TestApp, token: &str) -> i64 {
    let body = r#"{"workflow":"contract_review","subject":{"title":"By the API"}}"#;
    let page = call(app, "POST", "/api/v1/instances", token, Some(body)).await;
    assert_eq!(page.status, 201, "{}", page.body);
    json(&page)["id"].as_i64().unwrap()
}

/// An API token cannot point a webhook at any range the IANA special-purpose registries say is
/// not globally reachable, nor at one hidden inside an IPv6 address that carries IPv4 (NAT64,
/// 6to4, IPv4-mapped) or at Teredo: `422` on `url`, with the message the admin page and the CLI
/// give, in the caller's language; nothing is made.
#[tokio::test]
async fn the_api_refuses_a_webhook_to_every_special_purpose_range() {
    let app = spawn(Flood::Memory).await;
    let t = token(&app, "crm", None, None).await;
    let client = app.client();
    for url in [
        "https://[64:ff9b::a9fe:a9fe]/hook",
        "https://[64:ff9b:1::1]/hook",
        "https://[2002:7f00:1::1]/hook",
        "https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/hook",
        "https://[fec0::1]/hook",
        "https://[::ffff:10.0.0.1]/hook",
        "https://[5f00::1]/hook",
        "https://192.0.0.8/hook",
        "https://198.18.0.1/hook",
        "https://100.64.0.1/hook",
    ] {
        for (lang, tag) in [(Lang::En, "en"), (Lang::Fr, "fr")] {
            let page = read(
                client
                    .post(app.url("/api/v1/webhooks"))
                    .header("authorization", format!("Bearer {t}"))
                    .header("content-type", "application/json")
                    .header("accept-language", tag)
                    .body(webhook_body(url, &["instance.started"])),
            )
            .await;
            assert_eq!(page.status, 422, "{url}: {}", page.body);
            let answer = json(&page);
            assert_eq!(answer["error"], "invalid", "{url}");
            assert_eq!(answer["field"], "url", "{url}");
            assert_eq!(
                answer["message"],
                Message::new("webhook-url-private").render(lang),
                "{url} {tag}"
            );
        }
    }
    let listed = call(&app, "GET", "/api/v1/webhooks", &t, None).await;
    assert_eq!(
        json(&listed)["webhooks"],
        serde_json::json!([]),
        "{}",
        listed.body
    );
}

/// A token's endpoint is sent the messages about the instances that token started, and no
/// other's; another token neither sees it nor deletes it.
#[tokio::test]
async fn a_tokens_endpoint_gets_only_its_own_instances_and_another_token_gets_404() {
    let app = spawn(Flood::Memory).await;
    allow_loopback(&app);
    let (mine, theirs) = (
        token(&app, "crm", None, None).await,
        token(&app, "erp", None, None).await,
    );
    let r = receiver(200).await;
    let site = receiver(200).await;
    hook(&app, &site, Some("instance.started")).await;

    let made = call(
        &app,
        "POST",
        "/api/v1/webhooks",
        &mine,
        Some(&webhook_body(
            &r.url,
            &["instance.started", "instance.ended"],
        )),
    )
    .await;
    assert_eq!(made.status, 201, "{}", made.body);
    let made = json(&made);
    let secret = made["secret"].as_str().unwrap().to_owned();
    assert!(secret.starts_with("whsec_"));
    assert_eq!(
        made["events"],
        serde_json::json!(["instance.started", "instance.ended"])
    );
    let id = made["id"].as_i64().unwrap();
    assert!(!app.logs().contains(&secret[6..]));

    let listed = call(&app, "GET", "/api/v1/webhooks", &mine, None).await;
    assert_eq!(listed.status, 200);
    let listed = json(&listed);
    assert_eq!(listed["webhooks"].as_array().unwrap().len(), 1);
    assert!(
        listed["webhooks"][0].get("secret").is_none(),
        "never shown again"
    );
    let theirs_list = call(&app, "GET", "/api/v1/webhooks", &theirs, None).await;
    assert_eq!(json(&theirs_list)["webhooks"], serde_json::json!([]));
    let refused = call(
        &app,
        "DELETE",
        &format!("/api/v1/webhooks/{id}"),
        &theirs,
        None,
    )
    .await;
    assert_eq!(
        (refused.status, json(&refused)["error"].as_str()),
        (404, Some("not_found"))
    );
    let admins = orchestra::store::webhooks::all(&app.db).await.unwrap()[0].id;
    let not_its = call(
        &app,
        "DELETE",
        &format!("/api/v1/webhooks/{admins}"),
        &mine,
        None,
    )
    .await;
    assert_eq!(
        not_its.status, 404,
        "an administrator's endpoint is not a token's"
    );
    assert_eq!(endpoint_count(&app).await, 2);

    let own = api_start(&app, &mine).await;
    let other = api_start(&app, &theirs).await;
    let by_admin = app.start("contract_review", "By an administrator").await;
    while send_due(&app, orchestra::store::now(), true).await > 0 {}
    let instances = |r: &Receiver| -> Vec<i64> {
        r.got()
            .iter()
            .map(|(_, b)| {
                serde_json::from_str::<serde_json::Value>(b).unwrap()["data"]["instance"]
                    .as_i64()
                    .unwrap()
            })
            .collect()
    };
    assert_eq!(instances(&r), [own], "only the token's own instance");
    let mut every = instances(&site);
    every.sort_unstable();
    assert_eq!(
        every,
        [own, other, by_admin],
        "the administrator's endpoint gets all"
    );
    assert!(r.got().iter().all(|(h, b)| verifies(&secret, h, b)));

    let gone = call(
        &app,
        "DELETE",
        &format!("/api/v1/webhooks/{id}"),
        &mine,
        None,
    )
    .await;
    assert_eq!(gone.status, 204);
    assert_eq!(endpoint_count(&app).await, 1);

    // A revoked token's endpoint is queued nothing more, even about its own instances.
    let r2 = receiver(200).await;
    let theirs_hook = call(
        &app,
        "POST",
        "/api/v1/webhooks",
        &theirs,
        Some(&webhook_body(&r2.url, &["instance.ended"])),
    )
    .await;
    assert_eq!(theirs_hook.status, 201);
    orchestra::store::api::revoke_token(&app.db, "erp")
        .await
        .unwrap()
        .unwrap();
    orchestra::domain::instance::cancel(&app.db, other, &Actor::CommandLine, "")
        .await
        .unwrap();
    let ended = messages(&app, other).await.last().unwrap().id;
    assert!(
        orchestra::store::webhooks::deliveries_of(&app.db, ended)
            .await
            .unwrap()
            .is_empty(),
        "nothing queued for a revoked token's endpoint"
    );
}

#[tokio::test]
async fn a_token_without_the_start_ability_cannot_register_endpoints() {
    let app = spawn(Flood::Memory).await;
    allow_loopback(&app);
    let keys = app.state.site.get().await.keys.clone();
    let scope = orchestra::domain::api::scope::Scope::default()
        .with_words(Some(["read"]), None, None::<[&str; 0]>)
        .unwrap();
    let reader =
        orchestra::domain::api::create_scoped_token(&app.db, &keys, "reader", None, None, &scope)
            .await
            .unwrap()
            .unwrap();
    let r = receiver(200).await;
    let body = webhook_body(&r.url, &[]);
    for (method, path, body) in [
        ("POST", "/api/v1/webhooks".to_owned(), Some(body.as_str())),
        ("GET", "/api/v1/webhooks".to_owned(), None),
        ("DELETE", "/api/v1/webhooks/1".to_owned(), None),
    ] {
        let page = call(&app, method, &path, &reader, body).await;
        assert_eq!(page.status, 403, "{method} {path}");
        assert_eq!(json(&page)["error"], "forbidden_scope");
    }
    assert_eq!(endpoint_count(&app).await, 0);
    // And a token with it is refused a URL the CLI refuses, naming the field.
    let crm = token(&app, "crm", None, None).await;
    app.state
        .webhooks_allow_private
        .store(false, Ordering::SeqCst);
    let refused = call(&app, "POST", "/api/v1/webhooks", &crm, Some(&body)).await;
    assert_eq!(refused.status, 422);
    assert_eq!(json(&refused)["field"], "url");
    let unknown = webhook_body("https://93.184.216.34/hook", &["instance.deleted"]);
    let refused = call(&app, "POST", "/api/v1/webhooks", &crm, Some(&unknown)).await;
    assert_eq!(
        (refused.status, json(&refused)["field"].as_str()),
        (422, Some("events"))
    );
    assert_eq!(endpoint_count(&app).await, 0);
}

/// The queueing statement reads the instance and its token by their primary keys.
#[tokio::test]
async fn queueing_reads_the_instance_and_token_by_their_keys() {
    use sqlx::Row;
    // PostgreSQL rightly reads tables this small by a scan; its plan is in docs/delivery.md.
    if crate::helpers::on_postgres() {
        return;
    }
    let app = spawn(Flood::Memory).await;
    let on_postgres = false;
    let (explain, column) = if on_postgres {
        (format!("EXPLAIN {}", outbox::QUEUE), 0)
    } else {
        (format!("EXPLAIN QUERY PLAN {}", outbox::QUEUE), 3)
    };
    let rows = sqlx::query(&explain)
        .bind(1_i64)
        .bind(1_i64)
        .bind("%,instance.started,%")
        .bind(1_i64)
        .fetch_all(&raw(&app).await)
        .await
        .unwrap();
    let plan: Vec<String> = rows
        .iter()
        .map(|r| r.try_get::<String, _>(column).unwrap())
        .collect();
    let plan = plan.join("\n");
    assert!(
        plan.contains("SEARCH i USING INTEGER PRIMARY KEY"),
        "{plan}"
    );
    assert!(
        plan.contains("SEARCH t USING INTEGER PRIMARY KEY"),
        "{plan}"
    );
    assert!(!plan.contains("SCAN i"), "{plan}");
}

/// A pool of the test's own on the app's database.
async fn raw(app: &TestApp) -> sqlx::AnyPool {
    let url = orchestra::store::normalize_url(&app.database.url)
        .unwrap()
        .1;
    sqlx::AnyPool::connect(&url).await.unwrap()
}

// --- cleanup ------------------------------------------------------------------------------

/// Cron deletes what is done with and older than the keep, attempts, deliveries and messages,
/// and never a pending delivery, its attempts or its message.
#[tokio::test]
async fn cron_cleans_old_deliveries_but_never_a_pending_one() {
    let app = spawn(Flood::Memory).await;
    let ok = receiver(200).await;
    let down = receiver(500).await;
    let (delivered_to, _) = hook(&app, &ok, Some("instance.started")).await;
    let (failing, _) = hook(&app, &down, Some("instance.ended")).await;
    let mut started = Vec::new();
    for n in 0..5 {
        started.push(app.start("contract_review", &format!("Lease {n}")).await);
    }
    orchestra::domain::instance::cancel(&app.db, started[0], &Actor::CommandLine, "")
        .await
        .unwrap();
    let now = orchestra::store::now();
    while send_due(&app, now, true).await > 0 {}
    let pool = raw(&app).await;
    let count = |sql: &'static str| {
        let pool = &pool;
        async move {
            sqlx::query_scalar::<_, i64>(sql)
                .fetch_one(pool)
                .await
                .unwrap()
        }
    };
    assert_eq!(count("SELECT COUNT(*) FROM outbox").await, 6);
    assert_eq!(count("SELECT COUNT(*) FROM webhook_attempts").await, 6);

    // Not old enough: nothing goes.
    assert_eq!(delivery::clean(&app.db, now + 3600).await.unwrap(), 0);
    let later = now + delivery::KEEP_SECS + 3600;
    let gone = delivery::clean(&app.db, later).await.unwrap();
    // Five delivered, their five attempts and five messages; the pending one stays whole.
    assert_eq!(gone, 15);
    assert_eq!(count("SELECT COUNT(*) FROM outbox").await, 1);
    assert_eq!(
        count("SELECT COUNT(*) FROM webhook_deliveries WHERE state = 'pending'").await,
        1
    );
    assert_eq!(count("SELECT COUNT(*) FROM webhook_deliveries").await, 1);
    let kept = orchestra::store::webhooks::log(&app.db, failing, None, 10)
        .await
        .unwrap();
    assert_eq!(kept.len(), 1, "a pending delivery's attempts stay");
    assert!(
        orchestra::store::webhooks::log(&app.db, delivered_to, None, 10)
            .await
            .unwrap()
            .is_empty()
    );

    // In batches: a batch of two still reaches every row.
    for n in 0..5 {
        app.start("contract_review", &format!("More {n}")).await;
    }
    while send_due(&app, orchestra::store::now(), true).await > 0 {}
    use orchestra::store::expired::{Expired, delete_in_batches};
    assert_eq!(
        delete_in_batches(&app.db, Expired::WebhookDeliveries, later, 2)
            .await
            .unwrap(),
        5
    );
    assert_eq!(
        count("SELECT COUNT(*) FROM webhook_deliveries").await,
        1,
        "the pending one"
    );
}

/// A token's endpoint is on the administrators' page, named by its token; a delivery of a
/// disabled endpoint is not sent again until the endpoint is enabled again.
#[tokio::test]
async fn the_page_names_a_tokens_endpoint_and_sends_nothing_again_to_a_disabled_one() {
    let (app, admin) = admin_allowing_loopback().await;
    let crm = token(&app, "crm", None, None).await;
    let r = receiver(500).await;
    let made = call(
        &app,
        "POST",
        "/api/v1/webhooks",
        &crm,
        Some(&webhook_body(&r.url, &["instance.started"])),
    )
    .await;
    assert_eq!(made.status, 201);
    let id = json(&made)["id"].as_i64().unwrap();
    let page = get(&admin, &app, PAGE).await;
    assert_eq!(
        page.first(&format!("tr[data-endpoint='{id}'] .owner")),
        "API token crm (its own instances only)"
    );

    api_start(&app, &crm).await;
    let t = fail_for_days(&app, id, orchestra::store::now(), 20).await;
    let row = orchestra::store::webhooks::by_id(&app.db, id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(row.enabled, 0);
    let delivery = orchestra::store::webhooks::log(&app.db, id, None, 1)
        .await
        .unwrap()[0]
        .delivery_id;
    let log = format!("{PAGE}/{id}");
    assert!(!get(&admin, &app, &log).await.has("td.actions form"));
    let refused = submit(
        &admin,
        &app,
        &format!("{log}/deliveries/{delivery}/again"),
        &[],
        "fr",
    )
    .await;
    assert_eq!(refused.status, 303);
    let shown = get(&admin, &app, &with_lang(&log, "fr")).await;
    assert_eq!(
        shown.first("p.flash"),
        "Le point de réception est désactivé : réactivez-le d'abord."
    );
    let before = r.got().len();
    assert_eq!(send_due(&app, t + 1_000_000, true).await, 0);
    assert_eq!(r.got().len(), before, "nothing sent again");
}

/// An endpoint that takes a message again makes what waits out its backoff due at once: the
/// messages that failed while it was down go now, not at their next try minutes later.
#[tokio::test]
async fn a_success_brings_forward_what_waits_out_its_backoff() {
    let app = spawn(Flood::Memory).await;
    let r = receiver(500).await;
    let (endpoint, _) = hook(&app, &r, Some("instance.started")).await;
    let a = app.start("contract_review", "A").await;
    let b = app.start("contract_review", "B").await;
    let t0 = orchestra::store::now();
    while send_due(&app, t0, true).await > 0 {}
    while send_due(&app, t0 + 6, true).await > 0 {}
    assert_eq!(r.got().len(), 4, "two tries each");
    r.status.store(200, Ordering::SeqCst);
    let c = app.start("contract_review", "C").await;
    while send_due(&app, t0 + 7, true).await > 0 {}
    for id in [a, b, c] {
        assert_eq!(delivery_state(&app, id).await, "delivered", "instance {id}");
    }
    let row = orchestra::store::webhooks::by_id(&app.db, endpoint)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(row.failing_since, None);
}
