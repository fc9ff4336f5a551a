//! The operator commands. Each reads `ORCHESTRA_DATABASE_URL`, applies the migrations, and
//! speaks the operator's language (`ORCHESTRA_LANG`, else `LANG`). Output meant for scripts
//! (an id, a URL, a value) goes alone on standard output; everything else on standard error.

mod admins;
pub mod args;
mod audit;
mod config;
mod contacts;
mod instances;
mod receipts;
mod show;
mod site;
mod status;
mod tokens;
mod webhooks;
mod workflows;

use crate::cli::args::Parsed;
use crate::config::Config;
use crate::i18n::{Lang, Message};
use crate::store;

use admins::Change;

/// Exit status for a command used wrongly or given a bad value.
pub const USAGE: i32 = 2;

struct Out {
    lang: Lang,
}

impl Out {
    fn err(&self, m: Message) -> i32 {
        eprintln!("{}", m.render(self.lang));
        USAGE
    }

    fn fail(&self, e: impl std::fmt::Display) -> i32 {
        eprintln!(
            "{}",
            Message::new("cli-failed")
                .arg("error", e.to_string())
                .render(self.lang)
        );
        1
    }
}

/// Runs a command line (without the program name) and returns the exit status.
pub async fn run(args: Vec<String>) -> i32 {
    let out = Out {
        lang: Lang::from_env(),
    };
    // Parsed before the database is opened, so a mistyped command creates no file.
    let parsed = match crate::cli::args::parse(out.lang, &args) {
        Ok(p) => p,
        Err(m) => return out.err(m),
    };
    let config = match Config::from_env() {
        Ok(c) => c,
        Err(m) => return out.err(m),
    };
    let command = match parsed {
        Parsed::Help(text) => {
            print!("{text}");
            return 0;
        }
        Parsed::Version => {
            println!("orchestra {}", env!("CARGO_PKG_VERSION"));
            return 0;
        }
        Parsed::Completions(shell) => {
            return match crate::cli::args::completions(out.lang, &shell) {
                Some(script) => {
                    print!("{script}");
                    0
                }
                None => out.err(Message::new("cli-bad-shell").arg("shell", shell)),
            };
        }
        Parsed::Serve { bind } => return site::serve(&out, &config, bind.as_deref()).await,
        Parsed::Init => return site::init(&out, &config).await,
        Parsed::Status { format } => return status::status(&out, &config, format.as_deref()).await,
        other => other,
    };
    // Never creating: a database that vanished is an error, not a new empty one.
    let db = match crate::open_with(&config.database_url, store::Create::Never).await {
        Ok(db) => db.with_files_dir(config.files_dir.clone()),
        Err(e) => return out.err(e.message()),
    };
    let result = match command {
        Parsed::AdminCreate { name, role, email } => {
            admins::admin_create(&out, &db, &name, role.as_deref(), email.as_deref()).await
        }
        Parsed::AdminInvite { name, email, role } => {
            let mailing = config.mailer.is_some();
            admins::admin_invite(&out, &db, &name, &email, role.as_deref(), mailing).await
        }
        Parsed::AdminList => admins::admin_list(&out, &db, config.flood_cells).await,
        Parsed::AdminPassword(name) => admins::admin_password(&out, &db, &name).await,
        Parsed::AdminReset(name) => {
            admins::admin_reset(&out, &db, &name, config.mailer.is_some()).await
        }
        Parsed::AdminDisable(name) => admins::admin_change(&out, &db, &name, Change::Disable).await,
        Parsed::AdminEnable(name) => admins::admin_change(&out, &db, &name, Change::Enable).await,
        Parsed::AdminRemove { name, yes } => {
            if let Err(code) = agreed(
                &out,
                yes,
                "cli-admin-remove-voids",
                &format!("admin remove {name} --yes"),
            ) {
                return code;
            }
            admins::admin_change(&out, &db, &name, Change::Remove).await
        }
        Parsed::AdminUnlock(name) => admins::admin_unlock(&out, &db, &name).await,
        Parsed::AdminRole { name, role } => admins::admin_role(&out, &db, &name, &role).await,
        Parsed::AdminTwoStep { name, off } => admins::admin_two_step(&out, &db, &name, off).await,
        Parsed::WorkflowList => instances::workflow_list(&db).await,
        Parsed::WorkflowPut {
            create,
            name,
            label,
            labels_in,
            file,
        } => {
            let label = workflows::Labels {
                label: label.as_deref(),
                labels_in: &labels_in,
            };
            Ok(
                workflows::put(&out, &db, &name, label, file.as_deref(), create)
                    .await
                    .unwrap_or_else(|e| out.fail(e)),
            )
        }
        Parsed::WorkflowShow(name) => Ok(workflows::show(&out, &db, &name)
            .await
            .unwrap_or_else(|e| out.fail(e))),
        Parsed::InstanceStart {
            workflow,
            subject,
            body,
            contacts,
            names,
            langs,
        } => match instances::contacts_of(&contacts, &names, &langs) {
            Ok(contacts) => {
                instances::instance_start(
                    &out,
                    &db,
                    &workflow,
                    subject.as_deref(),
                    body.as_deref(),
                    &contacts,
                    config.mailer.is_some(),
                )
                .await
            }
            Err(bad) => Ok(out.err(Message::new("cli-contact-spelling").arg("value", bad))),
        },
        Parsed::InstanceReassign {
            instance,
            participant,
            contacts,
            names,
            langs,
        } => match instances::contacts_of(&contacts, &names, &langs) {
            Ok(contacts) => {
                instances::instance_reassign(&out, &db, &instance, &participant, &contacts).await
            }
            Err(bad) => Ok(out.err(Message::new("cli-contact-spelling").arg("value", bad))),
        },
        Parsed::InstanceCancel { instance, reason } => {
            instances::instance_cancel(&out, &db, &instance, reason.as_deref()).await
        }
        Parsed::InstanceList(args) => instances::instance_list(&out, &db, &args).await,
        Parsed::InstanceShow { instance, format } => {
            match show::instance_show(&out, &db, &instance, format.as_deref()).await {
                Ok(code) => Ok(code),
                Err(e) => Ok(out.fail(e)),
            }
        }
        Parsed::InstanceEvidence { instance, format } => {
            match show::instance_evidence(&out, &db, &instance, format.as_deref()).await {
                Ok(code) => Ok(code),
                Err(e) => Ok(out.fail(e)),
            }
        }
        Parsed::LinkIssue {
            instance,
            participant,
            send,
            ..
        } if send => instances::link_send(&out, &db, &instance, participant.as_deref()).await,
        Parsed::LinkIssue {
            instance,
            participant,
            ttl,
            ..
        } => {
            instances::link_issue(&out, &db, &instance, participant.as_deref(), ttl.as_deref())
                .await
        }
        Parsed::ConfigGet(key) => config::config_get(&out, &db, &key).await,
        Parsed::ConfigSet(pairs) => {
            let pairs: Vec<&str> = pairs.iter().map(String::as_str).collect();
            config::config_set(&out, &db, &pairs).await
        }
        Parsed::ConfigList => config::config_list(&db).await,
        Parsed::Cron => site::cron(&config, &db).await,
        Parsed::KeysRotate { yes, resend } => {
            match site::keys_rotate(&out, &db, yes, resend).await {
                Ok(code) => Ok(code),
                Err(e) => Ok(out.fail(e)),
            }
        }
        Parsed::KeysResend => match site::keys_resend(&out, &db).await {
            Ok(code) => Ok(code),
            Err(e) => Ok(out.fail(e)),
        },
        Parsed::ReceiptVerify(file) => receipts::verify(&out, &db, &file).await,
        Parsed::ContactErase { email, yes } => {
            // The command named back holds no address: what is typed is said nowhere.
            if let Err(code) = agreed(
                &out,
                yes,
                "cli-contact-erase-voids",
                "contact erase EMAIL --yes",
            ) {
                return code;
            }
            contacts::contact_erase(&out, &db, &email).await
        }
        Parsed::TokenCreate {
            name,
            rate,
            burst,
            scope,
        } => {
            tokens::token_create(&out, &db, &name, rate.as_deref(), burst.as_deref(), &scope).await
        }
        Parsed::TokenList => tokens::token_list(&out, &db).await,
        Parsed::TokenScope { name, scope } => tokens::token_scope(&out, &db, &name, &scope).await,
        Parsed::TokenRevoke(name) => tokens::token_revoke(&out, &db, &name).await,
        Parsed::TokenRotateKey { yes } => tokens::token_rotate_key(&out, &db, yes).await,
        Parsed::IntegratorKeyCreate(name) => tokens::integrator_key_create(&out, &db, &name).await,
        Parsed::WebhookCreate { url, events } => {
            webhooks::webhook_create(&out, &db, &url, events.as_deref()).await
        }
        Parsed::WebhookList => webhooks::webhook_list(&db).await,
        Parsed::WebhookChange(change, id) => webhooks::webhook_change(&out, &db, &id, change).await,
        Parsed::AuditList(args) => audit::audit_list(&out, &db, &args).await,
        // Answered above, before the database.
        Parsed::Help(_)
        | Parsed::Version
        | Parsed::Completions(_)
        | Parsed::Serve { .. }
        | Parsed::Init
        | Parsed::Status { .. } => Ok(0),
    };
    result.unwrap_or_else(|e| out.fail(e))
}

/// Whether the operator agreed to what a command voids (`voids`, said first): `--yes`, or `yes`
/// typed at a terminal. Without either, nothing is done: exit 2, naming `command` to run.
fn agreed(out: &Out, yes: bool, voids: &'static str, command: &str) -> Result<(), i32> {
    use std::io::{BufRead, IsTerminal, Write};
    if yes {
        return Ok(());
    }
    eprintln!("{}", Message::new(voids).render(out.lang));
    if !std::io::stdin().is_terminal() {
        return Err(
            out.err(Message::new("cli-confirm-with-yes").arg("command", command.to_owned()))
        );
    }
    eprint!("{}", Message::new("cli-confirm-ask").render(out.lang));
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    let _ = std::io::stdin().lock().read_line(&mut answer);
    match answer.trim().to_lowercase().as_str() {
        "yes" | "y" | "oui" | "o" => Ok(()),
        _ => Err(out.err(Message::new("cli-confirm-kept"))),
    }
}
