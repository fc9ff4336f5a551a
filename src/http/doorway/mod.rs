//! The interaction doorway: the one route answered without asking who is calling.
//!
//! Order of work for every request, cheapest first:
//! 1. the guard (`guard`): a keyed hash of the link and an in-memory count, nothing else;
//! 2. `interaction::resolve`: parse, one read of the instance (with the link's record), the
//!    HMAC, and the instance's version from memory;
//! 3. the handler: at most one more read (what was answered), then render or record.
//!
//! Routing never loads anything, so a refused request costs no instance load, no token check,
//! no HMAC over the link, no subject, no interaction and no render. The rules (what a link may
//! answer, what an answer must hold) are the domain's, in `crate::domain::interaction`; this module
//! only speaks HTTP.

use axum::Router;
use axum::extract::{Request, State};
use axum::http::header::{HOST, ORIGIN};
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;

use super::AppState;
use super::client::ClientAddr;
use super::error::AppError;
use super::form::{holds_nul, pairs};
use crate::domain::capability::Kind;
use crate::domain::interaction::{self, Invalid, Now, Resolution, Resolved, forward};
use crate::domain::keys::CLIENT_PURPOSE;
use crate::domain::rotation;
use crate::domain::site::Snapshot;
use crate::domain::workflow::Interaction;
use crate::i18n::Lang;
use crate::store::instances::Recorded;

mod code;
mod guard;
mod payment;
mod receipt;
mod upload;
mod views;

pub use guard::{guard, refusal};
pub use views::refused;

/// Everything under it is the doorway's one route (`ROUTE`), and is counted before routing.
pub const PREFIX: &str = "/interaction/";
const ROUTE: &str = "/interaction/{*link}";
/// Everything under it is the test provider's one route (`http::provider`), counted under the
/// doorway's guard as the handle it carries (`http::front`).
pub const PROVIDER_PREFIX: &str = "/test-provider/";
/// The query a successful answer redirects to (post/redirect/get): it only picks the thank-you
/// wording of the page that says what happens next, and proves nothing.
pub const THANKS_QUERY: &str = "thanks";
/// The hidden field naming the step a page showed (1-based). Field names are slugs, which
/// never start with `_`, so no form field can take this name.
pub const STEP_FIELD: &str = "_step";

/// The doorway's routes. The guard runs before routing (`http::front`).
pub fn router() -> Router<AppState> {
    Router::new()
        // Everything under the prefix is the doorway, so a link with a stray trailing slash or
        // segment is counted and refused like any other bad link.
        .route(ROUTE, get(show).post(answer))
}

/// The cap of an answer that streams its files (`body::Streams`): the most any form may send;
/// the handler holds each to its own step's (`upload::Target::most`) before reading it.
pub fn streams(route: &str, headers: &HeaderMap) -> Option<usize> {
    (route == ROUTE && upload::boundary(headers).is_some()).then_some(upload::CEILING)
}

/// The link as it appears in the path: everything after the prefix.
pub(crate) fn link_of(path: &str) -> &str {
    path.strip_prefix(PREFIX).unwrap_or("")
}

/// The credential a path under the doorway's guard carries: a link or handle under `PREFIX`,
/// or a handle under the test provider's prefix. The provider's pages resolve the same handle
/// the doorway does (a database read each), so they are counted as the same caller.
pub(crate) fn guarded_credential(path: &str) -> Option<&str> {
    // A download under a link (`FILE_SEGMENT`) is counted as the link it is under.
    path.strip_prefix(PREFIX)
        .map(|rest| rest.split_once('/').map_or(rest, |(link, _)| link))
        .or_else(|| path.strip_prefix(PROVIDER_PREFIX))
}

/// Resolves the request's link, or answers the one refusal.
async fn resolve(
    state: &AppState,
    snapshot: &Snapshot,
    link: &str,
) -> Result<Option<Resolved>, AppError> {
    Ok(interaction::resolve(
        &state.db,
        &state.versions,
        &snapshot.keys,
        link,
        state.clock.now_secs(),
    )
    .await?)
}

async fn show(
    State(state): State<AppState>,
    lang: Lang,
    uri: Uri,
    headers: HeaderMap,
) -> Result<Response, AppError> {
    let link = link_of(uri.path());
    if let Some((link, rest)) = link.split_once('/') {
        if let Some(line) = rest.strip_prefix(RECEIPT_SEGMENT) {
            return receipt::download(&state, lang, link, line, &headers).await;
        }
        return download(&state, lang, link, rest, &headers).await;
    }
    // The query is read for the thank-you wording alone: a return trip's `?outcome=` is no
    // proof of anything.
    let thanks = uri
        .query()
        .is_some_and(|q| q.split('&').any(|kv| kv == THANKS_QUERY));
    let snapshot = state.site.get().await;
    let now = state.clock.now_secs();
    let grace = interaction::ANSWER_GRACE_SECS;
    let resolution =
        interaction::resolve_answer(&state.db, &state.versions, &snapshot.keys, link, now, grace);
    // A genuine link that expired or was voided by a key rotation is refused like any other,
    // with a form its holder may ask a fresh link with.
    let resolved = match resolution.await? {
        Resolution::Usable(resolved) => resolved,
        Resolution::ExpiredRecently(resolved) => {
            return Ok(match rotation::expired(&snapshot, &resolved) {
                Some(_) => views::refused_with_fresh(lang, link),
                None => views::refused(lang),
            });
        }
        Resolution::Refused => {
            let voided = rotation::voided(&state.db, &snapshot.retired, link, now).await?;
            return Ok(match voided {
                Some(_) => views::refused_with_fresh(lang, link),
                None => views::refused(lang),
            });
        }
    };
    let ctx = views::ctx_for(&snapshot, lang);
    if resolved.claims.kind == Kind::Handle {
        return payment::returned(ctx, state.clock.now_secs(), &resolved);
    }
    let Now::Answer { step, branch } = resolved.now() else {
        // A link that answered offers its receipts whenever it is opened again.
        let offers = receipt::offers(&state, &resolved, &ctx).await?;
        if thanks {
            return Ok(views::thanked(ctx, &resolved, false, offers));
        }
        return Ok(views::nothing_offering(ctx, &resolved, offers));
    };
    let now = state.clock.now_secs();
    // Before its code, a `verify email` step shows nothing of itself, not even whether it
    // was answered.
    if code::asks(step, &resolved, &headers, &snapshot.keys, now) {
        return code::page(
            &state,
            &snapshot.keys,
            ctx,
            &resolved,
            None,
            StatusCode::OK,
            now,
        )
        .await;
    }
    // One read: the branches that answered this step, and the earlier answers it shows.
    let earlier = earlier(&state, &snapshot, &resolved, step, branch, lang).await?;
    // A branch that has answered is not offered the form again: its answer would not count.
    if earlier.answered.iter().any(|b| b == branch) {
        let offers = receipt::offers(&state, &resolved, &ctx).await?;
        if thanks {
            return Ok(views::thanked(ctx, &resolved, true, offers));
        }
        return Ok(views::done_with(
            ctx,
            &resolved,
            "doorway-nothing-title",
            "doorway-already-answered",
            offers,
        ));
    }
    // A step sent back for changes: its form holds what was answered before, and the page
    // says who sent it back and why.
    let notice = earlier
        .sent_back()
        .map(|(who, comment)| views::Notice::SentBack(who.to_owned(), comment));
    Ok(views::step(
        ctx,
        views::At {
            now: state.clock.now_secs(),
            max_file_bytes: snapshot.settings.max_file_bytes(),
        },
        &resolved,
        earlier.typed_before(step, lang),
        notice,
        &earlier.shown,
        StatusCode::OK,
    ))
}

/// A file an earlier step brought, downloaded by the holder of a link whose step shows that
/// step: `{link}/file/{id}.{mac}`, the mac binding the file to this link, so neither the id
/// nor the link can be changed to reach another file. Anything else is the one refusal.
async fn download(
    state: &AppState,
    lang: Lang,
    link: &str,
    rest: &str,
    headers: &HeaderMap,
) -> Result<Response, AppError> {
    let snapshot = state.site.get().await;
    let Some((id, mac)) = rest
        .strip_prefix(FILE_SEGMENT)
        .and_then(|r| r.split_once('.'))
        .and_then(|(id, mac)| Some((id.parse::<i64>().ok()?, mac)))
    else {
        return Ok(views::refused(lang));
    };
    if !crate::domain::files::download_mac_matches(&snapshot.keys, link, id, mac) {
        return Ok(views::refused(lang));
    }
    let Some(resolved) = resolve(state, &snapshot, link).await? else {
        return Ok(views::refused(lang));
    };
    let Now::Answer { step, .. } = resolved.now() else {
        return Ok(views::refused(lang));
    };
    if code::asks(
        step,
        &resolved,
        headers,
        &snapshot.keys,
        state.clock.now_secs(),
    ) {
        return Ok(views::refused(lang));
    }
    let file = crate::store::files::kept(&state.db, resolved.instance.id, id).await?;
    match file {
        Some(file) if step.shows.contains(&(file.step_index as usize)) => {
            Ok(super::files::serve(&state.db, file))
        }
        _ => Ok(views::refused(lang)),
    }
}

/// The path segment before a file's id in a download address under a link.
pub const FILE_SEGMENT: &str = "file/";
/// The path segment before an answer's line id in a receipt's address under a link.
pub const RECEIPT_SEGMENT: &str = "receipt/";

/// The path segment after a link where its holder asks for a fresh one (a POST).
pub const FRESH_SEGMENT: &str = "fresh";

/// The holder of a genuine link that expired or was voided asks for a fresh one to the address
/// on file. The guard counted the request under the link (its path is under it); a link asks at
/// most `rotation::MOST_FRESH_ASKS` times, then gets the guard's refusal. A link that is not
/// genuine gets the one refusal; a genuine one the same words whatever came of it.
async fn fresh(
    state: &AppState,
    lang: Lang,
    headers: &HeaderMap,
    link: &str,
) -> Result<Response, AppError> {
    let snapshot = state.site.get().await;
    if cross_site(headers, snapshot.settings.base_url.starts_with("https://")) {
        tracing::info!("refused a cross-site post to the doorway");
        return Err(AppError::Forbidden);
    }
    let now = state.clock.now_secs();
    let genuine = rotation::genuine(&state.db, &state.versions, &snapshot, link, now).await?;
    let Some(genuine) = genuine else {
        return Ok(views::refused(lang));
    };
    Ok(
        match rotation::ask_fresh(&state.db, &state.versions, &genuine).await? {
            rotation::Fresh::Asked => views::fresh_asked(lang),
            rotation::Fresh::TooMany => refusal(lang),
        },
    )
}

/// What the step needs from the history (`interaction::earlier`), with each shown file's
/// download address under this link.
async fn earlier(
    state: &AppState,
    snapshot: &Snapshot,
    resolved: &Resolved,
    step: &crate::domain::workflow::Step,
    branch: &str,
    lang: Lang,
) -> Result<interaction::Earlier, AppError> {
    let mut earlier = interaction::earlier(&state.db, resolved, step, branch, lang).await?;
    let lines = earlier.shown.iter_mut().flat_map(|s| &mut s.answers);
    for line in lines.flat_map(|(_, lines)| lines) {
        if let Some(file) = line.1.file {
            line.1.link = Some(download_path(&snapshot.keys, &resolved.link, file));
        }
    }
    Ok(earlier)
}

/// Where the holder of `link` downloads file `id`.
pub fn download_path(keys: &crate::domain::keys::SiteKeys, link: &str, id: i64) -> String {
    let mac = crate::domain::files::download_mac(keys, link, id);
    format!("{PREFIX}{link}/{FILE_SEGMENT}{id}.{mac}")
}

/// Whether a POST may have come from another site. An anonymous form has no session to hold
/// a token, so the browser's own statements are the defence: `Sec-Fetch-Site` where sent,
/// else `Origin` against the site's scheme (`https` when its base URL is) and `Host`: an
/// origin is its scheme and host together, so `http://` under an https site is another
/// origin (a page on the plain-text port a network attacker can write). Clients that send
/// neither (scripts, old browsers) are let through: they are not a victim's browser carrying
/// someone else's intent.
pub(crate) fn cross_site(headers: &HeaderMap, https: bool) -> bool {
    if let Some(site) = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok()) {
        return !matches!(site, "same-origin" | "none");
    }
    let Some(origin) = headers.get(ORIGIN).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let host = headers
        .get(HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let scheme = if https { "https" } else { "http" };
    let Some((origin_scheme, origin_host)) = origin.split_once("://") else {
        return true;
    };
    !(origin_scheme.eq_ignore_ascii_case(scheme) && origin_host.eq_ignore_ascii_case(host))
}

async fn answer(
    State(state): State<AppState>,
    lang: Lang,
    ClientAddr(client): ClientAddr,
    request: Request,
) -> Result<Response, AppError> {
    let link = link_of(request.uri().path()).to_owned();
    if let Some(link) = link
        .strip_suffix(FRESH_SEGMENT)
        .and_then(|l| l.strip_suffix('/'))
    {
        return fresh(&state, lang, request.headers(), link).await;
    }
    // A language chosen in the URL goes on in the redirect after the answer, for clients that
    // keep no cookie.
    let chosen = super::lang::pick(request.uri(), request.headers()).1;
    let snapshot = state.site.get().await;
    if cross_site(
        request.headers(),
        snapshot.settings.base_url.starts_with("https://"),
    ) {
        tracing::info!("refused a cross-site post to the doorway");
        return Err(AppError::Forbidden);
    }
    let now = state.clock.now_secs();
    // The code's mark travels in a cookie; the body is read below.
    let headers = request.headers().clone();
    let resolve = || {
        interaction::resolve_answer(
            &state.db,
            &state.versions,
            &snapshot.keys,
            &link,
            now,
            interaction::ANSWER_GRACE_SECS,
        )
    };
    let (submitted, resolution, uploaded, unkept) = match upload::boundary(request.headers()) {
        None => {
            let body = super::body::read(request.into_body()).await?;
            // Bad input before any read: no answer may hold a NUL (`form::holds_nul`).
            if holds_nul(&body) {
                return Err(AppError::BadRequest);
            }
            let nothing = upload::Unkept::new(&state.db, Vec::new());
            (pairs(&body), resolve().await?, Vec::new(), nothing)
        }
        // Files go to storage as they arrive, under the instance and step they answer: the
        // link is resolved before the body is read.
        Some(boundary) => {
            let resolution = resolve().await?;
            let (posted, unkept) =
                upload::receive(&state.db, &snapshot, &resolution, request, boundary, now).await?;
            (posted.pairs, resolution, posted.files, unkept)
        }
    };
    let resolved = match resolution {
        Resolution::Usable(resolved) => resolved,
        // Its holder typed an answer while the link ran out: give it back, record nothing.
        Resolution::ExpiredRecently(resolved) => {
            let ctx = views::ctx_for(&snapshot, lang);
            return Ok(match resolved.now() {
                Now::Answer { step, .. }
                    if resolved.claims.kind == Kind::Link
                        && !code::asks(step, &resolved, &headers, &snapshot.keys, now) =>
                {
                    tracing::info!(
                        instance = resolved.instance.id,
                        "an answer came on a link that had just expired; given back, not recorded"
                    );
                    views::expired(ctx, &resolved, step, &submitted)
                }
                _ => views::refused(lang),
            });
        }
        Resolution::Refused => return Ok(views::refused(lang)),
    };
    // The page names the step it showed: a second click, or a post that lost a race to
    // another, must not answer whatever step came next. It is sent to the current page.
    let shown_step = submitted
        .iter()
        .find(|(k, _)| k == STEP_FIELD)
        .map(|(_, v)| v.as_str());
    if shown_step.is_some_and(|s| s != resolved.step_number().to_string()) {
        return Ok(Redirect::to(&format!("{PREFIX}{}", resolved.link)).into_response());
    }
    let ctx = views::ctx_for(&snapshot, lang);
    let Now::Answer { step, branch } = resolved.now() else {
        return Ok(views::nothing(ctx, &resolved));
    };
    if resolved.claims.kind == Kind::Link {
        if code::asks(step, &resolved, &headers, &snapshot.keys, now) {
            return code::answer(
                &state,
                &snapshot.keys,
                ctx,
                &resolved,
                &submitted,
                chosen,
                now,
            )
            .await;
        }
        // A code form posted again after its code was typed: the step is open.
        if submitted.iter().any(|(k, _)| k == code::ACTION) {
            return Ok(Redirect::to(&format!("{PREFIX}{}", resolved.link)).into_response());
        }
    }
    if submitted.iter().any(|(k, _)| k == forward::ACTION) {
        return Ok(
            match forward::forward(&state.db, &resolved, step, &submitted).await? {
                forward::Forwarded::To(to) => views::forwarded(ctx, &resolved, &to),
                forward::Forwarded::Refused(refused) => {
                    let earlier = earlier(&state, &snapshot, &resolved, step, branch, lang).await?;
                    let kept = Invalid {
                        values: submitted.clone(),
                        field_errors: refused.field_errors,
                        errors: refused.errors,
                        ..Invalid::default()
                    };
                    views::step(
                        ctx,
                        views::At {
                            now,
                            max_file_bytes: snapshot.settings.max_file_bytes(),
                        },
                        &resolved,
                        kept,
                        None,
                        &earlier.shown,
                        StatusCode::UNPROCESSABLE_ENTITY,
                    )
                }
            },
        );
    }
    if let Interaction::Payment { .. } = step.interaction {
        return payment::start(&state, &snapshot, ctx, &resolved, step, branch).await;
    }
    if resolved.claims.kind == Kind::Handle {
        // A handle returns to its payment; it answers nothing else.
        return Ok(views::nothing(ctx, &resolved));
    }
    let given = match interaction::check_with_files(step, &submitted, &uploaded, lang) {
        Ok(given) => given,
        Err(invalid) => {
            let earlier = earlier(&state, &snapshot, &resolved, step, branch, lang).await?;
            let notice = earlier
                .sent_back()
                .map(|(who, comment)| views::Notice::SentBack(who.to_owned(), comment));
            return Ok(views::step(
                ctx,
                views::At {
                    now,
                    max_file_bytes: snapshot.settings.max_file_bytes(),
                },
                &resolved,
                invalid,
                notice,
                &earlier.shown,
                StatusCode::UNPROCESSABLE_ENTITY,
            ));
        }
    };
    // The evidence record tells answers from one client apart from another's, never where from.
    let client = snapshot
        .keys
        .keyed_hash(CLIENT_PURPOSE, &client.to_string());
    // A step opened by an emailed code says so on its answer's line of history.
    let verified = step.verify_email.then_some(interaction::code::VERIFIED_BY);
    let outcome = interaction::record(
        &state.db, &resolved, step, branch, &given, &client, verified,
    )
    .await?;
    if outcome != Recorded::Stale {
        unkept.kept();
    }
    if let Some(asked) = &outcome.asked {
        state.step_waits.observe(asked);
    }
    tracing::info!(
        instance = resolved.instance.id,
        step = resolved.instance.step_index,
        participant = %resolved.participant,
        "step answered"
    );
    Ok(after_recording(&resolved, &outcome.recorded, chosen))
}

/// Where an answer sends the browser once recorded (post/redirect/get, so a reload never posts
/// again): on to the next step when this link answers it, else to the link's page in its
/// thank-you wording. A stale answer (another got in first) goes to the page as it now is.
fn after_recording(resolved: &Resolved, outcome: &Recorded, chosen: Option<Lang>) -> Response {
    let thanks = match outcome {
        Recorded::Advanced => !resolved.answers_next(),
        Recorded::Stale => false,
        Recorded::Waiting | Recorded::Ended(_) => true,
    };
    let mut query: Vec<String> = Vec::new();
    if thanks {
        query.push(THANKS_QUERY.to_owned());
    }
    if let Some(lang) = chosen {
        query.push(format!("lang={}", lang.code()));
    }
    let page = if query.is_empty() {
        format!("{PREFIX}{}", resolved.link)
    } else {
        format!("{PREFIX}{}?{}", resolved.link, query.join("&"))
    };
    Redirect::to(&page).into_response()
}

#[cfg(test)]
mod tests {
    /// The guard counts every path under `PREFIX` before routing: the route must be exactly
    /// that, or a request would be counted for a route that is not the doorway's, or answered
    /// by the doorway uncounted.
    #[test]
    fn the_route_is_everything_under_the_prefix() {
        assert_eq!(super::ROUTE, format!("{}{{*link}}", super::PREFIX));
    }

    fn headers(pairs: &[(&'static str, &str)]) -> axum::http::HeaderMap {
        pairs
            .iter()
            .map(|(k, v)| (axum::http::HeaderName::from_static(k), v.parse().unwrap()))
            .collect()
    }

    /// An origin is a scheme and a host: the same host on the other scheme is another site.
    #[test]
    fn an_origin_on_the_other_scheme_is_cross_site() {
        let host = ("host", "flows.example.org");
        for (origin, https, cross) in [
            ("https://flows.example.org", true, false),
            ("HTTPS://Flows.Example.org", true, false),
            ("http://flows.example.org", true, true),
            ("https://flows.example.org", false, true),
            ("http://flows.example.org", false, false),
            ("https://evil.example", true, true),
            ("null", true, true),
            ("flows.example.org", true, true),
        ] {
            let sent = headers(&[host, ("origin", origin)]);
            assert_eq!(
                super::cross_site(&sent, https),
                cross,
                "{origin} (https: {https})"
            );
        }
        assert!(
            !super::cross_site(&headers(&[host]), true),
            "no origin: a script"
        );
    }
}
