//! What Orchestra is about, apart from how it is reached: workflows and their instances, the
//! capability links that answer them, the site's settings and keys, the sign-in and the API's
//! tokens, and the status report. Nothing here knows axum; the web (`crate::http`) and the
//! command line (`crate::cli`) call in, and the domain reaches the database through
//! `crate::store`.

pub mod admins;
pub mod api;
pub mod audit;
pub mod capability;
pub mod delivery;
pub mod files;
pub mod instance;
pub mod interaction;
pub mod keys;
pub mod lists;
pub mod login;
pub mod mail;
pub mod oidc;
pub mod outbox;
pub mod password;
pub mod receipts;
pub mod retention;
pub mod roles;
pub mod rotation;
pub mod settings;
pub mod site;
pub mod status;
pub mod totp;
pub mod two_step;
pub mod workflow;
