//! The domain's one error type: what went wrong below the web layer, with its source; and the
//! words for the store's errors an operator reads (the store itself speaks no language).

use crate::i18n::{Lang, Message};
use crate::store::{self, ConnectError, UrlRefused};

/// An error of the domain. Visitors never see its text: the web layer logs it once and shows
/// the themed page.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("database: {0}")]
    Db(#[from] sqlx::Error),
    /// Stored data the code cannot read: a bug or a hand edit, never a visitor's doing.
    #[error("stored data is not as expected: {0}")]
    Corrupt(&'static str),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What an operation that may be refused came to when it did not happen: refused, with why
/// (nothing was changed), or failed. One type for every such operation of the domain, so no
/// caller reads a result inside a result.
#[derive(Debug, thiserror::Error)]
pub enum Refusable<R: std::fmt::Debug> {
    #[error("refused")]
    Refused(R),
    #[error(transparent)]
    Failed(#[from] Error),
}

impl<R: std::fmt::Debug> From<sqlx::Error> for Refusable<R> {
    fn from(e: sqlx::Error) -> Self {
        Refusable::Failed(e.into())
    }
}

impl<R: std::fmt::Debug> Refusable<R> {
    /// The refusal, for the caller to show; a failure is handed on (`?` makes it the caller's
    /// own error).
    pub fn refusal(self) -> Result<R> {
        match self {
            Refusable::Refused(r) => Ok(r),
            Refusable::Failed(e) => Err(e),
        }
    }
}

impl UrlRefused {
    /// The operator's line: the value (without its password) and the schemes spoken.
    pub fn message(&self) -> Message {
        Message::new("config-env-database-scheme")
            .arg("value", self.value.clone())
            .arg("schemes", store::SCHEMES)
    }
}

impl ConnectError {
    /// One line for the operator, in their language. Never the URL's password.
    pub fn message(&self) -> Message {
        match self {
            Self::Url(refused) => refused.message(),
            Self::Missing(path) => Message::new("db-missing").arg("path", path.clone()),
            Self::Refused => Message::new("db-refused"),
            Self::UnknownHost => Message::new("db-unknown-host"),
            Self::Authentication => Message::new("db-authentication"),
            Self::NoSuchDatabase => Message::new("db-no-such-database"),
            Self::NotADatabase => Message::new("db-not-a-database"),
            Self::TimedOut => Message::new("db-timed-out")
                .arg("seconds", store::CONNECT_TIMEOUT.as_secs().to_string()),
            Self::NotMigrated => Message::new("db-not-migrated"),
            Self::Other(e) => Message::new("db-other").arg("error", e.to_string()),
        }
    }
}

impl std::fmt::Display for ConnectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message().render(Lang::En))
    }
}
