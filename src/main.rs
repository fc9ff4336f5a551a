//! The `orchestra` binary: logging, then the command line.

use tracing_subscriber::EnvFilter;

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // The server logs its requests; the other commands only say what went wrong.
    let default = if args.first().map(String::as_str) == Some("serve") {
        "info"
    } else {
        "warn"
    };
    let filter =
        EnvFilter::try_from_env("ORCHESTRA_LOG").unwrap_or_else(|_| EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    std::process::exit(orchestra::cli::run(args).await);
}
