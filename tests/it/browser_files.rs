//! A supplier attaches a certificate in a real browser, at desktop and phone width in both
//! languages; the reviewer's page offers it for download.

use std::time::Duration;

use crate::browser::start;
use crate::helpers::{Flood, TestApp, get, spawn};

const ONBOARDING: &str = "form@supplier: Supplier details | Company*, Certificate* (file, pdf), Valid until* (date)\n\
                          \x20 fr: Coordonnées du fournisseur | Société, Attestation, Valable jusqu'au\n\
                          review@buyer: Check the certificate | show 1\n\
                          \x20 fr: Vérifier l'attestation\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_is_attached_in_a_real_browser_and_offered_to_the_reviewer() {
    let Some(mut b) = start().await else {
        return;
    };
    let app: TestApp = spawn(Flood::Memory).await;
    app.set(&[("orchestra.base_url", app.base.as_str())]).await;
    b.app_base = app.base.clone();
    let dir = tempfile::tempdir().unwrap();
    let certificate = crate::uploads::pdf(40 << 10);
    let path = dir.path().join("certificate.pdf");
    std::fs::write(&path, &certificate).unwrap();
    let page = dir.path().join("page.pdf");
    std::fs::write(&page, b"<html><script>alert(1)</script></html>").unwrap();

    for lang in ["en", "fr"] {
        let id = crate::uploads::started(&app, ONBOARDING).await;
        let supplier = app.link_for(id, "supplier", 3 * 86_400).await;
        for (width, height, name) in [
            (1280, 900, "doorway-upload"),
            (390, 844, "doorway-upload-phone"),
        ] {
            b.resize(width, height).await;
            b.goto(&format!("{supplier}?lang={lang}")).await;
            assert!(
                !b.scrolls_sideways().await,
                "the upload form ({lang}) at {width} px"
            );
            b.screenshot(&format!("{name}-{lang}")).await;
        }
        // A page disguised as a PDF: refused beside its field, the company kept.
        b.resize(390, 844).await;
        b.goto(&format!("{supplier}?lang={lang}")).await;
        b.type_into("#f-company", "Acme & Sons").await;
        b.type_into("#f-certificate", &page.display().to_string())
            .await;
        // A calendar's pick posts the ISO date.
        b.script("document.querySelector('#f-valid_until').value = '2027-12-31'; return true;")
            .await;
        b.follow("form.stack button[type=submit]").await;
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert_eq!(b.prop("#f-company", "value").await, "Acme & Sons");
        assert_eq!(b.prop("#f-valid_until", "value").await, "2027-12-31");
        assert_eq!(b.count(".field-error[data-field=certificate]").await, 1);
        assert!(!b.scrolls_sideways().await, "the refused upload ({lang})");
        b.screenshot(&format!("doorway-upload-refused-{lang}"))
            .await;
        // The real certificate goes through (the date was kept).
        b.type_into("#f-certificate", &path.display().to_string())
            .await;
        // A calendar's pick posts the ISO date.
        b.script("document.querySelector('#f-valid_until').value = '2027-12-31'; return true;")
            .await;
        b.follow("form.stack button[type=submit]").await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        let buyer = app.link_for(id, "buyer", 3 * 86_400).await;
        let shown = get(&app.client(), &app, &buyer).await;
        let href = shown
            .attr(".earlier a.file", "href")
            .expect("offered to the buyer");
        let bytes = app
            .client()
            .get(app.url(&href))
            .send()
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        assert!(
            bytes[..] == certificate[..],
            "the file arrived whole ({lang})"
        );
        for (width, height, name) in [
            (1280, 900, "doorway-download"),
            (390, 844, "doorway-download-phone"),
        ] {
            b.resize(width, height).await;
            b.goto(&format!("{buyer}?lang={lang}")).await;
            assert_eq!(b.count(".earlier a.file").await, 1);
            assert!(
                !b.scrolls_sideways().await,
                "the download ({lang}) at {width} px"
            );
            b.screenshot(&format!("{name}-{lang}")).await;
        }
    }
    // The typed fields, refused with each error beside its input, at both widths.
    let typed = crate::uploads::started(
        &app,
        "form@supplier: Order | Amount* (number, 0..100000), Due* (date), Website (url), I accept the terms* (checkbox)\n\
         \x20 fr: Commande | Montant, Échéance, Site web, J'accepte les conditions\n\
         review@buyer: Check | show 1\n",
    )
    .await;
    let supplier = app.link_for(typed, "supplier", 3 * 86_400).await;
    for lang in ["en", "fr"] {
        for (width, name) in [
            (1280, "doorway-typed-refused"),
            (390, "doorway-typed-refused-phone"),
        ] {
            b.resize(width, 900).await;
            b.goto(&format!("{supplier}?lang={lang}")).await;
            b.fill("#f-amount", "1.250,50x").await;
            b.fill("#f-website", "javascript:alert(1)").await;
            b.follow("form.stack button[type=submit]").await;
            tokio::time::sleep(Duration::from_millis(200)).await;
            assert!(b.count(".field-error").await >= 3, "{lang}");
            assert!(
                !b.scrolls_sideways().await,
                "the typed fields ({lang}) at {width} px"
            );
            b.screenshot(&format!("{name}-{lang}")).await;
        }
    }

    // The instance page's Files section, where administrators download them.
    app.create_admin().await;
    crate::browser::sign_in(&mut b).await;
    for lang in ["en", "fr"] {
        for (width, name) in [(1280, "instance-files"), (390, "instance-files-phone")] {
            b.resize(width, 900).await;
            b.goto(&format!("/admin/instances/1?lang={lang}#files"))
                .await;
            assert_eq!(b.count("section#files table.files a").await, 1);
            assert!(
                !b.scrolls_sideways().await,
                "the Files section ({lang}) at {width} px"
            );
            b.script("document.querySelector('#files').scrollIntoView(); return true;")
                .await;
            b.screenshot(&format!("{name}-{lang}")).await;
        }
    }
    // The Interaction settings page, with the largest file a form takes.
    for lang in ["en", "fr"] {
        for (width, name) in [
            (1280, "settings-interaction"),
            (390, "settings-interaction-phone"),
        ] {
            b.resize(width, 900).await;
            b.goto(&format!("/admin/config/orchestra/interaction?lang={lang}"))
                .await;
            assert_eq!(b.count("#max_file_mb").await, 1);
            assert!(
                !b.scrolls_sideways().await,
                "the settings ({lang}) at {width} px"
            );
            b.script("document.querySelector('#max_file_mb').scrollIntoView(); return true;")
                .await;
            b.screenshot(&format!("{name}-{lang}")).await;
        }
    }
    b.check_console().await;
}
