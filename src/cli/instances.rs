//! The `workflow`, `instance` and `link` commands: the workflows, their instances, and the
//! participants' links.

use super::Out;
use crate::domain::settings::Settings;
use crate::i18n::Message;
use crate::store::{self, Db};

pub(super) async fn workflow_list(db: &Db) -> Result<i32, sqlx::Error> {
    for w in store::workflows::list(db).await? {
        let steps = crate::domain::workflow::Definition::from_json(&w.definition)
            .map_or(0, |d| d.steps.len());
        println!("{}\t{}\t{}\t{steps}\t{}", w.id, w.name, w.label, w.version);
    }
    Ok(0)
}

pub(super) async fn instance_start(
    out: &Out,
    db: &Db,
    workflow: &str,
    subject: Option<&str>,
    body: Option<&str>,
    contacts: &[crate::domain::mail::ContactInput],
    mailer_set: bool,
) -> Result<i32, sqlx::Error> {
    let row = match workflow.parse::<i64>() {
        Ok(id) => store::workflows::by_id(db, id).await?,
        Err(_) => store::workflows::by_name(db, workflow).await?,
    };
    let Some(row) = row else {
        return Ok(
            out.err(Message::new("cli-workflow-unknown").arg("workflow", workflow.to_owned()))
        );
    };
    let subject = subject.map_or_else(|| row.label.clone(), str::to_owned);
    let body = body.unwrap_or("");
    let by = crate::domain::instance::Actor::CommandLine;
    let order = crate::domain::instance::Start {
        body,
        contacts,
        ..crate::domain::instance::Start::new(row.id, &subject, &by)
    };
    match crate::domain::instance::start(db, &order).await {
        Ok(id) => {
            println!("{id}");
            // Without an SMTP server the emails would wait without a word: said, on stderr so
            // that a script reading the id is not misled.
            if !mailer_set && contacts.iter().any(|c| !c.email.trim().is_empty()) {
                eprintln!("{}", Message::new("cli-mail-unsent").render(out.lang));
            }
            // A step asking for an emailed code of someone with no address cannot be answered.
            let versions = crate::domain::workflow::versions::Cache::default();
            let unverifiable = crate::domain::interaction::code::without_address(db, &versions, id);
            for (who, step) in unverifiable.await.unwrap_or_default() {
                let warning = Message::new("cli-code-unverifiable")
                    .arg("participant", who)
                    .arg("step", step.to_string());
                eprintln!("{}", warning.render(out.lang));
            }
            Ok(0)
        }
        Err(crate::domain::instance::InstanceError::Failed(e)) => Ok(out.fail(e)),
        Err(crate::domain::instance::InstanceError::Refused(errors)) => {
            // Every refusal, a line each; a contact's names its participant.
            let mut code = 2;
            for r in &errors {
                let message = match r.contact_of() {
                    Some(who) => Message::new("cli-contact-refused")
                        .arg("participant", who.to_owned())
                        .arg("reason", r.message().render(out.lang)),
                    None => r.message(),
                };
                code = out.err(message);
            }
            Ok(code)
        }
    }
}

/// The contacts `--contact P=EMAIL`, `--contact-name P=NAME` and `--contact-lang P=LANG`
/// give, one per participant; the first argument that is not `P=…` when one is not.
pub(super) fn contacts_of(
    emails: &[String],
    names: &[String],
    langs: &[String],
) -> Result<Vec<crate::domain::mail::ContactInput>, String> {
    let mut out: Vec<crate::domain::mail::ContactInput> = Vec::new();
    for (list, part) in [(emails, 0), (names, 1), (langs, 2)] {
        for given in list {
            let Some((who, value)) = given.split_once('=') else {
                return Err(given.chars().take(80).collect());
            };
            let who = who.trim();
            let at = match out.iter().position(|c| c.participant == who) {
                Some(i) => i,
                None => {
                    out.push(crate::domain::mail::ContactInput {
                        participant: who.to_owned(),
                        ..Default::default()
                    });
                    out.len() - 1
                }
            };
            let c = &mut out[at];
            match part {
                0 => c.email = value.to_owned(),
                1 => c.name = value.to_owned(),
                _ => c.lang = value.to_owned(),
            }
        }
    }
    // A name or language without an address is no contact: said, rather than dropped.
    if let Some(c) = out.iter().find(|c| c.email.trim().is_empty()) {
        return Err(format!("--contact {}=…", c.participant));
    }
    Ok(out)
}

/// `link issue --send`: the participant's link is emailed (queued; the sender signs it).
pub(super) async fn link_send(
    out: &Out,
    db: &Db,
    instance: &str,
    participant: Option<&str>,
) -> Result<i32, sqlx::Error> {
    let Ok(instance) = instance.parse::<i64>() else {
        return Ok(out.err(Message::new("link-instance-unknown").arg("id", instance.to_owned())));
    };
    let versions = crate::domain::workflow::versions::Cache::default();
    match crate::domain::instance::send(db, &versions, instance, participant.unwrap_or(""), None)
        .await
    {
        Ok(()) => {
            eprintln!("{}", Message::new("link-sent").render(out.lang));
            Ok(0)
        }
        Err(e) => Ok(refused_or_failed(out, e)),
    }
}

pub(super) async fn link_issue(
    out: &Out,
    db: &Db,
    instance: &str,
    participant: Option<&str>,
    ttl: Option<&str>,
) -> Result<i32, sqlx::Error> {
    let Ok(instance) = instance.parse::<i64>() else {
        return Ok(out.err(Message::new("link-instance-unknown").arg("id", instance.to_owned())));
    };
    let settings = Settings::load(db).await?;
    let participant = participant.unwrap_or("");
    let ttl = match ttl {
        None => settings.default_link_ttl,
        Some(t) => match crate::time::parse_duration(t) {
            Some(t) => t,
            None => return Ok(out.err(crate::domain::instance::Refusal::TtlInvalid.message())),
        },
    };
    let keys = store::keys::load_or_create(db).await?;
    let order = crate::domain::instance::Order {
        participant,
        ttl,
        now: store::now(),
        by: &crate::domain::instance::Actor::CommandLine,
        daily_cap: None,
    };
    let versions = crate::domain::workflow::versions::Cache::default();
    match crate::domain::instance::issue(db, &versions, &keys, &settings.base_url, instance, &order)
        .await
    {
        Ok(issued) => {
            println!("{}", issued.url);
            Ok(0)
        }
        Err(e) => Ok(refused_or_failed(out, e)),
    }
}

/// An instance operation's refusal said (exit 2), or its failure (exit 1).
fn refused_or_failed(out: &Out, e: crate::domain::instance::InstanceError) -> i32 {
    match e.refusal() {
        Ok(refusal) => out.err(refusal.message()),
        Err(failure) => out.fail(failure),
    }
}

/// A word as a shell reads it back unchanged: bare when it is plain, else single-quoted.
fn shell_word(word: &str) -> String {
    if !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'/'))
    {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// `orchestra instance list`: a page of instances newest first as a table on standard output;
/// the total and the command for the next page on standard error, so the table stays readable
/// by a script.
/// `instance list --format csv`: every instance the filters hold from `from` on, a page at a
/// time, to standard output.
async fn instance_csv(
    out: &Out,
    db: &Db,
    filter: &crate::domain::lists::Filter,
    mut from: crate::domain::lists::From,
) -> Result<i32, sqlx::Error> {
    use crate::domain::lists::{self, csv};
    use std::io::Write;
    let versions = crate::domain::workflow::versions::Cache::default();
    let mut stdout = std::io::stdout().lock();
    let mut write = |text: &str| stdout.write_all(text.as_bytes()).is_ok();
    if !write(csv::HEADER) {
        return Ok(1);
    }
    loop {
        let (text, more) = match csv::page(db, &versions, filter, from, out.lang).await {
            Ok(page) => page,
            Err(crate::error::Error::Db(e)) => return Err(e),
            Err(e) => {
                tracing::error!(error = %e, "the export stopped");
                return Ok(1);
            }
        };
        // A closed pipe (`| head`) ends the export quietly.
        if !write(&text) {
            return Ok(0);
        }
        match more {
            Some(id) => from = lists::From::Before(id),
            None => return Ok(0),
        }
    }
}

pub(super) async fn instance_list(
    out: &Out,
    db: &Db,
    args: &crate::cli::args::ListArgs,
) -> Result<i32, sqlx::Error> {
    use crate::domain::lists;
    let csv = match args.format.as_deref().unwrap_or("text") {
        "text" => false,
        "csv" => true,
        other => return Ok(out.err(Message::new("cli-bad-format").arg("format", other.to_owned()))),
    };
    let state = match args.state.as_deref() {
        None => None,
        Some(word) => match lists::parse_state(word) {
            Some(s) => Some(s),
            None => {
                return Ok(out.err(Message::new("cli-state-unknown").arg("state", word.to_owned())));
            }
        },
    };
    let limit = match args.limit.as_deref() {
        None => lists::PAGE,
        Some(n) => match n
            .parse::<i64>()
            .ok()
            .filter(|n| (1..=lists::MAX_PAGE).contains(n))
        {
            Some(n) => n,
            None => {
                return Ok(out.err(
                    Message::new("cli-limit-invalid").arg("max", lists::MAX_PAGE.to_string()),
                ));
            }
        },
    };
    let from = match args.before.as_deref() {
        None => lists::From::Newest,
        Some(id) => match id.parse::<i64>().ok().filter(|id| *id > 0) {
            Some(id) => lists::From::Before(id),
            None => return Ok(out.err(Message::new("cli-before-invalid"))),
        },
    };
    let mut filter = lists::filter(None, state, None, args.search.as_deref());
    if let Some(name) = args.workflow.as_deref() {
        let row = match name.parse::<i64>() {
            Ok(id) => store::workflows::by_id(db, id).await?,
            Err(_) => store::workflows::by_name(db, name).await?,
        };
        let Some(row) = row else {
            return Ok(
                out.err(Message::new("cli-workflow-unknown").arg("workflow", name.to_owned()))
            );
        };
        filter.workflows = Some(vec![row.id]);
    }
    if csv {
        return instance_csv(out, db, &filter, from).await;
    }
    let listed = lists::page(db, &filter, from, limit).await?;
    let t = |id: &'static str| Message::new(id).render(out.lang);
    println!(
        "#\t{}\t{}\t{}\t{}\t{}",
        t("cli-list-state"),
        t("cli-list-workflow"),
        t("cli-list-started-by"),
        t("cli-list-updated"),
        t("cli-list-title")
    );
    for r in &listed.rows {
        println!(
            "{}\t{}\t{}\t{}\t{}\t{}",
            r.id,
            r.state.as_str(),
            r.workflow_name.as_deref().unwrap_or("-"),
            r.started_by.as_deref().unwrap_or("-"),
            crate::time::format_utc(r.updated_at),
            r.subject_title.replace(['\t', '\n'], " ")
        );
    }
    eprintln!(
        "{}",
        lists::total(db, &filter).await?.message().render(out.lang)
    );
    if let Some(next) = listed.more {
        let mut command = String::from("orchestra instance list");
        for (option, value) in [
            ("--workflow", &args.workflow),
            ("--state", &args.state),
            ("--search", &args.search),
            ("--limit", &args.limit),
        ] {
            if let Some(v) = value {
                command.push_str(&format!(" {option} {}", shell_word(v)));
            }
        }
        command.push_str(&format!(" --before {next}"));
        eprintln!(
            "{}",
            Message::new("cli-list-next")
                .arg("command", command)
                .render(out.lang)
        );
    }
    Ok(0)
}

/// Cancels a running instance as the command line (`links::cancel`); says so on standard
/// output. A missing or ended instance, or a reason too long, is exit 2 and changes nothing.
/// Hands a participant of a running instance to a new contact.
pub(super) async fn instance_reassign(
    out: &Out,
    db: &Db,
    instance: &str,
    participant: &str,
    contacts: &[crate::domain::mail::ContactInput],
) -> Result<i32, sqlx::Error> {
    let Ok(id) = instance.parse::<i64>() else {
        return Ok(out.err(Message::new("link-instance-unknown").arg("id", instance.to_owned())));
    };
    let contact = match contacts {
        [one] if one.participant == participant => one,
        _ => {
            return Ok(out.err(
                Message::new("cli-reassign-contact").arg("participant", participant.to_owned()),
            ));
        }
    };
    let versions = crate::domain::workflow::versions::Cache::default();
    let by = crate::domain::instance::Actor::CommandLine;
    match crate::domain::instance::reassign(db, &versions, id, contact, &by).await {
        Ok(()) => {
            println!(
                "{}",
                Message::new("cli-instance-reassigned")
                    .arg("id", id.to_string())
                    .arg("participant", participant.to_owned())
                    .render(out.lang)
            );
            Ok(0)
        }
        Err(e) => Ok(refused_or_failed(out, e)),
    }
}

pub(super) async fn instance_cancel(
    out: &Out,
    db: &Db,
    instance: &str,
    reason: Option<&str>,
) -> Result<i32, sqlx::Error> {
    let Ok(id) = instance.parse::<i64>() else {
        return Ok(out.err(Message::new("link-instance-unknown").arg("id", instance.to_owned())));
    };
    let by = crate::domain::instance::Actor::CommandLine;
    match crate::domain::instance::cancel(db, id, &by, reason.unwrap_or("")).await {
        Ok(()) => {
            println!(
                "{}",
                Message::new("cli-instance-cancelled")
                    .arg("id", id.to_string())
                    .render(out.lang)
            );
            Ok(0)
        }
        Err(e) => Ok(refused_or_failed(out, e)),
    }
}
