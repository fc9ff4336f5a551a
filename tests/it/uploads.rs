//! Files over the real doorway, on SQLite and PostgreSQL: a file uploaded with a form is
//! downloaded byte for byte by the step that shows it, as an attachment only that link can
//! fetch; a file of the wrong kind or too large is refused beside its field with what was typed
//! kept; a body on a slow line finishes, a stalled one is cut; an upload cut off leaves nothing.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::helpers::{Flood, Page, TestApp, get, read, spawn, spawn_with_bodies};

/// The supplier onboarding an office needs: a certificate with the company's details, checked
/// by the buyer, who sees it.
pub const ONBOARDING: &str = "form@supplier: Supplier details | Company*, Certificate* (file)\n\
                          review@buyer: Check the certificate | show 1\n";

pub async fn started(app: &TestApp, definition: &str) -> i64 {
    let definition = orchestra::domain::workflow::Definition::parse(definition).unwrap();
    let name = format!("w{}", rand_suffix());
    orchestra::store::workflows::create(&app.db, &name, "Onboarding", &definition.to_json())
        .await
        .unwrap();
    app.start(&name, "Acme").await
}

fn rand_suffix() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// A multipart body as a browser sends it: the fields, then the files.
pub fn multipart(fields: &[(&str, &str)], files: &[(&str, &str, &[u8])]) -> (String, Vec<u8>) {
    let boundary = "----orchestraTestBoundary7MA4YWxkTrZu0gW";
    let mut body = Vec::new();
    for (name, value) in fields {
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
            )
            .as_bytes(),
        );
    }
    for (name, file_name, bytes) in files {
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"; filename=\"{file_name}\"\r\nContent-Type: application/pdf\r\n\r\n"
            )
            .as_bytes(),
        );
        body.extend_from_slice(bytes);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

pub async fn upload(
    app: &TestApp,
    link: &str,
    fields: &[(&str, &str)],
    files: &[(&str, &str, &[u8])],
) -> Page {
    let (content_type, body) = multipart(fields, files);
    read(
        app.client()
            .post(app.url(link))
            .header("sec-fetch-site", "same-origin")
            .header("content-type", content_type)
            .body(body),
    )
    .await
}

/// A PDF of `len` bytes whose every byte counts: a download that loses or reorders any differs.
pub fn pdf(len: usize) -> Vec<u8> {
    let mut bytes = b"%PDF-1.7\n".to_vec();
    let mut x: u32 = 2_463_534_242;
    while bytes.len() < len {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        bytes.push(x as u8);
    }
    bytes
}

pub fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(bytes))
}

async fn rows(app: &TestApp) -> (i64, i64) {
    orchestra::store::files::count_rows(&app.db).await.unwrap()
}

#[tokio::test]
async fn a_pdf_uploaded_with_the_form_is_downloaded_by_the_reviewer_byte_for_byte() {
    let app = spawn(Flood::Memory).await;
    let id = started(&app, ONBOARDING).await;
    let supplier = app.link(id, Some("supplier")).await;
    let form = get(&app.client(), &app, &supplier).await;
    assert_eq!(
        form.attr("form", "enctype").as_deref(),
        Some("multipart/form-data")
    );
    assert_eq!(
        form.attr("input[name=certificate]", "type").as_deref(),
        Some("file")
    );
    // Larger than a chunk, so it is stored and read back in several.
    let certificate = pdf(700 << 10);
    let posted = upload(
        &app,
        &supplier,
        &[("_step", "1"), ("company", "Acme")],
        &[("certificate", "certificat été.pdf", &certificate)],
    )
    .await;
    assert_eq!(posted.status, 303, "{}", posted.body);
    assert_eq!(rows(&app).await, (1, 3));

    let buyer = app.link(id, Some("buyer")).await;
    let page = get(&app.client(), &app, &buyer).await;
    let href = page.attr(".earlier a.file", "href").expect("a download");
    assert!(href.starts_with(&format!("{buyer}/file/")), "{href}");
    let response = app.client().get(app.url(&href)).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let headers = response.headers().clone();
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned()
    };
    assert_eq!(header("content-type"), "application/pdf");
    assert_eq!(
        header("content-disposition"),
        "attachment; filename=\"certificat _t_.pdf\"; filename*=UTF-8''certificat%20%C3%A9t%C3%A9.pdf"
    );
    assert_eq!(header("x-content-type-options"), "nosniff");
    assert!(
        header("content-security-policy").starts_with("sandbox"),
        "{}",
        header("content-security-policy")
    );
    assert_eq!(header("referrer-policy"), "no-referrer");
    let body = response.bytes().await.unwrap();
    assert_eq!(body.len(), certificate.len());
    assert!(body[..] == certificate[..], "the bytes differ");

    // The answer as recorded says what the file is, never its bytes.
    let history = orchestra::store::instances::history(&app.db, id)
        .await
        .unwrap();
    let answered = history
        .iter()
        .find(|h| h.event.as_str() == "answered")
        .unwrap();
    let json: serde_json::Value = serde_json::from_str(&answered.answer).unwrap();
    let file = &json["fields"][1]["file"];
    assert_eq!(file["name"], "certificat été.pdf");
    assert_eq!(file["size"], certificate.len() as u64);
    assert_eq!(file["media_type"], "application/pdf");
    assert_eq!(file["sha256"], sha256(&certificate));
    assert!(answered.answer.len() < 1000);
}

#[tokio::test]
async fn a_disguised_html_file_and_an_oversized_file_are_refused_with_what_was_typed_kept() {
    let app = spawn(Flood::Memory).await;
    let id = started(&app, ONBOARDING).await;
    let supplier = app.link(id, Some("supplier")).await;
    let html = b"<!DOCTYPE html><html><body><script>alert(document.cookie)</script></body></html>";
    let refused = upload(
        &app,
        &supplier,
        &[("_step", "1"), ("company", "Acme & Sons")],
        &[("certificate", "certificate.pdf", html)],
    )
    .await;
    assert_eq!(refused.status, 422, "{}", refused.body);
    assert_eq!(
        refused.attr("input[name=company]", "value").as_deref(),
        Some("Acme & Sons")
    );
    assert_eq!(
        refused
            .attr("input[name=certificate]", "aria-invalid")
            .as_deref(),
        Some("true")
    );
    let error = refused
        .text(".field-error[data-field=certificate]")
        .join(" ");
    assert!(error.contains("content was checked"), "{error}");
    assert_eq!(
        rows(&app).await,
        (0, 0),
        "nothing of a refused file is kept"
    );

    // 11 MiB against the field's 10: read to its end and refused beside the field.
    let big = pdf(11 << 20);
    let refused = upload(
        &app,
        &supplier,
        &[("_step", "1"), ("company", "Acme & Sons")],
        &[("certificate", "certificate.pdf", &big)],
    )
    .await;
    assert_eq!(refused.status, 422, "{}", refused.body);
    assert_eq!(
        refused.attr("input[name=company]", "value").as_deref(),
        Some("Acme & Sons")
    );
    let error = refused
        .text(".field-error[data-field=certificate]")
        .join(" ");
    assert!(error.contains("10 MB"), "{error}");
    assert_eq!(rows(&app).await, (0, 0));

    // A good file with another field wrong: nothing kept, and the field says to choose it again.
    let refused = upload(
        &app,
        &supplier,
        &[("_step", "1"), ("company", "")],
        &[("certificate", "certificate.pdf", &pdf(1000))],
    )
    .await;
    assert_eq!(refused.status, 422);
    let again = refused
        .text(".field-error[data-field=certificate]")
        .join(" ");
    assert!(again.contains("choose it again"), "{again}");
    // Removed when the answer is refused (after the answer is made, so wait a moment).
    wait_for_rows(&app, (0, 0)).await;
    // A text posted under the file field's name is no file.
    let posted = upload(
        &app,
        &supplier,
        &[
            ("_step", "1"),
            ("company", "Acme"),
            ("certificate", "x.pdf"),
        ],
        &[],
    )
    .await;
    assert_eq!(posted.status, 422, "{}", posted.body);
    assert_eq!(
        orchestra::store::instances::by_id(&app.db, id)
            .await
            .unwrap()
            .unwrap()
            .step_index,
        0
    );
}

/// An onboarding whose supplier answered with a 5,000-byte certificate: its id and the
/// supplier's link.
async fn certificate_sent(app: &TestApp) -> (i64, String) {
    let id = started(app, ONBOARDING).await;
    let supplier = app.link(id, Some("supplier")).await;
    let posted = upload(
        app,
        &supplier,
        &[("_step", "1"), ("company", "Acme")],
        &[("certificate", "c.pdf", &pdf(5000))],
    )
    .await;
    assert_eq!(posted.status, 303, "{}", posted.body);
    (id, supplier)
}

async fn wait_for_rows(app: &TestApp, want: (i64, i64)) {
    for _ in 0..100 {
        if rows(app).await == want {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(rows(app).await, want);
}

#[tokio::test]
async fn a_download_address_with_one_character_changed_is_refused() {
    let app = spawn(Flood::Memory).await;
    let (id, supplier) = certificate_sent(&app).await;
    let buyer = app.link(id, Some("buyer")).await;
    let href = get(&app.client(), &app, &buyer)
        .await
        .attr(".earlier a.file", "href")
        .unwrap();
    assert_eq!(get(&app.client(), &app, &href).await.status, 200);
    let mut refused = Vec::new();
    for at in [
        href.len() - 1,
        href.len() - 20,
        href.rfind('/').unwrap() + 1,
    ] {
        let mut changed = href.clone().into_bytes();
        changed[at] = if changed[at] == b'1' { b'2' } else { b'1' };
        refused.push(String::from_utf8(changed).unwrap());
    }
    // The same file under the supplier's own link (whose step shows nothing), and another id.
    let (_, tail) = href.split_at(buyer.len());
    refused.push(format!("{supplier}{tail}"));
    refused.push(format!("{buyer}/file/"));
    refused.push(format!("{buyer}/file/1"));
    refused.push(format!("{buyer}/file/../../admin"));
    for path in refused {
        let page = get(&app.client(), &app, &path).await;
        assert_eq!(page.status, 404, "{path}");
        assert!(page.headers.get("content-disposition").is_none(), "{path}");
        assert!(!page.body.contains("%PDF"), "{path}");
    }
}

#[tokio::test]
async fn hostile_names_a_zip_bomb_and_a_huge_declared_size() {
    let app = spawn(Flood::Memory).await;
    let id = started(
        &app,
        "form@supplier: Files | Archive* (file, zip), Note (file)\nreview@buyer: Check | show 1\n",
    )
    .await;
    let supplier = app.link(id, Some("supplier")).await;
    // A huge declared body is refused before any of it is read: no byte of it is sent.
    let addr = app.base.trim_start_matches("http://").to_owned();
    let mut stream = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let head = format!(
        "POST {supplier} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: multipart/form-data; boundary=x\r\nContent-Length: 10737418240\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut answer = vec![0u8; 4096];
    let n = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut answer))
        .await
        .expect("answered without the body")
        .unwrap();
    let answer = String::from_utf8_lossy(&answer[..n]);
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    // Within the layer's ceiling but over what this step's files may be.
    let head = format!(
        "POST {supplier} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: multipart/form-data; boundary=x\r\nContent-Length: 104857600\r\n\r\n"
    );
    let mut stream = tokio::net::TcpStream::connect(&addr).await.unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut answer = vec![0u8; 4096];
    let n = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut answer))
        .await
        .expect("answered without the body")
        .unwrap();
    assert!(String::from_utf8_lossy(&answer[..n]).starts_with("HTTP/1.1 413"));

    // A zip bomb: a small archive claiming a huge entry. Stored as the bytes it is, never opened.
    let mut bomb = b"PK\x03\x04\x14\x00\x00\x00\x08\x00".to_vec();
    bomb.extend_from_slice(&[0; 8]);
    bomb.extend_from_slice(&1000u32.to_le_bytes());
    bomb.extend_from_slice(&u32::MAX.to_le_bytes());
    bomb.extend_from_slice(&8u16.to_le_bytes());
    bomb.extend_from_slice(&[0, 0]);
    bomb.extend_from_slice(b"bomb.bin");
    bomb.extend(std::iter::repeat_n(0u8, 1000));
    let posted = upload(
        &app,
        &supplier,
        &[("_step", "1")],
        &[
            ("archive", "../../x", &bomb),
            ("note", "a%0ASet-Cookie: evil=1%0D%0A.txt", b"plain words"),
        ],
    )
    .await;
    assert_eq!(posted.status, 303, "{}", posted.body);
    // A raw line break inside a part's head is no multipart body at all.
    let broken = upload(
        &app,
        &supplier,
        &[("_step", "1")],
        &[("archive", "a\r\nSet-Cookie: evil=1\r\n.zip", &bomb)],
    )
    .await;
    assert_eq!(broken.status, 400);
    let buyer = app.link(id, Some("buyer")).await;
    let page = get(&app.client(), &app, &buyer).await;
    let hrefs: Vec<String> = page.text(".earlier a.file");
    assert_eq!(hrefs, ["x (1 KB)", "aSet-Cookie: evil=1.txt (11 B)"]);
    let archive = page
        .attr(".earlier dd:nth-of-type(1) a.file", "href")
        .unwrap();
    let response = app.client().get(app.url(&archive)).send().await.unwrap();
    assert_eq!(response.headers()["content-type"], "application/zip");
    assert!(response.headers().get("set-cookie").is_none());
    assert_eq!(&response.bytes().await.unwrap()[..], &bomb[..]);
    let note = page
        .attr(".earlier dd:nth-of-type(2) a.file", "href")
        .unwrap();
    let response = app.client().get(app.url(&note)).send().await.unwrap();
    assert_eq!(
        response.headers()["content-type"],
        "text/plain; charset=utf-8"
    );
    assert!(response.headers().get("set-cookie").is_none());
}

/// Sends `body` after `head` at `rate` bytes a second, or stops after `stop_after` bytes and
/// waits; returns the answer's first line, or "" when the server closed without one.
async fn trickle(
    addr: &str,
    head: &str,
    body: &[u8],
    rate: usize,
    stop_after: Option<usize>,
) -> String {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    let slice = rate / 10;
    let mut sent = 0;
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    while sent < body.len() {
        if stop_after.is_some_and(|n| sent >= n) {
            break;
        }
        tick.tick().await;
        let end = (sent + slice).min(body.len());
        if stream.write_all(&body[sent..end]).await.is_err() {
            break;
        }
        sent = end;
    }
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(30), stream.read_to_end(&mut answer)).await;
    String::from_utf8_lossy(&answer)
        .lines()
        .next()
        .unwrap_or("")
        .to_owned()
}

pub fn head_for(addr: &str, link: &str, content_type: &str, len: usize) -> String {
    format!(
        "POST {link} HTTP/1.1\r\nHost: {addr}\r\nSec-Fetch-Site: same-origin\r\nConnection: close\r\nContent-Type: {content_type}\r\nContent-Length: {len}\r\n\r\n"
    )
}

#[tokio::test]
async fn a_slow_line_that_keeps_sending_finishes_and_a_stalled_one_is_cut() {
    let connections = orchestra::config::Connections {
        body_timeout: Duration::from_secs(5),
        ..Default::default()
    };
    let app = spawn_with_bodies(Flood::Memory, connections).await;
    let addr = app.base.trim_start_matches("http://").to_owned();
    let id = started(&app, ONBOARDING).await;
    let supplier = app.link(id, Some("supplier")).await;
    let (content_type, body) = multipart(
        &[("_step", "1"), ("company", "Acme")],
        &[("certificate", "c.pdf", &pdf(1 << 20))],
    );
    // 1 MiB at 64 KiB a second: 16 seconds against a 5-second deadline, always arriving.
    let head = head_for(&addr, &supplier, &content_type, body.len());
    let answered = trickle(&addr, &head, &body, 64 << 10, None).await;
    assert!(answered.starts_with("HTTP/1.1 303"), "{answered}");
    assert_eq!(rows(&app).await.0, 1);

    // Another instance: half of it sent, then nothing.
    let id = started(&app, ONBOARDING).await;
    let supplier = app.link(id, Some("supplier")).await;
    let head = head_for(&addr, &supplier, &content_type, body.len());
    let started_at = std::time::Instant::now();
    let cut = trickle(&addr, &head, &body, 256 << 10, Some(body.len() / 2)).await;
    assert!(!cut.starts_with("HTTP/1.1 303"), "{cut}");
    assert!(
        started_at.elapsed() < Duration::from_secs(20),
        "{:?}",
        started_at.elapsed()
    );
    // What arrived of the cut file is removed with it.
    wait_for_rows(&app, (1, 4)).await;
}

#[tokio::test]
async fn an_upload_cut_halfway_leaves_no_row_or_file() {
    let app = spawn(Flood::Memory).await;
    let addr = app.base.trim_start_matches("http://").to_owned();
    let id = started(&app, ONBOARDING).await;
    let supplier = app.link(id, Some("supplier")).await;
    let (content_type, body) = multipart(
        &[("_step", "1"), ("company", "Acme")],
        &[("certificate", "c.pdf", &pdf(3 << 20))],
    );
    let mut stream = tokio::net::TcpStream::connect(&addr).await.unwrap();
    stream
        .write_all(head_for(&addr, &supplier, &content_type, body.len()).as_bytes())
        .await
        .unwrap();
    stream.write_all(&body[..body.len() / 2]).await.unwrap();
    // Until some of it is stored, then the connection drops.
    for _ in 0..200 {
        if rows(&app).await.1 > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(rows(&app).await.1 > 0, "chunks were stored as they arrived");
    drop(stream);
    wait_for_rows(&app, (0, 0)).await;
}

/// A site made by the schema before files, with the supplier onboarding as last shipped and a
/// supplier halfway: after the upgrade the supplier answers on the version they started (no
/// file asked), the example gains its certificate as a new version, and a new instance takes
/// a file that the reviewer downloads.
#[tokio::test]
async fn a_database_made_before_files_upgrades_and_keeps_its_instances_going() {
    let before = "form@supplier: Supplier details | Company*, Contact email* (email), Yearly volume (number), Notes (long) | help: Tell us who you are; a reviewer reads these answers next.\n\
                  \x20 fr: Coordonnées du fournisseur | Société, Adresse e-mail du contact, Volume annuel, Remarques | help: Dites-nous qui vous êtes\u{202f}; une personne relira ces réponses ensuite.\n\
                  review@reviewer: Check the supplier | show 1 | help: The supplier's answers are above; a rejection needs a reason.\n\
                  \x20 fr: Vérifier le fournisseur | help: Les réponses du fournisseur figurent ci-dessus\u{202f}; un refus demande un motif.\n";
    let definition = orchestra::domain::workflow::Definition::parse(before).unwrap();
    let database = crate::helpers::fresh_database().await;
    let pool = crate::helpers::schema_before(&database.url, 23).await;
    sqlx::query("INSERT INTO workflows (name, label, created_at, updated_at) VALUES ('supplier_onboarding', 'Supplier onboarding', 1700000000, 1700000000)")
        .execute(&pool).await.unwrap();
    sqlx::query("INSERT INTO workflow_versions (workflow_id, number, definition, created_at) VALUES (1, 1, $1, 1700000000)")
        .bind(definition.to_json())
        .execute(&pool).await.unwrap();
    sqlx::query("INSERT INTO instances (workflow_id, version_id, subject_title, subject_body, token, step_index, state, created_at, updated_at) VALUES (1, 1, 'Old supplier', '', 'instance-token', 0, 'active', 1700000000, 1700000000)")
        .execute(&pool).await.unwrap();
    sqlx::query("INSERT INTO history (instance_id, step_index, branch, event, answer, at, participant) VALUES (1, 0, '', 'started', '{}', 1700000000, 'supplier')")
        .execute(&pool).await.unwrap();
    pool.close().await;
    let app = crate::helpers::spawn_on(database, |_, clock| {
        std::sync::Arc::new(orchestra::limits::flood::MemoryFlood::new(4096, clock))
    })
    .await;
    // The instance in flight answers as it did, with no file asked.
    let supplier = app.link(1, Some("supplier")).await;
    let page = get(&app.client(), &app, &supplier).await;
    assert!(page.has("input[name=company]"), "{}", page.body);
    assert!(!page.has("input[type=file]"));
    let answered = crate::helpers::answer_step(
        &app.client(),
        &app,
        &supplier,
        &[
            ("_step", "1"),
            ("company", "Old Co"),
            ("contact_email", "a@old.example"),
        ],
    )
    .await;
    assert_eq!(answered.status, 200, "{}", answered.body);
    assert_eq!(
        orchestra::store::instances::by_id(&app.db, 1)
            .await
            .unwrap()
            .unwrap()
            .step_index,
        1
    );
    // The example as shipped now asks for a certificate, as a new version.
    let id = app.start("supplier_onboarding", "New supplier").await;
    let supplier = app.link(id, Some("supplier")).await;
    let certificate = pdf(4000);
    let posted = upload(
        &app,
        &supplier,
        &[
            ("_step", "1"),
            ("company", "New Co"),
            ("contact_email", "b@new.example"),
        ],
        &[("insurance_certificate", "insurance.pdf", &certificate)],
    )
    .await;
    assert_eq!(posted.status, 303, "{}", posted.body);
    let reviewer = app.link(id, Some("reviewer")).await;
    let href = get(&app.client(), &app, &reviewer)
        .await
        .attr(".earlier a.file", "href")
        .expect("the certificate offered");
    let body = app
        .client()
        .get(app.url(&href))
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    assert!(body[..] == certificate[..]);
}

/// Uploads and downloads are doorway requests: the guard counts them under their link before
/// any of their body or file is read, and refuses past the per-link limit.
#[tokio::test]
async fn uploads_and_downloads_are_counted_under_their_link() {
    let app = spawn(Flood::Memory).await;
    app.set(&[
        ("orchestra.request_limits.enabled", "true"),
        ("interaction.limits.per_link", "3"),
        ("interaction.limits.total", "1000"),
    ])
    .await;
    let id = started(&app, ONBOARDING).await;
    let supplier = app.link(id, Some("supplier")).await;
    for _ in 0..2 {
        assert_eq!(get(&app.client(), &app, &supplier).await.status, 200);
    }
    let posted = upload(
        &app,
        &supplier,
        &[("_step", "1"), ("company", "Acme")],
        &[("certificate", "c.pdf", &pdf(5000))],
    )
    .await;
    assert_eq!(posted.status, 303, "the third request");
    let again = upload(
        &app,
        &supplier,
        &[("_step", "1"), ("company", "Acme")],
        &[("certificate", "c.pdf", &pdf(5000))],
    )
    .await;
    assert_eq!(
        again.status, 429,
        "the fourth, refused before its body is read"
    );
    assert_eq!(rows(&app).await, (1, 1));

    let buyer = app.link(id, Some("buyer")).await;
    let href = get(&app.client(), &app, &buyer)
        .await
        .attr(".earlier a.file", "href")
        .unwrap();
    assert_eq!(get(&app.client(), &app, &href).await.status, 200);
    assert_eq!(get(&app.client(), &app, &href).await.status, 200);
    let refused = get(&app.client(), &app, &href).await;
    assert_eq!(
        refused.status, 429,
        "the download is counted under the buyer's link"
    );
    assert!(refused.headers.get("content-disposition").is_none());
    // Counted under the link, not the download's own address: the page is refused too.
    assert_eq!(get(&app.client(), &app, &buyer).await.status, 429);
}

/// A browser sends the parts in the page's order: a field after the file arrives too.
#[tokio::test]
async fn a_field_after_the_file_is_read() {
    let app = spawn(Flood::Memory).await;
    let id = started(
        &app,
        "form@supplier: Details | Certificate* (file), Company*\nreview@buyer: Check | show 1\n",
    )
    .await;
    let supplier = app.link(id, Some("supplier")).await;
    let boundary = "----b";
    let mut body = Vec::new();
    body.extend_from_slice(format!("--{boundary}\r\nContent-Disposition: form-data; name=\"_step\"\r\n\r\n1\r\n--{boundary}\r\nContent-Disposition: form-data; name=\"certificate\"; filename=\"c.pdf\"\r\nContent-Type: application/pdf\r\n\r\n").as_bytes());
    body.extend_from_slice(&pdf(3000));
    body.extend_from_slice(format!("\r\n--{boundary}\r\nContent-Disposition: form-data; name=\"company\"\r\n\r\nAcme\r\n--{boundary}--\r\n").as_bytes());
    let posted = read(
        app.client()
            .post(app.url(&supplier))
            .header("sec-fetch-site", "same-origin")
            .header(
                "content-type",
                format!("multipart/form-data; boundary={boundary}"),
            )
            .body(body),
    )
    .await;
    assert_eq!(posted.status, 303, "{}", posted.body);
}

/// The site's largest file caps every field, whatever its definition names: the page says so,
/// and a file over it is refused beside its field.
#[tokio::test]
async fn the_sites_largest_file_caps_every_field() {
    let app = spawn(Flood::Memory).await;
    app.set(&[("interaction.files.max_mb", "1")]).await;
    let id = started(&app, ONBOARDING).await;
    let supplier = app.link(id, Some("supplier")).await;
    let page = get(&app.client(), &app, &supplier).await;
    let hint = page.text("#f-certificate-hint").join(" ");
    assert!(hint.contains("1 MB"), "{hint}");
    let refused = upload(
        &app,
        &supplier,
        &[("_step", "1"), ("company", "Acme")],
        &[("certificate", "c.pdf", &pdf((1 << 20) + 1))],
    )
    .await;
    assert_eq!(refused.status, 422, "{}", refused.body);
    assert_eq!(rows(&app).await, (0, 0));
}

/// A process killed mid-upload leaves an arriving file; cron removes it once it is older than
/// any body may take, and never a file an answer kept or one still arriving.
#[tokio::test]
async fn cron_sweeps_what_a_killed_upload_left_and_nothing_else() {
    let app = spawn(Flood::Memory).await;
    let (id, _) = certificate_sent(&app).await;
    let now = orchestra::store::now();
    let old = now - orchestra::domain::files::ARRIVING_SECS - 60;
    for (at, chunks) in [(old, 3), (now, 1)] {
        let file = orchestra::store::files::begin(&app.db, id, 0, "certificate", "half.pdf", at)
            .await
            .unwrap();
        for seq in 0..chunks {
            orchestra::store::files::put_chunk(&app.db, file, seq, b"%PDF-")
                .await
                .unwrap();
        }
    }
    assert_eq!(rows(&app).await, (3, 5));
    orchestra::run_cron(&app.db, &app.state.guard)
        .await
        .unwrap();
    assert_eq!(
        rows(&app).await,
        (2, 2),
        "the old arriving file went, with its chunks"
    );
    let kept = orchestra::store::files::of_instance(&app.db, id)
        .await
        .unwrap();
    assert_eq!(kept.len(), 1, "the answered file stays");
}

/// A part whose head never ends would have the parser hold the whole body: it is refused as
/// malformed once the parser holds a megabyte, long before the body's end, and nothing is kept.
#[tokio::test]
async fn a_part_head_that_never_ends_is_refused_before_it_is_held() {
    let app = spawn(Flood::Memory).await;
    let id = started(&app, ONBOARDING).await;
    let supplier = app.link(id, Some("supplier")).await;
    let addr = app.base.trim_start_matches("http://").to_owned();
    let declared = 8 << 20;
    let mut stream = tokio::net::TcpStream::connect(&addr).await.unwrap();
    stream
        .write_all(
            head_for(
                &addr,
                &supplier,
                "multipart/form-data; boundary=b",
                declared,
            )
            .as_bytes(),
        )
        .await
        .unwrap();
    stream
        .write_all(b"--b\r\nContent-Disposition: form-data; name=\"certificate\"; filename=\"c.pdf\"\r\nX-Pad: ")
        .await
        .unwrap();
    // Header bytes and no end to them, a megabyte and a half of them.
    let mut sent = 0;
    let pad = vec![b'a'; 64 << 10];
    while sent < (3 << 19) {
        if stream.write_all(&pad).await.is_err() {
            break;
        }
        sent += pad.len();
    }
    let mut answer = vec![0u8; 4096];
    let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut answer))
        .await
        .expect("answered before the body's end")
        .unwrap_or(0);
    let answer = String::from_utf8_lossy(&answer[..n]);
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert_eq!(rows(&app).await, (0, 0));
}
