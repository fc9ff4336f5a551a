//! Issue 18, "sessions that the database alone cannot open", over real TCP on a real database:
//! a copy of the database (every byte of the SQLite file and its WAL, or every row PostgreSQL
//! holds) has no session id, no new API token and no link being shown; cookies rebuilt from its
//! session rows open nothing; the one-time cookie that carries a value to its page instead; and
//! a database made by the previous schema upgrades, signing everyone out once.

use std::time::Duration;

use tower_sessions::session::Id;

use crate::helpers::{self, ADMIN, Flood, PASSWORD, Page, TestApp, get, post, read, spawn};

const SESSION: &str = "orchestra_session";

/// Signs the test administrator in on a new client; the client and its session cookie's value.
async fn signed_in(app: &TestApp) -> (reqwest::Client, String) {
    app.create_admin().await;
    let (client, login) = helpers::signing_in(app).await;
    let id = login.cookie(SESSION).expect("a session cookie");
    (client, id)
}

/// Creates an API token through its form; the POST's answer (the token waits for its page).
async fn create_token(client: &reqwest::Client, app: &TestApp, name: &str) -> Page {
    let csrf = get(client, app, "/admin/config/api").await.csrf();
    post(
        client,
        app,
        "/admin/config/api",
        &[
            ("csrf", &csrf),
            ("name", name),
            ("rate", ""),
            ("burst", ""),
            // What a browser sends from a blank form: the default scope, ticked.
            ("ability", "read"),
            ("ability", "start"),
            ("ability", "links"),
            ("reach", "own"),
        ],
    )
    .await
}

/// Issues a link on an instance through its form; the POST's answer.
async fn issue_link(client: &reqwest::Client, app: &TestApp, instance: i64) -> Page {
    let page = format!("/admin/instances/{instance}");
    let csrf = get(client, app, &page).await.csrf();
    post(
        client,
        app,
        &format!("{page}/links"),
        &[("csrf", &csrf), ("participant", "finance"), ("ttl", "2h")],
    )
    .await
}

/// A pool on any test database URL.
async fn pool(url: &str) -> sqlx::AnyPool {
    sqlx::any::install_default_drivers();
    let url = orchestra::store::normalize_url(url).unwrap().1;
    sqlx::AnyPool::connect(&url).await.unwrap()
}

/// What an attacker holding a copy of the database has. On SQLite: every byte of the file and of
/// its WAL, copied while the server runs, free pages and old frames included, and the copy as a
/// database to read. On PostgreSQL, where no file is at hand: every row of every table, as text.
struct Copy {
    bytes: Vec<u8>,
    /// The copy's `sessions` rows: (id, data).
    sessions: Vec<(String, String)>,
    _dir: Option<tempfile::TempDir>,
}

async fn copy_of(app: &TestApp) -> Copy {
    if helpers::on_postgres() {
        let pool = pool(&app.database.url).await;
        let tables: Vec<String> = sqlx::query_scalar(
            "SELECT table_name::text FROM information_schema.tables WHERE table_schema = 'public'",
        )
        .fetch_all(&pool)
        .await
        .unwrap();
        let mut bytes = Vec::new();
        for table in tables {
            // Names from the catalogue, not input.
            let rows: Vec<String> =
                sqlx::query_scalar(&format!("SELECT CAST(t AS TEXT) FROM \"{table}\" AS t"))
                    .fetch_all(&pool)
                    .await
                    .unwrap();
            for row in rows {
                bytes.extend_from_slice(row.as_bytes());
                bytes.push(b'\n');
            }
        }
        let sessions = sessions_of(&pool).await;
        pool.close().await;
        return Copy {
            bytes,
            sessions,
            _dir: None,
        };
    }
    let path = app.database.url.strip_prefix("sqlite:").unwrap().to_owned();
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("copy.db");
    let mut bytes = std::fs::read(&path).unwrap();
    std::fs::copy(&path, &copy).unwrap();
    let wal = format!("{path}-wal");
    if let Ok(frames) = std::fs::read(&wal) {
        bytes.extend_from_slice(&frames);
        std::fs::copy(&wal, dir.path().join("copy.db-wal")).unwrap();
    }
    let pool = pool(&format!("sqlite:{}", copy.display())).await;
    let sessions = sessions_of(&pool).await;
    pool.close().await;
    Copy {
        bytes,
        sessions,
        _dir: Some(dir),
    }
}

async fn sessions_of(pool: &sqlx::AnyPool) -> Vec<(String, String)> {
    sqlx::query_as("SELECT id, data FROM sessions")
        .fetch_all(pool)
        .await
        .unwrap()
}

impl Copy {
    /// Whether the copy holds `secret` anywhere, as text or as raw bytes.
    fn holds(&self, secret: &[u8]) -> bool {
        !secret.is_empty() && self.bytes.windows(secret.len()).any(|w| w == secret)
    }

    /// Every session cookie an attacker can make of the copy's rows: the row's id as it is,
    /// every string in its data, and every number in its text (read whole, as JSON parsers
    /// lose an `i128`'s digits) as tower-sessions' numeric id.
    fn forged_cookies(&self) -> Vec<String> {
        fn strings(value: &serde_json::Value, out: &mut Vec<String>) {
            match value {
                serde_json::Value::Object(map) => map.values().for_each(|v| strings(v, out)),
                serde_json::Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
                serde_json::Value::String(s) => out.push(s.clone()),
                _ => {}
            }
        }
        let mut out = Vec::new();
        for (id, data) in &self.sessions {
            out.push(id.clone());
            if let Ok(data) = serde_json::from_str::<serde_json::Value>(data) {
                strings(&data, &mut out);
            }
            let numbers = data
                .split(|c: char| !(c.is_ascii_digit() || c == '-'))
                .filter_map(|n| n.parse::<i128>().ok());
            out.extend(numbers.map(|n| Id(n).to_string()));
        }
        let ids: Vec<String> = out
            .iter()
            .filter_map(|v| v.parse::<i128>().ok())
            .map(|n| Id(n).to_string())
            .collect();
        out.extend(ids);
        out.sort();
        out.dedup();
        out
    }
}

/// `/admin` for a browser holding only this session cookie.
async fn admin_with(app: &TestApp, cookie: &str) -> u16 {
    read(
        app.client()
            .get(app.url("/admin"))
            .header("cookie", format!("{SESSION}={cookie}")),
    )
    .await
    .status
}

/// The session id in every form the old store wrote it: the cookie's text, the number
/// tower-sessions serializes, and its 16 bytes.
fn forms_of_session_id(cookie: &str) -> Vec<Vec<u8>> {
    let id: Id = cookie.parse().expect("a session id");
    vec![
        cookie.as_bytes().to_vec(),
        id.0.to_string().into_bytes(),
        id.0.to_le_bytes().to_vec(),
    ]
}

#[tokio::test]
async fn a_copy_of_the_database_holds_no_session_id_token_or_link_and_opens_no_session() {
    let app = spawn(Flood::Memory).await;
    app.set(&[("orchestra.base_url", app.base.as_str())]).await;
    let (admin, session) = signed_in(&app).await;
    // Other browsers signed in too, so that the copy holds several sessions.
    let mut sessions = vec![session.clone()];
    for _ in 0..2 {
        sessions.push(signed_in(&app).await.1);
    }
    let instance = app.start("contract_review", "Lease renewal").await;

    // All three secrets exist: sessions, and a token and a link waiting for their pages.
    let made = create_token(&admin, &app, "crm").await;
    assert_eq!(made.status, 303);
    let issued = issue_link(&admin, &app, instance).await;
    assert_eq!(issued.status, 303);
    let waiting = copy_of(&app).await;

    // The pages show them (once), so the test knows what to look for.
    let token = get(&admin, &app, "/admin/config/api")
        .await
        .attr("input#new-token", "value")
        .expect("the token is shown");
    let url = get(&admin, &app, &format!("/admin/instances/{instance}"))
        .await
        .attr("input#issued-url", "value")
        .expect("the link is shown");
    let shown = copy_of(&app).await;
    let path = helpers::path_of(&url);
    let signature = url.rsplit_once('.').expect("a signed link").1;
    assert!(signature.len() >= 20, "{url}");

    for (when, copy) in [("while waiting", &waiting), ("once shown", &shown)] {
        for form in sessions.iter().flat_map(|s| forms_of_session_id(s)) {
            assert!(!copy.holds(&form), "{when}: a session id is in the copy");
        }
        assert!(
            !copy.holds(token.as_bytes()),
            "{when}: the token is in the copy"
        );
        for part in [url.as_str(), path.as_str(), signature] {
            assert!(
                !copy.holds(part.as_bytes()),
                "{when}: {part} is in the copy"
            );
        }
        // The attacker's turn: a cookie from every row, and every value in it.
        assert_eq!(copy.sessions.len(), 3, "{when}: each session has a row");
        for forged in copy.forged_cookies() {
            assert_eq!(
                admin_with(&app, &forged).await,
                303,
                "{when}: a cookie made of {forged} opens /admin"
            );
        }
    }
    // The real cookies still open it: the refusals above are not broken sessions.
    for session in &sessions {
        assert_eq!(admin_with(&app, session).await, 200);
    }
}

/// The whole `Set-Cookie` line a response gives a cookie.
fn set_cookie(page: &Page, name: &str) -> String {
    page.headers
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with(&format!("{name}=")))
        .unwrap_or_else(|| panic!("no Set-Cookie for {name}"))
        .to_owned()
}

#[tokio::test]
async fn a_one_time_value_rides_in_a_sealed_cookie_for_its_page_alone_and_only_for_a_minute() {
    let app = spawn(Flood::Memory).await;
    let (admin, session) = signed_in(&app).await;
    let made = create_token(&admin, &app, "crm").await;
    assert_eq!(made.status, 303);
    let set = set_cookie(&made, "orchestra_once_token");
    for attribute in [
        "HttpOnly",
        "SameSite=Strict",
        "Path=/admin/config/api",
        "Max-Age=60",
    ] {
        assert!(set.contains(attribute), "{attribute} in {set}");
    }
    let sealed = made.cookie("orchestra_once_token").unwrap();

    let shown = get(&admin, &app, "/admin/config/api").await;
    let token = shown.attr("input#new-token", "value").expect("shown");
    assert!(
        !sealed.contains(&token),
        "the cookie does not hold the text in clear"
    );
    // The page that shows it removes it.
    let removal = set_cookie(&shown, "orchestra_once_token");
    assert!(
        removal.starts_with("orchestra_once_token=;") && removal.contains("Max-Age=0"),
        "{removal}"
    );

    // The tokens page for this administrator's browser, carrying `value` as the cookie.
    let with = |value: String| {
        let request = app.client().get(app.url("/admin/config/api")).header(
            "cookie",
            format!("{SESSION}={session}; orchestra_once_token={value}"),
        );
        async move { read(request).await }
    };
    // Altered, or not a sealed value at all, it opens to nothing, and the page is fine.
    let mut altered = sealed.clone().into_bytes();
    let middle = altered.len() / 2;
    altered[middle] = if altered[middle] == b'A' { b'B' } else { b'A' };
    for value in [String::from_utf8(altered).unwrap(), "x".into(), "".into()] {
        let page = with(value).await;
        assert_eq!(page.status, 200);
        assert!(!page.has("input#new-token"));
    }
    // Within its minute a replay of the cookie shows the value (it is the value); past it the
    // date sealed inside refuses it, whatever the browser kept.
    assert!(with(sealed.clone()).await.has("input#new-token"));
    app.clock.advance(Duration::from_secs(61));
    let late = with(sealed).await;
    assert_eq!(late.status, 200);
    assert!(!late.has("input#new-token"));
}

#[tokio::test]
async fn rotating_the_site_keys_signs_every_administrator_out() {
    let app = spawn(Flood::Memory).await;
    let (admin, session) = signed_in(&app).await;
    assert_eq!(get(&admin, &app, "/admin").await.status, 200);
    orchestra::domain::rotation::rotate_keys(&app.db)
        .await
        .unwrap();
    app.state.site.refresh().await;
    assert_eq!(admin_with(&app, &session).await, 303);
    let again = get(&admin, &app, "/admin").await;
    assert_eq!(again.status, 303);
    assert!(again.location().starts_with("/admin/login"));
}

#[tokio::test]
async fn a_database_with_sessions_of_the_old_store_upgrades_signing_everyone_out_once() {
    use sha2::Digest;
    let database = helpers::fresh_database().await;
    let pool = helpers::schema_before(&database.url, 6).await;
    let hash = orchestra::domain::password::hash(PASSWORD).unwrap();
    sqlx::query("INSERT INTO admins (name, password_hash, created_at) VALUES ($1, $2, 1700000000)")
        .bind(ADMIN)
        .bind(hash)
        .execute(&pool)
        .await
        .unwrap();
    // A row as the old store wrote it: keyed by the id's SHA-256, holding the whole record
    // (the id included), with a token waiting for its page.
    let id = Id::default();
    let waiting = format!("orch_{}", "5e".repeat(32));
    let record = tower_sessions::session::Record {
        id,
        data: [
            ("admin_id".to_owned(), serde_json::json!(1)),
            ("new_api_token".to_owned(), serde_json::json!(waiting)),
        ]
        .into_iter()
        .collect(),
        expiry_date: tower_sessions::cookie::time::OffsetDateTime::now_utc()
            + tower_sessions::cookie::time::Duration::hours(12),
    };
    let key: String = sha2::Sha256::digest(id.to_string().as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    sqlx::query("INSERT INTO sessions (id, data, expiry) VALUES ($1, $2, $3)")
        .bind(key)
        .bind(serde_json::to_string(&record).unwrap())
        .bind(record.expiry_date.unix_timestamp())
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;

    let app = helpers::spawn_on(database, |_, clock| {
        std::sync::Arc::new(orchestra::limits::flood::MemoryFlood::new(4096, clock))
    })
    .await;
    // The old cookie opens nothing, and nothing of the old row is left, not even in the
    // file's free space once the WAL is checkpointed.
    assert_eq!(admin_with(&app, &id.to_string()).await, 303);
    app.db.checkpoint().await.unwrap();
    let copy = copy_of(&app).await;
    assert!(copy.sessions.is_empty(), "the old rows are dropped");
    assert!(!copy.holds(waiting.as_bytes()), "the waiting token is gone");
    for form in forms_of_session_id(&id.to_string()) {
        assert!(!copy.holds(&form), "the old session id is gone");
    }
    // Signing in again works, and the new store keeps the administrator signed in.
    let (admin, _) = signed_in(&app).await;
    assert_eq!(get(&admin, &app, "/admin").await.status, 200);
    assert_eq!(copy_of(&app).await.sessions.len(), 1);
}
