//! The operator commands. Each reads `ORCHESTRA_DATABASE_URL`, applies the migrations, and
//! speaks the operator's language (`ORCHESTRA_LANG`, else `LANG`). Output meant for scripts
//! (an id, a URL, a value) goes alone on standard output; everything else on standard error.

pub mod args;
mod show;

use std::net::SocketAddr;
use std::time::Duration;

use crate::cli::args::{Parsed, ScopeArgs};
use crate::config::Config;
use crate::domain::api::scope::Scope;
use crate::domain::settings::{self, Settings};
use crate::domain::status;
use crate::i18n::{Lang, Message};
use crate::limits::flood;
use crate::store::{self, Db};

/// Exit status for a command used wrongly or given a bad value.
pub const USAGE: i32 = 2;

struct Out {
    lang: Lang,
}

impl Out {
    fn err(&self, m: Message) -> i32 {
        eprintln!("{}", m.render(self.lang));
        USAGE
    }

    fn fail(&self, e: impl std::fmt::Display) -> i32 {
        eprintln!(
            "{}",
            Message::new("cli-failed")
                .arg("error", e.to_string())
                .render(self.lang)
        );
        1
    }
}

/// Runs a command line (without the program name) and returns the exit status.
pub async fn run(args: Vec<String>) -> i32 {
    let out = Out {
        lang: Lang::from_env(),
    };
    // Parsed before the database is opened, so a mistyped command creates no file.
    let parsed = match crate::cli::args::parse(out.lang, &args) {
        Ok(p) => p,
        Err(m) => return out.err(m),
    };
    let config = match Config::from_env() {
        Ok(c) => c,
        Err(m) => return out.err(m),
    };
    let command = match parsed {
        Parsed::Help(text) => {
            print!("{text}");
            return 0;
        }
        Parsed::Version => {
            println!("orchestra {}", env!("CARGO_PKG_VERSION"));
            return 0;
        }
        Parsed::Completions(shell) => {
            return match crate::cli::args::completions(out.lang, &shell) {
                Some(script) => {
                    print!("{script}");
                    0
                }
                None => out.err(Message::new("cli-bad-shell").arg("shell", shell)),
            };
        }
        Parsed::Serve { bind } => return serve(&out, &config, bind.as_deref()).await,
        Parsed::Init => return init(&out, &config).await,
        Parsed::Status { format } => return status(&out, &config, format.as_deref()).await,
        other => other,
    };
    // Never creating: a database that vanished is an error, not a new empty one.
    let db = match crate::open_with(&config.database_url, store::Create::Never).await {
        Ok(db) => db,
        Err(e) => return out.err(e.message()),
    };
    let result = match command {
        Parsed::AdminCreate(name) => admin_create(&out, &db, &name).await,
        Parsed::AdminList => admin_list(&out, &db).await,
        Parsed::AdminPassword(name) => admin_password(&out, &db, &name).await,
        Parsed::AdminReset(name) => admin_reset(&out, &db, &name).await,
        Parsed::AdminDisable(name) => admin_change(&out, &db, &name, Change::Disable).await,
        Parsed::AdminEnable(name) => admin_change(&out, &db, &name, Change::Enable).await,
        Parsed::AdminRemove { name, yes } => {
            if let Err(code) = agreed(
                &out,
                yes,
                "cli-admin-remove-voids",
                &format!("admin remove {name} --yes"),
            ) {
                return code;
            }
            admin_change(&out, &db, &name, Change::Remove).await
        }
        Parsed::AdminUnlock(name) => admin_unlock(&out, &db, &name).await,
        Parsed::WorkflowList => workflow_list(&db).await,
        Parsed::InstanceStart {
            workflow,
            subject,
            body,
            contacts,
            names,
            langs,
        } => match contacts_of(&contacts, &names, &langs) {
            Ok(contacts) => {
                instance_start(
                    &out,
                    &db,
                    &workflow,
                    subject.as_deref(),
                    body.as_deref(),
                    &contacts,
                )
                .await
            }
            Err(bad) => Ok(out.err(Message::new("cli-contact-spelling").arg("value", bad))),
        },
        Parsed::InstanceCancel { instance, reason } => {
            instance_cancel(&out, &db, &instance, reason.as_deref()).await
        }
        Parsed::InstanceList(args) => instance_list(&out, &db, &args).await,
        Parsed::InstanceShow { instance, format } => {
            match show::instance_show(&out, &db, &instance, format.as_deref()).await {
                Ok(code) => Ok(code),
                Err(e) => Ok(out.fail(e)),
            }
        }
        Parsed::LinkIssue {
            instance,
            participant,
            send,
            ..
        } if send => link_send(&out, &db, &instance, participant.as_deref()).await,
        Parsed::LinkIssue {
            instance,
            participant,
            ttl,
            ..
        } => link_issue(&out, &db, &instance, participant.as_deref(), ttl.as_deref()).await,
        Parsed::ConfigGet(key) => config_get(&out, &db, &key).await,
        Parsed::ConfigSet(pairs) => {
            let pairs: Vec<&str> = pairs.iter().map(String::as_str).collect();
            config_set(&out, &db, &pairs).await
        }
        Parsed::ConfigList => config_list(&db).await,
        Parsed::Cron => cron(&config, &db).await,
        Parsed::KeysRotate { yes } => keys_rotate(&out, &db, yes).await,
        Parsed::TokenCreate {
            name,
            rate,
            burst,
            scope,
        } => token_create(&out, &db, &name, rate.as_deref(), burst.as_deref(), &scope).await,
        Parsed::TokenList => token_list(&out, &db).await,
        Parsed::TokenScope { name, scope } => token_scope(&out, &db, &name, &scope).await,
        Parsed::TokenRevoke(name) => token_revoke(&out, &db, &name).await,
        Parsed::TokenRotateKey { yes } => token_rotate_key(&out, &db, yes).await,
        Parsed::IntegratorKeyCreate(name) => integrator_key_create(&out, &db, &name).await,
        Parsed::WebhookCreate { url, events } => {
            webhook_create(&out, &db, &url, events.as_deref()).await
        }
        Parsed::WebhookList => webhook_list(&db).await,
        Parsed::WebhookChange(change, id) => webhook_change(&out, &db, &id, change).await,
        // Answered above, before the database.
        Parsed::Help(_)
        | Parsed::Version
        | Parsed::Completions(_)
        | Parsed::Serve { .. }
        | Parsed::Init
        | Parsed::Status { .. } => Ok(0),
    };
    result.unwrap_or_else(|e| out.fail(e))
}

/// `orchestra init`: creates the database when missing (a SQLite file), applies the
/// migrations, makes the keys and seeds the examples. On an existing database it only migrates.
async fn init(out: &Out, config: &Config) -> i32 {
    match crate::open_with(&config.database_url, store::Create::IfMissing).await {
        Ok(_) => {
            eprintln!("{}", Message::new("cli-init-done").render(out.lang));
            0
        }
        Err(e) => out.err(e.message()),
    }
}

async fn serve(out: &Out, config: &Config, bind: Option<&str>) -> i32 {
    let bind = bind.unwrap_or("127.0.0.1:8080");
    let Ok(addr) = bind.parse::<SocketAddr>() else {
        return out.err(Message::new("cli-bad-address").arg("address", bind.to_owned()));
    };
    // Only the first start on the default file creates it; any other missing database is an
    // error the operator sees, never a new empty one with new keys.
    let create = if config.database_is_default {
        store::Create::IfMissing
    } else {
        store::Create::Never
    };
    let db = match crate::open_with(&config.database_url, create).await {
        Ok(db) => db,
        Err(e) => return out.err(e.message()),
    };
    let clock = flood::Clock::system();
    let flood = crate::flood_store(config, &db, clock.clone());
    let state = match crate::build_state(db.clone(), flood, config.flood, clock).await {
        Ok(s) => s.with_trusted_proxies(config.trusted_proxies.clone()),
        Err(e) => return out.fail(e),
    };
    // The metrics endpoint, when asked for: its own address, bound before the app's, so an
    // address already taken stops the start instead of running without it, and whoever sees
    // the app listen finds the metrics listening too.
    let metrics = match config.metrics_bind {
        None => None,
        Some(bind) => match tokio::net::TcpListener::bind(bind).await {
            Ok(l) => Some(l),
            Err(e) => return out.fail(format!("ORCHESTRA_METRICS_BIND={bind}: {e}")),
        },
    };
    let listener = match crate::http::server::bind(addr) {
        Ok(l) => l,
        Err(e) => return out.fail(e),
    };
    let listener_addr = listener.local_addr().unwrap_or(addr);
    let local = listener_addr.to_string();
    // Links are built on this address until a base URL is saved (`Settings::load`), by this
    // server and by the commands on its database alike.
    if let Err(e) = Settings::record_listening(&db, &format!("http://{local}")).await {
        return out.fail(e);
    }
    let snapshot = state.site.refresh().await;
    match setup_url(&db, &snapshot, &local).await {
        Ok(Some(url)) => eprintln!(
            "{}",
            Message::new("cli-setup-url")
                .arg("url", url)
                .render(out.lang)
        ),
        Ok(None) => {}
        Err(e) => return out.fail(e),
    }
    eprintln!(
        "{}",
        Message::new("cli-serving")
            .arg("address", format!("http://{local}"))
            .arg("backend", db.backend.name())
            .arg("flood", config.flood.name())
            .render(out.lang)
    );
    // The same rule as the status report's "Links" check: a base URL on this machine that is
    // not where the server listens (until one is saved, links are built on the bound address).
    if let Some((base, _)) = snapshot.settings.base_url_elsewhere() {
        eprintln!(
            "{}",
            Message::new("cli-base-url-elsewhere")
                .arg("base_url", base)
                .arg("address", local.clone())
                .render(out.lang)
        );
    }
    if let Some(l) = &metrics {
        eprintln!(
            "{}",
            Message::new("cli-metrics-serving")
                .arg(
                    "address",
                    format!(
                        "http://{}",
                        l.local_addr()
                            .map_or_else(|_| "?".into(), |a| a.to_string())
                    )
                )
                .render(out.lang)
        );
    }
    // Raised here, before `serve`, so the line says what the server will have.
    let capacity = crate::http::server::Capacity::for_this_process(&config.connections);
    eprintln!(
        "{}",
        Message::new("cli-connections")
            .arg("connections", capacity.connections.to_string())
            .arg(
                "per_address",
                config.connections.max_per_address.to_string()
            )
            .arg("descriptors", capacity.descriptors.to_string())
            .arg("hard", capacity.hard_limit.to_string())
            .render(out.lang)
    );
    if capacity.connections < config.connections.max_connections {
        eprintln!(
            "{}",
            Message::new("cli-descriptors-low")
                .arg("descriptors", capacity.descriptors.to_string())
                .arg("connections", capacity.connections.to_string())
                .arg("wanted", config.connections.max_connections.to_string())
                .render(out.lang)
        );
    }
    if !crate::limits::guard::FloodGuard::is_counting(&snapshot.settings.interaction_limits()) {
        eprintln!("{}", Message::new("cli-doorway-uncapped").render(out.lang));
    }
    match crate::serve(listener, metrics, state, config).await {
        Ok(()) => 0,
        Err(e) => out.fail(e),
    }
}

/// On an empty site, a fresh one-time setup URL (valid a day). Printed, never logged.
async fn setup_url(
    db: &Db,
    snapshot: &crate::domain::site::Snapshot,
    local: &str,
) -> Result<Option<String>, sqlx::Error> {
    if store::admins::count(db).await? > 0 {
        return Ok(None);
    }
    // Until an administrator sets the base URL, the address just bound is the one that works;
    // so it is when the saved one is on this machine but not where the server listens (the
    // warning below says so): the first administrator must be able to open this URL.
    let base = match store::settings::get(db, "orchestra.base_url").await? {
        Some(_) if snapshot.settings.base_url_elsewhere().is_none() => {
            snapshot.settings.base_url.clone()
        }
        _ => format!("http://{local}"),
    };
    let token = crate::domain::keys::random_token();
    store::admins::put_setup_token(
        db,
        &snapshot.keys.keyed_hash("setup", &token),
        store::now() + 86_400,
    )
    .await?;
    Ok(Some(format!("{base}/setup/{token}")))
}

/// A new password: `ORCHESTRA_ADMIN_PASSWORD`; else, at a terminal, asked twice without echo
/// (rpassword turns the terminal's echo off and back on); else one line of standard input, as
/// scripts give it.
fn new_password(out: &Out) -> Result<String, i32> {
    use std::io::IsTerminal;
    if let Ok(p) = std::env::var("ORCHESTRA_ADMIN_PASSWORD") {
        return Ok(p);
    }
    let unreadable = |_| out.err(Message::new("cli-password-stdin"));
    if std::io::stdin().is_terminal() {
        let ask = |id| rpassword::prompt_password(Message::new(id).render(out.lang));
        let first = ask("cli-password-prompt").map_err(unreadable)?;
        let again = ask("cli-password-again").map_err(unreadable)?;
        if first != again {
            return Err(out.err(Message::new("admin-password-mismatch")));
        }
        return Ok(first);
    }
    // One line, not the whole stream.
    let mut input = String::new();
    std::io::stdin().read_line(&mut input).map_err(unreadable)?;
    Ok(input.trim_end_matches(['\r', '\n']).to_owned())
}

async fn admin_create(out: &Out, db: &Db, name: &str) -> Result<i32, sqlx::Error> {
    let password = match new_password(out) {
        Ok(p) => p,
        Err(code) => return Ok(code),
    };
    let errors = crate::domain::login::check_new_admin(name, &password, None);
    if let Some((_, m)) = errors.into_iter().next() {
        return Ok(out.err(m));
    }
    let hash = match crate::domain::password::hash(&password) {
        Ok(h) => h,
        Err(e) => return Ok(out.fail(e)),
    };
    match store::admins::create(db, name, &hash).await? {
        Some(id) => {
            eprintln!(
                "{}",
                Message::new("cli-admin-created")
                    .arg("name", name.to_owned())
                    .render(out.lang)
            );
            println!("{id}");
            Ok(0)
        }
        None => Ok(out.err(Message::new("cli-admin-exists").arg("name", name.to_owned()))),
    }
}

/// An administrator by name, or exit 2 saying no one has it.
async fn admin_named(
    out: &Out,
    db: &Db,
    name: &str,
) -> Result<Result<store::admins::Admin, i32>, sqlx::Error> {
    Ok(store::admins::by_name(db, name)
        .await?
        .ok_or_else(|| out.err(crate::domain::admins::Refusal::Unknown(name.to_owned()).message())))
}

/// One line per administrator, tab-separated: id, name, `active` or `disabled`, created, last
/// sign-in, failed sign-ins this period from all addresses (as the flood table holds them),
/// and `locked` when the per-account limit holds the account.
async fn admin_list(out: &Out, db: &Db) -> Result<i32, sqlx::Error> {
    let settings = Settings::load(db).await?;
    let keys = store::keys::load_or_create(db).await?;
    let limits = settings.limits_of(crate::limits::address::Address::SignInAccount);
    let event = crate::limits::address::Address::SignInAccount.event();
    let never = Message::new("cli-admin-never").render(out.lang);
    let now_ms = store::now() * 1000;
    for a in store::admins::list(db).await? {
        let key = crate::domain::login::account_key(&keys, a.id, a.login_epoch);
        let failures = store::flood::live_count(db, event, &key, now_ms).await?;
        let failures = failures.max(0) as u64;
        println!(
            "{}\t{}\t{}\t{}\t{}\t{}{}",
            a.id,
            a.name,
            if a.disabled_at.is_some() {
                "disabled"
            } else {
                "active"
            },
            crate::time::format_utc(a.created_at),
            a.last_sign_in_at
                .map_or_else(|| never.clone(), crate::time::format_utc),
            failures,
            if crate::domain::login::is_held(&limits, failures) {
                "\tlocked"
            } else {
                ""
            },
        );
    }
    Ok(0)
}

/// `orchestra admin password NAME`: a new password, its rules those of `admin create`; every
/// session of that administrator is signed out.
async fn admin_password(out: &Out, db: &Db, name: &str) -> Result<i32, sqlx::Error> {
    let admin = match admin_named(out, db, name).await? {
        Ok(a) => a,
        Err(code) => return Ok(code),
    };
    let password = match new_password(out) {
        Ok(p) => p,
        Err(code) => return Ok(code),
    };
    if let Some((_, m)) = crate::domain::login::check_new_password(&password, None)
        .into_iter()
        .next()
    {
        return Ok(out.err(m));
    }
    let hash = match crate::domain::password::hash(&password) {
        Ok(h) => h,
        Err(e) => return Ok(out.fail(e)),
    };
    if crate::domain::admins::set_password(db, admin.id, &hash)
        .await?
        .is_none()
    {
        return Ok(out.err(crate::domain::admins::Refusal::Unknown(name.to_owned()).message()));
    }
    eprintln!(
        "{}",
        Message::new("cli-admin-password-set")
            .arg("name", name.to_owned())
            .render(out.lang)
    );
    Ok(0)
}

/// `orchestra admin reset NAME`: prints a one-time link to a new password, alone on standard
/// output (never logged).
async fn admin_reset(out: &Out, db: &Db, name: &str) -> Result<i32, sqlx::Error> {
    let admin = match admin_named(out, db, name).await? {
        Ok(a) => a,
        Err(code) => return Ok(code),
    };
    let settings = Settings::load(db).await?;
    let keys = store::keys::load_or_create(db).await?;
    match crate::domain::admins::reset_link(db, &keys, &settings.base_url, None, &admin).await? {
        Ok(url) => {
            println!("{url}");
            Ok(0)
        }
        Err(refusal) => Ok(out.err(refusal.message())),
    }
}

#[derive(Clone, Copy)]
enum Change {
    Disable,
    Enable,
    Remove,
}

/// Disables, enables or removes an administrator; never the last active one (exit 2).
async fn admin_change(out: &Out, db: &Db, name: &str, change: Change) -> Result<i32, sqlx::Error> {
    let admin = match admin_named(out, db, name).await? {
        Ok(a) => a,
        Err(code) => return Ok(code),
    };
    let (done, said) = match change {
        Change::Disable => (
            crate::domain::admins::disable(db, &admin).await?,
            "cli-admin-disabled",
        ),
        Change::Enable => (
            crate::domain::admins::enable(db, &admin).await?,
            "cli-admin-enabled",
        ),
        Change::Remove => (
            crate::domain::admins::remove(db, &admin).await?,
            "cli-admin-removed",
        ),
    };
    if let Err(refusal) = done {
        return Ok(out.err(refusal.message()));
    }
    eprintln!(
        "{}",
        Message::new(said)
            .arg("name", name.to_owned())
            .render(out.lang)
    );
    Ok(0)
}

/// `orchestra admin unlock NAME`: the account's failed sign-ins count afresh (a running server
/// reads the account's keys at each attempt, so it holds from the next one).
async fn admin_unlock(out: &Out, db: &Db, name: &str) -> Result<i32, sqlx::Error> {
    let admin = match admin_named(out, db, name).await? {
        Ok(a) => a,
        Err(code) => return Ok(code),
    };
    let keys = store::keys::load_or_create(db).await?;
    if !crate::domain::admins::unlock(db, &keys, admin.id).await? {
        return Ok(out.err(crate::domain::admins::Refusal::Unknown(name.to_owned()).message()));
    }
    eprintln!(
        "{}",
        Message::new("cli-admin-unlocked")
            .arg("name", name.to_owned())
            .render(out.lang)
    );
    Ok(0)
}

async fn workflow_list(db: &Db) -> Result<i32, sqlx::Error> {
    for w in store::workflows::list(db).await? {
        let steps = crate::domain::workflow::Definition::from_json(&w.definition)
            .map_or(0, |d| d.steps.len());
        println!("{}\t{}\t{}\t{steps}\t{}", w.id, w.name, w.label, w.version);
    }
    Ok(0)
}

async fn instance_start(
    out: &Out,
    db: &Db,
    workflow: &str,
    subject: Option<&str>,
    body: Option<&str>,
    contacts: &[crate::domain::mail::ContactInput],
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
fn contacts_of(
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
async fn link_send(
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

async fn link_issue(
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
async fn instance_list(
    out: &Out,
    db: &Db,
    args: &crate::cli::args::ListArgs,
) -> Result<i32, sqlx::Error> {
    use crate::domain::lists;
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
async fn instance_cancel(
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

async fn config_get(out: &Out, db: &Db, key: &str) -> Result<i32, sqlx::Error> {
    match Settings::load(db).await?.get(key) {
        Some(v) => {
            println!("{v}");
            Ok(0)
        }
        None => Ok(out.err(Message::new("config-unknown-key").arg("key", key.to_owned()))),
    }
}

/// Saves one or more `KEY VALUE` pairs in one go: all of them, or none when one is refused.
async fn config_set(out: &Out, db: &Db, pairs: &[&str]) -> Result<i32, sqlx::Error> {
    let mut values = Vec::new();
    for pair in pairs.chunks(2) {
        let [key, value] = pair else { continue };
        let Some(key) = settings::setting(key).map(|s| s.key) else {
            return Ok(out.err(Message::new("config-unknown-key").arg("key", (*key).to_owned())));
        };
        values.push((key, *value));
    }
    match Settings::save(db, &values).await? {
        Ok(saved) => {
            for (key, _) in &values {
                eprintln!(
                    "{}",
                    Message::new("config-saved")
                        .arg("key", *key)
                        .arg("value", saved.get(key).unwrap_or_default())
                        .render(out.lang)
                );
            }
            Ok(0)
        }
        Err(errors) => {
            let Some(error) = errors.into_iter().next() else {
                return Ok(out.err(Message::new("cli-failed")));
            };
            Ok(out.err(
                Message::new("config-refused")
                    .arg("key", error.key)
                    .arg("reason", error.message.render(out.lang)),
            ))
        }
    }
}

async fn config_list(db: &Db) -> Result<i32, sqlx::Error> {
    let settings = Settings::load(db).await?;
    for setting in settings::REGISTRY {
        println!("{} = {}", setting.key, setting.get(&settings));
    }
    Ok(0)
}

/// `orchestra status` answers within this, whatever the database does.
const STATUS_WITHIN: Duration = Duration::from_millis(4500);
/// Of which opening the database may take this.
const STATUS_OPEN_WITHIN: Duration = Duration::from_secs(3);

/// `orchestra status`: a probe for monitoring, so it changes nothing it looks at. The database
/// is opened read-only (no file created, no migration applied, no key made), the report comes
/// within `STATUS_WITHIN` whatever the fault, and an error exits 2.
async fn status(out: &Out, config: &Config, format: Option<&str>) -> i32 {
    let format = format.unwrap_or("text");
    if !matches!(format, "text" | "json") {
        return out.err(Message::new("cli-bad-format").arg("format", format.to_owned()));
    }
    let report = async {
        let db = Db::open_read_only(&config.database_url, STATUS_OPEN_WITHIN).await?;
        if !db.migrated().await? {
            return Err(store::ConnectError::NotMigrated);
        }
        let mut env = environment(config);
        // The terminal's report tries the SMTP server itself (a server's reads its sender's
        // last try).
        if let Some(mailer) = &config.mailer {
            env.mail.unreachable = !mailer.reachable().await;
        }
        let report = status::build_with(&db, config.flood.name(), env).await;
        db.close().await;
        Ok(report)
    };
    match tokio::time::timeout(STATUS_WITHIN, report).await {
        Ok(Ok(report)) => print_report(out, &report, format),
        Ok(Err(e)) => status_unreachable(out, config, format, e),
        Err(_) => status_unreachable(out, config, format, store::ConnectError::TimedOut),
    }
}

fn environment(config: &Config) -> status::Environment {
    status::Environment {
        proxies_named: config.trusted_proxies.len(),
        proxy_header: config.trusted_proxies.header().display(),
        forwarded_seen: false,
        mail: status::MailView {
            server: config.mailer.as_ref().map(|m| m.server.clone()),
            unreachable: false,
        },
        ..Default::default()
    }
}

/// `orchestra status` when the database cannot be opened: the report of what could be
/// checked, the cause on the database line, and exit 2.
fn status_unreachable(out: &Out, config: &Config, format: &str, e: store::ConnectError) -> i32 {
    let backend = store::DatabaseUrl::parse(&config.database_url)
        .map_or(store::Backend::Sqlite, |u| u.backend());
    let mut report = status::unreachable(backend, e.message(), environment(config));
    if let (store::ConnectError::NotMigrated, Some(database)) = (&e, report.checks.first_mut()) {
        database.value = Message::new("status-database-not-set-up").arg("backend", backend.name());
    }
    print_report(out, &report, format).max(status::Severity::Error.exit_code())
}

fn print_report(out: &Out, report: &status::Report, format: &str) -> i32 {
    match format {
        "text" => print!("{}", report.to_text(out.lang)),
        "json" => println!("{}", report.to_json(out.lang)),
        other => return out.err(Message::new("cli-bad-format").arg("format", other.to_owned())),
    }
    report.worst().exit_code()
}

/// The most batches of emails one `orchestra cron` sends (20 each).
const MAIL_ROUNDS: usize = 50;

async fn cron(config: &Config, db: &Db) -> Result<i32, sqlx::Error> {
    let guard = crate::limits::guard::FloodGuard::new(crate::flood_store(
        config,
        db,
        flood::Clock::system(),
    ));
    crate::run_cron(db, &guard).await?;
    // What is due goes out from cron too, for a site whose server is not always running.
    let keys = store::keys::load(db).await?;
    let allow = crate::domain::delivery::endpoints::allow_private();
    let sender = crate::domain::delivery::send::Sender {
        db: db.clone(),
        keys,
        allow_private: allow,
        figures: Default::default(),
    };
    if let Err(e) = sender.run_once(store::now()).await {
        tracing::error!(error = %e, "webhook delivery failed");
    }
    let site = crate::domain::site::Site::load(db.clone())
        .await?
        .get()
        .await;
    let versions = crate::domain::workflow::versions::Cache::default();
    // Batch after batch while batches come full, within a bound: a cron run ends.
    for _ in 0..MAIL_ROUNDS {
        match crate::domain::mail::send::run_once(
            db,
            &versions,
            &site,
            config.mailer.as_ref(),
            store::now(),
        )
        .await
        {
            Ok(run) if run.claimed < crate::domain::mail::send::BATCH as u64 => break,
            Ok(_) => {}
            Err(e) => {
                tracing::error!(error = %e, "the email sender failed");
                break;
            }
        }
    }
    Ok(0)
}

/// Rotates the site keys, once the operator has agreed to what that voids: `--yes`, or `yes`
/// typed at a terminal. Without either, nothing changes (exit 2), so a script never rotates by
/// accident.
async fn keys_rotate(out: &Out, db: &Db, yes: bool) -> Result<i32, sqlx::Error> {
    if let Err(code) = agreed(out, yes, "cli-keys-rotate-voids", "keys rotate --yes") {
        return Ok(code);
    }
    store::keys::rotate(db, crate::domain::delivery::endpoints::reseal).await?;
    eprintln!("{}", Message::new("cli-keys-rotated").render(out.lang));
    Ok(0)
}

/// Replaces the API tokens' key once agreed to: every token stops authenticating.
async fn token_rotate_key(out: &Out, db: &Db, yes: bool) -> Result<i32, sqlx::Error> {
    if let Err(code) = agreed(out, yes, "cli-token-rotate-voids", "token rotate-key --yes") {
        return Ok(code);
    }
    store::keys::rotate_token_key(db).await?;
    eprintln!("{}", Message::new("cli-token-key-rotated").render(out.lang));
    Ok(0)
}

/// Whether the operator agreed to what a command voids (`voids`, said first): `--yes`, or `yes`
/// typed at a terminal. Without either, nothing is done: exit 2, naming `command` to run.
fn agreed(out: &Out, yes: bool, voids: &'static str, command: &str) -> Result<(), i32> {
    use std::io::{BufRead, IsTerminal, Write};
    if yes {
        return Ok(());
    }
    eprintln!("{}", Message::new(voids).render(out.lang));
    if !std::io::stdin().is_terminal() {
        return Err(
            out.err(Message::new("cli-confirm-with-yes").arg("command", command.to_owned()))
        );
    }
    eprint!("{}", Message::new("cli-confirm-ask").render(out.lang));
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    let _ = std::io::stdin().lock().read_line(&mut answer);
    match answer.trim().to_lowercase().as_str() {
        "yes" | "y" | "oui" | "o" => Ok(()),
        _ => Err(out.err(Message::new("cli-confirm-kept"))),
    }
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
async fn token_create(
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
async fn token_list(out: &Out, db: &Db) -> Result<i32, sqlx::Error> {
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
async fn token_scope(out: &Out, db: &Db, name: &str, args: &ScopeArgs) -> Result<i32, sqlx::Error> {
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

async fn token_revoke(out: &Out, db: &Db, name: &str) -> Result<i32, sqlx::Error> {
    match store::api::revoke_token(db, name).await? {
        Some(_) => {
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
async fn integrator_key_create(out: &Out, db: &Db, name: &str) -> Result<i32, sqlx::Error> {
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

/// `orchestra webhook create URL [--events a,b]`: the signing secret alone on standard output,
/// this once (it is stored sealed and never shown again); what was made on standard error.
async fn webhook_create(
    out: &Out,
    db: &Db,
    url: &str,
    events: Option<&str>,
) -> Result<i32, sqlx::Error> {
    use crate::domain::delivery::endpoints;
    let keys = store::keys::load(db).await?;
    match endpoints::create(db, &keys, url, events, endpoints::allow_private()).await {
        Ok(Ok(created)) => {
            println!("{}", created.secret.reveal());
            eprintln!(
                "{}",
                Message::new("cli-webhook-created")
                    .arg("id", created.id.to_string())
                    .render(out.lang)
            );
            Ok(0)
        }
        Ok(Err(refusal)) => Ok(out.err(refusal.message())),
        Err(e) => Ok(out.fail(e)),
    }
}

/// One line per endpoint, tab-separated: id, URL, events (`*` for all), state, consecutive
/// failures. Never the secret.
async fn webhook_list(db: &Db) -> Result<i32, sqlx::Error> {
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
async fn webhook_change(
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
    eprintln!("{}", said.arg("id", n.to_string()).render(out.lang));
    Ok(0)
}
