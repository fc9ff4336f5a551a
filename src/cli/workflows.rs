//! `workflow create|save|show`: definitions kept as files (in version control, say), read from
//! a file or standard input and checked as the admin editor checks them.

use std::io::Read;

use super::Out;
use crate::domain::workflow::edit::{self, Draft, Problems, Refusal};
use crate::domain::workflow::{Definition, labels};
use crate::error::Refusable;
use crate::i18n::{Lang, Message};
use crate::store::{self, Db, workflows::Saved};

/// The most a definition read from a file or standard input may hold: far past what a
/// definition may be (`workflow::MAX_DEFINITION_CHARS`), which the check then refuses with its
/// own words.
const MAX_READ: u64 = 1 << 20;

/// The labels given on the command line: `--label` and each `--label-in LANG=LABEL`.
pub(super) struct Labels<'a> {
    pub label: Option<&'a str>,
    pub labels_in: &'a [String],
}

/// Makes a workflow from a definition (`create`), or saves a workflow's definition, a new
/// version when it changed, and its labels when given (a label in another language not given
/// is kept; `--label-in fr=` clears it).
pub(super) async fn put(
    out: &Out,
    db: &Db,
    name: &str,
    given: Labels<'_>,
    file: Option<&str>,
    create: bool,
) -> Result<i32, crate::error::Error> {
    let label = given.label;
    let row = match create {
        true => None,
        false => match store::workflows::by_name(db, name).await? {
            Some(row) => Some(row),
            None => return Ok(unknown(out, name)),
        },
    };
    let Some(label) = label.or(row.as_ref().map(|r| r.label.as_str())) else {
        return Ok(out.err(Message::new("cli-workflow-label-required")));
    };
    let kept = row
        .as_ref()
        .map_or_else(Vec::new, |r| labels::read(&r.labels));
    let others = match labels_in(kept, given.labels_in) {
        Ok(others) => others,
        Err(m) => return Ok(out.err(m)),
    };
    let definition = match read_definition(file) {
        Ok(text) => text,
        Err(m) => return Ok(out.err(m)),
    };
    let draft = Draft {
        name,
        label,
        labels: (create || !given.labels_in.is_empty()).then_some(others.as_slice()),
        definition: &definition,
    };
    let workflow = || name.to_owned();
    let done = match &row {
        None => edit::create(db, &draft)
            .await
            .map(|_| Message::new("cli-workflow-created").arg("workflow", workflow())),
        Some(row) => edit::save(db, row.id, &draft)
            .await
            .map(|saved| match saved {
                Saved::Version(number) => Message::new("cli-workflow-saved")
                    .arg("workflow", workflow())
                    .arg("version", number.to_string()),
                _ => Message::new("cli-workflow-unchanged").arg("workflow", workflow()),
            }),
    };
    match done {
        Ok(said) => {
            println!("{}", said.render(out.lang));
            Ok(0)
        }
        Err(e) => refused(out, name, e),
    }
}

/// Prints a workflow's newest definition in the line format, as `save` reads it back.
pub(super) async fn show(out: &Out, db: &Db, name: &str) -> Result<i32, crate::error::Error> {
    let Some(row) = store::workflows::by_name(db, name).await? else {
        return Ok(unknown(out, name));
    };
    let definition = Definition::from_json(&row.definition).ok_or(crate::error::Error::Corrupt(
        "a workflow version's definition",
    ))?;
    print!("{}", definition.to_text());
    Ok(0)
}

/// The labels in other languages: those kept, with each `LANG=LABEL` given set over them.
fn labels_in(
    mut kept: Vec<(Lang, String)>,
    given: &[String],
) -> Result<Vec<(Lang, String)>, Message> {
    for pair in given {
        let (code, label) = pair.split_once('=').unwrap_or((pair, ""));
        let lang = Lang::from_code(code)
            .filter(|l| labels::others().any(|o| o == *l) && pair.contains('='))
            .ok_or_else(|| {
                let codes: Vec<&str> = labels::others().map(Lang::code).collect();
                Message::new("cli-workflow-label-in-invalid")
                    .arg("given", code.to_owned())
                    .arg("languages", codes.join(", "))
            })?;
        kept.retain(|(l, _)| *l != lang);
        kept.push((lang, label.to_owned()));
    }
    Ok(kept)
}

fn unknown(out: &Out, name: &str) -> i32 {
    out.err(Message::new("cli-workflow-unknown").arg("workflow", name.to_owned()))
}

/// Says why nothing was made or saved, each problem on a line of its own; a failure is handed
/// on.
fn refused(out: &Out, name: &str, e: Refusable<Refusal>) -> Result<i32, crate::error::Error> {
    Ok(match e.refusal()? {
        Refusal::Invalid(problems) => say_problems(out, problems),
        Refusal::NameTaken => {
            out.err(Message::new("cli-workflow-name-taken").arg("workflow", name.to_owned()))
        }
        Refusal::NotFound => unknown(out, name),
    })
}

fn say_problems(out: &Out, problems: Problems) -> i32 {
    let mut code = 0;
    for (_, message) in problems {
        code = out.err(message);
    }
    code
}

/// The definition's text from `file`, else standard input.
fn read_definition(file: Option<&str>) -> Result<String, Message> {
    let mut text = String::new();
    let read = match file {
        Some(path) => {
            std::fs::File::open(path).and_then(|f| f.take(MAX_READ + 1).read_to_string(&mut text))
        }
        None => std::io::stdin()
            .take(MAX_READ + 1)
            .read_to_string(&mut text),
    };
    let from = file.unwrap_or("-").to_owned();
    match read {
        Ok(n) if n as u64 > MAX_READ => {
            Err(Message::new("cli-workflow-file-too-large").arg("file", from))
        }
        Ok(_) => Ok(text),
        Err(e) => Err(Message::new("cli-workflow-file-unreadable")
            .arg("file", from)
            .arg("error", e.to_string())),
    }
}
