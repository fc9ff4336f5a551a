//! Orchestra: workflows whose steps are answered through signed capability links.
//!
//! `build_state` and `router` give the whole app, so tests can serve it on port 0; `serve`
//! adds the background timers. See README.md and docs/.

use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;

pub mod cli;
pub mod config;
pub mod domain;
pub mod error;
pub mod http;
pub mod i18n;
pub mod limits;
pub mod proxy;
pub mod store;
pub mod time;

use config::Config;
use domain::site::Site;
use http::AppState;
use limits::flood::{Clock, FloodStore, MemoryFlood, SqlFlood};
use limits::guard::FloodGuard;
use store::Db;

/// How often the server runs `cron` on its own.
pub const CRON_INTERVAL: Duration = Duration::from_secs(600);

/// Connects (creating a SQLite file when missing), migrates, seeds the examples and loads the
/// site keys: what `orchestra init` and the first start do, and what tests use.
pub async fn open(database_url: &str) -> Result<Db, sqlx::Error> {
    let db = Db::connect(database_url).await?;
    store::keys::load_or_create(&db).await?;
    domain::workflow::seed::seed_examples(&db).await?;
    Ok(db)
}

/// `open` for every program once a database exists: a missing SQLite file is an error, never
/// a new empty database with new keys.
pub async fn open_with(
    database_url: &str,
    create: store::Create,
) -> Result<Db, store::ConnectError> {
    let db = Db::open(database_url, create).await?;
    store::keys::load_or_create(&db).await?;
    domain::workflow::seed::seed_examples(&db).await?;
    Ok(db)
}

/// The flood backend the operator chose.
pub fn flood_store(config: &Config, db: &Db, clock: Clock) -> Arc<dyn FloodStore> {
    match config.flood {
        limits::flood::Backend::Sql => {
            // The sync's pages in one cache no larger than the table itself, so a flood that
            // fills the `flood` table costs the server the table's size at most.
            let table_kib = (limits::flood::table::bytes_for(config.flood_cells) / 1024) as u64;
            Arc::new(SqlFlood::new(
                db.own_connection(table_kib),
                config.flood_cells,
                clock,
            ))
        }
        limits::flood::Backend::Memory => Arc::new(MemoryFlood::new(config.flood_cells, clock)),
    }
}

/// Everything handlers share, over any flood store (tests pass a recording one).
pub async fn build_state(
    db: Db,
    flood: Arc<dyn FloodStore>,
    backend: limits::flood::Backend,
    clock: Clock,
) -> Result<AppState, sqlx::Error> {
    let site = Arc::new(Site::load(db.clone()).await?);
    let guard = Arc::new(FloodGuard::with_clock(flood, clock.clone()));
    // The receipts' current public key, published before the first receipt or JWKS request.
    let signer = domain::receipts::Signer::of(&site.get().await.keys);
    store::receipts::publish(&db, &signer.kid, &signer.x, store::now()).await?;
    // Before the first request: the counts of the current periods, so a restart keeps them.
    // Only when something counts: with nothing counting the flood store is not touched at all
    // (the server's upkeep reads them once something starts counting).
    if site.get().await.settings.anything_counts() {
        guard.warm_up().await;
    }
    Ok(AppState::new(http::Shared {
        db,
        site,
        guard,
        clock: clock.clone(),
        flood_backend: backend,
        work: Default::default(),
        versions: Default::default(),
        api_buckets: Arc::new(limits::bucket::Buckets::new(clock.clone())),
        api_seen: Default::default(),
        passwords: Arc::new(domain::password::Pool::for_this_machine()),
        proxies: Default::default(),
        forwarded_seen: Default::default(),
        bodies: Default::default(),
        secure_cookies: false,
        webhooks_allow_private: Arc::new(std::sync::atomic::AtomicBool::new(
            domain::delivery::endpoints::allow_private(),
        )),
        mailer: None,
        webhook_figures: Default::default(),
        step_waits: Default::default(),
        receipts: Default::default(),
        oidc: None,
    }))
}

/// Periodic maintenance: expired sessions, handles, API signatures, idempotency records, old
/// outbox rows (`domain::delivery::clean`), uploads no answer kept, the records of ended instances
/// past their retention (`domain::retention`), and flood events, each deleted in short batches
/// (`store::expired`) so that no visitor's write
/// waits behind it, whatever the backlog; then the planner's statistics (`Db::optimize`).
/// Records its run for the status report. Returns how many records went, by kind.
pub async fn run_cron(db: &Db, guard: &FloodGuard) -> Result<(u64, u64, u64), sqlx::Error> {
    let now = store::now();
    let sessions = store::sessions::delete_expired(db, now).await?;
    let handles = store::payments::delete_expired_handles(db, now).await?;
    store::api::delete_expired_signatures(db, now).await?;
    let idempotency = domain::api::idempotency::clean(db, now).await?;
    let outbox = domain::delivery::clean(db, now).await?;
    store::mails::clean_quota(db, now).await?;
    // Retired link keys, once no link signed under them can be unexpired.
    store::keys::prune_retired(db, now).await?;
    // Uploads cut off by a kill, or whose answer was never recorded.
    let uploads = store::files::sweep(db, now - domain::files::ARRIVING_SECS, 100).await?;
    let settings = domain::settings::Settings::load(db).await?;
    let erased = domain::retention::run(db, now, settings.retention_days).await?;
    let audit = domain::audit::expire(db, now, settings.audit_retention_days).await?;
    // No sync here: the server's upkeep writes its counts (and only while something counts),
    // and `orchestra cron`'s own store has counted nothing.
    let events = guard.collect_garbage().await.unwrap_or_else(|e| {
        tracing::warn!(error = %e, "cron could not collect expired flood events");
        0
    });
    store::settings::put_all(db, &[(domain::status::CRON_LAST_RUN, now.to_string())]).await?;
    db.checkpoint().await?;
    if let Err(e) = db.optimize().await {
        tracing::warn!(error = %e, "cron could not refresh the planner's statistics");
    }
    tracing::info!(
        sessions,
        handles,
        idempotency,
        outbox,
        uploads,
        erased,
        audit,
        flood_events = events,
        "cron ran"
    );
    Ok((sessions, handles, events))
}

/// Serves until Ctrl-C (or SIGTERM), with the cron timer and the flood store's sync running,
/// and the metrics endpoint on its own listener when there is one (`ORCHESTRA_METRICS_BIND`).
/// Connections and bodies are bounded by `config.connections` (`http::server`, `http::body`);
/// the soft descriptor limit is raised to the hard one first. At the stop, requests in progress
/// are let finish (`http::server::SHUTDOWN_GRACE` at most), then the flood store's counts are
/// written once more.
pub async fn serve(
    listener: TcpListener,
    metrics: Option<TcpListener>,
    state: AppState,
    config: &Config,
) -> std::io::Result<()> {
    let secure = state
        .site
        .get()
        .await
        .settings
        .base_url
        .starts_with("https://");
    let state = state
        .with_body_limits(&config.connections)
        .with_mailer(config.mailer.clone())
        .with_oidc(config.oidc.clone());
    let app = http::app(state.clone(), secure);
    let metrics = metrics.map(|listener| {
        let recorder = Arc::new(
            http::metrics::Metrics::new(state.guard.clone())
                .with_mail(state.mailer.as_ref().map(|m| m.figures.clone()))
                .with_webhooks(state.webhook_figures.clone())
                .with_instances(state.db.clone())
                .with_step_waits(&state.step_waits)
                .with_receipts(state.receipts.clone()),
        );
        tokio::spawn(async move {
            if let Err(e) = http::metrics::serve(listener, recorder, shutdown_signal()).await {
                tracing::error!(error = %e, "the metrics endpoint stopped");
            }
        })
    });
    let (stopping, stop) = domain::outbox::Stop::new();
    let background = spawn_background(state.clone(), config.flood_sync, stop);
    let options = http::server::Options {
        limits: config.connections,
        https: secure,
        proxies: state.proxies.clone(),
    };
    let result = http::server::serve(listener, app, options, shutdown_signal()).await;
    // The timers stop; a message in flight is finished and recorded, not cut off.
    stopping.set();
    let abort = background.abort_handle();
    if tokio::time::timeout(SENDERS_GRACE, background)
        .await
        .is_err()
    {
        tracing::warn!("the senders did not stop in time; stopped");
        abort.abort();
    }
    if let Some(metrics) = metrics {
        metrics.abort();
    }
    // The log's summary of callers refused unlogged this period, which this process will not
    // see end.
    state.guard.close();
    // What was counted since the last sync, so a restart keeps it (sql backend; a no-op else).
    // Nothing when nothing counted (`FloodGuard::upkeep`).
    if !state.db.vanished() {
        let counting = state.site.get().await.settings.anything_counts();
        match tokio::time::timeout(FINAL_SYNC, state.guard.upkeep(counting)).await {
            Ok(Some(Err(e))) => tracing::warn!(error = %e, "the flood store's last sync failed"),
            Ok(_) => {}
            Err(_) => tracing::warn!("the flood store's last sync took too long; skipped"),
        }
        match tokio::time::timeout(FINAL_SYNC, state.db.optimize()).await {
            Ok(Err(e)) => tracing::warn!(error = %e, "the planner's statistics were not refreshed"),
            Ok(Ok(())) => {}
            Err(_) => tracing::warn!("refreshing the planner's statistics took too long; skipped"),
        }
    }
    result
}

/// How often the server sends the webhooks and emails that are due.
const SENDERS_INTERVAL: Duration = Duration::from_secs(5);

/// How long the stop waits for the senders' messages in flight (an SMTP exchange, a webhook
/// attempt) to end and be recorded.
const SENDERS_GRACE: Duration = Duration::from_secs(35);

/// How long the stop waits for the flood store's last write.
const FINAL_SYNC: Duration = Duration::from_secs(5);

/// The server's timers: the flood store's upkeep every `sync_every` (its sync, and the sizing
/// charts' and the log's periods), the webhook and email senders every `SENDERS_INTERVAL`, and
/// `cron` every `CRON_INTERVAL`, the first of each at once: a backlog of expired rows (after a
/// flood, say) is deleted in the background while the server answers, never before it listens.
/// They run side by side, so a long cron never delays a sync. Each stops at `stop`, the run in
/// progress finished first (an email in flight is sent and recorded). `serve` starts them; a
/// test may start them on an app of its own.
pub fn spawn_background(
    state: AppState,
    sync_every: Duration,
    stop: domain::outbox::Stop,
) -> tokio::task::JoinHandle<()> {
    use domain::outbox::every;
    tokio::spawn(async move {
        let upkeep = every(sync_every, stop.clone(), || async {
            // Nothing is written into a database file that was deleted or replaced.
            if state.db.vanished() {
                return;
            }
            // Read from the snapshot every request uses, so a change of settings that starts
            // counting starts the upkeep at the next tick.
            let site = state.site.get().await;
            let counting = site.settings.anything_counts();
            if let Some(Err(e)) = state.guard.upkeep(counting).await {
                let meanwhile = site.settings.on_store_fault.meanwhile();
                tracing::warn!(error = %e, "flood store sync failed; {meanwhile}");
            }
            // Closes the sizing charts' and the log's periods off the request path.
            state.guard.tick();
        });
        let cron = every(CRON_INTERVAL, stop.clone(), || async {
            if state.db.vanished() {
                return;
            }
            if let Err(e) = run_cron(&state.db, &state.guard).await {
                tracing::error!(error = %e, "cron failed");
            }
        });
        // Webhooks go out here, off every request's path, each endpoint by a task of its own.
        let hooks = async {
            let sender = domain::delivery::send::Sender {
                db: state.db.clone(),
                keys: state.site.get().await.keys.clone(),
                allow_private: state.webhooks_private_allowed(),
                figures: state.webhook_figures.clone(),
            };
            sender
                .run(
                    SENDERS_INTERVAL,
                    state.site.clone(),
                    state.webhooks_allow_private.clone(),
                    stop.clone(),
                )
                .await;
        };
        // Participants' emails and steps' deadlines, likewise.
        let mail = every(SENDERS_INTERVAL, stop.clone(), || async {
            if state.db.vanished() {
                return;
            }
            let site = state.site.get().await;
            if let Err(e) = domain::mail::send::run_until(
                &state.db,
                &state.versions,
                &site,
                state.mailer.as_deref(),
                store::now(),
                &stop,
            )
            .await
            {
                tracing::error!(error = %e, "the email sender failed");
            }
        });
        tokio::join!(upkeep, cron, hooks, mail);
    })
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        if let Ok(mut s) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        {
            s.recv().await;
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
}
