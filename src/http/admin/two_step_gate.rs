//! The gate of two-step sign-in that the sign-in check and the password step pass through
//! (`auth`): the pending sign-in a correct password leaves when a code must follow, and whether
//! the site's requirement sends a signed-in administrator to set it up. Apart from the pages
//! (`two_step`), which call `auth` to finish a sign-in, so no file imports itself in a circle.

use axum::response::{IntoResponse, Redirect, Response};
use serde::{Deserialize, Serialize};
use tower_sessions::Session;

use crate::domain::two_step;
use crate::http::AppState;
use crate::http::context::{ADMIN_KEY, EPOCH_KEY};
use crate::http::error::Result;
use crate::store;

/// One's own two-step sign-in page.
pub const PATH: &str = "/admin/account/two-step";
/// The sign-in's second step.
pub const CODE_PATH: &str = "/admin/login/code";
pub(super) const PENDING_KEY: &str = "two_step_pending";
/// How long a correct password waits for its code.
pub const PENDING_SECS: i64 = 300;

/// A sign-in whose password was right, waiting for its code.
#[derive(Serialize, Deserialize)]
pub(super) struct Pending {
    pub admin: i64,
    pub epoch: i64,
    pub until: i64,
    pub destination: String,
}

/// After a correct password, for an account with two-step sign-in on: the session holds a
/// pending sign-in (under a new id, signed in as nobody) and the browser goes to the code page.
pub async fn ask_code(
    session: &Session,
    admin: &store::admins::Admin,
    destination: &str,
    now: i64,
) -> Result<Response> {
    session.cycle_id().await?;
    session.remove::<i64>(ADMIN_KEY).await?;
    session.remove::<i64>(EPOCH_KEY).await?;
    let pending = Pending {
        admin: admin.id,
        epoch: admin.auth_epoch,
        until: now + PENDING_SECS,
        destination: destination.to_owned(),
    };
    session.insert(PENDING_KEY, pending).await?;
    Ok(Redirect::to(CODE_PATH).into_response())
}

/// Whether a signed-in administrator must set two-step sign-in up before going to `path`: the
/// site requires it and they have not. A database fault counts as "must" (the setup page then
/// shows the fault), never as a way around the requirement.
pub async fn must_set_up(state: &AppState, admin: i64, path: &str) -> bool {
    if path == PATH || path == "/admin/logout" {
        return false;
    }
    if !state.site.get().await.settings.two_step_required {
        return false;
    }
    !two_step::is_on(&state.db, admin).await.unwrap_or(false)
}

/// The pending sign-in, while it lasts; an expired one is dropped.
pub(super) async fn pending_of(session: &Session, now: i64) -> Result<Option<Pending>> {
    let Some(pending) = session.get::<Pending>(PENDING_KEY).await? else {
        return Ok(None);
    };
    if pending.until < now {
        session.remove::<Pending>(PENDING_KEY).await?;
        return Ok(None);
    }
    Ok(Some(pending))
}
