//! The instance list as CSV (RFC 4180), for the admin list's *Download CSV* and
//! `orchestra instance list --format csv`: every instance the filter holds, a page at a time
//! (keyset, as the list pages), with who each running one waits on and since when.
//!
//! The header names are fixed words so a script reads the same columns whatever the language;
//! the workflow's label is in the reader's language. Times are ISO 8601 in UTC.

use super::{From, ListRow, Waiting};
use crate::domain::workflow::labels::maybe_label_in;
use crate::domain::workflow::versions::Cache;
use crate::error::Error;
use crate::i18n::Lang;
use crate::store::Db;
use crate::store::lists::Filter;

/// Rows read per page of the export.
pub const PAGE: i64 = 500;

pub const HEADER: &str = "id,workflow,subject,state,started_by,started_at,updated_at,\
                          waiting_on,waiting_since\r\n";

/// One page of the export from `from`: its lines, and where the next page starts.
pub async fn page(
    db: &Db,
    versions: &Cache,
    filter: &Filter,
    from: From,
    lang: Lang,
) -> Result<(String, Option<i64>), Error> {
    let listed = crate::store::lists::page(db, filter, from, PAGE).await?;
    let waiting = super::waiting(db, versions, &listed.rows).await?;
    let mut out = String::with_capacity(listed.rows.len() * 120);
    for row in &listed.rows {
        line(&mut out, row, waiting.get(&row.id), lang);
    }
    Ok((out, listed.more))
}

fn line(out: &mut String, row: &ListRow, waiting: Option<&Waiting>, lang: Lang) {
    let workflow = maybe_label_in(
        row.workflow_label.as_deref(),
        row.workflow_labels.as_deref(),
        lang,
    )
    .or_else(|| row.workflow_name.clone())
    .unwrap_or_default();
    let cells = [
        row.id.to_string(),
        workflow,
        row.subject_title.clone(),
        row.state.as_str().to_owned(),
        row.started_by.clone().unwrap_or_default(),
        crate::time::format_iso(row.created_at),
        crate::time::format_iso(row.updated_at),
        waiting.map(Waiting::who_text).unwrap_or_default(),
        waiting
            .and_then(|w| w.since)
            .map(crate::time::format_iso)
            .unwrap_or_default(),
    ];
    for (n, cell) in cells.iter().enumerate() {
        if n > 0 {
            out.push(',');
        }
        push_cell(out, cell);
    }
    out.push_str("\r\n");
}

/// A cell as RFC 4180 quotes it. A cell a spreadsheet would read as a formula (`=`, `+`, `-`,
/// `@`, a tab or a carriage return first: a title an API client chose) gets a leading `'`, as
/// OWASP's "CSV injection" advises, so opening the file runs nothing.
pub(crate) fn push_cell(out: &mut String, cell: &str) {
    let formula = cell.starts_with(['=', '+', '-', '@', '\t', '\r']);
    let quoted = formula || cell.contains([',', '"', '\n', '\r']);
    if quoted {
        out.push('"');
    }
    if formula {
        out.push('\'');
    }
    for c in cell.chars() {
        if c == '"' {
            out.push('"');
        }
        out.push(c);
    }
    if quoted {
        out.push('"');
    }
}

#[cfg(test)]
mod tests {
    use super::push_cell;

    fn cell(text: &str) -> String {
        let mut out = String::new();
        push_cell(&mut out, text);
        out
    }

    #[test]
    fn cells_are_quoted_as_rfc_4180_says() {
        assert_eq!(cell("plain"), "plain");
        assert_eq!(cell("a, b"), "\"a, b\"");
        assert_eq!(cell("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(cell("two\nlines"), "\"two\nlines\"");
    }

    #[test]
    fn a_formula_is_never_a_formula() {
        for bad in ["=HYPERLINK(\"x\")", "+1", "-2+3", "@SUM(A1)", "\tx"] {
            let out = cell(bad);
            assert!(out.starts_with("\"'"), "{out}");
        }
        assert_eq!(cell("1250.5"), "1250.5");
    }
}
