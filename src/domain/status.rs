//! The status report as plain data, shared by `/admin/reports/status` and `orchestra status`.

use serde::Serialize;

use crate::domain::settings::Settings;
use crate::i18n::{Lang, Message};
use crate::limits::guard::{Address, FloodGuard, LimitsState, Mode, RECENT_PERIODS, Recent};
use crate::store::{self, Db};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Ok,
    /// Worth knowing, not worth a warning: the exit status stays 0.
    Note,
    Warning,
    Error,
}

impl Severity {
    pub fn name(self) -> &'static str {
        match self {
            Severity::Ok => "ok",
            Severity::Note => "note",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }

    pub fn label(self) -> Message {
        Message::new(match self {
            Severity::Ok => "severity-ok",
            Severity::Note => "severity-note",
            Severity::Warning => "severity-warning",
            Severity::Error => "severity-error",
        })
    }

    /// `orchestra status` exits with this.
    pub fn exit_code(self) -> i32 {
        match self {
            Severity::Ok | Severity::Note => 0,
            Severity::Warning => 1,
            Severity::Error => 2,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Check {
    pub id: &'static str,
    pub title: Message,
    pub value: Message,
    pub severity: Severity,
    pub description: Option<Message>,
}

#[derive(Clone, Debug)]
pub struct Report {
    pub checks: Vec<Check>,
}

/// A check rendered in one language, for the page, the terminal and JSON.
#[derive(Serialize)]
pub struct RenderedCheck {
    pub id: &'static str,
    pub title: String,
    pub value: String,
    pub severity: Severity,
    pub severity_label: String,
    pub description: String,
}

/// The name of the key where `orchestra cron` records its last run.
pub const CRON_LAST_RUN: &str = "state.cron_last_run";
/// A cron older than this is a warning: the server's timer runs it every ten minutes.
pub const CRON_STALE_AFTER: i64 = 24 * 3600;

impl Report {
    pub fn worst(&self) -> Severity {
        self.checks
            .iter()
            .map(|c| c.severity)
            .max()
            .unwrap_or(Severity::Ok)
    }

    pub fn render(&self, lang: Lang) -> Vec<RenderedCheck> {
        self.checks
            .iter()
            .map(|c| RenderedCheck {
                id: c.id,
                title: c.title.render(lang),
                value: c.value.render(lang),
                severity: c.severity,
                severity_label: c.severity.label().render(lang),
                description: c
                    .description
                    .as_ref()
                    .map(|d| d.render(lang))
                    .unwrap_or_default(),
            })
            .collect()
    }

    pub fn to_text(&self, lang: Lang) -> String {
        let mut out = String::new();
        for c in self.render(lang) {
            let line = crate::i18n::tr(
                lang,
                "status-line",
                &[
                    ("severity", &c.severity_label),
                    ("title", &c.title),
                    ("value", &c.value),
                ],
            );
            out.push_str(&line);
            out.push('\n');
            if !c.description.is_empty() {
                for line in c.description.lines() {
                    out.push_str(&format!("    {line}\n"));
                }
            }
        }
        out
    }

    pub fn to_json(&self, lang: Lang) -> String {
        #[derive(Serialize)]
        struct Out {
            severity: Severity,
            checks: Vec<RenderedCheck>,
        }
        serde_json::to_string_pretty(&Out {
            severity: self.worst(),
            checks: self.render(lang),
        })
        .unwrap_or_default()
    }
}

/// What the report cannot read from the database: the process's own view.
#[derive(Clone, Debug, Default)]
pub struct Environment {
    /// How many trusted proxies `ORCHESTRA_TRUSTED_PROXIES` names.
    pub proxies_named: usize,
    /// The one header their client's address is read from (`ORCHESTRA_CLIENT_IP_HEADER`).
    pub proxy_header: &'static str,
    /// Whether this server received forwarded headers (only a running server knows).
    pub forwarded_seen: bool,
    /// What report-only addresses would have refused (only a running server knows).
    pub would_refuse: Option<WouldRefuse>,
    /// The flood store's health as this server sees it (only a running server knows).
    pub flood_store: Option<StoreView>,
    /// The SMTP server emails go through, and whether it answered the last try.
    pub mail: MailView,
}

/// The email sender as the report sees it.
#[derive(Clone, Debug, Default)]
pub struct MailView {
    /// `host:port` of `ORCHESTRA_SMTP_URL`; `None` when no SMTP server is set.
    pub server: Option<String>,
    /// The last try to reach it failed (a connection or a timeout), and none has worked since.
    pub unreachable: bool,
}

/// How long an email may wait past its due time before the report warns.
pub const MAIL_LATE_AFTER: i64 = 300;

/// "Email": said once a participant has an address, or an SMTP server is set. A warning when
/// participants have addresses and no server is set (their links are not sent), when the
/// server did not answer, or when an email has waited past its time.
pub async fn mail_check(db: &Db, view: &MailView, now: i64) -> Option<Check> {
    let title = || Message::new("status-mail");
    let contacts = match store::mails::any_contact(db).await {
        Ok(c) => c,
        Err(_) => return Some(check_failed("mail", "status-mail")),
    };
    let Some(server) = &view.server else {
        return contacts.then(|| Check {
            id: "mail",
            title: title(),
            value: Message::new("status-mail-off"),
            severity: Severity::Warning,
            description: None,
        });
    };
    let Ok((oldest, failed)) = store::mails::waiting(db).await else {
        return Some(check_failed("mail", "status-mail"));
    };
    let description =
        (failed > 0).then(|| Message::new("status-mail-failed").arg("count", failed.to_string()));
    let (value, severity) = if view.unreachable {
        (
            Message::new("status-mail-unreachable").arg("server", server.clone()),
            Severity::Warning,
        )
    } else {
        match oldest {
            Some(at) => (
                Message::new("status-mail-waiting")
                    .arg("server", server.clone())
                    .arg("at", crate::time::format_utc(at)),
                if now - at > MAIL_LATE_AFTER {
                    Severity::Warning
                } else {
                    Severity::Ok
                },
            ),
            None => (
                Message::new("status-mail-ok").arg("server", server.clone()),
                if failed > 0 {
                    Severity::Note
                } else {
                    Severity::Ok
                },
            ),
        }
    };
    Some(Check {
        id: "mail",
        title: title(),
        value,
        severity,
        description,
    })
}

/// `guard::StoreHealth` read once, for the report.
#[derive(Clone, Copy, Debug, Default)]
pub struct StoreView {
    pub failing_for: Option<std::time::Duration>,
    pub decisions_without_store: u64,
}

/// "Flood store": an error while the server's flood store fails to sync, with how long and
/// how many counted requests were decided without it (under the chosen `on_store_fault`).
pub fn flood_store_check(view: StoreView, settings: Option<&Settings>, backend: &str) -> Check {
    let title = Message::new("status-flood-store");
    let on_fault = settings
        .map(|s| s.on_store_fault)
        .unwrap_or_default()
        .name();
    match view.failing_for {
        Some(d) => Check {
            id: "flood_store",
            title,
            value: Message::new("status-flood-store-failing")
                .arg("backend", backend)
                .arg("seconds", d.as_secs().to_string()),
            severity: Severity::Error,
            description: Some(
                Message::new("status-flood-store-failing-description")
                    .arg("decisions", view.decisions_without_store.to_string())
                    .arg("on_fault", on_fault),
            ),
        },
        None => Check {
            id: "flood_store",
            title,
            value: Message::new("status-flood-store-ok")
                .arg("backend", backend)
                .arg("on_fault", on_fault),
            severity: Severity::Ok,
            description: None,
        },
    }
}

/// Per guarded address, what the guard would have refused (`FloodGuard::would_refuse`).
#[derive(Clone, Copy, Debug, Default)]
pub struct WouldRefuse {
    pub doorway: Recent,
    pub notice: Recent,
    pub login_address: Recent,
    pub login_account: Recent,
}

/// The description of a report-only address: what it would have refused per tier, in the
/// current period and the recent ones, or where to read that when this process cannot.
fn would_refuse_description(id: &'static str, tiers: [(u64, u64); 2]) -> Message {
    Message::new(id)
        .arg("first_now", tiers[0].0.to_string())
        .arg("first_recent", tiers[0].1.to_string())
        .arg("second_now", tiers[1].0.to_string())
        .arg("second_recent", tiers[1].1.to_string())
        .arg("periods", RECENT_PERIODS.to_string())
}

fn tiers_of(seen: Recent) -> [(u64, u64); 2] {
    [
        (seen.current[0], seen.recent[0]),
        (seen.current[1], seen.recent[1]),
    ]
}

/// Builds the report. Never fails: what cannot be read becomes an error check.
pub async fn build(db: &Db, flood_backend: &str) -> Report {
    build_with(db, flood_backend, Environment::default()).await
}

fn check_failed(id: &'static str, title: &'static str) -> Check {
    Check {
        id,
        title: Message::new(title),
        value: Message::new("status-check-failed"),
        severity: Severity::Error,
        description: None,
    }
}

/// The report when the database could not be opened at all: that, and every check that needs
/// it as one that could not be run.
pub fn unreachable(backend: store::Backend, cause: Message, env: Environment) -> Report {
    let mut checks = vec![Check {
        id: "database",
        title: Message::new("status-database"),
        value: Message::new("status-database-down").arg("backend", backend.name()),
        severity: Severity::Error,
        description: Some(cause),
    }];
    checks.push(check_failed("site_keys", "status-keys"));
    checks.push(check_failed("cron", "status-cron"));
    checks.push(version_check());
    checks.push(check_failed("doorway_limits", "status-doorway"));
    checks.push(check_failed("login_limits", "status-login"));
    checks.push(proxy_check(env.clone()));
    Report { checks }
}

/// "Webhooks": a warning while an endpoint is disabled (a run of failed deliveries; its
/// messages are set aside until it is enabled again), or while a delivery has waited more than
/// `MAIL_LATE_AFTER` past its time (`oldest`: when the oldest waiting one was due).
pub fn webhooks_check(total: i64, disabled: i64, oldest: Option<i64>, now: i64) -> Check {
    let value = Message::new("status-webhooks-value")
        .arg("total", total.to_string())
        .arg("disabled", disabled.to_string());
    let late = oldest.filter(|at| now - at > MAIL_LATE_AFTER);
    let (severity, description) = if disabled > 0 {
        (
            Severity::Warning,
            Some(Message::new("status-webhooks-disabled-description")),
        )
    } else if let Some(at) = late {
        (
            Severity::Warning,
            Some(Message::new("status-webhooks-late").arg("at", crate::time::format_utc(at))),
        )
    } else {
        (Severity::Ok, None)
    };
    Check {
        id: "webhooks",
        title: Message::new("status-webhooks"),
        value,
        severity,
        description,
    }
}

fn version_check() -> Check {
    Check {
        id: "version",
        title: Message::new("status-version"),
        value: Message::new("status-version-value").arg("version", env!("CARGO_PKG_VERSION")),
        severity: Severity::Ok,
        description: None,
    }
}

/// "Database": an error while it cannot be reached, is locked for writes or is read-only,
/// so a fault shows while it lasts (a read alone would say "reachable" while every write fails).
pub async fn database_check(db: &Db) -> Check {
    let backend = db.backend.name();
    let (value, description) = match db.health().await {
        store::Health::Ok => {
            return Check {
                id: "database",
                title: Message::new("status-database"),
                value: Message::new("status-database-ok").arg("backend", backend),
                severity: Severity::Ok,
                description: None,
            };
        }
        store::Health::Unreachable(cause) => {
            tracing::warn!(%cause, "status report: the database did not answer");
            ("status-database-down", None)
        }
        store::Health::Locked => (
            "status-database-locked",
            Some("status-database-locked-description"),
        ),
        store::Health::ReadOnly => (
            "status-database-read-only",
            Some("status-database-read-only-description"),
        ),
        store::Health::Vanished => (
            "status-database-vanished",
            Some("status-database-vanished-description"),
        ),
    };
    Check {
        id: "database",
        title: Message::new("status-database"),
        value: Message::new(value).arg("backend", backend),
        severity: Severity::Error,
        description: description.map(Message::new),
    }
}

/// Only after a rotation left running instances with no working link: how many, and how to
/// send them fresh ones.
async fn voided_links_check(db: &Db) -> Option<Check> {
    match crate::domain::rotation::without_working_link(db, store::now()).await {
        Ok(0) => None,
        Ok(count) => Some(Check {
            id: "voided_links",
            title: Message::new("status-voided-links"),
            value: Message::new("status-voided-links-value").arg("count", count.to_string()),
            severity: Severity::Warning,
            description: Some(Message::new("status-voided-links-description")),
        }),
        Err(_) => Some(check_failed("voided_links", "status-voided-links")),
    }
}

/// The retention in force (the site's period, the workflows' own) and cron's last erasure.
async fn retention_check(db: &Db, site_days: u64) -> Check {
    match crate::domain::retention::report(db, site_days).await {
        Ok(report) => Check {
            id: "retention",
            title: Message::new("status-retention"),
            value: report.value(),
            severity: Severity::Ok,
            description: Some(report.description()),
        },
        Err(_) => check_failed("retention", "status-retention"),
    }
}

pub async fn build_with(db: &Db, flood_backend: &str, env: Environment) -> Report {
    let mut checks = vec![database_check(db).await];
    let keys = store::keys::created_at(db).await;
    checks.push(match keys {
        Ok(Some(at)) => Check {
            id: "site_keys",
            title: Message::new("status-keys"),
            value: Message::new("status-keys-present").arg("date", crate::time::format_utc(at)),
            severity: Severity::Ok,
            description: None,
        },
        _ => Check {
            id: "site_keys",
            title: Message::new("status-keys"),
            value: Message::new("status-keys-missing"),
            severity: Severity::Error,
            description: Some(Message::new("status-keys-missing-description")),
        },
    });
    checks.extend(voided_links_check(db).await);
    let last_cron = store::settings::get(db, CRON_LAST_RUN)
        .await
        .map(|v| v.and_then(|v| v.parse::<i64>().ok()));
    checks.push(match last_cron {
        Err(_) => check_failed("cron", "status-cron"),
        Ok(Some(at)) if store::now() - at <= CRON_STALE_AFTER => Check {
            id: "cron",
            title: Message::new("status-cron"),
            value: Message::new("status-cron-ran").arg("date", crate::time::format_utc(at)),
            severity: Severity::Ok,
            description: None,
        },
        Ok(Some(at)) => Check {
            id: "cron",
            title: Message::new("status-cron"),
            value: Message::new("status-cron-ran").arg("date", crate::time::format_utc(at)),
            severity: Severity::Warning,
            description: Some(Message::new("status-cron-stale-description")),
        },
        Ok(None) => Check {
            id: "cron",
            title: Message::new("status-cron"),
            value: Message::new("status-cron-never"),
            severity: Severity::Warning,
            description: Some(Message::new("status-cron-stale-description")),
        },
    });
    checks.push(version_check());
    let loaded = Settings::load(db).await;
    if let Some(view) = env.flood_store {
        checks.push(flood_store_check(view, loaded.as_ref().ok(), flood_backend));
    }
    match loaded {
        Ok(settings) => {
            checks.push(provider_check(&settings));
            checks.push(base_url_check(&settings));
            let seen = env.would_refuse;
            for (address, seen) in [
                (Address::Notice, seen.map(|s| s.notice)),
                (Address::Doorway, seen.map(|s| s.doorway)),
            ] {
                checks.extend(limits_check(address, &settings, flood_backend, seen));
            }
            checks.push(login_check(
                &settings,
                seen.map(|s| (s.login_address, s.login_account)),
            ));
        }
        Err(_) => {
            checks.push(check_failed("payment_provider", "status-provider"));
            checks.push(check_failed("notice_limits", "status-notice"));
            checks.push(check_failed("doorway_limits", "status-doorway"));
            checks.push(check_failed("login_limits", "status-login"));
        }
    }
    checks.push(proxy_check(env.clone()));
    // Only on a site with webhook endpoints: a site without any has nothing to be told.
    match store::webhooks::counts(db).await {
        Ok((0, _)) => {}
        Ok((total, disabled)) => match store::webhooks::oldest_waiting(db).await {
            Ok(oldest) => checks.push(webhooks_check(total, disabled, oldest, store::now())),
            Err(_) => checks.push(check_failed("webhooks", "status-webhooks")),
        },
        Err(_) => checks.push(check_failed("webhooks", "status-webhooks")),
    }
    checks.extend(mail_check(db, &env.mail, store::now()).await);
    match Settings::load(db).await {
        Ok(settings) => checks.push(retention_check(db, settings.retention_days).await),
        Err(_) => checks.push(check_failed("retention", "status-retention")),
    }
    Report { checks }
}

/// "Sign-in limits": OK while either tier counts; a warning when both are 0, and while they
/// only report (`seen`: the running server's tally, per address and per account).
pub fn login_check(settings: &Settings, seen: Option<(Recent, Recent)>) -> Check {
    let title = Message::new("status-login");
    if settings.login_per_address == 0
        && settings.login_per_account == 0
        && settings.login_account_total == 0
    {
        return Check {
            id: "login_limits",
            title,
            value: Message::new("status-login-off"),
            severity: Severity::Warning,
            description: Some(Message::new("status-login-off-description")),
        };
    }
    let report_only = settings.login_mode() == Mode::ReportOnly;
    Check {
        id: "login_limits",
        title,
        value: Message::new(if report_only {
            "status-login-report-only"
        } else {
            "status-login-on"
        })
        .arg("per_address", settings.login_per_address.to_string())
        .arg("address_period", settings.login_address_period.to_string())
        .arg("per_account", settings.login_per_account.to_string())
        .arg("account_total", settings.login_account_total.to_string())
        .arg("account_period", settings.login_account_period.to_string()),
        severity: if report_only {
            Severity::Warning
        } else {
            Severity::Ok
        },
        description: report_only.then(|| match seen {
            Some((address, account)) => would_refuse_description(
                "status-login-would-refuse",
                [
                    (address.current[0], address.recent[0]),
                    (account.current[0], account.recent[0]),
                ],
            ),
            None => Message::new("status-would-refuse-elsewhere"),
        }),
    }
}

/// "Client addresses": which proxies are trusted, and a warning when forwarded headers arrive
/// while none is named (every visitor then counts as the proxy's address).
pub fn proxy_check(env: Environment) -> Check {
    let title = Message::new("status-proxies");
    let (value, severity, description) = match (env.proxies_named, env.forwarded_seen) {
        (0, true) => (
            Message::new("status-proxies-ignored"),
            Severity::Warning,
            Some(Message::new("status-proxies-ignored-description")),
        ),
        (0, false) => (Message::new("status-proxies-none"), Severity::Ok, None),
        (n, _) => (
            Message::new("status-proxies-named")
                .arg("count", n.to_string())
                .arg("header", env.proxy_header),
            Severity::Ok,
            None,
        ),
    };
    Check {
        id: "proxies",
        title,
        value,
        severity,
        description,
    }
}

/// How one counted address's status line reads: its check id and message ids, and what each
/// state of its limits means there. The doorway's line and the provider notices' are one check
/// ([`limits_check`]) over two of these; the sign-in's two limits are one line of their own
/// ([`login_check`]), and the API's failed tokens count under the sign-in's per-address limit.
struct LimitsLines {
    id: &'static str,
    title: &'static str,
    on: &'static str,
    report_only: &'static str,
    would_refuse: &'static str,
    off_switch: &'static str,
    off_zero: &'static str,
    off_period: &'static str,
    /// The severity and description of each enforcing or uncounting state.
    state: fn(LimitsState, &Settings) -> (Severity, Option<Message>),
}

/// The status line of `address`, when it has one of its own ([`LimitsLines`]).
fn lines_of(address: Address) -> Option<&'static LimitsLines> {
    match address {
        Address::Doorway => Some(&DOORWAY),
        Address::Notice => Some(&NOTICE),
        Address::SignInAddress
        | Address::SignInAccount
        | Address::ApiAuthFailure
        | Address::EmailCode => None,
    }
}

/// "Interaction doorway request limits": a warning whenever the guard would count nothing,
/// with the one `orchestra config` line that fixes it.
const DOORWAY: LimitsLines = LimitsLines {
    id: "doorway_limits",
    title: "status-doorway",
    on: "status-doorway-on",
    report_only: "status-doorway-report-only",
    would_refuse: "status-doorway-would-refuse",
    off_switch: "status-doorway-off-switch",
    off_zero: "status-doorway-off-zero",
    off_period: "status-doorway-off-period",
    state: |state, settings| {
        let fix = doorway_fix(settings);
        let (severity, description) = match state {
            LimitsState::Both => (Severity::Ok, Message::new("status-doorway-on-description")),
            // Counting, but one tier is off: worth knowing, not a warning.
            LimitsState::PerCallerOnly => (
                Severity::Note,
                Message::new("status-doorway-no-total-description").arg("fix", fix),
            ),
            LimitsState::TotalOnly => (
                Severity::Note,
                Message::new("status-doorway-no-per-link-description").arg("fix", fix),
            ),
            LimitsState::SwitchOff => (
                Severity::Warning,
                Message::new("status-doorway-off-switch-description").arg("fix", fix),
            ),
            LimitsState::BothZero | LimitsState::PeriodZero => (
                Severity::Warning,
                Message::new("status-doorway-off-zero-description").arg("fix", fix),
            ),
        };
        (severity, Some(description))
    },
};

/// "Payment notice request limits". Uncapped is a note, not a warning: a bad notice costs one
/// HMAC over at most 4 KiB and touches no database, and only the provider can make a good one.
const NOTICE: LimitsLines = LimitsLines {
    id: "notice_limits",
    title: "status-notice",
    on: "status-notice-on",
    report_only: "status-notice-report-only",
    would_refuse: "status-notice-would-refuse",
    off_switch: "status-notice-off-switch",
    off_zero: "status-notice-off-zero",
    off_period: "status-notice-off-period",
    state: |state, settings| {
        let fix = notice_fix(settings);
        match state {
            _ if state.is_counting() => (Severity::Ok, None),
            // The switch is the cause: it is what the fix turns on, whatever the limits say.
            LimitsState::SwitchOff => (
                Severity::Note,
                Some(Message::new("status-notice-off-switch-description").arg("fix", fix)),
            ),
            _ => (
                Severity::Note,
                Some(Message::new("status-notice-off-description").arg("fix", fix)),
            ),
        }
    },
};

/// The status line of a counted address (the doorway, the provider notices): it asks the
/// guard's own `is_counting` and `is_refusing` for the address's limits, so the report and the
/// counting cannot drift. Report only is a warning: it counts, but caps nothing; `seen` is
/// the running server's tally of what it would have refused.
pub fn limits_check(
    address: Address,
    settings: &Settings,
    flood_backend: &str,
    seen: Option<Recent>,
) -> Option<Check> {
    let lines = lines_of(address)?;
    let limits = settings.limits_of(address);
    let title = Message::new(lines.title);
    let figures = |id| {
        Message::new(id)
            .arg(address.tiers()[0], limits.per_caller.to_string())
            .arg("total", limits.total.to_string())
            .arg("period", limits.period.as_secs().to_string())
            .arg("backend", flood_backend)
    };
    let state = LimitsState::of(&limits);
    if state.is_counting() && !FloodGuard::is_refusing(&limits, settings.mode_of(address)) {
        return Some(Check {
            id: lines.id,
            title,
            value: figures(lines.report_only),
            severity: Severity::Warning,
            description: Some(match seen {
                Some(seen) => would_refuse_description(lines.would_refuse, tiers_of(seen)),
                None => Message::new("status-would-refuse-elsewhere"),
            }),
        });
    }
    let value = match state {
        LimitsState::Both | LimitsState::PerCallerOnly | LimitsState::TotalOnly => {
            figures(lines.on)
        }
        LimitsState::SwitchOff => Message::new(lines.off_switch),
        LimitsState::PeriodZero => Message::new(lines.off_period),
        LimitsState::BothZero => Message::new(lines.off_zero),
    };
    let (severity, description) = (lines.state)(state, settings);
    Some(Check {
        id: lines.id,
        title,
        value,
        severity,
        description,
    })
}

/// "Payment provider": a warning while the test provider takes payments on a public (https)
/// site, where payers would believe they paid.
pub fn provider_check(settings: &Settings) -> Check {
    let title = Message::new("status-provider");
    match (
        settings.test_provider,
        settings.base_url.starts_with("https://"),
    ) {
        (true, true) => Check {
            id: "payment_provider",
            title,
            value: Message::new("status-provider-test"),
            severity: Severity::Warning,
            description: Some(Message::new("status-provider-test-public-description")),
        },
        (true, false) => Check {
            id: "payment_provider",
            title,
            value: Message::new("status-provider-test"),
            severity: Severity::Ok,
            description: Some(Message::new("status-provider-test-description")),
        },
        (false, _) => Check {
            id: "payment_provider",
            title,
            value: Message::new("status-provider-off"),
            severity: Severity::Ok,
            description: None,
        },
    }
}

/// "Links": where issued links point, and a warning when the saved base URL is on this machine
/// but not where the server listens (`Settings::base_url_elsewhere`): such links lead nowhere.
pub fn base_url_check(settings: &Settings) -> Check {
    let title = Message::new("status-base-url");
    match settings.base_url_elsewhere() {
        Some((base, listening)) => Check {
            id: "base_url",
            title,
            value: Message::new("status-base-url-elsewhere")
                .arg("base", base)
                .arg("listening", listening),
            severity: Severity::Warning,
            description: Some(Message::new("status-base-url-elsewhere-description")),
        },
        None => Check {
            id: "base_url",
            title,
            value: Message::new("status-base-url-ok").arg("url", settings.base_url.clone()),
            severity: Severity::Ok,
            description: None,
        },
    }
}

/// The one `orchestra config set` line that makes the doorway count with both tiers, or ""
/// when it already does: the switch, then each tier left at 0, then a period of 0. The figures are
/// the sizing advice the README and docs/interaction.md give too: `suggested_per_link`,
/// [`SUGGESTED_TOTAL`] and the shipped period.
pub fn doorway_fix(settings: &Settings) -> String {
    limits_fix(
        &settings.interaction_limits(),
        [
            (
                "interaction.limits.per_link",
                crate::domain::workflow::suggested_per_link(),
            ),
            ("interaction.limits.total", SUGGESTED_TOTAL),
        ],
    )
}

/// The one `orchestra config set` line that makes the provider notices count with both tiers,
/// or "" when they do: as [`doorway_fix`], with [`SUGGESTED_PER_PAYMENT`]. With the switch off
/// and the limits set, the switch alone.
pub fn notice_fix(settings: &Settings) -> String {
    limits_fix(
        &settings.notice_limits(),
        [
            ("notice.limits.per_payment", SUGGESTED_PER_PAYMENT),
            ("notice.limits.total", SUGGESTED_TOTAL),
        ],
    )
}

/// The fix of `limits`: the switch when it is off, then each tier left at 0 (its setting and
/// suggested figure in `tiers`, the per-caller tier first), then a period of 0.
fn limits_fix(limits: &crate::limits::guard::Limits, tiers: [(&str, u64); 2]) -> String {
    let mut pairs: Vec<String> = Vec::new();
    if !limits.enabled {
        pairs.push("orchestra.request_limits.enabled true".into());
    }
    for ((key, figure), limit) in tiers.into_iter().zip([limits.per_caller, limits.total]) {
        if limit == 0 {
            pairs.push(format!("{key} {figure}"));
        }
    }
    if limits.period.is_zero() {
        pairs.push("orchestra.request_limits.period 3600".into());
    }
    if pairs.is_empty() {
        return String::new();
    }
    format!("orchestra config set {}", pairs.join(" "))
}

/// The total the fix suggests: far above a busy day of the seeded examples, low enough that a
/// flood of fresh links is refused within one period.
pub const SUGGESTED_TOTAL: u64 = 10000;

/// The per-payment figure the notices' fix suggests: a provider sends one notice per payment
/// and retries a few times (docs/interaction.md, Provider notices).
pub const SUGGESTED_PER_PAYMENT: u64 = 10;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_webhooks_line_warns_of_a_disabled_endpoint_and_of_deliveries_late() {
        let now = 1_800_000_000;
        assert_eq!(webhooks_check(2, 0, None, now).severity, Severity::Ok);
        assert_eq!(
            webhooks_check(2, 0, Some(now - 60), now).severity,
            Severity::Ok
        );
        let late = webhooks_check(2, 0, Some(now - MAIL_LATE_AFTER - 1), now);
        assert_eq!(late.severity, Severity::Warning);
        assert_eq!(late.description.unwrap().id, "status-webhooks-late");
        let disabled = webhooks_check(2, 1, None, now);
        assert_eq!(disabled.severity, Severity::Warning);
        assert_eq!(
            disabled.description.unwrap().id,
            "status-webhooks-disabled-description"
        );
    }

    fn settings(f: impl FnOnce(&mut Settings)) -> Settings {
        let mut s = Settings {
            request_limits_enabled: true,
            per_link: 30,
            total: 1000,
            notice_per_payment: 5,
            notice_total: 100,
            ..Settings::default()
        };
        f(&mut s);
        s
    }

    fn line(address: Address, s: &Settings) -> Check {
        limits_check(address, s, "memory", None).expect("a line of its own")
    }

    #[test]
    fn the_doorway_and_the_notices_read_each_state_in_their_own_words() {
        for (address, on, off_period, uncapped) in [
            (
                Address::Doorway,
                "status-doorway-on",
                "status-doorway-off-period",
                Severity::Warning,
            ),
            (
                Address::Notice,
                "status-notice-on",
                "status-notice-off-period",
                Severity::Note,
            ),
        ] {
            let c = line(address, &settings(|_| {}));
            assert_eq!((c.value.id, c.severity), (on, Severity::Ok));
            // The caller tier's figure under its own name (per link, per payment).
            assert!(
                c.value.args.iter().any(|(k, _)| *k == address.tiers()[0]),
                "{:?}",
                c.value
            );
            let c = line(address, &settings(|s| s.request_limits_period = 0));
            assert_eq!((c.value.id, c.severity), (off_period, uncapped));
            let c = line(address, &settings(|s| s.request_limits_enabled = false));
            assert_eq!(c.severity, uncapped);
        }
        let c = line(Address::Notice, &settings(|s| s.notice_report_only = true));
        assert_eq!(
            (c.value.id, c.severity),
            ("status-notice-report-only", Severity::Warning)
        );
        assert!(limits_check(Address::SignInAddress, &settings(|_| {}), "memory", None).is_none());
    }

    #[test]
    fn the_notices_fix_is_the_switch_when_the_switch_is_the_cause() {
        let fix_of = |s: &Settings| {
            let c = line(Address::Notice, s);
            let d = c.description.expect("a description");
            let fix = d
                .args
                .iter()
                .find(|(k, _)| *k == "fix")
                .map(|(_, v)| v.clone());
            (d.id, fix.unwrap_or_default())
        };
        let switch = "orchestra config set orchestra.request_limits.enabled true";
        assert_eq!(
            fix_of(&settings(|s| s.request_limits_enabled = false)),
            ("status-notice-off-switch-description", switch.to_owned())
        );
        assert_eq!(
            fix_of(&Settings::default()),
            (
                "status-notice-off-switch-description",
                format!("{switch} notice.limits.per_payment 10 notice.limits.total 10000")
            )
        );
        assert_eq!(
            fix_of(&settings(
                |s| (s.notice_per_payment, s.notice_total) = (0, 0)
            )),
            (
                "status-notice-off-description",
                "orchestra config set notice.limits.per_payment 10 notice.limits.total 10000"
                    .to_owned()
            )
        );
        assert_eq!(
            fix_of(&settings(|s| s.request_limits_period = 0)),
            (
                "status-notice-off-description",
                "orchestra config set orchestra.request_limits.period 3600".to_owned()
            )
        );
    }
}
