//! `neural-model`: record runs, take actions on them, and (with the `neural` feature)
//! build data, train, evaluate and benchmark the model.
//!
//! Exit codes: 0 ok, 1 the program's own error is reported (uncaught exception, or it
//! did not terminate), 2 bad usage or input.

use clap::{Args, Parser, Subcommand};
use neural_model::{trace, Action, Exit, Limits, Outcome, Program, State, Trace};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "neural-model",
    version,
    about = "World model of Python program runs: trace, step, data, train, eval"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a program under the tracer and print its events.
    Trace {
        #[command(flatten)]
        run: RunArgs,
        /// One JSON object per event (and a last `exit` object).
        #[arg(long)]
        json: bool,
    },
    /// Print, as JSON, the state an action leads to from event N.
    Step {
        #[command(flatten)]
        run: RunArgs,
        /// step_into, step_over, step_return, breakpoint:L1,L2, continue, inv_step_into,
        /// inv_step_over, inv_step_call, inv_breakpoint:L1,L2
        #[arg(long)]
        action: Action,
        /// Index of the event to act from (0 = the first).
        #[arg(long, default_value_t = 0)]
        from: usize,
    },
}

#[derive(Args)]
struct RunArgs {
    /// The Python program.
    file: PathBuf,
    /// Trace this call of a function the program defines, e.g. 'f([1, 2])'.
    #[arg(long)]
    call: Option<String>,
    /// Events before the run counts as not terminating.
    #[arg(long, default_value_t = Limits::default().max_events)]
    max_events: usize,
    /// Seconds before the run counts as not terminating.
    #[arg(long, default_value_t = Limits::default().max_seconds)]
    max_seconds: f64,
    /// Nested calls before RecursionError.
    #[arg(long, default_value_t = Limits::default().max_depth)]
    max_depth: usize,
    /// Characters of one repr before it is cut.
    #[arg(long, default_value_t = Limits::default().max_repr)]
    max_repr: usize,
    /// Characters of stdout kept.
    #[arg(long, default_value_t = Limits::default().max_stdout)]
    max_stdout: usize,
}

impl RunArgs {
    fn record(&self) -> Result<Trace, String> {
        let limits = Limits {
            max_events: self.max_events,
            max_seconds: self.max_seconds,
            max_stdout: self.max_stdout,
            max_depth: self.max_depth,
            max_repr: self.max_repr,
        };
        let program = Program::load(&self.file, self.call.clone()).map_err(|e| e.to_string())?;
        trace(&program, &limits).map_err(|e| e.to_string())
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli.command) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

fn run(command: Command) -> Result<ExitCode, String> {
    match command {
        Command::Trace { run, json } => {
            let trace = run.record()?;
            print_trace(&trace, json);
            Ok(match trace.tree.exit() {
                Exit::Normal => ExitCode::SUCCESS,
                _ => ExitCode::from(1),
            })
        }
        Command::Step { run, action, from } => {
            let trace = run.record()?;
            if from >= trace.tree.len() {
                return Err(format!(
                    "--from {from} is past the last event ({} events were recorded)",
                    trace.tree.len()
                ));
            }
            let outcome: Outcome = trace.tree.outcome(from, &action);
            println!(
                "{}",
                serde_json::to_string_pretty(&outcome).expect("outcomes serialise")
            );
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn print_trace(trace: &Trace, json: bool) {
    let tree = &trace.tree;
    for (index, state) in tree.states().iter().enumerate() {
        if json {
            println!(
                "{}",
                serde_json::to_string(state).expect("states serialise")
            );
        } else {
            print!("{}", describe(index, state));
        }
    }
    let exit = tree.exit();
    if json {
        let mut record = serde_json::to_value(exit).expect("exits serialise");
        record["event"] = "exit".into();
        record["stdout"] = tree.trailing_stdout().into();
        println!("{record}");
    } else {
        print!("{}", tree.trailing_stdout());
        println!("-- {} events; the program {exit}", tree.len());
    }
    if !trace.stderr.is_empty() {
        eprint!("{}", trace.stderr);
    }
}

/// One event as a line for people: program output first, then the event, indented by depth.
fn describe(index: usize, state: &State) -> String {
    let indent = "  ".repeat(state.depth as usize);
    let vars: Vec<String> = state
        .locals
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let value = state
        .value
        .as_ref()
        .map(|v| format!(" -> {v}"))
        .unwrap_or_default();
    format!(
        "{}#{index:<5} {indent}{:<9} {}:{:<4} {}{value}   [{}]\n",
        state.stdout,
        state.event.name(),
        state.function,
        state.line,
        state.source.trim(),
        vars.join(", ")
    )
}
