//! The `webhook` commands: endpoints made, listed and changed as the admin page does.

use super::Out;
use crate::domain::audit::Event;
use crate::i18n::Message;
use crate::store::{self, Db};

/// `orchestra webhook create URL [--events a,b]`: the signing secret alone on standard output,
/// this once (it is stored sealed and never shown again); what was made on standard error.
pub(super) async fn webhook_create(
    out: &Out,
    db: &Db,
    url: &str,
    events: Option<&str>,
) -> Result<i32, sqlx::Error> {
    use crate::domain::delivery::endpoints;
    let keys = store::keys::load(db).await?;
    match endpoints::create(db, &keys, url, events, endpoints::allow_private()).await {
        Ok(created) => {
            crate::domain::audit::by_cli(db, Event::WebhookCreated(created.id, url.to_owned()))
                .await;
            println!("{}", created.secret.reveal());
            eprintln!(
                "{}",
                Message::new("cli-webhook-created")
                    .arg("id", created.id.to_string())
                    .render(out.lang)
            );
            Ok(0)
        }
        Err(e) => Ok(match e.refusal() {
            Ok(refusal) => out.err(refusal.message()),
            Err(failure) => out.fail(failure),
        }),
    }
}

/// One line per endpoint, tab-separated: id, URL, events (`*` for all), state, consecutive
/// failures. Never the secret.
pub(super) async fn webhook_list(db: &Db) -> Result<i32, sqlx::Error> {
    for listed in store::webhooks::listed(db).await? {
        let e = &listed.endpoint;
        println!(
            "{}\t{}\t{}\t{}\t{}\t{}",
            e.id,
            e.url,
            if e.events.is_empty() { "*" } else { &e.events },
            if e.enabled != 0 {
                "enabled"
            } else {
                "disabled"
            },
            e.failures,
            // The API token that registered it, sent only its own instances' messages.
            listed.token_name.as_deref().unwrap_or("-"),
        );
    }
    Ok(0)
}

/// `webhook enable` takes a disabled endpoint back (its run of failures forgotten, what waited
/// for it due now), `disable` sets one aside (its messages wait), `retry` sends at once what
/// waits, as the admin page's buttons do; `webhook delete` removes one. Exit 2 for no such
/// endpoint.
pub(super) async fn webhook_change(
    out: &Out,
    db: &Db,
    id: &str,
    change: crate::cli::args::WebhookChange,
) -> Result<i32, sqlx::Error> {
    use crate::cli::args::WebhookChange;
    let unknown = || out.err(Message::new("cli-webhook-unknown").arg("id", id.to_owned()));
    let Ok(n) = id.trim().parse::<i64>() else {
        return Ok(unknown());
    };
    let now = store::now();
    let said = match change {
        WebhookChange::Delete => store::webhooks::delete(db, n)
            .await?
            .then(|| Message::new("cli-webhook-deleted")),
        WebhookChange::Disable => store::webhooks::disable(db, n, now)
            .await?
            .then(|| Message::new("cli-webhook-disabled")),
        WebhookChange::Enable => store::webhooks::enable(db, n, now)
            .await?
            .map(|count| Message::new("cli-webhook-enabled").arg("count", count.to_string())),
        WebhookChange::Retry => {
            let enabled = store::webhooks::by_id(db, n).await?.map(|e| e.enabled == 1);
            match (enabled, store::webhooks::retry_now(db, n, now).await?) {
                (Some(true), Some(count)) => {
                    Some(Message::new("cli-webhook-retried").arg("count", count.to_string()))
                }
                (Some(_), Some(_)) => Some(Message::new("cli-webhook-retried-disabled")),
                _ => None,
            }
        }
    };
    let Some(said) = said else {
        return Ok(unknown());
    };
    let event = match change {
        WebhookChange::Delete => Some(Event::WebhookRemoved(n)),
        WebhookChange::Disable => Some(Event::WebhookDisabled(n)),
        WebhookChange::Enable => Some(Event::WebhookEnabled(n)),
        WebhookChange::Retry => None,
    };
    if let Some(event) = event {
        crate::domain::audit::by_cli(db, event).await;
    }
    eprintln!("{}", said.arg("id", n.to_string()).render(out.lang));
    Ok(0)
}
