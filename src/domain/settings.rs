//! Site settings: a typed struct whose `Default` is what ships, one validator per key shared
//! by the admin forms and `orchestra config`, and a short-lived cache for the doorway.

use std::time::Duration;

use crate::error::Refusable;
use crate::i18n::Message;
use crate::limits::guard::{Address, FloodGuard, Limits, Mode, OnFault, Policy};
use crate::store::{self, Db};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    pub site_name: String,
    pub base_url: String,
    /// Seconds a newly issued link lives unless the administrator picks otherwise.
    pub default_link_ttl: u64,
    pub request_limits_enabled: bool,
    /// Seconds.
    pub request_limits_period: u64,
    /// What every guarded address does while the flood store fails.
    pub on_store_fault: OnFault,
    pub per_link: u64,
    pub total: u64,
    /// The doorway counts and reports what it would refuse, but answers everyone.
    pub interaction_report_only: bool,
    /// The built-in test payment provider: on as shipped, so the examples can be paid.
    pub test_provider: bool,
    /// The largest file any form field takes, in MB (a field's own cap is at most this).
    pub max_file_mb: u64,
    /// Provider notices one payment may send per period; 0 turns this tier off.
    pub notice_per_payment: u64,
    /// Provider notices per period, all together; 0 turns this tier off.
    pub notice_total: u64,
    /// The API's default bucket: requests refilled per minute, and the burst.
    pub api_rate_per_minute: u64,
    pub api_burst: u64,
    /// How many times a bigger bucket a request signed by a trusted integrator gets.
    pub api_signed_multiplier: u64,
    /// Hard caps that hold whatever the limiter says.
    pub api_max_running_instances: u64,
    pub api_max_links_per_instance_per_day: u64,
    /// Webhook endpoints one API token may hold.
    pub api_max_endpoints_per_token: u64,
    /// Link emails asked for through the API in an hour: to one address, and by one token.
    pub api_max_emails_per_address_per_hour: u64,
    pub api_max_emails_per_token_per_hour: u64,
    pub notice_report_only: bool,
    /// Sign-in attempts one client address may make per `login_address_period`; 0 is off.
    pub login_per_address: u64,
    pub login_address_period: u64,
    /// Failed sign-ins one account may take from one client address per
    /// `login_account_period` (Drupal's `user_limit`, counted per account and address); 0 is off.
    pub login_per_account: u64,
    /// Failed sign-ins one account may take from all addresses together per
    /// `login_account_period`; 0 is off.
    pub login_account_total: u64,
    pub login_account_period: u64,
    pub login_report_only: bool,
    /// Days an ended instance keeps its answers, files and contacts before cron erases them;
    /// 0 keeps them forever. A workflow's `keep:` line overrides it.
    pub retention_days: u64,
    /// Whether every administrator must sign in in two steps (a TOTP code after the password):
    /// one without it is sent to set it up before anything else.
    pub two_step_required: bool,
    /// Days the audit log keeps an event before cron deletes it; 0 keeps them forever.
    pub audit_retention_days: u64,
    /// Not a setting: where `serve` last said it listens (`record_listening`), to build links
    /// on before a base URL is saved, and to say when a saved one points elsewhere.
    pub listening_url: Option<String>,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            site_name: "Orchestra".into(),
            base_url: "http://127.0.0.1:8080".into(),
            default_link_ttl: 7 * 24 * 3600,
            // Shipped off: the operator sizes the limits for the site before turning them on.
            request_limits_enabled: false,
            request_limits_period: 3600,
            on_store_fault: OnFault::Count,
            per_link: 0,
            total: 0,
            interaction_report_only: false,
            test_provider: true,
            max_file_mb: DEFAULT_MAX_FILE_MB,
            notice_per_payment: 0,
            notice_total: 0,
            api_rate_per_minute: 60,
            api_burst: 20,
            api_signed_multiplier: 4,
            api_max_running_instances: 1000,
            api_max_links_per_instance_per_day: 100,
            api_max_endpoints_per_token: 10,
            // A participant is sent a handful of links in an hour by an honest integration;
            // twenty is past that and far below what floods an inbox.
            api_max_emails_per_address_per_hour: 20,
            api_max_emails_per_token_per_hour: 500,
            notice_report_only: false,
            // On as shipped, unlike the doorway's: a login form is always public, and these
            // numbers fit any site (Drupal ships the same three: 50 an hour per address, 5 in
            // six hours per account and address).
            login_per_address: 50,
            login_address_period: 3600,
            login_per_account: 5,
            // Across addresses: 20 addresses' worth of the pair's 5. It caps a guesser spread
            // over many addresses at 400 guesses a day, nothing against a 10-character
            // password, and to lock the owner out takes 20 addresses, not one.
            login_account_total: 100,
            login_account_period: 6 * 3600,
            login_report_only: false,
            // Shipped off: what a site must keep, and for how long, is its own decision.
            retention_days: 0,
            // Shipped off: an administrator needs an authenticator app first.
            two_step_required: false,
            audit_retention_days: 365,
            listening_url: None,
        }
    }
}

/// One setting: its key, and what it holds (its type, bounds and field of [`Settings`]).
/// [`REGISTRY`] lists them all; `get`, `set`, `load`, the forms, `orchestra config` and the
/// README's table (a test compares them) read it, so a key is written once.
pub struct Setting {
    pub key: &'static str,
    /// Its field's name on the settings pages, "" when no page sets it.
    pub form: &'static str,
    pub kind: Kind,
}

/// What a setting holds, and how its text is read and checked.
pub enum Kind {
    /// A whole number within `min..=max`.
    Number {
        min: u64,
        max: u64,
        get: fn(&Settings) -> u64,
        put: fn(&mut Settings, u64),
    },
    /// Seconds within `min..=max`, written as the link forms take them (`3600`, `30m`, `12h`,
    /// `7d`); kept and shown as seconds.
    Duration {
        min: u64,
        max: u64,
        get: fn(&Settings) -> u64,
        put: fn(&mut Settings, u64),
    },
    /// On or off (`true`/`false`, `on`/`off`, `yes`/`no`, `1`/`0`).
    Switch {
        get: fn(&Settings) -> bool,
        put: fn(&mut Settings, bool),
    },
    /// Text, made canonical by `check` or refused with the message `refused`.
    Text {
        check: fn(&str) -> Option<String>,
        refused: &'static str,
        get: fn(&Settings) -> &str,
        put: fn(&mut Settings, String),
    },
    /// What the guarded addresses do while the flood store fails (`guard::OnFault`).
    StoreFault,
}

impl Setting {
    /// Its value in `settings`, as text.
    pub fn get(&self, settings: &Settings) -> String {
        match &self.kind {
            Kind::Number { get, .. } | Kind::Duration { get, .. } => get(settings).to_string(),
            Kind::Switch { get, .. } => get(settings).to_string(),
            Kind::Text { get, .. } => get(settings).to_owned(),
            Kind::StoreFault => settings.on_store_fault.name().to_owned(),
        }
    }

    /// Whether it is on or off, so a form shows it as a checkbox (left out means off).
    pub fn is_switch(&self) -> bool {
        matches!(self.kind, Kind::Switch { .. })
    }

    /// The value as shipped.
    pub fn shipped(&self) -> String {
        self.get(&Settings::default())
    }

    /// Reads and checks `raw` (trimmed) and, when good, sets it; nothing changes on an error.
    fn set(&self, settings: &mut Settings, raw: &str) -> Result<(), Message> {
        match &self.kind {
            Kind::Number { min, max, put, .. } => put(settings, number(raw, *min, *max)?),
            Kind::Duration { min, max, put, .. } => put(settings, duration(raw, *min, *max)?),
            Kind::Switch { put, .. } => put(settings, boolean(raw)?),
            Kind::Text {
                check,
                refused,
                put,
                ..
            } => put(settings, check(raw).ok_or_else(|| Message::new(refused))?),
            Kind::StoreFault => {
                settings.on_store_fault = OnFault::parse(&raw.to_ascii_lowercase())
                    .ok_or_else(|| Message::new("setting-on-store-fault"))?;
            }
        }
        Ok(())
    }
}

/// A setting whose value is a whole number in `min..=max`, kept in the field `$field`.
macro_rules! number {
    ($key:literal, $form:literal, $field:ident, $min:expr, $max:expr) => {
        Setting {
            key: $key,
            form: $form,
            kind: Kind::Number {
                min: $min,
                max: $max,
                get: |s| s.$field,
                put: |s, v| s.$field = v,
            },
        }
    };
}

/// A setting that is text, made canonical by `$check` or refused with the message `$refused`.
macro_rules! text {
    ($key:literal, $form:literal, $field:ident, $check:expr, $refused:literal) => {
        Setting {
            key: $key,
            form: $form,
            kind: Kind::Text {
                check: $check,
                refused: $refused,
                get: |s| &s.$field,
                put: |s, v| s.$field = v,
            },
        }
    };
}

/// A setting that is on or off, kept in the field `$field`.
macro_rules! switch {
    ($key:literal, $form:literal, $field:ident) => {
        Setting {
            key: $key,
            form: $form,
            kind: Kind::Switch {
                get: |s| s.$field,
                put: |s, v| s.$field = v,
            },
        }
    };
}

/// Where the server last said it listens (`Settings::record_listening`).
const LISTENING_URL: &str = "serve.listening_url";

/// Every setting `orchestra config` and the forms know, in display order, each with the name
/// of its field on the settings pages ("" for one no page shows).
#[rustfmt::skip]
pub const REGISTRY: &[Setting] = &[
    text!("orchestra.site_name", "site_name", site_name, valid_site_name, "setting-site-name"),
    text!("orchestra.base_url", "base_url", base_url, valid_base_url, "setting-base-url"),
    Setting {
        key: "orchestra.default_link_ttl",
        form: "default_link_ttl",
        kind: Kind::Duration {
            min: MIN_TTL,
            max: MAX_TTL,
            get: |s| s.default_link_ttl,
            put: |s, v| s.default_link_ttl = v,
        },
    },
    switch!("orchestra.request_limits.enabled", "enabled", request_limits_enabled),
    number!("orchestra.request_limits.period", "period", request_limits_period, 1, MAX_PERIOD),
    Setting {
        key: "orchestra.request_limits.on_store_fault",
        form: "on_store_fault",
        kind: Kind::StoreFault,
    },
    number!("interaction.limits.per_link", "per_link", per_link, 0, MAX_PER_LINK),
    number!("interaction.limits.total", "total", total, 0, MAX_TOTAL),
    switch!("interaction.limits.report_only", "report_only", interaction_report_only),
    switch!("orchestra.test_provider", "test_provider", test_provider),
    number!("interaction.files.max_mb", "max_file_mb", max_file_mb, 1, crate::domain::workflow::MAX_FILE_BYTES >> 20),
    number!("notice.limits.per_payment", "notice_per_payment", notice_per_payment, 0, MAX_PER_LINK),
    number!("notice.limits.total", "notice_total", notice_total, 0, MAX_TOTAL),
    number!("api.limits.rate_per_minute", "api_rate", api_rate_per_minute, 1, 1_000_000),
    number!("api.limits.burst", "api_burst", api_burst, 1, 1_000_000),
    number!("api.limits.signed_multiplier", "", api_signed_multiplier, 1, 100),
    number!("api.caps.running_instances_per_token", "", api_max_running_instances, 1, 10_000_000),
    number!("api.caps.links_per_instance_per_day", "", api_max_links_per_instance_per_day, 1, 1_000_000),
    number!("api.caps.endpoints_per_token", "", api_max_endpoints_per_token, 1, 1000),
    number!("api.caps.emails_per_address_per_hour", "", api_max_emails_per_address_per_hour, 1, 10_000),
    number!("api.caps.emails_per_token_per_hour", "", api_max_emails_per_token_per_hour, 1, 1_000_000),
    switch!("notice.limits.report_only", "notice_report_only", notice_report_only),
    number!("login.limits.per_address", "login_per_address", login_per_address, 0, MAX_LOGIN_ATTEMPTS),
    number!("login.limits.address_period", "login_address_period", login_address_period, MIN_LOGIN_PERIOD, MAX_PERIOD),
    number!("login.limits.per_account", "login_per_account", login_per_account, 0, MAX_LOGIN_ATTEMPTS),
    number!("login.limits.account_total", "login_account_total", login_account_total, 0, MAX_LOGIN_ATTEMPTS),
    number!("login.limits.account_period", "login_account_period", login_account_period, MIN_LOGIN_PERIOD, MAX_PERIOD),
    switch!("login.limits.report_only", "login_report_only", login_report_only),
    number!("records.retention_days", "retention_days", retention_days, 0, MAX_RETENTION_DAYS),
    switch!("login.two_step_required", "two_step_required", two_step_required),
    number!("audit.retention_days", "", audit_retention_days, 0, MAX_RETENTION_DAYS),
];

/// The setting named `key`, if there is one.
pub fn setting(key: &str) -> Option<&'static Setting> {
    REGISTRY.iter().find(|s| s.key == key)
}

/// Every key, in display order.
pub fn keys() -> impl Iterator<Item = &'static str> {
    REGISTRY.iter().map(|s| s.key)
}

pub const MAX_PERIOD: u64 = 7 * 24 * 3600;
/// Above a field's default cap (10 MB), so a field may ask for more without a setting changed.
pub const DEFAULT_MAX_FILE_MB: u64 = 25;
pub const MAX_PER_LINK: u64 = 1_000_000;
pub const MAX_TOTAL: u64 = 1_000_000_000;
pub const MAX_LOGIN_ATTEMPTS: u64 = 100_000;
pub const MIN_LOGIN_PERIOD: u64 = 60;
pub const MIN_TTL: u64 = 60;
pub const MAX_TTL: u64 = 365 * 24 * 3600;
/// A hundred years: longer is forever, which 0 says.
pub const MAX_RETENTION_DAYS: u64 = 36_500;

/// A refused value: which key, and why, in words for the person who typed it.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldError {
    pub key: &'static str,
    pub message: Message,
}

impl Settings {
    /// The largest file any form field takes, in bytes.
    pub fn max_file_bytes(&self) -> u64 {
        self.max_file_mb << 20
    }

    /// The value of a key as text, as `config get` prints it and the forms show it.
    pub fn get(&self, key: &str) -> Option<String> {
        setting(key).map(|s| s.get(self))
    }

    /// Checks a typed value and, when good, sets it. Nothing changes on an error.
    pub fn set(&mut self, key: &str, raw: &str) -> Result<(), FieldError> {
        let setting = setting(key).ok_or_else(|| FieldError {
            key: "",
            message: Message::new("config-unknown-key").arg("key", key.to_owned()),
        })?;
        setting.set(self, raw.trim()).map_err(|message| FieldError {
            key: setting.key,
            message,
        })
    }

    /// Applies a whole form: every field is checked, and all errors come back together.
    pub fn set_all(&mut self, values: &[(&'static str, &str)]) -> Result<(), Vec<FieldError>> {
        let mut next = self.clone();
        let errors: Vec<FieldError> = values
            .iter()
            .filter_map(|(k, v)| next.set(k, v).err())
            .collect();
        if errors.is_empty() {
            *self = next;
            Ok(())
        } else {
            Err(errors)
        }
    }

    /// The doorway's limits as the guard takes them.
    pub fn interaction_limits(&self) -> Limits {
        Limits {
            enabled: self.request_limits_enabled,
            per_caller: self.per_link,
            total: self.total,
            period: Duration::from_secs(self.request_limits_period),
        }
    }

    /// Whether the doorway refuses or only reports (`guard::Mode`).
    pub fn interaction_mode(&self) -> Mode {
        mode(self.interaction_report_only)
    }

    /// How the doorway applies its limits: its mode and the store-fault choice.
    pub fn interaction_policy(&self) -> Policy {
        self.policy(self.interaction_mode())
    }

    pub fn notice_policy(&self) -> Policy {
        self.policy(self.notice_mode())
    }

    pub fn login_policy(&self) -> Policy {
        self.policy(self.login_mode())
    }

    fn policy(&self, mode: Mode) -> Policy {
        Policy {
            mode,
            on_fault: self.on_store_fault,
        }
    }

    pub fn notice_mode(&self) -> Mode {
        mode(self.notice_report_only)
    }

    /// One mode for both sign-in tiers.
    pub fn login_mode(&self) -> Mode {
        mode(self.login_report_only)
    }

    /// The provider notices' limits as the guard takes them: their own numbers, under the
    /// site-wide switch and period.
    pub fn notice_limits(&self) -> Limits {
        Limits {
            enabled: self.request_limits_enabled,
            per_caller: self.notice_per_payment,
            total: self.notice_total,
            period: Duration::from_secs(self.request_limits_period),
        }
    }

    /// The sign-in limits as the guard takes them: per client address (attempts, no total),
    /// and per account (failures: per account and address, and in total across addresses).
    /// They do not follow the doorway's switch; a limit of 0 turns its tier off.
    pub fn login_limits(&self) -> (Limits, Limits) {
        let tier = |per_caller, total, period| Limits {
            enabled: true,
            per_caller,
            total,
            period: Duration::from_secs(period),
        };
        (
            tier(self.login_per_address, 0, self.login_address_period),
            tier(
                self.login_per_account,
                self.login_account_total,
                self.login_account_period,
            ),
        )
    }

    /// `address`'s limits as the guard takes them: the one place an address finds its
    /// settings. API authentication failures count under the sign-in's per-address limit.
    pub fn limits_of(&self, address: Address) -> Limits {
        match address {
            Address::Doorway => self.interaction_limits(),
            Address::Notice => self.notice_limits(),
            Address::SignInAddress | Address::ApiAuthFailure => self.login_limits().0,
            Address::SignInAccount => self.login_limits().1,
            Address::EmailCode => crate::domain::interaction::code::LIMITS,
        }
    }

    /// Whether `address` refuses or only reports.
    pub fn mode_of(&self, address: Address) -> Mode {
        match address {
            Address::Doorway => self.interaction_mode(),
            Address::Notice => self.notice_mode(),
            Address::SignInAddress | Address::SignInAccount | Address::ApiAuthFailure => {
                self.login_mode()
            }
            // A lock on guessing a code is never only reported.
            Address::EmailCode => Mode::Enforce,
        }
    }

    /// How `address` applies its limits: its mode and the store-fault choice.
    pub fn policy_of(&self, address: Address) -> Policy {
        self.policy(self.mode_of(address))
    }

    /// Whether any address behind the guard counts anything (the doorway, the notices, the
    /// sign-in and the API's failed tokens, which count under the sign-in's per-address limit).
    /// While none does, the flood store is not touched: not read at start, not synced, not
    /// pinged (`FloodGuard::upkeep`). The emailed codes' wrong tries always count, and are not
    /// asked here: while nothing else counts, they count in this process alone.
    pub fn anything_counts(&self) -> bool {
        Address::ALL
            .iter()
            .filter(|&&address| address != Address::EmailCode)
            .any(|&address| FloodGuard::is_counting(&self.limits_of(address)))
    }

    /// Reads the stored settings over the defaults. A stored value that no longer validates
    /// (written by hand, say) is ignored with a warning rather than taking the site down.
    pub async fn load(db: &Db) -> Result<Self, sqlx::Error> {
        let mut settings = Settings::default();
        let (mut base_saved, mut listening) = (false, None);
        for (name, value) in store::settings::all(db).await? {
            if name == LISTENING_URL {
                listening = valid_base_url(&value);
                continue;
            }
            base_saved |= name == "orchestra.base_url";
            if setting(&name).is_some() && settings.set(&name, &value).is_err() {
                tracing::warn!(setting = %name, "ignoring a stored setting that does not validate");
            }
        }
        // Until an administrator saves a base URL, links are built on the address the server
        // last said it listens on (`serve` records it), not on the shipped default, which is
        // nowhere when the server was bound elsewhere.
        if let (false, Some(url)) = (base_saved, &listening) {
            settings.base_url = url.clone();
        }
        settings.listening_url = listening;
        Ok(settings)
    }

    /// The saved base URL and where the server listens, when the base URL evidently points at
    /// this machine but not at the server: its host is a loopback name or address, or the
    /// address the server is bound to (any IP address when it is bound to all), on another
    /// port. A base URL naming another host is taken for a proxy in front, and never flagged.
    pub fn base_url_elsewhere(&self) -> Option<(&str, &str)> {
        let listening = self.listening_url.as_deref()?;
        let (base_host, base_port) = host_and_port(&self.base_url)?;
        let (bound_host, bound_port) = host_and_port(listening)?;
        let bound_ip = bound_host
            .trim_matches(['[', ']'])
            .parse::<std::net::IpAddr>()
            .ok();
        let base_ip = base_host
            .trim_matches(['[', ']'])
            .parse::<std::net::IpAddr>()
            .ok();
        let this_machine = base_host.eq_ignore_ascii_case("localhost")
            || base_ip.is_some_and(|ip| ip.is_loopback())
            || base_host.eq_ignore_ascii_case(bound_host)
            || (bound_ip.is_some_and(|ip| ip.is_unspecified()) && base_ip.is_some());
        let loopback_to_loopback = base_ip.is_some_and(|ip| ip.is_loopback())
            || base_host.eq_ignore_ascii_case("localhost");
        let elsewhere = if this_machine && base_port != bound_port {
            true
        } else {
            // A loopback base URL reaches a server bound to another specific address only if
            // that address is loopback too.
            this_machine
                && loopback_to_loopback
                && bound_ip.is_some_and(|ip| !ip.is_loopback() && !ip.is_unspecified())
        };
        elsewhere.then_some((self.base_url.as_str(), listening))
    }

    /// Records where `serve` listens (`http://host:port`), for the links built before a base URL
    /// is saved (`load`). Not a setting: `orchestra config` neither lists nor takes it.
    pub async fn record_listening(db: &Db, url: &str) -> Result<(), sqlx::Error> {
        store::settings::put_all(db, &[(LISTENING_URL, url.to_owned())]).await
    }

    /// Validates and stores some keys in one transaction; nothing is written on an error.
    pub async fn save(
        db: &Db,
        values: &[(&'static str, &str)],
    ) -> Result<Settings, Refusable<Vec<FieldError>>> {
        let mut settings = Self::load(db).await?;
        settings.set_all(values).map_err(Refusable::Refused)?;
        let stored: Vec<(&str, String)> = values
            .iter()
            .map(|(k, _)| (*k, settings.get(k).unwrap_or_default()))
            .collect();
        store::settings::put_all(db, &stored).await?;
        Ok(settings)
    }
}

fn mode(report_only: bool) -> Mode {
    if report_only {
        Mode::ReportOnly
    } else {
        Mode::Enforce
    }
}

fn boolean(raw: &str) -> Result<bool, Message> {
    match raw.to_ascii_lowercase().as_str() {
        "true" | "1" | "on" | "yes" => Ok(true),
        "false" | "0" | "off" | "no" => Ok(false),
        _ => Err(Message::new("setting-boolean")),
    }
}

/// A lifetime as the link forms take it (`crate::time::parse_duration`), within the bounds.
fn duration(raw: &str, min: u64, max: u64) -> Result<u64, Message> {
    match crate::time::parse_duration(raw) {
        Some(n) if (min..=max).contains(&n) => Ok(n),
        _ => Err(Message::new("setting-duration")
            .arg("min", min.to_string())
            .arg("max", max.to_string())),
    }
}

fn number(raw: &str, min: u64, max: u64) -> Result<u64, Message> {
    let range = |id| {
        Message::new(id)
            .arg("min", min.to_string())
            .arg("max", max.to_string())
    };
    if raw.is_empty() || !raw.bytes().all(|b| b.is_ascii_digit()) {
        return Err(range("setting-not-a-number"));
    }
    match raw.parse::<u64>() {
        Ok(n) if (min..=max).contains(&n) => Ok(n),
        _ => Err(range("setting-out-of-range")),
    }
}

fn valid_site_name(raw: &str) -> Option<String> {
    (!raw.is_empty() && raw.chars().count() <= 100).then(|| raw.to_owned())
}

/// The host and port of an `http(s)://host[:port]` URL, the port defaulting to the scheme's.
fn host_and_port(url: &str) -> Option<(&str, u16)> {
    let (default, rest) = match url.split_once("://")? {
        ("https", rest) => (443, rest),
        ("http", rest) => (80, rest),
        _ => return None,
    };
    let authority = rest.split('/').next()?;
    // `[::1]:8080`, `[::1]`, `host:8080`, `host`.
    let (host, port) = match authority.rsplit_once(':') {
        Some((host, port)) if !port.contains(']') => (host, port.parse().ok()?),
        _ => (authority, default),
    };
    Some((host, port))
}

fn valid_base_url(raw: &str) -> Option<String> {
    let url = raw.trim_end_matches('/');
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))?;
    let host = rest.split('/').next()?;
    let ok = !host.is_empty()
        && url.len() <= 200
        && !url.contains(['?', '#', ' ', '"', '<', '>', '\\'])
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-.:[]".contains(&b));
    ok.then(|| url.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_base_url_on_this_machine_but_not_where_the_server_listens_is_flagged() {
        let flagged = |base: &str, listening: &str| {
            let settings = Settings {
                base_url: base.into(),
                listening_url: Some(listening.into()),
                ..Settings::default()
            };
            settings.base_url_elsewhere().is_some()
        };
        assert!(flagged("http://127.0.0.1:8080", "http://127.0.0.1:31080"));
        assert!(flagged("http://localhost:8080", "http://0.0.0.0:31080"));
        assert!(flagged("http://[::1]:8080", "http://[::1]:9090"));
        assert!(flagged("http://192.0.2.7:8080", "http://0.0.0.0:9090"));
        assert!(flagged("http://127.0.0.1:8080", "http://192.0.2.7:8080"));
        assert!(!flagged("http://127.0.0.1:31080", "http://127.0.0.1:31080"));
        assert!(!flagged(
            "http://localhost:31080/",
            "http://127.0.0.1:31080"
        ));
        assert!(!flagged(
            "https://flows.example.org",
            "http://127.0.0.1:8080"
        ));
        assert!(!flagged("http://192.0.2.7:8080", "http://0.0.0.0:8080"));
        assert!(!flagged("http://localhost:8080", "http://0.0.0.0:8080"));
        let never_listened = Settings {
            base_url: "http://127.0.0.1:1".into(),
            ..Settings::default()
        };
        assert!(never_listened.base_url_elsewhere().is_none());
    }

    #[test]
    fn what_ships_counts_nothing() {
        let limits = Settings::default().interaction_limits();
        assert!(!crate::limits::guard::FloodGuard::is_counting(&limits));
        assert!(!crate::limits::guard::FloodGuard::is_counting(
            &Settings::default().notice_limits()
        ));
        assert_eq!(limits.period, Duration::from_secs(3600));
    }

    #[test]
    fn bad_values_are_refused_and_change_nothing() {
        let mut s = Settings::default();
        for (key, bad) in [
            ("interaction.limits.per_link", "ten"),
            ("interaction.limits.per_link", "-1"),
            ("interaction.limits.per_link", "1000001"),
            ("interaction.limits.total", "1.5"),
            ("orchestra.request_limits.period", "0"),
            ("orchestra.request_limits.period", "604801"),
            ("orchestra.request_limits.enabled", "maybe"),
            ("orchestra.base_url", "ftp://x"),
            ("orchestra.base_url", "http://"),
            ("orchestra.site_name", ""),
            ("orchestra.default_link_ttl", "59"),
            ("orchestra.test_provider", "sometimes"),
            ("interaction.limits.report_only", "perhaps"),
            ("notice.limits.report_only", "2"),
            ("login.limits.report_only", ""),
            ("orchestra.request_limits.on_store_fault", "panic"),
            ("notice.limits.per_payment", "-2"),
            ("notice.limits.total", "1000000001"),
            ("login.limits.per_address", "100001"),
            ("login.limits.per_account", "five"),
            ("login.limits.account_total", "100001"),
            ("login.limits.address_period", "59"),
            ("login.limits.account_period", "604801"),
        ] {
            assert!(s.set(key, bad).is_err(), "{key}={bad} accepted");
        }
        assert_eq!(s, Settings::default());
        assert!(s.set("no.such.key", "1").is_err());
    }

    #[test]
    fn report_only_is_off_as_shipped_and_set_per_address() {
        let mut s = Settings::default();
        assert_eq!(s.interaction_mode(), Mode::Enforce);
        assert_eq!(s.notice_mode(), Mode::Enforce);
        assert_eq!(s.login_mode(), Mode::Enforce);
        s.set("interaction.limits.report_only", "on").unwrap();
        assert_eq!(s.interaction_mode(), Mode::ReportOnly);
        assert_eq!(s.notice_mode(), Mode::Enforce);
        assert_eq!(s.get("interaction.limits.report_only").unwrap(), "true");
        for key in keys() {
            assert!(s.get(key).is_some(), "{key} cannot be read");
        }
    }

    #[test]
    fn a_form_with_one_bad_field_sets_none() {
        let mut s = Settings::default();
        let errors = s
            .set_all(&[
                ("interaction.limits.per_link", "20"),
                ("interaction.limits.total", "x"),
            ])
            .unwrap_err();
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].key, "interaction.limits.total");
        assert_eq!(s.per_link, 0);
    }

    #[test]
    fn base_urls_lose_their_trailing_slash() {
        let mut s = Settings::default();
        s.set("orchestra.base_url", "https://flows.example.org/")
            .unwrap();
        assert_eq!(s.base_url, "https://flows.example.org");
    }
}
