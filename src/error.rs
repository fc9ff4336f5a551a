//! The domain's one error type: what went wrong below the web layer, with its source.

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
