//! A `| verify email` step's code page in a real browser, at desktop and phone width in both
//! languages: asking for the code, then after a wrong one; the right code, typed in the
//! browser, opens the step there.

use std::time::Duration;

use crate::browser::start;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_code_step_asks_for_its_emailed_code_in_a_real_browser() {
    let Some(mut b) = start().await else {
        return;
    };
    let case = crate::email_codes::case().await;
    let app = &case.app;
    app.set(&[("orchestra.base_url", app.base.as_str())]).await;
    b.app_base = app.base.clone();
    for lang in ["en", "fr"] {
        // A link per language: each asks one code, of the three an hour a link may be sent.
        let link = app.link_for(case.id, "reviewer", 3 * 86_400).await;
        b.resize(1280, 900).await;
        b.goto(&format!("{link}?lang={lang}")).await;
        assert_eq!(b.count("input[name=code]").await, 0);
        b.follow("form.code-send button").await;
        tokio::time::sleep(Duration::from_millis(200)).await;
        for (width, height, name) in [
            (1280, 900, "doorway-code"),
            (390, 844, "doorway-code-phone"),
        ] {
            b.resize(width, height).await;
            b.goto(&format!("{link}?lang={lang}")).await;
            assert_eq!(
                b.count("input[name=code][autocomplete=one-time-code]")
                    .await,
                1
            );
            assert!(b.text(".code-sent").await.contains("r•••@review.example"));
            assert!(
                !b.scrolls_sideways().await,
                "the code page ({lang}) at {width} px"
            );
            b.screenshot(&format!("{name}-{lang}")).await;
            b.type_into("#f-code", "000000").await;
            b.follow("form.code-check button").await;
            tokio::time::sleep(Duration::from_millis(200)).await;
            assert_eq!(b.count("[role=alert]").await, 1, "a wrong code is said");
            assert!(
                !b.scrolls_sideways().await,
                "a wrong code ({lang}) at {width} px"
            );
            b.screenshot(&format!("{name}-wrong-{lang}")).await;
        }
        if lang == "en" {
            // The right code, typed here, opens the step in this browser.
            let code = case.newest_code().await;
            b.type_into("#f-code", &code).await;
            b.follow("form.code-check button").await;
            tokio::time::sleep(Duration::from_millis(200)).await;
            assert_eq!(b.text("h2").await, "Bank check");
        }
    }
    b.check_console().await;
}
