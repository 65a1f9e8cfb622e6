//! The `neural-dap` binary: command line, logging, then the server.

use clap::Parser;
use std::path::PathBuf;
use tracing_subscriber::EnvFilter;

/// Debug Adapter Protocol server for the neural Python debugger. Speaks DAP on
/// stdin/stdout unless --port is given.
#[derive(Parser)]
#[command(version, about)]
struct Args {
    /// Serve DAP over TCP on 127.0.0.1:PORT (0: any free port), one session per connection.
    #[arg(long)]
    port: Option<u16>,
    /// Write logs to this file instead of stderr.
    #[arg(long)]
    log: Option<PathBuf>,
    /// Log filter (tracing's syntax, e.g. `debug` or `neural_dap=trace`); also RUST_LOG.
    #[arg(long, default_value = "info")]
    log_level: String,
    /// Without a subcommand: serve DAP.
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Debug PROGRAM at a pdb-like terminal prompt (same engines and session as DAP).
    Cli(neural_dap::cli::CliArgs),
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    if let Some(Command::Cli(cli)) = args.command {
        return neural_dap::cli::main(cli);
    }
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(&args.log_level));
    // Logs never go to stdout: in stdio mode stdout carries the protocol.
    let logging = match &args.log {
        Some(path) => match std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
        {
            Ok(file) => {
                tracing_subscriber::fmt()
                    .with_env_filter(filter)
                    .with_ansi(false)
                    .with_writer(std::sync::Mutex::new(file))
                    .init();
                Ok(())
            }
            Err(e) => Err(format!("cannot open log file {}: {e}", path.display())),
        },
        None => {
            tracing_subscriber::fmt()
                .with_env_filter(filter)
                .with_writer(std::io::stderr)
                .init();
            Ok(())
        }
    };
    if let Err(message) = logging {
        eprintln!("neural-dap: {message}");
        return std::process::ExitCode::FAILURE;
    }
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("neural-dap: cannot start the async runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        match args.port {
            Some(port) => neural_dap::server::serve_tcp(port).await,
            None => {
                neural_dap::server::serve_stdio().await;
                Ok(())
            }
        }
    });
    // Blocking engine work left behind (a cancelled recording) must not keep us alive.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("neural-dap: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
