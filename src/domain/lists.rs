//! The instance list as every edge reads it (the admin page, the API, the CLI): a filter from
//! what was typed, a page newest first with where the next starts, a total that stays cheap at a
//! million instances, and the opaque cursor the API hands out.

pub mod csv;

use std::collections::HashMap;

use crate::domain::api::scope::{Reach, Scope};
use crate::domain::workflow::InstanceState;
use crate::domain::workflow::history::Actor;
use crate::domain::workflow::versions::Cache;
use crate::error::Error;
use crate::i18n::Message;
use crate::store::{self, Db};

pub use crate::store::lists::{Filter, From, ListRow, Listed, SEARCH_WINDOW};

/// A page of the admin list and the API's default.
pub const PAGE: i64 = 50;
/// The API's largest page.
pub const MAX_PAGE: i64 = 200;
/// A total is counted exactly up to this many; beyond, it is "more than" this.
pub const COUNT_CAP: i64 = 10_000;
/// A search's text is cut to this many characters.
pub const MAX_SEARCH: usize = 200;

/// Who started an instance, as the list filters by it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Starter {
    Admin,
    CommandLine,
    Api,
}

impl Starter {
    pub const ALL: [Starter; 3] = [Starter::Admin, Starter::CommandLine, Starter::Api];

    /// As `instances.started_by` stores it, and as URLs and the CLI name it.
    pub fn as_str(self) -> &'static str {
        match self {
            Starter::Admin => "admin",
            Starter::CommandLine => "cli",
            Starter::Api => "api",
        }
    }

    pub fn parse(word: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == word)
    }

    pub fn message_id(self) -> &'static str {
        match self {
            Starter::Admin => "started-by-admin",
            Starter::CommandLine => "started-by-cli",
            Starter::Api => "started-by-api",
        }
    }

    pub fn of(actor: &Actor) -> Self {
        match actor {
            Actor::Admin(_) => Starter::Admin,
            // The email sender, a deadline and a forward start nothing; were they to, they are
            // no person at a page.
            Actor::CommandLine | Actor::Mail | Actor::Deadline | Actor::Forward(_) => {
                Starter::CommandLine
            }
            Actor::Api(_) => Starter::Api,
        }
    }
}

/// A state as a filter names it.
pub fn parse_state(word: &str) -> Option<InstanceState> {
    InstanceState::ALL.into_iter().find(|s| s.as_str() == word)
}

/// The text searched for: trimmed, cut to `MAX_SEARCH` characters, lowercased (the store
/// compares with `LOWER(title)`); `None` when blank.
pub fn search_text(raw: &str) -> Option<String> {
    let text: String = raw.trim().chars().take(MAX_SEARCH).collect();
    (!text.is_empty()).then(|| text.to_lowercase())
}

/// A filter with the parts each edge reads from its input.
pub fn filter(
    workflow: Option<i64>,
    state: Option<InstanceState>,
    started_by: Option<Starter>,
    search: Option<&str>,
) -> Filter {
    Filter {
        workflows: workflow.map(|w| vec![w]),
        state,
        started_by: started_by.map(Starter::as_str),
        token: None,
        search: search.and_then(search_text),
    }
}

/// Narrows a filter to what an API token reaches: its own instances unless it reaches all, and
/// only the workflows its scope covers.
pub async fn within_scope(
    db: &Db,
    scope: &Scope,
    token: i64,
    mut filter: Filter,
) -> Result<Filter, sqlx::Error> {
    if scope.reach == Reach::Own {
        filter.token = Some(token);
    }
    if scope.workflows.is_some() {
        let covered: Vec<i64> = store::workflows::list(db)
            .await?
            .into_iter()
            .filter(|w| scope.covers(&w.name))
            .map(|w| w.id)
            .collect();
        filter.workflows = Some(match filter.workflows {
            Some(asked) => asked.into_iter().filter(|w| covered.contains(w)).collect(),
            None => covered,
        });
    }
    Ok(filter)
}

/// A workflow's id by its machine name (the API and the CLI name workflows so); an unknown
/// name is a filter matching nothing.
pub async fn workflow_ids(db: &Db, name: &str) -> Result<Vec<i64>, sqlx::Error> {
    Ok(store::workflows::by_name(db, name)
        .await?
        .map(|w| w.id)
        .into_iter()
        .collect())
}

pub async fn page(db: &Db, filter: &Filter, from: From, limit: i64) -> Result<Listed, sqlx::Error> {
    store::lists::page(db, filter, from, limit.clamp(1, MAX_PAGE)).await
}

/// Who a running instance waits on, and since when: the participants of its current step who
/// have not answered it in this round (by their name on file, with the role), and when the step
/// was asked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Waiting {
    pub who: Vec<String>,
    pub since: Option<i64>,
}

impl Waiting {
    /// The people as one line: `Rosa Diaz (reviewer), finance`.
    pub fn who_text(&self) -> String {
        self.who.join(", ")
    }
}

/// What each running instance of a page waits on (ended ones are left out): three reads for the
/// whole page (`store::lists::waits`), the steps from the versions' cache.
pub async fn waiting(
    db: &Db,
    versions: &Cache,
    rows: &[ListRow],
) -> Result<HashMap<i64, Waiting>, Error> {
    let running: Vec<&ListRow> = rows.iter().filter(|r| !r.state.is_over()).collect();
    let ids: Vec<i64> = running.iter().map(|r| r.id).collect();
    let waits = store::lists::waits(db, &ids).await?;
    let mut out = HashMap::with_capacity(running.len());
    for row in running {
        let definition = versions.get(db, row.version_id).await?;
        let Some(step) = usize::try_from(row.step_index)
            .ok()
            .and_then(|i| definition.steps.get(i))
        else {
            continue;
        };
        let answered = |branch: &str| {
            waits
                .answered
                .iter()
                .any(|(id, b)| *id == row.id && b == branch)
        };
        let who = step
            .participants()
            .iter()
            .filter(|p| !answered(step.branch_of(p).unwrap_or_default()))
            .map(|p| {
                let name = waits
                    .names
                    .iter()
                    .find(|(id, who, name)| *id == row.id && who == p.as_str() && !name.is_empty())
                    .map(|(_, _, name)| name.as_str());
                match name {
                    Some(name) => format!("{name} ({p})"),
                    None => p.as_str().to_owned(),
                }
            })
            .collect();
        let since = waits
            .since
            .iter()
            .find(|(id, _)| *id == row.id)
            .map(|(_, at)| *at);
        out.insert(row.id, Waiting { who, since });
    }
    Ok(out)
}

/// A page of an instance's history: up to `limit` lines older than `before` (the newest when
/// `None`), oldest first as a history reads, and the id to read older ones from.
#[derive(Debug)]
pub struct HistoryPage {
    pub lines: Vec<store::instances::HistoryRow>,
    pub older: Option<i64>,
    pub total: i64,
}

pub async fn history(
    db: &Db,
    instance: i64,
    before: Option<i64>,
    limit: i64,
) -> Result<HistoryPage, sqlx::Error> {
    let page: store::InstancePage<store::instances::HistoryLine> =
        store::page_of_instance(db, instance, before, limit).await?;
    Ok(HistoryPage {
        lines: page.rows.into_iter().rev().map(|h| h.line).collect(),
        older: page.older,
        total: page.total,
    })
}

/// How many instances a filter holds, as far as it is cheap to know.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Total {
    Exact(u64),
    /// More than `COUNT_CAP` without a search.
    MoreThan(u64),
    /// With a search over more than `COUNT_CAP` instances: this many matched among the newest.
    AtLeast(u64),
}

impl Total {
    pub fn message(self) -> Message {
        let (id, n) = match self {
            Total::Exact(n) => ("instances-total", n),
            Total::MoreThan(n) => ("instances-total-more", n),
            Total::AtLeast(n) => ("instances-total-at-least", n),
        };
        Message::new(id).arg("count", n.to_string())
    }
}

pub async fn total(db: &Db, filter: &Filter) -> Result<Total, sqlx::Error> {
    let (rows, matches) = store::lists::count(db, filter, COUNT_CAP).await?;
    let n = |v: i64| u64::try_from(v).unwrap_or(0);
    Ok(if rows <= COUNT_CAP {
        Total::Exact(n(matches))
    } else if filter.search.is_none() {
        Total::MoreThan(n(COUNT_CAP))
    } else {
        Total::AtLeast(n(matches))
    })
}

/// The API's cursor: opaque to callers (they pass back what they were given), here the hex of
/// `b<id>` so that a typed number is not one.
pub fn cursor(id: i64) -> String {
    hex::encode(format!("b{id}"))
}

/// Every cursor [`parse_cursor`] takes, and no other text, as the API's description states it:
/// the lower-case hex of `b` and an id of 1 to 18 digits without a leading zero.
pub const CURSOR_PATTERN: &str = "^623[1-9](3[0-9]){0,17}$";

/// The id of a cursor [`cursor`] wrote, and nothing else: not the same id spelt another way
/// (a leading zero or `+`), so that what is taken is what [`CURSOR_PATTERN`] says.
pub fn parse_cursor(text: &str) -> Option<i64> {
    let bytes = hex::decode(text).ok()?;
    let text_read = std::str::from_utf8(&bytes).ok()?;
    text_read
        .strip_prefix('b')?
        .parse::<i64>()
        .ok()
        .filter(|id| (1..1_000_000_000_000_000_000).contains(id) && cursor(*id) == text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_reads_back_and_nothing_else_reads_as_one() {
        assert_eq!(parse_cursor(&cursor(42)), Some(42));
        let max = 999_999_999_999_999_999;
        assert_eq!(parse_cursor(&cursor(max)), Some(max));
        for bad in [
            "",
            "42",
            "zz",
            &hex::encode("b-1"),
            &hex::encode("x42"),
            &hex::encode("b042"),
            &hex::encode("b+42"),
            &cursor(max + 1),
        ] {
            assert_eq!(parse_cursor(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_search_is_trimmed_cut_and_lowercased() {
        assert_eq!(search_text("  Order 7 "), Some("order 7".into()));
        assert_eq!(search_text("   "), None);
        assert_eq!(
            search_text(&"a".repeat(500)).map(|s| s.len()),
            Some(MAX_SEARCH)
        );
    }
}
