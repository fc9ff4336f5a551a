//! The `token` and `integrator-key` commands: the API's credentials and their scopes.

use super::{Out, agreed};
use crate::cli::args::ScopeArgs;
use crate::domain::api::scope::Scope;
use crate::domain::audit::Event;
use crate::domain::settings::Settings;
use crate::i18n::Message;
use crate::store::{self, Db};

/// Replaces the API tokens' key once agreed to: every token stops authenticating.
pub(super) async fn token_rotate_key(out: &Out, db: &Db, yes: bool) -> Result<i32, sqlx::Error> {
    if let Err(code) = agreed(out, yes, "cli-token-rotate-voids", "token rotate-key --yes") {
        return Ok(code);
    }
    store::keys::rotate_token_key(db).await?;
    crate::domain::audit::by_cli(db, Event::TokenKeyRotated).await;
    eprintln!("{}", Message::new("cli-token-key-rotated").render(out.lang));
    Ok(0)
}

/// A number of the API's bucket, 1 to a million, when given.
fn bucket_number(out: &Out, option: &str, raw: Option<&str>) -> Result<Option<u32>, i32> {
    let Some(raw) = raw else { return Ok(None) };
    match raw.parse::<u32>() {
        Ok(n) if (1..=1_000_000).contains(&n) => Ok(Some(n)),
        _ => Err(out.err(
            Message::new("cli-token-number")
                .arg("option", option.to_owned())
                .arg("value", raw.to_owned()),
        )),
    }
}

/// `base` with the parts the scope's options name replaced, the workflows checked against the
/// site's; an exit code for a bad one.
async fn scope_of(
    out: &Out,
    db: &Db,
    base: Scope,
    args: &ScopeArgs,
) -> Result<Result<Scope, i32>, sqlx::Error> {
    fn words(list: &Option<String>) -> Option<impl Iterator<Item = &str>> {
        list.as_deref()
            .map(|l| l.split(',').map(str::trim).filter(|w| !w.is_empty()))
    }
    let scope = match base.with_words(
        words(&args.abilities),
        args.reach.as_deref(),
        words(&args.workflows),
    ) {
        Ok(scope) => scope,
        Err(e) => return Ok(Err(out.err(e.message))),
    };
    let named = scope.workflows.as_deref().unwrap_or_default();
    match crate::domain::api::unknown_workflow(db, named).await {
        Ok(None) => Ok(Ok(scope)),
        Ok(Some(name)) => Ok(Err(
            out.err(Message::new("token-workflow-unknown").arg("name", name))
        )),
        Err(e) => Ok(Err(out.fail(e))),
    }
}

/// `orchestra token create NAME [--rate N] [--burst N] [--abilities …] [--reach …]
/// [--workflows …]`: prints the token once, alone.
pub(super) async fn token_create(
    out: &Out,
    db: &Db,
    name: &str,
    rate: Option<&str>,
    burst: Option<&str>,
    scope: &ScopeArgs,
) -> Result<i32, sqlx::Error> {
    if !crate::domain::api::valid_name(name) {
        return Ok(out.err(Message::new("token-name-invalid")));
    }
    let (rate, burst) = match (
        bucket_number(out, "--rate", rate),
        bucket_number(out, "--burst", burst),
    ) {
        (Ok(r), Ok(b)) => (r, b),
        (Err(code), _) | (_, Err(code)) => return Ok(code),
    };
    let scope = match scope_of(out, db, Scope::default(), scope).await? {
        Ok(scope) => scope,
        Err(code) => return Ok(code),
    };
    let keys = store::keys::load(db).await?;
    match crate::domain::api::create_scoped_token(db, &keys, name, rate, burst, &scope).await {
        Ok(Some(text)) => {
            crate::domain::audit::by_cli(db, Event::TokenCreated(name.to_owned())).await;
            println!("{text}");
            eprintln!(
                "{}",
                Message::new("cli-token-created")
                    .arg("name", name.to_owned())
                    .render(out.lang)
            );
            Ok(0)
        }
        Ok(None) => Ok(out.err(Message::new("token-name-taken"))),
        Err(e) => Ok(out.fail(e)),
    }
}

/// One line per token, tab-separated: name, rate, burst, last use, state, then its scope
/// (abilities, reach, workflows) as `token create` takes it.
pub(super) async fn token_list(out: &Out, db: &Db) -> Result<i32, sqlx::Error> {
    let settings = Settings::load(db).await?;
    let never = Message::new("token-never-used").render(out.lang);
    for t in store::api::tokens(db).await? {
        println!(
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
            t.name,
            t.rate_per_minute
                .map_or(settings.api_rate_per_minute as i64, |r| r),
            t.burst.map_or(settings.api_burst as i64, |b| b),
            t.last_used_at
                .map_or_else(|| never.clone(), crate::time::format_utc),
            if t.revoked_at.is_some() {
                "revoked"
            } else {
                "active"
            },
            t.scope.abilities.join(","),
            t.scope.reach.as_str(),
            t.scope.workflows_text(),
        );
    }
    Ok(0)
}

/// `orchestra token scope NAME [--abilities …] [--reach …] [--workflows …]`: the options given
/// replace those parts of a live token's scope; says the scope it has now. The server reads a
/// token's scope at each request it lets in, so the change holds from the next one.
pub(super) async fn token_scope(
    out: &Out,
    db: &Db,
    name: &str,
    args: &ScopeArgs,
) -> Result<i32, sqlx::Error> {
    let unknown = || out.err(Message::new("cli-token-unknown").arg("name", name.to_owned()));
    let tokens = store::api::tokens(db).await?;
    let Some(token) = tokens
        .into_iter()
        .find(|t| t.name == name && t.revoked_at.is_none())
    else {
        return Ok(unknown());
    };
    let scope = match scope_of(out, db, token.scope, args).await? {
        Ok(scope) => scope,
        Err(code) => return Ok(code),
    };
    if store::api::set_scope(db, name, &scope).await?.is_none() {
        return Ok(unknown());
    }
    eprintln!(
        "{}",
        Message::new("cli-token-scope")
            .arg("name", name.to_owned())
            .arg("abilities", scope.abilities.join(","))
            .arg("reach", scope.reach.as_str())
            .arg("workflows", scope.workflows_text())
            .render(out.lang)
    );
    Ok(0)
}

pub(super) async fn token_revoke(out: &Out, db: &Db, name: &str) -> Result<i32, sqlx::Error> {
    match store::api::revoke_token(db, name).await? {
        Some(_) => {
            crate::domain::audit::by_cli(db, Event::TokenRevoked(name.to_owned())).await;
            eprintln!(
                "{}",
                Message::new("cli-token-revoked")
                    .arg("name", name.to_owned())
                    .render(out.lang)
            );
            Ok(0)
        }
        None => Ok(out.err(Message::new("cli-token-unknown").arg("name", name.to_owned()))),
    }
}

/// `orchestra integrator-key create NAME`: a new signing key (replacing NAME's old one),
/// printed once: the key id, then the secret.
pub(super) async fn integrator_key_create(
    out: &Out,
    db: &Db,
    name: &str,
) -> Result<i32, sqlx::Error> {
    if !crate::domain::api::valid_name(name) {
        return Ok(out.err(Message::new("token-name-invalid")));
    }
    match crate::domain::api::create_integrator_key(db, name).await {
        Ok((key_id, secret)) => {
            println!("{key_id}\n{secret}");
            Ok(0)
        }
        Err(e) => Ok(out.fail(e)),
    }
}
