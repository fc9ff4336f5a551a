//! `orchestra audit list`: the audit log newest first, as a table, CSV or JSON, with the
//! admin page's filters.

use std::io::Write;

use super::Out;
use crate::cli::args::AuditArgs;
use crate::domain::audit;
use crate::i18n::Message;
use crate::store::{self, Db};

/// Events a table shows unless `--limit` says otherwise; the most `--limit` takes.
const PAGE: i64 = 50;
const MAX: i64 = 10_000;
/// Rows read per page while an export walks the whole log.
const EXPORT_PAGE: i64 = 500;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    Text,
    Csv,
    Json,
}

fn number(out: &Out, option: &str, value: Option<&str>) -> Result<Option<i64>, i32> {
    match value {
        None => Ok(None),
        Some(v) => match v
            .trim()
            .parse::<i64>()
            .ok()
            .filter(|n| (1..=MAX).contains(n))
        {
            Some(n) => Ok(Some(n)),
            None => Err(out.err(
                Message::new("cli-audit-bad-number")
                    .arg("option", option.to_owned())
                    .arg("value", v.to_owned()),
            )),
        },
    }
}

pub(super) async fn audit_list(out: &Out, db: &Db, args: &AuditArgs) -> Result<i32, sqlx::Error> {
    let format = match args.format.as_deref().unwrap_or("text") {
        "text" => Format::Text,
        "csv" => Format::Csv,
        "json" => Format::Json,
        other => {
            return Ok(
                out.err(Message::new("cli-audit-bad-format").arg("format", other.to_owned()))
            );
        }
    };
    let filter = match audit::filter(
        args.kind.as_deref(),
        args.who.as_deref(),
        args.from.as_deref(),
        args.to.as_deref(),
    ) {
        Ok(f) => f,
        Err(m) => return Ok(out.err(m)),
    };
    let (limit, before) = match (
        number(out, "--limit", args.limit.as_deref()),
        args.before.as_deref().map(|b| b.trim().parse::<i64>()),
    ) {
        (Err(code), _) => return Ok(code),
        (_, Some(Err(_))) => return Ok(out.err(Message::new("cli-before-invalid"))),
        (Ok(limit), before) => (limit, before.and_then(Result::ok)),
    };
    if format == Format::Text {
        let (rows, more) = store::audit::page(db, &filter, before, limit.unwrap_or(PAGE)).await?;
        let t = |id: &'static str| Message::new(id).render(out.lang);
        println!(
            "#\t{}\t{}\t{}\t{}\t{}",
            t("audit-at"),
            t("audit-kind"),
            t("audit-who"),
            t("audit-address"),
            t("audit-detail")
        );
        for r in &rows {
            let who = r.actor_name.as_deref().unwrap_or("-");
            let address = r
                .address
                .as_deref()
                .and_then(|a| a.get(..12))
                .unwrap_or("-");
            let detail = audit::describe(&r.detail);
            let at = crate::time::format_utc(r.at);
            println!("{}\t{at}\t{}\t{who}\t{address}\t{detail}", r.id, r.kind);
        }
        if let Some(id) = more {
            eprintln!(
                "{}",
                Message::new("cli-audit-more")
                    .arg("id", id.to_string())
                    .render(out.lang)
            );
        }
        return Ok(0);
    }
    // An export: every event the filter holds (or `--limit` of them), a page at a time.
    let mut stdout = std::io::stdout().lock();
    let mut left = limit.unwrap_or(i64::MAX);
    let mut from = before;
    let mut first = true;
    let mut text = String::new();
    text.push_str(if format == Format::Csv {
        audit::CSV_HEADER
    } else {
        "["
    });
    loop {
        let (rows, more) = store::audit::page(db, &filter, from, left.min(EXPORT_PAGE)).await?;
        for r in &rows {
            if format == Format::Csv {
                audit::csv_line(&mut text, r);
            } else {
                if !first {
                    text.push(',');
                }
                text.push_str(&audit::json_of(r).to_string());
            }
            first = false;
        }
        left -= rows.len() as i64;
        if stdout.write_all(text.as_bytes()).is_err() {
            return Ok(0);
        }
        text.clear();
        match more {
            Some(id) if left > 0 => from = Some(id),
            _ => break,
        }
    }
    if format == Format::Json {
        let _ = stdout.write_all(b"]\n");
    }
    Ok(0)
}
