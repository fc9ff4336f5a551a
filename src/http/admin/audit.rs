//! The audit log's page: newest first, a page at a time (keyset on the id), filtered by kind,
//! by who and by date; its filters are kept in the URL.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;

use crate::domain::audit::{self, Kind};
use crate::http::AppState;
use crate::http::context::{PageContext, html};
use crate::http::error::Result;
use crate::http::extract::Query;
use crate::i18n::Message;
use crate::store;

/// Events a page shows.
pub const PAGE: i64 = 50;

pub const PATH: &str = "/admin/audit";

#[derive(Deserialize, Default)]
pub struct AuditQuery {
    kind: Option<String>,
    who: Option<String>,
    from: Option<String>,
    to: Option<String>,
    before: Option<String>,
}

pub struct Line {
    pub at: String,
    pub kind: String,
    pub who: String,
    pub address: String,
    /// Its first characters, enough to tell addresses apart at a glance.
    pub short: String,
    pub detail: String,
}

#[derive(askama::Template)]
#[template(path = "admin/audit.html")]
struct AuditPage {
    ctx: PageContext,
    lines: Vec<Line>,
    kinds: Vec<(&'static str, String)>,
    kind: String,
    who: String,
    from: String,
    to: String,
    error: Option<String>,
    filtered: bool,
    newest_url: Option<String>,
    older_url: Option<String>,
}

fn who(ctx: &PageContext, row: &store::audit::Row) -> String {
    let name = row.actor_name.clone().unwrap_or_default();
    match row.actor.as_str() {
        "admin" => name,
        "cli" => ctx.t("audit-who-cli"),
        "token" => ctx.msg(&Message::new("audit-who-token").arg("name", name)),
        _ => ctx.t("audit-who-visitor"),
    }
}

fn line(ctx: &PageContext, row: &store::audit::Row) -> Line {
    Line {
        at: crate::time::format_utc(row.at),
        kind: Kind::parse(&row.kind).map_or_else(|| row.kind.clone(), |k| ctx.t(&k.message_id())),
        who: who(ctx, row),
        address: row.address.clone().unwrap_or_default(),
        short: row
            .address
            .as_deref()
            .and_then(|a| a.get(..12))
            .unwrap_or_default()
            .to_owned(),
        detail: audit::describe(&row.detail),
    }
}

pub async fn show(
    State(state): State<AppState>,
    ctx: PageContext,
    Query(q): Query<AuditQuery>,
) -> Result<Response> {
    let word = |v: &Option<String>| v.as_deref().unwrap_or_default().trim().to_owned();
    let (kind, who_text, from, to) = (word(&q.kind), word(&q.who), word(&q.from), word(&q.to));
    let parsed = audit::filter(Some(&kind), Some(&who_text), Some(&from), Some(&to));
    let (filter, error) = match parsed {
        Ok(f) => (f, None),
        Err(m) => (store::audit::Filter::default(), Some(ctx.msg(&m))),
    };
    // A `before` that is not an id is the first page, never an error.
    let before = q
        .before
        .as_deref()
        .and_then(|b| b.trim().parse::<i64>().ok());
    let (rows, more) = store::audit::page(&state.db, &filter, before, PAGE).await?;
    let keep = [
        ("kind", &kind),
        ("who", &who_text),
        ("from", &from),
        ("to", &to),
    ];
    let url = |before: Option<i64>| {
        let mut pairs: Vec<(&str, String)> = keep
            .iter()
            .filter(|(_, v)| !v.is_empty())
            .map(|(k, v)| (*k, (*v).clone()))
            .collect();
        if let Some(b) = before {
            pairs.push(("before", b.to_string()));
        }
        let query = serde_urlencoded::to_string(pairs).unwrap_or_default();
        if query.is_empty() {
            PATH.to_owned()
        } else {
            format!("{PATH}?{query}")
        }
    };
    let refused = error.is_some();
    let page = AuditPage {
        lines: rows.iter().map(|r| line(&ctx, r)).collect(),
        kinds: Kind::ALL
            .iter()
            .map(|k| (k.as_str(), ctx.t(&k.message_id())))
            .collect(),
        filtered: keep.iter().any(|(_, v)| !v.is_empty()),
        newest_url: before.map(|_| url(None)),
        older_url: more.map(|m| url(Some(m))),
        kind,
        who: who_text,
        from,
        to,
        error,
        ctx,
    };
    let mut response = html(&page);
    if refused {
        *response.status_mut() = StatusCode::BAD_REQUEST;
    }
    Ok(response)
}
