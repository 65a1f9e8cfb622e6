//! The trace language: the text the model reads and writes.
//!
//! An episode is the program once, then states and actions in turn:
//!
//! ```text
//! <|source|>
//! 1 def f(x):
//! 2     return x + 1
//! <|call_expr|>f(1)
//! <|frame_sep|><|call|>1 0 f
//! def f(x):
//! {"x":"1"}<|action_sep|><|step_into|><|frame_sep|><|line|>2 0 f
//!     return x + 1
//! {"..":".."}<|action_sep|><|step_into|><|frame_sep|><|return|>2 0 f
//!     return x + 1
//! {"..":".."}
//! <|value|>"2"<|action_sep|>
//! ```
//!
//! A state is a header (event token, line, depth, function), the line's text, the
//! locals as a JSON object of reprs, then optional sections: `<|globals|>` (an object),
//! `<|value|>` (a JSON string: the return value or the exception), `<|stdout|>` (a JSON
//! string: what was printed since the previous state). `<|at_start|>` before the event
//! says an inverse action found nothing earlier. An exit is `<|exit_normal|>`,
//! `<|exit_error|>TYPE "message"` or `<|exit_never|>"reason"`, with an optional
//! `<|stdout|>` section. Every state ends with `<|action_sep|>`: the model stops there.
//!
//! Locals (and globals) are written in full, except after a single step
//! ([`Action::is_single_step`]) inside the same function at the same depth, where only
//! the names whose repr changed are written, plus `"..": ".."` for "the rest unchanged"
//! (full again whenever a name disappears). A model may instead be trained with
//! [`Locals::Full`], every state in full: its checkpoint says so (`trace_locals`). The
//! call stack is not written: it follows from the previous state and the depth
//! ([`derive_stack`]).

use crate::action::Action;
use crate::state::{Event, Exit, Frame, State, Vars};
use crate::tree::Outcome;
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::ops::Range;

pub const SOURCE: &str = "<|source|>";
pub const CALL_EXPR: &str = "<|call_expr|>";
pub const FRAME_SEP: &str = "<|frame_sep|>";
pub const ACTION_SEP: &str = "<|action_sep|>";
pub const AT_START: &str = "<|at_start|>";
pub const GLOBALS: &str = "<|globals|>";
pub const VALUE: &str = "<|value|>";
pub const STDOUT: &str = "<|stdout|>";
pub const EXIT_NORMAL: &str = "<|exit_normal|>";
pub const EXIT_ERROR: &str = "<|exit_error|>";
pub const EXIT_NEVER: &str = "<|exit_never|>";
/// The events a state can be, as written at its start.
pub const EVENTS: [&str; 4] = ["<|call|>", "<|line|>", "<|return|>", "<|exception|>"];
/// The ways a run can end.
pub const EXITS: [&str; 3] = [EXIT_NORMAL, EXIT_ERROR, EXIT_NEVER];

/// The marker of a diff: `"..": ".."` stands for every name not written.
pub const REST: &str = "..";

/// Every special token of the language; each must be one token of the tokenizer.
pub const SPECIAL_TOKENS: [&str; 24] = [
    SOURCE,
    CALL_EXPR,
    FRAME_SEP,
    ACTION_SEP,
    AT_START,
    GLOBALS,
    VALUE,
    STDOUT,
    EXIT_NORMAL,
    EXIT_ERROR,
    EXIT_NEVER,
    "<|call|>",
    "<|line|>",
    "<|return|>",
    "<|exception|>",
    "<|step_into|>",
    "<|step_over|>",
    "<|step_return|>",
    "<|breakpoint|>",
    "<|continue|>",
    "<|inv_step_into|>",
    "<|inv_step_over|>",
    "<|inv_step_call|>",
    "<|inv_breakpoint|>",
];

fn event_token(event: Event) -> &'static str {
    match event {
        Event::Call => "<|call|>",
        Event::Line => "<|line|>",
        Event::Return => "<|return|>",
        Event::Exception => "<|exception|>",
    }
}

fn action_token(action: &Action) -> &'static str {
    match action {
        Action::StepInto => "<|step_into|>",
        Action::StepOver => "<|step_over|>",
        Action::StepReturn => "<|step_return|>",
        Action::Breakpoint(_) => "<|breakpoint|>",
        Action::Continue => "<|continue|>",
        Action::InvStepInto => "<|inv_step_into|>",
        Action::InvStepOver => "<|inv_step_over|>",
        Action::InvStepCall => "<|inv_step_call|>",
        Action::InvBreakpoint(_) => "<|inv_breakpoint|>",
    }
}

/// The program as the model sees it: numbered lines, then the call under debug.
pub fn render_context(source: &str, call: Option<&str>) -> String {
    render_context_without(source, call, &std::collections::BTreeSet::new())
}

/// The context without the lines in `left_out` (1-based); the others keep their
/// numbers, so every state still names its true line.
pub fn render_context_without(
    source: &str,
    call: Option<&str>,
    left_out: &std::collections::BTreeSet<u32>,
) -> String {
    let mut text = String::with_capacity(source.len() + 16 * source.lines().count());
    text.push_str(SOURCE);
    text.push('\n');
    for (index, line) in source.lines().enumerate() {
        if !left_out.contains(&(index as u32 + 1)) {
            let _ = writeln!(text, "{} {}", index + 1, line.trim_end());
        }
    }
    if let Some(call) = call {
        let _ = writeln!(text, "{CALL_EXPR}{}", call.replace('\n', " "));
    }
    text
}

/// An action: `<|action_sep|>` is written by the state before it.
pub fn render_action(action: &Action) -> String {
    let mut text = action_token(action).to_string();
    if let Some(lines) = action.breakpoint_lines() {
        let lines: Vec<String> = lines.iter().map(u32::to_string).collect();
        text.push_str(&lines.join(","));
    }
    text
}

/// How a state after a single step in the same frame writes its locals: what changed
/// (the paper's diff), or all of them. A small model reads the values a line computes
/// with from the state just before it in full, instead of finding each name's last
/// write further back; the grammar writes the names the line cannot change for it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Locals {
    #[default]
    Diff,
    Full,
}

impl Locals {
    pub fn is_diff(&self) -> bool {
        *self == Locals::Diff
    }

    /// The state an outcome's locals are written against ([`render_outcome`]'s `prev`):
    /// the one before it for diffs, none for full locals.
    pub fn base(self, prev: Option<&State>) -> Option<&State> {
        prev.filter(|_| self.is_diff())
    }
}

/// Whether the outcome of `action` at `prev` is written with diffs of locals.
fn writes_diff(prev: Option<&State>, action: Option<&Action>, next: &State) -> bool {
    match (prev, action) {
        (Some(prev), Some(action)) => {
            action.is_single_step()
                && next.event != Event::Call
                && prev.function == next.function
                && prev.depth == next.depth
        }
        _ => false,
    }
}

fn render_vars(text: &mut String, vars: &Vars, base: Option<&Vars>) {
    let diff = base.filter(|base| base.keys().all(|k| vars.contains_key(k)));
    let json = match diff {
        Some(base) => {
            let mut changed: serde_json::Map<String, serde_json::Value> = vars
                .iter()
                .filter(|(k, v)| base.get(*k) != Some(*v))
                .map(|(k, v)| (k.clone(), v.clone().into()))
                .collect();
            if changed.len() < vars.len() {
                changed.insert(REST.into(), REST.into());
            }
            serde_json::Value::Object(changed)
        }
        None => serde_json::to_value(vars).expect("string maps serialise"),
    };
    text.push_str(&json.to_string());
}

fn json_string(text: &str) -> String {
    serde_json::Value::from(text).to_string()
}

/// One outcome as the model must write it, from `<|frame_sep|>` (excluded) through the
/// closing `<|action_sep|>` (included). `prev` and `action` are what led to it (none
/// for the first state of an episode).
pub fn render_outcome(prev: Option<&State>, action: Option<&Action>, outcome: &Outcome) -> String {
    let mut text = String::new();
    match outcome {
        Outcome::State { state } | Outcome::Start { state } => {
            if matches!(outcome, Outcome::Start { .. }) {
                text.push_str(AT_START);
            }
            let diff = writes_diff(prev, action, state) && matches!(outcome, Outcome::State { .. });
            let base = if diff { prev } else { None };
            let _ = write!(
                text,
                "{}{} {} {}\n{}\n",
                event_token(state.event),
                state.line,
                state.depth,
                state.function,
                state.source.replace('\n', " ")
            );
            render_vars(&mut text, &state.locals, base.map(|p| &p.locals));
            if !state.globals.is_empty() {
                text.push('\n');
                text.push_str(GLOBALS);
                render_vars(&mut text, &state.globals, base.map(|p| &p.globals));
            }
            if let Some(value) = &state.value {
                let _ = write!(text, "\n{VALUE}{}", json_string(value));
            }
            if !state.stdout.is_empty() {
                let _ = write!(text, "\n{STDOUT}{}", json_string(&state.stdout));
            }
        }
        Outcome::Exit { exit, stdout } => {
            match exit {
                Exit::Normal => text.push_str(EXIT_NORMAL),
                Exit::Error { r#type, message } => {
                    let _ = write!(text, "{EXIT_ERROR}{} {}", r#type, json_string(message));
                }
                Exit::Never { reason } => {
                    let _ = write!(text, "{EXIT_NEVER}{}", json_string(reason));
                }
            }
            if !stdout.is_empty() {
                let _ = write!(text, "\n{STDOUT}{}", json_string(stdout));
            }
        }
    }
    text.push_str(ACTION_SEP);
    text
}

/// A whole episode as training text, with the byte ranges the model must predict (each
/// outcome after an action, through its closing `<|action_sep|>`).
pub fn render_episode(
    source: &str,
    call: Option<&str>,
    start: &State,
    steps: &[(Action, Outcome)],
    locals: Locals,
) -> (String, Vec<Range<usize>>) {
    let mut text = render_context(source, call);
    text.push_str(FRAME_SEP);
    text.push_str(&render_outcome(
        None,
        None,
        &Outcome::State {
            state: start.clone(),
        },
    ));
    let mut targets = Vec::with_capacity(steps.len());
    let mut prev = start;
    for (action, outcome) in steps {
        text.push_str(&render_action(action));
        text.push_str(FRAME_SEP);
        let begin = text.len();
        text.push_str(&render_outcome(
            locals.base(Some(prev)),
            Some(action),
            outcome,
        ));
        targets.push(begin..text.len());
        if let Some(state) = outcome.state() {
            prev = state;
        }
    }
    (text, targets)
}

/// Why a text is not a well-formed outcome.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed prediction at byte {at}: {what}")]
pub struct ParseError {
    pub at: usize,
    pub what: String,
}

struct Cursor<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Cursor<'a> {
    fn fail<T>(&self, what: impl Into<String>) -> Result<T, ParseError> {
        Err(ParseError {
            at: self.at,
            what: what.into(),
        })
    }

    fn rest(&self) -> &'a str {
        &self.text[self.at..]
    }

    fn eat(&mut self, token: &str) -> bool {
        if self.rest().starts_with(token) {
            self.at += token.len();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, token: &str) -> Result<(), ParseError> {
        if self.eat(token) {
            Ok(())
        } else {
            self.fail(format!("expected {token:?}"))
        }
    }

    /// Up to (not including) the next newline, which is consumed.
    fn line(&mut self) -> Result<&'a str, ParseError> {
        match self.rest().find('\n') {
            Some(end) => {
                let line = &self.rest()[..end];
                self.at += end + 1;
                Ok(line)
            }
            None => self.fail("expected a newline"),
        }
    }

    /// One JSON value, parsed and consumed.
    fn json<T: serde::de::DeserializeOwned>(&mut self, what: &str) -> Result<T, ParseError> {
        let mut stream = serde_json::Deserializer::from_str(self.rest()).into_iter::<T>();
        match stream.next() {
            Some(Ok(value)) => {
                self.at += stream.byte_offset();
                Ok(value)
            }
            Some(Err(e)) => self.fail(format!("{what} is not valid JSON: {e}")),
            None => self.fail(format!("expected {what}")),
        }
    }

    fn number(&mut self, what: &str) -> Result<u32, ParseError> {
        let digits = self.rest().bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return self.fail(format!("expected {what}"));
        }
        let value = self.rest()[..digits]
            .parse()
            .or_else(|_| self.fail(format!("{what} is too large")))?;
        self.at += digits;
        Ok(value)
    }
}

/// Locals from a written object: in full, or a diff resolved against `base`.
fn resolve_vars(written: Vars, base: Option<&Vars>, cursor: &Cursor) -> Result<Vars, ParseError> {
    match written.get(REST) {
        None => Ok(written),
        Some(marker) if marker != REST => {
            cursor.fail(r#"the name ".." is reserved for "..": "..""#)
        }
        Some(_) => {
            let Some(base) = base else {
                return cursor
                    .fail(r#""..": ".." (unchanged) needs a previous state of the same frame"#);
            };
            let mut vars = base.clone();
            for (name, value) in written {
                if name != REST {
                    vars.insert(name, value);
                }
            }
            Ok(vars)
        }
    }
}

/// The call stack of `next` given the state before it: the same frame keeps its
/// callers, a call adds the caller, a return drops frames. Frames that a jump went
/// through unseen are unknown (`?` at line 0).
pub fn derive_stack(prev: Option<&State>, depth: u32) -> Vec<Frame> {
    let depth = depth as usize;
    let Some(prev) = prev else {
        return vec![
            Frame {
                function: "?".into(),
                line: 0
            };
            depth
        ];
    };
    let mut known = prev.stack.clone();
    known.push(Frame {
        function: prev.function.clone(),
        line: prev.line,
    });
    known.truncate(depth);
    known.resize(
        depth,
        Frame {
            function: "?".into(),
            line: 0,
        },
    );
    known
}

/// Parse an outcome as [`render_outcome`] writes it (the text after `<|frame_sep|>`;
/// the closing `<|action_sep|>` is optional). `prev` is the state the action was taken
/// at: diffs are resolved against it and the call stack is derived from it.
pub fn parse_outcome(text: &str, prev: Option<&State>) -> Result<Outcome, ParseError> {
    let mut c = Cursor { text, at: 0 };
    let outcome = if c.rest().starts_with("<|exit_") {
        let exit = if c.eat(EXIT_NORMAL) {
            Exit::Normal
        } else if c.eat(EXIT_ERROR) {
            let name_len = c.rest().find(' ').unwrap_or(0);
            let kind = &c.rest()[..name_len];
            if kind.is_empty()
                || !kind
                    .chars()
                    .all(|ch| ch.is_alphanumeric() || ch == '_' || ch == '.')
            {
                return c.fail("expected an exception type name and a space");
            }
            c.at += name_len + 1;
            let message: String = c.json("the error message")?;
            Exit::Error {
                r#type: kind.to_string(),
                message,
            }
        } else if c.eat(EXIT_NEVER) {
            Exit::Never {
                reason: c.json("the reason")?,
            }
        } else {
            return c.fail("unknown exit token");
        };
        let stdout = if c.eat(&format!("\n{STDOUT}")) {
            c.json("stdout")?
        } else {
            String::new()
        };
        Outcome::Exit { exit, stdout }
    } else {
        let at_start = c.eat(AT_START);
        let event = Event::ALL
            .into_iter()
            .find(|&e| c.rest().starts_with(event_token(e)))
            .map_or_else(|| c.fail("expected an event token or an exit"), Ok)?;
        c.expect(event_token(event))?;
        let line = c.number("a line number")?;
        if line == 0 {
            return c.fail("line numbers start at 1");
        }
        c.expect(" ")?;
        let depth = c.number("a depth")?;
        c.expect(" ")?;
        let function = c.line()?.to_string();
        if function.is_empty() || function.contains(char::is_whitespace) {
            return c.fail("expected a function name");
        }
        let source = c.line()?.to_string();
        // Diffs are only ever written against a state of the same frame.
        let same_frame = prev.filter(|p| p.function == function && p.depth == depth);
        let written: Vars = c.json("locals")?;
        let locals = resolve_vars(written, same_frame.map(|p| &p.locals), &c)?;
        let globals = if c.eat(&format!("\n{GLOBALS}")) {
            let written: Vars = c.json("globals")?;
            resolve_vars(written, same_frame.map(|p| &p.globals), &c)?
        } else {
            Vars::new()
        };
        let value = if c.eat(&format!("\n{VALUE}")) {
            Some(c.json::<String>("the value")?)
        } else {
            None
        };
        match (event, &value) {
            (Event::Return | Event::Exception, None) => {
                return c.fail(format!("a {event} state needs a value"))
            }
            (Event::Call | Event::Line, Some(_)) => {
                return c.fail(format!("a {event} state has no value"))
            }
            _ => {}
        }
        let stdout = if c.eat(&format!("\n{STDOUT}")) {
            c.json("stdout")?
        } else {
            String::new()
        };
        let state = State {
            event,
            line,
            source,
            stack: derive_stack(prev, depth),
            function,
            depth,
            locals,
            globals,
            value,
            stdout,
        };
        if at_start {
            Outcome::Start { state }
        } else {
            Outcome::State { state }
        }
    };
    c.eat(ACTION_SEP);
    if !c.rest().is_empty() {
        return c.fail("unexpected text after the state");
    }
    Ok(outcome)
}

/// Parse an action as [`render_action`] writes it.
pub fn parse_action(text: &str) -> Result<Action, ParseError> {
    let fail = |what: &str| {
        Err(ParseError {
            at: 0,
            what: what.to_string(),
        })
    };
    let Some(name) = text.strip_prefix("<|").and_then(|t| t.split_once("|>")) else {
        return fail("expected an action token");
    };
    let (name, lines) = name;
    let spelled = if lines.is_empty() {
        name.to_string()
    } else {
        format!("{name}:{lines}")
    };
    let action: Action = spelled
        .parse()
        .map_err(|e: crate::action::ParseActionError| ParseError {
            at: 0,
            what: e.to_string(),
        })?;
    if render_action(&action) != text {
        return fail("not in canonical form (lines ascending, comma-separated)");
    }
    Ok(action)
}

/// Lines a breakpoint action may name: those that exist in the program.
pub fn existing_lines(source: &str) -> BTreeSet<u32> {
    (1..=source.lines().count() as u32).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(
        event: Event,
        line: u32,
        function: &str,
        depth: u32,
        locals: &[(&str, &str)],
    ) -> State {
        State {
            event,
            line,
            source: format!("line {line}"),
            function: function.into(),
            depth,
            stack: vec![
                Frame {
                    function: "<module>".into(),
                    line: 9
                };
                depth as usize
            ],
            locals: locals
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            globals: Vars::new(),
            value: matches!(event, Event::Return | Event::Exception).then(|| "None".to_string()),
            stdout: String::new(),
        }
    }

    #[test]
    fn a_single_step_in_one_frame_writes_only_what_changed() {
        let prev = state(Event::Line, 2, "f", 1, &[("a", "1"), ("b", "[1, 2]")]);
        let next = state(Event::Line, 3, "f", 1, &[("a", "2"), ("b", "[1, 2]")]);
        let text = render_outcome(
            Some(&prev),
            Some(&Action::StepOver),
            &Outcome::State {
                state: next.clone(),
            },
        );
        assert!(text.contains(r#"{"a":"2","..":".."}"#), "{text}");
        let parsed = parse_outcome(&text, Some(&prev)).unwrap();
        assert_eq!(parsed, Outcome::State { state: next });
    }

    #[test]
    fn an_episode_in_full_locals_writes_every_state_whole() {
        let start = state(Event::Line, 2, "f", 0, &[("a", "1"), ("b", "[1, 2]")]);
        let next = state(Event::Line, 3, "f", 0, &[("a", "2"), ("b", "[1, 2]")]);
        let steps = [(
            Action::StepOver,
            Outcome::State {
                state: next.clone(),
            },
        )];
        let (diff, _) = render_episode("a = 1\n", None, &start, &steps, Locals::Diff);
        assert!(diff.contains(r#"{"a":"2","..":".."}"#), "{diff}");
        let (full, targets) = render_episode("a = 1\n", None, &start, &steps, Locals::Full);
        let written = &full[targets[0].clone()];
        assert!(written.contains(r#"{"a":"2","b":"[1, 2]"}"#), "{written}");
        // A full state reads back the same, with or without the state before it.
        let parsed = parse_outcome(written, Some(&start)).unwrap();
        assert_eq!(parsed, Outcome::State { state: next });
    }

    #[test]
    fn jumps_and_new_frames_write_locals_in_full() {
        let prev = state(Event::Line, 2, "f", 1, &[("a", "1")]);
        let next = state(Event::Line, 3, "f", 1, &[("a", "2")]);
        let jump = Action::Breakpoint([3].into_iter().collect());
        let text = render_outcome(Some(&prev), Some(&jump), &Outcome::State { state: next });
        assert!(!text.contains(REST), "{text}");
        let call = state(Event::Call, 5, "g", 2, &[("a", "1")]);
        let text = render_outcome(
            Some(&prev),
            Some(&Action::StepInto),
            &Outcome::State { state: call },
        );
        assert!(!text.contains(REST), "{text}");
    }

    #[test]
    fn a_name_that_disappears_forces_full_locals() {
        let prev = state(Event::Line, 2, "f", 0, &[("a", "1"), ("tmp", "3")]);
        let next = state(Event::Line, 3, "f", 0, &[("a", "1")]);
        let text = render_outcome(
            Some(&prev),
            Some(&Action::StepInto),
            &Outcome::State {
                state: next.clone(),
            },
        );
        assert_eq!(
            parse_outcome(&text, Some(&prev)).unwrap(),
            Outcome::State { state: next }
        );
    }

    #[test]
    fn exits_and_start_round_trip() {
        let prev = state(Event::Line, 2, "f", 0, &[]);
        let outcomes = [
            Outcome::Exit {
                exit: Exit::Normal,
                stdout: "hi\n".into(),
            },
            Outcome::Exit {
                exit: Exit::Error {
                    r#type: "ValueError".into(),
                    message: "bad \"x\"\nline".into(),
                },
                stdout: String::new(),
            },
            Outcome::Exit {
                exit: Exit::Never {
                    reason: "more than 10 events".into(),
                },
                stdout: String::new(),
            },
            Outcome::Start {
                state: state(Event::Call, 1, "f", 0, &[("n", "3")]),
            },
        ];
        for outcome in outcomes {
            let text = render_outcome(Some(&prev), Some(&Action::InvStepInto), &outcome);
            assert_eq!(
                parse_outcome(&text, Some(&prev)).unwrap(),
                outcome,
                "{text}"
            );
        }
    }

    #[test]
    fn parsing_malformed_text_says_where_and_what() {
        let prev = state(Event::Line, 2, "f", 0, &[("a", "1")]);
        let cases = [
            ("", "event token"),
            ("<|line|>x 0 f\nsrc\n{}", "line number"),
            ("<|line|>0 0 f\nsrc\n{}", "start at 1"),
            ("<|line|>3 0 f\nsrc\n{\"a\":", "not valid JSON"),
            ("<|line|>3 0 f\nsrc\n{\"a\":1}", "not valid JSON"),
            ("<|line|>3 0 f\nsrc\n{}\n<|value|>\"1\"", "has no value"),
            ("<|return|>3 0 f\nsrc\n{}", "needs a value"),
            ("<|line|>3 0 g\nsrc\n{\"..\":\"..\"}", "previous state"),
            ("<|line|>3 0 f\nsrc\n{} junk", "unexpected text"),
            ("<|exit_error|>\"no type\"", "exception type"),
            ("<|exit_bogus|>", "unknown exit"),
        ];
        for (text, why) in cases {
            let error = parse_outcome(text, Some(&prev)).unwrap_err();
            assert!(error.what.contains(why), "{text:?}: {error}");
        }
    }

    #[test]
    fn actions_round_trip_and_reject_non_canonical_text() {
        for name in Action::NAMES {
            let action: Action = if name.ends_with("breakpoint") {
                format!("{name}:7,3").parse().unwrap()
            } else {
                name.parse().unwrap()
            };
            assert_eq!(parse_action(&render_action(&action)).unwrap(), action);
        }
        assert!(parse_action("<|breakpoint|>7,3").is_err());
        assert!(parse_action("<|jump|>").is_err());
        assert!(parse_action("step_into").is_err());
    }

    #[test]
    fn the_stack_follows_depth() {
        let caller = state(Event::Line, 4, "main", 1, &[]);
        assert_eq!(
            derive_stack(Some(&caller), 2),
            vec![
                caller.stack[0].clone(),
                Frame {
                    function: "main".into(),
                    line: 4
                }
            ]
        );
        assert_eq!(derive_stack(Some(&caller), 0), vec![]);
        assert_eq!(
            derive_stack(Some(&caller), 3)[2],
            Frame {
                function: "?".into(),
                line: 0
            }
        );
    }
}
