//! The instance list as CSV, with the list page's filters: every instance they hold, streamed a
//! page at a time (`domain::lists::csv`), so a year of instances never sits in memory.

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::HeaderValue;
use axum::http::header::{CACHE_CONTROL, CONTENT_DISPOSITION, CONTENT_TYPE};
use axum::response::{IntoResponse, Response};

use super::instance_list::{Chosen, ListQuery};
use crate::domain::lists::{self, csv};
use crate::http::AppState;
use crate::http::context::PageContext;
use crate::http::extract::Query;

/// Where the next page of the export starts; `Done` once the last was sent.
enum Next {
    At(lists::From),
    Done,
}

pub async fn download(
    State(state): State<AppState>,
    ctx: PageContext,
    Query(query): Query<ListQuery>,
) -> Response {
    let filter = Chosen::read(&query).filter();
    let lang = ctx.lang;
    let header =
        futures_util::stream::once(async { Ok(Bytes::from_static(csv::HEADER.as_bytes())) });
    let pages = futures_util::stream::unfold(Next::At(lists::From::Newest), move |next| {
        let (state, filter) = (state.clone(), filter.clone());
        async move {
            let Next::At(from) = next else {
                return None;
            };
            match csv::page(&state.db, &state.versions, &filter, from, lang).await {
                Ok((text, more)) => {
                    let next = more.map_or(Next::Done, |id| Next::At(lists::From::Before(id)));
                    Some((Ok(Bytes::from(text)), next))
                }
                // The status line is sent: the download ends short, and the browser says it failed.
                Err(e) => {
                    tracing::warn!(error = %e, "an instance export was cut off");
                    Some((Err(e), Next::Done))
                }
            }
        }
    });
    let mut response =
        Body::from_stream(futures_util::StreamExt::chain(header, pages)).into_response();
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/csv; charset=utf-8; header=present"),
    );
    headers.insert(
        CONTENT_DISPOSITION,
        HeaderValue::from_static("attachment; filename=\"instances.csv\""),
    );
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("private, no-store"));
    response
}
