//! A file an answer brought, reached from outside the doorway, over real TCP on SQLite and
//! PostgreSQL: the administrator downloads it from the instance page, a token that may read
//! instances from the API (whose instance view lists it), and a webhook receiver is told it came
//! without its bytes or where to fetch them.

use reqwest::header::HeaderMap;

use crate::api::{call, json, scoped};
use crate::helpers::{Flood, TestApp, get, read, spawn};
use crate::uploads::{pdf, sha256, started, upload};
use crate::webhooks::{receiver, send_due};

const ONBOARDING: &str = "form@supplier: Supplier details | Company*, Certificate* (file)\n\
                          review@buyer: Check the certificate | show 1\n";

/// An instance whose supplier answered with a certificate larger than a chunk; its id, the
/// file's id and bytes.
async fn answered(app: &TestApp) -> (i64, i64, Vec<u8>) {
    let id = started(app, ONBOARDING).await;
    let supplier = app.link(id, Some("supplier")).await;
    let certificate = pdf(300 << 10);
    let posted = upload(
        app,
        &supplier,
        &[("_step", "1"), ("company", "Acme")],
        &[("certificate", "certificat été.pdf", &certificate)],
    )
    .await;
    assert_eq!(posted.status, 303, "{}", posted.body);
    let files = orchestra::store::files::of_instance(&app.db, id)
        .await
        .unwrap();
    assert_eq!(files.len(), 1);
    (id, files[0].id, certificate)
}

fn header(headers: &HeaderMap, name: &str) -> String {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned()
}

/// The download answer's headers and bytes, as the doorway's.
fn assert_download(headers: &HeaderMap, body: &[u8], certificate: &[u8]) {
    assert_eq!(header(headers, "content-type"), "application/pdf");
    assert_eq!(
        header(headers, "content-disposition"),
        "attachment; filename=\"certificat _t_.pdf\"; filename*=UTF-8''certificat%20%C3%A9t%C3%A9.pdf"
    );
    assert_eq!(header(headers, "x-content-type-options"), "nosniff");
    assert!(header(headers, "content-security-policy").starts_with("sandbox"));
    assert!(header(headers, "cache-control").contains("no-store"));
    assert_eq!(
        header(headers, "content-length"),
        certificate.len().to_string()
    );
    assert_eq!(body.len(), certificate.len());
    assert!(body == certificate, "the bytes differ");
}

#[tokio::test]
async fn the_administrator_downloads_a_file_from_the_instance_page_and_no_other() {
    let app = spawn(Flood::Memory).await;
    let (id, file, certificate) = answered(&app).await;
    let other = started(&app, ONBOARDING).await;
    let admin = app.admin_client().await;

    let page = get(&admin, &app, &format!("/admin/instances/{id}")).await;
    assert_eq!(page.status, 200);
    let href = page.attr(".files a.download", "href").expect("a download");
    assert_eq!(href, format!("/admin/instances/{id}/files/{file}"));
    assert_eq!(page.first(".files a.download"), "certificat été.pdf");
    let plain = |body: &str| body.replace(['\u{2068}', '\u{2069}'], "");
    assert!(plain(&page.body).contains("300 KB"), "the size is shown");
    assert!(page.body.contains("application/pdf"), "the kind is shown");
    let fr = read(
        admin
            .get(app.url(&format!("/admin/instances/{id}")))
            .header("accept-language", "fr"),
    )
    .await;
    assert_eq!(fr.lang(), "fr");
    assert!(fr.body.contains("Fichiers") && plain(&fr.body).contains("300 Ko"));

    let response = admin.get(app.url(&href)).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let headers = response.headers().clone();
    let body = response.bytes().await.unwrap();
    assert_download(&headers, &body, &certificate);

    // Another instance's file, a made-up id, a word: the themed 404, no byte of the file.
    for path in [
        format!("/admin/instances/{other}/files/{file}"),
        format!("/admin/instances/{id}/files/{}", file + 1000),
        format!("/admin/instances/{id}/files/abc"),
    ] {
        let refused = get(&admin, &app, &path).await;
        assert_eq!(refused.status, 404, "{path}");
        assert!(
            refused
                .header("content-type")
                .unwrap_or("")
                .starts_with("text/html")
        );
        assert!(!refused.body.contains("%PDF"), "{path}");
        assert!(refused.header("content-disposition").is_none());
    }
    // Signed out: the sign-in, never the file.
    let anonymous = app.client().get(app.url(&href)).send().await.unwrap();
    assert_ne!(anonymous.status(), 200);
    assert!(!anonymous.bytes().await.unwrap().starts_with(b"%PDF"));
}

#[tokio::test]
async fn the_api_lists_a_file_in_the_instance_view_and_downloads_it_for_a_reader_only() {
    let app = spawn(Flood::Memory).await;
    let (id, file, certificate) = answered(&app).await;
    let other = started(&app, ONBOARDING).await;
    let reader = scoped(&app, "reader", Some(&["read"]), Some("all"), None).await;
    let starter = scoped(&app, "starter", Some(&["start"]), Some("all"), None).await;
    let path = format!("/api/v1/instances/{id}/files/{file}");

    let view = call(
        &app,
        "GET",
        &format!("/api/v1/instances/{id}"),
        &reader,
        None,
    )
    .await;
    assert_eq!(view.status, 200, "{}", view.body);
    let files = &json(&view)["files"];
    assert_eq!(
        files,
        &serde_json::json!([{
            "id": file,
            "step": 1,
            "field": "certificate",
            "name": "certificat été.pdf",
            "size": certificate.len(),
            "media_type": "application/pdf",
            "sha256": sha256(&certificate),
            "download": path,
        }])
    );

    let response = app
        .client()
        .get(app.url(&path))
        .bearer_auth(&reader)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let headers = response.headers().clone();
    let body = response.bytes().await.unwrap();
    assert_download(&headers, &body, &certificate);

    // As the description says (`call` checks each answer against it).
    assert_eq!(call(&app, "GET", &path, &reader, None).await.status, 200);
    let forbidden = call(&app, "GET", &path, &starter, None).await;
    assert_eq!(forbidden.status, 403);
    assert_eq!(json(&forbidden)["error"], "forbidden_scope");
    let anonymous = call(&app, "GET", &path, "", None).await;
    assert_eq!(anonymous.status, 401);
    for missing in [
        format!("/api/v1/instances/{other}/files/{file}"),
        format!("/api/v1/instances/{id}/files/{}", file + 1000),
    ] {
        let page = call(&app, "GET", &missing, &reader, None).await;
        assert_eq!(page.status, 404, "{missing}");
        assert_eq!(json(&page)["error"], "not_found");
    }
    for page in [&forbidden, &anonymous] {
        assert!(!page.body.contains("%PDF"));
    }
}

#[tokio::test]
async fn a_receiver_is_told_of_a_file_without_its_bytes_or_address() {
    let app = spawn(Flood::Memory).await;
    let r = receiver(200).await;
    let keys = app.state.site.get().await.keys.clone();
    orchestra::domain::delivery::endpoints::create(
        &app.db,
        &keys,
        &r.url,
        Some("step.answered"),
        true,
    )
    .await
    .unwrap();
    let (_, file, certificate) = answered(&app).await;
    assert_eq!(send_due(&app, orchestra::store::now(), true).await, 1);
    let got = r.got();
    assert_eq!(got.len(), 1);
    let body = &got[0].1;
    let sent: serde_json::Value = serde_json::from_str(body).unwrap();
    assert_eq!(sent["type"], "step.answered");
    assert_eq!(sent["data"]["participant"], "supplier");
    assert_eq!(sent["data"]["step"], 0);
    assert_eq!(
        sent["data"]["files"],
        serde_json::json!([{
            "field": "certificate",
            "name": "certificat été.pdf",
            "size": certificate.len(),
            "media_type": "application/pdf",
            "sha256": sha256(&certificate),
        }])
    );
    assert!(!body.contains("%PDF"), "no bytes");
    assert!(!body.contains("/files/"), "no download address");
    assert!(!body.contains("Acme"), "no answer");
    assert!(body.len() < 1000, "{}", body.len());
    let _ = file;
}
