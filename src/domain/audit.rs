//! The audit log: what administrators and operators do outside an instance's own history
//! (sign-ins, settings, keys, tokens, webhook endpoints, administrators), who did it, when and
//! from which address (a keyed hash). Callers say it in one line:
//! `audit::record(db, &actor, address, Event::KeysRotated).await`. A record is one `INSERT`;
//! a failure to write it is logged and never undoes or refuses what was done.
//!
//! What is kept is chosen so the log can be shown and exported as it is: token names, never
//! their values; no password, link or secret; a setting a secret would be masked; a webhook
//! endpoint by its id and origin only (a path may carry a secret).

use serde_json::{Value, json};

use crate::domain::keys::SiteKeys;
use crate::domain::settings::{self, FieldError, Settings};
use crate::error::Refusable;
use crate::i18n::Message;
use crate::store::{self, Db};

/// The purpose a client's address is hashed under for the log (`SiteKeys::keyed_hash`).
pub const ADDRESS_PURPOSE: &str = "audit-address";

/// The site setting: days an event is kept before cron deletes it; 0 keeps them forever.
pub const RETENTION_KEY: &str = "audit.retention_days";

/// Who did it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Actor {
    /// An administrator, with their name at the time (they may be renamed or removed later).
    Admin { id: i64, name: String },
    /// The operator at the command line.
    Cli,
    /// An API token, by its name.
    Token { name: String },
    /// Someone not signed in: a failed sign-in under a name no account has keeps no name.
    Visitor,
}

impl Actor {
    /// The stored kind of actor.
    pub fn kind(&self) -> &'static str {
        match self {
            Actor::Admin { .. } => "admin",
            Actor::Cli => "cli",
            Actor::Token { .. } => "token",
            Actor::Visitor => "visitor",
        }
    }

    fn id(&self) -> Option<i64> {
        match self {
            Actor::Admin { id, .. } => Some(*id),
            _ => None,
        }
    }

    /// The name the page shows and the `who` filter matches: the CLI is "cli".
    pub fn name(&self) -> Option<&str> {
        match self {
            Actor::Admin { name, .. } | Actor::Token { name } => Some(name),
            Actor::Cli => Some("cli"),
            Actor::Visitor => None,
        }
    }
}

macro_rules! kinds {
    ($($variant:ident => $name:literal,)*) => {
        /// The kinds of event, by their stable names (stored, filtered on, exported).
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Kind { $($variant,)* }

        impl Kind {
            pub const ALL: &'static [Kind] = &[$(Kind::$variant,)*];

            pub fn as_str(self) -> &'static str {
                match self { $(Kind::$variant => $name,)* }
            }
        }
    };
}

kinds! {
    SignedIn => "signed_in",
    SignInFailed => "sign_in_failed",
    SignedInOidc => "signed_in_oidc",
    SettingChanged => "setting_changed",
    KeysRotated => "keys_rotated",
    TokenKeyRotated => "token_key_rotated",
    TokenCreated => "token_created",
    TokenRevoked => "token_revoked",
    WebhookCreated => "webhook_created",
    WebhookRemoved => "webhook_removed",
    WebhookEnabled => "webhook_enabled",
    WebhookDisabled => "webhook_disabled",
    AdminInvited => "admin_invited",
    AdminCreated => "admin_created",
    AdminPassword => "admin_password",
    AdminDisabled => "admin_disabled",
    AdminEnabled => "admin_enabled",
    AdminRemoved => "admin_removed",
    AdminReset => "admin_reset",
    AdminUnlocked => "admin_unlocked",
    TwoStepOn => "two_step_on",
    TwoStepOff => "two_step_off",
    RoleChanged => "role_changed",
}

impl Kind {
    pub fn parse(name: &str) -> Option<Kind> {
        Kind::ALL.iter().copied().find(|k| k.as_str() == name)
    }

    /// Its name on the page (Fluent: `audit-kind-…`).
    pub fn message_id(self) -> String {
        format!("audit-kind-{}", self.as_str().replace('_', "-"))
    }
}

/// What happened, with what the log keeps of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    SignedIn,
    SignInFailed,
    SignedInOidc,
    /// One setting; `old` and `new` as `config get` shows them (masked when secret).
    SettingChanged {
        key: String,
        old: String,
        new: String,
    },
    KeysRotated,
    TokenKeyRotated,
    TokenCreated(String),
    TokenRevoked(String),
    /// An endpoint, by its id and its URL (only the origin is kept).
    WebhookCreated(i64, String),
    WebhookRemoved(i64),
    WebhookEnabled(i64),
    WebhookDisabled(i64),
    /// An administrator, by name, and what was done to them.
    Admin(Kind, String),
    RoleChanged {
        name: String,
        old: String,
        new: String,
    },
}

impl Event {
    /// An administrator's role changing from the one they had to `role`.
    pub fn role_changed(
        admin: &crate::store::admins::Admin,
        role: crate::domain::roles::Role,
    ) -> Self {
        Self::RoleChanged {
            name: admin.name.clone(),
            old: admin.role.clone(),
            new: role.as_str().to_owned(),
        }
    }

    /// Its kind and its detail.
    pub fn parts(&self) -> (Kind, Value) {
        match self {
            Event::SignedIn => (Kind::SignedIn, json!({})),
            Event::SignInFailed => (Kind::SignInFailed, json!({})),
            Event::SignedInOidc => (Kind::SignedInOidc, json!({})),
            Event::SettingChanged { key, old, new } => {
                let (old, new) = if is_secret(key) {
                    (mask(old), mask(new))
                } else {
                    (old.clone(), new.clone())
                };
                (
                    Kind::SettingChanged,
                    json!({"key": key, "old": old, "new": new}),
                )
            }
            Event::KeysRotated => (Kind::KeysRotated, json!({})),
            Event::TokenKeyRotated => (Kind::TokenKeyRotated, json!({})),
            Event::TokenCreated(name) => (Kind::TokenCreated, json!({"token": name})),
            Event::TokenRevoked(name) => (Kind::TokenRevoked, json!({"token": name})),
            Event::WebhookCreated(id, url) => (
                Kind::WebhookCreated,
                json!({"endpoint": id, "origin": origin(url)}),
            ),
            Event::WebhookRemoved(id) => (Kind::WebhookRemoved, json!({"endpoint": id})),
            Event::WebhookEnabled(id) => (Kind::WebhookEnabled, json!({"endpoint": id})),
            Event::WebhookDisabled(id) => (Kind::WebhookDisabled, json!({"endpoint": id})),
            Event::Admin(kind, name) => (*kind, json!({"admin": name})),
            Event::RoleChanged { name, old, new } => (
                Kind::RoleChanged,
                json!({"admin": name, "old": old, "new": new}),
            ),
        }
    }
}

/// A setting whose value is a secret: its last dotted part names a secret, a password or a key.
pub fn is_secret(key: &str) -> bool {
    let last = key.rsplit('.').next().unwrap_or(key);
    ["secret", "password", "private"]
        .iter()
        .any(|word| last.contains(word))
        || last == "key"
        || last.ends_with("_key")
}

/// A secret's value as the log keeps it: whether there was one, never what it was.
fn mask(value: &str) -> String {
    if value.is_empty() {
        String::new()
    } else {
        "********".to_owned()
    }
}

/// `https://host:port` of a URL; nothing of its path or query, which may carry a secret.
fn origin(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(u) => u.origin().ascii_serialization(),
        Err(_) => String::new(),
    }
}

/// A client's address as the log keeps it: a 64-hex keyed hash, the same for the same address
/// under the same site keys, so one address's events can be found without its being kept.
pub fn address_hash(keys: &SiteKeys, address: std::net::IpAddr) -> String {
    keys.keyed_hash(ADDRESS_PURPOSE, &address.to_string())
}

/// Records `event` by `actor` now, from `address` (the keyed hash; `None` from the command
/// line). One `INSERT`; a failure is logged (without the detail) and not returned: the action
/// it records has happened.
pub async fn record(db: &Db, actor: &Actor, address: Option<&str>, event: Event) {
    let (kind, detail) = event.parts();
    let row = store::audit::New {
        at: store::now(),
        kind: kind.as_str(),
        actor: actor.kind(),
        actor_id: actor.id(),
        actor_name: actor.name(),
        address,
        detail: &detail.to_string(),
    };
    if let Err(e) = store::audit::insert(db, &row).await {
        tracing::error!(error = %e, kind = kind.as_str(), "could not write an audit event");
    }
}

/// Records `event` by the operator at the command line (no address).
pub async fn by_cli(db: &Db, event: Event) {
    record(db, &Actor::Cli, None, event).await;
}

/// Saves settings as `Settings::save` does, then records each value that changed.
pub async fn save_settings(
    db: &Db,
    actor: &Actor,
    address: Option<&str>,
    values: &[(&'static str, &str)],
) -> Result<Settings, Refusable<Vec<FieldError>>> {
    let before = Settings::load(db).await?;
    let saved = Settings::save(db, values).await?;
    for setting in settings::REGISTRY {
        let (old, new) = (setting.get(&before), setting.get(&saved));
        if old != new {
            let key = setting.key.to_owned();
            record(db, actor, address, Event::SettingChanged { key, old, new }).await;
        }
    }
    Ok(saved)
}

/// The filters a page or `orchestra audit list` was given, as typed: an unknown kind or a
/// date that is not `YYYY-MM-DD` is refused with a message saying which. `to` is a day
/// included whole.
pub fn filter(
    kind: Option<&str>,
    who: Option<&str>,
    from: Option<&str>,
    to: Option<&str>,
) -> Result<store::audit::Filter, Message> {
    let given = |v: Option<&str>| {
        v.map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_owned)
    };
    let kind = match given(kind) {
        Some(k) if Kind::parse(&k).is_none() => {
            return Err(Message::new("audit-bad-kind").arg("kind", k));
        }
        k => k,
    };
    let day = |v: Option<String>| match v {
        Some(d) => crate::time::parse_day(&d)
            .map(Some)
            .ok_or_else(|| Message::new("audit-bad-date").arg("date", d)),
        None => Ok(None),
    };
    Ok(store::audit::Filter {
        kind,
        who: given(who),
        from: day(given(from))?,
        to: day(given(to))?.map(|t| t + 86_400),
    })
}

/// An event's detail as one line for people: `key: value, …`, keys in alphabetical order.
pub fn describe(detail: &str) -> String {
    let Ok(Value::Object(map)) = serde_json::from_str::<Value>(detail) else {
        return String::new();
    };
    map.iter()
        .map(|(k, v)| match v {
            Value::String(s) => format!("{k}: {s}"),
            other => format!("{k}: {other}"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The CSV export's header: fixed words, whatever the language.
pub const CSV_HEADER: &str = "id,at,kind,actor,actor_name,address,detail\r\n";

/// One event as a CSV line (RFC 4180, formula cells neutralised as the instance export does).
pub fn csv_line(out: &mut String, row: &store::audit::Row) {
    let cells = [
        row.id.to_string(),
        crate::time::format_iso(row.at),
        row.kind.clone(),
        row.actor.clone(),
        row.actor_name.clone().unwrap_or_default(),
        row.address.clone().unwrap_or_default(),
        row.detail.clone(),
    ];
    for (n, cell) in cells.iter().enumerate() {
        if n > 0 {
            out.push(',');
        }
        crate::domain::lists::csv::push_cell(out, cell);
    }
    out.push_str("\r\n");
}

/// One event as JSON, its detail an object.
pub fn json_of(row: &store::audit::Row) -> Value {
    json!({
        "id": row.id,
        "at": crate::time::format_iso(row.at),
        "kind": row.kind,
        "actor": row.actor,
        "actor_name": row.actor_name,
        "address": row.address,
        "detail": serde_json::from_str::<Value>(&row.detail).unwrap_or(Value::Null),
    })
}

/// How many events cron deletes a statement.
pub const BATCH: i64 = store::expired::BATCH;

/// Deletes the events older than `days` days at `now`, a short batch at a time; 0 keeps them.
pub async fn expire(db: &Db, now: i64, days: u64) -> Result<u64, sqlx::Error> {
    if days == 0 {
        return Ok(0);
    }
    let cutoff = now.saturating_sub(i64::try_from(days).unwrap_or(i64::MAX / 86_400) * 86_400);
    store::expired::delete(db, store::expired::Expired::Audit, cutoff).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_masked_and_other_values_kept() {
        let (_, d) = Event::SettingChanged {
            key: "oidc.client_secret".into(),
            old: "".into(),
            new: "hunter2".into(),
        }
        .parts();
        assert_eq!(d["new"], "********");
        assert_eq!(d["old"], "");
        let (_, d) = Event::SettingChanged {
            key: "api.caps.endpoints_per_token".into(),
            old: "5".into(),
            new: "6".into(),
        }
        .parts();
        assert_eq!(
            (d["old"].as_str(), d["new"].as_str()),
            (Some("5"), Some("6"))
        );
    }

    #[test]
    fn a_webhook_keeps_only_its_origin() {
        let (_, d) = Event::WebhookCreated(3, "https://hooks.example/T0/secret?x=1".into()).parts();
        assert_eq!(d["origin"], "https://hooks.example");
    }

    #[test]
    fn filters_are_read_or_refused_with_a_reason() {
        let f = filter(
            Some("signed_in"),
            Some(" cli "),
            Some("2026-01-10"),
            Some("2026-01-10"),
        )
        .unwrap();
        assert_eq!(f.who.as_deref(), Some("cli"));
        assert_eq!(
            f.to.unwrap() - f.from.unwrap(),
            86_400,
            "the `to` day is included whole"
        );
        assert_eq!(
            filter(Some(""), None, None, None).unwrap(),
            store::audit::Filter::default()
        );
        assert_eq!(
            filter(Some("nothing"), None, None, None).unwrap_err().id,
            "audit-bad-kind"
        );
        assert_eq!(
            filter(None, None, Some("2026-02-30"), None).unwrap_err().id,
            "audit-bad-date"
        );
    }

    #[test]
    fn kinds_have_stable_distinct_names() {
        for k in Kind::ALL {
            assert_eq!(Kind::parse(k.as_str()), Some(*k));
        }
        assert_eq!(Kind::parse("nothing"), None);
    }
}
