//! The records an auditor reads, in a real browser at desktop and phone width in both languages:
//! the instance list with who each instance waits on, and an instance's evidence record.

use crate::browser::{sign_in, start};
use crate::helpers::{Flood, TestApp, spawn};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_list_and_the_evidence_record_read_well_at_every_width() {
    let Some(mut b) = start().await else {
        return;
    };
    let app: TestApp = spawn(Flood::Memory).await;
    app.set(&[("orchestra.base_url", app.base.as_str())]).await;
    app.create_admin().await;
    b.app_base = app.base.clone();
    let (id, _) = crate::evidence::answered(&app).await;
    app.start("contract_review", "Lease 2027").await;
    sign_in(&mut b).await;

    for lang in ["en", "fr"] {
        for (width, height, suffix) in [(1280, 900, ""), (390, 844, "-phone")] {
            b.resize(width, height).await;
            b.goto(&format!("/admin/instances?lang={lang}")).await;
            assert!(b.count("td.waiting").await >= 2);
            assert!(
                !b.scrolls_sideways().await,
                "the list ({lang}) at {width} px"
            );
            b.script("document.querySelector('table.instances').scrollIntoView(); return true;")
                .await;
            b.screenshot(&format!("instances-waiting{suffix}-{lang}"))
                .await;
            b.goto(&format!("/admin/instances/{id}/evidence?lang={lang}"))
                .await;
            assert_eq!(b.count("#evidence-sha256").await, 1);
            assert!(
                !b.scrolls_sideways().await,
                "the evidence record ({lang}) at {width} px"
            );
            b.screenshot(&format!("evidence{suffix}-{lang}")).await;
            b.script("document.querySelector('.evidence-lines').scrollIntoView(); return true;")
                .await;
            b.screenshot(&format!("evidence-history{suffix}-{lang}"))
                .await;
        }
    }
}
