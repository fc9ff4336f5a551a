//! The settings pages in two parts: what everyone sets, then an *Advanced* part for the limits,
//! closed while the doorway is fully capped, open when it needs a look (nothing caps it, or a
//! value in it was refused). The operator's terms live in one note inside it.

use crate::helpers::{Flood, Page, TestApp, get, post, spawn};

/// The page's words outside every `<details>`: what an administrator reads without opening
/// the Advanced part.
fn words_outside_advanced(page: &Page) -> String {
    // Cut every outermost `<details>…</details>`, nested ones inside it included.
    let body = page.body.as_str();
    let mut outside = String::new();
    let (mut depth, mut at) = (0usize, 0usize);
    while at < body.len() {
        let rest = &body[at..];
        if rest.starts_with("<details") {
            depth += 1;
        } else if rest.starts_with("</details>") {
            depth -= 1;
            at += "</details>".len();
            continue;
        }
        let c = rest.chars().next().unwrap();
        if depth == 0 {
            outside.push(c);
        }
        at += c.len_utf8();
    }
    let doc = scraper::Html::parse_document(&outside);
    let main = scraper::Selector::parse("main").unwrap();
    doc.select(&main)
        .flat_map(|m| m.text())
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

fn advanced_open(page: &Page) -> bool {
    page.body
        .split("<details")
        .nth(1)
        .and_then(|rest| rest.split('>').next())
        .map(|tag| {
            assert!(tag.contains(r#"id="advanced""#), "{tag}");
            tag.contains(" open")
        })
        .expect("an Advanced part")
}

async fn fully_capped(app: &TestApp) {
    app.set(&[
        ("orchestra.request_limits.enabled", "true"),
        ("interaction.limits.per_link", "30"),
        ("interaction.limits.total", "5000"),
    ])
    .await;
}

#[tokio::test]
async fn the_limits_wait_in_a_closed_advanced_part_while_the_doorway_is_capped() {
    let app = spawn(Flood::Memory).await;
    fully_capped(&app).await;
    let admin = app.admin_client().await;
    for lang in ["en", "fr"] {
        for path in [
            "/admin/config/orchestra",
            "/admin/config/orchestra/interaction",
        ] {
            let page = get(&admin, &app, &format!("{path}?lang={lang}")).await;
            assert_eq!(page.status, 200, "{path}");
            assert!(!advanced_open(&page), "{lang} {path}: closed");
            let words = words_outside_advanced(&page);
            for jargon in ["flood", "bucket", "burst", "percentile", "seau", "centile"] {
                assert!(
                    !words.contains(jargon),
                    "{lang} {path}: {jargon} in {words}"
                );
            }
            // Everything is still on the page, behind its summary, with the operator's note.
            assert!(page.has("#advanced summary"), "{lang} {path}");
            assert!(page.first("#operator-note").contains("ORCHESTRA_FLOOD"));
        }
        let settings = get(
            &admin,
            &app,
            &format!("/admin/config/orchestra?lang={lang}"),
        )
        .await;
        for basic in [
            "site_name",
            "base_url",
            "default_link_ttl",
            "retention_days",
        ] {
            assert!(settings.has(&format!("label[for={basic}]")), "{basic}");
        }
    }
}

#[tokio::test]
async fn the_advanced_part_opens_when_nothing_caps_the_doorway_or_a_limit_was_refused() {
    let app = spawn(Flood::Memory).await;
    fully_capped(&app).await;
    let admin = app.admin_client().await;
    // A refused limit: the part is open, with the typed value kept and nothing saved.
    let form = get(&admin, &app, "/admin/config/orchestra/interaction").await;
    let refused = post(
        &admin,
        &app,
        "/admin/config/orchestra/interaction",
        &[
            ("csrf", &form.csrf()),
            ("per_link", "twelve"),
            ("total", "5000"),
            ("max_file_mb", "10"),
        ],
    )
    .await;
    assert_eq!(refused.status, 422);
    assert!(advanced_open(&refused));
    assert_eq!(
        refused.attr("#per_link", "value").as_deref(),
        Some("twelve")
    );
    // A refused basic value leaves the limits closed.
    let basic = post(
        &admin,
        &app,
        "/admin/config/orchestra/interaction",
        &[
            ("csrf", &form.csrf()),
            ("per_link", "30"),
            ("total", "5000"),
            ("max_file_mb", "lots"),
        ],
    )
    .await;
    assert_eq!(basic.status, 422);
    assert!(!advanced_open(&basic));
    // Nothing caps the doorway: both pages open the part by themselves.
    app.set(&[("orchestra.request_limits.enabled", "false")])
        .await;
    for path in [
        "/admin/config/orchestra",
        "/admin/config/orchestra/interaction",
    ] {
        assert!(advanced_open(&get(&admin, &app, path).await), "{path}");
    }
}
