//! Orchestra's integration tests, one binary (`cargo test --test it`): the real app over real
//! TCP on a real database, the real binary as an operator runs it, faults made for real, and a
//! real browser. One file per area, with one helpers module.
//!
//! Every test runs in this one process, side by side with the others: each gets a database of
//! its own, and each app reads back only its own log lines (`TestApp::logs`). The slow ones are
//! `#[ignore]`d in a plain `cargo test`; `.ci/run` runs them too.

mod helpers;

mod admin;
mod admin_email;
mod admins;
mod api;
mod api_contract;
mod api_idempotency;
mod audit;
mod audit_accounts;
mod browser;
mod browser_codes;
mod browser_files;
mod browser_receipts;
mod browser_records;
mod browser_rotation;
mod browser_rounds;
mod browser_two_step;
mod chores;
mod cli;
mod connections;
mod device_cookies;
mod doorway;
mod drawing;
mod email_codes;
mod evidence;
mod faults;
mod fields;
mod file_downloads;
mod first_day;
mod guard;
mod handover;
mod integrity;
mod key_rotation;
mod labels;
mod layout;
mod lists;
mod mail;
mod mail_headers;
mod memory;
mod metrics;
mod metrics_business;
mod notices;
mod oidc;
mod outbox;
mod pages;
mod preview;
mod processes;
mod reads;
mod reassign;
mod receipts;
mod retention;
mod roles;
mod rounds;
mod routing;
mod security;
mod sessions;
mod settings_split;
mod siege;
mod sizing;
mod soak;
mod soak_cluster;
mod store;
mod two_step;
mod uploads;
mod uploads_served;
mod visitor;
mod webhooks;
mod workflows_api;
