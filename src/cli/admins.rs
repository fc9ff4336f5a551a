//! The `admin` commands: administrators made, listed, changed, unlocked from the shell.

use super::Out;
use crate::domain::audit::{Event, Kind};
use crate::domain::settings::Settings;
use crate::i18n::Message;
use crate::store::{self, Db};

/// A new password: `ORCHESTRA_ADMIN_PASSWORD`; else, at a terminal, asked twice without echo
/// (rpassword turns the terminal's echo off and back on); else one line of standard input, as
/// scripts give it.
fn new_password(out: &Out) -> Result<String, i32> {
    use std::io::IsTerminal;
    if let Ok(p) = std::env::var("ORCHESTRA_ADMIN_PASSWORD") {
        return Ok(p);
    }
    let unreadable = |_| out.err(Message::new("cli-password-stdin"));
    if std::io::stdin().is_terminal() {
        let ask = |id| rpassword::prompt_password(Message::new(id).render(out.lang));
        let first = ask("cli-password-prompt").map_err(unreadable)?;
        let again = ask("cli-password-again").map_err(unreadable)?;
        if first != again {
            return Err(out.err(Message::new("admin-password-mismatch")));
        }
        return Ok(first);
    }
    // One line, not the whole stream.
    let mut input = String::new();
    std::io::stdin().read_line(&mut input).map_err(unreadable)?;
    Ok(input.trim_end_matches(['\r', '\n']).to_owned())
}

pub(super) async fn admin_create(out: &Out, db: &Db, name: &str) -> Result<i32, sqlx::Error> {
    let password = match new_password(out) {
        Ok(p) => p,
        Err(code) => return Ok(code),
    };
    let errors = crate::domain::login::check_new_admin(name, &password, None);
    if let Some((_, m)) = errors.into_iter().next() {
        return Ok(out.err(m));
    }
    let hash = match crate::domain::password::hash(&password) {
        Ok(h) => h,
        Err(e) => return Ok(out.fail(e)),
    };
    match store::admins::create(db, name, &hash).await? {
        Some(id) => {
            crate::domain::audit::by_cli(db, Event::Admin(Kind::AdminCreated, name.to_owned()))
                .await;
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

/// An administrator by name, or exit 2 saying no one has it.
async fn admin_named(
    out: &Out,
    db: &Db,
    name: &str,
) -> Result<Result<store::admins::Admin, i32>, sqlx::Error> {
    Ok(store::admins::by_name(db, name)
        .await?
        .ok_or_else(|| out.err(crate::domain::admins::Refusal::Unknown(name.to_owned()).message())))
}

/// One line per administrator, tab-separated: id, name, `active` or `disabled`, created, last
/// sign-in, failed sign-ins this period from all addresses (as the flood table holds them:
/// the smaller of the account's two cells, read for `flood_cells` cells a row as the servers
/// count), and `locked` when the per-account limit holds the account.
pub(super) async fn admin_list(out: &Out, db: &Db, flood_cells: usize) -> Result<i32, sqlx::Error> {
    let settings = Settings::load(db).await?;
    let keys = store::keys::load_or_create(db).await?;
    let limits = settings.limits_of(crate::limits::address::Address::SignInAccount);
    let event = crate::limits::address::Address::SignInAccount.event();
    let never = Message::new("cli-admin-never").render(out.lang);
    let now_ms = store::now() * 1000;
    for a in store::admins::list(db).await? {
        let key = crate::domain::login::account_key(&keys, a.id, a.login_epoch);
        let cells = crate::limits::flood::stored_cells(flood_cells, event, &key);
        let failures = store::flood::live_count_of_cells(db, event, &key, &cells, now_ms).await?;
        println!(
            "{}\t{}\t{}\t{}\t{}\t{}{}",
            a.id,
            a.name,
            if a.disabled_at.is_some() {
                "disabled"
            } else {
                "active"
            },
            crate::time::format_utc(a.created_at),
            a.last_sign_in_at
                .map_or_else(|| never.clone(), crate::time::format_utc),
            failures,
            if crate::domain::login::is_held(&limits, failures) {
                "\tlocked"
            } else {
                ""
            },
        );
    }
    Ok(0)
}

/// `orchestra admin password NAME`: a new password, its rules those of `admin create`; every
/// session of that administrator is signed out.
pub(super) async fn admin_password(out: &Out, db: &Db, name: &str) -> Result<i32, sqlx::Error> {
    let admin = match admin_named(out, db, name).await? {
        Ok(a) => a,
        Err(code) => return Ok(code),
    };
    let password = match new_password(out) {
        Ok(p) => p,
        Err(code) => return Ok(code),
    };
    if let Some((_, m)) = crate::domain::login::check_new_password(&password, None)
        .into_iter()
        .next()
    {
        return Ok(out.err(m));
    }
    let hash = match crate::domain::password::hash(&password) {
        Ok(h) => h,
        Err(e) => return Ok(out.fail(e)),
    };
    if crate::domain::admins::set_password(db, admin.id, &hash)
        .await?
        .is_none()
    {
        return Ok(out.err(crate::domain::admins::Refusal::Unknown(name.to_owned()).message()));
    }
    crate::domain::audit::by_cli(db, Event::Admin(Kind::AdminPassword, admin.name)).await;
    eprintln!(
        "{}",
        Message::new("cli-admin-password-set")
            .arg("name", name.to_owned())
            .render(out.lang)
    );
    Ok(0)
}

/// `orchestra admin reset NAME`: prints a one-time link to a new password, alone on standard
/// output (never logged).
pub(super) async fn admin_reset(out: &Out, db: &Db, name: &str) -> Result<i32, sqlx::Error> {
    let admin = match admin_named(out, db, name).await? {
        Ok(a) => a,
        Err(code) => return Ok(code),
    };
    let settings = Settings::load(db).await?;
    let keys = store::keys::load_or_create(db).await?;
    match crate::domain::admins::reset_link(db, &keys, &settings.base_url, None, &admin).await {
        Ok(url) => {
            crate::domain::audit::by_cli(db, Event::Admin(Kind::AdminReset, admin.name.clone()))
                .await;
            println!("{url}");
            Ok(0)
        }
        Err(e) => Ok(match e.refusal() {
            Ok(refusal) => out.err(refusal.message()),
            Err(failure) => out.fail(failure),
        }),
    }
}

#[derive(Clone, Copy)]
pub(super) enum Change {
    Disable,
    Enable,
    Remove,
}

/// Disables, enables or removes an administrator; never the last active one (exit 2).
pub(super) async fn admin_change(
    out: &Out,
    db: &Db,
    name: &str,
    change: Change,
) -> Result<i32, sqlx::Error> {
    let admin = match admin_named(out, db, name).await? {
        Ok(a) => a,
        Err(code) => return Ok(code),
    };
    let (done, said, kind) = match change {
        Change::Disable => (
            crate::domain::admins::disable(db, &admin).await,
            "cli-admin-disabled",
            Kind::AdminDisabled,
        ),
        Change::Enable => (
            crate::domain::admins::enable(db, &admin).await,
            "cli-admin-enabled",
            Kind::AdminEnabled,
        ),
        Change::Remove => (
            crate::domain::admins::remove(db, &admin).await,
            "cli-admin-removed",
            Kind::AdminRemoved,
        ),
    };
    if let Err(e) = done {
        return Ok(match e.refusal() {
            Ok(refusal) => out.err(refusal.message()),
            Err(failure) => out.fail(failure),
        });
    }
    crate::domain::audit::by_cli(db, Event::Admin(kind, admin.name)).await;
    eprintln!(
        "{}",
        Message::new(said)
            .arg("name", name.to_owned())
            .render(out.lang)
    );
    Ok(0)
}

/// `orchestra admin unlock NAME`: the account's failed sign-ins count afresh (a running server
/// reads the account's keys at each attempt, so it holds from the next one).
pub(super) async fn admin_unlock(out: &Out, db: &Db, name: &str) -> Result<i32, sqlx::Error> {
    let admin = match admin_named(out, db, name).await? {
        Ok(a) => a,
        Err(code) => return Ok(code),
    };
    let keys = store::keys::load_or_create(db).await?;
    if !crate::domain::admins::unlock(db, &keys, admin.id).await? {
        return Ok(out.err(crate::domain::admins::Refusal::Unknown(name.to_owned()).message()));
    }
    crate::domain::audit::by_cli(db, Event::Admin(Kind::AdminUnlocked, admin.name)).await;
    eprintln!(
        "{}",
        Message::new("cli-admin-unlocked")
            .arg("name", name.to_owned())
            .render(out.lang)
    );
    Ok(0)
}
