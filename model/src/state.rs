//! One program state: a node of the state tree, as the debugger shows it.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Names to `repr()` strings, in the order Python bound them (arguments first).
pub type Vars = IndexMap<String, String>;

/// What happened at a state, as `sys.settrace` reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Event {
    /// A function was entered; its arguments are bound.
    Call,
    /// A line is about to run; locals are as they are before it runs.
    Line,
    /// The function returns `value`.
    Return,
    /// An exception (`value`) was raised in or propagated into this frame.
    Exception,
}

impl Event {
    pub const ALL: [Event; 4] = [Event::Call, Event::Line, Event::Return, Event::Exception];

    pub fn name(self) -> &'static str {
        match self {
            Event::Call => "call",
            Event::Line => "line",
            Event::Return => "return",
            Event::Exception => "exception",
        }
    }
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A caller on the call stack: which function, stopped at which line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Frame {
    pub function: String,
    pub line: u32,
}

/// A program state: what the editor shows when the debugger stops.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    pub event: Event,
    /// 1-based line in the program's source.
    pub line: u32,
    /// The text of that line, without its trailing newline.
    pub source: String,
    /// Name of the function (`<module>` for the script itself).
    pub function: String,
    /// Call depth: 0 for the root frame (the module, or the call under debug).
    pub depth: u32,
    /// The callers above this frame, outermost first (`stack.len() == depth`).
    pub stack: Vec<Frame>,
    /// Locals of the frame (before the line runs for `line` states).
    pub locals: Vars,
    /// Module-level data names, for frames other than the module itself
    /// (empty where the program has none).
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub globals: Vars,
    /// `repr` of the returned value (`return`) or of the exception (`exception`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// What the program wrote to stdout since the previous state.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub stdout: String,
}

#[cfg(test)]
impl State {
    /// The module about to run `line` (its text `source`), with no names bound yet.
    pub fn module_line(line: u32, source: &str) -> State {
        State {
            event: Event::Line,
            line,
            source: source.into(),
            function: "<module>".into(),
            depth: 0,
            stack: Vec::new(),
            locals: Vars::new(),
            globals: Vars::new(),
            value: None,
            stdout: String::new(),
        }
    }
}

impl State {
    /// The Python type name at the head of an exception repr: `ValueError('x')` -> `ValueError`.
    pub fn exception_type(&self) -> Option<&str> {
        if self.event != Event::Exception {
            return None;
        }
        let value = self.value.as_deref()?;
        Some(value.split('(').next().unwrap_or(value))
    }
}

/// How a program run ends.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "exit", rename_all = "lowercase")]
pub enum Exit {
    /// The program finished.
    Normal,
    /// An uncaught exception ended it.
    Error { r#type: String, message: String },
    /// It did not finish within the tracer's budget (time, events).
    Never { reason: String },
}

impl Exit {
    pub fn kind(&self) -> &'static str {
        match self {
            Exit::Normal => "normal",
            Exit::Error { .. } => "error",
            Exit::Never { .. } => "never",
        }
    }
}

impl fmt::Display for Exit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Exit::Normal => f.write_str("exited normally"),
            Exit::Error { r#type, message } if message.is_empty() => {
                write!(f, "exited with uncaught {type}")
            }
            Exit::Error { r#type, message } => write!(f, "exited with uncaught {type}: {message}"),
            Exit::Never { reason } => write!(f, "did not terminate ({reason})"),
        }
    }
}
