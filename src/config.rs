//! Startup configuration from `ORCHESTRA_*` variables: read once, validated, never written.
//! Everything an administrator may change at run time is a setting instead (`settings.rs`).

use std::net::SocketAddr;
use std::time::Duration;

use crate::i18n::Message;
use crate::limits::flood::Backend;
use crate::proxy::{ClientIpHeader, TrustedProxies};

#[derive(Clone)]
pub struct Config {
    /// `ORCHESTRA_DATABASE_URL`: a SQLite path or `sqlite:` URL, or a `postgres://` URL.
    pub database_url: String,
    /// Whether `database_url` is the default (not set): only then may `serve` create it.
    pub database_is_default: bool,
    /// `ORCHESTRA_TRUSTED_PROXIES`: addresses or CIDR ranges whose forwarded header is read,
    /// with `ORCHESTRA_CLIENT_IP_HEADER`, the one header read (`x-forwarded-for` unless set).
    pub trusted_proxies: TrustedProxies,
    /// `ORCHESTRA_FLOOD`: `sql` (default) or `memory`.
    pub flood: Backend,
    /// `ORCHESTRA_FLOOD_CELLS`: cells per row of the counting table (memory is 128 × this).
    pub flood_cells: usize,
    /// `ORCHESTRA_FLOOD_SYNC_MS`: how often the SQL backend writes and reads shared counts.
    pub flood_sync: Duration,
    /// `ORCHESTRA_METRICS_BIND`: where `serve` answers `GET /metrics`; off unless set.
    pub metrics_bind: Option<SocketAddr>,
    /// The server's bounds on connections and request bodies (`http::server`, `http::body`).
    pub connections: Connections,
    /// `ORCHESTRA_SMTP_URL` and `ORCHESTRA_MAIL_FROM`: where participants' emails go out;
    /// `None` when unset (no email is sent).
    pub mailer: Option<crate::domain::mail::Mailer>,
    /// `ORCHESTRA_FILES_DIR`: an existing directory for uploaded files' bytes; the database
    /// when unset.
    pub files_dir: Option<std::path::PathBuf>,
    /// `ORCHESTRA_OIDC_ISSUER`, `ORCHESTRA_OIDC_CLIENT_ID`, `ORCHESTRA_OIDC_CLIENT_SECRET` (all
    /// three or none) and `ORCHESTRA_OIDC_NAME`: the OpenID Provider administrators may sign in
    /// through; `None` when unset.
    pub oidc: Option<crate::domain::oidc::OidcConfig>,
}

/// How long a connection may take and how many may be open, and how much of request bodies the
/// server holds at once. docs/operations.md ("Connections and bodies") says how to size each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Connections {
    /// `ORCHESTRA_HEADER_TIMEOUT_MS`: a request's head must arrive whole within this, counted
    /// from the connection's opening for its first request, else from its first byte.
    pub header_timeout: Duration,
    /// `ORCHESTRA_IDLE_TIMEOUT_MS`: how long a kept-alive connection waits for its next request;
    /// an answer must also be taken by the client within it.
    pub idle_timeout: Duration,
    /// `ORCHESTRA_BODY_TIMEOUT_MS`: a request's body must arrive within this, plus a second for
    /// every `body_min_rate` bytes that arrived; and a body that stalls this long is cut.
    pub body_timeout: Duration,
    /// `ORCHESTRA_BODY_MIN_RATE`: bytes a second a body keeps arriving at to earn more time.
    pub body_min_rate: u64,
    /// `ORCHESTRA_MAX_CONNECTIONS`: open connections at once, lowered to fit the descriptors.
    pub max_connections: usize,
    /// `ORCHESTRA_MAX_CONNECTIONS_PER_ADDRESS`: from one client address (IPv6: one /64); a
    /// trusted proxy's own connections count only against the total.
    pub max_per_address: usize,
    /// `ORCHESTRA_MAX_BODY_BYTES_IN_FLIGHT`: request bodies held at once, all requests together.
    pub max_body_bytes_in_flight: usize,
    /// `ORCHESTRA_MAX_HEADER_BYTES`: a request's head, its request line and headers together.
    pub max_header_bytes: usize,
}

pub const DEFAULT_HEADER_TIMEOUT_MS: u64 = 10_000;
pub const DEFAULT_IDLE_TIMEOUT_MS: u64 = 60_000;
pub const DEFAULT_BODY_TIMEOUT_MS: u64 = 30_000;
/// A quarter of a slow mobile line's upload (2G's EDGE sends about 30 KiB a second).
pub const DEFAULT_BODY_MIN_RATE: u64 = 8 << 10;
pub const DEFAULT_MAX_CONNECTIONS: usize = 4096;
pub const DEFAULT_MAX_CONNECTIONS_PER_ADDRESS: usize = 128;
pub const DEFAULT_MAX_BODY_BYTES_IN_FLIGHT: usize = 32 << 20;
pub const DEFAULT_MAX_HEADER_BYTES: usize = 16 << 10;
/// The smallest body budget: the largest body one route takes (256 KiB) four times over.
pub const MIN_BODY_BYTES_IN_FLIGHT: usize = 1 << 20;

impl Default for Connections {
    fn default() -> Self {
        Self {
            header_timeout: Duration::from_millis(DEFAULT_HEADER_TIMEOUT_MS),
            idle_timeout: Duration::from_millis(DEFAULT_IDLE_TIMEOUT_MS),
            body_timeout: Duration::from_millis(DEFAULT_BODY_TIMEOUT_MS),
            body_min_rate: DEFAULT_BODY_MIN_RATE,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_per_address: DEFAULT_MAX_CONNECTIONS_PER_ADDRESS,
            max_body_bytes_in_flight: DEFAULT_MAX_BODY_BYTES_IN_FLIGHT,
            max_header_bytes: DEFAULT_MAX_HEADER_BYTES,
        }
    }
}

pub const DEFAULT_DATABASE_URL: &str = "sqlite:orchestra.db";
pub const DEFAULT_FLOOD_CELLS: usize = 1 << 16;
pub const DEFAULT_FLOOD_SYNC_MS: u64 = 1000;

impl Config {
    pub fn from_env() -> Result<Self, Message> {
        Self::from_lookup(|k| std::env::var(k).ok())
    }

    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<Self, Message> {
        let set_url = get("ORCHESTRA_DATABASE_URL").filter(|v| !v.trim().is_empty());
        let database_is_default = set_url.is_none();
        let database_url = set_url.unwrap_or_else(|| DEFAULT_DATABASE_URL.to_owned());
        crate::store::DatabaseUrl::parse(&database_url).map_err(|refused| refused.message())?;
        let trusted_proxies = match get("ORCHESTRA_TRUSTED_PROXIES") {
            None => TrustedProxies::default(),
            Some(v) => TrustedProxies::parse(&v)
                .map_err(|bad| Message::new("config-env-trusted-proxies").arg("value", bad))?,
        };
        // A header named while no proxy is: the operator expects it read, and it never is.
        let header = get("ORCHESTRA_CLIENT_IP_HEADER").filter(|v| !v.trim().is_empty());
        let trusted_proxies = match header {
            None => trusted_proxies,
            Some(v) if trusted_proxies.is_empty() => {
                return Err(Message::new("config-env-client-ip-header-alone").arg("value", v));
            }
            Some(v) => trusted_proxies.with_header(
                ClientIpHeader::parse(&v)
                    .ok_or_else(|| Message::new("config-env-client-ip-header").arg("value", v))?,
            ),
        };
        let flood = match get("ORCHESTRA_FLOOD") {
            None => Backend::Sql,
            Some(v) => Backend::parse(v.trim())
                .ok_or_else(|| Message::new("config-env-flood").arg("value", v.clone()))?,
        };
        let metrics_bind =
            match get("ORCHESTRA_METRICS_BIND").filter(|v| !v.trim().is_empty()) {
                None => None,
                Some(v) => Some(v.trim().parse::<SocketAddr>().map_err(|_| {
                    Message::new("config-env-metrics-bind").arg("value", v.clone())
                })?),
            };
        let number = |name: &str, default: u64, min: u64, max: u64| -> Result<u64, Message> {
            match get(name) {
                None => Ok(default),
                Some(v) => v
                    .trim()
                    .parse::<u64>()
                    .ok()
                    .filter(|n| (min..=max).contains(n))
                    .ok_or_else(|| {
                        Message::new("config-env-number")
                            .arg("name", name.to_owned())
                            .arg("min", min.to_string())
                            .arg("max", max.to_string())
                            .arg("value", v.clone())
                    }),
            }
        };
        let mailer = crate::domain::mail::Mailer::from_lookup(&get).map_err(|r| r.message())?;
        let files_dir = match get("ORCHESTRA_FILES_DIR").filter(|v| !v.trim().is_empty()) {
            None => None,
            Some(dir) if std::path::Path::new(&dir).is_dir() => Some(dir.into()),
            Some(dir) => return Err(Message::new("config-env-files-dir").arg("value", dir)),
        };
        let oidc = crate::domain::oidc::OidcConfig::from_lookup(&get)?;
        Ok(Self {
            oidc,
            mailer,
            files_dir,
            database_url,
            database_is_default,
            trusted_proxies,
            flood,
            flood_cells: number(
                "ORCHESTRA_FLOOD_CELLS",
                DEFAULT_FLOOD_CELLS as u64,
                16,
                1 << 24,
            )? as usize,
            flood_sync: Duration::from_millis(number(
                "ORCHESTRA_FLOOD_SYNC_MS",
                DEFAULT_FLOOD_SYNC_MS,
                10,
                60_000,
            )?),
            metrics_bind,
            connections: Connections {
                header_timeout: Duration::from_millis(number(
                    "ORCHESTRA_HEADER_TIMEOUT_MS",
                    DEFAULT_HEADER_TIMEOUT_MS,
                    100,
                    600_000,
                )?),
                idle_timeout: Duration::from_millis(number(
                    "ORCHESTRA_IDLE_TIMEOUT_MS",
                    DEFAULT_IDLE_TIMEOUT_MS,
                    100,
                    3_600_000,
                )?),
                body_timeout: Duration::from_millis(number(
                    "ORCHESTRA_BODY_TIMEOUT_MS",
                    DEFAULT_BODY_TIMEOUT_MS,
                    100,
                    600_000,
                )?),
                body_min_rate: number(
                    "ORCHESTRA_BODY_MIN_RATE",
                    DEFAULT_BODY_MIN_RATE,
                    512,
                    1 << 30,
                )?,
                max_connections: number(
                    "ORCHESTRA_MAX_CONNECTIONS",
                    DEFAULT_MAX_CONNECTIONS as u64,
                    16,
                    1 << 20,
                )? as usize,
                max_per_address: number(
                    "ORCHESTRA_MAX_CONNECTIONS_PER_ADDRESS",
                    DEFAULT_MAX_CONNECTIONS_PER_ADDRESS as u64,
                    1,
                    1 << 20,
                )? as usize,
                max_body_bytes_in_flight: number(
                    "ORCHESTRA_MAX_BODY_BYTES_IN_FLIGHT",
                    DEFAULT_MAX_BODY_BYTES_IN_FLIGHT as u64,
                    MIN_BODY_BYTES_IN_FLIGHT as u64,
                    16 << 30,
                )? as usize,
                // hyper's smallest buffer is 8 KiB.
                max_header_bytes: number(
                    "ORCHESTRA_MAX_HEADER_BYTES",
                    DEFAULT_MAX_HEADER_BYTES as u64,
                    8 << 10,
                    1 << 20,
                )? as usize,
            },
        })
    }
}

/// The database URL's password never reaches a log line or a panic message.
impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field(
                "database_url",
                &crate::store::redact_url(&self.database_url),
            )
            .field("database_is_default", &self.database_is_default)
            .field("trusted_proxies", &self.trusted_proxies)
            .field("flood", &self.flood)
            .field("flood_cells", &self.flood_cells)
            .field("flood_sync", &self.flood_sync)
            .field("metrics_bind", &self.metrics_bind)
            .field("connections", &self.connections)
            .field("oidc", &self.oidc)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_refusals() {
        let c = Config::from_lookup(|_| None).unwrap();
        assert_eq!(c.database_url, DEFAULT_DATABASE_URL);
        assert_eq!(c.flood, Backend::Sql);
        assert!(Config::from_lookup(|k| (k == "ORCHESTRA_FLOOD").then(|| "redis".into())).is_err());
        assert!(
            Config::from_lookup(|k| (k == "ORCHESTRA_FLOOD_CELLS").then(|| "-1".into())).is_err()
        );
    }

    fn with(name: &'static str, value: &'static str) -> Result<Config, Message> {
        Config::from_lookup(move |k| (k == name).then(|| value.into()))
    }

    #[test]
    fn debug_never_shows_the_database_password() {
        let c = with(
            "ORCHESTRA_DATABASE_URL",
            "postgres://orchestra:s3cret-pw@db.example.org:5432/orchestra",
        )
        .unwrap();
        let shown = format!("{c:?}");
        assert!(!shown.contains("s3cret-pw"), "{shown}");
        assert!(shown.contains("postgres://orchestra:***@db.example.org:5432/orchestra"));
    }

    #[test]
    fn an_unknown_scheme_is_refused_with_the_accepted_ones() {
        let m = with("ORCHESTRA_DATABASE_URL", "mysql://x").unwrap_err();
        let text = m.render(crate::i18n::Lang::En);
        assert!(text.contains("mysql://x"), "{text}");
        assert!(
            text.contains("sqlite:, postgres://, postgresql://"),
            "{text}"
        );
        assert!(with("ORCHESTRA_DATABASE_URL", "sqlite:/tmp/x.db").is_ok());
        assert!(with("ORCHESTRA_DATABASE_URL", "/tmp/x.db").is_ok());
        assert!(with("ORCHESTRA_DATABASE_URL", "postgresql://u@h/d").is_ok());
    }

    #[test]
    fn the_metrics_address_is_off_unless_set_and_must_be_an_address() {
        assert_eq!(Config::from_lookup(|_| None).unwrap().metrics_bind, None);
        assert_eq!(
            with("ORCHESTRA_METRICS_BIND", " ").unwrap().metrics_bind,
            None
        );
        assert_eq!(
            with("ORCHESTRA_METRICS_BIND", "127.0.0.1:9464")
                .unwrap()
                .metrics_bind,
            Some("127.0.0.1:9464".parse().unwrap())
        );
        let m = with("ORCHESTRA_METRICS_BIND", "localhost").unwrap_err();
        assert!(m.render(crate::i18n::Lang::En).contains("\"localhost\""));
    }

    #[test]
    fn connection_limits_have_safe_defaults_and_are_checked() {
        assert_eq!(
            Config::from_lookup(|_| None).unwrap().connections,
            Connections::default()
        );
        let c = with("ORCHESTRA_IDLE_TIMEOUT_MS", "2500")
            .unwrap()
            .connections;
        assert_eq!(c.idle_timeout, Duration::from_millis(2500));
        for (name, bad) in [
            ("ORCHESTRA_HEADER_TIMEOUT_MS", "0"),
            ("ORCHESTRA_IDLE_TIMEOUT_MS", "forever"),
            ("ORCHESTRA_BODY_TIMEOUT_MS", "600001"),
            ("ORCHESTRA_MAX_CONNECTIONS", "15"),
            ("ORCHESTRA_MAX_CONNECTIONS_PER_ADDRESS", "0"),
            ("ORCHESTRA_MAX_BODY_BYTES_IN_FLIGHT", "65536"),
            ("ORCHESTRA_MAX_HEADER_BYTES", "4096"),
        ] {
            let m = with(name, bad).unwrap_err();
            let text = m.render(crate::i18n::Lang::En);
            assert!(text.contains(name) && text.contains(bad), "{text}");
        }
    }

    #[test]
    fn the_client_ip_header_is_one_of_three_and_needs_a_proxy() {
        let both = |header: &'static str| {
            Config::from_lookup(move |k| match k {
                "ORCHESTRA_TRUSTED_PROXIES" => Some("127.0.0.1".into()),
                "ORCHESTRA_CLIENT_IP_HEADER" => Some(header.into()),
                _ => None,
            })
        };
        let header = |c: Config| c.trusted_proxies.header();
        assert_eq!(
            header(with("ORCHESTRA_TRUSTED_PROXIES", "127.0.0.1").unwrap()),
            ClientIpHeader::XForwardedFor,
            "the default"
        );
        assert_eq!(header(both("X-Real-IP").unwrap()), ClientIpHeader::XRealIp);
        assert_eq!(
            header(both("forwarded").unwrap()),
            ClientIpHeader::Forwarded
        );
        let m = both("true-client-ip").unwrap_err();
        assert!(
            m.render(crate::i18n::Lang::En)
                .contains("\"true-client-ip\"")
        );
        assert!(
            with("ORCHESTRA_CLIENT_IP_HEADER", " ").is_ok(),
            "empty is unset"
        );
        let alone = with("ORCHESTRA_CLIENT_IP_HEADER", "x-real-ip").unwrap_err();
        assert!(
            alone
                .render(crate::i18n::Lang::En)
                .contains("ORCHESTRA_TRUSTED_PROXIES"),
            "names what is missing"
        );
    }

    #[test]
    fn trusted_proxies_are_checked() {
        assert_eq!(
            with("ORCHESTRA_TRUSTED_PROXIES", "127.0.0.1, 10.0.0.0/8")
                .unwrap()
                .trusted_proxies
                .len(),
            2
        );
        assert!(with("ORCHESTRA_TRUSTED_PROXIES", "10.0.0.0/33").is_err());
        assert!(
            with("ORCHESTRA_TRUSTED_PROXIES", "")
                .unwrap()
                .trusted_proxies
                .is_empty()
        );
    }
}
