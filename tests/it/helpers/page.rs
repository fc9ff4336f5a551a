//! A response read whole, signing in with a client of one's own, and an instance's state and
//! history as the store holds them.

use reqwest::header::HeaderMap;
use reqwest::{Client, RequestBuilder};

use super::app::{ADMIN, PASSWORD, TestApp, csrf_of, select_attr, select_text};

/// A response read whole: status, headers and body.
pub struct Page {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: String,
}

impl Page {
    /// The one value of a header; `None` when it is missing or sent more than once.
    pub fn header(&self, name: &str) -> Option<&str> {
        let mut values = self.headers.get_all(name).iter();
        let first = values.next()?;
        if values.next().is_some() {
            return None;
        }
        first.to_str().ok()
    }

    pub fn location(&self) -> String {
        self.header("location")
            .expect("a Location header")
            .to_owned()
    }

    /// The value `Set-Cookie` gives a cookie on this response, if it sets it.
    pub fn cookie(&self, name: &str) -> Option<String> {
        self.headers
            .get_all("set-cookie")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .find_map(|v| v.strip_prefix(name)?.strip_prefix('='))
            .map(|v| v.split(';').next().unwrap_or("").to_owned())
    }

    pub fn text(&self, selector: &str) -> Vec<String> {
        select_text(&self.body, selector)
    }

    /// The trimmed text of the first element a selector finds, or "" when none does.
    pub fn first(&self, selector: &str) -> String {
        self.text(selector).into_iter().next().unwrap_or_default()
    }

    pub fn attr(&self, selector: &str, attr: &str) -> Option<String> {
        select_attr(&self.body, selector, attr)
    }

    pub fn has(&self, selector: &str) -> bool {
        !self.text(selector).is_empty()
    }

    /// `<html lang>`.
    pub fn lang(&self) -> String {
        self.attr("html", "lang").unwrap_or_default()
    }

    pub fn csrf(&self) -> String {
        csrf_of(&self.body)
    }
}

pub async fn read(request: RequestBuilder) -> Page {
    let response = match request.send().await {
        Ok(response) => response,
        // The whole chain (reqwest's Display stops at its own words): which OS error, or what
        // hyper saw of the connection.
        Err(e) => panic!("the app did not answer: {}", chain(&e)),
    };
    Page {
        status: response.status().as_u16(),
        headers: response.headers().clone(),
        body: match response.text().await {
            Ok(body) => body,
            Err(e) => panic!("the answer's body did not arrive: {}", chain(&e)),
        },
    }
}

/// An error and its sources, one after another.
fn chain(e: &dyn std::error::Error) -> String {
    let mut words = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        words.push_str(": ");
        words.push_str(&s.to_string());
        source = s.source();
    }
    words
}

pub async fn get(client: &Client, app: &TestApp, path: &str) -> Page {
    read(client.get(app.url(path))).await
}

/// Posts a form as a browser on the same site would.
pub async fn post(client: &Client, app: &TestApp, path: &str, form: &[(&str, &str)]) -> Page {
    read(
        client
            .post(app.url(path))
            .header("sec-fetch-site", "same-origin")
            .form(form),
    )
    .await
}

/// Answers a doorway step as a browser would: the post, then, when it redirects to the link's
/// thank-you page (post/redirect/get), that page. Any other answer is returned as it came.
pub async fn answer_step(
    client: &Client,
    app: &TestApp,
    path: &str,
    form: &[(&str, &str)],
) -> Page {
    let posted = post(client, app, path, form).await;
    if posted.status != 303 {
        return posted;
    }
    let location = posted.location();
    let thanked = location.starts_with("/interaction/")
        && location
            .split_once('?')
            .is_some_and(|(_, q)| q.split('&').any(|kv| kv == "thanks"));
    if !thanked {
        return posted;
    }
    get(client, app, &location).await
}

/// Adds `lang=` to a path, after any query it already has.
pub fn with_lang(path: &str, code: &str) -> String {
    let sep = if path.contains('?') { '&' } else { '?' };
    format!("{path}{sep}lang={code}")
}

/// Asserts the two headers every response carrying a credential in its URL must have.
pub fn assert_credential_headers(page: &Page, what: &str) {
    assert_eq!(
        page.header("referrer-policy"),
        Some("no-referrer"),
        "Referrer-Policy on {what}"
    );
    assert_eq!(
        page.header("cache-control"),
        Some("no-store"),
        "Cache-Control on {what}"
    );
}

/// Signs an existing administrator in on a new client.
pub async fn sign_in(app: &TestApp) -> Client {
    signing_in(app).await.0
}

/// `sign_in`, with the sign-in's answer (the cookies it sets).
pub async fn signing_in(app: &TestApp) -> (Client, Page) {
    let client = app.client();
    let form = get(&client, app, "/admin/login").await;
    let page = read(client.post(app.url("/admin/login")).form(&[
        ("csrf", form.csrf().as_str()),
        ("name", ADMIN),
        ("password", PASSWORD),
    ]))
    .await;
    assert_eq!(page.status, 303, "sign-in failed");
    (client, page)
}

/// An instance's state and current step.
pub async fn state_of(app: &TestApp, id: i64) -> (String, i64) {
    let row = orchestra::store::instances::by_id(&app.db, id)
        .await
        .unwrap()
        .expect("the instance exists");
    (row.state.as_str().to_owned(), row.step_index)
}

/// An instance's history as (step, branch, event), oldest first.
pub async fn events(app: &TestApp, id: i64) -> Vec<(i64, String, String)> {
    orchestra::store::instances::history(&app.db, id)
        .await
        .unwrap()
        .into_iter()
        .map(|h| (h.step_index, h.branch, h.event.as_str().to_owned()))
        .collect()
}

/// The answers recorded for an instance, as JSON, oldest first.
pub async fn answers(app: &TestApp, id: i64) -> Vec<serde_json::Value> {
    orchestra::store::instances::history(&app.db, id)
        .await
        .unwrap()
        .into_iter()
        .filter(|h| h.event.as_str() == "answered")
        .map(|h| serde_json::from_str(&h.answer).expect("an answer is JSON"))
        .collect()
}

/// A history line, for comparing with `events`.
pub fn event(step: i64, branch: &str, event: &str) -> (i64, String, String) {
    (step, branch.to_owned(), event.to_owned())
}

/// The path and query of a URL on the app.
pub fn path_of(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    rest.find('/')
        .map_or("/".to_owned(), |i| rest[i..].to_owned())
}
