//! Claim by lease, shared by the outbox's two queues (`mails` and `webhook_deliveries`): a row
//! is taken by an UPDATE that checks no live claim holds it, so of two senders (in one process
//! or several, `serve` beside `orchestra cron`) only one holds a row. On SQLite the write lock
//! orders the UPDATEs; on PostgreSQL the second UPDATE waits for the first's row lock, re-reads
//! the row, finds the claim and changes nothing. A sender that dies leaves its claims to lapse.

use super::Db;

/// A table whose rows are claimed: `id`, `state` ('pending' while due), `claimed_until`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Table {
    Mails,
    WebhookDeliveries,
    AdminMails,
}

impl Table {
    fn name(self) -> &'static str {
        match self {
            Table::Mails => "mails",
            Table::WebhookDeliveries => "webhook_deliveries",
            Table::AdminMails => "admin_mails",
        }
    }
}

/// Takes each of `ids` that is still pending and unclaimed at `now` until `until`; returns
/// those taken, in the order given.
pub async fn take(
    db: &Db,
    table: Table,
    ids: impl IntoIterator<Item = i64>,
    now: i64,
    until: i64,
) -> Result<Vec<i64>, sqlx::Error> {
    let sql = format!(
        "UPDATE {} SET claimed_until = $1 WHERE id = $2 \
         AND state = 'pending' AND (claimed_until IS NULL OR claimed_until < $3)",
        table.name()
    );
    let mut taken = Vec::new();
    for id in ids {
        let done = sqlx::query(&sql)
            .bind(until)
            .bind(id)
            .bind(now)
            .execute(&db.pool)
            .await?
            .rows_affected();
        if done == 1 {
            taken.push(id);
        }
    }
    Ok(taken)
}

/// Gives back claims not used (a sender stopping, or out of lease): the rows are due again at
/// once for any sender, untried.
pub async fn release(
    db: &Db,
    table: Table,
    ids: impl IntoIterator<Item = i64>,
) -> Result<(), sqlx::Error> {
    let sql = format!(
        "UPDATE {} SET claimed_until = NULL WHERE id = $1 AND state = 'pending'",
        table.name()
    );
    for id in ids {
        sqlx::query(&sql).bind(id).execute(&db.pool).await?;
    }
    Ok(())
}
