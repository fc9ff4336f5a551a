//! The `orchestra` binary: logging, then the command line.

use tracing_subscriber::EnvFilter;

#[tokio::main]
async fn main() {
    // Before any password is checked: argon2's memory is given back once a check ends.
    orchestra::domain::password::return_large_allocations_to_the_system();
    let args: Vec<String> = std::env::args().skip(1).collect();
    // The server logs its requests; the other commands only say what went wrong.
    let default = if args.first().map(String::as_str) == Some("serve") {
        "info"
    } else {
        "warn"
    };
    // A filter that does not parse stops the program, as the README says: an operator who
    // asked for logs should not run without them unawares.
    let filter = match std::env::var("ORCHESTRA_LOG") {
        Ok(value) => match EnvFilter::try_new(&value) {
            Ok(filter) => filter,
            Err(e) => {
                let lang = orchestra::i18n::Lang::from_env();
                let message = orchestra::i18n::Message::new("config-env-log")
                    .arg("value", value.clone())
                    .arg("error", e.to_string());
                eprintln!("{}", message.render(lang));
                std::process::exit(orchestra::cli::USAGE);
            }
        },
        Err(_) => EnvFilter::new(default),
    };
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    std::process::exit(orchestra::cli::run(args).await);
}
