//! The commands that run and keep the site: `init`, `serve`, `cron`, `keys rotate`.

use std::net::SocketAddr;

use super::{Out, agreed};
use crate::config::Config;
use crate::domain::settings::Settings;
use crate::i18n::Message;
use crate::limits::flood;
use crate::store::{self, Db};

/// `orchestra init`: creates the database when missing (a SQLite file), applies the
/// migrations, makes the keys and seeds the examples. On an existing database it only migrates.
pub(super) async fn init(out: &Out, config: &Config) -> i32 {
    match crate::open_with(&config.database_url, store::Create::IfMissing).await {
        Ok(_) => {
            eprintln!("{}", Message::new("cli-init-done").render(out.lang));
            0
        }
        Err(e) => out.err(e.message()),
    }
}

pub(super) async fn serve(out: &Out, config: &Config, bind: Option<&str>) -> i32 {
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
        Ok(db) => db.with_files_dir(config.files_dir.clone()),
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

/// The most batches of emails one `orchestra cron` sends (20 each).
const MAIL_ROUNDS: usize = 50;

pub(super) async fn cron(config: &Config, db: &Db) -> Result<i32, sqlx::Error> {
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
pub(super) async fn keys_rotate(
    out: &Out,
    db: &Db,
    yes: bool,
    resend: bool,
) -> Result<i32, crate::error::Error> {
    if let Err(code) = agreed(out, yes, "cli-keys-rotate-voids", "keys rotate --yes") {
        return Ok(code);
    }
    crate::domain::rotation::rotate_keys(db).await?;
    crate::domain::audit::by_cli(db, crate::domain::audit::Event::KeysRotated).await;
    eprintln!("{}", Message::new("cli-keys-rotated").render(out.lang));
    if resend {
        return keys_resend(out, db).await;
    }
    // Said only when there is something to do about it.
    let left = crate::domain::rotation::without_working_link(db, store::now()).await?;
    if left == 0 {
        return Ok(0);
    }
    println!(
        "{}",
        Message::new("cli-keys-without-link")
            .arg("count", left.to_string())
            .render(out.lang)
    );
    Ok(0)
}

/// `orchestra keys resend`: a fresh link email to every participant still asked.
pub(super) async fn keys_resend(out: &Out, db: &Db) -> Result<i32, crate::error::Error> {
    let versions = crate::domain::workflow::versions::Cache::default();
    let resent = crate::domain::rotation::resend(db, &versions).await?;
    println!(
        "{}",
        Message::new("cli-keys-resent")
            .arg("emails", resent.emails.to_string())
            .arg("instances", resent.instances.to_string())
            .render(out.lang)
    );
    Ok(0)
}
