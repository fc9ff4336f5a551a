//! The `orchestra` binary as an operator runs it: real processes on a fresh database (SQLite,
//! or PostgreSQL when `ORCHESTRA_TEST_POSTGRES_URL` is set), with standard output, standard
//! error and the exit status checked exactly.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;

use orchestra::store::{self, Db};

use crate::helpers;

const BIN: &str = env!("CARGO_BIN_EXE_orchestra");

/// What one run of the binary said.
#[derive(Debug, PartialEq, Eq)]
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    fn expect(&self, code: i32, stdout: &str, stderr: &str) {
        assert_eq!(
            (self.code, self.stdout.as_str(), self.stderr.as_str()),
            (code, stdout, stderr),
            "unexpected run: {self:#?}"
        );
    }

    /// The one line a command prints for scripts.
    fn line(&self) -> &str {
        assert_eq!(self.code, 0, "the command failed: {self:#?}");
        assert_eq!(self.stdout.matches('\n').count(), 1, "{self:#?}");
        self.stdout.trim_end_matches('\n')
    }
}

/// A fresh database and an empty working directory for the binary.
struct Cli {
    database: helpers::TestDb,
    dir: tempfile::TempDir,
}

/// An empty database: on SQLite an empty file, which every command opens (`mode=rw`) and
/// migrates; a missing one they refuse.
async fn cli() -> Cli {
    let database = helpers::fresh_database().await;
    if let Some(path) = database.url.strip_prefix("sqlite:") {
        std::fs::File::create(path).expect("an empty database file");
    }
    Cli {
        database,
        dir: tempfile::tempdir().expect("temp dir"),
    }
}

impl Cli {
    /// The binary with nothing from the test's environment but the database (and English).
    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(BIN);
        command
            .args(args)
            .env_clear()
            .env("ORCHESTRA_DATABASE_URL", &self.database.url)
            .env("ORCHESTRA_LANG", "en")
            .current_dir(self.dir.path())
            .stdin(Stdio::null());
        command
    }

    fn run(&self, args: &[&str]) -> Run {
        self.run_with(args, &[], None)
    }

    fn run_fr(&self, args: &[&str]) -> Run {
        self.run_with(args, &[("ORCHESTRA_LANG", "fr")], None)
    }

    fn run_with(&self, args: &[&str], env: &[(&str, &str)], stdin: Option<&str>) -> Run {
        let mut command = self.command(args);
        command.envs(env.iter().copied());
        if stdin.is_some() {
            command.stdin(Stdio::piped());
        }
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start orchestra");
        if let Some(input) = stdin {
            let mut pipe = child.stdin.take().unwrap();
            pipe.write_all(input.as_bytes()).unwrap();
        }
        let output = child.wait_with_output().unwrap();
        Run {
            code: output.status.code().expect("exited, not killed"),
            stdout: String::from_utf8(output.stdout).unwrap(),
            stderr: String::from_utf8(output.stderr).unwrap(),
        }
    }

    /// What `orchestra init` does, once: `status` reports on a database, it never sets one up.
    fn init(&self) {
        self.run(&["init"])
            .expect(0, "", "The database is ready.\n");
    }

    fn get(&self, key: &str) -> String {
        self.run(&["config", "get", key]).line().to_owned()
    }

    async fn db(&self) -> Db {
        Db::connect(&self.database.url).await.unwrap()
    }
}

// --- admin create -------------------------------------------------------------------------

#[tokio::test]
async fn admin_create_takes_the_password_from_the_environment() {
    let cli = cli().await;
    let run = cli.run_with(
        &["admin", "create", "ada"],
        &[("ORCHESTRA_ADMIN_PASSWORD", "correct horse battery")],
        None,
    );
    run.expect(0, "1\n", "Administrator ada created.\n");
    let db = cli.db().await;
    let ada = store::admins::by_name(&db, "ada").await.unwrap().unwrap();
    assert!(orchestra::domain::password::verify(
        "correct horse battery",
        &ada.password_hash
    ));
}

#[tokio::test]
async fn admin_create_reads_one_line_of_standard_input() {
    let cli = cli().await;
    let run = cli.run_with(
        &["admin", "create", "bob"],
        &[],
        Some("a password from a pipe\r\nand a second line\n"),
    );
    run.expect(0, "1\n", "Administrator bob created.\n");
    let db = cli.db().await;
    let bob = store::admins::by_name(&db, "bob").await.unwrap().unwrap();
    assert!(orchestra::domain::password::verify(
        "a password from a pipe",
        &bob.password_hash
    ));
}

#[tokio::test]
async fn admin_create_refuses_a_short_password_and_saves_nothing() {
    let cli = cli().await;
    cli.run_with(&["admin", "create", "ada"], &[], Some("short\n"))
        .expect(2, "", "Use at least 10 characters.\n");
    cli.run_with(
        &["admin", "create", "ada"],
        &[
            ("ORCHESTRA_ADMIN_PASSWORD", "short"),
            ("ORCHESTRA_LANG", "fr"),
        ],
        None,
    )
    .expect(2, "", "Utilisez au moins 10 caractères.\n");
    cli.run(&["admin", "create", "ada"])
        .expect(2, "", "Use at least 10 characters.\n");
    cli.run_with(
        &["admin", "create", "no spaces"],
        &[("ORCHESTRA_ADMIN_PASSWORD", "long enough password")],
        None,
    )
    .expect(
        2,
        "",
        "Use 1 to 60 letters, digits, dots, dashes, underscores or @.\n",
    );
    assert_eq!(store::admins::count(&cli.db().await).await.unwrap(), 0);
}

#[tokio::test]
async fn admin_create_refuses_a_name_taken() {
    let cli = cli().await;
    let env = [("ORCHESTRA_ADMIN_PASSWORD", "long enough password")];
    cli.run_with(&["admin", "create", "ada"], &env, None)
        .expect(0, "1\n", "Administrator ada created.\n");
    cli.run_with(&["admin", "create", "ada"], &env, None)
        .expect(2, "", "An administrator named ada already exists.\n");
    cli.run_with(
        &["admin", "create", "ada"],
        &[env[0], ("ORCHESTRA_LANG", "fr")],
        None,
    )
    .expect(2, "", "Un administrateur nommé ada existe déjà.\n");
}

// --- workflows, instances, links ------------------------------------------------------------

#[tokio::test]
async fn workflow_list_shows_the_seeded_examples() {
    let cli = cli().await;
    let run = cli.run(&["workflow", "list"]);
    assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{run:#?}");
    let mut rows: Vec<Vec<&str>> = run
        .stdout
        .lines()
        .map(|l| l.split('\t').skip(1).collect())
        .collect();
    rows.sort();
    assert_eq!(
        rows,
        vec![
            vec!["contract_review", "Contract review", "1", "1"],
            vec!["order_payment", "Order payment", "2", "1"],
            vec!["supplier_onboarding", "Supplier onboarding", "2", "1"],
        ]
    );
}

/// `orchestra instance cancel` ends a running instance and says so; an ended or unknown one, or
/// a reason too long, is exit 2 with the reason in the operator's language, and changes nothing.
#[tokio::test]
async fn instance_cancel_ends_it_and_says_so_with_exit_codes() {
    let cli = cli().await;
    cli.run(&["instance", "start", "contract_review"])
        .expect(0, "1\n", "");
    let long = "x".repeat(orchestra::domain::instance::MAX_REASON + 1);
    cli.run(&["instance", "cancel", "1", "--reason", &long])
        .expect(2, "", "The reason is at most 500 characters.\n");
    cli.run(&["instance", "cancel", "1", "--reason", "duplicate"])
        .expect(0, "Instance 1 cancelled.\n", "");
    let db = cli.db().await;
    let instance = store::instances::by_id(&db, 1).await.unwrap().unwrap();
    assert_eq!(instance.state.as_str(), "cancelled");
    let history = store::instances::history(&db, 1).await.unwrap();
    let last = history.last().unwrap();
    assert_eq!(
        (last.actor.as_str(), last.answer.as_str()),
        ("cli", r#"{"reason":"duplicate"}"#)
    );
    cli.run(&["instance", "cancel", "1"]).expect(
        2,
        "",
        "This instance has already ended; there is nothing to cancel.\n",
    );
    cli.run_fr(&["instance", "cancel", "1"]).expect(
        2,
        "",
        "Cette instance est déjà terminée ; il n'y a rien à annuler.\n",
    );
    cli.run(&["instance", "cancel", "7"])
        .expect(2, "", "No instance 7.\n");
    cli.run(&["instance", "cancel"]).expect(
        2,
        "",
        "Missing INSTANCE. Run the command with --help to see how it is used.\n",
    );
    assert_eq!(
        store::instances::history(&db, 1).await.unwrap().len(),
        history.len()
    );
}

/// `instance show` reads the one view the admin page and the API read: the text in the
/// operator's language, the JSON in the API's shape; an unknown instance or format exits 2.
#[tokio::test]
async fn instance_show_prints_the_instance_as_text_or_json() {
    let cli = cli().await;
    cli.run(&[
        "instance",
        "start",
        "contract_review",
        "--subject",
        "Lease 2027",
        "--contact",
        "legal=lee@legal.example",
    ])
    .expect(
        0,
        "1\n",
        "Warning: no SMTP server is set (ORCHESTRA_SMTP_URL, ORCHESTRA_MAIL_FROM); the \
         participants' emails wait and will go once one is set.\n",
    );
    let text = cli.run(&["instance", "show", "1"]);
    assert_eq!(text.code, 0, "{text:#?}");
    let lines: Vec<&str> = text.stdout.lines().collect();
    assert_eq!(lines[0], "Instance 1: Lease 2027");
    assert_eq!(
        lines[1],
        "Workflow: Contract review (contract_review), version 1"
    );
    assert_eq!(lines[2], "State: In progress");
    assert_eq!(lines[3], "Step 1 of 1: Approve the contract");
    assert_eq!(lines[4], "Waiting for: legal, finance");
    assert_eq!(lines[5], "Contact: legal <lee@legal.example> (en)");
    assert_eq!(lines[6], "History (1 of 1, oldest first):");
    let fr = cli.run_fr(&["instance", "show", "1"]);
    assert!(
        fr.stdout.contains("Étape 1 sur 1 : Approuver le contrat"),
        "{fr:#?}"
    );
    assert!(fr.stdout.contains("État : En cours"), "{fr:#?}");

    let json = cli.run(&["instance", "show", "1", "--format", "json"]);
    assert_eq!(json.code, 0, "{json:#?}");
    let v: serde_json::Value = serde_json::from_str(json.line()).unwrap();
    assert_eq!(v["id"], 1);
    assert_eq!(v["workflow_name"], "contract_review");
    assert_eq!(v["state"], "active");
    assert_eq!(v["current_step"]["number"], 1);
    assert_eq!(
        v["participants_left"],
        serde_json::json!(["legal", "finance"])
    );
    assert_eq!(v["participants"]["legal"]["email"], "lee@legal.example");
    assert_eq!(v["history"][0]["event"], "started");
    assert_eq!(v["history_total"], 1);

    cli.run(&["instance", "show", "7"])
        .expect(2, "", "No instance 7.\n");
    cli.run(&["instance", "show", "x"])
        .expect(2, "", "No instance x.\n");
    cli.run(&["instance", "show", "1", "--format", "yaml"])
        .expect(2, "", "Unknown format: yaml (text or json).\n");
}

#[tokio::test]
async fn instance_start_prints_the_id_alone() {
    let cli = cli().await;
    cli.run(&[
        "instance",
        "start",
        "contract_review",
        "--subject",
        "Lease 2027",
    ])
    .expect(0, "1\n", "");
    cli.run(&["instance", "start", "order_payment"])
        .expect(0, "2\n", "");
    let db = cli.db().await;
    let first = store::instances::by_id(&db, 1).await.unwrap().unwrap();
    assert_eq!(first.subject_title, "Lease 2027");
    let second = store::instances::by_id(&db, 2).await.unwrap().unwrap();
    assert_eq!(
        second.subject_title, "Order payment",
        "the label stands in for a subject"
    );
    let by_id = store::workflows::by_name(&db, "supplier_onboarding")
        .await
        .unwrap()
        .unwrap()
        .id
        .to_string();
    cli.run(&["instance", "start", &by_id, "--subject=Acme"])
        .expect(0, "3\n", "");
}

#[tokio::test]
async fn instance_start_refuses_what_it_cannot_start() {
    let cli = cli().await;
    cli.run(&["instance", "start", "nope"]).expect(
        2,
        "",
        "No workflow named nope. \"orchestra workflow list\" shows them.\n",
    );
    cli.run_fr(&["instance", "start", "nope"]).expect(
        2,
        "",
        "Aucun processus nommé nope. « orchestra workflow list » les affiche.\n",
    );
    cli.run(&["instance", "start", "contract_review", "--subject"])
        .expect(2, "", "The option --subject needs a value.\n");
    cli.run(&["instance", "start", "contract_review", "--colour", "red"])
        .expect(2, "", "Unknown option: --colour\n");
    let blank = cli.run(&["instance", "start", "contract_review", "--subject", "  "]);
    assert_eq!((blank.code, blank.stdout.as_str()), (2, ""), "{blank:#?}");
    assert!(
        store::instances::recent(&cli.db().await, 10)
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn link_issue_prints_the_url_alone_on_the_base_url() {
    let cli = cli().await;
    let id = cli
        .run(&["instance", "start", "contract_review"])
        .line()
        .to_owned();
    let before = orchestra::store::now();
    let link = cli.run(&["link", "issue", &id, "--branch", "legal"]);
    assert_eq!(link.stderr, "");
    let url = link.line();
    let token = url
        .strip_prefix("http://127.0.0.1:8080/interaction/")
        .unwrap_or_else(|| panic!("not on the default base URL: {url}"));
    let parsed = orchestra::domain::capability::parse(token).expect("a well-formed link");
    assert_eq!(parsed.claims.branch.as_deref(), Some("legal"));
    let week = 7 * 24 * 3600;
    assert!((before + week..=orchestra::store::now() + week).contains(&parsed.claims.expires));

    let short = cli.run(&[
        "link",
        "issue",
        &id,
        "--participant",
        "finance",
        "--ttl",
        "30m",
    ]);
    let parsed =
        orchestra::domain::capability::parse(short.line().rsplit('/').next().unwrap()).unwrap();
    assert_eq!(parsed.claims.branch.as_deref(), Some("finance"));
    assert!(parsed.claims.expires <= orchestra::store::now() + 1800);

    cli.run(&["config", "set", "orchestra.base_url", "https://x.example"])
        .expect(0, "", "orchestra.base_url is now https://x.example.\n");
    let run = cli.run(&["link", "issue", &id, "--branch=finance", "--ttl=12h"]);
    assert!(
        run.line()
            .starts_with("https://x.example/interaction/l.1.finance."),
        "{run:#?}"
    );
}

#[tokio::test]
async fn link_issue_refuses_bad_branches_lifetimes_and_instances() {
    let cli = cli().await;
    let id = cli
        .run(&["instance", "start", "contract_review"])
        .line()
        .to_owned();
    let ttl = "Enter a lifetime from 60 seconds to 31536000 seconds (for example 3600, 30m, 12h or 7d).\n";
    let cases: &[(&[&str], &str)] = &[
        (
            &["--branch", "bogus"],
            "“bogus” is not a participant of this instance's workflow version (participants: legal, finance).\n",
        ),
        (
            &["--participant", "bogus"],
            "“bogus” is not a participant of this instance's workflow version (participants: legal, finance).\n",
        ),
        (
            &[],
            "Name the participant the link is for: legal, finance.\n",
        ),
        (&["--ttl", "abc"], ttl),
        (&["--ttl", "10"], ttl),
        (&["--ttl", "-5m"], ttl),
        (&["--ttl", "366d"], ttl),
        (&["--ttl"], "The option --ttl needs a value.\n"),
        (&["--expires", "1h"], "Unknown option: --expires\n"),
    ];
    for (rest, message) in cases {
        let args: Vec<&str> = ["link", "issue", id.as_str()]
            .iter()
            .chain(rest.iter())
            .copied()
            .collect();
        cli.run(&args).expect(2, "", message);
    }
    cli.run(&["link", "issue", "99"])
        .expect(2, "", "No instance 99.\n");
    cli.run(&["link", "issue", "abc"])
        .expect(2, "", "No instance abc.\n");
    cli.run_fr(&["link", "issue", "99"])
        .expect(2, "", "Aucune instance 99.\n");
    cli.run_fr(&["link", "issue", &id, "--branch", "bogus"]).expect(
        2,
        "",
        "« bogus » n'est pas un participant de la version du workflow de cette instance (participants : legal, finance).\n",
    );
    cli.run_fr(&["link", "issue", &id, "--ttl", "1w"]).expect(
        2,
        "",
        "Saisissez une durée de vie de 60 secondes à 31536000 secondes (par exemple 3600, 30m, 12h ou 7d).\n",
    );
    let events: Vec<String> = store::instances::history(&cli.db().await, 1)
        .await
        .unwrap()
        .into_iter()
        .map(|h| h.event.as_str().to_owned())
        .collect();
    assert_eq!(events, ["started"], "no refused link was noted as issued");
}

// --- config --------------------------------------------------------------------------------

/// What ships, key by key.
const DEFAULTS: &[(&str, &str)] = &[
    ("orchestra.site_name", "Orchestra"),
    ("orchestra.base_url", "http://127.0.0.1:8080"),
    ("orchestra.default_link_ttl", "604800"),
    ("orchestra.request_limits.enabled", "false"),
    ("orchestra.request_limits.period", "3600"),
    ("orchestra.request_limits.on_store_fault", "count"),
    ("interaction.limits.per_link", "0"),
    ("interaction.limits.total", "0"),
    ("interaction.limits.report_only", "false"),
    ("orchestra.test_provider", "true"),
    ("interaction.files.max_mb", "25"),
    ("notice.limits.per_payment", "0"),
    ("notice.limits.total", "0"),
    ("api.limits.rate_per_minute", "60"),
    ("api.limits.burst", "20"),
    ("api.limits.signed_multiplier", "4"),
    ("api.caps.running_instances_per_token", "1000"),
    ("api.caps.links_per_instance_per_day", "100"),
    ("api.caps.endpoints_per_token", "10"),
    ("api.caps.emails_per_address_per_hour", "20"),
    ("api.caps.emails_per_token_per_hour", "500"),
    ("notice.limits.report_only", "false"),
    ("login.limits.per_address", "50"),
    ("login.limits.address_period", "3600"),
    ("login.limits.per_account", "5"),
    ("login.limits.account_total", "100"),
    ("login.limits.account_period", "21600"),
    ("login.limits.report_only", "false"),
    ("records.retention_days", "0"),
    ("login.two_step_required", "false"),
    ("audit.retention_days", "365"),
];

#[tokio::test]
async fn config_covers_every_setting_key() {
    let keys: Vec<&str> = DEFAULTS.iter().map(|(k, _)| *k).collect();
    assert_eq!(
        keys,
        orchestra::domain::settings::keys().collect::<Vec<_>>(),
        "a key was added without a CLI test"
    );
    let cli = cli().await;
    for (key, value) in DEFAULTS {
        assert_eq!(cli.get(key), *value, "{key}");
    }
    let list: String = DEFAULTS
        .iter()
        .map(|(k, v)| format!("{k} = {v}\n"))
        .collect();
    cli.run(&["config", "list"]).expect(0, &list, "");
}

/// The README's table of site settings is the registry's: every key, in its order, with what
/// it ships with.
#[test]
fn the_readme_lists_every_setting_with_its_shipped_value() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let listed: Vec<(String, String)> = readme
        .lines()
        .filter_map(|line| {
            let mut cells = line.strip_prefix("| `")?.splitn(2, "` | `");
            let key = cells.next()?;
            let shipped = cells.next()?.split('`').next()?;
            orchestra::domain::settings::setting(key).map(|_| (key.to_owned(), shipped.to_owned()))
        })
        .collect();
    let registry: Vec<(String, String)> = orchestra::domain::settings::REGISTRY
        .iter()
        .map(|s| (s.key.to_owned(), s.shipped()))
        .collect();
    assert_eq!(listed, registry, "README.md's table of site settings");
}

#[tokio::test]
async fn config_set_saves_good_values_of_every_key() {
    let cli = cli().await;
    for (key, typed, saved) in [
        ("orchestra.site_name", "  Flows of Acme ", "Flows of Acme"),
        (
            "orchestra.base_url",
            "https://flows.example.org/",
            "https://flows.example.org",
        ),
        ("orchestra.default_link_ttl", "86400", "86400"),
        ("orchestra.default_link_ttl", "7d", "604800"),
        ("orchestra.default_link_ttl", "12h", "43200"),
        ("orchestra.request_limits.enabled", "on", "true"),
        ("orchestra.request_limits.period", "600", "600"),
        ("interaction.limits.per_link", "30", "30"),
        ("interaction.limits.total", "5000", "5000"),
        ("orchestra.test_provider", "off", "false"),
        ("notice.limits.per_payment", "10", "10"),
        ("notice.limits.total", "10000", "10000"),
        ("api.limits.rate_per_minute", "120", "120"),
        ("api.limits.burst", "40", "40"),
        ("api.limits.signed_multiplier", "2", "2"),
        ("api.caps.running_instances_per_token", "50", "50"),
        ("api.caps.links_per_instance_per_day", "10", "10"),
        ("login.limits.per_address", "100", "100"),
        ("login.limits.address_period", "600", "600"),
        ("login.limits.per_account", "0", "0"),
        ("login.limits.account_total", "250", "250"),
        ("login.limits.account_period", "86400", "86400"),
        ("interaction.limits.report_only", "on", "true"),
        ("notice.limits.report_only", "yes", "true"),
        ("login.limits.report_only", "1", "true"),
        (
            "orchestra.request_limits.on_store_fault",
            "Refuse",
            "refuse",
        ),
    ] {
        cli.run(&["config", "set", key, typed])
            .expect(0, "", &format!("{key} is now {saved}.\n"));
        assert_eq!(cli.get(key), saved);
    }
    cli.run_fr(&["config", "set", "interaction.limits.total", "6000"])
        .expect(0, "", "interaction.limits.total vaut maintenant 6000.\n");
}

#[tokio::test]
async fn config_set_refuses_bad_values_in_both_languages_and_saves_nothing() {
    let cli = cli().await;
    let whole = |min: &str, max: &str| {
        (
            format!("Enter a whole number from {min} to {max}."),
            format!("Saisissez un nombre entier de {min} à {max}."),
        )
    };
    let named = |en: &str, fr: &str| (en.to_owned(), fr.to_owned());
    let site_name = named(
        "Enter a site name of 1 to 100 characters.",
        "Saisissez un nom de site de 1 à 100 caractères.",
    );
    let base_url = named(
        "Enter a web address starting with http:// or https://, such as https://flows.example.org.",
        "Saisissez une adresse web commençant par http:// ou https://, comme https://processus.exemple.fr.",
    );
    let boolean = named("Enter true or false.", "Saisissez true ou false.");
    // The default lifetime reads durations as the link forms do (issue 20).
    let lifetime = named(
        "Enter a duration from 60 to 31536000 seconds: 3600, 30m, 12h or 7d.",
        "Saisissez une durée de 60 à 31536000 secondes : 3600, 30m, 12h ou 7d.",
    );
    let long_name = "x".repeat(101);
    let cases: Vec<(&str, &str, (String, String))> = vec![
        ("orchestra.site_name", "", site_name.clone()),
        ("orchestra.site_name", "   ", site_name.clone()),
        ("orchestra.site_name", &long_name, site_name),
        ("orchestra.base_url", "ftp://x.example", base_url.clone()),
        ("orchestra.base_url", "x.example", base_url.clone()),
        ("orchestra.base_url", "https://x.example/?a=b", base_url),
        ("orchestra.default_link_ttl", "a week", lifetime.clone()),
        ("orchestra.default_link_ttl", "7w", lifetime.clone()),
        ("orchestra.default_link_ttl", "-60", lifetime.clone()),
        ("orchestra.default_link_ttl", "59", lifetime.clone()),
        ("orchestra.default_link_ttl", "366d", lifetime.clone()),
        ("orchestra.default_link_ttl", "31536001", lifetime),
        ("orchestra.request_limits.enabled", "maybe", boolean.clone()),
        ("orchestra.request_limits.enabled", "-1", boolean.clone()),
        ("interaction.limits.report_only", "maybe", boolean.clone()),
        ("notice.limits.report_only", "2", boolean.clone()),
        ("login.limits.report_only", "report", boolean),
        (
            "orchestra.request_limits.on_store_fault",
            "closed",
            named(
                "Enter count, allow or refuse.",
                "Saisissez count, allow ou refuse.",
            ),
        ),
        (
            "orchestra.request_limits.period",
            "hour",
            whole("1", "604800"),
        ),
        (
            "orchestra.request_limits.period",
            "-3600",
            whole("1", "604800"),
        ),
        ("orchestra.request_limits.period", "0", whole("1", "604800")),
        (
            "orchestra.request_limits.period",
            "604801",
            whole("1", "604800"),
        ),
        ("interaction.limits.per_link", "ten", whole("0", "1000000")),
        ("interaction.limits.per_link", "-1", whole("0", "1000000")),
        ("interaction.limits.per_link", "2.5", whole("0", "1000000")),
        (
            "interaction.limits.per_link",
            "1000001",
            whole("0", "1000000"),
        ),
        ("interaction.limits.total", "lots", whole("0", "1000000000")),
        ("interaction.limits.total", "-5", whole("0", "1000000000")),
        (
            "interaction.limits.total",
            "1000000001",
            whole("0", "1000000000"),
        ),
        (
            "interaction.limits.total",
            "99999999999999999999999",
            whole("0", "1000000000"),
        ),
    ];
    for (key, bad, (en, fr)) in &cases {
        cli.run(&["config", "set", key, bad])
            .expect(2, "", &format!("{key}: {en}\n"));
        cli.run_fr(&["config", "set", key, bad])
            .expect(2, "", &format!("{key} : {fr}\n"));
    }
    for (key, value) in DEFAULTS {
        assert_eq!(cli.get(key), *value, "{key} changed after refusals");
    }
}

#[tokio::test]
async fn config_refuses_unknown_keys() {
    let cli = cli().await;
    let en = "Unknown setting: no.such.key. \"orchestra config list\" shows them.\n";
    cli.run(&["config", "get", "no.such.key"]).expect(2, "", en);
    cli.run(&["config", "set", "no.such.key", "1"])
        .expect(2, "", en);
    cli.run_fr(&["config", "get", "no.such.key"]).expect(
        2,
        "",
        "Réglage inconnu : no.such.key. « orchestra config list » les affiche.\n",
    );
    // The record of cron's last run is a stored value, but not a setting.
    cli.run(&[
        "config",
        "set",
        orchestra::domain::status::CRON_LAST_RUN,
        "1",
    ])
    .expect(
        2,
        "",
        &format!(
            "Unknown setting: {}. \"orchestra config list\" shows them.\n",
            orchestra::domain::status::CRON_LAST_RUN
        ),
    );
}

#[tokio::test]
async fn switching_the_limits_off_keeps_the_numbers() {
    let cli = cli().await;
    for (key, value) in [
        ("interaction.limits.per_link", "30"),
        ("interaction.limits.total", "5000"),
        ("orchestra.request_limits.period", "900"),
        ("orchestra.request_limits.enabled", "true"),
    ] {
        assert_eq!(cli.run(&["config", "set", key, value]).code, 0);
    }
    cli.run(&["config", "set", "orchestra.request_limits.enabled", "false"])
        .expect(0, "", "orchestra.request_limits.enabled is now false.\n");
    assert_eq!(cli.get("interaction.limits.per_link"), "30");
    assert_eq!(cli.get("interaction.limits.total"), "5000");
    assert_eq!(cli.get("orchestra.request_limits.period"), "900");
    cli.run(&["config", "set", "orchestra.request_limits.enabled", "yes"])
        .expect(0, "", "orchestra.request_limits.enabled is now true.\n");
    assert_eq!(cli.get("interaction.limits.per_link"), "30");
}

// --- status and cron -------------------------------------------------------------------------

const DOORWAY_OFF_EN: &str = "[Warning] Interaction doorway request limits: Nothing caps the doorway: the request limits switch is off.\n    Anyone can make the site check links as fast as they can send requests. Turn on \"Count and limit requests\" in Settings › Request limits and set both limits in Interaction settings, or run: orchestra config set orchestra.request_limits.enabled true interaction.limits.per_link 12 interaction.limits.total 10000\n";
const DOORWAY_OFF_FR: &str = "[Avertissement] Limites de requêtes de la porte d'interaction : Rien ne limite la porte : l'interrupteur des limites de requêtes est éteint.\n    N'importe qui peut faire vérifier des liens au site aussi vite qu'il envoie des requêtes. Activez « Compter et limiter les requêtes » dans Réglages › Limites de requêtes et réglez les deux limites dans Réglages d'interaction, ou lancez : orchestra config set orchestra.request_limits.enabled true interaction.limits.per_link 12 interaction.limits.total 10000\n";
const DOORWAY_ZERO_EN: &str = "[Warning] Interaction doorway request limits: Nothing caps the doorway: both limits are 0.\n    The switch is on, but a limit of 0 turns its tier off. Set requests per link and in total in Interaction settings, or run: orchestra config set interaction.limits.per_link 12 interaction.limits.total 10000\n";
const DOORWAY_ZERO_FR: &str = "[Avertissement] Limites de requêtes de la porte d'interaction : Rien ne limite la porte : les deux limites valent 0.\n    L'interrupteur est allumé, mais une limite de 0 désactive son palier. Réglez les requêtes par lien et au total dans Réglages d'interaction, ou lancez : orchestra config set interaction.limits.per_link 12 interaction.limits.total 10000\n";
const DOORWAY_ON_EN: &str = "[OK] Interaction doorway request limits: 30 per link, 5000 in total, per 600 seconds (flood store: sql)\n    Every request to the doorway is counted before any work; a refused request gets a plain 429.\n";

/// The payment provider's check, then the "Links" check that follows it.
const PROVIDER_EN: &str = "[OK] Payment provider: Test provider (no money moves)\n    Payments go through the built-in test provider. Turn it off with: orchestra config set orchestra.test_provider false\n[OK] Links: Built on http://127.0.0.1:8080\n";
const PROVIDER_FR: &str = "[OK] Prestataire de paiement : Prestataire de test (aucun argent ne circule)\n    Les paiements passent par le prestataire de test intégré. Désactivez-le avec : orchestra config set orchestra.test_provider false\n[OK] Liens : Construits sur http://127.0.0.1:8080\n";
const NOTICES_SWITCH_EN: &str = "[Note] Payment notice request limits: Off: the site-wide switch is off\n    Nothing caps the payment provider's notices (POST /notice/test-provider): the request limits switch is off. Turn on \"Count and limit requests\" in Settings › Request limits, or run: orchestra config set orchestra.request_limits.enabled true notice.limits.per_payment 10 notice.limits.total 10000\n";
const NOTICES_SWITCH_FR: &str = "[Remarque] Limites des avis de paiement : Désactivées : l'interrupteur général est coupé\n    Rien ne limite les avis du prestataire de paiement (POST /notice/test-provider) : l'interrupteur des limites de requêtes est éteint. Activez « Compter et limiter les requêtes » dans Réglages › Limites de requêtes, ou lancez : orchestra config set orchestra.request_limits.enabled true notice.limits.per_payment 10 notice.limits.total 10000\n";
const NOTICES_ZERO_EN: &str = "[Note] Payment notice request limits: Off: both notice limits are 0\n    Nothing caps the payment provider's notices (POST /notice/test-provider). Set them under Settings › Interaction, or run: orchestra config set notice.limits.per_payment 10 notice.limits.total 10000\n";
/// The checks after the doorway's, as shipped (issue 9).
const TAIL_EN: &str = "[OK] Sign-in limits: 50 attempts per address every 3600 s; 5 failures per account and address, 100 per account, every 21600 s\n[OK] Client addresses: Taken from the connection; no proxy is trusted\n";
const TAIL_FR: &str = "[OK] Limites de connexion : 50 tentatives par adresse toutes les 3600 s ; 5 échecs par compte et adresse, 100 par compte, toutes les 21600 s\n[OK] Adresses des clients : Prises de la connexion ; aucun proxy n'est de confiance\n";

fn database_line(lang_fr: bool) -> String {
    let backend = if helpers::on_postgres() {
        "PostgreSQL"
    } else {
        "SQLite"
    };
    if lang_fr {
        format!("[OK] Base de données : {backend}, joignable\n")
    } else {
        format!("[OK] Database: {backend}, reachable\n")
    }
}

/// The retention check as shipped (kept forever), before and after cron's first erasure run.
const RETENTION_EN: &str = "[OK] Retention of ended instances' records: Kept forever (records.retention_days is 0)\n    No workflow has a keep: line of its own.\n    Cron has not run the erasure yet.\n";
const RETENTION_RAN_EN: &str = "[OK] Retention of ended instances' records: Kept forever (records.retention_days is 0)\n    No workflow has a keep: line of its own.\n    Cron's last erasure erased 0 instances on DATE\n";
const RETENTION_RAN_FR: &str = "[OK] Conservation des données des instances terminées : Gardées pour toujours (records.retention_days vaut 0)\n    Aucun workflow n'a sa propre ligne keep:.\n    Le dernier effacement du cron a effacé 0 instance le DATE\n";
const RETENTION_FR: &str = "[OK] Conservation des données des instances terminées : Gardées pour toujours (records.retention_days vaut 0)\n    Aucun workflow n'a sa propre ligne keep:.\n    Cron n'a pas encore lancé l'effacement.\n";

/// The report's text with the dates (which change) replaced by `DATE`.
fn undated(text: &str) -> String {
    text.lines()
        .map(|line| match line.find("20") {
            Some(i) if line.ends_with(" UTC") => format!("{}DATE\n", &line[..i]),
            _ => format!("{line}\n"),
        })
        .collect()
}

#[tokio::test]
async fn status_warns_while_the_doorway_is_uncapped_as_shipped() {
    let cli = cli().await;
    cli.init();
    let run = cli.run(&["status"]);
    assert_eq!((run.code, run.stderr.as_str()), (1, ""), "{run:#?}");
    let cron = "[Warning] Last cron run: Never\n    Cron removes expired sessions, handles and counts. The server runs it every ten minutes; without a server running, schedule \"orchestra cron\".\n";
    assert_eq!(
        undated(&run.stdout),
        format!(
            "{}[OK] Site keys: Present, made DATE\n{cron}[OK] Version: Orchestra {}\n{PROVIDER_EN}{NOTICES_SWITCH_EN}{DOORWAY_OFF_EN}{TAIL_EN}{RETENTION_EN}",
            database_line(false),
            env!("CARGO_PKG_VERSION")
        )
    );

    let run = cli.run_fr(&["status"]);
    assert_eq!((run.code, run.stderr.as_str()), (1, ""), "{run:#?}");
    let cron = "[Avertissement] Dernière exécution du cron : Jamais\n    Le cron supprime les sessions, jetons et compteurs expirés. Le serveur le lance toutes les dix minutes ; sans serveur, planifiez « orchestra cron ».\n";
    assert_eq!(
        undated(&run.stdout),
        format!(
            "{}[OK] Clés du site : Présentes, créées le DATE\n{cron}[OK] Version : Orchestra {}\n{PROVIDER_FR}{NOTICES_SWITCH_FR}{DOORWAY_OFF_FR}{TAIL_FR}{RETENTION_FR}",
            database_line(true),
            env!("CARGO_PKG_VERSION")
        )
    );
}

/// The notices' limits set, the site-wide switch off: the switch is the cause, and the one
/// thing the notices' line proposes, in both languages.
#[tokio::test]
async fn status_proposes_the_switch_when_it_alone_leaves_the_notices_uncapped() {
    let cli = cli().await;
    for (key, value) in [
        ("notice.limits.per_payment", "5"),
        ("notice.limits.total", "100"),
    ] {
        assert_eq!(cli.run(&["config", "set", key, value]).code, 0);
    }
    let en = "[Note] Payment notice request limits: Off: the site-wide switch is off\n    Nothing caps the payment provider's notices (POST /notice/test-provider): the request limits switch is off. Turn on \"Count and limit requests\" in Settings › Request limits, or run: orchestra config set orchestra.request_limits.enabled true\n";
    let fr = "[Remarque] Limites des avis de paiement : Désactivées : l'interrupteur général est coupé\n    Rien ne limite les avis du prestataire de paiement (POST /notice/test-provider) : l'interrupteur des limites de requêtes est éteint. Activez « Compter et limiter les requêtes » dans Réglages › Limites de requêtes, ou lancez : orchestra config set orchestra.request_limits.enabled true\n";
    let run = cli.run(&["status"]);
    assert!(run.stdout.contains(en), "{}", run.stdout);
    let run = cli.run_fr(&["status"]);
    assert!(run.stdout.contains(fr), "{}", run.stdout);
}

#[tokio::test]
async fn status_says_why_when_both_limits_are_zero() {
    let cli = cli().await;
    cli.run(&["cron"]).expect(0, "", "");
    cli.run(&["config", "set", "orchestra.request_limits.enabled", "true"]);
    let run = cli.run(&["status"]);
    assert_eq!(run.code, 1, "{run:#?}");
    assert!(
        undated(&run.stdout).ends_with(&format!("{DOORWAY_ZERO_EN}{TAIL_EN}{RETENTION_RAN_EN}")),
        "{}",
        run.stdout
    );
    let run = cli.run_fr(&["status"]);
    assert_eq!(run.code, 1, "{run:#?}");
    assert!(
        undated(&run.stdout).ends_with(&format!("{DOORWAY_ZERO_FR}{TAIL_FR}{RETENTION_RAN_FR}")),
        "{}",
        run.stdout
    );
}

#[tokio::test]
async fn status_is_ok_once_the_limits_are_on_and_cron_has_run() {
    let cli = cli().await;
    for (key, value) in [
        ("orchestra.request_limits.enabled", "true"),
        ("orchestra.request_limits.period", "600"),
        ("interaction.limits.per_link", "30"),
        ("interaction.limits.total", "5000"),
    ] {
        assert_eq!(cli.run(&["config", "set", key, value]).code, 0);
    }
    let before_cron = cli.run(&["status"]);
    assert_eq!(
        before_cron.code, 1,
        "cron has not run yet: {before_cron:#?}"
    );
    assert!(
        before_cron
            .stdout
            .ends_with(&format!("{DOORWAY_ON_EN}{TAIL_EN}{RETENTION_EN}")),
        "{}",
        before_cron.stdout
    );

    cli.run(&["cron"]).expect(0, "", "");
    let run = cli.run(&["status"]);
    assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{run:#?}");
    assert_eq!(
        undated(&run.stdout),
        format!(
            "{}[OK] Site keys: Present, made DATE\n[OK] Last cron run: DATE\n[OK] Version: Orchestra {}\n{PROVIDER_EN}{NOTICES_ZERO_EN}{DOORWAY_ON_EN}{TAIL_EN}{RETENTION_RAN_EN}",
            database_line(false),
            env!("CARGO_PKG_VERSION")
        )
    );
    let run = cli.run_fr(&["status"]);
    assert_eq!(run.code, 0, "{run:#?}");
    assert!(
        run.stdout
            .contains("[OK] Limites de requêtes de la porte d'interaction : "),
        "{}",
        run.stdout
    );
}

#[tokio::test]
async fn status_as_json_carries_the_same_checks_and_exit_status() {
    let cli = cli().await;
    cli.init();
    let run = cli.run(&["status", "--format", "json"]);
    assert_eq!((run.code, run.stderr.as_str()), (1, ""), "{run:#?}");
    let report: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
    assert_eq!(report["severity"], "warning");
    let ids: Vec<&str> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "database",
            "site_keys",
            "cron",
            "version",
            "payment_provider",
            "base_url",
            "notice_limits",
            "doorway_limits",
            "login_limits",
            "proxies",
            "retention"
        ]
    );
    assert_eq!(
        report["checks"][5]["value"],
        "Built on http://127.0.0.1:8080"
    );
    assert_eq!(report["checks"][6]["severity"], "note");
    let doorway = &report["checks"][7];
    assert_eq!(doorway["severity"], "warning");
    assert_eq!(doorway["severity_label"], "Warning");
    assert_eq!(doorway["title"], "Interaction doorway request limits");
    assert_eq!(
        doorway["value"],
        "Nothing caps the doorway: the request limits switch is off."
    );
    assert_eq!(report["checks"][2]["value"], "Never");

    let run = cli.run_fr(&["status", "--format=json"]);
    assert_eq!(run.code, 1);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let doorway = &report["checks"][7];
    assert_eq!(
        doorway["severity"], "warning",
        "severities are not translated"
    );
    assert_eq!(doorway["severity_label"], "Avertissement");
    assert_eq!(
        doorway["title"],
        "Limites de requêtes de la porte d'interaction"
    );
    assert_eq!(
        doorway["value"],
        "Rien ne limite la porte : l'interrupteur des limites de requêtes est éteint."
    );

    for (key, value) in [
        ("orchestra.request_limits.enabled", "true"),
        ("interaction.limits.per_link", "30"),
    ] {
        cli.run(&["config", "set", key, value]);
    }
    cli.run(&["cron"]).expect(0, "", "");
    let run = cli.run(&["status", "--format", "json"]);
    assert_eq!(run.code, 0, "{run:#?}");
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        report["severity"], "note",
        "the notices' note, which exits 0"
    );
    // A per-link limit without a total is a note (issue 11): a flood of fresh links is not
    // capped, and a note exits 0.
    assert_eq!(report["checks"][7]["severity"], "note");
    assert_eq!(
        report["checks"][7]["value"],
        "30 per link, no total limit, per 3600 seconds (flood store: sql)"
    );
}

#[tokio::test]
async fn status_refuses_an_unknown_format() {
    let cli = cli().await;
    cli.run(&["status", "--format", "xml"])
        .expect(2, "", "Unknown format: xml (text or json).\n");
    cli.run(&["status", "--verbose"])
        .expect(2, "", "Unknown option: --verbose\n");
}

#[tokio::test]
async fn cron_records_its_run_and_removes_what_expired() {
    let cli = cli().await;
    let db = cli.db().await;
    orchestra::domain::workflow::seed::seed_examples(&db)
        .await
        .unwrap();
    let workflow = store::workflows::by_name(&db, "order_payment")
        .await
        .unwrap()
        .unwrap();
    let new = store::instances::New {
        workflow_id: workflow.id,
        version_id: workflow.version_id,
        title: "Order 7",
        body: "",
        token: "t",
        started_by: "cli",
        actor: "cli",
        contacts: &[],
        first: Default::default(),
        mail_quota: None,
    };
    let id = store::instances::create(&db, &new, None)
        .await
        .unwrap()
        .unwrap();
    let now = store::now();
    let payment = |reference| store::payments::NewPayment {
        reference,
        instance: id,
        step: 1,
        branch: "",
        participant: "payer",
        amount_cents: 4990,
        currency: "EUR",
    };
    store::payments::start(&db, &payment("r1"), "old", now - 1)
        .await
        .unwrap();
    store::payments::start(&db, &payment("r2"), "live", now + 3600)
        .await
        .unwrap();
    store::sessions::save(&db, "old-session", "{}", now - 1)
        .await
        .unwrap();
    store::sessions::save(&db, "live-session", "{}", now + 3600)
        .await
        .unwrap();
    assert_eq!(
        store::settings::get(&db, orchestra::domain::status::CRON_LAST_RUN)
            .await
            .unwrap(),
        None
    );

    cli.run(&["cron"]).expect(0, "", "");

    let ran: i64 = store::settings::get(&db, orchestra::domain::status::CRON_LAST_RUN)
        .await
        .unwrap()
        .expect("cron recorded its run")
        .parse()
        .unwrap();
    assert!((now..=store::now()).contains(&ran));
    assert_eq!(
        store::payments::delete_expired_handles(&db, now)
            .await
            .unwrap(),
        0
    );
    assert!(
        store::payments::by_handle(&db, "live", now)
            .await
            .unwrap()
            .is_some()
    );
    assert_eq!(store::sessions::delete_expired(&db, now).await.unwrap(), 0);
    assert!(
        store::sessions::load(&db, "live-session", now)
            .await
            .unwrap()
            .is_some()
    );
    let status = cli.run(&["status"]);
    let line = status.stdout.lines().nth(2).unwrap();
    assert_eq!(
        line,
        format!("[OK] Last cron run: {}", orchestra::time::format_utc(ran))
    );
}

// --- keys -----------------------------------------------------------------------------------

/// The app over the CLI's own database, on the system clock, so CLI-issued links are live.
async fn serve_over(db: &Db) -> (String, orchestra::http::AppState) {
    use orchestra::limits::flood::{Backend, Clock, MemoryFlood};
    let clock = Clock::system();
    let flood = Arc::new(MemoryFlood::new(1024, clock.clone()));
    let state = orchestra::build_state(db.clone(), flood, Backend::Memory, clock)
        .await
        .unwrap();
    let app = orchestra::http::app(state.clone(), false);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let app = axum::ServiceExt::<axum::extract::Request>::into_make_service(app);
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (base, state)
}

#[tokio::test]
async fn keys_rotate_voids_every_link_issued_before() {
    let cli = cli().await;
    let id = cli
        .run(&["instance", "start", "contract_review"])
        .line()
        .to_owned();
    let url = cli
        .run(&["link", "issue", &id, "--branch", "legal"])
        .line()
        .to_owned();
    let token = url.rsplit('/').next().unwrap();
    let parsed = orchestra::domain::capability::parse(token).unwrap();
    let db = cli.db().await;
    let instance_token = store::instances::by_id(&db, parsed.claims.instance)
        .await
        .unwrap()
        .unwrap()
        .token;
    let keys = store::keys::load_or_create(&db).await.unwrap();
    assert!(orchestra::domain::capability::verify(
        &keys,
        &parsed,
        &instance_token,
        store::now()
    ));
    let (base, state) = serve_over(&db).await;
    let path = format!("{base}/interaction/{token}");
    assert_eq!(reqwest::get(&path).await.unwrap().status(), 200);
    // An API token, which a rotation of the site keys leaves working (issue 20: it voided them
    // all without a word) and the token key's own rotation voids.
    let api = cli.run(&["token", "create", "crm"]).line().to_owned();
    let workflows = format!("{base}/api/v1/workflows");
    let api_status = |token: String| {
        let workflows = workflows.clone();
        async move {
            reqwest::Client::new()
                .get(&workflows)
                .bearer_auth(token)
                .send()
                .await
                .unwrap()
                .status()
        }
    };
    assert_eq!(api_status(api.clone()).await, 200);

    // Without --yes, and with no terminal to ask at, it says what it would void and changes
    // nothing (issue 20: it voided every API token without a word).
    cli.run(&["keys", "rotate"]).expect(
        2,
        "",
        "Rotating the site keys voids every link and continuation handle issued so far and every administrator's session. API tokens keep working (orchestra token rotate-key voids them).\nNothing was changed. Run `orchestra keys rotate --yes` to go on.\n",
    );
    assert_eq!(
        reqwest::get(&path).await.unwrap().status(),
        200,
        "still works"
    );
    // Its running instance is left with no working link: the command says so.
    cli.run(&["keys", "rotate", "--yes"])
        .expect(0, "1 running instance has no working link left. Send fresh links with: orchestra keys resend\n", "New site keys are in place. Every link and handle issued before now no longer works, and every administrator signs in again. API tokens and webhook endpoints keep working.\n");

    let keys = store::keys::load_or_create(&db).await.unwrap();
    assert!(!orchestra::domain::capability::verify(
        &keys,
        &parsed,
        &instance_token,
        store::now()
    ));
    state.site.refresh().await;
    assert_eq!(reqwest::get(&path).await.unwrap().status(), 404);
    assert_eq!(
        api_status(api.clone()).await,
        200,
        "the token survives the rotation"
    );
    cli.run(&["token", "rotate-key"]).expect(
        2,
        "",
        "Rotating the API tokens' key voids every API token made so far; links, sessions and the site keys are left alone.\nNothing was changed. Run `orchestra token rotate-key --yes` to go on.\n",
    );
    assert_eq!(api_status(api.clone()).await, 200);
    cli.run(&["token", "rotate-key", "--yes"]).expect(
        0,
        "",
        "A new key for API tokens is in place. Every token made before now no longer works: make new ones (orchestra token create).\n",
    );
    state.site.refresh().await;
    assert_eq!(
        api_status(api).await,
        401,
        "voided by its own key's rotation"
    );
    let fresh_api = cli.run(&["token", "create", "crm2"]).line().to_owned();
    assert_eq!(api_status(fresh_api).await, 200);
    let fresh = cli
        .run(&["link", "issue", &id, "--branch", "legal"])
        .line()
        .to_owned();
    let fresh = format!("{base}/interaction/{}", fresh.rsplit('/').next().unwrap());
    assert_eq!(
        reqwest::get(&fresh).await.unwrap().status(),
        200,
        "new links work"
    );
    cli.run_fr(&["keys", "rotate", "--yes"]).expect(
        0,
        "1 instance en cours n'a plus de lien valide. Envoyez de nouveaux liens avec\u{202f}: orchestra keys resend\n",
        "De nouvelles clés du site sont en place. Aucun lien ni jeton de retour émis avant maintenant ne fonctionne plus, et chaque administrateur se reconnecte. Les jetons d'API et les points de réception des webhooks continuent de fonctionner.\n",
    );
}

// --- every command --------------------------------------------------------------------------

#[tokio::test]
async fn an_unknown_command_exits_2_and_touches_no_database() {
    let cli = cli().await;
    let mut cmd = cli.command(&["frobnicate", "now"]);
    cmd.env_remove("ORCHESTRA_DATABASE_URL");
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "Unknown command: frobnicate now. Run \"orchestra help\" for the list.\n"
    );
    assert_eq!(
        std::fs::read_dir(cli.dir.path()).unwrap().count(),
        0,
        "no orchestra.db was made for a typo"
    );
    cli.run(&["workflow"]).expect(
        2,
        "",
        "Unknown command: workflow. Run \"orchestra help\" for the list.\n",
    );
    cli.run_fr(&["keys", "show"]).expect(
        2,
        "",
        "Commande inconnue : keys show. Lancez « orchestra help » pour la liste.\n",
    );
}

#[tokio::test]
async fn help_and_version_need_no_database() {
    let cli = cli().await;
    let help = cli.run(&["help"]);
    assert_eq!((help.code, help.stderr.as_str()), (0, ""));
    assert!(
        help.stdout
            .starts_with("Orchestra: workflows answered through signed links.\n")
    );
    for command in [
        "serve",
        "init",
        "admin",
        "workflow",
        "instance",
        "link",
        "config",
        "status",
        "cron",
        "keys",
        "completions",
    ] {
        assert!(
            help.stdout.contains(&format!("\n  {command} ")),
            "help misses {command}"
        );
    }
    assert_eq!(cli.run(&["--help"]).stdout, help.stdout);
    // Each command's own help, aligned by clap, in the operator's language.
    let link = cli.run(&["link", "issue", "--help"]);
    assert_eq!(link.code, 0);
    assert!(
        link.stdout
            .contains("Usage: orchestra link issue [OPTIONS] <INSTANCE>"),
        "{}",
        link.stdout
    );
    assert!(
        link.stdout
            .contains("      --ttl <DURATION>      How long the link works")
    );
    let french = cli.run_fr(&["link", "issue", "--help"]);
    assert!(
        french
            .stdout
            .starts_with("Émet un lien ; affiche son URL\n")
    );
    assert!(french.stdout.contains("Utilisation : orchestra link issue"));
    cli.run(&["--version"])
        .expect(0, &format!("orchestra {}\n", env!("CARGO_PKG_VERSION")), "");
    assert_eq!(std::fs::read_dir(cli.dir.path()).unwrap().count(), 0);
}

#[tokio::test]
async fn every_command_migrates_an_empty_database() {
    let env = [("ORCHESTRA_ADMIN_PASSWORD", "long enough password")];
    let cases: &[(&[&str], i32, &str, &str)] = &[
        (
            &["admin", "create", "ada"],
            0,
            "1\n",
            "Administrator ada created.\n",
        ),
        (&["instance", "start", "contract_review"], 0, "1\n", ""),
        (&["link", "issue", "1"], 2, "", "No instance 1.\n"),
        (
            &["config", "get", "orchestra.site_name"],
            0,
            "Orchestra\n",
            "",
        ),
        (
            &["config", "set", "orchestra.site_name", "Flows"],
            0,
            "",
            "orchestra.site_name is now Flows.\n",
        ),
        (&["cron"], 0, "", ""),
        (
            &["keys", "rotate", "--yes"],
            0,
            "",
            "New site keys are in place. Every link and handle issued before now no longer works, and every administrator signs in again. API tokens and webhook endpoints keep working.\n",
        ),
    ];
    for (args, code, stdout, stderr) in cases {
        let cli = cli().await;
        cli.run_with(args, &env, None).expect(*code, stdout, stderr);
    }
    for args in [&["workflow", "list"][..], &["config", "list"]] {
        let cli = cli().await;
        let run = cli.run(args);
        assert!(
            run.code <= 1 && run.stderr.is_empty() && !run.stdout.is_empty(),
            "{args:?}: {run:#?}"
        );
    }
    // Except the status report, which writes nothing: it says the database is not set up.
    let cli = cli().await;
    let run = cli.run(&["status"]);
    assert_eq!(run.code, 2, "{run:#?}");
    assert!(
        run.stdout.contains("Run \"orchestra init\" to apply them."),
        "{run:#?}"
    );
    cli.init();
    assert_eq!(cli.run(&["status"]).code, 1);
}

#[tokio::test]
async fn no_command_prints_a_password_or_a_key() {
    let cli = cli().await;
    let password = "a very secret password 42";
    let loud = [
        ("ORCHESTRA_LOG", "trace"),
        ("ORCHESTRA_ADMIN_PASSWORD", password),
    ];
    let mut said = String::new();
    let mut link = String::new();
    for args in [
        &["admin", "create", "ada"][..],
        &["admin", "create", "ada"],
        &["workflow", "list"],
        &["instance", "start", "contract_review"],
        &["link", "issue", "1", "--branch", "legal"],
        &["config", "list"],
        &["config", "set", "interaction.limits.total", "-1"],
        &["status", "--format", "json"],
        &["cron"],
        &["keys", "rotate", "--yes"],
        &["link", "issue", "1", "--participant", "finance"],
    ] {
        let run = cli.run_with(args, &loud, None);
        said.push_str(&run.stderr);
        if args[0] == "link" {
            link = run.stdout.clone();
        } else {
            said.push_str(&run.stdout);
        }
        assert!(
            !run.stderr.contains("/interaction/"),
            "a link on standard error: {run:#?}"
        );
    }
    let piped = cli.run_with(
        &["admin", "create", "bob"],
        &[("ORCHESTRA_LOG", "trace")],
        Some(password),
    );
    said.push_str(&piped.stdout);
    said.push_str(&piped.stderr);
    assert!(
        said.contains("TRACE") || said.contains("DEBUG") || said.contains("INFO"),
        "logs were on"
    );

    let mut secrets = vec![password.to_owned()];
    secrets.push(link.trim().rsplit('.').next().unwrap().to_owned());
    let pool = {
        sqlx::any::install_default_drivers();
        let (_, url) = store::normalize_url(&cli.database.url).unwrap();
        sqlx::AnyPool::connect(&url).await.unwrap()
    };
    let (private_key, hash_salt): (String, String) =
        sqlx::query_as("SELECT private_key, hash_salt FROM site_keys")
            .fetch_one(&pool)
            .await
            .unwrap();
    secrets.extend([private_key, hash_salt]);
    for (name, hash) in
        sqlx::query_as::<_, (String, String)>("SELECT name, password_hash FROM admins")
            .fetch_all(&pool)
            .await
            .unwrap()
    {
        assert!(said.contains(&name));
        secrets.push(hash);
    }
    for secret in &secrets {
        assert!(!secret.is_empty());
        assert!(
            !said.contains(secret.as_str()),
            "a secret was printed: {said}"
        );
    }
}

// --- serve ------------------------------------------------------------------------------------

#[tokio::test]
async fn serve_on_a_fresh_directory_makes_the_database_and_prints_a_setup_url() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(BIN)
        .args(["serve", "--bind", "127.0.0.1:0"])
        .env_clear()
        .env("ORCHESTRA_LANG", "en")
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut said = Vec::new();
    let listening = loop {
        let line = lines.next().expect("serve said nothing").unwrap();
        said.push(line.clone());
        if let Some(rest) = line.strip_prefix("Orchestra is listening on ") {
            break rest.to_owned();
        }
    };
    let intro = said
        .iter()
        .position(|l| {
            l == "No administrator exists yet. Open this one-time setup URL to create the first one (valid for 24 hours):"
        })
        .unwrap_or_else(|| panic!("no setup URL: {said:?}"));
    let setup = said[intro + 1].trim().to_owned();
    let address = listening.split(' ').next().unwrap();
    assert!(setup.starts_with(&format!("{address}/setup/")), "{said:?}");
    assert_eq!(
        listening,
        format!("{address} (database: SQLite, flood store: sql).")
    );
    let connections = lines.next().unwrap().unwrap();
    assert!(
        connections.starts_with("Connections: at most "),
        "{connections}"
    );
    let warning = lines.next().unwrap().unwrap();
    assert_eq!(
        warning,
        "Warning: nothing caps the interaction doorway. Set the request limits under Settings (see docs/interaction.md)."
    );
    let page = reqwest::get(&setup).await.unwrap();
    assert_eq!(page.status(), 200);
    assert!(
        dir.path().join("orchestra.db").exists(),
        "the SQLite file is made on first start"
    );
    // Until a base URL is saved, links are built on the address the server is bound to, by the
    // commands on its database too (issue 20: they went to the shipped :8080, where nothing
    // listens); once one is saved, on it.
    let database = format!("sqlite:{}", dir.path().join("orchestra.db").display());
    let orchestra = |args: &[&str]| {
        let out = Command::new(BIN)
            .args(args)
            .env_clear()
            .env("ORCHESTRA_LANG", "en")
            .env("ORCHESTRA_DATABASE_URL", &database)
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    };
    let id = orchestra(&["instance", "start", "contract_review"]);
    let link = orchestra(&["link", "issue", &id, "--participant", "legal"]);
    assert!(
        link.starts_with(&format!("{address}/interaction/")),
        "{address}"
    );
    let visited = reqwest::get(&link).await.unwrap();
    assert_eq!(visited.status(), 200, "the link works where it points");
    orchestra(&[
        "config",
        "set",
        "orchestra.base_url",
        "https://flows.example",
    ]);
    let link = orchestra(&["link", "issue", &id, "--participant", "finance"]);
    assert!(
        link.starts_with("https://flows.example/interaction/"),
        "the saved one wins"
    );
    child.kill().unwrap();
    child.wait().unwrap();

    let db = Db::connect(&format!(
        "sqlite:{}",
        dir.path().join("orchestra.db").display()
    ))
    .await
    .unwrap();
    assert!(
        store::keys::created_at(&db).await.unwrap().is_some(),
        "keys made on first start"
    );
    assert_eq!(
        store::workflows::count(&db).await.unwrap(),
        3,
        "examples seeded"
    );
}

#[tokio::test]
async fn the_one_line_fix_the_status_report_prints_clears_the_shipped_warning() {
    let cli = cli().await;
    cli.init();
    let doorway = |stdout: &str| -> Vec<String> {
        let mut lines = stdout
            .lines()
            .skip_while(|l| !l.contains("doorway request limits"));
        lines.by_ref().take(2).map(str::to_owned).collect()
    };
    let before = doorway(&cli.run(&["status"]).stdout);
    assert!(before[0].starts_with("[Warning]"), "{before:?}");
    let fix = before[1]
        .split("or run: ")
        .nth(1)
        .expect("the description ends with the fix");
    let words: Vec<&str> = fix.split(' ').collect();
    assert_eq!(&words[..3], ["orchestra", "config", "set"]);
    assert_eq!(cli.run(&words[1..]).code, 0);
    let after = doorway(&cli.run(&["status"]).stdout);
    assert!(after[0].starts_with("[OK]"), "{after:?}");
    assert!(
        after[0].contains("12 per link, 10000 in total"),
        "{after:?}"
    );
}

#[tokio::test]
async fn config_set_saves_several_pairs_together_or_none() {
    let cli = cli().await;
    let run = cli.run(&[
        "config",
        "set",
        "interaction.limits.per_link",
        "7",
        "interaction.limits.total",
        "ten",
    ]);
    assert_eq!(run.code, 2, "{run:#?}");
    assert_eq!(cli.get("interaction.limits.per_link"), "0", "nothing saved");
    let run = cli.run(&[
        "config",
        "set",
        "interaction.limits.per_link",
        "7",
        "interaction.limits.total",
        "70",
    ]);
    assert_eq!(run.code, 0, "{run:#?}");
    assert_eq!(
        run.stderr,
        "interaction.limits.per_link is now 7.\ninteraction.limits.total is now 70.\n"
    );
    assert_eq!(cli.get("interaction.limits.total"), "70");
}

#[tokio::test]
async fn an_invalid_orchestra_log_stops_the_program_with_exit_2() {
    let cli = cli().await;
    let run = cli.run_with(
        &["workflow", "list"],
        &[("ORCHESTRA_LOG", "orchestra=loud")],
        None,
    );
    assert_eq!(run.code, 2, "{run:#?}");
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr
            .starts_with("ORCHESTRA_LOG must be a tracing filter such as \"info\" or \"orchestra=debug,sqlx=warn\", not \"orchestra=loud\""),
        "{run:#?}"
    );
    let run = cli.run_with(
        &["workflow", "list"],
        &[("ORCHESTRA_LOG", "orchestra=debug,sqlx=warn")],
        None,
    );
    assert_eq!(run.code, 0, "{run:#?}");
}

#[tokio::test]
async fn serve_warns_when_the_base_url_is_not_where_it_listens() {
    let cli = cli().await;
    cli.run(&["config", "set", "orchestra.base_url", "http://127.0.0.1:1"])
        .expect(0, "", "orchestra.base_url is now http://127.0.0.1:1.\n");
    let mut child = cli
        .command(&["serve", "--bind", "127.0.0.1:0"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut said = Vec::new();
    let warning = loop {
        let line = lines.next().expect("serve said nothing").unwrap();
        said.push(line.clone());
        if line.starts_with("Warning: the base URL") || line.starts_with("Warning: nothing caps") {
            break line;
        }
    };
    child.kill().unwrap();
    child.wait().unwrap();
    let address = said
        .iter()
        .find_map(|l| l.strip_prefix("Orchestra is listening on http://"))
        .and_then(|l| l.split(' ').next())
        .expect("the address")
        .to_owned();
    // The first administrator's setup URL is on the address that works, not the saved one.
    let setup = said
        .iter()
        .find(|l| l.contains("/setup/"))
        .expect("a setup URL on a site without administrators");
    assert!(
        setup.starts_with(&format!("http://{address}/setup/")),
        "the setup URL is on the bound address"
    );
    assert_eq!(
        warning,
        format!(
            "Warning: the base URL http://127.0.0.1:1 is not where this server listens (127.0.0.1:{}): links issued now lead there. Change it with: orchestra config set orchestra.base_url URL.",
            address.trim_start_matches("127.0.0.1:")
        )
    );
    // The status report (and so the dashboard) says the same while the server is away.
    let run = cli.run(&["status", "--format", "json"]);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
    let links = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "base_url")
        .expect("a Links check")
        .clone();
    assert_eq!(links["severity"], "warning");
    assert_eq!(
        links["value"],
        format!("Built on http://127.0.0.1:1, but the server listens on http://{address}")
    );
    // Behind a proxy the base URL names another host: nothing to say.
    cli.run(&[
        "config",
        "set",
        "orchestra.base_url",
        "https://flows.example.org",
    ])
    .expect(
        0,
        "",
        "orchestra.base_url is now https://flows.example.org.\n",
    );
    let run = cli.run(&["status", "--format", "json"]);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
    let links = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "base_url")
        .unwrap()
        .clone();
    assert_eq!(links["severity"], "ok");
}

#[tokio::test]
async fn a_missing_or_repeated_argument_is_a_clear_error_with_exit_2() {
    let cli = cli().await;
    cli.run(&["link", "issue"]).expect(
        2,
        "",
        "Missing INSTANCE. Run the command with --help to see how it is used.\n",
    );
    cli.run_fr(&["link", "issue"]).expect(
        2,
        "",
        "Il manque INSTANCE. Lancez la commande avec --help pour voir comment l'utiliser.\n",
    );
    cli.run(&["link", "issue", "1", "--branch", "a", "--branch", "b"])
        .expect(2, "", "The option --participant is given more than once.\n");
    cli.run(&["link", "issue", "1", "--participant", "a", "--branch", "b"])
        .expect(2, "", "The option --participant is given more than once.\n");
    cli.run(&["config", "set", "orchestra.site_name"]).expect(
        2,
        "",
        "Give each setting as a KEY VALUE pair.\n",
    );
    cli.run(&["config", "set", "a", "b", "c"]).expect(
        2,
        "",
        "Give each setting as a KEY VALUE pair.\n",
    );
}

#[tokio::test]
async fn completions_for_bash_come_from_the_same_grammar() {
    let cli = cli().await;
    let run = cli.run(&["completions", "bash"]);
    assert_eq!((run.code, run.stderr.as_str()), (0, ""));
    assert!(run.stdout.contains("_orchestra()"), "{}", run.stdout);
    assert!(run.stdout.contains("--participant"));
    assert!(run.stdout.contains("complete -F _orchestra"));
    cli.run(&["completions", "tcsh"]).expect(
        2,
        "",
        "Unknown shell: tcsh (bash, zsh, fish, elvish or powershell).\n",
    );
}

#[tokio::test]
async fn api_tokens_are_created_once_listed_and_revoked_with_their_exit_codes() {
    let cli = cli().await;
    let made = cli.run(&["token", "create", "crm", "--rate", "120", "--burst", "30"]);
    assert_eq!(made.code, 0, "{made:#?}");
    let token = made.line().to_owned();
    assert!(token.starts_with("orch_") && token.len() == 69, "{token}");
    assert_eq!(
        made.stderr,
        "Token crm created: it is printed above, this once.\n"
    );
    cli.run(&["token", "create", "crm"])
        .expect(2, "", "A token already has this name.\n");
    cli.run(&["token", "create", "crm2", "--rate", "0"]).expect(
        2,
        "",
        "--rate takes a whole number from 1 to 1000000, not \"0\".\n",
    );
    cli.run(&["token", "create", "Bad Name"]).expect(
        2,
        "",
        "Use 1 to 64 lower-case letters, digits, - or _.\n",
    );
    let list = cli.run(&["token", "list"]);
    assert_eq!(
        list.stdout, "crm\t120\t30\tNever\tactive\tread,start,links\town\t*\n",
        "a new token's scope: every ability over what it starts, in every workflow"
    );
    assert!(
        !list.stdout.contains(&token[5..]),
        "the text is never printed again"
    );
    cli.run(&["token", "revoke", "crm"])
        .expect(0, "", "Token crm revoked.\n");
    cli.run(&["token", "revoke", "crm"])
        .expect(2, "", "No live token named crm.\n");
    let key = cli.run(&["integrator-key", "create", "acme"]);
    assert_eq!(key.code, 0);
    let lines: Vec<&str> = key.stdout.lines().collect();
    assert!(lines.len() == 2 && lines[0].starts_with("ik_") && lines[1].len() == 64);
    assert_eq!(cli.run(&["token", "create"]).code, 2, "a missing name");
}

#[tokio::test]
async fn a_tokens_scope_is_chosen_at_creation_listed_and_changed_with_exit_codes() {
    let cli = cli().await;
    let made = cli.run(&[
        "token",
        "create",
        "reader",
        "--abilities",
        "read, links",
        "--reach",
        "all",
        "--workflows",
        "contract_review",
    ]);
    assert!(made.line().starts_with("orch_"));
    for (args, message) in [
        (
            &["--abilities", "read,write"][..],
            "\"write\" is not an ability: read, start, links or workflows.\n",
        ),
        (
            &["--abilities", ""][..],
            "Choose at least one thing the token may do.\n",
        ),
        (
            &["--reach", "everything"][..],
            "\"everything\" is not a reach: own or all.\n",
        ),
        (
            &["--workflows", "contract_review,nope"][..],
            "There is no workflow named \"nope\".\n",
        ),
    ] {
        let mut create = vec!["token", "create", "other"];
        create.extend_from_slice(args);
        cli.run(&create).expect(2, "", message);
        let mut scope = vec!["token", "scope", "reader"];
        scope.extend_from_slice(args);
        cli.run(&scope).expect(2, "", message);
    }
    let list = || cli.run(&["token", "list"]).stdout;
    assert_eq!(
        list(),
        "reader\t60\t20\tNever\tactive\tread,links\tall\tcontract_review\n",
        "nothing refused was saved"
    );
    // The options given replace their part; the others stay.
    cli.run(&["token", "scope", "reader", "--reach", "own"])
        .expect(
            0,
            "",
            "Token reader: abilities read,links, reach own, workflows contract_review.\n",
        );
    cli.run(&["token", "scope", "reader", "--workflows", "*"])
        .expect(
            0,
            "",
            "Token reader: abilities read,links, reach own, workflows *.\n",
        );
    assert_eq!(
        list(),
        "reader\t60\t20\tNever\tactive\tread,links\town\t*\n"
    );
    cli.run(&["token", "scope", "nobody", "--reach", "all"])
        .expect(2, "", "No live token named nobody.\n");
    cli.run(&["token", "revoke", "reader"])
        .expect(0, "", "Token reader revoked.\n");
    cli.run(&["token", "scope", "reader", "--reach", "all"])
        .expect(2, "", "No live token named reader.\n");
    cli.run_fr(&["token", "create", "autre", "--reach", "partout"])
        .expect(2, "", "« partout » n'est pas une portée : own ou all.\n");
}

/// clap writes a heading's colon itself; in French it follows a narrow no-break space.
#[tokio::test]
async fn french_help_puts_a_narrow_no_break_space_before_its_colons() {
    let cli = cli().await;
    let run = cli.run_fr(&["--help"]);
    assert_eq!(run.code, 0, "{run:#?}");
    assert!(
        run.stdout.contains("Commandes\u{202f}:\n"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("Utilisation\u{a0}:") || run.stdout.contains("Utilisation :"));
    assert!(!run.stdout.contains("Commandes:"));
    let run = cli.run_fr(&["link", "issue", "--help"]);
    assert!(
        run.stdout.contains("Arguments\u{202f}:\n"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("Options\u{202f}:\n"), "{}", run.stdout);
}

// --- webhook ------------------------------------------------------------------------------

/// `webhook create` prints the signing secret alone, once; the database holds it only sealed,
/// and `webhook list` never shows it; `webhook enable` takes a disabled endpoint back.
#[tokio::test]
async fn webhook_create_prints_the_secret_once_and_stores_it_sealed() {
    let cli = cli().await;
    cli.init();
    let allow = [("ORCHESTRA_WEBHOOKS_ALLOW_PRIVATE", "1")];
    let made = cli.run_with(
        &[
            "webhook",
            "create",
            "http://127.0.0.1:9/hook",
            "--events",
            "step.answered,instance.ended",
        ],
        &allow,
        None,
    );
    let secret = made.line().to_owned();
    assert!(secret.starts_with("whsec_"), "{secret}");
    assert_eq!(
        made.stderr,
        "Webhook endpoint 1 created: its signing secret is printed above, this once.\n"
    );
    let db = cli.db().await;
    let row = store::webhooks::by_id(&db, 1).await.unwrap().unwrap();
    let key = orchestra::domain::delivery::signature::Secret::parse(&secret).unwrap();
    assert!(!row.secret.contains(&secret[6..]));
    assert!(!row.secret.contains(&hex::encode(key.bytes())));
    let keys = store::keys::load(&db).await.unwrap();
    assert_eq!(
        orchestra::domain::delivery::endpoints::open_secret(&keys, &row),
        Some(key)
    );
    cli.run(&["webhook", "list"]).expect(
        0,
        "1\thttp://127.0.0.1:9/hook\tstep.answered,instance.ended\tenabled\t0\t-\n",
        "",
    );
    // Disabled after its run of failures, `webhook enable` takes it back with the run forgotten.
    sqlx::any::install_default_drivers();
    let (_, url) = store::normalize_url(&cli.database.url).unwrap();
    let pool = sqlx::AnyPool::connect(&url).await.unwrap();
    sqlx::query("UPDATE webhook_endpoints SET enabled = 0, failures = 15 WHERE id = 1")
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;
    cli.run(&["webhook", "list"]).expect(
        0,
        "1\thttp://127.0.0.1:9/hook\tstep.answered,instance.ended\tdisabled\t15\t-\n",
        "",
    );
    cli.run(&["webhook", "enable", "1"]).expect(
        0,
        "",
        "Webhook endpoint 1 enabled: 0 waiting messages are due now, and new messages are queued for it again.\n",
    );
    cli.run(&["webhook", "list"]).expect(
        0,
        "1\thttp://127.0.0.1:9/hook\tstep.answered,instance.ended\tenabled\t0\t-\n",
        "",
    );
    cli.run_fr(&["webhook", "enable", "2"])
        .expect(2, "", "Aucun point de réception 2.\n");
    cli.run(&["webhook", "delete", "1"])
        .expect(0, "", "Webhook endpoint 1 deleted.\n");
    cli.run(&["webhook", "delete", "1"])
        .expect(2, "", "No webhook endpoint 1.\n");
    cli.run_fr(&["webhook", "delete", "1"])
        .expect(2, "", "Aucun point de réception 1.\n");
    cli.run(&["webhook", "list"]).expect(0, "", "");
}

/// Without `ORCHESTRA_WEBHOOKS_ALLOW_PRIVATE=1`, no endpoint inside the server's network and
/// no plain http: nothing is saved.
#[tokio::test]
async fn webhook_create_refuses_internal_addresses_and_unknown_events() {
    let cli = cli().await;
    cli.init();
    let private = "This address is inside the server's own network (loopback, private, link-local or metadata): webhooks are not sent there.\n";
    for url in [
        "https://127.0.0.1/hook",
        "https://10.0.0.1/hook",
        "https://169.254.169.254/latest/meta-data",
        "https://[::1]/hook",
    ] {
        cli.run(&["webhook", "create", url]).expect(2, "", private);
    }
    cli.run(&["webhook", "create", "http://127.0.0.1:9/hook"])
        .expect(2, "", private);
    cli.run(&["webhook", "create", "http://93.184.216.34/hook"])
        .expect(2, "", "A webhook URL must start with https://.\n");
    cli.run_fr(&["webhook", "create", "http://93.184.216.34/hook"])
        .expect(2, "", "L'URL d'un webhook doit commencer par https://.\n");
    cli.run(&["webhook", "create", "https://93.184.216.34/", "--events", "x.y"])
        .expect(
            2,
            "",
            "Unknown event x.y. Events: instance.started, step.answered, instance.ended, payment.confirmed, step.reopened, step.skipped, step.reassigned, step.closed.\n",
        );
    cli.run(&["webhook", "list"]).expect(0, "", "");
}

// --- instance list ---------------------------------------------------------------------------

#[tokio::test]
async fn instance_list_prints_a_page_and_the_command_for_the_next() {
    let cli = cli().await;
    for n in 0..5 {
        cli.run(&[
            "instance",
            "start",
            "contract_review",
            "--subject",
            &format!("Lease {n}"),
        ])
        .line();
    }
    cli.run(&["instance", "start", "order_payment", "--subject", "Order 9"])
        .line();
    let run = cli.run(&[
        "instance",
        "list",
        "--workflow",
        "contract_review",
        "--search",
        "LEASE",
        "--limit",
        "2",
    ]);
    assert_eq!(run.code, 0, "{run:#?}");
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(
        lines[0],
        "#\tstate\tworkflow\tstarted by\tlast change\tsubject"
    );
    assert_eq!(lines.len(), 3);
    assert!(
        lines[1].starts_with("5\tactive\tcontract_review\tcli\t"),
        "{}",
        lines[1]
    );
    assert!(lines[1].ends_with("\tLease 4"));
    assert!(lines[2].starts_with("4\t"));
    assert_eq!(
        run.stderr,
        "5 instances\nNext page: orchestra instance list --workflow contract_review --search LEASE --limit 2 --before 4\n"
    );
    let last = cli.run(&[
        "instance",
        "list",
        "--workflow",
        "contract_review",
        "--search",
        "LEASE",
        "--limit",
        "2",
        "--before",
        "2",
    ]);
    assert_eq!(last.stdout.lines().count(), 2, "{last:#?}");
    assert_eq!(last.stderr, "5 instances\n", "no next page");
    let french = cli.run_fr(&[
        "instance", "list", "--state", "active", "--search", "order 9",
    ]);
    assert_eq!(
        french.stdout.lines().next(),
        Some("#\tétat\tprocessus\tdémarrée par\tdernier changement\tsujet")
    );
    assert_eq!(french.stderr, "Une instance\n");
    cli.run(&["instance", "list", "--state", "lost"]).expect(
        2,
        "",
        "No state named lost: give active, complete, rejected or cancelled.\n",
    );
    let bad = cli.run(&["instance", "list", "--before", "x"]);
    assert_eq!(bad.code, 2, "{bad:#?}");
    let help = cli.run_fr(&["instance", "list", "--help"]);
    assert!(help.stdout.contains("Liste les instances"), "{help:#?}");
}

/// A definition kept as a file: created from it, printed back as saved, saved again from what
/// was printed (no new version), and a bad one refused line by line in the operator's language
/// with nothing saved.
#[tokio::test]
async fn workflows_are_created_saved_and_shown_from_files_and_standard_input() {
    let cli = cli().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("claim.txt");
    let claim = "form@employee: Expense claim | Amount* (number), Purpose (long)\n  \
                 fr: Note de frais | Montant, Objet\nreview@manager: Manager review | show 1\n";
    std::fs::write(&file, claim).unwrap();
    let path = file.to_str().unwrap();
    cli.run(&[
        "workflow",
        "create",
        "expense_claim",
        "--label",
        "Expense claim",
        "--file",
        path,
    ])
    .expect(0, "Workflow expense_claim created, version 1.\n", "");
    let shown = cli.run(&["workflow", "show", "expense_claim"]);
    assert_eq!(shown.code, 0, "{shown:#?}");
    assert_eq!(
        shown.stdout,
        "form@employee: Expense claim | Amount* (number), Purpose (long)\n  \
         fr: Note de frais | Montant, Objet\nreview@manager: Manager review | show 1\n"
    );
    // What `show` printed, saved back from standard input, is the same version.
    cli.run_with(
        &["workflow", "save", "expense_claim"],
        &[],
        Some(&shown.stdout),
    )
    .expect(
        0,
        "Workflow expense_claim saved: the definition is the newest version's, so no new \
             version.\n",
        "",
    );
    let changed = format!("{}review@finance: Finance review\n", shown.stdout);
    cli.run_with(&["workflow", "save", "expense_claim"], &[], Some(&changed))
        .expect(0, "Workflow expense_claim saved: version 2.\n", "");
    // Every wrong line, each naming its line and what it refuses; nothing saved.
    cli.run_with(
        &["workflow", "save", "expense_claim"],
        &[],
        Some("form: Claim | Receipt* (picture)\nreview Check\n"),
    )
    .expect(
        2,
        "",
        "Line 1: the field “Receipt” has the type “picture”, which is none; use text, long, \
         number, email, date, checkbox, url, choice, file.\nLine 2: put a colon after the kind, as in \"review: Check the order\".\n",
    );
    let list = cli.run(&["workflow", "list"]);
    assert!(
        list.stdout.contains("expense_claim\tExpense claim\t3\t2"),
        "{}",
        list.stdout
    );
    cli.run_fr(&[
        "workflow",
        "create",
        "expense_claim",
        "--label",
        "Note",
        "--file",
        path,
    ])
    .expect(
        2,
        "",
        "Un processus nommé expense_claim existe déjà. « orchestra workflow save \
             expense_claim » en enregistre une nouvelle version.\n",
    );
    cli.run(&["workflow", "create", "other", "--file", path])
        .expect(
            2,
            "",
            "A new workflow needs its label: --label \"Expense claim\".\n",
        );
    cli.run(&["workflow", "show", "nope"]).expect(
        2,
        "",
        "No workflow named nope. \"orchestra workflow list\" shows them.\n",
    );
}

/// `orchestra instance reassign` hands a participant to a new contact and says so; a contact for
/// another participant, a bad address or an unknown participant is exit 2 with the reason.
#[tokio::test]
async fn instance_reassign_hands_a_participant_over_with_exit_codes() {
    let cli = cli().await;
    cli.run(&["instance", "start", "contract_review"])
        .expect(0, "1\n", "");
    cli.run(&[
        "instance",
        "reassign",
        "1",
        "legal",
        "--contact",
        "finance=f@example.org",
    ])
    .expect(
        2,
        "",
        "Give the new contact as --contact legal=EMAIL (with --contact-name and \
             --contact-lang if you wish).\n",
    );
    let bad = cli.run(&[
        "instance",
        "reassign",
        "1",
        "legal",
        "--contact",
        "legal=nobody",
    ]);
    assert_eq!((bad.code, bad.stdout.as_str()), (2, ""), "{bad:#?}");
    cli.run(&[
        "instance",
        "reassign",
        "1",
        "legal",
        "--contact",
        "legal=lea@example.org",
        "--contact-name",
        "legal=Léa",
        "--contact-lang",
        "legal=fr",
    ])
    .expect(
        0,
        "Instance 1: legal handed to the new contact. Their old links no longer work; the new \
         contact is emailed when the step is theirs.\n",
        "",
    );
    let db = cli.db().await;
    let contact = store::mails::contact(&db, 1, "legal")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (contact.email.as_str(), contact.lang.as_str()),
        ("lea@example.org", "fr")
    );
    let history = store::instances::history(&db, 1).await.unwrap();
    assert_eq!(history.last().unwrap().event.as_str(), "reassigned");
    cli.run(&[
        "instance",
        "reassign",
        "9",
        "legal",
        "--contact",
        "legal=lea@example.org",
    ])
    .expect(2, "", "No instance 9.\n");
}
