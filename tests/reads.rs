//! How many statements a doorway page costs. Versions never change, so the doorway keeps them
//! in memory: a page reads the instance (with its link's record) and what was answered, no
//! more. Alone in its binary, so the captured log holds this test's statements only.

mod common;
mod support;

use common::{Flood, spawn};
use support::get;

/// The statements sqlx ran since a mark in the captured log (sqlx logs each one under the
/// `sqlx::query` target).
fn statements_since(mark: usize) -> Vec<String> {
    common::logs()[mark..]
        .lines()
        .filter(|l| l.contains("sqlx::query"))
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn a_doorway_page_reads_the_database_at_most_twice() {
    let app = spawn(Flood::Memory).await;
    let id = app.start("order_payment", "Reads").await;
    let payer = app.link(id, Some("payer")).await;
    let client = app.client();
    // The first visit reads the version once; the settings snapshot is warm from the start.
    assert_eq!(get(&client, &app, &payer).await.status, 200);

    let mark = common::logs().len();
    let page = get(&client, &app, &payer).await;
    let read = statements_since(mark);
    assert_eq!(page.status, 200);
    assert!(page.has("section.step-form"));
    assert!(
        !read.is_empty(),
        "sqlx's statement log is captured (else this test counts nothing)"
    );
    assert!(
        read.len() <= 2,
        "a step page read {} statements: {read:#?}",
        read.len()
    );
    assert!(read.iter().all(|l| l.contains("SELECT")), "{read:#?}");

    // A link for someone with nothing to answer now reads the instance alone.
    let mark = common::logs().len();
    let refused = get(&client, &app, "/interaction/l.999999..1900000000.00").await;
    assert_eq!(refused.status, 404);
    assert!(statements_since(mark).len() <= 1);
}
