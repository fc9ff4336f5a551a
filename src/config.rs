//! Startup configuration from `ORCHESTRA_*` variables: read once, validated, never written.
//! Everything an administrator may change at run time is a setting instead (`settings.rs`).

use std::time::Duration;

use crate::flood::Backend;
use crate::i18n::Message;

#[derive(Clone, Debug)]
pub struct Config {
    /// `ORCHESTRA_DATABASE_URL`: a SQLite path or `sqlite:` URL, or a `postgres://` URL.
    pub database_url: String,
    /// `ORCHESTRA_FLOOD`: `sql` (default) or `memory`.
    pub flood: Backend,
    /// `ORCHESTRA_FLOOD_CELLS`: cells per row of the counting table (memory is 128 × this).
    pub flood_cells: usize,
    /// `ORCHESTRA_FLOOD_SYNC_MS`: how often the SQL backend writes and reads shared counts.
    pub flood_sync: Duration,
}

pub const DEFAULT_DATABASE_URL: &str = "sqlite:orchestra.db";
pub const DEFAULT_FLOOD_CELLS: usize = 1 << 16;
pub const DEFAULT_FLOOD_SYNC_MS: u64 = 1000;

impl Config {
    pub fn from_env() -> Result<Self, Message> {
        Self::from_lookup(|k| std::env::var(k).ok())
    }

    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<Self, Message> {
        let database_url = get("ORCHESTRA_DATABASE_URL")
            .filter(|v| !v.trim().is_empty())
            .unwrap_or_else(|| DEFAULT_DATABASE_URL.to_owned());
        let flood = match get("ORCHESTRA_FLOOD") {
            None => Backend::Sql,
            Some(v) => Backend::parse(v.trim())
                .ok_or_else(|| Message::new("config-env-flood").arg("value", v.clone()))?,
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
        Ok(Self {
            database_url,
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
        })
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
}
