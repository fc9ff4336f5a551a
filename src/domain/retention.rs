//! Retention and erasure: how long an ended instance keeps its answers, files and contacts (the
//! site's `records.retention_days`, or its workflow's `keep:` line), cron's erasure of those past
//! it, a short batch at a time, and `orchestra contact erase`.

use std::time::Instant;

use crate::domain::workflow::Definition;
use crate::i18n::Message;
use crate::store::{self, Db};

/// Instances one batch erases, each batch its own transaction: a few milliseconds of the write
/// lock, so no visitor's answer waits behind the chore for long, whatever the backlog.
pub const BATCH: i64 = 100;

/// When cron last ran the erasure, and how many instances that run erased (status report).
pub const LAST_RUN: &str = "state.retention_last_run";
pub const LAST_ERASED: &str = "state.retention_last_erased";

const DAY: i64 = 24 * 3600;

/// When an erasure last rewrote the SQLite file (`Db::vacuum`), and how often it may: erased
/// rows' leftovers in live pages are gone from the file within a day of their erasure.
pub const LAST_VACUUM: &str = "state.retention_last_vacuum";
const VACUUM_EVERY: i64 = DAY;

/// The days an instance of a workflow defined as `definition` keeps its records once ended:
/// its `keep:` line, else the site's setting; 0 is forever.
pub fn period_days(definition: Option<&Definition>, site_days: u64) -> u64 {
    match definition.and_then(|d| d.keep_days) {
        Some(days) => u64::from(days),
        None => site_days,
    }
}

/// Erases every ended instance past its period at `now`, workflow by workflow, `BATCH`
/// instances a transaction (their files' bytes first, a file a statement), until none is due:
/// one run erases the whole backlog. Records the run for the status report. How many went.
pub async fn run(db: &Db, now: i64, site_days: u64) -> Result<u64, sqlx::Error> {
    let mut total = 0;
    for (workflow, json) in store::retention::workflows(db).await? {
        // A definition that does not read (it always does) keeps its instances: erasing is
        // the one chore that must never act on a guess.
        let Ok(definition) = serde_json::from_str::<Definition>(&json) else {
            tracing::warn!(
                workflow,
                "retention skipped a workflow whose definition does not read"
            );
            continue;
        };
        let days = period_days(Some(&definition), site_days);
        if days == 0 {
            continue;
        }
        let cutoff = now - days as i64 * DAY;
        loop {
            let started = Instant::now();
            let due = store::retention::due(db, workflow, cutoff, BATCH).await?;
            total += erase_batch(db, &due, now).await?;
            if (due.len() as i64) < BATCH || db.vanished() {
                break;
            }
            store::expired::between_batches(db, started).await?;
        }
    }
    let mut ran = vec![
        (LAST_RUN, now.to_string()),
        (LAST_ERASED, total.to_string()),
    ];
    if total > 0 {
        let vacuumed = store::settings::get(db, LAST_VACUUM)
            .await?
            .and_then(|v| v.parse::<i64>().ok());
        if vacuumed.is_none_or(|at| now - at >= VACUUM_EVERY) {
            db.vacuum().await?;
            ran.push((LAST_VACUUM, now.to_string()));
        } else {
            db.truncate_wal().await?;
        }
    }
    store::settings::put_all(db, &ran).await?;
    Ok(total)
}

/// One batch: the files' bytes, then the rows in one transaction.
async fn erase_batch(db: &Db, instances: &[i64], now: i64) -> Result<u64, sqlx::Error> {
    for file in store::retention::files_of(db, instances).await? {
        store::files::erase_bytes(db, file).await?;
    }
    store::retention::erase(db, instances, now).await
}

/// What `contact erase` was given that is not an address.
#[derive(Debug, PartialEq, Eq)]
pub struct NotAnAddress;

/// Removes `address` from every row that holds it, now, whatever the instances' states
/// (`store::retention::erase_address`), then rewrites the SQLite file (`Db::vacuum`) so no
/// leftover of it stays in the file's unused space.
pub async fn erase_contact(
    db: &Db,
    address: &str,
) -> Result<Result<store::retention::AddressErased, NotAnAddress>, sqlx::Error> {
    let address = address.trim().to_ascii_lowercase();
    if !crate::domain::mail::valid_email(&address) {
        return Ok(Err(NotAnAddress));
    }
    let done = store::retention::erase_address(db, &address).await?;
    // An operator's erasure is done now, whatever it costs: the file too.
    db.vacuum().await?;
    Ok(Ok(done))
}

/// The retention in force and cron's last erasure, for the status report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    /// The site's period in days (0: forever).
    pub site_days: u64,
    /// Workflows whose `keep:` line says otherwise: (name, days, 0 for forever).
    pub workflows: Vec<(String, u64)>,
    /// When cron last ran the erasure, and how many instances it erased then.
    pub last_run: Option<i64>,
    pub last_erased: u64,
}

impl Report {
    /// The period in force, in the status report's words.
    pub fn value(&self) -> Message {
        match self.site_days {
            0 => Message::new("status-retention-forever"),
            days => Message::new("status-retention-days").arg("days", days.to_string()),
        }
    }

    /// The workflows' own periods and cron's last erasure, in the status report's words.
    pub fn description(&self) -> Message {
        let own: Vec<String> = self
            .workflows
            .iter()
            .map(|(name, days)| format!("{name} ({days})"))
            .collect();
        Message::new("status-retention-description")
            .arg("ran", if self.last_run.is_some() { "yes" } else { "no" })
            .arg("count", self.last_erased.to_string())
            .arg(
                "date",
                self.last_run
                    .map(crate::time::format_utc)
                    .unwrap_or_default(),
            )
            .arg(
                "workflows",
                if own.is_empty() {
                    "none".to_owned()
                } else {
                    own.join(", ")
                },
            )
    }
}

/// Reads the report's figures.
pub async fn report(db: &Db, site_days: u64) -> Result<Report, sqlx::Error> {
    let mut workflows = Vec::new();
    for (id, json) in store::retention::workflows(db).await? {
        let keep = serde_json::from_str::<Definition>(&json)
            .ok()
            .and_then(|d| d.keep_days);
        if let Some(days) = keep
            && let Some((name, _)) = store::workflows::name_and_label(db, id).await?
        {
            workflows.push((name, u64::from(days)));
        }
    }
    workflows.sort();
    let number = |v: Option<String>| v.and_then(|v| v.parse::<i64>().ok());
    Ok(Report {
        site_days,
        workflows,
        last_run: number(store::settings::get(db, LAST_RUN).await?),
        last_erased: number(store::settings::get(db, LAST_ERASED).await?).unwrap_or(0) as u64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_workflow_s_keep_line_overrides_the_site_and_zero_is_forever() {
        let keep = |days| Definition {
            keep_days: days,
            ..Definition::default()
        };
        assert_eq!(period_days(None, 30), 30);
        assert_eq!(period_days(Some(&keep(None)), 30), 30);
        assert_eq!(period_days(Some(&keep(Some(365))), 30), 365);
        assert_eq!(period_days(Some(&keep(Some(0))), 30), 0);
        assert_eq!(period_days(Some(&keep(Some(7))), 0), 7);
    }
}
