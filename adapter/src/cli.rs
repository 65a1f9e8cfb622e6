//! `neural-dap cli`: a pdb-like terminal debugger over the same [`Session`] the DAP
//! server drives (same engines, same history, same views), so what the terminal
//! shows is what an editor shows.
//!
//! Commands come one per line from stdin, or all at once from `--script "b 5; c"`,
//! which echoes each after the prompt so the output reads like a session. A command
//! that fails prints one `***` line and the prompt goes on.

use crate::engine::{self, Engine, EngineConfig, EngineKind, ExceptionStops};
use crate::session::{Move, Session, SessionError, Step, Stop, StopReason};
use crate::view::{probability_text, View};
use neural_model::program::{executable_lines, place_breakpoint};
use neural_model::{Event, Program, State};
use std::collections::BTreeSet;
use std::io::{self, BufRead, Write};
use std::path::PathBuf;
use std::sync::Arc;

/// The prompt, also echoed before each command of a script.
pub const PROMPT: &str = "(ndb) ";

/// `neural-dap cli PROGRAM [options]`.
#[derive(clap::Args, Debug, Clone)]
pub struct CliArgs {
    /// The Python program to debug.
    pub program: PathBuf,
    /// Debug one call instead of the whole script, e.g. `--call "fib(5)"`.
    #[arg(long)]
    pub call: Option<String>,
    /// `neural` (the transformer predicts each state) or `trace` (the program runs once
    /// under real Python and is replayed exactly).
    #[arg(long, default_value = "neural")]
    pub engine: EngineKind,
    /// Checkpoint directory for the neural engine (default: $NEURAL_MODEL, else the
    /// shipped model/weights/default/).
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Neural engine: check every prediction against real Python and show differences.
    #[arg(long)]
    pub verify: bool,
    /// Neural engine: per step, try up to this many other decodes where the model was
    /// unsure and show the likeliest (default: the engine's).
    #[arg(long)]
    pub search: Option<usize>,
    /// Run these `;`-separated commands without a prompt, then exit, e.g. "b 5; c; p x".
    #[arg(long)]
    pub script: Option<String>,
    /// Arguments for the program (`sys.argv[1:]`) under real Python (trace engine,
    /// --verify), after `--`: `neural-dap cli prog.py -- -v input.txt`.
    #[arg(last = true)]
    pub args: Vec<String>,
}

/// Run the terminal debugger on stdin/stdout; the process's exit code.
pub fn main(args: CliArgs) -> std::process::ExitCode {
    let stdin = io::stdin();
    let stdout = io::stdout();
    let mut out = stdout.lock();
    match run(&args, stdin.lock(), &mut out) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(message) => {
            let _ = out.flush();
            eprintln!("neural-dap cli: {message}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// Start the program and run the commands (the script's, else `input`'s lines until
/// `q` or end of input). `Err` only when the program could not be started.
pub fn run(args: &CliArgs, input: impl BufRead, out: &mut impl Write) -> Result<(), String> {
    let mut program = Program::load(&args.program, args.call.clone()).map_err(|e| e.to_string())?;
    program.args = args.args.clone();
    if args.verify && args.engine == EngineKind::Trace {
        eprintln!(
            "neural-dap cli: --verify applies to the neural engine only; the trace engine is exact"
        );
    }
    let config = EngineConfig {
        kind: args.engine,
        model: args.model.clone(),
        verify: args.verify,
        search: args.search,
    };
    let engine = engine::open(&config, &program).map_err(|e| match args.engine {
        EngineKind::Neural => format!(
            "{e}\n(at the terminal: --engine trace debugs under real Python; --model DIR names a checkpoint)"
        ),
        EngineKind::Trace => e,
    })?;
    for note in engine.notes() {
        let _ = writeln!(out, "--- {note}");
    }
    let shown = args.program.display().to_string();
    let mut debugger = Debugger::new(engine, program, shown)?;
    // Output errors (a closed pipe) end the session quietly, as for any filter.
    let _ = drive(&mut debugger, args.script.as_deref(), input, out);
    Ok(())
}

fn drive(
    debugger: &mut Debugger,
    script: Option<&str>,
    input: impl BufRead,
    out: &mut impl Write,
) -> io::Result<()> {
    debugger.show_current(StopReason::Entry, "", out)?;
    if let Some(script) = script {
        for command in script.split(';').map(str::trim).filter(|c| !c.is_empty()) {
            writeln!(out, "{PROMPT}{command}")?;
            if debugger.execute(command, out)? == Flow::Quit {
                break;
            }
        }
        return out.flush();
    }
    let mut last = String::new();
    let mut lines = input.lines();
    loop {
        write!(out, "{PROMPT}")?;
        out.flush()?;
        let Some(line) = lines.next() else {
            writeln!(out)?;
            return out.flush();
        };
        let line = line?;
        // As in pdb, an empty line repeats the last command.
        let command = if line.trim().is_empty() {
            last.clone()
        } else {
            line.trim().to_string()
        };
        if command.is_empty() {
            continue;
        }
        last = command.clone();
        if debugger.execute(&command, out)? == Flow::Quit {
            return out.flush();
        }
    }
}

/// Whether the prompt goes on after a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    Go,
    Quit,
}

/// One parsed command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    Move(Step),
    Break(Option<String>),
    Clear(Option<String>),
    Print(String),
    List,
    Where,
    Set(String, String),
    Locals,
    /// Which inputs give this state: up to N candidate calls.
    Inputs(usize),
    Restart,
    Help,
    Quit,
}

impl Command {
    /// Read a command line; the error is the message for the user.
    pub fn parse(line: &str) -> Result<Command, String> {
        let line = line.trim();
        let (word, rest) = match line.split_once(char::is_whitespace) {
            Some((word, rest)) => (word, rest.trim()),
            None => (line, ""),
        };
        let arg = || Some(rest.to_string()).filter(|r| !r.is_empty());
        let bare = |command: Command| {
            if rest.is_empty() {
                Ok(command)
            } else {
                Err(format!("{word} takes no argument (got {rest:?})"))
            }
        };
        match word {
            "s" | "step" => bare(Command::Move(Step::Into)),
            "n" | "next" => bare(Command::Move(Step::Over)),
            "r" | "return" => bare(Command::Move(Step::Out)),
            "c" | "cont" | "continue" => bare(Command::Move(Step::Continue)),
            "back" | "stepback" => bare(Command::Move(Step::Back)),
            "rc" | "rcontinue" => bare(Command::Move(Step::ReverseContinue)),
            "b" | "break" => Ok(Command::Break(arg())),
            "cl" | "clear" => Ok(Command::Clear(arg())),
            "p" | "print" => arg()
                .map(Command::Print)
                .ok_or_else(|| "p needs a name or path, e.g. p x or p xs[0]".to_string()),
            "l" | "list" => bare(Command::List),
            "w" | "where" | "bt" => bare(Command::Where),
            "locals" => bare(Command::Locals),
            "set" => match rest.split_once(char::is_whitespace) {
                Some((name, value)) if !value.trim().is_empty() => {
                    Ok(Command::Set(name.to_string(), value.trim().to_string()))
                }
                _ => Err("set needs a name and a Python value, e.g. set x 5".into()),
            },
            "inputs" => crate::inputs::written_count(rest).map(Command::Inputs),
            "restart" => bare(Command::Restart),
            "h" | "help" | "?" => Ok(Command::Help),
            "q" | "quit" | "exit" => bare(Command::Quit),
            other => Err(format!("unknown command {other:?}: type h for help")),
        }
    }
}

const HELP: &str = "\
s            step into          n        step over (next line here)
r            return: step out to the caller
c            continue to the next breakpoint or the end
back         step back          rc       reverse continue (previous breakpoint, else the start)
b [LINE]     set a breakpoint (b alone lists them)      cl [LINE]  clear one (cl alone: all)
p EXPR       print a name or path: x, p.x, xs[0], d['k']
locals       all local variables                        set NAME VALUE  change a variable
l            source around the current line             w        the stack, innermost last
inputs [N]   which inputs give this? N candidate calls of this frame's function,
             each run under Python (where there is one) to see if it gets here
restart      start again from the entry (breakpoints kept)
q            quit (also end of input)";

/// The terminal debugger: a session plus what is needed to show it.
pub struct Debugger {
    engine: Arc<dyn Engine>,
    session: Session,
    /// The program's path as the user gave it, for `> path(line)function()`.
    shown: String,
    executable: Vec<u32>,
}

impl Debugger {
    /// Start at the engine's entry state.
    pub fn new(engine: Arc<dyn Engine>, program: Program, shown: String) -> Result<Self, String> {
        let executable = executable_lines(&program.source);
        let mut session = Session::new(engine.clone(), program).map_err(|e| e.to_string())?;
        session.set_exception_stops(POST_MORTEM);
        Ok(Debugger {
            engine,
            session,
            shown,
            executable,
        })
    }

    pub fn session(&self) -> &Session {
        &self.session
    }

    /// Run one command line, writing what it shows.
    pub fn execute(&mut self, line: &str, out: &mut impl Write) -> io::Result<Flow> {
        let command = match Command::parse(line) {
            Ok(command) => command,
            Err(message) => {
                writeln!(out, "*** {message}")?;
                return Ok(Flow::Go);
            }
        };
        match command {
            Command::Move(step) => self.move_by(step, out)?,
            Command::Break(line) => self.set_break(line.as_deref(), out)?,
            Command::Clear(line) => self.clear(line.as_deref(), out)?,
            Command::Print(expression) => {
                let mut view = View::new(self.state().clone());
                match view.evaluate(&expression) {
                    Ok(value) => writeln!(out, "{}", value.value)?,
                    Err(e) => writeln!(out, "*** {}", one_line(&e.to_string()))?,
                }
            }
            Command::List => self.list(out)?,
            Command::Where => self.where_(out)?,
            Command::Locals => self.locals(out)?,
            Command::Set(name, value) => match self.session.set_variable(&name, &value) {
                Ok(stop) => {
                    let shown = stop.state().locals.get(&name).cloned().unwrap_or(value);
                    writeln!(out, "{name} = {shown}")?;
                }
                Err(e) => ended_or(e, out)?,
            },
            Command::Restart => {
                let breakpoints = self.session.breakpoints().clone();
                let program = self.session.program().clone();
                match Session::new(self.engine.clone(), program) {
                    Ok(session) => {
                        self.session = session;
                        self.session.set_exception_stops(POST_MORTEM);
                        self.session.set_breakpoints(breakpoints);
                        self.show_current(StopReason::Entry, "", out)?;
                    }
                    Err(e) => writeln!(out, "*** cannot restart: {e}")?,
                }
            }
            Command::Inputs(count) => {
                match crate::inputs::which_inputs(&self.session, count, true) {
                    Ok(found) => write!(out, "{}", crate::inputs::render(&found))?,
                    Err(e) => writeln!(out, "*** {}", one_line(&e))?,
                }
            }
            Command::Help => writeln!(out, "{HELP}")?,
            Command::Quit => return Ok(Flow::Quit),
        }
        Ok(Flow::Go)
    }

    fn state(&self) -> &State {
        self.session.current().state()
    }

    fn move_by(&mut self, step: Step, out: &mut impl Write) -> io::Result<()> {
        match self.session.step(step) {
            Ok(Move::Stopped { reason, stdout, .. }) => {
                self.show_current(reason, &stdout, out)?;
                for note in self.session.take_notes() {
                    writeln!(out, "*** {note}")?;
                }
                Ok(())
            }
            Ok(Move::Exited { exit, stdout }) => {
                write_program_output(&stdout, out)?;
                writeln!(out, "--- The program {exit}.")?;
                writeln!(
                    out,
                    "--- The run is over: restart to debug it again, q to quit."
                )
            }
            Err(e) => ended_or(e, out),
        }
    }

    /// Program output, then where the program stopped and why, pdb-style.
    pub fn show_current(
        &self,
        reason: StopReason,
        stdout: &str,
        out: &mut impl Write,
    ) -> io::Result<()> {
        write_program_output(stdout, out)?;
        let stop = self.session.current();
        let state = stop.state();
        match state.event {
            Event::Call => writeln!(out, "--Call--")?,
            Event::Return => writeln!(out, "--Return--")?,
            Event::Exception => writeln!(
                out,
                "--Exception-- {}",
                state.value.as_deref().unwrap_or("")
            )?,
            Event::Line => {}
        }
        let returned = match (state.event, &state.value) {
            (Event::Return, Some(value)) => format!("->{value}"),
            _ => String::new(),
        };
        writeln!(
            out,
            "> {}({}){}(){returned}  [{}]",
            self.shown,
            state.line,
            state.function,
            describe(reason, stop)
        )?;
        writeln!(out, "-> {}", self.source_line(state.line))
    }

    fn source_line(&self, line: u32) -> &str {
        self.session.program().line_text(line).trim()
    }

    fn set_break(&mut self, line: Option<&str>, out: &mut impl Write) -> io::Result<()> {
        let Some(line) = line else {
            let lines = self.session.breakpoints();
            return if lines.is_empty() {
                writeln!(out, "No breakpoints.")
            } else {
                writeln!(out, "Breakpoints at lines {}", join(lines))
            };
        };
        let Some(asked) = line_number(line) else {
            return writeln!(out, "*** b needs a line number, e.g. b 12 (got {line:?})");
        };
        let Some(at) = place_breakpoint(&self.executable, asked) else {
            return writeln!(
                out,
                "*** no code on or after line {asked} of {}: no breakpoint set",
                self.shown
            );
        };
        let mut lines = self.session.breakpoints().clone();
        lines.insert(at);
        self.session.set_breakpoints(lines);
        if at == asked {
            writeln!(out, "Breakpoint at {}:{at}", self.shown)
        } else {
            writeln!(
                out,
                "Breakpoint at {}:{at} (line {asked} has no code; moved to the next line that has)",
                self.shown
            )
        }
    }

    fn clear(&mut self, line: Option<&str>, out: &mut impl Write) -> io::Result<()> {
        let mut lines = self.session.breakpoints().clone();
        let Some(line) = line else {
            let count = lines.len();
            self.session.set_breakpoints(BTreeSet::new());
            return writeln!(out, "Cleared {count} breakpoint(s).");
        };
        let Some(asked) = line_number(line) else {
            return writeln!(out, "*** cl needs a line number, e.g. cl 12 (got {line:?})");
        };
        if !lines.remove(&asked) {
            return writeln!(out, "*** no breakpoint at line {asked} (b lists them)");
        }
        self.session.set_breakpoints(lines);
        writeln!(out, "Cleared breakpoint at {}:{asked}", self.shown)
    }

    /// Eleven lines around the current one: `B` marks breakpoints, `->` the line.
    fn list(&self, out: &mut impl Write) -> io::Result<()> {
        let current = self.state().line;
        let total = self.session.program().source.lines().count() as u32;
        let first = current.saturating_sub(5).max(1);
        let last = (first + 10).min(total);
        for line in first..=last {
            let mark = if self.session.breakpoints().contains(&line) {
                'B'
            } else {
                ' '
            };
            let arrow = if line == current { "->" } else { "  " };
            let text = self.session.program().line_text(line);
            writeln!(out, "{line:>3} {mark}{arrow} {text}")?;
        }
        Ok(())
    }

    /// The stack, outermost first and innermost last as in pdb.
    fn where_(&self, out: &mut impl Write) -> io::Result<()> {
        let state = self.state();
        for frame in &state.stack {
            writeln!(out, "  {}({}){}()", self.shown, frame.line, frame.function)?;
            writeln!(out, "-> {}", self.source_line(frame.line))?;
        }
        writeln!(out, "> {}({}){}()", self.shown, state.line, state.function)?;
        writeln!(out, "-> {}", self.source_line(state.line))
    }

    fn locals(&self, out: &mut impl Write) -> io::Result<()> {
        let stop = self.session.current();
        let state = stop.state();
        if state.locals.is_empty() {
            writeln!(out, "(no locals)")?;
        }
        for (name, value) in &state.locals {
            // A model's confidence in each value, where it gives one.
            match stop.confidence.as_ref().and_then(|c| c.get(name)) {
                Some(&p) => writeln!(out, "{name} = {value}  (p={})", probability_text(p))?,
                None => writeln!(out, "{name} = {value}")?,
            }
        }
        match (state.event, &state.value) {
            (Event::Return, Some(value)) => writeln!(out, "(return) = {value}"),
            (Event::Exception, Some(value)) => writeln!(out, "(exception) = {value}"),
            _ => Ok(()),
        }
    }
}

/// Like pdb, `c` stops where an uncaught exception is raised, so that it can be
/// inspected before the program ends.
const POST_MORTEM: ExceptionStops = ExceptionStops {
    raised: false,
    uncaught: true,
};

/// A session error as one line; the end of the run gets the CLI's own advice.
fn ended_or(error: SessionError, out: &mut impl Write) -> io::Result<()> {
    match error {
        SessionError::Ended(exit) => writeln!(
            out,
            "*** the program has ended ({exit}): restart to debug it again, q to quit"
        ),
        other => writeln!(out, "*** {}", one_line(&other.to_string())),
    }
}

/// Why the program stopped, and for a model how sure it was.
fn describe(reason: StopReason, stop: &Stop) -> String {
    let mut text = match reason {
        StopReason::Entry => "entry",
        StopReason::Step => "step",
        StopReason::Breakpoint => "breakpoint",
        StopReason::Exception => "exception",
    }
    .to_string();
    if stop.guess.is_some() {
        text.push_str(", a guess: the model's prediction ran away");
    } else if let Some(p) = stop.probability {
        // A walk's probability is the product of its steps', often tiny: never "0.000".
        text.push_str(&format!(", p={}", probability_text(p)));
    }
    match &stop.check {
        Some(notes) if notes.is_empty() => text.push_str(", matches Python"),
        Some(notes) => text.push_str(&format!(", differs from Python: {}", notes.join("; "))),
        None => {}
    }
    text
}

/// An error message on one line (a malformed prediction may quote several).
fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// What the program printed, ending with a newline so the stop starts a line.
fn write_program_output(stdout: &str, out: &mut impl Write) -> io::Result<()> {
    out.write_all(stdout.as_bytes())?;
    if !stdout.is_empty() && !stdout.ends_with('\n') {
        writeln!(out)?;
    }
    Ok(())
}

fn line_number(text: &str) -> Option<u32> {
    text.trim().parse().ok().filter(|&n| n > 0)
}

fn join(lines: &BTreeSet<u32>) -> String {
    lines
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::trace::TraceEngine;
    use indexmap::IndexMap;
    use neural_model::{Exit, Frame, StateTree, Trace};

    fn state(event: Event, line: u32, stack: &[(&str, u32)], x: &str) -> State {
        State {
            event,
            line,
            source: String::new(),
            function: if stack.is_empty() { "<module>" } else { "f" }.into(),
            depth: stack.len() as u32,
            stack: stack
                .iter()
                .map(|(function, line)| Frame {
                    function: function.to_string(),
                    line: *line,
                })
                .collect(),
            locals: [("x".to_string(), x.to_string())].into_iter().collect(),
            globals: IndexMap::new(),
            value: (event == Event::Return).then(|| x.to_string()),
            stdout: String::new(),
        }
    }

    /// `x = f(1)` calling `def f(x): return x + 1`, recorded by hand (no Python).
    fn debugger() -> Debugger {
        let source = "def f(x):\n    return x + 1\n\n\nx = f(1)\nprint(x)\n";
        let module = [("<module>", 5)];
        let mut printed = state(Event::Line, 6, &[], "2");
        printed.stdout = String::new();
        let states = vec![
            state(Event::Line, 1, &[], "0"),
            state(Event::Line, 5, &[], "0"),
            state(Event::Call, 1, &module, "1"),
            state(Event::Line, 2, &module, "1"),
            state(Event::Return, 2, &module, "2"),
            printed,
        ];
        let program = Program {
            path: "p.py".into(),
            source: source.into(),
            call: None,
            ..Program::default()
        };
        let tree = StateTree::new(states, Exit::Normal, "2\n".into());
        let trace = Trace {
            program: program.clone(),
            tree,
            stderr: String::new(),
        };
        Debugger::new(
            Arc::new(TraceEngine::from_trace(trace)),
            program,
            "p.py".into(),
        )
        .unwrap()
    }

    fn run(debugger: &mut Debugger, commands: &[&str]) -> String {
        let mut out = Vec::new();
        for command in commands {
            debugger.execute(command, &mut out).unwrap();
        }
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn parses_commands_and_their_arguments() {
        assert_eq!(Command::parse("n"), Ok(Command::Move(Step::Over)));
        assert_eq!(
            Command::parse(" rc "),
            Ok(Command::Move(Step::ReverseContinue))
        );
        assert_eq!(Command::parse("b"), Ok(Command::Break(None)));
        assert_eq!(
            Command::parse("b 12"),
            Ok(Command::Break(Some("12".into())))
        );
        assert_eq!(
            Command::parse("set xs [1, 2]"),
            Ok(Command::Set("xs".into(), "[1, 2]".into()))
        );
        assert_eq!(
            Command::parse("p d['k']"),
            Ok(Command::Print("d['k']".into()))
        );
        assert!(Command::parse("frobnicate")
            .unwrap_err()
            .contains("type h for help"));
        assert!(Command::parse("n 3")
            .unwrap_err()
            .contains("takes no argument"));
        assert!(Command::parse("set x").unwrap_err().contains("set x 5"));
        assert!(Command::parse("p").is_err());
        assert_eq!(Command::parse("inputs"), Ok(Command::Inputs(3)));
        assert_eq!(Command::parse("inputs 5"), Ok(Command::Inputs(5)));
        assert!(Command::parse("inputs 0").unwrap_err().contains("1 to 10"));
    }

    #[test]
    fn steps_show_where_the_program_stopped() {
        let mut d = debugger();
        let text = run(&mut d, &["n", "s", "s"]);
        assert_eq!(
            text,
            "> p.py(5)<module>()  [step]\n-> x = f(1)\n\
             --Call--\n> p.py(1)f()  [step]\n-> def f(x):\n\
             > p.py(2)f()  [step]\n-> return x + 1\n"
        );
        assert_eq!(
            run(&mut d, &["w"]),
            "  p.py(5)<module>()\n-> x = f(1)\n> p.py(2)f()\n-> return x + 1\n"
        );
        assert_eq!(
            run(&mut d, &["s"]),
            "--Return--\n> p.py(2)f()->2  [step]\n-> return x + 1\n"
        );
    }

    #[test]
    fn breakpoints_move_to_code_and_list_marks_them() {
        let mut d = debugger();
        assert_eq!(
            run(&mut d, &["b 3"]),
            "Breakpoint at p.py:5 (line 3 has no code; moved to the next line that has)\n"
        );
        assert_eq!(
            run(&mut d, &["b 99"]),
            "*** no code on or after line 99 of p.py: no breakpoint set\n"
        );
        assert_eq!(run(&mut d, &["b"]), "Breakpoints at lines 5\n");
        let listing = run(&mut d, &["l"]);
        assert!(listing.starts_with("  1  -> def f(x):\n"), "{listing}");
        assert!(listing.contains("  5 B   x = f(1)\n"), "{listing}");
        assert_eq!(
            run(&mut d, &["cl 4"]),
            "*** no breakpoint at line 4 (b lists them)\n"
        );
        assert_eq!(
            run(&mut d, &["cl 5", "b"]),
            "Cleared breakpoint at p.py:5\nNo breakpoints.\n"
        );
    }

    #[test]
    fn the_end_is_reported_and_moves_after_it_are_refused_until_restart() {
        let mut d = debugger();
        let text = run(&mut d, &["c"]);
        assert_eq!(
            text,
            "2\n--- The program exited normally.\n--- The run is over: restart to debug it again, q to quit.\n"
        );
        assert!(run(&mut d, &["back"]).starts_with("*** the program has ended (exited normally)"));
        assert_eq!(
            run(&mut d, &["restart"]),
            "> p.py(1)<module>()  [entry]\n-> def f(x):\n"
        );
        assert_eq!(run(&mut d, &["p x"]), "0\n");
    }

    #[test]
    fn a_model_stop_shows_its_probability_and_verification() {
        let mut d = debugger();
        let mut stop = d.session().current().clone();
        assert_eq!(describe(StopReason::Step, &stop), "step");
        stop.probability = Some(0.97312);
        stop.check = Some(Vec::new());
        assert_eq!(
            describe(StopReason::Breakpoint, &stop),
            "breakpoint, p=0.97, matches Python"
        );
        stop.check = Some(vec!["x is 3, Python has 2".into()]);
        assert_eq!(
            describe(StopReason::Step, &stop),
            "step, p=0.97, differs from Python: x is 3, Python has 2"
        );
        stop.probability = Some(0.00031);
        stop.check = None;
        assert_eq!(
            describe(StopReason::Breakpoint, &stop),
            "breakpoint, p=3.1e-4"
        );
        assert_eq!(run(&mut d, &["locals"]), "x = 0\n");
        assert_eq!(one_line("bad\n  prediction\n"), "bad prediction");
    }

    /// A stand-in for a model: each step goes one line down with x + 1, probability
    /// 0.9 and confidence 0.8 in x; edits are accepted. No weights needed.
    struct Guessing;

    impl Engine for Guessing {
        fn name(&self) -> &str {
            "guessing"
        }
        fn entry(&self) -> Result<crate::engine::Position, crate::engine::EngineError> {
            let state = state(Event::Line, 1, &[], "0");
            Ok(crate::engine::Position { state, key: 0 })
        }
        fn predict(
            &self,
            from: &crate::engine::Position,
            _action: &neural_model::Action,
        ) -> Result<crate::engine::Prediction, crate::engine::EngineError> {
            let x: i64 = from.state.locals["x"]
                .parse()
                .map_err(|_| crate::engine::EngineError::Malformed("x is\nnot a number".into()))?;
            let state = state(Event::Line, from.state.line + 1, &[], &(x + 1).to_string());
            Ok(crate::engine::Prediction {
                outcome: neural_model::Outcome::State { state },
                key: from.key + 1,
                probability: Some(0.9),
                confidence: Some([("x".to_string(), 0.8)].into_iter().collect()),
                check: None,
                guess: None,
            })
        }
        fn edit(
            &self,
            at: &crate::engine::Position,
            name: &str,
            value: &str,
        ) -> Result<crate::engine::Position, crate::engine::EngineError> {
            let mut edited = at.clone();
            edited.state.locals.insert(name.into(), value.into());
            edited.key += 100;
            Ok(edited)
        }
    }

    #[test]
    fn a_model_engine_shows_probabilities_accepts_edits_and_survives_bad_predictions() {
        let program = Program {
            path: "p.py".into(),
            source: "x = 0\nx += 1\nx += 1\nx += 1\n".into(),
            call: None,
            ..Program::default()
        };
        let mut d = Debugger::new(Arc::new(Guessing), program, "p.py".into()).unwrap();
        assert_eq!(
            run(&mut d, &["n", "locals"]),
            "> p.py(2)<module>()  [step, p=0.90]\n-> x += 1\nx = 1  (p=0.80)\n"
        );
        assert_eq!(
            run(&mut d, &["set x 41", "n", "p x"]),
            "x = 41\n> p.py(3)<module>()  [step, p=0.90]\n-> x += 1\n42\n"
        );
        assert_eq!(
            run(&mut d, &["set x 'a'", "n", "p x"]),
            "x = 'a'\n*** the engine's prediction could not be used: x is not a number\n'a'\n"
        );
    }

    #[test]
    fn errors_are_one_line_and_the_session_goes_on() {
        let mut d = debugger();
        assert_eq!(run(&mut d, &["p nope"]), "*** nope is not defined here\n");
        let refused = run(&mut d, &["set x 3"]);
        assert!(
            refused.starts_with("*** cannot set x: the trace engine"),
            "{refused}"
        );
        assert_eq!(refused.lines().count(), 1);
        assert_eq!(
            run(&mut d, &["n", "p x"]),
            "> p.py(5)<module>()  [step]\n-> x = f(1)\n0\n"
        );
    }
}
