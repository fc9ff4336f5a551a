//! `orchestra status`: the status report for monitoring, from a read-only look.

use std::time::Duration;

use super::Out;
use crate::config::Config;
use crate::domain::status;
use crate::i18n::Message;
use crate::store::{self, Db};

/// `orchestra status` answers within this, whatever the database does.
const STATUS_WITHIN: Duration = Duration::from_millis(4500);

/// Of which opening the database may take this.
const STATUS_OPEN_WITHIN: Duration = Duration::from_secs(3);

/// `orchestra status`: a probe for monitoring, so it changes nothing it looks at. The database
/// is opened read-only (no file created, no migration applied, no key made), the report comes
/// within `STATUS_WITHIN` whatever the fault, and an error exits 2.
pub(super) async fn status(out: &Out, config: &Config, format: Option<&str>) -> i32 {
    let format = format.unwrap_or("text");
    if !matches!(format, "text" | "json") {
        return out.err(Message::new("cli-bad-format").arg("format", format.to_owned()));
    }
    let report = async {
        let db = Db::open_read_only(&config.database_url, STATUS_OPEN_WITHIN).await?;
        if !db.migrated().await? {
            return Err(store::ConnectError::NotMigrated);
        }
        let mut env = environment(config);
        // The terminal's report tries the SMTP server itself (a server's reads its sender's
        // last try).
        if let Some(mailer) = &config.mailer {
            env.mail.unreachable = !mailer.reachable().await;
        }
        let report = status::build_with(&db, config.flood.name(), env).await;
        db.close().await;
        Ok(report)
    };
    match tokio::time::timeout(STATUS_WITHIN, report).await {
        Ok(Ok(report)) => print_report(out, &report, format),
        Ok(Err(e)) => status_unreachable(out, config, format, e),
        Err(_) => status_unreachable(out, config, format, store::ConnectError::TimedOut),
    }
}

fn environment(config: &Config) -> status::Environment {
    status::Environment {
        proxies_named: config.trusted_proxies.len(),
        proxy_header: config.trusted_proxies.header().display(),
        forwarded_seen: false,
        mail: status::MailView {
            server: config.mailer.as_ref().map(|m| m.server.clone()),
            unreachable: false,
        },
        ..Default::default()
    }
}

/// `orchestra status` when the database cannot be opened: the report of what could be
/// checked, the cause on the database line, and exit 2.
fn status_unreachable(out: &Out, config: &Config, format: &str, e: store::ConnectError) -> i32 {
    let backend = store::DatabaseUrl::parse(&config.database_url)
        .map_or(store::Backend::Sqlite, |u| u.backend());
    let mut report = status::unreachable(backend, e.message(), environment(config));
    if let (store::ConnectError::NotMigrated, Some(database)) = (&e, report.checks.first_mut()) {
        database.value = Message::new("status-database-not-set-up").arg("backend", backend.name());
    }
    print_report(out, &report, format).max(status::Severity::Error.exit_code())
}

fn print_report(out: &Out, report: &status::Report, format: &str) -> i32 {
    match format {
        "text" => print!("{}", report.to_text(out.lang)),
        "json" => println!("{}", report.to_json(out.lang)),
        other => return out.err(Message::new("cli-bad-format").arg("format", other.to_owned())),
    }
    report.worst().exit_code()
}
