//! The admin pages and the doorway in a real browser: Debian's `chromium`, driven through
//! `chromedriver` by the W3C WebDriver protocol, against the real router over real TCP.
//!
//! The WebDriver client is the few JSON calls below over `reqwest` (already a test
//! dependency): a crate such as `fantoccini` would add some forty crates to the build for the
//! same dozen endpoints. Without a driver (`ORCHESTRA_CHROMEDRIVER`, else `chromedriver` on the
//! PATH or in /usr/bin), the test says so and passes; `.ci/run` installs both and runs it.
//!
//! With `ORCHESTRA_SCREENSHOTS=1` it also retakes the README's screenshots under
//! docs/screenshots/; otherwise it leaves the tracked files alone.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::helpers::{ADMIN, Flood, PASSWORD, TestApp, spawn};

const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

fn driver_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("ORCHESTRA_CHROMEDRIVER") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/bin")])
        .map(|d| d.join("chromedriver"))
        .find(|p| p.is_file())
}

fn browser_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("ORCHESTRA_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    [
        "/usr/bin/chromium",
        "/usr/bin/chromium-browser",
        "/usr/bin/google-chrome",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|p| p.is_file())
}

struct Driver {
    child: Child,
    http: reqwest::Client,
    base: String,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) struct Browser {
    driver: Driver,
    session: String,
    _profile: tempfile::TempDir,
    pub(crate) app_base: String,
    /// Console errors seen so far, with the page they were seen on.
    console_errors: Vec<String>,
}

pub(crate) async fn start() -> Option<Browser> {
    let (Some(driver), Some(chromium)) = (driver_path(), browser_path()) else {
        // `.ci/run` installs both and sets this: there, a missing browser is a failure.
        assert!(
            std::env::var_os("ORCHESTRA_BROWSER_REQUIRED").is_none(),
            "ORCHESTRA_BROWSER_REQUIRED is set but no chromedriver or chromium was found"
        );
        eprintln!(
            "browser tests skipped: no chromedriver or chromium found (install Debian's \
             chromium and chromium-driver, or set ORCHESTRA_CHROMEDRIVER and ORCHESTRA_CHROMIUM)"
        );
        return None;
    };
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let child = Command::new(driver)
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromedriver starts");
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    let driver = Driver {
        child,
        http,
        base: format!("http://127.0.0.1:{port}"),
    };
    for _ in 0..100 {
        if let Ok(r) = driver
            .http
            .get(format!("{}/status", driver.base))
            .send()
            .await
            && r.status().is_success()
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let profile = tempfile::tempdir().unwrap();
    let caps = json!({
        "capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:loggingPrefs": {"browser": "ALL"},
            "goog:chromeOptions": {
                "binary": chromium.to_string_lossy(),
                "args": [
                    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                    "--no-first-run", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync",
                    "--disable-dev-shm-usage", "--window-size=1280,900",
                    format!("--user-data-dir={}", profile.path().display()),
                ]
            }
        }}
    });
    let r = send(
        driver.http.post(format!("{}/session", driver.base)),
        Some(caps),
    )
    .await;
    let session = r["value"]["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("no session: {r}"))
        .to_owned();
    Some(Browser {
        driver,
        session,
        _profile: profile,
        app_base: String::new(),
        console_errors: Vec::new(),
    })
}

impl Browser {
    pub(crate) async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> Value {
        self.try_call(method, path, body)
            .await
            .unwrap_or_else(|e| panic!("webdriver {path}: {e}"))
    }

    pub(crate) async fn try_call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<Value, String> {
        let url = format!("{}/session/{}{path}", self.driver.base, self.session);
        let r = send(self.driver.http.request(method, url), body).await;
        match r["value"].get("error") {
            Some(error) => Err(format!("{error} {}", r["value"]["message"])),
            None => Ok(r["value"].clone()),
        }
    }

    pub(crate) async fn post(&self, path: &str, body: Value) -> Value {
        self.call(reqwest::Method::POST, path, Some(body)).await
    }

    pub(crate) async fn get(&self, path: &str) -> Value {
        self.call(reqwest::Method::GET, path, None).await
    }

    pub(crate) async fn goto(&mut self, path: &str) {
        let url = format!("{}{path}", self.app_base);
        self.post("/url", json!({ "url": url })).await;
        self.check_console().await;
    }

    /// The element a selector finds, waiting up to five seconds for a page still loading.
    pub(crate) async fn find(&self, css: &str) -> String {
        let url = format!("{}/session/{}/element", self.driver.base, self.session);
        let body = json!({"using": "css selector", "value": css});
        for _ in 0..50 {
            let r = send(self.driver.http.post(&url), Some(body.clone())).await;
            if let Some(id) = r["value"][ELEMENT].as_str() {
                return id.to_owned();
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("no element matches {css} on {}", self.get("/url").await);
    }

    pub(crate) async fn count(&self, css: &str) -> usize {
        self.post("/elements", json!({"using": "css selector", "value": css}))
            .await
            .as_array()
            .map_or(0, Vec::len)
    }

    /// Clicks what stays on the page: a checkbox, a radio, a copy button.
    pub(crate) async fn click(&mut self, css: &str) {
        let id = self.find(css).await;
        self.post(&format!("/element/{id}/click"), json!({})).await;
        self.check_console().await;
    }

    /// Clicks a link or a submit button and waits until the next page has loaded: the old
    /// document carries a mark the new one lacks, so nothing reads the page being left.
    pub(crate) async fn follow(&mut self, css: &str) {
        self.script("window.__orchestraLeaving = true;").await;
        let id = self.find(css).await;
        self.post(&format!("/element/{id}/click"), json!({})).await;
        self.wait_for_next_page(css).await;
    }

    /// Runs a script that leads to another page (a select that submits its form, a key that
    /// submits one) and waits until that page has loaded, as `follow` does.
    pub(crate) async fn leave_with(&mut self, what: &str, script: &str) {
        self.script("window.__orchestraLeaving = true;").await;
        self.script(script).await;
        self.wait_for_next_page(what).await;
    }

    /// Types into a field, Enter last, and waits for the page the form's submission loads.
    pub(crate) async fn submit_with_enter(&mut self, css: &str) {
        self.script("window.__orchestraLeaving = true;").await;
        self.type_into(css, "\u{E007}").await;
        self.wait_for_next_page(css).await;
    }

    pub(crate) async fn wait_for_next_page(&mut self, css: &str) {
        let loaded = json!({
            "script": "return window.__orchestraLeaving === undefined \
                       && document.readyState === 'complete';",
            "args": [],
        });
        for _ in 0..200 {
            let r = self
                .try_call(reqwest::Method::POST, "/execute/sync", Some(loaded.clone()))
                .await;
            if r == Ok(Value::Bool(true)) {
                self.check_console().await;
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!(
            "clicking {css} loaded no new page: {}",
            self.get("/url").await
        );
    }

    /// Picks an option of a select by its value.
    pub(crate) async fn select(&self, css: &str, value: &str) {
        let script = format!(
            "var s = document.querySelector({css:?}); s.value = {value:?}; \
             s.dispatchEvent(new Event('change', {{bubbles: true}})); return s.value;"
        );
        assert_eq!(self.script(&script).await, json!(value));
    }

    pub(crate) async fn clear(&self, css: &str) {
        let id = self.find(css).await;
        self.post(&format!("/element/{id}/clear"), json!({})).await;
    }

    pub(crate) async fn type_into(&self, css: &str, text: &str) {
        let id = self.find(css).await;
        self.post(&format!("/element/{id}/value"), json!({ "text": text }))
            .await;
    }

    pub(crate) async fn fill(&self, css: &str, text: &str) {
        self.clear(css).await;
        self.type_into(css, text).await;
    }

    pub(crate) async fn script(&self, script: &str) -> Value {
        self.post("/execute/sync", json!({"script": script, "args": []}))
            .await
    }

    pub(crate) async fn text(&self, css: &str) -> String {
        let id = self.find(css).await;
        self.get(&format!("/element/{id}/text"))
            .await
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    pub(crate) async fn prop(&self, css: &str, name: &str) -> Value {
        let id = self.find(css).await;
        self.get(&format!("/element/{id}/property/{name}")).await
    }

    pub(crate) async fn attr(&self, css: &str, name: &str) -> Option<String> {
        let id = self.find(css).await;
        self.get(&format!("/element/{id}/attribute/{name}"))
            .await
            .as_str()
            .map(str::to_owned)
    }

    pub(crate) async fn path(&self) -> String {
        let url = self.get("/url").await.as_str().unwrap().to_owned();
        url.strip_prefix(&self.app_base).unwrap_or(&url).to_owned()
    }

    /// Reads the browser's console since the last read and keeps its errors.
    pub(crate) async fn check_console(&mut self) {
        let entries = self.post("/se/log", json!({"type": "browser"})).await;
        let page = self.get("/url").await;
        for e in entries.as_array().into_iter().flatten() {
            let message = e["message"].as_str().unwrap_or_default();
            // A refused form answers 422 on purpose, and Chromium logs every 4xx document.
            if e["level"] == "SEVERE" && !message.contains("status of 422") {
                self.console_errors
                    .push(format!("{page}: {}", e["message"]));
            }
        }
    }

    pub(crate) async fn resize(&self, width: u32, height: u32) {
        self.post("/window/rect", json!({"width": width, "height": height}))
            .await;
    }

    /// Whether the page is wider than the window: it would scroll sideways.
    pub(crate) async fn scrolls_sideways(&self) -> bool {
        self.script(
            "return document.documentElement.scrollWidth > document.documentElement.clientWidth;",
        )
        .await
        .as_bool()
        .unwrap()
    }

    /// Writes docs/screenshots/{name}.png when `ORCHESTRA_SCREENSHOTS=1` asks for it.
    pub(crate) async fn screenshot(&self, name: &str) {
        if std::env::var_os("ORCHESTRA_SCREENSHOTS").is_none_or(|v| v != "1") {
            return;
        }
        let data = self.get("/screenshot").await;
        let png = base64_decode(data.as_str().unwrap());
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/screenshots");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("{name}.png")), png).unwrap();
    }

    pub(crate) async fn delete_cookies(&self) {
        self.call(reqwest::Method::DELETE, "/cookie", None).await;
    }
}

/// One WebDriver call: a JSON body out (reqwest's `json` feature is not built), JSON back.
async fn send(request: reqwest::RequestBuilder, body: Option<Value>) -> Value {
    let request = match body {
        Some(body) => request
            .header("content-type", "application/json")
            .body(serde_json::to_vec(&body).unwrap()),
        None => request,
    };
    let text = request
        .send()
        .await
        .expect("chromedriver answers")
        .text()
        .await
        .unwrap();
    serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text}"))
}

fn base64_decode(text: &str) -> Vec<u8> {
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0);
    for v in text.bytes().filter_map(value) {
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    out
}

pub(crate) async fn sign_in(b: &mut Browser) {
    b.goto("/admin/login?lang=en").await;
    b.fill("#name", ADMIN).await;
    b.fill("#password", PASSWORD).await;
    b.follow("form button[type=submit]").await;
    let body = b.text("main").await;
    assert_eq!(b.path().await, "/admin", "{body}");
}

async fn doorway_severity(b: &mut Browser) -> String {
    b.goto("/admin/reports/status").await;
    b.attr("#check-doorway_limits", "class")
        .await
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_administrator_and_a_visitor_in_a_real_browser() {
    let Some(mut b) = start().await else {
        return;
    };
    let app: TestApp = spawn(Flood::Memory).await;
    app.set(&[("orchestra.base_url", app.base.as_str())]).await;
    app.create_admin().await;
    b.app_base = app.base.clone();

    sign_in(&mut b).await;
    assert_eq!(b.text("nav.admin a[aria-current=page]").await, "Dashboard");

    // The limits, turned on from the settings pages: the report goes from warning to OK.
    assert_eq!(doorway_severity(&mut b).await, "severity-warning");
    b.goto("/admin/config/orchestra").await;
    b.click("#enabled").await;
    b.follow("form.stack > button[type=submit]").await;
    assert_eq!(b.path().await, "/admin/config/orchestra");
    assert_eq!(b.text("p.flash").await, "The settings were saved.");
    b.follow("nav.tabs a[href='/admin/config/orchestra/interaction']")
        .await;
    assert_eq!(b.path().await, "/admin/config/orchestra/interaction");
    // A bad value: the error beside its field, the typed value kept, the field marked.
    b.fill("#per_link", "twelve").await;
    b.fill("#total", "10000").await;
    b.follow("form.stack > button[type=submit]").await;
    assert_eq!(b.prop("#per_link", "value").await, "twelve");
    assert_eq!(
        b.attr("#per_link", "aria-invalid").await.as_deref(),
        Some("true")
    );
    assert!(b.count(".field-error[data-field=per_link]").await == 1);
    b.fill("#per_link", "12").await;
    b.follow("form.stack > button[type=submit]").await;
    assert_eq!(b.text("p.flash").await, "The settings were saved.");
    assert_eq!(doorway_severity(&mut b).await, "severity-ok");

    // A half-filled form holds the language switch back, with a note, and keeps the text.
    b.goto("/admin/instances/new").await;
    b.fill("#title", "Half typed").await;
    b.click("nav.languages a[hreflang=fr]").await;
    assert_eq!(b.path().await, "/admin/instances/new");
    assert_eq!(b.prop("#title", "value").await, "Half typed");
    assert_eq!(b.prop("#language-note", "hidden").await, false);
    assert_eq!(
        b.attr("nav.languages a[hreflang=fr]", "aria-disabled")
            .await
            .as_deref(),
        Some("true")
    );

    // Issue a link and copy it.
    let id = app.start("order_payment", "Order 42").await;
    b.goto(&format!("/admin/instances/{id}")).await;
    b.follow("form[action$='/links'] button[type=submit]").await;
    assert_eq!(b.path().await, format!("/admin/instances/{id}"));
    let url = b
        .prop("#issued-url", "value")
        .await
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        url.starts_with(&format!("{}/interaction/", app.base)),
        "{url}"
    );
    b.click("button[data-copy]").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(b.text("#copy-status").await, "The link is copied.");
    b.screenshot("instance-en").await;

    // A visitor with no cookies answers the form, then pays with the test provider.
    b.delete_cookies().await;
    b.goto(&url.replace(&app.base, "")).await;
    b.fill("#f-name", "Ada").await;
    b.fill("#f-address", "1 Rue de la Paix").await;
    b.fill("#f-email", "ada@example.com").await;
    b.screenshot("doorway-form-en").await;
    b.follow("form.stack button[type=submit]").await;
    b.follow("form.stack button[type=submit]").await; // Pay now
    b.follow("#pay").await;
    // The provider sent its signed notice and brought the visitor back on the return handle.
    assert_eq!(b.text("main h1").await, "Payment confirmed");
    b.screenshot("doorway-paid-en").await;
    assert_eq!(support_state(&app, id).await, "complete");

    // A review, on another instance, by another participant.
    let review = app.start("contract_review", "Lease").await;
    let legal = app.link(review, Some("legal")).await;
    b.goto(&legal).await;
    b.click("input[name=decision][value=approve]").await;
    b.follow("form.stack button[type=submit]").await;

    // Revoke, with a confirmation that a cancel leaves alone.
    sign_in(&mut b).await;
    b.goto(&format!("/admin/instances/{review}")).await;
    let rows = b.count("table.history tbody tr").await;
    b.follow(&format!("a[href='/admin/instances/{review}/revoke']"))
        .await;
    b.follow("form.actions a.button.secondary").await;
    assert_eq!(b.path().await, format!("/admin/instances/{review}"));
    assert_eq!(
        b.count("table.history tbody tr").await,
        rows,
        "cancel changes nothing"
    );
    b.follow(&format!("a[href='/admin/instances/{review}/revoke']"))
        .await;
    b.follow("form.actions button.danger").await;
    assert_eq!(
        b.text("p.flash").await,
        "Every link of this instance was revoked."
    );
    assert_eq!(b.count("table.history tbody tr").await, rows + 1);

    // Cancel, from the instance's page, through its confirmation page, with a reason.
    let doomed = app.start("contract_review", "Abandoned lease").await;
    b.goto(&format!("/admin/instances/{doomed}")).await;
    b.follow("a#cancel-instance").await;
    assert_eq!(b.path().await, format!("/admin/instances/{doomed}/cancel"));
    b.fill("textarea#reason", "Signed on paper instead").await;
    b.follow("form.stack button.danger").await;
    assert_eq!(b.path().await, format!("/admin/instances/{doomed}"));
    assert_eq!(b.text("p.flash").await, "The instance was cancelled.");
    assert_eq!(b.text("dd.state").await, "Cancelled");
    assert_eq!(b.count("a#cancel-instance").await, 0);
    assert_eq!(support_state(&app, doomed).await, "cancelled");
    let running = app.start("contract_review", "Lease to cancel").await;
    // A running instance with a link out: its page has a state and a Revoke button to show.
    app.link(running, Some("legal")).await;

    // A reviewer opens the review of Supplier onboarding: the supplier's answers above it, and
    // when the link expires, in the visitor's language and zone (the page's script).
    let onboarding = app.start("supplier_onboarding", "Acme Ltd").await;
    let supplier = app.link_for(onboarding, "supplier", 3 * 86_400).await;
    b.delete_cookies().await;
    b.goto(&supplier).await;
    b.fill("#f-company", "Acme <b>Ltd</b>").await;
    b.fill("#f-contact_email", "buyer@acme.example").await;
    b.fill("#f-yearly_volume", "1200").await;
    b.follow("form.stack button[type=submit]").await;
    assert_eq!(b.text("main h1").await, "Thank you");
    // A reload after the answer shows the same page and posts nothing.
    b.script("location.reload(); return true;").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(b.text("main h1").await, "Thank you");
    let reviewer = app.link_for(onboarding, "reviewer", 3 * 86_400).await;
    for lang in ["en", "fr"] {
        b.resize(1280, 900).await;
        b.goto(&format!("{reviewer}?lang={lang}")).await;
        assert_eq!(
            b.text("section.earlier dd").await,
            "Acme <b>Ltd</b>",
            "the supplier's answer, as text"
        );
        let utc = orchestra::time::format_utc(app.clock.now_secs() + 3 * 86_400);
        let shown = b.text("p.expiry time").await;
        assert_ne!(
            shown, utc,
            "the script shows the expiry in the visitor's zone"
        );
        assert!(shown.chars().any(|c| c.is_ascii_digit()), "{shown}");
        b.screenshot(&format!("doorway-review-{lang}")).await;
        b.resize(390, 844).await;
        b.goto(&format!("{reviewer}?lang={lang}")).await;
        assert!(!b.scrolls_sideways().await, "the review ({lang}) at 390 px");
        b.screenshot(&format!("doorway-review-phone-{lang}")).await;
    }
    assert_eq!(support_state(&app, onboarding).await, "active");
    sign_in(&mut b).await;

    // Every main page, in both languages, at desktop and phone width.
    let pages = [
        ("dashboard", "/admin".to_owned()),
        ("workflows", "/admin/workflows".to_owned()),
        ("workflow", "/admin/workflows/1".to_owned()),
        ("instances", "/admin/instances".to_owned()),
        ("instance", format!("/admin/instances/{running}")),
        ("ended-instance", format!("/admin/instances/{id}")),
        ("settings", "/admin/config/orchestra".to_owned()),
        (
            "interaction",
            "/admin/config/orchestra/interaction".to_owned(),
        ),
        ("status", "/admin/reports/status".to_owned()),
        ("tokens", "/admin/config/api".to_owned()),
        ("cancel", format!("/admin/instances/{running}/cancel")),
        ("admins", "/admin/admins".to_owned()),
        ("password", "/admin/admins/password".to_owned()),
        ("account", "/admin/account".to_owned()),
        ("sessions", "/admin/account/sessions".to_owned()),
        ("audit", "/admin/audit".to_owned()),
    ];
    for lang in ["en", "fr"] {
        b.resize(1280, 900).await;
        for (name, path) in &pages {
            b.goto(&format!("{path}?lang={lang}")).await;
            if matches!(
                *name,
                "dashboard"
                    | "status"
                    | "instance"
                    | "settings"
                    | "tokens"
                    | "interaction"
                    | "cancel"
                    | "admins"
                    | "instances"
                    | "workflow"
                    | "account"
                    | "sessions"
                    | "audit"
            ) {
                b.screenshot(&format!("{name}-{lang}")).await;
            }
        }
        b.resize(390, 844).await;
        for (name, path) in &pages {
            b.goto(&format!("{path}?lang={lang}")).await;
            assert!(
                !b.scrolls_sideways().await,
                "{name} ({lang}) scrolls sideways at 390 px"
            );
            if matches!(*name, "account" | "sessions" | "audit") {
                b.screenshot(&format!("{name}-phone-{lang}")).await;
            }
        }
        // A running instance on a phone: each link's state and its Revoke button on screen.
        b.goto(&format!("/admin/instances/{running}?lang={lang}"))
            .await;
        let on_screen = b
            .script(
                "const w = document.documentElement.clientWidth; \
                 return ['table.issued-links td.link-state', 'table.issued-links td.actions button'] \
                 .map(s => document.querySelector(s).getBoundingClientRect()) \
                 .every(r => r.width > 0 && r.left >= 0 && r.right <= w);",
            )
            .await;
        assert_eq!(
            on_screen,
            Value::Bool(true),
            "state and Revoke on screen ({lang})"
        );
        b.screenshot(&format!("instance-phone-{lang}")).await;
        b.goto(&format!("/admin/admins?lang={lang}")).await;
        b.screenshot(&format!("admins-phone-{lang}")).await;
        b.goto(&format!("/admin/instances?lang={lang}")).await;
        b.screenshot(&format!("instances-phone-{lang}")).await;
        // The status report itself: the loop above ends on another page.
        b.goto(&format!("/admin/reports/status?lang={lang}")).await;
        b.screenshot(&format!("status-phone-{lang}")).await;
        b.goto(&format!("/admin/config/orchestra/interaction?lang={lang}"))
            .await;
        b.script("document.querySelector('#payment-notices').scrollIntoView(); return true;")
            .await;
        b.screenshot(&format!("interaction-phone-{lang}")).await;
        b.goto(&format!("/admin/config/api?lang={lang}")).await;
        // The token's scope, below the fold on a phone.
        b.script("document.querySelector('fieldset').scrollIntoView(); return true;")
            .await;
        b.screenshot(&format!("tokens-phone-{lang}")).await;
        b.goto(&format!("/admin/instances/{running}/cancel?lang={lang}"))
            .await;
        b.screenshot(&format!("cancel-phone-{lang}")).await;
        b.goto(&format!("/admin/workflows/1?lang={lang}")).await;
        // The drawing's smallest text (13 of its 360 units) stays readable on a phone.
        let smallest = b
            .script(
                "const s = document.querySelector('svg.flow'); s.scrollIntoView(); \
                 return s.getBoundingClientRect().width / s.viewBox.baseVal.width * 13;",
            )
            .await;
        let smallest = smallest.as_f64().unwrap();
        assert!(
            smallest >= 12.0,
            "the drawing's text at {smallest} px ({lang})"
        );
        b.screenshot(&format!("workflow-phone-{lang}")).await;
        b.goto(&format!("/admin/config/orchestra?lang={lang}"))
            .await;
        b.screenshot(&format!("settings-phone-{lang}")).await;
    }
    assert!(b.console_errors.is_empty(), "{:#?}", b.console_errors);
}

async fn support_state(app: &TestApp, id: i64) -> String {
    orchestra::store::instances::by_id(&app.db, id)
        .await
        .unwrap()
        .unwrap()
        .state
        .as_str()
        .to_owned()
}

/// The webhooks page (issue 22) in both languages, at desktop and phone width: a refused URL
/// beside its field, an endpoint added and its secret shown once, the list, the delivery log.
/// Apart from the test above so that each can grow without the other.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhooks_in_a_real_browser() {
    let Some(mut b) = start().await else {
        return;
    };
    let app: TestApp = spawn(Flood::Memory).await;
    app.state
        .webhooks_allow_private
        .store(true, std::sync::atomic::Ordering::SeqCst);
    app.create_admin().await;
    b.app_base = app.base.clone();
    let receiver = crate::webhooks::receiver(200).await;
    sign_in(&mut b).await;
    // An endpoint failing now, and one disabled: their states on the list, as an administrator
    // meets them after an outage.
    let keys = app.state.site.get().await.keys.clone();
    let down = crate::webhooks::receiver(500).await;
    let make = |url: String| {
        let (db, keys) = (app.db.clone(), keys.clone());
        async move {
            orchestra::domain::delivery::endpoints::create(&db, &keys, &url, None, true)
                .await
                .unwrap()
                .id
        }
    };
    make(format!("{}?source=orchestra-production-eu-west", down.url)).await;
    let off = make(format!("{}?source=orchestra-archive", receiver.url)).await;
    orchestra::store::webhooks::disable(&app.db, off, orchestra::store::now())
        .await
        .unwrap();
    app.start("contract_review", "Before the outage").await;
    crate::webhooks::send_due(&app, orchestra::store::now(), true).await;

    for lang in ["en", "fr"] {
        b.resize(1280, 900).await;
        b.goto(&format!("/admin/webhooks?lang={lang}")).await;
        assert_eq!(b.count("td.webhook-state.disabled").await, 1);
        assert_eq!(
            b.count("td.webhook-state .day").await,
            2,
            "failing since: day, hour"
        );
        assert_eq!(
            b.attr("nav.admin a[aria-current=page]", "href")
                .await
                .as_deref(),
            Some("/admin/webhooks")
        );
        // Refused: the error beside the field, what was typed kept, the box still ticked.
        b.fill("#url", "ftp://example.org/hook").await;
        b.click("input[name=event][value='step.answered']").await;
        b.follow("form.stack button[type=submit]").await;
        assert_eq!(b.prop("#url", "value").await, "ftp://example.org/hook");
        assert_eq!(
            b.attr("#url", "aria-invalid").await.as_deref(),
            Some("true")
        );
        assert_eq!(b.count(".field-error[data-field=url]").await, 1);
        assert_eq!(
            b.prop("input[name=event][value='step.answered']", "checked")
                .await,
            true
        );
        b.screenshot(&format!("webhooks-refused-{lang}")).await;
        b.fill("#url", &receiver.url).await;
        b.follow("form.stack button[type=submit]").await;
        assert_eq!(b.path().await, "/admin/webhooks");
        let secret = b.prop("#webhook-secret", "value").await;
        assert!(
            secret.as_str().is_some_and(|s| s.starts_with("whsec_")),
            "the secret is shown"
        );
        b.screenshot(&format!("webhooks-{lang}")).await;
        b.resize(390, 844).await;
        assert!(
            !b.scrolls_sideways().await,
            "the webhooks page ({lang}) at 390 px"
        );
        b.screenshot(&format!("webhooks-phone-{lang}")).await;
        b.goto(&format!("/admin/webhooks?lang={lang}")).await;
        assert_eq!(b.count("#webhook-secret").await, 0, "shown once");

        // Something to log: an instance and its answer, sent.
        let id = app.start("contract_review", "Lease renewal").await;
        let legal = app.link(id, Some("legal")).await;
        crate::helpers::answer_step(
            &app.client(),
            &app,
            &legal,
            &[("decision", "approve"), ("comment", "Fine.")],
        )
        .await;
        while crate::webhooks::send_due(&app, orchestra::store::now(), true).await > 0 {}
        let endpoint = orchestra::store::webhooks::all(&app.db)
            .await
            .unwrap()
            .last()
            .unwrap()
            .id;
        b.resize(1280, 900).await;
        b.goto(&format!("/admin/webhooks/{endpoint}?lang={lang}"))
            .await;
        assert!(b.count("table.webhook-log tbody tr").await >= 1);
        b.screenshot(&format!("webhook-log-{lang}")).await;
        b.resize(390, 844).await;
        assert!(
            !b.scrolls_sideways().await,
            "the delivery log ({lang}) at 390 px"
        );
        b.screenshot(&format!("webhook-log-phone-{lang}")).await;
        b.goto(&format!("/admin/webhooks?lang={lang}")).await;
        // The list as cards, below the fold on a phone.
        b.script("document.querySelector('table.webhooks').scrollIntoView(); return true;")
            .await;
        b.screenshot(&format!("webhooks-list-phone-{lang}")).await;
    }
    assert!(b.console_errors.is_empty(), "{:#?}", b.console_errors);
}

/// Issue 22's contact fields, in both languages: choosing a workflow shows its participants'
/// rows at once (the form's script), a refused address is said beside its field with what was
/// typed kept, Enter in a field starts the instance (not "Show its participants"), and the
/// instance page shows the contacts and the email waiting; at desktop and phone width.
#[tokio::test]
async fn contact_fields_in_a_real_browser() {
    let Some(mut b) = start().await else {
        return;
    };
    let app: TestApp = spawn(Flood::Memory).await;
    app.create_admin().await;
    b.app_base = app.base.clone();
    sign_in(&mut b).await;
    let review = orchestra::store::workflows::by_name(&app.db, "contract_review")
        .await
        .unwrap()
        .unwrap()
        .id;

    for (lang, bad_words) in [
        ("en", "Enter an email address"),
        ("fr", "Saisissez une adresse"),
    ] {
        b.resize(1280, 900).await;
        b.goto(&format!("/admin/instances/new?lang={lang}")).await;
        assert_eq!(
            b.attr("[data-choose]", "hidden").await.as_deref(),
            Some("true"),
            "the script shows the rows itself"
        );
        b.fill("#title", "Lease renewal").await;
        b.leave_with(
            "the workflow's select",
            &format!(
                "var s = document.getElementById('workflow'); s.value = '{review}'; \
                 s.dispatchEvent(new Event('change')); return true;"
            ),
        )
        .await;
        assert_eq!(b.count(".contact-row").await, 2, "legal and finance");
        assert_eq!(b.prop("#title", "value").await, "Lease renewal", "kept");
        b.fill("#email-legal", "lee at legal").await;
        b.fill("#name-legal", "Lee").await;
        b.follow("form.stack button[type=submit]:not(.implicit-submit):not([data-choose])")
            .await;
        assert_eq!(b.count(".field-error[data-field='email.legal']").await, 1);
        assert!(
            b.text(".field-error[data-field='email.legal']")
                .await
                .contains(bad_words)
        );
        assert_eq!(b.prop("#email-legal", "value").await, "lee at legal");
        assert_eq!(b.prop("#name-legal", "value").await, "Lee");
        assert_eq!(
            b.attr("#email-legal", "aria-invalid").await.as_deref(),
            Some("true")
        );
        b.screenshot(&format!("instance-new-contacts-refused-{lang}"))
            .await;
        b.resize(390, 844).await;
        assert!(
            !b.scrolls_sideways().await,
            "the start form ({lang}) at 390 px"
        );
        b.screenshot(&format!("instance-new-contacts-phone-{lang}"))
            .await;
        b.resize(1280, 900).await;
        b.fill("#email-legal", "lee@legal.example").await;
        b.select("#lang-legal", "fr").await;
        // Enter in a field starts the instance.
        b.submit_with_enter("#title").await;
        assert!(
            b.path().await.starts_with("/admin/instances/"),
            "{}",
            b.path().await
        );
        let id: i64 = b.path().await.rsplit('/').next().unwrap().parse().unwrap();
        let kept = orchestra::store::mails::contacts_of(&app.db, id)
            .await
            .unwrap();
        assert_eq!(kept.len(), 1);
        assert_eq!(
            (kept[0].email.as_str(), kept[0].lang.as_str()),
            ("lee@legal.example", "fr")
        );
        assert_eq!(b.count("section.emails table.emails tbody tr").await, 1);
        assert_eq!(b.count("#send-link").await, 1);
        b.screenshot(&format!("instance-emails-{lang}")).await;
        b.resize(390, 844).await;
        assert!(
            !b.scrolls_sideways().await,
            "the instance page ({lang}) at 390 px"
        );
        b.script("document.querySelector('section.emails').scrollIntoView(); return true;")
            .await;
        b.screenshot(&format!("instance-emails-phone-{lang}")).await;

        // The email itself, as a mail client shows its HTML part.
        let letter = orchestra::domain::mail::compose::Letter {
            about: orchestra::domain::mail::compose::About {
                lang: orchestra::i18n::Lang::from_code(lang).unwrap(),
                site: "Orchestra",
                subject: "Lease renewal",
                workflow: if lang == "fr" {
                    "Revue de contrat"
                } else {
                    "Contract review"
                },
                step: if lang == "fr" {
                    "Approuver le contrat"
                } else {
                    "Approve the contract"
                },
                name: "Lee",
            },
            kind: orchestra::store::mails::Kind::Link,
            url: "https://flows.example.org/interaction/l.example",
            expires: 1_800_000_000,
        };
        let (_, html) = letter.bodies();
        let file = std::env::temp_dir().join(format!(
            "orchestra-email-{lang}-{}.html",
            std::process::id()
        ));
        std::fs::write(&file, html).unwrap();
        b.post(
            "/url",
            json!({ "url": format!("file://{}", file.display()) }),
        )
        .await;
        b.resize(1280, 900).await;
        b.screenshot(&format!("email-{lang}")).await;
        b.resize(390, 844).await;
        assert!(!b.scrolls_sideways().await, "the email ({lang}) at 390 px");
        b.screenshot(&format!("email-phone-{lang}")).await;
        let _ = std::fs::remove_file(&file);
    }
    assert!(b.console_errors.is_empty(), "{:#?}", b.console_errors);
}
