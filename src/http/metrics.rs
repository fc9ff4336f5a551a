//! The Prometheus endpoint: `GET /metrics` on its own address (`ORCHESTRA_METRICS_BIND`, off
//! unless set), never on the app's, so it cannot be public by accident.
//!
//! The text is the `metrics-exporter-prometheus` crate's, from a recorder of this server's own
//! (never installed as the process's global one, so several servers in one test process keep
//! their figures apart). Almost nothing is added to a request's work: the guard already keeps
//! its figures in atomics ([`crate::limits::guard::Decisions`], [`crate::limits::guard::StoreHealth`]), and a
//! scrape copies them into the recorder's counters before rendering. The one figure measured
//! on the way is the guard's decision time, sampled (one decision in
//! [`crate::limits::guard::DECISION_SAMPLE`]); the process figures are read from `/proc/self` at scrape
//! time.
//!
//! The business figures: instances by workflow and state, counted by one grouped query at
//! scrape time and kept [`INSTANCES_FRESH`] so a storm of scrapes costs one query; how long
//! answered steps waited, observed as each answer is recorded ([`StepWaits`]); and emails by
//! kind and outcome, counted by the sender ([`crate::domain::mail::Figures`]). Their labels
//! are workflows' machine names and fixed words, never an address, a link or a title. See
//! docs/operations.md, Metrics.

use std::collections::BTreeSet;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use ::metrics::{Counter, Gauge, Key, KeyName, Label, Level, Metadata, Recorder, Unit};
use axum::Router;
use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use axum::routing::get;
use metrics_exporter_prometheus::{
    Matcher, PrometheusBuilder, PrometheusHandle, PrometheusRecorder,
};
use tokio::net::TcpListener;

use crate::domain::mail::{EMAILED, Tried};
use crate::domain::receipts::Outcome as ReceiptOutcome;
use crate::domain::workflow::InstanceState;
use crate::limits::guard::{Address, FloodGuard};
use crate::store::Db;
use crate::store::instances::Asked;

/// The path the figures are served on.
pub const PATH: &str = "/metrics";

/// The histogram of the guard's decision time, in seconds.
pub const DECISION_SECONDS: &str = "orchestra_guard_decision_seconds";

/// Its buckets: a decision is an in-memory count (about 0.1 µs), so they start well below a
/// microsecond; the last ones are there to show a lock or a stall.
pub const DECISION_BUCKETS: &[f64] = &[
    1e-7, 2.5e-7, 5e-7, 1e-6, 2.5e-6, 5e-6, 1e-5, 2.5e-5, 1e-4, 1e-3, 1e-2,
];

/// The gauge of instances by workflow and state.
pub const INSTANCES: &str = "orchestra_instances";

/// How long the instance counts are kept before a scrape reads them again.
pub const INSTANCES_FRESH: Duration = Duration::from_secs(5);

/// The histogram of how long answered steps waited, in seconds, by workflow.
pub const STEP_WAIT_SECONDS: &str = "orchestra_step_wait_seconds";

/// Its buckets: people answer in minutes, hours, days or weeks (1, 5, 15 and 30 minutes; 1,
/// 4 and 12 hours; 1, 2 and 4 days; 1, 2 and 4 weeks).
pub const STEP_WAIT_BUCKETS: &[f64] = &[
    60.0,
    300.0,
    900.0,
    1_800.0,
    3_600.0,
    14_400.0,
    43_200.0,
    86_400.0,
    172_800.0,
    345_600.0,
    604_800.0,
    1_209_600.0,
    2_419_200.0,
];

/// The counter of emails by kind and outcome.
pub const EMAILS: &str = "orchestra_emails_total";

/// The counter of receipts by outcome (`domain::receipts::Outcome`).
pub const RECEIPTS: &str = "orchestra_receipts_total";

static METADATA: Metadata<'static> =
    Metadata::new(module_path!(), Level::INFO, Some(module_path!()));

/// One address's counters, and where each one's value comes from.
/// One `address` label's counters: the guard's addresses behind it ([`Address::metric`]; the
/// sign-in's two limits are one label, as they are one request), each tier under the name it
/// has in the settings ([`Address::tiers`]).
struct AddressCounters {
    addresses: Vec<Address>,
    requests: Counter,
    /// Per tier name: refused, would have been refused, and the (address, tier index) behind it.
    tiers: Vec<TierCounters>,
}

struct TierCounters {
    refused: Counter,
    would_refuse: Counter,
    sources: Vec<(Address, usize)>,
}

/// The recorder of one server and the handles a scrape copies the guard's figures into.
pub struct Metrics {
    handle: PrometheusHandle,
    guard: Arc<FloodGuard>,
    addresses: Vec<AddressCounters>,
    without_store: Counter,
    syncs: [Counter; 2],
    faults: Counter,
    failing: Gauge,
    failing_seconds: Gauge,
    /// Emails: sent, tried again, failed for good (`orchestra_mails_total` by result), and
    /// due and waiting after the sender's last run.
    mails: [Counter; 3],
    mails_waiting: Gauge,
    mail_figures: Option<Arc<crate::domain::mail::Figures>>,
    /// Webhook deliveries: delivered, retried, failed (`orchestra_webhook_deliveries_total`),
    /// and waiting.
    hooks: [Counter; 3],
    hooks_waiting: Gauge,
    hook_figures: Option<Arc<crate::domain::delivery::send::Figures>>,
    /// `orchestra_emails_total`, per kind of [`EMAILED`] and per [`Tried`].
    emails: Vec<[Counter; 3]>,
    /// `orchestra_receipts_total`, per `receipts::Outcome`: the doorway's figures and the
    /// mailer's added.
    receipts: [Counter; ReceiptOutcome::ALL.len()],
    receipt_figures: Option<Arc<crate::domain::receipts::Figures>>,
    /// Kept to register the series whose labels are only known later: workflows' names.
    recorder: Arc<PrometheusRecorder>,
    instances: Option<Instances>,
    #[cfg(target_os = "linux")]
    process: process::Figures,
}

/// Where the instance counts come from, and when they were last read.
struct Instances {
    db: Db,
    /// Held across the query: scrapes at the same moment wait for one read and share it.
    read: tokio::sync::Mutex<Read>,
}

#[derive(Default)]
struct Read {
    at: Option<Instant>,
    /// Every (workflow, state) shown so far: one whose instances are gone goes to 0.
    shown: BTreeSet<(String, &'static str)>,
}

/// Where answered steps' waits go (`orchestra_step_wait_seconds`): the server's answers are
/// observed into it, and it into the metrics' recorder once the endpoint is served; before
/// that, and without one, an observation is dropped.
#[derive(Default)]
pub struct StepWaits {
    recorder: OnceLock<Arc<PrometheusRecorder>>,
}

impl StepWaits {
    /// One answered step's wait, under its workflow's machine name.
    pub fn observe(&self, asked: &Asked) {
        if let Some(recorder) = self.recorder.get() {
            let key = Key::from_parts(
                STEP_WAIT_SECONDS,
                vec![Label::new("workflow", asked.workflow.clone())],
            );
            // An answer is a person's act, seldom enough for a lookup of the series each time.
            recorder
                .register_histogram(&key, &METADATA)
                .record(asked.waited as f64);
        }
    }
}

impl Metrics {
    /// A recorder for this guard's figures; from now on one decision in
    /// [`crate::limits::guard::DECISION_SAMPLE`] is timed.
    pub fn new(guard: Arc<FloodGuard>) -> Self {
        let recorder = PrometheusBuilder::new()
            .set_buckets_for_metric(Matcher::Full(DECISION_SECONDS.to_owned()), DECISION_BUCKETS)
            .and_then(|b| {
                b.set_buckets_for_metric(
                    Matcher::Full(STEP_WAIT_SECONDS.to_owned()),
                    STEP_WAIT_BUCKETS,
                )
            })
            .expect("the buckets are not empty")
            .build_recorder();
        let counter = |name: &'static str, labels: &[(&'static str, &'static str)]| {
            recorder.register_counter(&key(name, labels), &METADATA)
        };
        let gauge = |name: &'static str| recorder.register_gauge(&key(name, &[]), &METADATA);
        let describe = |name: &'static str, unit: Option<Unit>, help: &'static str| {
            recorder.describe_counter(KeyName::from_const_str(name), unit, help.into())
        };
        describe(
            "orchestra_guard_requests_total",
            None,
            "Requests the guard counted (limits on), by address.",
        );
        describe(
            "orchestra_guard_refused_total",
            None,
            "Requests refused, by address and the tier that refused them.",
        );
        describe(
            "orchestra_guard_would_refuse_total",
            None,
            "Report-only mode: requests answered that enforcing would have refused, by address and tier.",
        );
        describe(
            "orchestra_guard_decisions_without_store_total",
            None,
            "Counted requests decided while the flood store was failing.",
        );
        describe(
            "orchestra_flood_store_syncs_total",
            None,
            "Syncs of the flood store, by result (ok, failed).",
        );
        describe(
            "orchestra_flood_store_faults_total",
            None,
            "Faults of the flood store: runs of failed syncs.",
        );
        describe(
            "orchestra_flood_store_failing",
            None,
            "1 while the flood store's last sync failed, else 0.",
        );
        describe(
            "orchestra_flood_store_failing_seconds",
            Some(Unit::Seconds),
            "How long the current flood store fault has lasted; 0 while the store works.",
        );
        describe(
            "orchestra_webhook_deliveries_total",
            None,
            "Webhook delivery attempts this process made, by result (delivered, retried, failed).",
        );
        recorder.describe_gauge(
            KeyName::from_const_str("orchestra_webhook_deliveries_waiting"),
            None,
            "Webhook deliveries due and not yet made after the sender's last run (counted to 10,000).".into(),
        );
        describe(
            "orchestra_mails_total",
            None,
            "Participants' emails this process tried, by result (sent, retried, failed).",
        );
        recorder.describe_gauge(
            KeyName::from_const_str("orchestra_mails_waiting"),
            None,
            "Emails due and not yet sent after the sender's last run (counted to 10,000).".into(),
        );
        describe(
            EMAILS,
            None,
            "Participants' emails this process tried, by kind (link, reminder, closed, outcome) and outcome (sent, retried, failed).",
        );
        describe(
            RECEIPTS,
            None,
            "Receipts this process gave, by outcome (downloaded under a link, emailed with an outcome, refused).",
        );
        recorder.describe_gauge(
            KeyName::from_const_str(INSTANCES),
            None,
            "Instances by workflow (its machine name) and state, read at most every 5 seconds."
                .into(),
        );
        recorder.describe_histogram(
            KeyName::from_const_str(STEP_WAIT_SECONDS),
            Some(Unit::Seconds),
            "How long answered steps had waited since they were asked, by workflow.".into(),
        );
        recorder.describe_histogram(
            KeyName::from_const_str(DECISION_SECONDS),
            Some(Unit::Seconds),
            "The guard's decision time (one decision in 64 is timed), by address.".into(),
        );

        let mut labels: Vec<&'static str> = Vec::new();
        for guarded in Address::ALL {
            if !labels.contains(&guarded.metric()) {
                labels.push(guarded.metric());
            }
        }
        let addresses = labels
            .into_iter()
            .map(|address| {
                let guarded: Vec<Address> = Address::ALL
                    .into_iter()
                    .filter(|a| a.metric() == address)
                    .collect();
                let histogram = recorder
                    .register_histogram(&key(DECISION_SECONDS, &[("address", address)]), &METADATA);
                let mut tiers: Vec<(&'static str, TierCounters)> = Vec::new();
                for &event in &guarded {
                    guard.decisions().time_with(event, histogram.clone());
                    for (index, tier) in event.tiers().into_iter().enumerate() {
                        match tiers.iter_mut().find(|(name, _)| *name == tier) {
                            Some((_, t)) => t.sources.push((event, index)),
                            None => tiers.push((
                                tier,
                                TierCounters {
                                    refused: counter(
                                        "orchestra_guard_refused_total",
                                        &[("address", address), ("tier", tier)],
                                    ),
                                    would_refuse: counter(
                                        "orchestra_guard_would_refuse_total",
                                        &[("address", address), ("tier", tier)],
                                    ),
                                    sources: vec![(event, index)],
                                },
                            )),
                        }
                    }
                }
                AddressCounters {
                    addresses: guarded,
                    requests: counter("orchestra_guard_requests_total", &[("address", address)]),
                    tiers: tiers.into_iter().map(|(_, t)| t).collect(),
                }
            })
            .collect();

        let metrics = Self {
            handle: recorder.handle(),
            addresses,
            without_store: counter("orchestra_guard_decisions_without_store_total", &[]),
            syncs: [
                counter("orchestra_flood_store_syncs_total", &[("result", "ok")]),
                counter("orchestra_flood_store_syncs_total", &[("result", "failed")]),
            ],
            faults: counter("orchestra_flood_store_faults_total", &[]),
            failing: gauge("orchestra_flood_store_failing"),
            failing_seconds: gauge("orchestra_flood_store_failing_seconds"),
            mails: [
                counter("orchestra_mails_total", &[("result", "sent")]),
                counter("orchestra_mails_total", &[("result", "retried")]),
                counter("orchestra_mails_total", &[("result", "failed")]),
            ],
            mails_waiting: gauge("orchestra_mails_waiting"),
            mail_figures: None,
            hooks: [
                counter(
                    "orchestra_webhook_deliveries_total",
                    &[("result", "delivered")],
                ),
                counter(
                    "orchestra_webhook_deliveries_total",
                    &[("result", "retried")],
                ),
                counter(
                    "orchestra_webhook_deliveries_total",
                    &[("result", "failed")],
                ),
            ],
            hooks_waiting: gauge("orchestra_webhook_deliveries_waiting"),
            hook_figures: None,
            emails: EMAILED
                .iter()
                .map(|kind| {
                    Tried::ALL.map(|t| {
                        counter(EMAILS, &[("kind", kind.as_str()), ("outcome", t.as_str())])
                    })
                })
                .collect(),
            receipts: ReceiptOutcome::ALL.map(|o| counter(RECEIPTS, &[("outcome", o.as_str())])),
            receipt_figures: None,
            instances: None,
            #[cfg(target_os = "linux")]
            process: process::Figures::new(&recorder),
            guard,
            recorder: Arc::new(recorder),
        };
        metrics.recorder.describe_gauge(
            KeyName::from_const_str("orchestra_build_info"),
            None,
            "Always 1, labelled with the version of the binary.".into(),
        );
        let version = metrics.recorder.register_gauge(
            &key(
                "orchestra_build_info",
                &[("version", env!("CARGO_PKG_VERSION"))],
            ),
            &METADATA,
        );
        version.set(1.0);
        metrics
    }

    /// The figures of the mailer this server sends through, for `orchestra_mails_*`.
    pub fn with_mail(mut self, figures: Option<Arc<crate::domain::mail::Figures>>) -> Self {
        self.mail_figures = figures;
        self
    }

    /// The figures of this server's webhook sender, for `orchestra_webhook_deliveries_*`.
    pub fn with_webhooks(mut self, figures: Arc<crate::domain::delivery::send::Figures>) -> Self {
        self.hook_figures = Some(figures);
        self
    }

    /// The figures of this server's receipts (`orchestra_receipts_total`).
    pub fn with_receipts(mut self, figures: Arc<crate::domain::receipts::Figures>) -> Self {
        self.receipt_figures = Some(figures);
        self
    }

    /// The instances of `db`, counted at scrape time (`orchestra_instances`).
    pub fn with_instances(mut self, db: Db) -> Self {
        self.instances = Some(Instances {
            db,
            read: Default::default(),
        });
        self
    }

    /// The answered steps' waits of the server `waits` belongs to (`orchestra_step_wait_seconds`).
    pub fn with_step_waits(self, waits: &StepWaits) -> Self {
        let _ = waits.recorder.set(self.recorder.clone());
        self
    }

    /// Reads the instance counts again when the last read is older than [`INSTANCES_FRESH`];
    /// a failed read keeps the last figures (and is logged), and is not tried again sooner:
    /// a database in trouble is not read at the pace of the scrapes either.
    async fn count_instances(&self) {
        let Some(instances) = &self.instances else {
            return;
        };
        let mut read = instances.read.lock().await;
        if read.at.is_some_and(|at| at.elapsed() < INSTANCES_FRESH) {
            return;
        }
        let rows = crate::store::workflows::instance_counts(&instances.db).await;
        read.at = Some(Instant::now());
        let rows = match rows {
            Ok(rows) => rows,
            Err(e) => {
                tracing::warn!(error = %e, "the metrics could not count the instances");
                return;
            }
        };
        let mut now: BTreeSet<(String, &'static str)> = BTreeSet::new();
        for (workflow, _, _) in &rows {
            for state in InstanceState::ALL {
                now.insert((workflow.clone(), state.as_str()));
            }
        }
        let gauge = |workflow: &str, state: &'static str| {
            let labels = vec![
                Label::new("workflow", workflow.to_owned()),
                Label::from_static_parts("state", state),
            ];
            self.recorder
                .register_gauge(&Key::from_parts(INSTANCES, labels), &METADATA)
        };
        // Every state of a workflow that has instances, and 0 for what was shown and is gone.
        for (workflow, state) in now.iter().chain(read.shown.iter()) {
            let n = rows
                .iter()
                .find(|(w, s, _)| w == workflow && s == state)
                .map_or(0, |r| r.2);
            gauge(workflow, state).set(n as f64);
        }
        read.shown.extend(now);
    }

    /// Copies the guard's figures and the process's into the recorder, then renders them all.
    pub async fn render(&self) -> String {
        self.count_instances().await;
        let decisions = self.guard.decisions();
        for a in &self.addresses {
            // A request of several decisions is counted apart (`Address::counts_requests`);
            // otherwise each decision is a request.
            let requests = match a.addresses.iter().find(|a| a.counts_requests()) {
                Some(&address) => decisions.read(address).requests,
                None => a
                    .addresses
                    .iter()
                    .map(|&address| decisions.read(address).decided())
                    .sum(),
            };
            a.requests.absolute(requests);
            for tier in &a.tiers {
                let (mut refused, mut would) = (0, 0);
                for &(event, index) in &tier.sources {
                    let read = decisions.read(event);
                    refused += read.refused[index];
                    would += read.would_refuse[index];
                }
                tier.refused.absolute(refused);
                tier.would_refuse.absolute(would);
            }
        }
        let health = self.guard.health();
        self.without_store
            .absolute(health.decisions_without_store());
        let (ok, failed) = health.syncs();
        self.syncs[0].absolute(ok);
        self.syncs[1].absolute(failed);
        self.faults.absolute(health.faults());
        let failing_for = health.failing_for();
        self.failing
            .set(if failing_for.is_some() { 1.0 } else { 0.0 });
        self.failing_seconds
            .set(failing_for.map_or(0.0, |d| d.as_secs_f64()));
        let (sent, retried, failed, waiting) = self
            .mail_figures
            .as_ref()
            .map_or((0, 0, 0, 0), |f| f.read());
        self.mails[0].absolute(sent);
        self.mails[1].absolute(retried);
        self.mails[2].absolute(failed);
        self.mails_waiting.set(waiting as f64);
        for (kind, counters) in EMAILED.iter().zip(&self.emails) {
            for (tried, counter) in Tried::ALL.into_iter().zip(counters) {
                let n = self
                    .mail_figures
                    .as_ref()
                    .map_or(0, |f| f.tried(*kind, tried));
                counter.absolute(n);
            }
        }
        for (outcome, counter) in ReceiptOutcome::ALL.into_iter().zip(&self.receipts) {
            let here = self.receipt_figures.as_ref().map_or(0, |f| f.read(outcome));
            let mailed = self
                .mail_figures
                .as_ref()
                .map_or(0, |f| f.receipts.read(outcome));
            counter.absolute(here + mailed);
        }
        let (delivered, retried, failed, waiting) = self
            .hook_figures
            .as_ref()
            .map_or((0, 0, 0, 0), |f| f.read());
        self.hooks[0].absolute(delivered);
        self.hooks[1].absolute(retried);
        self.hooks[2].absolute(failed);
        self.hooks_waiting.set(waiting as f64);
        #[cfg(target_os = "linux")]
        self.process.read();
        self.handle.render()
    }
}

fn key(name: &'static str, labels: &[(&'static str, &'static str)]) -> Key {
    Key::from_parts(
        name,
        labels
            .iter()
            .map(|&(k, v)| Label::from_static_parts(k, v))
            .collect::<Vec<_>>(),
    )
}

/// `GET /metrics` and nothing else: none of the app's routes.
pub fn router(metrics: Arc<Metrics>) -> Router {
    Router::new().route(PATH, get(scrape)).with_state(metrics)
}

async fn scrape(State(metrics): State<Arc<Metrics>>) -> impl IntoResponse {
    (
        [(CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")],
        metrics.render().await,
    )
}

/// Serves the endpoint on `listener` until `shutdown` resolves.
pub async fn serve(
    listener: TcpListener,
    metrics: Arc<Metrics>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, router(metrics))
        .with_graceful_shutdown(shutdown)
        .await
}

/// The usual process figures, from `/proc/self`, under the names every Prometheus client uses.
/// Read by hand rather than through a crate: five files of a stable format, where the crates
/// for it bring a `/proc` parser of every file.
#[cfg(target_os = "linux")]
mod process {
    use ::metrics::{Counter, Gauge, KeyName, Recorder, Unit};
    use metrics_exporter_prometheus::PrometheusRecorder;

    use super::{METADATA, key};

    pub struct Figures {
        cpu_seconds: Counter,
        resident: Gauge,
        virtual_memory: Gauge,
        open_fds: Gauge,
        max_fds: Gauge,
        threads: Gauge,
        start_time: Gauge,
        /// Clock ticks per second and the page size (sysconf), and the boot time (/proc/stat).
        ticks: f64,
        page: f64,
        boot_time: Option<f64>,
    }

    impl Figures {
        pub fn new(recorder: &PrometheusRecorder) -> Self {
            let describe = |name: &'static str, unit: Unit, help: &'static str| {
                recorder.describe_gauge(KeyName::from_const_str(name), Some(unit), help.into())
            };
            recorder.describe_counter(
                KeyName::from_const_str("process_cpu_seconds_total"),
                Some(Unit::Seconds),
                "User and system CPU time spent, in whole seconds.".into(),
            );
            describe(
                "process_resident_memory_bytes",
                Unit::Bytes,
                "Resident memory size.",
            );
            describe(
                "process_virtual_memory_bytes",
                Unit::Bytes,
                "Virtual memory size.",
            );
            describe("process_open_fds", Unit::Count, "Open file descriptors.");
            describe(
                "process_max_fds",
                Unit::Count,
                "The limit of open file descriptors.",
            );
            describe("process_threads", Unit::Count, "Threads of the process.");
            describe(
                "process_start_time_seconds",
                Unit::Seconds,
                "When the process started, in seconds since the Unix epoch.",
            );
            let gauge = |name| recorder.register_gauge(&key(name, &[]), &METADATA);
            // SAFETY: sysconf reads a constant of the system; no memory is handed over.
            let (ticks, page) = unsafe {
                (
                    libc::sysconf(libc::_SC_CLK_TCK),
                    libc::sysconf(libc::_SC_PAGESIZE),
                )
            };
            let boot_time = std::fs::read_to_string("/proc/stat").ok().and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("btime "))
                    .and_then(|v| v.trim().parse::<f64>().ok())
            });
            Self {
                cpu_seconds: recorder
                    .register_counter(&key("process_cpu_seconds_total", &[]), &METADATA),
                resident: gauge("process_resident_memory_bytes"),
                virtual_memory: gauge("process_virtual_memory_bytes"),
                open_fds: gauge("process_open_fds"),
                max_fds: gauge("process_max_fds"),
                threads: gauge("process_threads"),
                start_time: gauge("process_start_time_seconds"),
                ticks: if ticks > 0 { ticks as f64 } else { 100.0 },
                page: if page > 0 { page as f64 } else { 4096.0 },
                boot_time,
            }
        }

        /// Reads the figures now; one that cannot be read keeps its last value.
        pub fn read(&self) {
            if let Some(stat) = Stat::read() {
                self.cpu_seconds
                    .absolute(((stat.utime + stat.stime) as f64 / self.ticks) as u64);
                self.resident.set(stat.rss_pages as f64 * self.page);
                self.virtual_memory.set(stat.vsize as f64);
                self.threads.set(stat.threads as f64);
                if let Some(boot) = self.boot_time {
                    self.start_time
                        .set(boot + stat.start_ticks as f64 / self.ticks);
                }
            }
            if let Ok(entries) = std::fs::read_dir("/proc/self/fd") {
                self.open_fds.set(entries.count() as f64);
            }
            let mut limit = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            // SAFETY: getrlimit writes one rlimit into the one we own.
            if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0 {
                self.max_fds.set(limit.rlim_cur as f64);
            }
        }
    }

    /// The fields of /proc/self/stat that are read (proc(5)).
    #[derive(Debug, PartialEq)]
    pub(super) struct Stat {
        pub utime: u64,
        pub stime: u64,
        pub threads: u64,
        pub start_ticks: u64,
        pub vsize: u64,
        pub rss_pages: u64,
    }

    impl Stat {
        fn read() -> Option<Self> {
            Self::parse(&std::fs::read_to_string("/proc/self/stat").ok()?)
        }

        /// The command's name may hold spaces and parentheses: fields are counted after the
        /// last `)`, where field 3 (the state) begins.
        pub(super) fn parse(text: &str) -> Option<Self> {
            let rest = &text[text.rfind(')')? + 1..];
            let fields: Vec<&str> = rest.split_whitespace().collect();
            let field = |n: usize| fields.get(n - 3)?.parse::<u64>().ok();
            Some(Self {
                utime: field(14)?,
                stime: field(15)?,
                threads: field(20)?,
                start_ticks: field(22)?,
                vsize: field(23)?,
                rss_pages: field(24)?,
            })
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::process::Stat;

    #[test]
    fn stat_fields_are_counted_after_the_last_parenthesis() {
        let line = "4242 (a (b) c) S 1 4242 4242 0 -1 4194560 900 0 0 0 \
                    150 25 0 0 20 0 7 0 123456 987654321 2048 18446744073709551615";
        assert_eq!(
            Stat::parse(line),
            Some(Stat {
                utime: 150,
                stime: 25,
                threads: 7,
                start_ticks: 123456,
                vsize: 987654321,
                rss_pages: 2048,
            })
        );
        assert_eq!(Stat::parse("4242 (x) S 1"), None);
    }
}
