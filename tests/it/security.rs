//! Issue 9, "every door locked", over real TCP and on the real binary: the login under flood
//! control and a bounded password pool, the client address behind trusted proxies, no
//! anonymous writes, the security headers on every kind of page, the CSRF token's rotation,
//! a login destination with a control character, themed errors, and the workflow caps.

use std::time::{Duration, Instant};

use crate::helpers::{self, ADMIN, Flood, PASSWORD, TestApp, get, post, read, serve, spawn};

const BIN: &str = env!("CARGO_BIN_EXE_orchestra");

/// One sign-in attempt with the login form's own token.
async fn attempt(
    client: &reqwest::Client,
    app: &TestApp,
    name: &str,
    password: &str,
) -> helpers::Page {
    let csrf = get(client, app, "/admin/login").await.csrf();
    read(client.post(app.url("/admin/login")).form(&[
        ("csrf", csrf.as_str()),
        ("name", name),
        ("password", password),
        ("destination", "/admin"),
    ]))
    .await
}

// --- 1. The login under flood control -----------------------------------------------------

/// One sign-in attempt from `from`, as the trusted proxy in front of the app names it.
async fn attempt_from(app: &TestApp, from: &str, name: &str, password: &str) -> helpers::Page {
    attempt_in(&app.client(), app, from, name, password, "").await
}

/// `attempt_from` in `client`'s cookies, on the login page with `lang` (its query, or "").
pub(crate) async fn attempt_in(
    client: &reqwest::Client,
    app: &TestApp,
    from: &str,
    name: &str,
    password: &str,
    lang: &str,
) -> helpers::Page {
    let login = format!("/admin/login{lang}");
    let csrf = read(client.get(app.url(&login)).header("x-forwarded-for", from))
        .await
        .csrf();
    read(
        client
            .post(app.url(&login))
            .header("x-forwarded-for", from)
            .form(&[
                ("csrf", csrf.as_str()),
                ("name", name),
                ("password", password),
                ("destination", "/admin"),
            ]),
    )
    .await
}

/// The app behind a proxy on loopback that says who its clients are in `X-Forwarded-For`.
async fn behind_proxy(flood: Flood) -> TestApp {
    helpers::spawn_behind(
        flood,
        "127.0.0.1",
        orchestra::proxy::ClientIpHeader::XForwardedFor,
    )
    .await
}

// Issue 18: five failures used to lock the account from every address for six hours.
#[tokio::test]
async fn five_failures_from_one_address_lock_that_address_out_of_the_account_and_no_other() {
    let app = behind_proxy(Flood::Memory).await;
    app.create_admin().await;
    let guesser = "203.0.113.7";
    for n in 0..5 {
        let page = attempt_from(&app, guesser, ADMIN, "wrong password!").await;
        assert_eq!(page.status, 401, "attempt {n}");
    }
    let page = attempt_from(&app, guesser, ADMIN, PASSWORD).await;
    assert_eq!(
        page.status, 429,
        "the sixth attempt from that address is refused, right password or not"
    );
    assert_eq!(
        page.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    assert_eq!(page.first("h1"), "Too many sign-in attempts");
    assert!(
        page.cookie(common_session()).is_none(),
        "no session for a refused attempt"
    );
    let fr = attempt_in(&app.client(), &app, guesser, ADMIN, PASSWORD, "?lang=fr").await;
    assert_eq!(fr.status, 429);
    assert_eq!(fr.lang(), "fr");
    assert_eq!(fr.first("h1"), "Trop de tentatives de connexion");

    // The owner, from anywhere else, is let in at once.
    let owner = attempt_from(&app, "198.51.100.20", ADMIN, PASSWORD).await;
    assert_eq!(owner.status, 303, "the account itself is not locked");
    // And from an IPv6 address, by its /64.
    let v6 = attempt_from(&app, "2001:db8:1:2::99", ADMIN, PASSWORD).await;
    assert_eq!(v6.status, 303);

    // Once the period has passed (the count is conservative by up to one bucket of it), the
    // guesser's address may try again.
    app.clock.advance(Duration::from_secs(7 * 3600));
    let page = attempt_from(&app, guesser, ADMIN, PASSWORD).await;
    assert_eq!(page.status, 303);
}

#[tokio::test]
async fn an_account_takes_its_total_of_failures_from_all_addresses_together() {
    let app = behind_proxy(Flood::Sql).await;
    app.set(&[
        ("login.limits.per_account", "5"),
        ("login.limits.account_total", "8"),
    ])
    .await;
    app.create_admin().await;
    for from in ["203.0.113.1", "203.0.113.2"] {
        for _ in 0..4 {
            let page = attempt_from(&app, from, ADMIN, "wrong password!").await;
            assert_eq!(page.status, 401, "{from}");
        }
    }
    // Eight failures spread over two addresses: the account's total is spent, from anywhere.
    let page = attempt_from(&app, "198.51.100.3", ADMIN, PASSWORD).await;
    assert_eq!(page.status, 429);
    // A name no account has is not the account: it is answered as ever.
    let other = attempt_from(&app, "198.51.100.3", "somebody", "whatever pw").await;
    assert_eq!(other.status, 401);
}

fn common_session() -> &'static str {
    "orchestra_session"
}

/// One sign-in post to the app at `base` with the token its client already holds, from `from`
/// as the trusted proxy names it ("": no header); its status. Owns its arguments, so it can be
/// spawned.
fn post_sign_in(
    client: &reqwest::Client,
    base: &str,
    csrf: &str,
    from: &str,
    name: &str,
    password: &'static str,
) -> impl std::future::Future<Output = u16> + Send + use<> {
    let mut request = client.post(format!("{base}/admin/login"));
    if !from.is_empty() {
        request = request.header("x-forwarded-for", from);
    }
    let request = request.form(&[("csrf", csrf), ("name", name), ("password", password)]);
    async move { request.send().await.unwrap().status().as_u16() }
}

// Issue 18: 9,811 of 10,000 attempts got a full pool's 503, and those counted as failures.
#[tokio::test]
async fn a_full_password_pool_answers_503_and_counts_nothing() {
    let app = behind_proxy(Flood::Memory).await;
    app.set(&[
        ("login.limits.per_address", "1"),
        ("login.limits.per_account", "1"),
        ("login.limits.account_total", "100000"),
    ])
    .await;
    app.create_admin().await;
    let client = app.client();
    let csrf = get(&client, &app, "/admin/login").await.csrf();
    // Far more wrong passwords at once, each from its own address, than the pool holds.
    let mut tasks = tokio::task::JoinSet::new();
    for n in 0..200u32 {
        let from = format!("198.18.{}.{}", n / 250, 1 + n % 250);
        let post = post_sign_in(&client, &app.base, &csrf, &from, ADMIN, "wrong password!");
        tasks.spawn(async move { (from, post.await) });
    }
    let outcomes = tasks.join_all().await;
    let of = |status| {
        outcomes
            .iter()
            .filter(|(_, s)| *s == status)
            .map(|(from, _)| from.clone())
            .collect::<Vec<_>>()
    };
    let (busy, checked) = (of(503), of(401));
    assert_eq!(busy.len() + checked.len(), 200, "{outcomes:?}");
    assert!(
        !busy.is_empty(),
        "the pool never filled: this test proves nothing"
    );
    assert!(!checked.is_empty());
    // An address that met the full pool was counted nowhere: with limits of 1 per address and
    // 1 failure per account and address, its next attempt is checked, and signs in.
    for from in busy.iter().take(3) {
        assert_eq!(
            attempt_from(&app, from, ADMIN, PASSWORD).await.status,
            303,
            "{from}"
        );
    }
    // One whose password was checked and wrong was counted: refused.
    assert_eq!(
        attempt_from(&app, &checked[0], ADMIN, PASSWORD)
            .await
            .status,
        429
    );
}

// Issue 18: 10,000 anonymous sign-in attempts wrote 10,001 flood rows.
#[tokio::test]
async fn made_up_names_are_counted_per_address_only_and_write_no_row_of_their_own() {
    let app = spawn(Flood::Sql).await;
    app.set(&[("login.limits.per_address", "100000")]).await;
    let client = app.client();
    let csrf = get(&client, &app, "/admin/login").await.csrf();
    let mut tasks = tokio::task::JoinSet::new();
    for n in 0..300 {
        let name = format!("made-up-{n}");
        tasks.spawn(post_sign_in(
            &client,
            &app.base,
            &csrf,
            "",
            &name,
            "some password",
        ));
    }
    assert!(tasks.join_all().await.iter().all(|&s| s == 401));
    app.state.guard.sync().await.unwrap();
    let flood_rows = row_counts(&app.database.url)
        .await
        .into_iter()
        .find(|(table, _)| table == "flood")
        .map(|(_, n)| n);
    assert_eq!(
        flood_rows,
        Some(2),
        "two rows: the address's two cells of the counting table"
    );
}

// Issue 18: with a 4,096-cell table, 32,000 made-up names made the administrator's password 429
// and refused 14 of 20 new names on their first try.
#[tokio::test]
async fn a_full_counting_table_never_refuses_a_new_names_first_attempt_nor_the_owner() {
    // The harness's table has 4,096 cells a row; a limit of 1 failure makes any shared cell a
    // refusal, so 5,000 names are enough to fill it.
    let app = spawn(Flood::Memory).await;
    app.set(&[
        ("login.limits.per_address", "100000"),
        ("login.limits.per_account", "1"),
        ("login.limits.account_total", "1"),
    ])
    .await;
    app.create_admin().await;
    let client = app.client();
    let csrf = get(&client, &app, "/admin/login").await.csrf();
    let sign_in =
        |name: String, password| post_sign_in(&client, &app.base, &csrf, "", &name, password);
    let mut tasks = tokio::task::JoinSet::new();
    for n in 0..5_000 {
        tasks.spawn(sign_in(format!("flood-{n}"), "some password"));
        if tasks.len() >= 64 {
            assert_eq!(tasks.join_next().await.unwrap().unwrap(), 401);
        }
    }
    assert!(tasks.join_all().await.iter().all(|&s| s == 401));
    for n in 0..20 {
        assert_eq!(
            sign_in(format!("new-{n}"), "some password").await,
            401,
            "new-{n}"
        );
    }
    assert_eq!(sign_in(ADMIN.to_owned(), PASSWORD).await, 303);
}

/// Issue 18's flood, on the real binary: 10,000 sign-in attempts from 400 addresses (made-up
/// names, and one in 200 the administrator's name with a wrong password), while the
/// administrator signs in from a clean address, several times. Prints what it measured.
#[tokio::test]
async fn the_administrator_signs_in_while_ten_thousand_attempts_from_four_hundred_addresses_run() {
    const ATTEMPTS: usize = 10_000;
    const ADDRESSES: usize = 400;
    let (_dir, server) = real_server(&[], &[("ORCHESTRA_TRUSTED_PROXIES", "127.0.0.1")]);
    let base = format!("http://{}", server.addr);
    // A fresh browser each time, from an address the flood never uses.
    let owner_signs_in = |base: String| async move {
        let c = client();
        let csrf = login_token(&c, &base).await;
        let started = Instant::now();
        let status = post_sign_in(&c, &base, &csrf, "192.0.2.10", ADMIN, PASSWORD).await;
        (status, started.elapsed())
    };
    let (status, at_rest) = owner_signs_in(base.clone()).await;
    assert_eq!(status, 303);

    let flood = client();
    let csrf = login_token(&flood, &base).await;
    let next = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let done = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let started = Instant::now();
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..48 {
        let (flood, csrf, base) = (flood.clone(), csrf.clone(), base.clone());
        let (next, done) = (next.clone(), done.clone());
        workers.spawn(async move {
            let mut statuses: Vec<(bool, u16)> = Vec::new();
            loop {
                let n = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if n >= ATTEMPTS {
                    return statuses;
                }
                let from = format!("198.18.{}.{}", n % ADDRESSES / 200, 1 + n % ADDRESSES % 200);
                let owners = n % 200 == 7;
                let name = if owners {
                    ADMIN.to_owned()
                } else {
                    format!("made-up-{n}")
                };
                let status =
                    post_sign_in(&flood, &base, &csrf, &from, &name, "wrong password!").await;
                statuses.push((owners, status));
                done.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        });
    }
    // The owner, while the flood runs: a try every half second once it is under way.
    while done.load(std::sync::atomic::Ordering::Relaxed) < 500 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut tries = Vec::new();
    while tries.len() < 8 && done.load(std::sync::atomic::Ordering::Relaxed) < ATTEMPTS - 500 {
        let (status, took) = owner_signs_in(base.clone()).await;
        tries.push((status, took));
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let statuses: Vec<(bool, u16)> = workers.join_all().await.into_iter().flatten().collect();
    let flood_took = started.elapsed();
    let count = |owners: bool, status: u16| {
        statuses
            .iter()
            .filter(|&&(o, s)| o == owners && s == status)
            .count()
    };
    eprintln!(
        "sign-in flood: {ATTEMPTS} attempts from {ADDRESSES} addresses in {flood_took:?}; \
         made-up names: {} × 401, {} × 429, {} × 503; the owner's name, wrong: {} × 401, \
         {} × 429, {} × 503; the owner from a clean address: {at_rest:?} at rest, during the \
         flood {tries:?}",
        count(false, 401),
        count(false, 429),
        count(false, 503),
        count(true, 401),
        count(true, 429),
        count(true, 503),
    );
    assert_eq!(statuses.len(), ATTEMPTS);
    assert!(
        tries.len() >= 5,
        "only {} tries while the flood ran",
        tries.len()
    );
    for (status, took) in &tries {
        assert_eq!(
            *status, 303,
            "the owner's try answered {status} after {took:?}"
        );
    }
    // Made-up names cost no place in the pool, so none met a full one; 25 from each address
    // is under its 50. The owner's name from two of the addresses: 5 failures each, then
    // refused by the account and address, never by the account as a whole.
    assert_eq!(count(false, 401), ATTEMPTS - 50);
    assert_eq!((count(true, 401), count(true, 429)), (10, 40));
    // The flood store wrote about a row per address, not one per name.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let db = format!("sqlite:{}", _dir.path().join("orchestra.db").display());
    let rows = row_counts(&db)
        .await
        .into_iter()
        .find(|(table, _)| table == "flood")
        .map_or(0, |(_, n)| n);
    eprintln!("sign-in flood: {rows} flood rows written");
    assert!(rows <= 2 * (ADDRESSES as i64 + 3) + 10, "{rows} flood rows");
}

// Issue 18: a success used to clear the account's count (the flood store's `clear`); it now
// counts nothing per account and clears nothing, so a success before a sixth failure does not
// give the address five more.
#[tokio::test]
async fn a_successful_sign_in_counts_nothing_per_account_and_clears_nothing() {
    let app = spawn(Flood::Sql).await;
    app.set(&[("login.limits.per_address", "9")]).await;
    app.create_admin().await;
    let client = app.client();
    for _ in 0..4 {
        assert_eq!(
            attempt(&client, &app, ADMIN, "wrong password!")
                .await
                .status,
            401
        );
    }
    assert_eq!(attempt(&client, &app, ADMIN, PASSWORD).await.status, 303);
    // The four failures still count, the success did not: one more, and this address is out.
    let fresh = app.client();
    assert_eq!(
        attempt(&fresh, &app, ADMIN, "wrong password!").await.status,
        401
    );
    assert_eq!(attempt(&fresh, &app, ADMIN, PASSWORD).await.status, 429);
    // That refusal counted nothing: 6 attempts were counted from this address, three made-up
    // names take it to its 9, and the next is refused by the address.
    for _ in 0..3 {
        assert_eq!(
            attempt(&fresh, &app, "someone", "whatever pw").await.status,
            401
        );
    }
    assert_eq!(
        attempt(&fresh, &app, "someone", "whatever pw").await.status,
        429
    );
}

#[tokio::test]
async fn an_address_is_limited_across_every_name_it_tries() {
    let app = spawn(Flood::Memory).await;
    app.set(&[
        ("login.limits.per_address", "3"),
        ("login.limits.per_account", "0"),
    ])
    .await;
    let client = app.client();
    for name in ["ann", "bob", "cy"] {
        assert_eq!(
            attempt(&client, &app, name, "some password").await.status,
            401
        );
    }
    assert_eq!(
        attempt(&client, &app, "dee", "some password").await.status,
        429
    );
}

#[tokio::test]
async fn report_only_sign_ins_check_every_password_yet_tally_what_would_have_been_refused() {
    let app = spawn(Flood::Sql).await;
    app.set(&[
        ("login.limits.per_address", "3"),
        ("login.limits.per_account", "0"),
        ("login.limits.report_only", "true"),
    ])
    .await;
    app.create_admin().await;
    let client = app.client();
    for name in ["ann", "bob", "cy", "dee", "eve"] {
        assert_eq!(
            attempt(&client, &app, name, "some password").await.status,
            401,
            "{name}: answered, never refused"
        );
    }
    // Past the limit, the right password still signs in: nothing is refused.
    assert_eq!(attempt(&client, &app, ADMIN, PASSWORD).await.status, 303);
    let seen = app.state.guard.would_refuse(
        orchestra::limits::guard::Address::SignInAddress,
        Duration::from_secs(3600),
    );
    assert_eq!(
        seen.current,
        [3, 0],
        "three of six attempts were past the limit"
    );
    // Enforcing keeps the count: the next attempt is refused.
    app.set(&[("login.limits.report_only", "false")]).await;
    assert_eq!(
        attempt(&app.client(), &app, "fay", "some password")
            .await
            .status,
        429
    );
}

/// Starts the real server on a fresh SQLite file with these settings and environment, with the
/// test administrator made by `orchestra admin create`.
fn real_server(
    settings: &[(&str, &str)],
    env: &[(&str, &str)],
) -> (tempfile::TempDir, serve::Served) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("orchestra.db").display());
    serve::configure(BIN, &url, settings);
    let out = std::process::Command::new(BIN)
        .args(["admin", "create", ADMIN])
        .env("ORCHESTRA_DATABASE_URL", &url)
        .env("ORCHESTRA_ADMIN_PASSWORD", PASSWORD)
        .output()
        .unwrap();
    assert!(out.status.success());
    let served = serve::serve(BIN, &url, env);
    (dir, served)
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .cookie_store(true)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

async fn login_token(client: &reqwest::Client, base: &str) -> String {
    let page = client
        .get(format!("{base}/admin/login"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    helpers::csrf_of(&page)
}

async fn forwarded_attempt(client: &reqwest::Client, base: &str, csrf: &str, xff: &str) -> u16 {
    client
        .post(format!("{base}/admin/login"))
        .header("x-forwarded-for", xff)
        .form(&[
            ("csrf", csrf),
            ("name", "nobody"),
            ("password", "wrong password"),
        ])
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[tokio::test]
async fn a_spoofed_x_forwarded_for_changes_nothing_unless_the_proxy_is_trusted() {
    let limits = [
        ("login.limits.per_address", "2"),
        ("login.limits.per_account", "0"),
    ];
    // No proxy named: the header is ignored, every attempt is 127.0.0.1's.
    let (_dir, server) = real_server(&limits, &[]);
    let base = format!("http://{}", server.addr);
    let c = client();
    let csrf = login_token(&c, &base).await;
    assert_eq!(
        forwarded_attempt(&c, &base, &csrf, "203.0.113.1").await,
        401
    );
    assert_eq!(
        forwarded_attempt(&c, &base, &csrf, "203.0.113.2").await,
        401
    );
    assert_eq!(
        forwarded_attempt(&c, &base, &csrf, "203.0.113.3").await,
        429
    );
    drop(server);

    // Loopback named as the proxy: the client is the rightmost hop it did not add itself.
    let (_dir, server) = real_server(
        &limits,
        &[("ORCHESTRA_TRUSTED_PROXIES", "127.0.0.1, 10.0.0.0/8")],
    );
    let base = format!("http://{}", server.addr);
    let c = client();
    let csrf = login_token(&c, &base).await;
    for n in 1..=4 {
        let xff = format!("198.51.100.{n}");
        assert_eq!(
            forwarded_attempt(&c, &base, &csrf, &xff).await,
            401,
            "{xff}"
        );
    }
    // A client writing made-up hops on the left is still counted by the address nginx saw,
    // whatever internal proxies sit between.
    for n in 1..=2 {
        let xff = format!("192.0.2.{n}, 203.0.113.77, 10.0.0.5");
        assert_eq!(forwarded_attempt(&c, &base, &csrf, &xff).await, 401);
    }
    assert_eq!(
        forwarded_attempt(&c, &base, &csrf, "192.0.2.99, 203.0.113.77, 10.0.0.5").await,
        429
    );
}

#[tokio::test]
async fn the_status_report_warns_when_forwarded_headers_arrive_and_no_proxy_is_named() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;
    let before = get(&admin, &app, "/admin/reports/status").await;
    assert!(
        before.body.contains("no proxy is trusted"),
        "{}",
        before.body
    );
    assert!(!before.body.contains("Forwarded headers arrive"));
    read(
        admin
            .get(app.url("/admin/login"))
            .header("x-forwarded-for", "203.0.113.5"),
    )
    .await;
    let after = get(&admin, &app, "/admin/reports/status").await;
    assert!(
        after
            .body
            .contains("Forwarded headers arrive, but no proxy is trusted"),
        "{}",
        after.body
    );
}

// --- Issue 18: one forwarded header, as the proxy sets it --------------------------------

/// A random-looking address a client might claim: a different one at each call.
fn spoofed(n: u32) -> String {
    let x = (n.wrapping_mul(2_654_435_761) >> 8) & 0xff_ffff;
    format!(
        "{}.{}.{}.{}",
        1 + (x >> 16) % 223,
        (x >> 8) & 0xff,
        x & 0xff,
        1 + n % 254
    )
}

/// One request written on a fresh connection exactly as given; the response, whole.
fn raw(addr: std::net::SocketAddr, request: &str) -> (u16, String) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut out = Vec::new();
    // HTTP/1.0 with `Connection: close`, as nginx speaks to its upstream: the server closes.
    stream.read_to_end(&mut out).unwrap();
    let text = String::from_utf8_lossy(&out).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {text}"));
    (status, text)
}

/// What nginx sends upstream for a client's request, with the headers it sets first and the
/// client's own after them, in nginx's order (`proxy_http_version` 1.0, `Connection: close`).
fn as_nginx_sends(
    method: &str,
    path: &str,
    host: &str,
    set: &[(&str, String)],
    client: &[(&str, String)],
    body: &str,
) -> String {
    let mut request = format!("{method} {path} HTTP/1.0\r\nHost: {host}\r\n");
    for (name, value) in set {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("Connection: close\r\n");
    if !body.is_empty() {
        request.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    for (name, value) in client {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    request
}

#[tokio::test]
async fn what_nginx_sends_for_a_client_with_spoofed_headers_leaves_its_address_as_nginx_saw_it() {
    let (_dir, server) = real_server(
        &[
            ("login.limits.per_address", "3"),
            ("login.limits.per_account", "0"),
        ],
        &[("ORCHESTRA_TRUSTED_PROXIES", "127.0.0.1")],
    );
    let host = server.addr.to_string();
    let seen = "203.0.113.50";
    // The documented block: X-Forwarded-For replaced by $remote_addr, Forwarded and X-Real-IP
    // cleared, so none of what the client wrote arrives.
    let documented = |_: u32| vec![("X-Forwarded-For", seen.to_owned())];
    // An older block, appending to the client's X-Forwarded-For and passing its Forwarded and
    // X-Real-IP on untouched: still only the rightmost hop of the one header read counts.
    let appending = |n: u32| vec![("X-Forwarded-For", format!("{}, {seen}", spoofed(n)))];
    let passed_on = |n: u32| {
        vec![
            ("Forwarded", format!("for={}", spoofed(n + 1))),
            ("X-Real-IP", spoofed(n + 2)),
            (
                "Content-Type",
                "application/x-www-form-urlencoded".to_owned(),
            ),
        ]
    };
    let (status, page) = raw(
        server.addr,
        &as_nginx_sends("GET", "/admin/login", &host, &documented(0), &[], ""),
    );
    assert_eq!(status, 200);
    let cookie = page
        .lines()
        .find_map(|l| {
            let value = l
                .split_once(':')
                .filter(|(name, _)| name.eq_ignore_ascii_case("set-cookie"))?
                .1;
            let value = value.trim().split(';').next()?;
            value
                .starts_with("orchestra_csrf=")
                .then(|| value.to_owned())
        })
        .expect("the CSRF cookie");
    let body = page.split("\r\n\r\n").nth(1).unwrap();
    let body = format!(
        "csrf={}&name=nobody&password=wrong+password",
        helpers::csrf_of(body)
    );
    let post = |n: u32, set: Vec<(&str, String)>| {
        let mut client = passed_on(n);
        client.push(("Cookie", cookie.clone()));
        raw(
            server.addr,
            &as_nginx_sends("POST", "/admin/login", &host, &set, &client, &body),
        )
        .0
    };
    assert_eq!(post(1, documented(1)), 401);
    assert_eq!(post(2, appending(2)), 401);
    assert_eq!(post(3, appending(3)), 401);
    for n in 4..10 {
        let set = if n % 2 == 0 {
            documented(n)
        } else {
            appending(n)
        };
        assert_eq!(post(n * 7, set), 429, "attempt {n}: counted as {seen}");
    }
    // Another client, as nginx saw it, has its own count.
    let other = vec![("X-Forwarded-For", "203.0.113.51".to_owned())];
    assert_eq!(post(99, other), 401);
}

/// Debian's nginx (`apt-get install nginx`), or the one `ORCHESTRA_NGINX` names.
fn nginx_path() -> Option<std::path::PathBuf> {
    if let Some(p) = std::env::var_os("ORCHESTRA_NGINX") {
        return Some(p.into());
    }
    ["/usr/sbin/nginx", "/usr/bin/nginx", "/usr/local/sbin/nginx"]
        .iter()
        .map(std::path::PathBuf::from)
        .find(|p| p.exists())
}

/// The nginx server block of docs/operations.md, on `listen` in front of `upstream`.
fn documented_nginx_block(listen: &str, upstream: &str) -> String {
    let doc = include_str!("../../docs/operations.md");
    let start = doc
        .find("```nginx\n")
        .expect("an nginx block in docs/operations.md")
        + 9;
    let block = &doc[start..start + doc[start..].find("```").unwrap()];
    assert!(block.contains("listen 443 ssl;") && block.contains("http://127.0.0.1:8080"));
    block
        .replace("listen 443 ssl;", &format!("listen {listen};"))
        .replace("http://127.0.0.1:8080", &format!("http://{upstream}"))
}

struct Nginx(std::process::Child);

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test]
async fn behind_the_documented_nginx_a_clients_own_forwarded_headers_change_nothing() {
    let Some(nginx) = nginx_path() else {
        assert!(
            std::env::var_os("ORCHESTRA_NGINX_REQUIRED").is_none(),
            "ORCHESTRA_NGINX_REQUIRED is set but no nginx was found"
        );
        eprintln!(
            "nginx test skipped: no nginx found (install Debian's nginx, or set ORCHESTRA_NGINX)"
        );
        return;
    };
    let (_dir, server) = real_server(
        &[
            ("login.limits.per_address", "3"),
            ("login.limits.per_account", "0"),
        ],
        &[("ORCHESTRA_TRUSTED_PROXIES", "127.0.0.1")],
    );
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let listen = format!("127.0.0.1:{port}");
    let d = dir.path().display();
    let conf = format!(
        "daemon off;\nmaster_process off;\npid {d}/nginx.pid;\nerror_log {d}/error.log warn;\n\
         events {{ worker_connections 64; }}\n\
         http {{\n    access_log off;\n    client_body_temp_path {d}/body;\n    \
         proxy_temp_path {d}/proxy;\n    fastcgi_temp_path {d}/fastcgi;\n    \
         uwsgi_temp_path {d}/uwsgi;\n    scgi_temp_path {d}/scgi;\n{}\n}}\n",
        documented_nginx_block(&listen, &server.addr.to_string())
    );
    std::fs::write(dir.path().join("nginx.conf"), conf).unwrap();
    let mut child = std::process::Command::new(&nginx)
        .arg("-p")
        .arg(dir.path())
        .arg("-e")
        .arg(dir.path().join("error.log"))
        .arg("-c")
        .arg(dir.path().join("nginx.conf"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start nginx");
    serve::wait_until_listening(
        listen.parse().unwrap(),
        &mut child,
        "nginx",
        Duration::from_secs(20),
    );
    let _nginx = Nginx(child);
    let base = format!("http://{listen}");
    let c = client();
    let csrf = login_token(&c, &base).await;
    let spoofing = |request: reqwest::RequestBuilder, n: u32| {
        request
            .header("forwarded", format!("for={}", spoofed(n)))
            .header("x-forwarded-for", spoofed(n + 1))
            .header("x-real-ip", spoofed(n + 2))
    };
    let mut statuses = Vec::new();
    for n in 0..8 {
        let response = spoofing(c.post(format!("{base}/admin/login")), n * 3)
            .form(&[
                ("csrf", csrf.as_str()),
                ("name", "nobody"),
                ("password", "wrong password"),
            ])
            .send()
            .await
            .unwrap();
        statuses.push(response.status().as_u16());
    }
    assert_eq!(statuses, [401, 401, 401, 429, 429, 429, 429, 429]);
    // The API's failed tokens are counted by the same address (and the same limit).
    let mut api = Vec::new();
    for n in 0..6 {
        let response = spoofing(c.get(format!("{base}/api/v1/workflows")), 100 + n * 3)
            .header("authorization", format!("Bearer made-up-token-{n}"))
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        let body = response.text().await.unwrap();
        api.push((status, body.contains("too_many_failures")));
    }
    assert_eq!(
        api,
        [
            (401, false),
            (401, false),
            (401, false),
            (429, true),
            (429, true),
            (429, true)
        ]
    );
}

// --- The bounded password pool ----------------------------------------------------------

#[tokio::test]
async fn three_hundred_concurrent_wrong_passwords_leave_memory_bounded_and_the_doorway_answering() {
    // The limits off, so every attempt reaches the password pool; and the attempts' 300
    // connections from this one address under its cap (tests/it/connections.rs tests that cap).
    let (_dir, server) = real_server(
        &[
            ("login.limits.per_address", "0"),
            ("login.limits.per_account", "0"),
        ],
        &[("ORCHESTRA_MAX_CONNECTIONS_PER_ADDRESS", "1024")],
    );
    let base = format!("http://{}", server.addr);
    let c = client();
    let csrf = login_token(&c, &base).await;
    let start_kib = server.rss_kib();

    let mut attempts = Vec::new();
    for _ in 0..300 {
        let (c, base, csrf) = (c.clone(), base.clone(), csrf.clone());
        attempts.push(tokio::spawn(async move {
            let response = c
                .post(format!("{base}/admin/login"))
                .form(&[
                    ("csrf", csrf.as_str()),
                    ("name", ADMIN),
                    ("password", "wrong password"),
                ])
                .send()
                .await
                .unwrap();
            let status = response.status().as_u16();
            (status, response.text().await.unwrap())
        }));
    }
    // Meanwhile the doorway keeps answering (a made-up link: its plain refusal page).
    let mut doorway_answers = 0;
    let mut peak_kib = start_kib;
    let deadline = Instant::now() + Duration::from_secs(120);
    while attempts.iter().any(|a| !a.is_finished()) {
        assert!(Instant::now() < deadline, "the attempts did not end");
        let page = client()
            .get(format!("{base}/interaction/not-a-link"))
            .timeout(Duration::from_secs(5))
            .send()
            .await
            .expect("the doorway answers during the attempts");
        assert_eq!(page.status(), 404);
        doorway_answers += 1;
        peak_kib = peak_kib.max(server.rss_kib());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut answers = Vec::new();
    for a in attempts {
        answers.push(a.await.unwrap());
    }
    peak_kib = peak_kib.max(server.rss_kib());
    let growth_mib = peak_kib.saturating_sub(start_kib) / 1024;
    eprintln!("resident memory grew by {growth_mib} MiB at most (from {start_kib} KiB)");
    // One argon2 block (19 MiB) per worker (one per core) while it runs, and the rest of the
    // server's working memory: argon2's blocks are given back when a check ends
    // (`password::return_large_allocations_to_the_system`). Without that, glibc kept a block per
    // arena: 164 to 221 MiB on two cores.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    let bound = 20 * cores + 48;
    assert!(
        growth_mib < bound,
        "resident memory grew by {growth_mib} MiB (from {start_kib} KiB), over {bound}"
    );
    let mut busy = 0;
    for (status, body) in answers {
        match status {
            401 => {}
            503 => {
                busy += 1;
                assert!(body.contains("The site is busy"), "a themed 503: {body}");
            }
            other => panic!("unexpected status {other}"),
        }
    }
    assert!(doorway_answers > 0);
    assert!(busy > 0, "past the queue, attempts are refused at once");
}

// --- 2. No anonymous writes ---------------------------------------------------------------

async fn row_counts(url: &str) -> Vec<(String, i64)> {
    let (pool, tables) = helpers::tables_at(url).await;
    let mut counts = Vec::new();
    for table in tables {
        // Names from the catalogue, not input.
        let n: i64 = sqlx::query_scalar(&format!("SELECT COUNT(*) FROM \"{table}\""))
            .fetch_one(&pool)
            .await
            .unwrap();
        counts.push((table, n));
    }
    counts.sort();
    pool.close().await;
    counts
}

#[tokio::test]
async fn ten_thousand_anonymous_gets_of_every_public_page_write_nothing() {
    let app = spawn(Flood::Sql).await;
    let instance = app.start("contract_review", "Lease").await;
    let link = app.link(instance, Some("legal")).await;
    let before = row_counts(&app.database.url).await;
    assert!(before.iter().any(|(t, _)| t == "sessions"));
    let pages = [
        "/admin/login".to_owned(),
        "/admin/login?lang=fr&destination=/admin/workflows".to_owned(),
        "/admin".to_owned(),
        "/setup/not-a-token".to_owned(),
        "/test-provider/not-a-handle".to_owned(),
        "/interaction/not-a-link".to_owned(),
        link,
        "/static/style.css".to_owned(),
        "/no/such/page".to_owned(),
    ];
    const REQUESTS: usize = 10_000;
    let mut tasks = Vec::new();
    for worker in 0..16 {
        let (base, pages) = (app.base.clone(), pages.clone());
        tasks.push(tokio::spawn(async move {
            // A fresh visitor each time, as a crawler is: no cookie comes back.
            let client = reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap();
            let mut n = worker;
            while n < REQUESTS {
                let page = &pages[n % pages.len()];
                let r = client.get(format!("{base}{page}")).send().await.unwrap();
                assert!(r.status().as_u16() < 500, "{page}: {}", r.status());
                n += 16;
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    app.flood.sync().await.unwrap();
    assert_eq!(row_counts(&app.database.url).await, before);
}

#[tokio::test]
async fn a_burst_of_writes_leaves_the_wal_below_four_mib() {
    if helpers::on_postgres() {
        return;
    }
    let database = helpers::fresh_database().await;
    let db = orchestra::open(&database.url).await.unwrap();
    let path = database.url.strip_prefix("sqlite:").unwrap().to_owned();
    let wal = format!("{path}-wal");
    // A long reader holds the WAL: nothing can be checkpointed while it reads.
    let mut reader = {
        use sqlx::Connection;
        sqlx::any::install_default_drivers();
        sqlx::AnyConnection::connect(&orchestra::store::normalize_url(&database.url).unwrap().1)
            .await
            .unwrap()
    };
    sqlx::query("BEGIN").execute(&mut reader).await.unwrap();
    sqlx::query("SELECT COUNT(*) FROM sessions")
        .execute(&mut reader)
        .await
        .unwrap();
    let data = "x".repeat(4000);
    for n in 0..3000 {
        orchestra::store::sessions::save(&db, &format!("s{n}"), &data, 4_000_000_000)
            .await
            .unwrap();
    }
    let peak = std::fs::metadata(&wal).unwrap().len();
    assert!(peak > 8 << 20, "the burst grew the WAL ({peak} bytes)");
    sqlx::query("COMMIT").execute(&mut reader).await.unwrap();
    // What cron does, then the next write.
    db.checkpoint().await.unwrap();
    orchestra::store::sessions::save(&db, "after", "x", 4_000_000_000)
        .await
        .unwrap();
    let after = std::fs::metadata(&wal).unwrap().len();
    assert!(after <= 4 << 20, "the WAL stayed at {after} bytes");
}

// --- 4. Headers, tokens, destinations, errors ---------------------------------------------

fn assert_security_headers(page: &helpers::Page, what: &str) {
    assert_eq!(
        page.header("x-content-type-options"),
        Some("nosniff"),
        "{what}"
    );
    assert_eq!(page.header("x-frame-options"), Some("DENY"), "{what}");
    let csp = page.header("content-security-policy").unwrap_or_default();
    assert!(
        csp.contains("default-src 'self'") && csp.contains("frame-ancestors 'none'"),
        "{what}: {csp}"
    );
    assert!(!csp.contains("unsafe-inline"), "{what}: {csp}");
}

#[tokio::test]
async fn every_kind_of_page_carries_the_security_headers() {
    let app = spawn(Flood::Memory).await;
    let instance = app.start("contract_review", "Lease").await;
    let link = app.link(instance, Some("legal")).await;
    let admin = app.admin_client().await;
    let anonymous = app.client();
    for (client, path, status) in [
        (&anonymous, "/admin/login", 200),
        (&anonymous, "/admin", 303),
        (&anonymous, "/setup/not-a-token", 404),
        (&anonymous, "/no/such/page", 404),
        (&anonymous, "/static/style.css", 200),
        (&anonymous, "/static/orchestra.js", 200),
        (&anonymous, "/interaction/not-a-link", 404),
        (&anonymous, link.as_str(), 200),
        (&anonymous, "/test-provider/nothing", 404),
        (&admin, "/admin", 200),
        (&admin, "/admin/workflows/not-a-number", 404),
        (&admin, "/admin/reports/status", 200),
    ] {
        let page = get(client, &app, path).await;
        assert_eq!(page.status, status, "{path}");
        assert_security_headers(&page, path);
        assert!(
            page.header("strict-transport-security").is_none(),
            "{path}: http site"
        );
        if path.starts_with("/admin") {
            assert_eq!(page.header("cache-control"), Some("no-store"), "{path}");
        }
    }
    // The doorway's refusal, answered before every other layer, has them too.
    app.set(&[
        ("orchestra.request_limits.enabled", "true"),
        ("interaction.limits.per_link", "1"),
    ])
    .await;
    get(&anonymous, &app, &link).await;
    let refused = get(&anonymous, &app, &link).await;
    assert_eq!(refused.status, 429);
    assert_security_headers(&refused, "the doorway's refusal");
}

#[tokio::test]
async fn an_https_site_sends_strict_transport_security() {
    let app = spawn(Flood::Memory).await;
    let served = orchestra::http::app(app.state.clone(), true);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let served = axum::ServiceExt::<axum::extract::Request>::into_make_service(served);
    let server = tokio::spawn(async move {
        axum::serve(listener, served).await.unwrap();
    });
    for path in ["/admin/login", "/no/such/page"] {
        let r = reqwest::get(format!("{base}{path}")).await.unwrap();
        assert_eq!(
            r.headers()
                .get("strict-transport-security")
                .and_then(|v| v.to_str().ok()),
            Some("max-age=31536000"),
            "{path}"
        );
    }
    // The doorway's refusal and the API's, answered before the layer that adds it elsewhere.
    app.set(&[
        ("orchestra.request_limits.enabled", "true"),
        ("interaction.limits.per_link", "1"),
    ])
    .await;
    let keys = orchestra::store::keys::load(&app.db).await.unwrap();
    let token = orchestra::domain::api::create_token(&app.db, &keys, "hsts", Some(1), Some(1))
        .await
        .unwrap()
        .unwrap();
    let client = reqwest::Client::new();
    for (what, request) in [
        (
            "the doorway's refusal",
            client.get(format!("{base}/interaction/l.1..9.x")),
        ),
        (
            "the API's refusal",
            client
                .get(format!("{base}/api/v1/workflows"))
                .header("authorization", format!("Bearer {token}")),
        ),
    ] {
        let mut last = None;
        for _ in 0..2 {
            last = Some(request.try_clone().unwrap().send().await.unwrap());
        }
        let r = last.unwrap();
        assert_eq!(r.status(), 429, "{what}");
        assert_eq!(
            r.headers()
                .get("strict-transport-security")
                .and_then(|v| v.to_str().ok()),
            Some("max-age=31536000"),
            "{what}"
        );
    }
    server.abort();
}

#[test]
fn no_template_has_inline_script_or_style() {
    let mut checked = 0;
    let mut stack = vec![std::path::PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/templates"
    ))];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap().to_lowercase();
            checked += 1;
            // An email is read in a mail client, never under the site's Content-Security-Policy,
            // and most clients keep only inline styles: those are an email's only styling. No
            // script of any kind, though.
            let email = path.components().any(|c| c.as_os_str() == "mail");
            if email {
                assert!(
                    !text.contains("<script"),
                    "{}: a script in an email",
                    path.display()
                );
            }
            // The evidence record written by `instance evidence --format html` is a file opened
            // from disk, never served: its styles travel inside it. No script either.
            let document = path.ends_with("evidence/document.html");
            if document {
                assert!(!text.contains("<script"), "{}: a script", path.display());
            }
            let styles: &[&str] = if email || document {
                &[]
            } else {
                &[" style=", "<style"]
            };
            for bad in styles.iter().copied().chain([
                " onclick=",
                " onload=",
                " onsubmit=",
                " onchange=",
                " oninput=",
                "javascript:",
            ]) {
                assert!(!text.contains(bad), "{} has {bad}", path.display());
            }
            for (i, _) in text.match_indices("<script") {
                let tag = &text[i..text[i..].find('>').map_or(text.len(), |e| i + e)];
                assert!(tag.contains(" src="), "{}: inline <script>", path.display());
            }
        }
    }
    assert!(checked > 10, "the templates were found");
}

#[tokio::test]
async fn the_csrf_token_changes_at_sign_in_and_at_sign_out() {
    let app = spawn(Flood::Memory).await;
    app.create_admin().await;
    let client = app.client();
    let before = get(&client, &app, "/admin/login").await.csrf();
    let page = read(client.post(app.url("/admin/login")).form(&[
        ("csrf", before.as_str()),
        ("name", ADMIN),
        ("password", PASSWORD),
    ]))
    .await;
    assert_eq!(page.status, 303);
    let signed_in = get(&client, &app, "/admin").await.csrf();
    assert_ne!(signed_in, before, "a new token at sign-in");
    // The token from before the sign-in is worth nothing now.
    let stale = post(&client, &app, "/admin/logout", &[("csrf", before.as_str())]).await;
    assert_eq!(stale.status, 403);
    let out = post(
        &client,
        &app,
        "/admin/logout",
        &[("csrf", signed_in.as_str())],
    )
    .await;
    assert_eq!(out.status, 303);
    let after = get(&client, &app, "/admin/login").await.csrf();
    assert_ne!(after, signed_in, "a new token at sign-out");
    assert_ne!(after, before);
}

#[tokio::test]
async fn a_destination_with_a_control_character_falls_back_to_the_dashboard() {
    let app = spawn(Flood::Memory).await;
    app.create_admin().await;
    let client = app.client();
    let form = get(
        &client,
        &app,
        "/admin/login?destination=%2Fadmin%0D%0ASet-Cookie:x",
    )
    .await;
    assert_eq!(form.status, 200);
    assert_eq!(
        form.attr("input[name=destination]", "value").as_deref(),
        Some("/admin")
    );
    for destination in [
        "/admin\r\nSet-Cookie: x=1",
        "/admin/workflows\u{7}",
        "/admin\u{85}",
    ] {
        let client = app.client();
        let csrf = get(&client, &app, "/admin/login").await.csrf();
        let page = read(client.post(app.url("/admin/login")).form(&[
            ("csrf", csrf.as_str()),
            ("name", ADMIN),
            ("password", PASSWORD),
            ("destination", destination),
        ]))
        .await;
        assert_eq!(page.status, 303, "{destination:?}");
        assert_eq!(page.location(), "/admin", "{destination:?}");
    }
}

#[tokio::test]
async fn a_bad_id_in_an_admin_url_is_a_themed_404_in_the_visitors_language() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;
    let paths = [
        "/admin/workflows/abc",
        "/admin/instances/1x",
        "/admin/instances/99999999999999999999",
    ];
    for path in paths {
        let page = get(&admin, &app, path).await;
        assert_eq!(page.status, 404, "{path}");
        assert_eq!(
            page.header("content-type"),
            Some("text/html; charset=utf-8"),
            "{path}"
        );
        assert_eq!(page.first("h1"), "Page not found", "{path}");
    }
    for path in paths {
        let fr = get(&admin, &app, &helpers::with_lang(path, "fr")).await;
        assert_eq!(fr.status, 404);
        assert_eq!(fr.lang(), "fr");
        assert_eq!(fr.first("h1"), "Page introuvable", "{path}");
    }
    let bad_query = get(&app.client(), &app, "/admin/login?destination=%FF%FE").await;
    assert!(bad_query.status == 200 || bad_query.status == 400);
    assert_eq!(
        bad_query.header("content-type"),
        Some("text/html; charset=utf-8")
    );
}

/// No person types a NUL, and PostgreSQL cannot store one: `%00` (or `\u0000` in JSON)
/// anywhere is bad input, answered as such on both databases and before any read, never a
/// 500: the login, an admin form, a query, a path, a doorway answer, an API body.
#[tokio::test]
async fn a_nul_anywhere_is_bad_input_never_a_500() {
    let app = spawn(Flood::Memory).await;
    app.create_admin().await;
    let login = app.client();
    for _ in 0..3 {
        let csrf = get(&login, &app, "/admin/login").await.csrf();
        let page = read(
            login
                .post(app.url("/admin/login"))
                .header("content-type", "application/x-www-form-urlencoded")
                .body(format!(
                    "csrf={csrf}&name=%00&password=x&destination=%2Fadmin"
                )),
        )
        .await;
        assert_eq!(page.status, 400, "a NUL in the login's name");
        assert_eq!(page.first("h1"), "Request not understood");
    }
    let page = get(&login, &app, "/admin/login?destination=%2Fadmin%00").await;
    assert_eq!(page.status, 400, "a NUL in a query");
    assert_eq!(page.first("h1"), "Request not understood");

    let admin = app.admin_client().await;
    let csrf = get(&admin, &app, "/admin/instances/new").await.csrf();
    let page = read(
        admin
            .post(app.url("/admin/instances/new"))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(format!(
                "csrf={csrf}&workflow=contract_review&title=Lease%00&body=x"
            )),
    )
    .await;
    assert_eq!(page.status, 400, "a NUL in an admin form");
    let page = get(&admin, &app, "/admin/instances/1%00").await;
    assert_eq!(page.status, 404, "a NUL in a path");

    let id = app.start("supplier_onboarding", "Acme onboarding").await;
    let link = app.link(id, None).await;
    let page = read(
        app.client()
            .post(app.url(&link))
            .header("content-type", "application/x-www-form-urlencoded")
            .body("company=Acme%00&contact_email=a%40b.example&yearly_volume=1&notes=x"),
    )
    .await;
    assert_eq!(page.status, 400, "a NUL in a doorway answer");
    assert_eq!(
        helpers::answers(&app, id).await.len(),
        0,
        "nothing is recorded"
    );

    let keys = orchestra::store::keys::load(&app.db).await.unwrap();
    let token = orchestra::domain::api::create_token(&app.db, &keys, "crm", None, None)
        .await
        .unwrap()
        .unwrap();
    for body in [
        r#"{"workflow":"contract_review","subject":{"title":"Lease\u0000"}}"#,
        r#"{"workflow":"contract_review","subject":{"title":"Lease","body":"a\u0000b"}}"#,
    ] {
        let page = read(
            app.client()
                .post(app.url("/api/v1/instances"))
                .header("authorization", format!("Bearer {token}"))
                .header("content-type", "application/json")
                .body(body),
        )
        .await;
        assert_eq!(page.status, 422, "{body}: {}", page.body);
        let json: serde_json::Value = serde_json::from_str(&page.body).unwrap();
        assert_eq!(json["error"], "invalid", "{body}");
    }
    // An escaped backslash before `u0000` is the text `\u0000`, not a NUL.
    let page = read(
        app.client()
            .post(app.url("/api/v1/instances"))
            .header("authorization", format!("Bearer {token}"))
            .header("content-type", "application/json")
            .body(r#"{"workflow":"contract_review","subject":{"title":"C:\\u0000"}}"#),
    )
    .await;
    assert_eq!(page.status, 201, "{}", page.body);
    let logs = app.logs();
    assert!(!logs.contains("database error"), "no query saw a NUL");
}

#[tokio::test]
async fn a_session_that_cannot_be_saved_gives_the_themed_500_page() {
    let app = spawn(Flood::Memory).await;
    app.create_admin().await;
    let client = app.client();
    let csrf = get(&client, &app, "/admin/login?lang=fr").await.csrf();
    sqlx::any::install_default_drivers();
    let pool = sqlx::AnyPool::connect(
        &orchestra::store::normalize_url(&app.database.url)
            .unwrap()
            .1,
    )
    .await
    .unwrap();
    // Sessions can still be read and deleted, but not stored: the session layer's own save
    // fails after the handler answered (its bare 500 is what must be themed).
    let refuse_inserts = if helpers::on_postgres() {
        "ALTER TABLE sessions ADD CONSTRAINT no_new_rows CHECK (false) NOT VALID"
    } else {
        "CREATE TRIGGER no_new_rows BEFORE INSERT ON sessions BEGIN SELECT RAISE(ABORT, 'no'); END"
    };
    sqlx::query(refuse_inserts).execute(&pool).await.unwrap();
    let page = read(client.post(app.url("/admin/login")).form(&[
        ("csrf", csrf.as_str()),
        ("name", ADMIN),
        ("password", PASSWORD),
    ]))
    .await;
    assert_eq!(page.status, 500);
    assert_eq!(
        page.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    assert_eq!(page.lang(), "fr");
    assert_eq!(page.first("h1"), "Un problème est survenu");
    assert_security_headers(&page, "the 500 page");
    pool.close().await;
}

#[tokio::test]
async fn workflow_definitions_are_capped_with_clear_errors() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;
    let fields: Vec<String> = (1..=31).map(|n| format!("Field {n}")).collect();
    let too_many = format!("form: Many | {}", fields.join(", "));
    let too_large = format!("review: {}\n", "x".repeat(150)).repeat(140);
    for (definition, message) in [
        (too_many.as_str(), "Line 1: a form has at most 30 fields."),
        (
            too_large.as_str(),
            "A workflow definition is at most 20000 characters.",
        ),
    ] {
        let csrf = get(&admin, &app, "/admin/workflows/new").await.csrf();
        let page = post(
            &admin,
            &app,
            "/admin/workflows/new",
            &[
                ("csrf", csrf.as_str()),
                ("name", "capped"),
                ("label", "Capped"),
                ("definition", definition),
            ],
        )
        .await;
        assert_eq!(page.status, 422);
        assert!(page.body.contains(message), "{message}: {}", page.body);
    }
    assert!(
        orchestra::store::workflows::by_name(&app.db, "capped")
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn the_login_limits_are_in_the_request_limits_section_in_both_languages() {
    let app = spawn(Flood::Memory).await;
    let admin = app.admin_client().await;
    let page = get(&admin, &app, "/admin/config/orchestra").await;
    assert_eq!(
        page.attr("#request-limits #login_per_address", "value")
            .as_deref(),
        Some("50")
    );
    assert_eq!(
        page.attr("#login_address_period", "value").as_deref(),
        Some("3600")
    );
    assert_eq!(
        page.attr("#login_per_account", "value").as_deref(),
        Some("5")
    );
    assert_eq!(
        page.attr("#login_account_period", "value").as_deref(),
        Some("21600")
    );
    assert_eq!(
        page.attr("#login_account_total", "value").as_deref(),
        Some("100")
    );
    assert_eq!(
        page.first("label[for=login_account_total]"),
        "Failed attempts per account from all addresses"
    );
    let fr = get(&admin, &app, "/admin/config/orchestra?lang=fr").await;
    assert_eq!(fr.first("#login-limits legend"), "Tentatives de connexion");
    assert_eq!(
        fr.first("label[for=login_account_total]"),
        "Échecs par compte depuis toutes les adresses"
    );

    let csrf = page.csrf();
    let saved = post(
        &admin,
        &app,
        "/admin/config/orchestra",
        &[
            ("csrf", csrf.as_str()),
            ("site_name", "Orchestra"),
            ("base_url", "http://127.0.0.1:8080"),
            ("default_link_ttl", "604800"),
            ("period", "3600"),
            ("login_per_address", "many"),
            ("login_address_period", "3600"),
            ("login_per_account", "3"),
            ("login_account_total", "lots"),
            ("login_account_period", "3600"),
        ],
    )
    .await;
    assert_eq!(saved.status, 422);
    assert_eq!(saved.text("[data-field=login_per_address]").len(), 1);
    assert_eq!(saved.text("[data-field=login_account_total]").len(), 1);
    assert_eq!(
        saved.attr("#login_account_total", "value").as_deref(),
        Some("lots"),
        "what was typed is kept"
    );
    assert_eq!(
        saved.attr("#login_per_address", "value").as_deref(),
        Some("many")
    );
    let settings = orchestra::domain::settings::Settings::load(&app.db)
        .await
        .unwrap();
    assert_eq!(settings.login_per_account, 5, "nothing saved");
}

// --- 3. A database that cannot vanish or freeze silently ---------------------------------

fn sqlite_path(app: &TestApp) -> String {
    app.database.url.strip_prefix("sqlite:").unwrap().to_owned()
}

async fn save_site_name(admin: &reqwest::Client, app: &TestApp, lang: &str) -> helpers::Page {
    let csrf = get(admin, app, "/admin/config/orchestra").await.csrf();
    save_site_name_with(admin, app, lang, &csrf).await
}

async fn save_site_name_with(
    admin: &reqwest::Client,
    app: &TestApp,
    lang: &str,
    csrf: &str,
) -> helpers::Page {
    post(
        admin,
        app,
        &format!("/admin/config/orchestra?lang={lang}"),
        &[
            ("csrf", csrf),
            ("site_name", "Renamed"),
            ("base_url", "http://127.0.0.1:8080"),
            ("default_link_ttl", "604800"),
            ("period", "3600"),
        ],
    )
    .await
}

#[tokio::test]
async fn a_deleted_or_replaced_database_file_refuses_writes_with_a_themed_503() {
    if helpers::on_postgres() {
        return;
    }
    for replace in [false, true] {
        let app = spawn(Flood::Memory).await;
        let admin = app.admin_client().await;
        assert_eq!(
            save_site_name(&admin, &app, "en").await.status,
            303,
            "writes work at first"
        );
        // The form's token before the file goes: once it is deleted, a read on a connection
        // opened afterwards fails too (the read pool may open one), so the form itself may be
        // the 503 this test is about.
        let csrf = get(&admin, &app, "/admin/config/orchestra").await.csrf();
        let path = sqlite_path(&app);
        if replace {
            // A restore done wrong: another file put in its place while the server runs.
            std::fs::copy(&path, format!("{path}.copy")).unwrap();
            std::fs::rename(format!("{path}.copy"), &path).unwrap();
        } else {
            std::fs::remove_file(&path).unwrap();
        }
        let page = save_site_name_with(&admin, &app, "fr", &csrf).await;
        assert_eq!(page.status, 503, "replace={replace}");
        assert_eq!(
            page.header("content-type"),
            Some("text/html; charset=utf-8")
        );
        assert_eq!(page.first("h1"), "Indisponible");
        let status = get(&admin, &app, "/admin/reports/status?lang=en").await;
        assert!(
            status.body.contains("the file was deleted or replaced"),
            "replace={replace}: {}",
            status.body
        );
    }
}

/// Makes a file impossible to write, for root too (`chattr +i`), or writable again.
fn set_read_only(path: &str, read_only: bool) {
    let root = std::process::Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false);
    if root {
        let flag = if read_only { "+i" } else { "-i" };
        let ok = std::process::Command::new("chattr")
            .args([flag, path])
            .status()
            .unwrap()
            .success();
        assert!(ok, "chattr {flag}");
    } else {
        use std::os::unix::fs::PermissionsExt;
        let mode = if read_only { 0o444 } else { 0o644 };
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }
}

#[tokio::test]
async fn connections_opened_while_the_file_was_read_only_are_replaced_once_it_is_writable() {
    if helpers::on_postgres() {
        return;
    }
    let database = helpers::fresh_database().await;
    orchestra::open(&database.url).await.unwrap().close().await;
    let path = database.url.strip_prefix("sqlite:").unwrap().to_owned();
    set_read_only(&path, true);
    let db = orchestra::store::Db::open(&database.url, orchestra::store::Create::Never).await;
    let db = match db {
        Ok(db) => db,
        Err(e) => {
            set_read_only(&path, false);
            panic!("opening a read-only database: {e}");
        }
    };
    let write = || async {
        orchestra::store::settings::put_all(&db, &[("orchestra.site_name", "Back".to_owned())])
            .await
    };
    let refused = write().await;
    set_read_only(&path, false);
    assert!(refused.is_err(), "the file was read-only");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match write().await {
            Ok(()) => break,
            Err(e) => assert!(Instant::now() < deadline, "still failing after 10 s: {e}"),
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

// --- orchestra status and the other commands, on the real binary -------------------------

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
    took: Duration,
}

fn run(url: &str, args: &[&str], lang: &str) -> Run {
    let started = Instant::now();
    let out = std::process::Command::new(BIN)
        .args(args)
        .env_clear()
        .env("ORCHESTRA_DATABASE_URL", url)
        .env("ORCHESTRA_LANG", lang)
        .output()
        .unwrap();
    Run {
        code: out.status.code().unwrap(),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
        took: started.elapsed(),
    }
}

#[test]
fn status_exits_2_with_the_report_and_the_cause_when_the_database_cannot_be_reached() {
    let dir = tempfile::tempdir().unwrap();
    let garbage = dir.path().join("garbage.db");
    std::fs::write(&garbage, vec![b'x'; 8192]).unwrap();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let cases = [
        (
            format!("postgres://orchestra:pw@127.0.0.1:{port}/orchestra"),
            "refused the connection",
        ),
        (
            "postgres://orchestra@no-such-host.invalid/orchestra".to_owned(),
            "host name is unknown",
        ),
        (
            format!("sqlite:{}", garbage.display()),
            "not a database Orchestra can use",
        ),
        (
            format!("sqlite:{}", dir.path().join("missing.db").display()),
            "There is no database at",
        ),
    ];
    for (url, cause) in cases {
        let text = run(&url, &["status"], "en");
        assert_eq!(text.code, 2, "{url}: {}{}", text.stdout, text.stderr);
        assert!(
            text.took < Duration::from_secs(6),
            "{url}: took {:?}",
            text.took
        );
        assert!(
            text.stdout.starts_with("[Error] Database: "),
            "{url}: {}",
            text.stdout
        );
        assert!(text.stdout.contains(cause), "{url}: {}", text.stdout);
        assert!(
            text.stdout.contains("[OK] Version: Orchestra"),
            "the rest of the report"
        );
        assert!(!text.stdout.contains(":pw@") && !text.stderr.contains(":pw@"));
        let json = run(&url, &["status", "--format", "json"], "fr");
        assert_eq!(json.code, 2, "{url}");
        let value: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
        assert_eq!(value["severity"], "error");
        assert_eq!(value["checks"][0]["id"], "database");
        assert_eq!(value["checks"][0]["severity"], "error");
    }
    assert!(
        !dir.path().join("missing.db").exists(),
        "status created no database"
    );
}

#[test]
fn an_unknown_scheme_is_refused_with_the_accepted_ones_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(BIN)
        .args(["status"])
        .env_clear()
        .env("ORCHESTRA_DATABASE_URL", "mysql://x")
        .env("ORCHESTRA_LANG", "en")
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "ORCHESTRA_DATABASE_URL must be a SQLite path or one of sqlite:, postgres://, postgresql://, not \"mysql://x\".\n"
    );
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "no file named mysql:"
    );
}

#[test]
fn a_missing_database_is_an_error_for_every_command_and_init_creates_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("orchestra.db");
    let url = format!("sqlite:{}", path.display());
    for args in [
        &["workflow", "list"][..],
        &["config", "list"],
        &["cron"],
        &["keys", "rotate"],
    ] {
        let r = run(&url, args, "en");
        assert_eq!(r.code, 2, "{args:?}");
        assert_eq!(
            r.stderr,
            format!(
                "There is no database at {}. Run \"orchestra init\" to create one, or check ORCHESTRA_DATABASE_URL.\n",
                path.display()
            )
        );
        assert!(!path.exists(), "{args:?} created the database");
    }
    let fr = run(&url, &["workflow", "list"], "fr");
    assert_eq!(fr.code, 2);
    assert!(
        fr.stderr.starts_with("Il n'y a pas de base de données à "),
        "{}",
        fr.stderr
    );
    // `serve` on a named file that is missing refuses too (only the default file is made).
    let serve = run(&url, &["serve", "--bind", "127.0.0.1:0"], "en");
    assert_eq!(serve.code, 2);
    assert!(!path.exists());

    let init = run(&url, &["init"], "en");
    assert_eq!(
        (init.code, init.stderr.as_str()),
        (0, "The database is ready.\n")
    );
    assert_eq!(
        run(&url, &["workflow", "list"], "en")
            .stdout
            .lines()
            .count(),
        3
    );
    assert_eq!(
        run(&url, &["init"], "en").code,
        0,
        "init again changes nothing"
    );
}

#[test]
fn the_login_limits_are_settings_of_orchestra_config_in_both_languages() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("orchestra.db").display());
    assert_eq!(run(&url, &["init"], "en").code, 0);
    let list = run(&url, &["config", "list"], "en").stdout;
    for line in [
        "login.limits.per_address = 50",
        "login.limits.address_period = 3600",
        "login.limits.per_account = 5",
        "login.limits.account_period = 21600",
    ] {
        assert!(list.lines().any(|l| l == line), "{line} in {list}");
    }
    let en = run(
        &url,
        &["config", "set", "login.limits.per_account", "five"],
        "en",
    );
    assert_eq!(en.code, 2);
    assert!(
        en.stderr.contains("login.limits.per_account"),
        "{}",
        en.stderr
    );
    let fr = run(
        &url,
        &["config", "set", "login.limits.address_period", "10"],
        "fr",
    );
    assert_eq!(fr.code, 2);
    assert_ne!(fr.stderr, en.stderr);
    assert_eq!(
        run(
            &url,
            &["config", "set", "login.limits.per_account", "3"],
            "en"
        )
        .code,
        0
    );
    assert_eq!(
        run(&url, &["config", "get", "login.limits.per_account"], "en").stdout,
        "3\n"
    );
    let status = run(&url, &["status"], "en").stdout;
    assert!(
        status.contains(
            "[OK] Sign-in limits: 50 attempts per address every 3600 s; 3 failures per account and address, 100 per account, every 21600 s"
        ),
        "{status}"
    );
}

/// `orchestra status` with the environment of a server behind a proxy, in a language.
fn status_with(url: &str, env: &[(&str, &str)], lang: &str) -> Run {
    let out = std::process::Command::new(BIN)
        .arg("status")
        .env_clear()
        .env("ORCHESTRA_DATABASE_URL", url)
        .env("ORCHESTRA_LANG", lang)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    Run {
        code: out.status.code().unwrap(),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
        took: Duration::ZERO,
    }
}

#[test]
fn the_status_report_names_the_one_header_read_and_a_header_without_a_proxy_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("orchestra.db").display());
    assert_eq!(run(&url, &["init"], "en").code, 0);
    let proxies = ("ORCHESTRA_TRUSTED_PROXIES", "127.0.0.1, 10.0.0.0/8");
    let default = status_with(&url, &[proxies], "en");
    assert!(
        default
            .stdout
            .contains("[OK] Client addresses: Read from X-Forwarded-For only, as set by 2 trusted"),
        "{}",
        default.stdout
    );
    let real_ip = status_with(
        &url,
        &[proxies, ("ORCHESTRA_CLIENT_IP_HEADER", "X-Real-IP")],
        "fr",
    );
    assert!(
        real_ip.stdout.contains("Lues dans X-Real-IP seulement"),
        "{}",
        real_ip.stdout
    );
    // A header with no proxy to read it from, or one no proxy sets: refused, and said why.
    let alone = status_with(&url, &[("ORCHESTRA_CLIENT_IP_HEADER", "forwarded")], "en");
    assert_ne!(alone.code, 0);
    assert!(
        alone
            .stderr
            .contains("ORCHESTRA_TRUSTED_PROXIES names no proxy"),
        "{}",
        alone.stderr
    );
    let unknown = status_with(
        &url,
        &[proxies, ("ORCHESTRA_CLIENT_IP_HEADER", "true-client-ip")],
        "fr",
    );
    assert_ne!(unknown.code, 0);
    assert!(
        unknown.stderr.contains("« true-client-ip »"),
        "{}",
        unknown.stderr
    );
}
