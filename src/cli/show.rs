//! `orchestra instance show ID [--format text|json]`: one instance as the admin page and the
//! API show it, read through the domain's one view (`domain::instance::View`). The operator
//! sees the participants' addresses, as an administrator does. JSON has the API's shape.

use serde_json::{Value, json};

use super::Out;
use crate::domain::instance::{View, ViewOptions};
use crate::domain::lists;
use crate::i18n::Message;
use crate::store::Db;

/// History lines shown, newest last (the API's page).
const HISTORY: i64 = 100;

pub async fn instance_show(
    out: &Out,
    db: &Db,
    id: &str,
    format: Option<&str>,
) -> Result<i32, crate::error::Error> {
    let format = format.unwrap_or("text");
    if !matches!(format, "text" | "json") {
        return Ok(out.err(Message::new("cli-bad-format").arg("format", format.to_owned())));
    }
    let unknown = || out.err(Message::new("link-instance-unknown").arg("id", id.to_owned()));
    let Ok(n) = id.trim().parse::<i64>() else {
        return Ok(unknown());
    };
    let options = ViewOptions {
        history_before: None,
        history_limit: HISTORY,
        contacts: true,
    };
    let versions = crate::domain::workflow::versions::Cache::default();
    let Some(view) = View::read(db, &versions, n, options).await? else {
        return Ok(unknown());
    };
    match format {
        "json" => println!("{}", as_json(&view)),
        _ => print!("{}", as_text(out, &view)),
    }
    Ok(0)
}

/// `orchestra instance evidence ID [--format json|html]`: the instance's evidence record, as the
/// API gives it (`json`, the default) or as a printable document in the operator's language.
pub async fn instance_evidence(
    out: &Out,
    db: &Db,
    id: &str,
    format: Option<&str>,
) -> Result<i32, crate::error::Error> {
    use crate::domain::instance::{evidence, evidence_page};
    let format = format.unwrap_or("json");
    if !matches!(format, "json" | "html") {
        return Ok(out.err(Message::new("cli-bad-format").arg("format", format.to_owned())));
    }
    let unknown = || out.err(Message::new("link-instance-unknown").arg("id", id.to_owned()));
    let Ok(n) = id.trim().parse::<i64>() else {
        return Ok(unknown());
    };
    let settings = crate::domain::settings::Settings::load(db).await?;
    let versions = crate::domain::workflow::versions::Cache::default();
    let now = crate::store::now();
    let Some(record) = evidence::read(db, &versions, &settings.base_url, n, now).await? else {
        return Ok(unknown());
    };
    match format {
        "html" => print!("{}", evidence_page::document(&record, out.lang)),
        _ => println!("{}", record.to_json()),
    }
    Ok(0)
}

fn as_json(view: &View) -> Value {
    let row = &view.instance;
    let names = |ps: &[crate::domain::workflow::Participant]| -> Vec<String> {
        ps.iter().map(|p| p.as_str().to_owned()).collect()
    };
    let current_step = view.current_step().map(|(i, s)| {
        json!({
            "number": i + 1,
            "title": s.title,
            "kind": s.interaction.kind(),
            "participants": s.participants().iter().map(|p| p.as_str()).collect::<Vec<_>>(),
        })
    });
    let participants: serde_json::Map<String, Value> = view
        .contacts
        .iter()
        .flatten()
        .map(|c| {
            (
                c.participant.clone(),
                json!({ "email": c.email, "name": c.name, "lang": c.lang }),
            )
        })
        .collect();
    let history: Vec<Value> = view
        .history
        .lines
        .iter()
        .map(|h| {
            json!({
                "at": h.at,
                "event": h.event.as_str(),
                "step": h.step_index + 1,
                "step_title": h.step_title,
                "participant": h.participant,
                "answer": serde_json::from_str::<Value>(&h.answer).unwrap_or(Value::Null),
            })
        })
        .collect();
    json!({
        "id": row.id,
        "workflow": view.workflow_label,
        "workflow_name": view.workflow_name,
        "version": view.version,
        "state": row.state.as_str(),
        "subject": { "title": row.subject_title, "body": row.subject_body },
        "current_step": current_step,
        "steps": view.definition.steps.len(),
        "participants_left": names(&view.participants_left),
        "participants": participants,
        "history": history,
        "history_total": view.history.total,
        "history_cursor": view.history.older.map(lists::cursor),
    })
}

fn as_text(out: &Out, view: &View) -> String {
    let lang = out.lang;
    let row = &view.instance;
    let say = |m: Message| m.render(lang);
    let mut text = String::new();
    let mut line = |s: String| {
        text.push_str(&s);
        text.push('\n');
    };
    line(say(Message::new("cli-instance-show-title")
        .arg("id", row.id.to_string())
        .arg("title", row.subject_title.clone())));
    line(say(Message::new("cli-instance-show-workflow")
        .arg(
            "label",
            view.workflow_label.clone().unwrap_or_else(|| "-".into()),
        )
        .arg(
            "name",
            view.workflow_name.clone().unwrap_or_else(|| "-".into()),
        )
        .arg("version", view.version.to_string())));
    line(say(Message::new("cli-instance-show-state")
        .arg("state", say(Message::new(row.state.message_id())))));
    if let Some((i, step)) = view.current_step() {
        line(say(Message::new("cli-instance-show-step")
            .arg("number", (i + 1).to_string())
            .arg("steps", view.definition.steps.len().to_string())
            .arg("title", step.title_in(lang).to_owned())));
    }
    if !view.participants_left.is_empty() {
        let left: Vec<&str> = view.participants_left.iter().map(|p| p.as_str()).collect();
        line(say(
            Message::new("cli-instance-show-waiting").arg("participants", left.join(", "))
        ));
    }
    for c in view.contacts.iter().flatten() {
        line(say(Message::new("cli-instance-show-contact")
            .arg("participant", c.participant.clone())
            .arg("email", c.email.clone())
            .arg("lang", c.lang.clone())));
    }
    line(say(Message::new("cli-instance-show-history")
        .arg("shown", view.history.lines.len().to_string())
        .arg("total", view.history.total.to_string())));
    for h in &view.history.lines {
        let who = if h.participant.is_empty() {
            &h.actor
        } else {
            &h.participant
        };
        line(format!(
            "  {}\t{}\t{}\t{}",
            crate::time::format_utc(h.at),
            say(Message::new(h.event.message_id())),
            h.step_title,
            who
        ));
    }
    text
}
