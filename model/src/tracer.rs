//! Record a program run: `tracer.py` under the system `python3`, in a child process
//! that is always killed and reaped, its JSON-lines events turned into a [`StateTree`].

use crate::state::{Event, Exit, Frame, State, Vars};
use crate::tree::StateTree;
use serde::Deserialize;
use std::fs::File;
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
        let source = read_source(path)?;
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

/// Largest program file read, in bytes.
pub const MAX_SOURCE: u64 = 4 << 20;

/// Read a Python source file, refusing what is not a regular file (a FIFO or device
/// would block or never end) and files over [`MAX_SOURCE`].
pub fn read_source(path: &Path) -> Result<String, TraceError> {
    let unreadable = |reason: String| TraceError::Unreadable {
        path: path.to_path_buf(),
        reason,
    };
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        // Opening a FIFO for reading waits for a writer; non-blocking, it does not.
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(|e| unreadable(e.to_string()))?;
    let metadata = file.metadata().map_err(|e| unreadable(e.to_string()))?;
    if !metadata.is_file() {
        let kind = if metadata.is_dir() {
            "a folder"
        } else {
            "not a regular file"
        };
        return Err(unreadable(format!(
            "it is {kind}; name a Python source file"
        )));
    }
    if metadata.len() > MAX_SOURCE {
        return Err(unreadable(format!(
            "it has {} bytes, more than the {} MiB a program may have",
            metadata.len(),
            MAX_SOURCE >> 20
        )));
    }
    let mut bytes = Vec::new();
    file.take(MAX_SOURCE + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| unreadable(e.to_string()))?;
    String::from_utf8(bytes).map_err(|e| TraceError::NotUtf8 {
        path: path.to_path_buf(),
        offset: e.utf8_error().valid_up_to(),
    })
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

/// The Python to run: `$NEURAL_PYTHON`, else `python3`, resolved once per name to the
/// interpreter's own path. A version manager's `python3` (pyenv's shim) is a shell
/// script that costs about 100 ms a start, more than tracing a small program; a name
/// that does not resolve is kept, so that running it fails with the usual message.
pub fn python() -> String {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static RESOLVED: OnceLock<Mutex<HashMap<String, String>>> = OnceLock::new();
    let name = std::env::var("NEURAL_PYTHON").unwrap_or_else(|_| "python3".to_string());
    let mut resolved = RESOLVED
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    resolved
        .entry(name.clone())
        .or_insert_with(|| executable_of(&name).unwrap_or(name))
        .clone()
}

/// The path of the interpreter that `python` names, as it reports it.
fn executable_of(python: &str) -> Option<String> {
    let output = Command::new(python)
        .args(["-I", "-S", "-c", "import sys; print(sys.executable)"])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let path = String::from_utf8(output.stdout).ok()?.trim().to_string();
    (output.status.success() && Path::new(&path).is_file()).then_some(path)
}

/// Run `program` under the tracer and record its state tree.
///
/// The tracer writes its events to a file of its own, not to stdout: a child the
/// program starts (`os.system`, a daemon) can then neither mix its output into the
/// events nor keep the run open by holding a pipe. The program's own stdout is
/// captured by the tracer; what bypasses it (a subprocess writing to fd 1) and stderr
/// go to a console file, kept up to [`MAX_CONSOLE`] bytes. When the tracer exits, the
/// rest of its process group is killed.
pub fn trace(program: &Program, limits: &Limits) -> Result<Trace, TraceError> {
    let scratch = tempfile::Builder::new()
        .prefix("neural-trace-")
        .tempdir()
        .map_err(|e| TraceError::Tracer(format!("cannot create a temporary folder: {e}")))?;
    let events_path = scratch.path().join("events.jsonl");
    let args_path = scratch.path().join("args.json");
    let args = serde_json::json!({
        "path": program.path.to_string_lossy(),
        "call": program.call,
        "args": program.args,
        "cwd": program.cwd.as_ref().map(|c| c.to_string_lossy()),
        "events": events_path.to_string_lossy(),
        "max_events": limits.max_events,
        "max_seconds": limits.max_seconds,
        "max_stdout": limits.max_stdout,
        "max_depth": limits.max_depth,
        "max_repr": limits.max_repr,
    });
    let scratch_error = |e: std::io::Error| {
        TraceError::Tracer(format!("cannot write to the temporary folder: {e}"))
    };
    std::fs::write(&args_path, args.to_string()).map_err(scratch_error)?;
    let console_path = scratch.path().join("console.txt");
    let console = File::create(&console_path).map_err(scratch_error)?;
    let console_too = console.try_clone().map_err(scratch_error)?;

    let python = python();
    let mut command = Command::new(&python);
    command
        .args(["-I", "-S", "-c", TRACER])
        .arg(&args_path)
        .env("PYTHONHASHSEED", "0") // stable set and dict-of-str orders
        .env("PYTHONIOENCODING", "utf-8")
        .stdin(Stdio::null())
        .stdout(console)
        .stderr(console_too);
    crate::sandbox::confine(&mut command, limits.confinement());
    let mut child = command.spawn().map_err(|e| TraceError::NoPython {
        python: python.clone(),
        reason: e.to_string(),
    })?;

    // The tracer keeps its own clock; this one is the backstop for a program stuck
    // where no event fires (a long sleep, a C loop).
    let grace = Duration::from_secs_f64(limits.max_seconds.max(0.0) + 2.0);
    let status = match child.wait_timeout(grace) {
        Ok(Some(status)) => Some(status),
        Ok(None) | Err(_) => None,
    };
    crate::sandbox::kill_group(child.id());
    let _ = child.kill();
    let _ = child.wait();

    let console = read_prefix(&console_path, MAX_CONSOLE);
    let events = File::open(&events_path).ok().map(BufReader::new);
    let ending = match status {
        None => Ending::TimedOut,
        Some(status) if crate::sandbox::over_cpu_limit(&status) => Ending::OverCpu,
        Some(status) => Ending::Exited(status),
    };
    let (tree, stderr) = build(program, events, ending, limits, console)?;
    Ok(Trace {
        program: program.clone(),
        tree,
        stderr,
    })
}

/// Bytes of the console file (stderr, and output that bypassed the tracer) kept.
pub const MAX_CONSOLE: u64 = 1 << 20;

/// How the tracer's process ended.
enum Ending {
    Exited(std::process::ExitStatus),
    TimedOut,
    OverCpu,
}

/// The first `limit` bytes of a file as text (invalid UTF-8 replaced), "" if unreadable.
fn read_prefix(path: &Path, limit: u64) -> String {
    let mut bytes = Vec::new();
    if let Ok(file) = File::open(path) {
        let _ = file.take(limit).read_to_end(&mut bytes);
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

impl Limits {
    /// Resource limits of the traced process, from the budgets: CPU a little over
    /// the time budget (the tracer's own clock ends a run first), 4 GiB of address
    /// space, and 512 MiB files (the event file included).
    pub fn confinement(&self) -> crate::sandbox::Confinement {
        crate::sandbox::Confinement {
            cpu_seconds: self.max_seconds.max(0.0).ceil() as u64 + 5,
            memory_bytes: 4 << 30,
            file_bytes: 512 << 20,
        }
    }
}

fn build(
    program: &Program,
    events: Option<BufReader<File>>,
    ending: Ending,
    limits: &Limits,
    stderr: String,
) -> Result<(StateTree, String), TraceError> {
    let mut states = Vec::new();
    let mut stack: Vec<Frame> = Vec::new();
    let mut exit = None;
    let mut trailing = String::new();
    let killed = !matches!(ending, Ending::Exited(_));
    for line in events
        .into_iter()
        .flat_map(|e| e.lines())
        .map_while(Result::ok)
    {
        let record: Record = match serde_json::from_str(&line) {
            Ok(record) => record,
            // A process killed mid-write leaves a cut last line.
            Err(_) if killed => break,
            Err(e) => {
                return Err(TraceError::Tracer(format!(
                    "bad event line ({e}): {line:.200}"
                )))
            }
        };
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
    let exit = match (exit, ending) {
        (Some(exit), _) => exit,
        (None, Ending::TimedOut) => Exit::Never {
            reason: format!("ran longer than {} seconds", limits.max_seconds),
        },
        (None, Ending::OverCpu) => Exit::Never {
            reason: format!(
                "used more than {} seconds of CPU",
                limits.confinement().cpu_seconds
            ),
        },
        (None, Ending::Exited(status)) => {
            let detail = stderr
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("no output");
            return Err(TraceError::Tracer(format!(
                "python stopped ({status}) without an exit record: {detail}"
            )));
        }
    };
    Ok((StateTree::new(states, exit, trailing), stderr))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_is_the_interpreter_itself_not_a_launcher() {
        let python = python();
        assert!(Path::new(&python).is_absolute(), "{python}");
        // Asked again, it reports itself: nothing stands between.
        assert_eq!(executable_of(&python).as_deref(), Some(python.as_str()));
        assert_eq!(executable_of("/nonexistent/python3"), None);
    }
}
