//! Record a program run: `tracer.py` under the system `python3`, in a child process
//! that is always killed and reaped, its JSON-lines events turned into a [`StateTree`].

use crate::state::{Event, Exit, Frame, State, Vars};
use crate::tree::StateTree;
use serde::Deserialize;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;
use wait_timeout::ChildExt;

const TRACER: &str = include_str!("tracer.py");

/// Budgets for one run. A run over the time or event budget ends as [`Exit::Never`].
#[derive(Clone, Debug, PartialEq)]
pub struct Limits {
    pub max_events: usize,
    pub max_seconds: f64,
    /// Characters of stdout kept in all; the rest is dropped with a marker.
    pub max_stdout: usize,
    /// Nested calls of traced functions before `RecursionError`.
    pub max_depth: usize,
    /// Characters of one `repr` before it is cut (marked with `…`).
    pub max_repr: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_events: 200_000,
            max_seconds: 10.0,
            max_stdout: 1_000_000,
            max_depth: 1000,
            max_repr: 200,
        }
    }
}

/// What to run: a script, or a call of a function it defines.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Program {
    pub path: PathBuf,
    /// The program's text (checked to be UTF-8).
    pub source: String,
    /// A call expression such as `f([1, 2])`: the module's definitions run untraced,
    /// then this call is traced (its frame is the root).
    pub call: Option<String>,
    /// Command-line arguments under real Python (`sys.argv[1:]`).
    pub args: Vec<String>,
    /// The working directory under real Python (`None`: the debugger's own).
    pub cwd: Option<PathBuf>,
}

impl Program {
    /// Read a program from disk, failing clearly on a missing or non-UTF-8 file.
    pub fn load(path: &Path, call: Option<String>) -> Result<Self, TraceError> {
        let bytes = std::fs::read(path).map_err(|e| TraceError::Unreadable {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
        let source = String::from_utf8(bytes).map_err(|e| TraceError::NotUtf8 {
            path: path.to_path_buf(),
            offset: e.utf8_error().valid_up_to(),
        })?;
        Ok(Program {
            path: path.to_path_buf(),
            source,
            call,
            ..Program::default()
        })
    }

    /// The text of a 1-based line ("" past the end).
    pub fn line_text(&self, line: u32) -> &str {
        let index = (line as usize).wrapping_sub(1);
        self.source.lines().nth(index).unwrap_or("").trim_end()
    }
}

/// A recorded run.
#[derive(Clone, Debug)]
pub struct Trace {
    pub program: Program,
    pub tree: StateTree,
    /// What the program wrote to stderr (also Python's own warnings).
    pub stderr: String,
}

/// Why a program could not be traced at all. (A program that raises or never ends
/// is traced fine: that is its [`Exit`].)
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("cannot read {path}: {reason}")]
    Unreadable { path: PathBuf, reason: String },
    #[error("{path} is not UTF-8 text (invalid byte at offset {offset}); save it as UTF-8")]
    NotUtf8 { path: PathBuf, offset: usize },
    #[error("cannot run {python:?}: {reason}. Install Python 3 or set NEURAL_PYTHON to its path")]
    NoPython { python: String, reason: String },
    #[error("{kind} in the program: {message}")]
    Program {
        kind: String,
        message: String,
        line: Option<u32>,
    },
    #[error("the tracer failed: {0}")]
    Tracer(String),
}

/// One JSON line written by `tracer.py`.
#[derive(Deserialize)]
#[serde(tag = "event", rename_all = "lowercase")]
enum Record {
    Call(EventRecord),
    Line(EventRecord),
    Return(EventRecord),
    Exception(EventRecord),
    Exit {
        kind: String,
        #[serde(default)]
        r#type: String,
        #[serde(default)]
        message: String,
        #[serde(default)]
        reason: String,
        #[serde(default)]
        stdout: String,
    },
    Fatal {
        r#type: String,
        message: String,
        line: Option<u32>,
    },
}

#[derive(Deserialize)]
struct EventRecord {
    line: u32,
    function: String,
    depth: u32,
    locals: Vars,
    #[serde(default)]
    globals: Vars,
    value: Option<String>,
    #[serde(default)]
    stdout: String,
}

/// The Python to run: `$NEURAL_PYTHON`, else `python3`.
pub fn python() -> String {
    std::env::var("NEURAL_PYTHON").unwrap_or_else(|_| "python3".to_string())
}

/// Run `program` under the tracer and record its state tree.
pub fn trace(program: &Program, limits: &Limits) -> Result<Trace, TraceError> {
    let args = serde_json::json!({
        "path": program.path.to_string_lossy(),
        "call": program.call,
        "args": program.args,
        "cwd": program.cwd.as_ref().map(|c| c.to_string_lossy()),
        "max_events": limits.max_events,
        "max_seconds": limits.max_seconds,
        "max_stdout": limits.max_stdout,
        "max_depth": limits.max_depth,
        "max_repr": limits.max_repr,
    });
    let python = python();
    let mut child = Command::new(&python)
        .args(["-I", "-S", "-c", TRACER, &args.to_string()])
        .env("PYTHONHASHSEED", "0") // stable set and dict-of-str orders
        .env("PYTHONIOENCODING", "utf-8")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| TraceError::NoPython {
            python: python.clone(),
            reason: e.to_string(),
        })?;

    let stdout = child.stdout.take().expect("stdout is piped");
    let stderr = child.stderr.take().expect("stderr is piped");
    let reader = std::thread::spawn(move || {
        BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            .collect::<Vec<String>>()
    });
    let err_reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.take(1 << 20).read_to_string(&mut text);
        text
    });
    // The tracer keeps its own clock; this one is the backstop for a program stuck
    // where no event fires (a long sleep, a C loop).
    let grace = Duration::from_secs_f64(limits.max_seconds.max(0.0) + 2.0);
    let timed_out = match child.wait_timeout(grace) {
        Ok(Some(_)) => false,
        Ok(None) | Err(_) => true,
    };
    if timed_out {
        let _ = child.kill();
    }
    let _ = child.wait();
    let lines = reader
        .join()
        .map_err(|_| TraceError::Tracer("reader thread panicked".into()))?;
    let stderr = err_reader.join().unwrap_or_default();
    let (tree, stderr) = build(program, &lines, timed_out, limits, stderr)?;
    Ok(Trace {
        program: program.clone(),
        tree,
        stderr,
    })
}

fn build(
    program: &Program,
    lines: &[String],
    timed_out: bool,
    limits: &Limits,
    stderr: String,
) -> Result<(StateTree, String), TraceError> {
    let mut states = Vec::new();
    let mut stack: Vec<Frame> = Vec::new();
    let mut exit = None;
    let mut trailing = String::new();
    for line in lines {
        let record: Record = serde_json::from_str(line)
            .map_err(|e| TraceError::Tracer(format!("bad event line ({e}): {line:.200}")))?;
        let (event, record) = match record {
            Record::Call(r) => (Event::Call, r),
            Record::Line(r) => (Event::Line, r),
            Record::Return(r) => (Event::Return, r),
            Record::Exception(r) => (Event::Exception, r),
            Record::Fatal {
                r#type,
                message,
                line,
            } => {
                return Err(TraceError::Program {
                    kind: r#type,
                    message,
                    line,
                });
            }
            Record::Exit {
                kind,
                r#type,
                message,
                reason,
                stdout,
            } => {
                trailing = stdout;
                exit = Some(match kind.as_str() {
                    "normal" => Exit::Normal,
                    "error" => Exit::Error { r#type, message },
                    _ => Exit::Never { reason },
                });
                break;
            }
        };
        let depth = record.depth as usize;
        stack.truncate(depth + 1);
        let frame = Frame {
            function: record.function.clone(),
            line: record.line,
        };
        if stack.len() == depth + 1 {
            stack[depth] = frame;
        } else {
            stack.resize(
                depth,
                Frame {
                    function: "?".into(),
                    line: 0,
                },
            );
            stack.push(frame);
        }
        states.push(State {
            event,
            line: record.line,
            source: program.line_text(record.line).to_string(),
            function: record.function,
            depth: record.depth,
            stack: stack[..depth].to_vec(),
            locals: record.locals,
            globals: record.globals,
            value: record.value,
            stdout: record.stdout,
        });
    }
    let exit = match exit {
        Some(exit) => exit,
        None if timed_out => Exit::Never {
            reason: format!("ran longer than {} seconds", limits.max_seconds),
        },
        None => {
            let detail = stderr
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("no output");
            return Err(TraceError::Tracer(format!(
                "python stopped without an exit record: {detail}"
            )));
        }
    };
    Ok((StateTree::new(states, exit, trailing), stderr))
}
