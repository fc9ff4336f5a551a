//! The operator commands. Each reads `ORCHESTRA_DATABASE_URL`, applies the migrations, and
//! speaks the operator's language (`ORCHESTRA_LANG`, else `LANG`). Output meant for scripts
//! (an id, a URL, a value) goes alone on standard output; everything else on standard error.

use std::net::SocketAddr;

use crate::config::Config;
use crate::i18n::{Lang, Message};
use crate::settings::{KEYS, Settings};
use crate::store::{self, Db};
use crate::{flood, status};

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
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let config = match Config::from_env() {
        Ok(c) => c,
        Err(m) => return out.err(m),
    };
    match args.as_slice() {
        [] | ["help"] | ["--help"] | ["-h"] => {
            println!("{}", Message::new("cli-usage").render(out.lang));
            0
        }
        ["--version"] | ["version"] => {
            println!("orchestra {}", env!("CARGO_PKG_VERSION"));
            0
        }
        ["serve", rest @ ..] => serve(&out, &config, rest).await,
        ["init"] => init(&out, &config).await,
        rest => {
            // Recognised before the database is opened, so a mistyped command creates no file.
            let Some(command) = Command::parse(rest) else {
                return out.err(Message::new("cli-unknown").arg("command", rest.join(" ")));
            };
            // Never creating: a database that vanished is an error, not a new empty one.
            let db = match crate::open_with(&config.database_url, store::Create::Never).await {
                Ok(db) => db,
                Err(e) => {
                    if let Command::Status(rest) = &command {
                        return status_unreachable(&out, &config, rest, e);
                    }
                    return out.err(e.message());
                }
            };
            command.run(&out, &config, &db).await
        }
    }
}

/// Every command that works on the database, as typed.
enum Command<'a> {
    AdminCreate(&'a str),
    WorkflowList,
    InstanceStart(&'a str, &'a [&'a str]),
    LinkIssue(&'a str, &'a [&'a str]),
    ConfigGet(&'a str),
    ConfigSet(&'a str, &'a str),
    ConfigList,
    Status(&'a [&'a str]),
    Cron,
    KeysRotate,
}

impl<'a> Command<'a> {
    fn parse(args: &'a [&'a str]) -> Option<Self> {
        Some(match args {
            ["admin", "create", name] => Self::AdminCreate(name),
            ["workflow", "list"] => Self::WorkflowList,
            ["instance", "start", workflow, rest @ ..] => Self::InstanceStart(workflow, rest),
            ["link", "issue", instance, rest @ ..] => Self::LinkIssue(instance, rest),
            ["config", "get", key] => Self::ConfigGet(key),
            ["config", "set", key, value] => Self::ConfigSet(key, value),
            ["config", "list"] => Self::ConfigList,
            ["status", rest @ ..] => Self::Status(rest),
            ["cron"] => Self::Cron,
            ["keys", "rotate"] => Self::KeysRotate,
            _ => return None,
        })
    }

    async fn run(self, out: &Out, config: &Config, db: &Db) -> i32 {
        let result = match self {
            Self::AdminCreate(name) => admin_create(out, db, name).await,
            Self::WorkflowList => workflow_list(db).await,
            Self::InstanceStart(workflow, rest) => instance_start(out, db, workflow, rest).await,
            Self::LinkIssue(instance, rest) => link_issue(out, db, instance, rest).await,
            Self::ConfigGet(key) => config_get(out, db, key).await,
            Self::ConfigSet(key, value) => config_set(out, db, key, value).await,
            Self::ConfigList => config_list(db).await,
            Self::Status(rest) => status(out, config, db, rest).await,
            Self::Cron => cron(config, db).await,
            Self::KeysRotate => keys_rotate(out, db).await,
        };
        result.unwrap_or_else(|e| out.fail(e))
    }
}

/// `--name value` from the rest of a command line.
fn option<'a>(rest: &[&'a str], name: &str) -> Result<Option<&'a str>, Message> {
    let mut found = None;
    let mut i = 0;
    while i < rest.len() {
        if rest[i] == name {
            found =
                Some(*rest.get(i + 1).ok_or_else(|| {
                    Message::new("cli-option-value").arg("option", name.to_owned())
                })?);
            i += 2;
        } else if let Some(v) = rest[i].strip_prefix(name).and_then(|v| v.strip_prefix('=')) {
            found = Some(v);
            i += 1;
        } else {
            i += 1;
        }
    }
    Ok(found)
}

fn unknown_options(rest: &[&str], known: &[&str]) -> Option<Message> {
    let mut i = 0;
    while i < rest.len() {
        let name = rest[i].split('=').next().unwrap_or("");
        if !known.contains(&name) {
            return Some(Message::new("cli-unknown-option").arg("option", rest[i].to_owned()));
        }
        i += if rest[i].contains('=') { 1 } else { 2 };
    }
    None
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

async fn serve(out: &Out, config: &Config, rest: &[&str]) -> i32 {
    if let Some(m) = unknown_options(rest, &["--bind"]) {
        return out.err(m);
    }
    let bind = match option(rest, "--bind") {
        Ok(b) => b.unwrap_or("127.0.0.1:8080"),
        Err(m) => return out.err(m),
    };
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
    let listener = match tokio::net::TcpListener::bind(addr).await {
        Ok(l) => l,
        Err(e) => return out.fail(e),
    };
    let local = listener
        .local_addr()
        .map(|a| a.to_string())
        .unwrap_or_else(|_| bind.to_owned());
    match setup_url(&state, &local).await {
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
    let snapshot = state.site.get().await;
    if !crate::guard::FloodGuard::is_counting(&snapshot.settings.interaction_limits()) {
        eprintln!("{}", Message::new("cli-doorway-uncapped").render(out.lang));
    }
    match crate::serve(listener, state, config).await {
        Ok(()) => 0,
        Err(e) => out.fail(e),
    }
}

/// On an empty site, a fresh one-time setup URL (valid a day). Printed, never logged.
async fn setup_url(
    state: &crate::http::AppState,
    local: &str,
) -> Result<Option<String>, sqlx::Error> {
    if store::admins::count(&state.db).await? > 0 {
        return Ok(None);
    }
    let snapshot = state.site.get().await;
    // Until an administrator sets the base URL, the address just bound is the one that works.
    let base = match store::settings::get(&state.db, "orchestra.base_url").await? {
        Some(_) => snapshot.settings.base_url.clone(),
        None => format!("http://{local}"),
    };
    let token = crate::keys::random_token();
    store::admins::put_setup_token(
        &state.db,
        &snapshot.keys.keyed_hash("setup", &token),
        store::now() + 86_400,
    )
    .await?;
    Ok(Some(format!("{base}/setup/{token}")))
}

async fn admin_create(out: &Out, db: &Db, name: &str) -> Result<i32, sqlx::Error> {
    let password = match std::env::var("ORCHESTRA_ADMIN_PASSWORD") {
        Ok(p) => p,
        Err(_) => {
            // One line, not the whole stream: typed at a terminal, Enter ends it.
            let mut input = String::new();
            if std::io::stdin().read_line(&mut input).is_err() {
                return Ok(out.err(Message::new("cli-password-stdin")));
            }
            input.trim_end_matches(['\r', '\n']).to_owned()
        }
    };
    let errors = crate::http::setup::check_new_admin(name, &password, None);
    if let Some((_, m)) = errors.into_iter().next() {
        return Ok(out.err(m));
    }
    let hash = match crate::password::hash(&password) {
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

async fn workflow_list(db: &Db) -> Result<i32, sqlx::Error> {
    for w in store::workflows::list(db).await? {
        let steps =
            crate::workflow::Definition::from_json(&w.definition).map_or(0, |d| d.steps.len());
        println!("{}\t{}\t{}\t{steps}\t{}", w.id, w.name, w.label, w.version);
    }
    Ok(0)
}

async fn instance_start(
    out: &Out,
    db: &Db,
    workflow: &str,
    rest: &[&str],
) -> Result<i32, sqlx::Error> {
    if let Some(m) = unknown_options(rest, &["--subject", "--body"]) {
        return Ok(out.err(m));
    }
    let row = match workflow.parse::<i64>() {
        Ok(id) => store::workflows::by_id(db, id).await?,
        Err(_) => store::workflows::by_name(db, workflow).await?,
    };
    let Some(row) = row else {
        return Ok(
            out.err(Message::new("cli-workflow-unknown").arg("workflow", workflow.to_owned()))
        );
    };
    let (subject, body) = match (option(rest, "--subject"), option(rest, "--body")) {
        (Ok(s), Ok(b)) => (
            s.map_or_else(|| row.label.clone(), str::to_owned),
            b.unwrap_or("").to_owned(),
        ),
        (Err(m), _) | (_, Err(m)) => return Ok(out.err(m)),
    };
    match crate::links::start(db, row.id, &subject, &body).await? {
        Ok(id) => {
            println!("{id}");
            Ok(0)
        }
        Err(errors) => Ok(out.err(
            errors
                .into_iter()
                .next()
                .map(|(_, m)| m)
                .unwrap_or(Message::new("cli-failed")),
        )),
    }
}

async fn link_issue(out: &Out, db: &Db, instance: &str, rest: &[&str]) -> Result<i32, sqlx::Error> {
    if let Some(m) = unknown_options(rest, &["--participant", "--branch", "--ttl"]) {
        return Ok(out.err(m));
    }
    let Ok(instance) = instance.parse::<i64>() else {
        return Ok(out.err(Message::new("link-instance-unknown").arg("id", instance.to_owned())));
    };
    let settings = Settings::load(db).await?;
    // `--branch` is the name this option had before participants; scripts keep working.
    let (participant, branch, ttl) = match (
        option(rest, "--participant"),
        option(rest, "--branch"),
        option(rest, "--ttl"),
    ) {
        (Ok(p), Ok(b), Ok(t)) => (p, b, t),
        (Err(m), _, _) | (_, Err(m), _) | (_, _, Err(m)) => return Ok(out.err(m)),
    };
    let participant = participant.or(branch).unwrap_or("");
    let ttl = match ttl {
        None => settings.default_link_ttl,
        Some(t) => match crate::time::parse_duration(t) {
            Some(t) => t,
            None => {
                return Ok(out.err(
                    Message::new("link-ttl-invalid")
                        .arg("min", crate::settings::MIN_TTL.to_string())
                        .arg("max", crate::settings::MAX_TTL.to_string()),
                ));
            }
        },
    };
    let keys = store::keys::load_or_create(db).await?;
    match crate::links::issue(
        db,
        &keys,
        &settings.base_url,
        instance,
        participant,
        ttl,
        store::now(),
        &crate::links::Actor::CommandLine,
    )
    .await
    {
        Ok(Ok(url)) => {
            println!("{url}");
            Ok(0)
        }
        Ok(Err(m)) => Ok(out.err(m)),
        Err(e) => Ok(out.fail(e)),
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

async fn config_set(out: &Out, db: &Db, key: &str, value: &str) -> Result<i32, sqlx::Error> {
    let Some(key) = KEYS.iter().copied().find(|k| *k == key) else {
        return Ok(out.err(Message::new("config-unknown-key").arg("key", key.to_owned())));
    };
    match Settings::save(db, &[(key, value)]).await? {
        Ok(saved) => {
            eprintln!(
                "{}",
                Message::new("config-saved")
                    .arg("key", key)
                    .arg("value", saved.get(key).unwrap_or_default())
                    .render(out.lang)
            );
            Ok(0)
        }
        Err(errors) => {
            let message = errors
                .into_iter()
                .next()
                .map(|e| e.message)
                .unwrap_or(Message::new("cli-failed"));
            Ok(out.err(
                Message::new("config-refused")
                    .arg("key", key)
                    .arg("reason", message.render(out.lang)),
            ))
        }
    }
}

async fn config_list(db: &Db) -> Result<i32, sqlx::Error> {
    let settings = Settings::load(db).await?;
    for key in KEYS {
        println!("{key} = {}", settings.get(key).unwrap_or_default());
    }
    Ok(0)
}

async fn status(out: &Out, config: &Config, db: &Db, rest: &[&str]) -> Result<i32, sqlx::Error> {
    if let Some(m) = unknown_options(rest, &["--format"]) {
        return Ok(out.err(m));
    }
    let format = match option(rest, "--format") {
        Ok(f) => f.unwrap_or("text"),
        Err(m) => return Ok(out.err(m)),
    };
    let report = status::build_with(db, config.flood.name(), environment(config)).await;
    Ok(print_report(out, &report, format))
}

fn environment(config: &Config) -> status::Environment {
    status::Environment {
        proxies_named: config.trusted_proxies.len(),
        forwarded_seen: false,
        ..Default::default()
    }
}

/// `orchestra status` when the database cannot be opened: the report of what could be
/// checked, the cause on the database line, and exit 2.
fn status_unreachable(out: &Out, config: &Config, rest: &[&str], e: store::ConnectError) -> i32 {
    if let Some(m) = unknown_options(rest, &["--format"]) {
        return out.err(m);
    }
    let format = match option(rest, "--format") {
        Ok(f) => f.unwrap_or("text"),
        Err(m) => return out.err(m),
    };
    let backend = store::DatabaseUrl::parse(&config.database_url)
        .map_or(store::Backend::Sqlite, |u| u.backend());
    let report = status::unreachable(backend, e.message(), environment(config));
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

async fn cron(config: &Config, db: &Db) -> Result<i32, sqlx::Error> {
    let flood = crate::flood_store(config, db, flood::Clock::system());
    crate::run_cron(db, flood.as_ref()).await?;
    Ok(0)
}

async fn keys_rotate(out: &Out, db: &Db) -> Result<i32, sqlx::Error> {
    store::keys::rotate(db).await?;
    eprintln!("{}", Message::new("cli-keys-rotated").render(out.lang));
    Ok(0)
}
