//! The payment provider's notices under their limits, over real TCP: signed notices and forged
//! ones are counted apart, so no flood of forged ones shuts the provider's own out.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use orchestra::domain::interaction::payment;

use crate::helpers::{Flood, spawn, state_of};
use crate::integrity::{notice, send_notice, start_payment};

#[tokio::test]
async fn notices_are_counted_per_payment_signed_and_forged_apart() {
    let app = spawn(Flood::Memory).await;
    app.set(&[
        ("orchestra.request_limits.enabled", "true"),
        ("notice.limits.per_payment", "2"),
    ])
    .await;
    let id = app.start("order_payment", "Order").await;
    start_payment(&app, id).await;
    let (body, signature) = notice(&app, id, "paid", app.clock.now_secs()).await;
    // Forged notices naming the payment: two are refused as bad, the third as too many.
    assert_eq!(send_notice(&app, &body, "bad").await.status, 400);
    assert_eq!(send_notice(&app, &body, &"0".repeat(64)).await.status, 400);
    let limited = send_notice(&app, &body, "bad").await;
    assert_eq!(
        (limited.status, limited.body.as_str()),
        (429, r#"{"error":"too_many_requests"}"#)
    );
    // The provider's own notice for that payment is counted apart, and applied.
    let applied = send_notice(&app, &body, &signature).await;
    assert_eq!(
        (applied.status, applied.body.as_str()),
        (200, r#"{"changed":true,"state":"paid"}"#)
    );
    assert_eq!(state_of(&app, id).await, ("complete".into(), 2));
    // Signed notices have their own per-payment limit: the third signed one is refused.
    assert_eq!(send_notice(&app, &body, &signature).await.status, 200);
    assert_eq!(send_notice(&app, &body, &signature).await.status, 429);
    // Logged once per tier and kind, forged ones named as such.
    let logs = app.logs();
    let refused = |what: &str| -> Vec<String> {
        logs.lines()
            .filter(|l| l.contains(what))
            .map(str::to_owned)
            .collect()
    };
    let forged = refused("forged provider notice refused;");
    assert_eq!(forged.len(), 1, "{forged:?}");
    assert!(forged[0].contains(r#"tier="per_payment""#), "{forged:?}");
    let signed: Vec<String> = refused("provider notice refused")
        .into_iter()
        .filter(|l| !l.contains("forged"))
        .collect();
    assert_eq!(signed.len(), 1, "{signed:?}");
    assert!(signed[0].contains(r#"tier="per_payment""#), "{signed:?}");
    // The doorway's own limits do not count notices.
    let status = orchestra::domain::status::build(&app.db, "memory").await;
    let line = status
        .checks
        .iter()
        .find(|c| c.id == "notice_limits")
        .unwrap();
    assert_eq!(line.severity, orchestra::domain::status::Severity::Ok);
}

/// Forged notices from a few tasks at once, as many as they can send, naming the real payment
/// and made-up ones: they spend their own per-payment and total limits (they are refused with
/// 429s), and the provider's signed notice sent in the middle of the flood is applied.
#[tokio::test]
async fn a_signed_notice_is_applied_while_forged_ones_flood() {
    let app = spawn(Flood::Memory).await;
    app.set(&[
        ("orchestra.request_limits.enabled", "true"),
        ("notice.limits.per_payment", "5"),
        ("notice.limits.total", "100"),
    ])
    .await;
    let id = app.start("order_payment", "Order").await;
    start_payment(&app, id).await;
    let (body, signature) = notice(&app, id, "paid", app.clock.now_secs()).await;

    let stop = Arc::new(AtomicBool::new(false));
    let limited = Arc::new(AtomicU64::new(0));
    let sent = Arc::new(AtomicU64::new(0));
    let mut flooders = Vec::new();
    for task in 0..4 {
        let (client, url) = (app.client(), app.url("/notice/test-provider"));
        let (stop, limited, sent, real) =
            (stop.clone(), limited.clone(), sent.clone(), body.clone());
        flooders.push(tokio::spawn(async move {
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                n += 1;
                // Every other one names the real payment; the rest made-up payments.
                let forged = if n % 2 == 0 {
                    real.clone()
                } else {
                    serde_json::json!({"payment": format!("made-up-{task}-{n}"), "outcome": "paid", "timestamp": 0}).to_string()
                };
                let r = client
                    .post(&url)
                    .header(payment::SIGNATURE_HEADER, "0".repeat(64))
                    .body(forged)
                    .send()
                    .await
                    .expect("the app answers");
                sent.fetch_add(1, Ordering::Relaxed);
                match r.status().as_u16() {
                    429 => {
                        limited.fetch_add(1, Ordering::Relaxed);
                    }
                    400 => {}
                    other => panic!("a forged notice got {other}"),
                }
            }
        }));
    }
    // The forged ones have spent their total (100) and their per-payment limit for the real
    // payment, and go on.
    let flooded = tokio::time::timeout(Duration::from_secs(60), async {
        while limited.load(Ordering::Relaxed) < 200 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    assert!(flooded.is_ok(), "the flood never reached its limits");
    let genuine = send_notice(&app, &body, &signature).await;
    let during = sent.load(Ordering::Relaxed);
    // A few more forged ones after it, so it was sent inside the flood.
    while sent.load(Ordering::Relaxed) < during + 20 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    stop.store(true, Ordering::Relaxed);
    for f in flooders {
        f.await.unwrap();
    }
    assert_eq!(
        (genuine.status, genuine.body.as_str()),
        (200, r#"{"changed":true,"state":"paid"}"#),
        "the signed notice is applied while forged ones are refused"
    );
    assert_eq!(state_of(&app, id).await, ("complete".into(), 2));
    let (sent, limited) = (
        sent.load(Ordering::Relaxed),
        limited.load(Ordering::Relaxed),
    );
    assert!(
        sent - limited <= 100,
        "forged ones answered past their limits: {sent} sent, {limited} refused"
    );
}
