//! The instance list a page at a time: newest first, keyset on the id (never OFFSET), filtered
//! by workflow, state, who started it and the token that started it, and searched in the
//! subject's title. The SQL text is put together from fixed pieces with numbered placeholders;
//! every value is bound (`super::placeholders`' rule).

use super::Db;
use crate::domain::workflow::InstanceState;

/// How many rows, at most, one page's search reads: a substring has no index on either backend
/// (no trigram extension is assumed), so a search reads this many of the filtered rows, newest
/// first, and the next page goes on from where it stopped. docs/performance.md has the times.
pub const SEARCH_WINDOW: i64 = 10_000;

/// What a list is narrowed to. `None` is "any".
#[derive(Clone, Debug, Default)]
pub struct Filter {
    /// Workflow ids; an empty list matches nothing (a scope covering no workflow).
    pub workflows: Option<Vec<i64>>,
    pub state: Option<InstanceState>,
    /// `admin`, `cli` or `api`, as `started_by` stores it.
    pub started_by: Option<&'static str>,
    /// Only the instances this API token started.
    pub token: Option<i64>,
    /// Lowercase text to find in the title (`LIKE` wildcards in it are escaped here).
    pub search: Option<String>,
}

/// Where a page starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum From {
    Newest,
    /// The ids below this one, newest first.
    Before(i64),
    /// The ids above this one (the page before, going back towards the newest).
    After(i64),
}

#[derive(Clone, Debug, sqlx::FromRow)]
pub struct ListRow {
    pub id: i64,
    pub workflow_id: i64,
    pub subject_title: String,
    #[sqlx(try_from = "String")]
    pub state: InstanceState,
    pub started_by: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
    pub version_id: i64,
    pub step_index: i64,
    pub workflow_name: Option<String>,
    pub workflow_label: Option<String>,
    pub workflow_labels: Option<String>,
}

/// A page, newest first, and where reading on in the same direction starts: the id to pass as
/// `Before` (or `After` for a page read with `After`), `None` when nothing is left that way.
#[derive(Debug)]
pub struct Listed {
    pub rows: Vec<ListRow>,
    pub more: Option<i64>,
}

pub(crate) enum Bind {
    Int(i64),
    Text(String),
}

/// `%text%` with `\`, `%` and `_` escaped for `LIKE ... ESCAPE '\'`.
fn pattern(search: &str) -> String {
    let mut p = String::with_capacity(search.len() + 2);
    p.push('%');
    for c in search.chars() {
        if matches!(c, '\\' | '%' | '_') {
            p.push('\\');
        }
        p.push(c);
    }
    p.push('%');
    p
}

/// The `WHERE` of the filter (without the search), and the binds it numbered.
fn conditions(filter: &Filter, from: From, binds: &mut Vec<Bind>) -> String {
    let mut parts: Vec<String> = Vec::new();
    let next = |b: Bind, binds: &mut Vec<Bind>| {
        binds.push(b);
        format!("${}", binds.len())
    };
    if let Some(ids) = &filter.workflows {
        if ids.is_empty() {
            parts.push("1 = 0".into());
        } else {
            let first = binds.len() + 1;
            binds.extend(ids.iter().map(|id| Bind::Int(*id)));
            parts.push(format!(
                "workflow_id IN ({})",
                super::placeholders(first, ids.len(), 1)
            ));
        }
    }
    if let Some(state) = filter.state {
        let p = next(Bind::Text(state.as_str().into()), binds);
        parts.push(format!("state = {p}"));
    }
    if let Some(by) = filter.started_by {
        let p = next(Bind::Text(by.into()), binds);
        parts.push(format!("started_by = {p}"));
    }
    if let Some(token) = filter.token {
        let p = next(Bind::Int(token), binds);
        parts.push(format!("api_token_id = {p}"));
    }
    match from {
        From::Newest => {}
        From::Before(id) => {
            let p = next(Bind::Int(id), binds);
            parts.push(format!("id < {p}"));
        }
        From::After(id) => {
            let p = next(Bind::Int(id), binds);
            parts.push(format!("id > {p}"));
        }
    }
    if parts.is_empty() {
        "1 = 1".into()
    } else {
        parts.join(" AND ")
    }
}

pub(crate) fn bind_all<'q, O>(
    mut q: sqlx::query::QueryAs<'q, sqlx::Any, O, sqlx::any::AnyArguments<'q>>,
    binds: Vec<Bind>,
) -> sqlx::query::QueryAs<'q, sqlx::Any, O, sqlx::any::AnyArguments<'q>> {
    for b in binds {
        q = match b {
            Bind::Int(v) => q.bind(v),
            Bind::Text(v) => q.bind(v),
        };
    }
    q
}

const ROW: &str = "i.id, i.workflow_id, i.subject_title, i.state, i.started_by, i.created_at, \
     i.updated_at, i.version_id, i.step_index, w.name AS workflow_name, \
     w.label AS workflow_label, w.labels AS workflow_labels";
const INNER: &str = "id, workflow_id, subject_title, state, started_by, created_at, updated_at, \
     version_id, step_index";

/// One page of up to `limit` instances. Without a search, one range read of at most `limit` + 1
/// rows. With one, the matches among the next `SEARCH_WINDOW` filtered rows; when fewer than a
/// page match there, `more` is the window's far end, so the next page searches on from there.
pub async fn page(db: &Db, filter: &Filter, from: From, limit: i64) -> Result<Listed, sqlx::Error> {
    let mut binds = Vec::new();
    let order = if matches!(from, From::After(_)) {
        "ASC"
    } else {
        "DESC"
    };
    let sql = match &filter.search {
        // The page's ids first, then their rows: the ids alone are read from the filter's
        // index (`(state, id)`, …) without visiting the table, so PostgreSQL takes that index.
        // Asked for the rows at once, it priced the filtered rows as spread evenly over the ids
        // and walked the primary key backwards instead: in a year of data the newest instances
        // are the running ones, and a page of an ended state read tens of thousands of rows to
        // find 51 (docs/performance.md, "The list queries at a million instances").
        None => {
            let ids = page_ids(filter, from, order, limit + 1, &mut binds);
            format!(
                "SELECT {ROW} FROM (SELECT {INNER} FROM instances WHERE id IN ({ids})) i \
                 LEFT JOIN workflows w ON w.id = i.workflow_id ORDER BY i.id {order}"
            )
        }
        Some(text) => {
            let cond = conditions(filter, from, &mut binds);
            binds.push(Bind::Int(SEARCH_WINDOW));
            let window = binds.len();
            binds.push(Bind::Text(pattern(text)));
            let like = binds.len();
            binds.push(Bind::Int(limit + 1));
            format!(
                "SELECT {ROW} FROM (SELECT {INNER} FROM instances WHERE {cond} \
                 ORDER BY id {order} LIMIT ${window}) i \
                 LEFT JOIN workflows w ON w.id = i.workflow_id \
                 WHERE LOWER(i.subject_title) LIKE ${like} ESCAPE '\\' \
                 ORDER BY i.id {order} LIMIT ${}",
                binds.len()
            )
        }
    };
    let mut rows: Vec<ListRow> = bind_all(sqlx::query_as(&sql), binds)
        .fetch_all(db.reader())
        .await?;
    let limit = usize::try_from(limit).unwrap_or(0);
    let mut more = None;
    if rows.len() > limit {
        rows.truncate(limit);
        more = rows.last().map(|r| r.id);
    } else if filter.search.is_some() {
        more = window_end(db, filter, from).await?;
    }
    if matches!(from, From::After(_)) {
        rows.reverse();
    }
    Ok(Listed { rows, more })
}

/// Workflows past which a page's ids are read as one statement over the list (see
/// `page_ids`).
const WORKFLOWS_APART: usize = 20;

/// The statement of a page's ids: the filter's `limit` ids from `from`, in `order`. With two
/// workflows or more (an API token whose scope names several), the ids are read workflow by
/// workflow, each through its own index range (`(workflow_id, …, id)`, migration 0019), and
/// the first `limit` of them kept: asked for `workflow_id IN (1, 2)` with a state, PostgreSQL
/// walked the primary key backwards past every running instance instead, a cost that grows
/// with the table (docs/performance.md, "The list queries at a million instances").
fn page_ids(filter: &Filter, from: From, order: &str, limit: i64, binds: &mut Vec<Bind>) -> String {
    let one = |filter: &Filter, binds: &mut Vec<Bind>| {
        let cond = conditions(filter, from, binds);
        binds.push(Bind::Int(limit));
        format!(
            "SELECT id FROM instances WHERE {cond} ORDER BY id {order} LIMIT ${}",
            binds.len()
        )
    };
    match &filter.workflows {
        Some(ids) if ids.len() > 1 && ids.len() <= WORKFLOWS_APART => {
            let branches: Vec<String> = ids
                .iter()
                .enumerate()
                .map(|(n, id)| {
                    let alone = Filter {
                        workflows: Some(vec![*id]),
                        ..filter.clone()
                    };
                    format!("SELECT id FROM ({}) w{n}", one(&alone, binds))
                })
                .collect();
            binds.push(Bind::Int(limit));
            format!(
                "SELECT id FROM ({}) u ORDER BY id {order} LIMIT ${}",
                branches.join(" UNION ALL "),
                binds.len()
            )
        }
        _ => one(filter, binds),
    }
}

/// The last id of a search's window when the window was full (more rows lie beyond it).
async fn window_end(db: &Db, filter: &Filter, from: From) -> Result<Option<i64>, sqlx::Error> {
    let mut binds = Vec::new();
    let cond = conditions(filter, from, &mut binds);
    let (order, edge) = if matches!(from, From::After(_)) {
        ("ASC", "MAX")
    } else {
        ("DESC", "MIN")
    };
    binds.push(Bind::Int(SEARCH_WINDOW));
    let sql = format!(
        "SELECT COUNT(*), {edge}(id) FROM (SELECT id FROM instances WHERE {cond} \
         ORDER BY id {order} LIMIT ${}) i",
        binds.len()
    );
    let (n, edge): (i64, Option<i64>) = bind_all(sqlx::query_as(&sql), binds)
        .fetch_one(db.reader())
        .await?;
    Ok(if n >= SEARCH_WINDOW { edge } else { None })
}

/// How many instances the filter holds, counting at most `cap` + 1 rows (newest first): the
/// rows read, and among them those the search matches (all of them without a search). A count
/// of `cap` + 1 rows means "more than `cap`"; the matches are then a lower bound.
pub async fn count(db: &Db, filter: &Filter, cap: i64) -> Result<(i64, i64), sqlx::Error> {
    let mut binds = Vec::new();
    let cond = conditions(filter, From::Newest, &mut binds);
    let sql = match &filter.search {
        None => {
            binds.push(Bind::Int(cap + 1));
            format!(
                "SELECT COUNT(*), COUNT(*) FROM (SELECT id FROM instances WHERE {cond} \
                 LIMIT ${}) i",
                binds.len()
            )
        }
        Some(text) => {
            binds.push(Bind::Int(cap + 1));
            let window = binds.len();
            binds.push(Bind::Text(pattern(text)));
            format!(
                "SELECT COUNT(*), COALESCE(SUM(CASE WHEN LOWER(subject_title) LIKE ${} \
                 ESCAPE '\\' THEN 1 ELSE 0 END), 0) FROM (SELECT subject_title FROM instances \
                 WHERE {cond} ORDER BY id DESC LIMIT ${window}) i",
                binds.len()
            )
        }
    };
    bind_all(sqlx::query_as(&sql), binds)
        .fetch_one(db.reader())
        .await
}

/// What a page's running instances wait on, read for the page's ids at once: when each was
/// asked its current step (the latest move onto a step, as `history::step_asked` reads it), the
/// branches that have answered that step in this round, and the participants' names on file.
#[derive(Debug, Default)]
pub struct Waits {
    pub since: Vec<(i64, i64)>,
    pub answered: Vec<(i64, String)>,
    /// `(instance, participant, name)`.
    pub names: Vec<(i64, String, String)>,
}

/// Three reads over the page's ids, each through an index by instance (the history's
/// `(instance_id, step_index)`, the contacts' key): a page of 50 running instances reads their
/// lines, a few dozen each, never the table.
pub async fn waits(db: &Db, ids: &[i64]) -> Result<Waits, sqlx::Error> {
    if ids.is_empty() {
        return Ok(Waits::default());
    }
    let list = super::placeholders(1, ids.len(), 1);
    let since = format!(
        "SELECT h.instance_id, MAX(h.at) FROM history h \
         JOIN instances i ON i.id = h.instance_id WHERE h.instance_id IN ({list}) \
         AND h.event IN ('started', 'answered', 'step_expired', 'skipped', 'reopened') \
         AND NOT (h.event = 'answered' AND h.step_index = i.step_index AND h.round = i.round) \
         GROUP BY h.instance_id"
    );
    let answered = format!(
        "SELECT h.instance_id, h.branch FROM history h \
         JOIN instances i ON i.id = h.instance_id WHERE h.instance_id IN ({list}) \
         AND h.step_index = i.step_index AND h.round = i.round AND h.event = 'answered'"
    );
    let names = format!(
        "SELECT instance_id, participant, name FROM contacts WHERE instance_id IN ({list})"
    );
    let reader = db.reader();
    let (since, answered, names) = tokio::try_join!(
        for_ids(sqlx::query_as(&since), ids).fetch_all(reader),
        for_ids(sqlx::query_as(&answered), ids).fetch_all(reader),
        for_ids(sqlx::query_as(&names), ids).fetch_all(reader),
    )?;
    Ok(Waits {
        since,
        answered,
        names,
    })
}

fn for_ids<'q, O>(
    mut q: sqlx::query::QueryAs<'q, sqlx::Any, O, sqlx::any::AnyArguments<'q>>,
    ids: &[i64],
) -> sqlx::query::QueryAs<'q, sqlx::Any, O, sqlx::any::AnyArguments<'q>> {
    for id in ids {
        q = q.bind(*id);
    }
    q
}

/// Up to `limit` running instances with an id above `after`, by id: a walk over all of them a
/// batch at a time (the `instances_state_id` index).
pub async fn running_after(
    db: &Db,
    after: i64,
    limit: i64,
) -> Result<Vec<super::instances::InstanceRow>, sqlx::Error> {
    let query = format!(
        "SELECT {} FROM instances WHERE state = 'active' AND id > $1 ORDER BY id LIMIT $2",
        super::instances::COLUMNS
    );
    sqlx::query_as(&query)
        .bind(after)
        .bind(limit)
        .fetch_all(db.reader())
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_search_is_a_literal_substring() {
        assert_eq!(pattern("50%_a\\b"), "%50\\%\\_a\\\\b%");
    }

    #[test]
    fn every_value_is_bound_and_numbered_in_order() {
        let mut binds = Vec::new();
        let filter = Filter {
            workflows: Some(vec![3, 4]),
            state: Some(InstanceState::Active),
            started_by: Some("cli"),
            token: Some(9),
            search: None,
        };
        let sql = conditions(&filter, From::Before(77), &mut binds);
        assert_eq!(
            sql,
            "workflow_id IN ($1, $2) AND state = $3 AND started_by = $4 AND api_token_id = $5 \
             AND id < $6"
        );
        assert_eq!(binds.len(), 6);
    }
}
