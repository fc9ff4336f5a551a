//! Uploads to the real `orchestra serve`, as an operator runs it: eight at once within the
//! memory bound, and files kept in a directory (`ORCHESTRA_FILES_DIR`).

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::uploads::{ONBOARDING, head_for, multipart, pdf};

const BIN: &str = env!("CARGO_BIN_EXE_orchestra");

/// Eight 6 MiB uploads at once from eight addresses, to the real `orchestra serve`: 48 MiB in
/// all against a 32 MiB body budget. Streamed, each holds a frame of the budget, so none is
/// refused for it, and the server grows by at most 40 MiB however many arrive.
#[tokio::test]
async fn eight_uploads_at_once_are_taken_within_the_memory_bound() {
    let database = crate::helpers::fresh_database().await;
    let (db, ids) = onboarding_on(&database.url, 9).await;
    let mut links = Vec::new();
    for id in ids {
        links.push(issue(&db, id, "supplier").await);
    }
    let server = crate::helpers::serve::serve(BIN, &database.url, &[]);
    let addr = server.addr.to_string();
    let (content_type, body) = multipart(
        &[("_step", "1"), ("company", "Acme")],
        &[("certificate", "c.pdf", &pdf(6 << 20))],
    );
    let send = |link: String, from: usize| {
        let head = head_for(&addr, &link, &content_type, body.len());
        let body = body.clone();
        let addr = server.addr;
        async move {
            let mut stream =
                crate::helpers::raw::connect_from(addr, crate::helpers::raw::source(from)).await;
            // A refusal closes the connection before the body is through: its answer is read.
            let _ = stream.write_all(head.as_bytes()).await;
            let _ = stream.write_all(&body).await;
            let mut answer = Vec::new();
            let _ = tokio::time::timeout(Duration::from_secs(120), stream.read_to_end(&mut answer))
                .await;
            String::from_utf8_lossy(&answer)
                .lines()
                .next()
                .unwrap_or("")
                .to_owned()
        }
    };
    // One first, so pools and caches are as they will be.
    let first = send(links[8].clone(), 100).await;
    assert!(first.starts_with("HTTP/1.1 303"), "{first}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = server.rss_kib();
    let peak = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(before));
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let sampler = {
        let (peak, stop, pid) = (peak.clone(), stop.clone(), server.pid());
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let status =
                    std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
                let rss: u64 = status
                    .lines()
                    .find_map(|l| l.strip_prefix("VmRSS:"))
                    .and_then(|v| v.split_whitespace().next()?.parse().ok())
                    .unwrap_or(0);
                peak.fetch_max(rss, std::sync::atomic::Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(20));
            }
        })
    };
    let answers = futures_util::future::join_all(
        links[..8]
            .iter()
            .enumerate()
            .map(|(i, link)| send(link.clone(), i + 1)),
    )
    .await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    sampler.join().unwrap();
    for answer in &answers {
        assert!(answer.starts_with("HTTP/1.1 303"), "{answers:?}");
    }
    let grew = peak
        .load(std::sync::atomic::Ordering::Relaxed)
        .saturating_sub(before);
    eprintln!("eight 6 MiB uploads at once: the server grew by {grew} KiB at its peak");
    assert!(grew <= 40 << 10, "grew by {grew} KiB");
    assert_eq!(
        orchestra::store::files::count_rows(&db).await.unwrap(),
        (9, 9 * 24)
    );
}

/// `count` instances of the onboarding on a database `orchestra serve` will run on.
async fn onboarding_on(url: &str, count: usize) -> (orchestra::store::Db, Vec<i64>) {
    crate::helpers::serve::configure(BIN, url, &[]);
    let db = orchestra::open(url).await.unwrap();
    let definition = orchestra::domain::workflow::Definition::parse(ONBOARDING).unwrap();
    orchestra::store::workflows::create(&db, "onboarding", "Onboarding", &definition.to_json())
        .await
        .unwrap();
    let workflow = orchestra::store::workflows::by_name(&db, "onboarding")
        .await
        .unwrap()
        .unwrap();
    let mut ids = Vec::new();
    for _ in 0..count {
        let by = orchestra::domain::instance::Actor::CommandLine;
        let start = orchestra::domain::instance::Start::new(workflow.id, "Acme", &by);
        ids.push(
            orchestra::domain::instance::start(&db, &start)
                .await
                .unwrap(),
        );
    }
    (db, ids)
}

/// A link for `who` on instance `id`, issued as an administrator would.
async fn issue(db: &orchestra::store::Db, id: i64, who: &str) -> String {
    let keys = orchestra::store::keys::load_or_create(db).await.unwrap();
    let versions = orchestra::domain::workflow::versions::Cache::default();
    let by = orchestra::domain::instance::Actor::CommandLine;
    let order = orchestra::domain::instance::Order {
        participant: who,
        ttl: 3600,
        now: orchestra::store::now(),
        by: &by,
        daily_cap: None,
    };
    orchestra::domain::instance::issue(db, &versions, &keys, "", id, &order)
        .await
        .unwrap()
        .url
}

/// With `ORCHESTRA_FILES_DIR`, a file's bytes go to the directory, not the database: whole
/// under its id once arrived, downloaded byte for byte; a cut upload leaves no part behind.
#[tokio::test]
async fn files_go_to_a_directory_when_one_is_named() {
    let database = crate::helpers::fresh_database().await;
    let (db, ids) = onboarding_on(&database.url, 2).await;
    let dir = tempfile::tempdir().unwrap();
    let server = crate::helpers::serve::serve(
        BIN,
        &database.url,
        &[("ORCHESTRA_FILES_DIR", dir.path().to_str().unwrap())],
    );
    let base = format!("http://{}", server.addr);
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let certificate = pdf(600 << 10);
    let (content_type, body) = multipart(
        &[("_step", "1"), ("company", "Acme")],
        &[("certificate", "c.pdf", &certificate)],
    );
    let supplier = issue(&db, ids[0], "supplier").await;
    let posted = client
        .post(format!("{base}{supplier}"))
        .header("sec-fetch-site", "same-origin")
        .header("content-type", &content_type)
        .body(body.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(posted.status(), 303);
    let file = orchestra::store::files::of_instance(&db, ids[0])
        .await
        .unwrap();
    let on_disk = std::fs::read(dir.path().join(file[0].id.to_string())).unwrap();
    assert!(on_disk == certificate, "the directory holds the file whole");
    assert_eq!(
        orchestra::store::files::count_rows(&db).await.unwrap(),
        (1, 0)
    );
    let buyer = issue(&db, ids[0], "buyer").await;
    let page = client
        .get(format!("{base}{buyer}"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let href = crate::helpers::select_attr(&page, ".earlier a.file", "href").unwrap();
    let downloaded = client
        .get(format!("{base}{href}"))
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    assert!(downloaded[..] == certificate[..]);

    // Cut halfway: nothing left in the directory but the first file.
    let supplier = issue(&db, ids[1], "supplier").await;
    let addr = server.addr.to_string();
    let mut stream = tokio::net::TcpStream::connect(&addr).await.unwrap();
    stream
        .write_all(head_for(&addr, &supplier, &content_type, body.len()).as_bytes())
        .await
        .unwrap();
    stream.write_all(&body[..body.len() / 2]).await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    drop(stream);
    for _ in 0..100 {
        if std::fs::read_dir(dir.path()).unwrap().count() == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, [file[0].id.to_string()]);
    assert_eq!(
        orchestra::store::files::count_rows(&db).await.unwrap(),
        (1, 0)
    );
}
