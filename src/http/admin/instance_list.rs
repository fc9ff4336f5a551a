//! The instance list: newest first a page at a time, filtered and searched, with who each running
//! instance waits on; its filters are kept in the URL (and in the CSV download's).

use axum::extract::State;
use axum::response::Response;
use serde::Deserialize;

use crate::domain::lists;
use crate::domain::workflow::labels::maybe_label_in;
use crate::http::AppState;
use crate::http::context::{PageContext, html};
use crate::http::error::{AppError, Result};
use crate::http::extract::Query;
use crate::i18n::Message;

pub struct InstanceLine {
    pub id: i64,
    pub title: String,
    pub workflow: String,
    pub state: String,
    pub updated: String,
    /// Who it waits on (empty when it has ended) and since when.
    pub waiting: String,
    pub since: String,
}

/// What the list's form and links keep in the URL. Every part is read leniently: a value that
/// is not one (`before=abc`, `state=lost`) is left out, never an error page.
#[derive(Deserialize, Default)]
pub struct ListQuery {
    workflow: Option<String>,
    state: Option<String>,
    by: Option<String>,
    q: Option<String>,
    before: Option<String>,
    after: Option<String>,
}

/// The list's filters as understood.
pub(super) struct Chosen {
    workflow: Option<i64>,
    state: Option<crate::domain::workflow::InstanceState>,
    by: Option<lists::Starter>,
    q: String,
}

impl Chosen {
    pub(super) fn read(query: &ListQuery) -> Self {
        let word = |v: &Option<String>| v.as_deref().map(str::trim).unwrap_or_default().to_owned();
        Self {
            workflow: query
                .workflow
                .as_deref()
                .and_then(|w| w.trim().parse::<i64>().ok()),
            state: lists::parse_state(&word(&query.state)),
            by: lists::Starter::parse(&word(&query.by)),
            q: query
                .q
                .as_deref()
                .unwrap_or_default()
                .trim()
                .chars()
                .take(lists::MAX_SEARCH)
                .collect(),
        }
    }

    pub(super) fn filter(&self) -> lists::Filter {
        lists::filter(self.workflow, self.state, self.by, Some(&self.q))
    }

    /// `/admin/instances?…` with these filters and, when given, a cursor.
    fn url(&self, cursor: Option<(&str, i64)>) -> String {
        self.url_of("/admin/instances", cursor)
    }

    /// `path?…` with these filters and, when given, a cursor.
    fn url_of(&self, path: &str, cursor: Option<(&str, i64)>) -> String {
        let mut pairs: Vec<(&str, String)> = Vec::new();
        if let Some(w) = self.workflow {
            pairs.push(("workflow", w.to_string()));
        }
        if let Some(s) = self.state {
            pairs.push(("state", s.as_str().to_owned()));
        }
        if let Some(b) = self.by {
            pairs.push(("by", b.as_str().to_owned()));
        }
        if !self.q.is_empty() {
            pairs.push(("q", self.q.clone()));
        }
        if let Some((name, id)) = cursor {
            pairs.push((name, id.to_string()));
        }
        let query = serde_urlencoded::to_string(&pairs).unwrap_or_default();
        if query.is_empty() {
            path.to_owned()
        } else {
            format!("{path}?{query}")
        }
    }
}

#[derive(askama::Template)]
#[template(path = "admin/instances.html")]
struct ListPage {
    ctx: PageContext,
    instances: Vec<InstanceLine>,
    /// The workflows to filter by: id and label.
    workflows: Vec<(i64, String)>,
    states: Vec<(&'static str, String)>,
    starters: Vec<(&'static str, String)>,
    workflow: i64,
    state: &'static str,
    by: &'static str,
    q: String,
    filtered: bool,
    total: String,
    newer_url: Option<String>,
    older_url: Option<String>,
    /// The same filters as CSV.
    csv_url: String,
    /// Set when a search page shows fewer than a page: how far it looked.
    window_note: Option<String>,
}

/// Newest first, `lists::PAGE` at a time, keyset on the id (`?before=` older, `?after=` newer):
/// a page is one range read and its total a count capped at `lists::COUNT_CAP`.
pub async fn list(
    State(state): State<AppState>,
    ctx: PageContext,
    Query(query): Query<ListQuery>,
) -> Result<Response> {
    let chosen = Chosen::read(&query);
    let filter = chosen.filter();
    let cursor = |v: &Option<String>| {
        v.as_deref()
            .and_then(|v| v.trim().parse::<i64>().ok())
            .filter(|id| *id > 0)
    };
    let mut from = match (cursor(&query.before), cursor(&query.after)) {
        (Some(id), _) => lists::From::Before(id),
        (None, Some(id)) => lists::From::After(id),
        (None, None) => lists::From::Newest,
    };
    // The page, its total and the workflow menu read on three pooled connections at once: with
    // a search the first two each read a window of `SEARCH_WINDOW` rows, and one after the
    // other they were most of the page's time on PostgreSQL.
    let (mut listed, total, workflows) = tokio::try_join!(
        async { Ok::<_, AppError>(lists::page(&state.db, &filter, from, lists::PAGE).await?) },
        async { Ok::<_, AppError>(lists::total(&state.db, &filter).await?) },
        super::workflows::options(&state, ctx.lang),
    )?;
    if matches!(from, lists::From::After(_)) && listed.more.is_none() {
        // Nothing newer than this page: it is the first page, shown whole.
        from = lists::From::Newest;
        listed = lists::page(&state.db, &filter, from, lists::PAGE).await?;
    }
    let (older, newer) = match from {
        lists::From::Newest => (listed.more, None),
        lists::From::Before(before) => (
            listed.more,
            Some(listed.rows.first().map_or(before - 1, |r| r.id)),
        ),
        lists::From::After(after) => (
            Some(listed.rows.last().map_or(after + 1, |r| r.id)),
            listed.more,
        ),
    };
    let total = ctx.msg(&total.message());
    let window_note =
        (filter.search.is_some() && older.is_some() && listed.rows.len() < lists::PAGE as usize)
            .then(|| {
                ctx.msg(
                    &Message::new("instances-search-window")
                        .arg("count", lists::SEARCH_WINDOW.to_string()),
                )
            });
    let mut waiting = lists::waiting(&state.db, &state.versions, &listed.rows).await?;
    let instances = listed
        .rows
        .into_iter()
        .map(|i| {
            let w = waiting.remove(&i.id).unwrap_or_default();
            InstanceLine {
                id: i.id,
                workflow: maybe_label_in(
                    i.workflow_label.as_deref(),
                    i.workflow_labels.as_deref(),
                    ctx.lang,
                )
                .unwrap_or_default(),
                state: ctx.t(i.state.message_id()),
                updated: crate::time::format_utc(i.updated_at),
                waiting: w.who_text(),
                since: w.since.map(crate::time::format_utc).unwrap_or_default(),
                title: i.subject_title,
            }
        })
        .collect();
    let states = crate::domain::workflow::InstanceState::ALL
        .iter()
        .map(|s| (s.as_str(), ctx.t(s.message_id())))
        .collect();
    let starters = lists::Starter::ALL
        .iter()
        .map(|s| (s.as_str(), ctx.t(s.message_id())))
        .collect();
    Ok(html(&ListPage {
        workflows,
        states,
        starters,
        workflow: chosen.workflow.unwrap_or(0),
        state: chosen.state.map_or("", |s| s.as_str()),
        by: chosen.by.map_or("", |b| b.as_str()),
        filtered: chosen.workflow.is_some()
            || chosen.state.is_some()
            || chosen.by.is_some()
            || !chosen.q.is_empty(),
        older_url: older.map(|id| chosen.url(Some(("before", id)))),
        newer_url: newer.map(|id| chosen.url(Some(("after", id)))),
        csv_url: chosen.url_of("/admin/instances.csv", None),
        q: chosen.q,
        total,
        window_note,
        instances,
        ctx,
    }))
}
