//! The command line's grammar, on clap's builder so every help text and error is a Fluent
//! message in the operator's language. clap parses; the commands in `cli` get typed values.

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Arg, ArgAction, ArgMatches, Command};

use crate::i18n::{Lang, Message, tr};

/// `orchestra instance list`'s options, as typed (checked by the command).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ListArgs {
    pub workflow: Option<String>,
    pub state: Option<String>,
    pub search: Option<String>,
    pub limit: Option<String>,
    pub before: Option<String>,
    /// `text` (the default) or `csv`.
    pub format: Option<String>,
}

/// What `webhook delete|enable|disable|retry` does to an endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WebhookChange {
    Delete,
    Enable,
    Disable,
    Retry,
}

/// A command line, parsed.
#[derive(Debug, PartialEq, Eq)]
pub enum Parsed {
    Help(String),
    Version,
    Completions(String),
    Serve {
        bind: Option<String>,
    },
    Init,
    AdminCreate {
        name: String,
        role: Option<String>,
        email: Option<String>,
    },
    AdminList,
    AdminPassword(String),
    AdminReset(String),
    AdminDisable(String),
    AdminEnable(String),
    AdminRemove {
        name: String,
        yes: bool,
    },
    AdminUnlock(String),
    AdminRole {
        name: String,
        role: String,
    },
    /// `admin invite NAME --email EMAIL [--role ROLE]`.
    AdminInvite {
        name: String,
        email: String,
        role: Option<String>,
    },
    /// `admin two-step NAME [--off]`
    AdminTwoStep {
        name: String,
        off: bool,
    },
    WorkflowList,
    /// `workflow create NAME --label LABEL [--label-in LANG=LABEL]… [--file FILE]` (`create`),
    /// or `workflow save NAME [--label LABEL] [--label-in LANG=LABEL]… [--file FILE]`: the
    /// definition from the file, else standard input.
    WorkflowPut {
        create: bool,
        name: String,
        label: Option<String>,
        labels_in: Vec<String>,
        file: Option<String>,
    },
    WorkflowShow(String),
    InstanceStart {
        workflow: String,
        subject: Option<String>,
        body: Option<String>,
        /// `--contact P=EMAIL`, `--contact-name P=NAME`, `--contact-lang P=LANG`, as given.
        contacts: Vec<String>,
        names: Vec<String>,
        langs: Vec<String>,
    },
    InstanceCancel {
        instance: String,
        reason: Option<String>,
    },
    /// `instance reassign ID PARTICIPANT --contact PARTICIPANT=EMAIL [...]`.
    InstanceReassign {
        instance: String,
        participant: String,
        contacts: Vec<String>,
        names: Vec<String>,
        langs: Vec<String>,
    },
    InstanceList(ListArgs),
    InstanceShow {
        instance: String,
        format: Option<String>,
    },
    /// `instance evidence ID [--format json|html]`.
    InstanceEvidence {
        instance: String,
        format: Option<String>,
    },
    LinkIssue {
        instance: String,
        participant: Option<String>,
        ttl: Option<String>,
        /// `--send`: email it to the participant rather than print it.
        send: bool,
    },
    ConfigGet(String),
    ConfigSet(Vec<String>),
    ConfigList,
    Status {
        format: Option<String>,
    },
    Cron,
    /// `contact erase EMAIL [--yes]`: removes an address from every row that holds it.
    ContactErase {
        email: String,
        yes: bool,
    },
    KeysRotate {
        yes: bool,
        /// Also queue a fresh link email to every participant still asked.
        resend: bool,
    },
    KeysResend,
    /// `receipt verify FILE` (`-`: standard input).
    ReceiptVerify(String),
    TokenCreate {
        name: String,
        rate: Option<String>,
        burst: Option<String>,
        scope: ScopeArgs,
    },
    TokenList,
    TokenScope {
        name: String,
        scope: ScopeArgs,
    },
    TokenRevoke(String),
    TokenRotateKey {
        yes: bool,
    },
    IntegratorKeyCreate(String),
    WebhookCreate {
        url: String,
        events: Option<String>,
    },
    WebhookList,
    /// `webhook delete|enable|disable|retry ID`.
    WebhookChange(WebhookChange, String),
    /// `audit list [--kind K] [--who NAME] [--from DAY] [--to DAY] [--limit N] [--before ID]
    /// [--format text|csv|json]`.
    AuditList(AuditArgs),
}

/// `orchestra audit list`'s options, as typed (checked by the command).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct AuditArgs {
    pub kind: Option<String>,
    pub who: Option<String>,
    pub from: Option<String>,
    pub to: Option<String>,
    pub limit: Option<String>,
    pub before: Option<String>,
    pub format: Option<String>,
}

/// A token's scope as its options wrote it (`--abilities`, `--reach`, `--workflows`); each
/// absent one is left as it is (the default, for a new token).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ScopeArgs {
    pub abilities: Option<String>,
    pub reach: Option<String>,
    pub workflows: Option<String>,
}

/// The scope's three options, on `token create` and `token scope`.
fn scope_options(command: Command, lang: Lang) -> Command {
    command
        .arg(option(lang, "abilities", "LIST", "cli-arg-token-abilities"))
        .arg(option(lang, "reach", "own|all", "cli-arg-token-reach"))
        .arg(option(lang, "workflows", "LIST", "cli-arg-token-workflows"))
}

fn scope_args(m: &ArgMatches) -> ScopeArgs {
    ScopeArgs {
        abilities: value(m, "abilities"),
        reach: value(m, "reach"),
        workflows: value(m, "workflows"),
    }
}

fn t(lang: Lang, id: &str) -> String {
    tr(lang, id, &[])
}

/// `--name VALUE`, once at most.
fn option(lang: Lang, name: &'static str, value: &'static str, help: &str) -> Arg {
    Arg::new(name)
        .long(name)
        .value_name(value)
        .action(ArgAction::Set)
        // A value may start with a dash: `--ttl -5m` is refused as a lifetime, not an option.
        .allow_hyphen_values(true)
        .help(t(lang, help))
        .help_heading(t(lang, "cli-heading-options"))
}

fn positional(lang: Lang, name: &'static str, help: &str) -> Arg {
    Arg::new(name)
        .value_name(name)
        .required(true)
        .help(t(lang, help))
        .help_heading(t(lang, "cli-heading-arguments"))
}

/// A command with the translated headings, and its own translated `-h, --help`.
fn command(lang: Lang, name: &'static str, about: &str) -> Command {
    Command::new(name)
        .about(t(lang, about))
        .disable_help_flag(true)
        .disable_help_subcommand(true)
        .subcommand_help_heading(t(lang, "cli-heading-commands"))
        .help_template(format!(
            "{{about-with-newline}}\n{} {{usage}}\n\n{{all-args}}{{after-help}}",
            t(lang, "cli-heading-usage")
        ))
        .subcommand_value_name(t(lang, "cli-value-command"))
        .arg(
            Arg::new("help")
                .short('h')
                .long("help")
                .action(ArgAction::Help)
                .help(t(lang, "cli-help-flag"))
                .help_heading(t(lang, "cli-heading-options")),
        )
}

/// An option that may be given several times (`--contact legal=… --contact finance=…`).
fn repeated(lang: Lang, name: &'static str, value: &'static str, help: &str) -> Arg {
    option(lang, name, value, help).action(ArgAction::Append)
}

/// `--contact P=EMAIL`, `--contact-name P=NAME`, `--contact-lang P=LANG`, each repeatable.
fn contact_args(lang: Lang) -> [Arg; 3] {
    [
        ("contact", "PARTICIPANT=EMAIL", "cli-arg-contact"),
        ("contact-name", "PARTICIPANT=NAME", "cli-arg-contact-name"),
        ("contact-lang", "PARTICIPANT=en|fr", "cli-arg-contact-lang"),
    ]
    .map(|(name, value, help)| repeated(lang, name, value, help))
}

/// `--label-in fr=LABEL`: the workflow's label in another language, repeatable.
fn label_in(lang: Lang) -> Arg {
    repeated(lang, "label-in", "LANG=LABEL", "cli-arg-workflow-label-in")
}

/// `--yes`: do what voids things without asking.
fn yes(lang: Lang) -> Arg {
    Arg::new("yes")
        .long("yes")
        .action(ArgAction::SetTrue)
        .help(t(lang, "cli-arg-yes"))
        .help_heading(t(lang, "cli-heading-options"))
}

/// The whole grammar in one language.
pub fn grammar(lang: Lang) -> Command {
    command(lang, "orchestra", "cli-about")
        .disable_version_flag(true)
        .after_help(t(lang, "cli-after-help"))
        .arg(
            Arg::new("version")
                .long("version")
                .action(ArgAction::SetTrue)
                .help(t(lang, "cli-version-flag"))
                .help_heading(t(lang, "cli-heading-options")),
        )
        .subcommand(command(lang, "serve", "cli-about-serve").arg(option(
            lang,
            "bind",
            "ADDR",
            "cli-arg-bind",
        )))
        .subcommand(command(lang, "init", "cli-about-init"))
        .subcommand(
            command(lang, "admin", "cli-about-admin")
                .subcommand_required(true)
                .subcommand(command(lang, "list", "cli-about-admin-list"))
                .subcommand(
                    command(lang, "create", "cli-about-admin-create")
                        .arg(positional(lang, "NAME", "cli-arg-admin-name"))
                        .arg(option(lang, "role", "ROLE", "cli-arg-admin-create-role"))
                        .arg(option(lang, "email", "EMAIL", "cli-arg-admin-email")),
                )
                .subcommand(
                    command(lang, "invite", "cli-about-admin-invite")
                        .arg(positional(lang, "NAME", "cli-arg-admin-name"))
                        .arg(option(lang, "email", "EMAIL", "cli-arg-admin-email").required(true))
                        .arg(option(lang, "role", "ROLE", "cli-arg-admin-create-role")),
                )
                .subcommands(
                    [
                        ("password", "cli-about-admin-password"),
                        ("reset", "cli-about-admin-reset"),
                        ("disable", "cli-about-admin-disable"),
                        ("enable", "cli-about-admin-enable"),
                        ("unlock", "cli-about-admin-unlock"),
                    ]
                    .map(|(name, about)| {
                        command(lang, name, about).arg(positional(
                            lang,
                            "NAME",
                            "cli-arg-admin-name",
                        ))
                    }),
                )
                .subcommand(
                    command(lang, "remove", "cli-about-admin-remove")
                        .arg(positional(lang, "NAME", "cli-arg-admin-name"))
                        .arg(yes(lang).help(t(lang, "cli-arg-remove-yes"))),
                )
                .subcommand(
                    command(lang, "role", "cli-about-admin-role")
                        .arg(positional(lang, "NAME", "cli-arg-admin-name"))
                        .arg(positional(lang, "ROLE", "cli-arg-admin-role")),
                )
                .subcommand(
                    command(lang, "two-step", "cli-about-admin-two-step")
                        .arg(positional(lang, "NAME", "cli-arg-admin-name"))
                        .arg(
                            Arg::new("off")
                                .long("off")
                                .action(ArgAction::SetTrue)
                                .help(t(lang, "cli-arg-two-step-off"))
                                .help_heading(t(lang, "cli-heading-options")),
                        ),
                ),
        )
        .subcommand(
            command(lang, "workflow", "cli-about-workflow")
                .subcommand_required(true)
                .subcommand(command(lang, "list", "cli-about-workflow-list"))
                .subcommand(
                    command(lang, "create", "cli-about-workflow-create")
                        .arg(positional(lang, "NAME", "cli-arg-workflow-name"))
                        .arg(option(lang, "label", "LABEL", "cli-arg-workflow-label"))
                        .arg(label_in(lang))
                        .arg(option(lang, "file", "FILE", "cli-arg-workflow-file")),
                )
                .subcommand(
                    command(lang, "save", "cli-about-workflow-save")
                        .arg(positional(lang, "NAME", "cli-arg-workflow-name"))
                        .arg(option(
                            lang,
                            "label",
                            "LABEL",
                            "cli-arg-workflow-label-keep",
                        ))
                        .arg(label_in(lang))
                        .arg(option(lang, "file", "FILE", "cli-arg-workflow-file")),
                )
                .subcommand(
                    command(lang, "show", "cli-about-workflow-show").arg(positional(
                        lang,
                        "NAME",
                        "cli-arg-workflow-name",
                    )),
                ),
        )
        .subcommand(
            command(lang, "instance", "cli-about-instance")
                .subcommand_required(true)
                .subcommand(
                    command(lang, "start", "cli-about-instance-start")
                        .arg(positional(lang, "WORKFLOW", "cli-arg-workflow"))
                        .arg(option(lang, "subject", "TITLE", "cli-arg-subject"))
                        .arg(option(lang, "body", "TEXT", "cli-arg-body"))
                        .args(contact_args(lang)),
                )
                .subcommand(
                    command(lang, "reassign", "cli-about-instance-reassign")
                        .arg(positional(lang, "INSTANCE", "cli-arg-instance"))
                        .arg(positional(
                            lang,
                            "PARTICIPANT",
                            "cli-arg-reassign-participant",
                        ))
                        .args(contact_args(lang)),
                )
                .subcommand(
                    command(lang, "list", "cli-about-instance-list")
                        .arg(option(lang, "workflow", "NAME", "cli-arg-list-workflow"))
                        .arg(option(lang, "state", "STATE", "cli-arg-list-state"))
                        .arg(option(lang, "search", "TEXT", "cli-arg-list-search"))
                        .arg(option(lang, "limit", "N", "cli-arg-list-limit"))
                        .arg(option(lang, "before", "ID", "cli-arg-list-before"))
                        .arg(option(lang, "format", "FORMAT", "cli-arg-list-format")),
                )
                .subcommand(
                    command(lang, "show", "cli-about-instance-show")
                        .arg(positional(lang, "INSTANCE", "cli-arg-instance"))
                        .arg(option(lang, "format", "FORMAT", "cli-arg-format")),
                )
                .subcommand(
                    command(lang, "evidence", "cli-about-instance-evidence")
                        .arg(positional(lang, "INSTANCE", "cli-arg-instance"))
                        .arg(option(lang, "format", "FORMAT", "cli-arg-evidence-format")),
                )
                .subcommand(
                    command(lang, "cancel", "cli-about-instance-cancel")
                        .arg(positional(lang, "INSTANCE", "cli-arg-instance"))
                        .arg(option(lang, "reason", "TEXT", "cli-arg-reason")),
                ),
        )
        .subcommand(
            command(lang, "link", "cli-about-link")
                .subcommand_required(true)
                .subcommand(
                    command(lang, "issue", "cli-about-link-issue")
                        .arg(positional(lang, "INSTANCE", "cli-arg-instance"))
                        // `--branch` is the name this option had before participants.
                        .arg(
                            option(lang, "participant", "NAME", "cli-arg-participant")
                                .alias("branch"),
                        )
                        .arg(option(lang, "ttl", "DURATION", "cli-arg-ttl"))
                        .arg(
                            Arg::new("send")
                                .long("send")
                                .action(ArgAction::SetTrue)
                                // An emailed link lives the site's default lifetime.
                                .conflicts_with("ttl")
                                .help(t(lang, "cli-arg-send"))
                                .help_heading(t(lang, "cli-heading-options")),
                        ),
                ),
        )
        .subcommand(
            command(lang, "config", "cli-about-config")
                .subcommand_required(true)
                .subcommand(command(lang, "get", "cli-about-config-get").arg(positional(
                    lang,
                    "KEY",
                    "cli-arg-key",
                )))
                .subcommand(
                    command(lang, "set", "cli-about-config-set").arg(
                        Arg::new("PAIRS")
                            .value_name("KEY VALUE")
                            .required(true)
                            .num_args(2..)
                            .allow_hyphen_values(true)
                            .help(t(lang, "cli-arg-pairs"))
                            .help_heading(t(lang, "cli-heading-arguments")),
                    ),
                )
                .subcommand(command(lang, "list", "cli-about-config-list")),
        )
        .subcommand(command(lang, "status", "cli-about-status").arg(option(
            lang,
            "format",
            "FORMAT",
            "cli-arg-format",
        )))
        .subcommand(command(lang, "cron", "cli-about-cron"))
        .subcommand(
            command(lang, "contact", "cli-about-contact")
                .subcommand_required(true)
                .subcommand(
                    command(lang, "erase", "cli-about-contact-erase")
                        .arg(positional(lang, "EMAIL", "cli-arg-contact-email"))
                        .arg(yes(lang)),
                ),
        )
        .subcommand(
            command(lang, "keys", "cli-about-keys")
                .subcommand_required(true)
                .subcommand(
                    command(lang, "rotate", "cli-about-keys-rotate")
                        .arg(yes(lang))
                        .arg(
                            Arg::new("resend")
                                .long("resend")
                                .action(ArgAction::SetTrue)
                                .help(t(lang, "cli-arg-keys-resend"))
                                .help_heading(t(lang, "cli-heading-options")),
                        ),
                )
                .subcommand(command(lang, "resend", "cli-about-keys-resend")),
        )
        .subcommand(
            command(lang, "receipt", "cli-about-receipt")
                .subcommand_required(true)
                .subcommand(
                    command(lang, "verify", "cli-about-receipt-verify").arg(positional(
                        lang,
                        "FILE",
                        "cli-arg-receipt-file",
                    )),
                ),
        )
        .subcommand(
            command(lang, "token", "cli-about-token")
                .subcommand_required(true)
                .subcommand(scope_options(
                    command(lang, "create", "cli-about-token-create")
                        .arg(positional(lang, "NAME", "cli-arg-token-name"))
                        .arg(option(lang, "rate", "PER_MINUTE", "cli-arg-token-rate"))
                        .arg(option(lang, "burst", "N", "cli-arg-token-burst")),
                    lang,
                ))
                .subcommand(command(lang, "list", "cli-about-token-list"))
                .subcommand(scope_options(
                    command(lang, "scope", "cli-about-token-scope").arg(positional(
                        lang,
                        "NAME",
                        "cli-arg-token-name",
                    )),
                    lang,
                ))
                .subcommand(
                    command(lang, "revoke", "cli-about-token-revoke").arg(positional(
                        lang,
                        "NAME",
                        "cli-arg-token-name",
                    )),
                )
                .subcommand(
                    command(lang, "rotate-key", "cli-about-token-rotate-key").arg(yes(lang)),
                ),
        )
        .subcommand(
            command(lang, "webhook", "cli-about-webhook")
                .subcommand_required(true)
                .subcommand(
                    command(lang, "create", "cli-about-webhook-create")
                        .arg(positional(lang, "URL", "cli-arg-webhook-url"))
                        .arg(option(lang, "events", "LIST", "cli-arg-webhook-events")),
                )
                .subcommand(command(lang, "list", "cli-about-webhook-list"))
                .subcommand(
                    command(lang, "delete", "cli-about-webhook-delete").arg(positional(
                        lang,
                        "ID",
                        "cli-arg-webhook-id",
                    )),
                )
                .subcommands(
                    [
                        ("enable", "cli-about-webhook-enable"),
                        ("disable", "cli-about-webhook-disable"),
                        ("retry", "cli-about-webhook-retry"),
                    ]
                    .map(|(name, about)| {
                        command(lang, name, about).arg(positional(lang, "ID", "cli-arg-webhook-id"))
                    }),
                ),
        )
        .subcommand(
            command(lang, "integrator-key", "cli-about-integrator-key")
                .subcommand_required(true)
                .subcommand(
                    command(lang, "create", "cli-about-integrator-key-create").arg(positional(
                        lang,
                        "NAME",
                        "cli-arg-integrator-name",
                    )),
                ),
        )
        .subcommand(
            command(lang, "audit", "cli-about-audit")
                .subcommand_required(true)
                .subcommand(
                    command(lang, "list", "cli-about-audit-list")
                        .arg(option(lang, "kind", "KIND", "cli-arg-audit-kind"))
                        .arg(option(lang, "who", "NAME", "cli-arg-audit-who"))
                        .arg(option(lang, "from", "DAY", "cli-arg-audit-from"))
                        .arg(option(lang, "to", "DAY", "cli-arg-audit-to"))
                        .arg(option(lang, "limit", "N", "cli-arg-audit-limit"))
                        .arg(option(lang, "before", "ID", "cli-arg-audit-before"))
                        .arg(option(lang, "format", "FORMAT", "cli-arg-audit-format")),
                ),
        )
        .subcommand(
            command(lang, "completions", "cli-about-completions").arg(positional(
                lang,
                "SHELL",
                "cli-arg-shell",
            )),
        )
        .subcommand(command(lang, "help", "cli-about-help"))
        .subcommand(command(lang, "version", "cli-about-version"))
}

fn value(m: &ArgMatches, name: &str) -> Option<String> {
    m.get_one::<String>(name).cloned()
}

fn values(m: &ArgMatches, name: &str) -> Vec<String> {
    m.get_many::<String>(name)
        .map(|v| v.cloned().collect())
        .unwrap_or_default()
}

fn required(m: &ArgMatches, name: &str) -> String {
    value(m, name).unwrap_or_default()
}

/// Parses a command line (without the program name), or says in the operator's language what
/// is wrong with it.
pub fn parse(lang: Lang, args: &[String]) -> Result<Parsed, Message> {
    if args.is_empty() {
        return Ok(Parsed::Help(grammar(lang).render_help().to_string()));
    }
    let mut grammar = grammar(lang);
    let matches = match grammar.try_get_matches_from_mut(
        std::iter::once("orchestra".to_owned()).chain(args.iter().cloned()),
    ) {
        Ok(m) => m,
        Err(e) if e.kind() == ErrorKind::DisplayHelp => {
            return Ok(Parsed::Help(e.render().to_string()));
        }
        Err(e) => return Err(error_message(&e, args)),
    };
    if matches.get_flag("version") {
        return Ok(Parsed::Version);
    }
    let Some((name, sub)) = matches.subcommand() else {
        return Ok(Parsed::Help(grammar.render_help().to_string()));
    };
    let nested = sub.subcommand();
    Ok(match (name, nested) {
        ("help", _) => Parsed::Help(grammar.render_help().to_string()),
        ("version", _) => Parsed::Version,
        ("completions", _) => Parsed::Completions(required(sub, "SHELL")),
        ("serve", _) => Parsed::Serve {
            bind: value(sub, "bind"),
        },
        ("init", _) => Parsed::Init,
        ("admin", Some(("create", m))) => Parsed::AdminCreate {
            name: required(m, "NAME"),
            role: value(m, "role"),
            email: value(m, "email"),
        },
        ("admin", Some(("invite", m))) => Parsed::AdminInvite {
            name: required(m, "NAME"),
            email: required(m, "email"),
            role: value(m, "role"),
        },
        ("admin", Some(("list", _))) => Parsed::AdminList,
        ("admin", Some(("password", m))) => Parsed::AdminPassword(required(m, "NAME")),
        ("admin", Some(("reset", m))) => Parsed::AdminReset(required(m, "NAME")),
        ("admin", Some(("disable", m))) => Parsed::AdminDisable(required(m, "NAME")),
        ("admin", Some(("enable", m))) => Parsed::AdminEnable(required(m, "NAME")),
        ("admin", Some(("remove", m))) => Parsed::AdminRemove {
            name: required(m, "NAME"),
            yes: m.get_flag("yes"),
        },
        ("admin", Some(("unlock", m))) => Parsed::AdminUnlock(required(m, "NAME")),
        ("admin", Some(("role", m))) => Parsed::AdminRole {
            name: required(m, "NAME"),
            role: required(m, "ROLE"),
        },
        ("admin", Some(("two-step", m))) => Parsed::AdminTwoStep {
            name: required(m, "NAME"),
            off: m.get_flag("off"),
        },
        ("workflow", Some(("list", _))) => Parsed::WorkflowList,
        ("workflow", Some(("create", m))) => Parsed::WorkflowPut {
            create: true,
            name: required(m, "NAME"),
            label: value(m, "label"),
            labels_in: values(m, "label-in"),
            file: value(m, "file"),
        },
        ("workflow", Some(("save", m))) => Parsed::WorkflowPut {
            create: false,
            name: required(m, "NAME"),
            label: value(m, "label"),
            labels_in: values(m, "label-in"),
            file: value(m, "file"),
        },
        ("workflow", Some(("show", m))) => Parsed::WorkflowShow(required(m, "NAME")),
        ("instance", Some(("start", m))) => Parsed::InstanceStart {
            workflow: required(m, "WORKFLOW"),
            subject: value(m, "subject"),
            body: value(m, "body"),
            contacts: values(m, "contact"),
            names: values(m, "contact-name"),
            langs: values(m, "contact-lang"),
        },
        ("instance", Some(("list", m))) => Parsed::InstanceList(ListArgs {
            workflow: value(m, "workflow"),
            state: value(m, "state"),
            search: value(m, "search"),
            limit: value(m, "limit"),
            before: value(m, "before"),
            format: value(m, "format"),
        }),
        ("instance", Some(("show", m))) => Parsed::InstanceShow {
            instance: required(m, "INSTANCE"),
            format: value(m, "format"),
        },
        ("instance", Some(("evidence", m))) => Parsed::InstanceEvidence {
            instance: required(m, "INSTANCE"),
            format: value(m, "format"),
        },
        ("instance", Some(("reassign", m))) => Parsed::InstanceReassign {
            instance: required(m, "INSTANCE"),
            participant: required(m, "PARTICIPANT"),
            contacts: values(m, "contact"),
            names: values(m, "contact-name"),
            langs: values(m, "contact-lang"),
        },
        ("instance", Some(("cancel", m))) => Parsed::InstanceCancel {
            instance: required(m, "INSTANCE"),
            reason: value(m, "reason"),
        },
        ("link", Some(("issue", m))) => Parsed::LinkIssue {
            instance: required(m, "INSTANCE"),
            participant: value(m, "participant"),
            ttl: value(m, "ttl"),
            send: m.get_flag("send"),
        },
        ("config", Some(("get", m))) => Parsed::ConfigGet(required(m, "KEY")),
        ("config", Some(("set", m))) => {
            let pairs: Vec<String> = m
                .get_many::<String>("PAIRS")
                .into_iter()
                .flatten()
                .cloned()
                .collect();
            if pairs.len() % 2 != 0 {
                return Err(Message::new("cli-config-pairs"));
            }
            Parsed::ConfigSet(pairs)
        }
        ("config", Some(("list", _))) => Parsed::ConfigList,
        ("status", _) => Parsed::Status {
            format: value(sub, "format"),
        },
        ("cron", _) => Parsed::Cron,
        ("contact", Some(("erase", m))) => Parsed::ContactErase {
            email: required(m, "EMAIL"),
            yes: m.get_flag("yes"),
        },
        ("keys", Some(("rotate", m))) => Parsed::KeysRotate {
            yes: m.get_flag("yes"),
            resend: m.get_flag("resend"),
        },
        ("keys", Some(("resend", _))) => Parsed::KeysResend,
        ("receipt", Some(("verify", m))) => Parsed::ReceiptVerify(required(m, "FILE")),
        ("token", Some(("create", m))) => Parsed::TokenCreate {
            name: required(m, "NAME"),
            rate: value(m, "rate"),
            burst: value(m, "burst"),
            scope: scope_args(m),
        },
        ("token", Some(("list", _))) => Parsed::TokenList,
        ("token", Some(("scope", m))) => Parsed::TokenScope {
            name: required(m, "NAME"),
            scope: scope_args(m),
        },
        ("token", Some(("revoke", m))) => Parsed::TokenRevoke(required(m, "NAME")),
        ("token", Some(("rotate-key", m))) => Parsed::TokenRotateKey {
            yes: m.get_flag("yes"),
        },
        ("integrator-key", Some(("create", m))) => Parsed::IntegratorKeyCreate(required(m, "NAME")),
        ("webhook", Some(("create", m))) => Parsed::WebhookCreate {
            url: required(m, "URL"),
            events: value(m, "events"),
        },
        ("webhook", Some(("list", _))) => Parsed::WebhookList,
        ("webhook", Some((change @ ("delete" | "enable" | "disable" | "retry"), m))) => {
            let change = match change {
                "delete" => WebhookChange::Delete,
                "enable" => WebhookChange::Enable,
                "disable" => WebhookChange::Disable,
                _ => WebhookChange::Retry,
            };
            Parsed::WebhookChange(change, required(m, "ID"))
        }
        ("audit", Some(("list", m))) => Parsed::AuditList(AuditArgs {
            kind: value(m, "kind"),
            who: value(m, "who"),
            from: value(m, "from"),
            to: value(m, "to"),
            limit: value(m, "limit"),
            before: value(m, "before"),
            format: value(m, "format"),
        }),
        _ => return Err(unknown(args)),
    })
}

fn unknown(args: &[String]) -> Message {
    Message::new("cli-unknown").arg("command", args.join(" "))
}

/// The argument an error names, as the operator typed it: `--subject`, not `--subject <TITLE>`.
fn arg_of(e: &clap::Error) -> String {
    let bare = |s: &String| {
        s.split([' ', '='])
            .next()
            .unwrap_or(s)
            .trim_matches(['<', '>'])
            .to_owned()
    };
    match e.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(s)) => bare(s),
        Some(ContextValue::Strings(v)) => v.iter().map(bare).collect::<Vec<_>>().join(", "),
        _ => String::new(),
    }
}

/// clap's error kinds, as Fluent messages.
fn error_message(e: &clap::Error, args: &[String]) -> Message {
    match e.kind() {
        ErrorKind::InvalidSubcommand | ErrorKind::MissingSubcommand => unknown(args),
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => unknown(args),
        ErrorKind::UnknownArgument => {
            let typed = match e.get(ContextKind::InvalidArg) {
                Some(ContextValue::String(s)) => s.clone(),
                _ => String::new(),
            };
            if typed.starts_with('-') {
                Message::new("cli-unknown-option").arg("option", typed)
            } else {
                unknown(args)
            }
        }
        ErrorKind::MissingRequiredArgument => {
            Message::new("cli-missing-argument").arg("argument", arg_of(e))
        }
        ErrorKind::ArgumentConflict => Message::new("cli-repeated-option").arg("option", arg_of(e)),
        ErrorKind::InvalidValue | ErrorKind::NoEquals => {
            Message::new("cli-option-value").arg("option", arg_of(e))
        }
        ErrorKind::WrongNumberOfValues | ErrorKind::TooFewValues => {
            Message::new("cli-config-pairs")
        }
        _ => unknown(args),
    }
}

/// A shell's completion script, generated from the grammar (in the operator's language).
pub fn completions(lang: Lang, shell: &str) -> Option<String> {
    use clap_complete::Shell;
    let shell = match shell {
        "bash" => Shell::Bash,
        "zsh" => Shell::Zsh,
        "fish" => Shell::Fish,
        "elvish" => Shell::Elvish,
        "powershell" => Shell::PowerShell,
        _ => return None,
    };
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut grammar(lang), "orchestra", &mut out);
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_en(args: &[&str]) -> Result<Parsed, String> {
        let args: Vec<String> = args.iter().map(|s| (*s).to_owned()).collect();
        parse(Lang::En, &args).map_err(|m| m.render(Lang::En))
    }

    #[test]
    fn the_grammar_is_consistent_in_both_languages() {
        grammar(Lang::En).debug_assert();
        grammar(Lang::Fr).debug_assert();
    }

    #[test]
    fn branch_is_an_alias_of_participant_and_given_twice_is_refused() {
        assert_eq!(
            parse_en(&["link", "issue", "3", "--branch", "legal"]),
            Ok(Parsed::LinkIssue {
                send: false,
                instance: "3".into(),
                participant: Some("legal".into()),
                ttl: None
            })
        );
        assert_eq!(
            parse_en(&["link", "issue", "3", "--branch", "a", "--branch", "b"]),
            Err("The option --participant is given more than once.".into())
        );
        assert_eq!(
            parse_en(&["link", "issue"]),
            Err("Missing INSTANCE. Run the command with --help to see how it is used.".into())
        );
    }
}
