//! The `admin` commands: administrators made, listed, changed, unlocked from the shell.

use super::{Out, USAGE};
use crate::domain::audit::{Event, Kind};
use crate::domain::roles::Role;
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

/// A role given on the command line, or exit 2 saying which are known.
fn role_given(out: &Out, given: &str) -> Result<Role, i32> {
    Role::parse(given.trim()).ok_or_else(|| {
        out.err(Message::new("cli-admin-role-invalid").arg("role", given.to_owned()))
    })
}

/// `orchestra admin create NAME [--role ROLE] [--email EMAIL]`: an owner unless `--role` says
/// otherwise.
pub(super) async fn admin_create(
    out: &Out,
    db: &Db,
    name: &str,
    role: Option<&str>,
    email: Option<&str>,
) -> Result<i32, sqlx::Error> {
    let role = match role.map(|r| role_given(out, r)).transpose() {
        Ok(r) => r.unwrap_or(Role::Owner),
        Err(code) => return Ok(code),
    };
    // The address is checked before a password is asked for.
    let email = match email.map(crate::domain::admins::email_of).transpose() {
        Ok(e) => e.flatten(),
        Err(m) => return Ok(out.err(m)),
    };
    if let Some(e) = &email
        && store::admin_mails::email_taken(db, e, None, store::now()).await?
    {
        return Ok(out.err(Message::new("admin-email-taken")));
    }
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
    match store::admins::create_as(db, name, &hash, role.as_str()).await? {
        Some(id) => {
            if let Some(e) = &email
                && !store::admin_mails::set_email(db, id, Some(e), Some(out.lang.code())).await?
            {
                return Ok(out.err(Message::new("admin-email-taken")));
            }
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
/// count), the role (`owner`, `editor` or `viewer`), and `locked` when the per-account limit
/// holds the account.
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
            "{}\t{}\t{}\t{}\t{}\t{}\t{}{}",
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
            Role::of(&a.role).as_str(),
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
pub(super) async fn admin_reset(
    out: &Out,
    db: &Db,
    name: &str,
    emailing: bool,
) -> Result<i32, sqlx::Error> {
    let admin = match admin_named(out, db, name).await? {
        Ok(a) => a,
        Err(code) => return Ok(code),
    };
    let settings = Settings::load(db).await?;
    let keys = store::keys::load_or_create(db).await?;
    let made = crate::domain::admins::reset_link_with(
        db,
        &keys,
        &settings.base_url,
        None,
        &admin,
        emailing,
    )
    .await;
    match made {
        Ok(made) => {
            crate::domain::audit::by_cli(db, Event::Admin(Kind::AdminReset, admin.name.clone()))
                .await;
            println!("{}", made.url);
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

/// `orchestra admin role NAME ROLE`: gives an administrator a role; never takes away the last
/// active owner (exit 2).
pub(super) async fn admin_role(
    out: &Out,
    db: &Db,
    name: &str,
    role: &str,
) -> Result<i32, sqlx::Error> {
    let role = match role_given(out, role) {
        Ok(r) => r,
        Err(code) => return Ok(code),
    };
    let admin = match admin_named(out, db, name).await? {
        Ok(a) => a,
        Err(code) => return Ok(code),
    };
    if let Err(e) = crate::domain::admins::set_role(db, &admin, role).await {
        return Ok(match e.refusal() {
            Ok(refusal) => out.err(refusal.message()),
            Err(failure) => out.fail(failure),
        });
    }
    crate::domain::audit::by_cli(db, Event::role_changed(&admin, role)).await;
    eprintln!(
        "{}",
        Message::new("cli-admin-role-set")
            .arg("name", name.to_owned())
            .arg("role", role.as_str())
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

/// `orchestra admin invite NAME --email EMAIL`: an invitation, emailed to the address when an
/// email server is set (`ORCHESTRA_SMTP_URL`; sent by `serve` or `cron`), and its one-time link
/// printed alone on standard output (never logged) for the operator to pass on otherwise.
pub(super) async fn admin_invite(
    out: &Out,
    db: &Db,
    name: &str,
    email: &str,
    role: Option<&str>,
    emailing: bool,
) -> Result<i32, sqlx::Error> {
    let role = match role.map(|r| role_given(out, r)).transpose() {
        Ok(r) => r.unwrap_or(Role::Owner),
        Err(code) => return Ok(code),
    };
    let settings = Settings::load(db).await?;
    let keys = store::keys::load_or_create(db).await?;
    let invitation = crate::domain::admins::Invitation {
        name,
        email,
        lang: out.lang,
        emailing,
        role,
    };
    if email.trim().is_empty() {
        return Ok(out.err(Message::new("admin-email-invalid")));
    }
    let made =
        crate::domain::admins::invite_with(db, &keys, &settings.base_url, None, &invitation).await;
    match made {
        Ok(made) => {
            if made.emailed {
                eprintln!(
                    "{}",
                    Message::new("cli-admin-invite-emailed")
                        .arg("name", name.to_owned())
                        .render(out.lang)
                );
            }
            println!("{}", made.url);
            Ok(0)
        }
        Err(e) => Ok(match e.refusal() {
            Ok(errors) => match errors.into_iter().next() {
                Some((_, m)) => out.err(m),
                None => USAGE,
            },
            Err(failure) => out.fail(failure),
        }),
    }
}

/// `orchestra admin two-step NAME`: turns two-step sign-in on for the account and prints, on
/// standard output, the `otpauth://` address for their authenticator app on the first line
/// and the ten recovery codes after it, one a line (shown only now); `--off` turns it off.
pub(super) async fn admin_two_step(
    out: &Out,
    db: &Db,
    name: &str,
    off: bool,
) -> Result<i32, sqlx::Error> {
    let admin = match admin_named(out, db, name).await? {
        Ok(a) => a,
        Err(code) => return Ok(code),
    };
    let said = |id: &'static str| {
        Message::new(id)
            .arg("name", name.to_owned())
            .render(out.lang)
    };
    if off {
        return Ok(
            match crate::domain::two_step::turn_off(db, admin.id).await {
                Ok(true) => {
                    let off = Event::Admin(Kind::TwoStepOff, name.to_owned());
                    crate::domain::audit::by_cli(db, off).await;
                    eprintln!("{}", said("cli-two-step-off"));
                    0
                }
                Ok(false) => {
                    eprintln!("{}", said("cli-two-step-was-off"));
                    0
                }
                Err(e) => out.fail(e),
            },
        );
    }
    let settings = Settings::load(db).await?;
    let now = store::now();
    match crate::domain::two_step::turn_on(db, admin.id, &settings.site_name, name, now).await {
        Ok(Some((setup, codes))) => {
            crate::domain::audit::by_cli(db, Event::Admin(Kind::TwoStepOn, name.to_owned())).await;
            eprintln!("{}", said("cli-two-step-on"));
            println!("{}", setup.url);
            for code in codes {
                println!("{code}");
            }
            Ok(0)
        }
        Ok(None) => Ok(out.err(Message::new("cli-two-step-already").arg("name", name.to_owned()))),
        Err(e) => Ok(out.fail(e)),
    }
}
