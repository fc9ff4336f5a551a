//! After a key rotation, in a real browser at desktop and phone width in both languages: a
//! voided link's refused page with its fresh-link form (sent, it says the same words whatever
//! happened), and the instance page listing the voided links as Void, with no Revoke button.

use crate::browser::{sign_in, start};
use crate::helpers::{Flood, TestApp, spawn};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_voided_link_and_its_instance_after_a_rotation_in_a_real_browser() {
    let Some(mut b) = start().await else {
        return;
    };
    let app: TestApp = spawn(Flood::Memory).await;
    app.set(&[("orchestra.base_url", app.base.as_str())]).await;
    app.create_admin().await;
    b.app_base = app.base.clone();
    let id = app.start("contract_review", "Lease renewal").await;
    let legal = app.link_for(id, "legal", 3 * 86_400).await;
    app.link_for(id, "finance", 3 * 86_400).await;
    orchestra::domain::rotation::rotate_keys(&app.db)
        .await
        .unwrap();
    app.state.site.refresh().await;
    // A fresh link for legal, issued after the rotation: Active beside the Void ones.
    app.link_for(id, "legal", 3 * 86_400).await;

    for lang in ["en", "fr"] {
        for (width, name) in [
            (1280, "doorway-fresh-link"),
            (390, "doorway-fresh-link-phone"),
        ] {
            b.resize(width, 900).await;
            b.goto(&format!("{legal}?lang={lang}")).await;
            assert_eq!(b.count("form.fresh-link button").await, 1, "{lang}");
            assert!(
                !b.scrolls_sideways().await,
                "the refused page ({lang}) at {width} px"
            );
            b.screenshot(&format!("{name}-{lang}")).await;
        }
    }
    b.resize(1280, 900).await;
    b.goto(&format!("{legal}?lang=en")).await;
    b.follow("form.fresh-link button").await;
    assert_eq!(
        b.text("p.fresh-sent").await,
        "If this link was yours, a fresh one is on its way to the address on file."
    );

    sign_in(&mut b).await;
    for lang in ["en", "fr"] {
        for (width, name) in [
            (1280, "instance-void-link"),
            (390, "instance-void-link-phone"),
        ] {
            b.resize(width, 900).await;
            b.goto(&format!("/admin/instances/{id}?lang={lang}")).await;
            assert_eq!(b.count("tr.link-state-void").await, 2, "{lang}");
            assert_eq!(b.count("tr.link-state-void form").await, 0, "{lang}");
            assert!(
                !b.scrolls_sideways().await,
                "the instance page ({lang}) at {width} px"
            );
            b.script("document.querySelector('table.issued-links').scrollIntoView(); return true;")
                .await;
            b.screenshot(&format!("{name}-{lang}")).await;
        }
    }
    b.check_console().await;
}
