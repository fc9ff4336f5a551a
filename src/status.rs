//! The status report as plain data, shared by `/admin/reports/status` and `orchestra status`.

use serde::Serialize;

use crate::guard::FloodGuard;
use crate::i18n::{Lang, Message};
use crate::settings::Settings;
use crate::store::{self, Db};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Ok,
    Warning,
    Error,
}

impl Severity {
    pub fn name(self) -> &'static str {
        match self {
            Severity::Ok => "ok",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }

    pub fn label(self) -> Message {
        Message::new(match self {
            Severity::Ok => "severity-ok",
            Severity::Warning => "severity-warning",
            Severity::Error => "severity-error",
        })
    }

    /// `orchestra status` exits with this.
    pub fn exit_code(self) -> i32 {
        self as i32
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

/// Builds the report. Never fails: what cannot be read becomes an error check.
pub async fn build(db: &Db, flood_backend: &str) -> Report {
    let mut checks = Vec::new();
    let db_ok = db.ping().await.is_ok();
    checks.push(Check {
        id: "database",
        title: Message::new("status-database"),
        value: Message::new(if db_ok {
            "status-database-ok"
        } else {
            "status-database-down"
        })
        .arg("backend", db.backend.name()),
        severity: if db_ok { Severity::Ok } else { Severity::Error },
        description: None,
    });
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
    let last_cron = store::settings::get(db, CRON_LAST_RUN)
        .await
        .ok()
        .flatten()
        .and_then(|v| v.parse::<i64>().ok());
    checks.push(match last_cron {
        Some(at) if store::now() - at <= CRON_STALE_AFTER => Check {
            id: "cron",
            title: Message::new("status-cron"),
            value: Message::new("status-cron-ran").arg("date", crate::time::format_utc(at)),
            severity: Severity::Ok,
            description: None,
        },
        Some(at) => Check {
            id: "cron",
            title: Message::new("status-cron"),
            value: Message::new("status-cron-ran").arg("date", crate::time::format_utc(at)),
            severity: Severity::Warning,
            description: Some(Message::new("status-cron-stale-description")),
        },
        None => Check {
            id: "cron",
            title: Message::new("status-cron"),
            value: Message::new("status-cron-never"),
            severity: Severity::Warning,
            description: Some(Message::new("status-cron-stale-description")),
        },
    });
    checks.push(Check {
        id: "version",
        title: Message::new("status-version"),
        value: Message::new("status-version-value").arg("version", env!("CARGO_PKG_VERSION")),
        severity: Severity::Ok,
        description: None,
    });
    let settings = Settings::load(db).await.unwrap_or_default();
    checks.push(doorway_check(&settings, flood_backend));
    checks.push(notice_check(&settings, flood_backend));
    checks.push(provider_check(&settings));
    Report { checks }
}

/// "Interaction doorway request limits": a warning whenever the guard would count nothing.
/// It asks the guard's own `is_counting`, so the report and the counting cannot drift.
pub fn doorway_check(settings: &Settings, flood_backend: &str) -> Check {
    let limits = settings.interaction_limits();
    let title = Message::new("status-doorway");
    if FloodGuard::is_counting(&limits) {
        Check {
            id: "doorway_limits",
            title,
            value: Message::new("status-doorway-on")
                .arg("per_link", limits.per_caller.to_string())
                .arg("total", limits.total.to_string())
                .arg("period", limits.period.as_secs().to_string())
                .arg("backend", flood_backend),
            severity: Severity::Ok,
            description: Some(Message::new("status-doorway-on-description")),
        }
    } else {
        let (value, description) = if !limits.enabled {
            (
                "status-doorway-off-switch",
                "status-doorway-off-switch-description",
            )
        } else {
            (
                "status-doorway-off-zero",
                "status-doorway-off-zero-description",
            )
        };
        Check {
            id: "doorway_limits",
            title,
            value: Message::new(value),
            severity: Severity::Warning,
            description: Some(Message::new(description)),
        }
    }
}

/// "Payment notice request limits": the provider notices' own line, asking the same
/// `is_counting` for their limits.
pub fn notice_check(settings: &Settings, flood_backend: &str) -> Check {
    let limits = settings.notice_limits();
    let title = Message::new("status-notice");
    if FloodGuard::is_counting(&limits) {
        Check {
            id: "notice_limits",
            title,
            value: Message::new("status-notice-on")
                .arg("per_payment", limits.per_caller.to_string())
                .arg("total", limits.total.to_string())
                .arg("period", limits.period.as_secs().to_string())
                .arg("backend", flood_backend),
            severity: Severity::Ok,
            description: None,
        }
    } else {
        Check {
            id: "notice_limits",
            title,
            value: Message::new(if limits.enabled {
                "status-notice-off-zero"
            } else {
                "status-notice-off-switch"
            }),
            severity: Severity::Warning,
            description: Some(Message::new("status-notice-off-description")),
        }
    }
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
