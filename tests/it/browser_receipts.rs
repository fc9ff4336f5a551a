//! The thank-you page's receipt offer in a real browser, at desktop and phone width in both
//! languages (screenshots with `ORCHESTRA_SCREENSHOTS=1`).

use crate::browser::start;
use crate::helpers::{Flood, TestApp, answer_step, spawn};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_thank_you_page_offers_the_receipt_in_a_real_browser() {
    let Some(mut b) = start().await else {
        return;
    };
    let app: TestApp = spawn(Flood::Memory).await;
    app.set(&[("orchestra.base_url", app.base.as_str())]).await;
    b.app_base = app.base.clone();
    let definition = orchestra::domain::workflow::Definition::parse(
        "form@employee: Expense claim | Amount* (number), Reason\n\
         review@manager: Approve the claim\n",
    )
    .unwrap();
    orchestra::store::workflows::create(&app.db, "claim", "Expense claim", &definition.to_json())
        .await
        .unwrap();
    let id = app.start("claim", "Train to Lyon").await;
    let link = app.link(id, Some("employee")).await;
    let thanked = answer_step(
        &app.client(),
        &app,
        &link,
        &[("amount", "42.50"), ("reason", "Conference")],
    )
    .await;
    assert_eq!(thanked.status, 200);
    for (lang, offer) in [
        ("en", "Download your receipt"),
        ("fr", "Télécharger votre reçu"),
    ] {
        for (width, height, name) in [
            (1280, 900, "doorway-receipt"),
            (390, 844, "doorway-receipt-phone"),
        ] {
            b.resize(width, height).await;
            b.goto(&format!("{link}?thanks&lang={lang}")).await;
            assert_eq!(b.text(".receipt a.button").await, offer);
            assert!(
                !b.scrolls_sideways().await,
                "the receipt offer ({lang}) at {width} px"
            );
            b.screenshot(&format!("{name}-{lang}")).await;
        }
    }
}
