//! Who is acting on this request, for the audit log (`domain::audit`): a handler takes an
//! `Audit` and records in one line, `audit.record(Event::KeysRotated).await`.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;

use super::AppState;
use super::api::extract::Caller;
use super::client::ClientAddr;
use super::context::SignedIn;
use crate::domain::audit::{self, Actor, Event};
use crate::store::Db;

/// The actor (an API token, else the signed-in administrator, else a visitor) and the client's
/// address as the log keeps it (a keyed hash).
pub struct Audit {
    db: Db,
    pub actor: Actor,
    pub address: Option<String>,
}

impl FromRequestParts<AppState> for Audit {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let actor = if let Some(caller) = parts.extensions.get::<Caller>() {
            Actor::Token {
                name: caller.0.name.clone(),
            }
        } else if let Some(me) = parts.extensions.get::<SignedIn>() {
            Actor::Admin {
                id: me.id,
                name: me.name.clone(),
            }
        } else {
            Actor::Visitor
        };
        let ClientAddr(client) = ClientAddr::from_request_parts(parts, state).await?;
        let keys = &state.site.get().await.keys;
        Ok(Audit {
            db: state.db.clone(),
            actor,
            address: Some(audit::address_hash(keys, client)),
        })
    }
}

impl Audit {
    /// Records `event` by this request's actor, from its address.
    pub async fn record(&self, event: Event) {
        audit::record(&self.db, &self.actor, self.address.as_deref(), event).await;
    }

    /// The same, as another actor (a sign-in, whose administrator is known only once checked).
    pub async fn record_as(&self, actor: &Actor, event: Event) {
        audit::record(&self.db, actor, self.address.as_deref(), event).await;
    }
}
