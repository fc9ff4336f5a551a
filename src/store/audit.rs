//! The audit log's rows (`domain::audit`): one `INSERT` per event, pages newest first by time
//! (keyset: `before` the last event shown), filtered by kind, by who, and by time.

use super::Db;
use super::lists::{Bind, bind_all};

/// An event to write.
pub struct New<'a> {
    pub at: i64,
    pub kind: &'a str,
    pub actor: &'a str,
    pub actor_id: Option<i64>,
    pub actor_name: Option<&'a str>,
    pub address: Option<&'a str>,
    pub detail: &'a str,
}

pub async fn insert(db: &Db, row: &New<'_>) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO audit_log (at, kind, actor, actor_id, actor_name, address, detail) \
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(row.at)
    .bind(row.kind)
    .bind(row.actor)
    .bind(row.actor_id)
    .bind(row.actor_name)
    .bind(row.address)
    .bind(row.detail)
    .execute(&db.pool)
    .await?;
    Ok(())
}

/// An event as read.
#[derive(Clone, Debug, sqlx::FromRow, serde::Serialize)]
pub struct Row {
    pub id: i64,
    pub at: i64,
    pub kind: String,
    pub actor: String,
    pub actor_id: Option<i64>,
    pub actor_name: Option<String>,
    pub address: Option<String>,
    pub detail: String,
}

/// Which events a page holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Filter {
    /// A kind's stable name.
    pub kind: Option<String>,
    /// An administrator's or a token's name, or `cli`.
    pub who: Option<String>,
    /// Unix seconds: at or after `from`, before `to`.
    pub from: Option<i64>,
    pub to: Option<i64>,
}

/// Up to `limit` events after `before` (an event's id) in the order newest first, and the id the
/// next page starts after when there are more. The order is by time, then id (two events of one
/// second), so that each filter is one range of an index read in its order, never a sort:
/// `audit_log_at` (at, id), or `audit_log_kind` / `audit_log_who` with theirs (docs/plans/audit_*).
/// An id that names no event (deleted since) starts from the newest.
pub async fn page(
    db: &Db,
    filter: &Filter,
    before: Option<i64>,
    limit: i64,
) -> Result<(Vec<Row>, Option<i64>), sqlx::Error> {
    let mut binds = Vec::new();
    let mut parts = Vec::new();
    let mut add = |cond: &str, b: Bind| {
        binds.push(b);
        parts.push(cond.replace('?', &format!("${}", binds.len())));
    };
    if let Some(kind) = &filter.kind {
        add("kind = ?", Bind::Text(kind.clone()));
    }
    if let Some(who) = &filter.who {
        add("actor_name = ?", Bind::Text(who.clone()));
    }
    if let Some(from) = filter.from {
        add("at >= ?", Bind::Int(from));
    }
    if let Some(to) = filter.to {
        add("at < ?", Bind::Int(to));
    }
    let start = match before {
        Some(id) => sqlx::query_scalar::<_, i64>("SELECT at FROM audit_log WHERE id = $1")
            .bind(id)
            .fetch_optional(db.reader())
            .await?
            .map(|at| (at, id)),
        None => None,
    };
    if let Some((at, id)) = start {
        binds.push(Bind::Int(at));
        binds.push(Bind::Int(id));
        parts.push(format!(
            "(at, id) < (${}, ${})",
            binds.len() - 1,
            binds.len()
        ));
    }
    let limit = limit.max(1);
    binds.push(Bind::Int(limit + 1));
    let cond = if parts.is_empty() {
        "1 = 1".to_owned()
    } else {
        parts.join(" AND ")
    };
    let sql = format!(
        "SELECT id, at, kind, actor, actor_id, actor_name, address, detail FROM audit_log \
         WHERE {cond} ORDER BY at DESC, id DESC LIMIT ${}",
        binds.len()
    );
    let mut rows: Vec<Row> = bind_all(sqlx::query_as(&sql), binds)
        .fetch_all(db.reader())
        .await?;
    let mut more = None;
    if rows.len() as i64 > limit {
        rows.truncate(limit as usize);
        more = rows.last().map(|r| r.id);
    }
    Ok((rows, more))
}
