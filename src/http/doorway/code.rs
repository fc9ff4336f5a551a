//! The page a `| verify email` step shows until its holder typed the code emailed to the
//! participant (`domain::interaction::code` owns the rules), and the mark a right code leaves.
//!
//! The mark is a cookie in the holder's own browser, named by the link record and sealed with
//! a key derived from the site keys (AES-256-GCM, the `cookie` crate's private jar; the name
//! is the sealing's associated data, so a mark for one link opens for no other). It lasts a
//! working session (`VERIFIED_FOR`), so a holder on a second device types a code there too,
//! and asking for a new code does not sign out the first. Nothing of it is stored.

use axum::http::header::{COOKIE, SET_COOKIE};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use cookie::{Cookie, CookieJar, Key, SameSite};

use super::PREFIX;
use crate::domain::interaction::Resolved;
use crate::domain::interaction::code::{self, Checked, MAX_SENDS, Sent, Standing};
use crate::domain::keys::SiteKeys;
use crate::domain::workflow::Step;
use crate::http::AppState;
use crate::http::context::{PageContext, html};
use crate::http::error::AppError;
use crate::i18n::{Lang, Message};

/// The hidden field of the code page's two forms: `send` (email a code) or `check`.
pub const ACTION: &str = "_code";
/// The field the code is typed in.
pub const FIELD: &str = "code";
/// How long a right code opens the link's steps in the browser that typed it.
pub const VERIFIED_FOR: i64 = 8 * 3600;
const COOKIE_PREFIX: &str = "orchestra_code_";

/// Whether `step`, answered through `resolved`, waits for a code this browser has not typed.
pub fn asks(
    step: &Step,
    resolved: &Resolved,
    headers: &HeaderMap,
    keys: &SiteKeys,
    now: i64,
) -> bool {
    step.verify_email && !verified(headers, keys, resolved, now)
}

fn key(keys: &SiteKeys) -> Key {
    use hmac::Mac;
    Key::derive_from(
        &keys
            .keyed_hasher("email-code-cookie")
            .finalize()
            .into_bytes(),
    )
}

fn name(link_id: i64) -> String {
    format!("{COOKIE_PREFIX}{link_id}")
}

/// Whether the browser holds a live mark for the link's record.
fn verified(headers: &HeaderMap, keys: &SiteKeys, resolved: &Resolved, now: i64) -> bool {
    let Some(link_id) = resolved.link_id else {
        return false;
    };
    let wanted = name(link_id);
    let mut jar = CookieJar::new();
    for value in headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
    {
        for sent in Cookie::split_parse(value).flatten() {
            if sent.name() == wanted {
                jar.add_original(sent.into_owned());
            }
        }
    }
    jar.private(&key(keys))
        .get(&wanted)
        .and_then(|c| c.value().parse::<i64>().ok())
        .is_some_and(|until| until > now)
}

/// Seals the mark into `response`.
fn mark(
    response: &mut Response,
    keys: &SiteKeys,
    secure: bool,
    link_id: i64,
    now: i64,
) -> Result<(), AppError> {
    let mut jar = CookieJar::new();
    // Lax, not Strict: the link is opened from a mail client, a navigation from elsewhere,
    // and the mark must come with it.
    let cookie = Cookie::build((name(link_id), (now + VERIFIED_FOR).to_string()))
        .path(PREFIX)
        .http_only(true)
        .same_site(SameSite::Lax)
        .secure(secure)
        .max_age(cookie::time::Duration::seconds(VERIFIED_FOR))
        .build();
    jar.private_mut(&key(keys)).add(cookie);
    let sealed = jar
        .get(&name(link_id))
        .ok_or_else(|| AppError::internal("code mark not sealed", link_id))?;
    let value = HeaderValue::from_str(&sealed.to_string())
        .map_err(|e| AppError::internal("code mark not a header", e))?;
    response.headers_mut().append(SET_COOKIE, value);
    Ok(())
}

#[derive(askama::Template)]
#[template(path = "doorway/code.html")]
struct CodePage {
    ctx: PageContext,
    /// A note above the forms, and whether it is a warning.
    notice: Option<(String, bool)>,
    /// No code can be sent: the page says why and offers nothing.
    unverifiable: bool,
    /// Where the code went (masked), while one waits and is not locked.
    sent_to: Option<String>,
    /// A code waits and may be typed.
    typing: bool,
    /// The send button's words, when one more code may be sent.
    send: Option<String>,
    /// How many more codes may be sent, or when the next may be asked.
    sends: Option<String>,
}

/// The code page for where the link stands, with `notice` over it.
pub async fn page(
    state: &AppState,
    keys: &SiteKeys,
    ctx: PageContext,
    resolved: &Resolved,
    notice: Option<(Message, bool)>,
    status: StatusCode,
    now: i64,
) -> Result<Response, AppError> {
    let standing = code::standing(&state.db, keys, &state.guard, resolved, now).await?;
    let minutes = |at: i64| ((at - now).max(0) + 59) / 60;
    let mut view = CodePage {
        notice: notice.map(|(m, warning)| (ctx.msg(&m), warning)),
        unverifiable: false,
        sent_to: None,
        typing: false,
        send: None,
        sends: None,
        ctx,
    };
    let (sends_left, again_at) = match standing {
        Standing::Unverifiable => {
            view.unverifiable = true;
            (0, now)
        }
        Standing::NoCode {
            sends_left,
            again_at,
        } => (sends_left, again_at),
        Standing::Waiting {
            to,
            sends_left,
            again_at,
            locked,
            ..
        } => {
            if locked {
                if view.notice.is_none() {
                    view.notice = Some((view.ctx.t("doorway-code-locked"), true));
                }
            } else {
                view.typing = true;
                let lifetime = (code::LIFETIME / 60).to_string();
                view.sent_to = Some(
                    view.ctx.msg(
                        &Message::new("doorway-code-sent")
                            .arg("address", to)
                            .arg("minutes", lifetime),
                    ),
                );
            }
            (sends_left, again_at)
        }
    };
    if !view.unverifiable {
        if sends_left > 0 {
            let words = if sends_left < MAX_SENDS || view.typing {
                "doorway-code-send-again"
            } else {
                "doorway-code-send"
            };
            view.send = Some(view.ctx.t(words));
            if sends_left < MAX_SENDS {
                view.sends = Some(view.ctx.msg(
                    &Message::new("doorway-code-sends-left").arg("count", sends_left.to_string()),
                ));
            }
        } else {
            view.sends = Some(
                view.ctx.msg(
                    &Message::new("doorway-code-too-many")
                        .arg("max", MAX_SENDS.to_string())
                        .arg("minutes", minutes(again_at).to_string()),
                ),
            );
        }
    }
    let mut response = html(&view);
    *response.status_mut() = status;
    Ok(response)
}

/// A POST to a step that waits for its code: a code asked or typed, or anything else, which
/// records nothing and shows the code page again. `chosen`: a language picked in the URL, kept
/// in the redirect.
pub async fn answer(
    state: &AppState,
    keys: &SiteKeys,
    ctx: PageContext,
    resolved: &Resolved,
    submitted: &[(String, String)],
    chosen: Option<Lang>,
    now: i64,
) -> Result<Response, AppError> {
    let field = |name: &str| {
        submitted
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    let back = match chosen {
        Some(lang) => format!("{PREFIX}{}?lang={}", resolved.link, lang.code()),
        None => format!("{PREFIX}{}", resolved.link),
    };
    let again = |m: &'static str| Some((Message::new(m), true));
    let lifetime = (code::LIFETIME / 60).to_string();
    let (notice, status) = match field(ACTION) {
        Some("send") => match code::send(&state.db, keys, resolved, now).await? {
            // Post/redirect/get: the page says where the code went.
            Sent::Queued => return Ok(Redirect::to(&back).into_response()),
            Sent::Unverifiable => (None, StatusCode::UNPROCESSABLE_ENTITY),
            Sent::TooMany(_) => (None, StatusCode::TOO_MANY_REQUESTS),
        },
        Some("check") => {
            let typed = field(FIELD).unwrap_or("");
            match code::check(&state.db, keys, &state.guard, resolved, typed, now).await? {
                Checked::Right => {
                    let mut response = Redirect::to(&back).into_response();
                    if let Some(link_id) = resolved.link_id {
                        mark(&mut response, keys, state.secure_cookies, link_id, now)?;
                    }
                    return Ok(response);
                }
                Checked::Wrong(left) => (
                    Some((
                        Message::new("doorway-code-wrong").arg("left", left.to_string()),
                        true,
                    )),
                    StatusCode::UNPROCESSABLE_ENTITY,
                ),
                Checked::Locked => (again("doorway-code-locked"), StatusCode::TOO_MANY_REQUESTS),
                Checked::NoCode => (
                    Some((
                        Message::new("doorway-code-none").arg("minutes", lifetime),
                        true,
                    )),
                    StatusCode::UNPROCESSABLE_ENTITY,
                ),
            }
        }
        // An answer before the code: nothing of it is read or kept.
        _ => (None, StatusCode::FORBIDDEN),
    };
    page(state, keys, ctx, resolved, notice, status, now).await
}
