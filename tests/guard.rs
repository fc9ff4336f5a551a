//! The doorway guard's rules, over real TCP, on both flood backends.

mod common;

use common::{Flood, spawn};

#[tokio::test]
async fn harness_smoke() {
    let app = spawn(Flood::Memory).await;
    let id = app.start("contract_review", "Smoke").await;
    let link = app.link(id, Some("legal")).await;
    let r = app.client().get(app.url(&link)).send().await.unwrap();
    assert_eq!(r.status(), 200);
}
