//! Meta's Code World Model's trace dialect (CWM's `PROMPTING_GUIDE.md` and its
//! `demos/cwmdbg.py`), for serving a CWM checkpoint behind the same states: the prompt
//! built from a program and the states so far exactly as CWM's own demo builds it, and
//! a predicted frame read back into a state.
//!
//! A CWM prompt is `<|begin_of_text|><|trace_context_start|>` the program, its entry
//! line marked `  # << START_OF_TRACE`, then `<|frame_sep|>` and one frame per state:
//!
//! ```text
//! <|call_sep|>LOCALS<|action_sep|>SOURCE<|frame_sep|>
//! <|line_sep|>LOCALS<|action_sep|>SOURCE<|frame_sep|>
//! <|return_sep|><|action_sep|>SOURCE<|arg_sep|>VALUE<|frame_sep|>
//! <|exception_sep|><|action_sep|>SOURCE<|arg_sep|>VALUE<|frame_sep|>
//! ```
//!
//! LOCALS is Python's `json.dumps` of the frame's locals (reprs), a value unchanged
//! since the frame before in the same scope written `".."`; VALUE is `json.dumps` of
//! the repr. There are no line numbers: a state's line is found from its text.
//!
//! The demo encodes each piece of text on its own, so a prompt is a list of
//! [`Piece`]s: special tokens and texts to encode separately.

#[cfg(feature = "neural")]
pub mod model;
pub mod run;

use crate::state::{Event, State, Vars};

/// What the demo appends to the entry line of the program.
pub const START_MARKER: &str = "  # << START_OF_TRACE";
/// A local unchanged since the frame before in the same scope.
pub const UNCHANGED: &str = "..";

pub const BEGIN_OF_TEXT: &str = "<|begin_of_text|>";
pub const END_OF_TEXT: &str = "<|end_of_text|>";
pub const TRACE_CONTEXT_START: &str = "<|trace_context_start|>";
pub const FRAME_SEP: &str = "<|frame_sep|>";
pub const ACTION_SEP: &str = "<|action_sep|>";
pub const ARG_SEP: &str = "<|arg_sep|>";

/// One part of a prompt: a special token, or text encoded on its own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    Special(&'static str),
    Text(String),
}

/// The special token that begins a frame of `event`.
pub fn event_token(event: Event) -> &'static str {
    match event {
        Event::Call => "<|call_sep|>",
        Event::Line => "<|line_sep|>",
        Event::Return => "<|return_sep|>",
        Event::Exception => "<|exception_sep|>",
    }
}

/// One step of a CWM trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    pub event: Event,
    /// Reprs of the locals (`call` and `line` frames), [`UNCHANGED`] where a value is
    /// the same as in the frame before in the same scope.
    pub locals: Vars,
    /// The line's text as the trace writes it (with its newline).
    pub source: String,
    /// The repr returned or raised (`return` and `exception` frames).
    pub value: Option<String>,
}

/// The program as a CWM context: `source` with `entry` (1-based) marked as the line
/// the trace starts on.
pub fn context(source: &str, entry: u32) -> String {
    let mut lines: Vec<String> = source.lines().map(str::to_owned).collect();
    if let Some(line) = lines.get_mut(entry as usize - 1) {
        line.push_str(START_MARKER);
    }
    let mut text = lines.join("\n");
    if source.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// Our states as CWM frames: a `call` or `line` frame writes the locals, those
/// unchanged since the frame before in the same scope (the same frame of the stack,
/// with no call or return between) as [`UNCHANGED`]; a `return` or `exception` frame
/// writes its value. A frame's line is the program's text and its newline (the demo
/// strips a newline, and the entry mark, from what the model writes).
pub fn frames(states: &[State]) -> Vec<Frame> {
    let mut frames = Vec::with_capacity(states.len());
    for (k, state) in states.iter().enumerate() {
        let before = k.checked_sub(1).map(|j| &states[j]);
        let same_scope = before.filter(|b| {
            matches!(b.event, Event::Line | Event::Call)
                && b.depth == state.depth
                && b.function == state.function
        });
        let locals = match state.event {
            Event::Call | Event::Line => state
                .locals
                .iter()
                .map(|(name, value)| {
                    let kept = same_scope.and_then(|b| b.locals.get(name)) == Some(value);
                    let shown = if kept && state.event == Event::Line {
                        UNCHANGED.to_string()
                    } else {
                        value.clone()
                    };
                    (name.clone(), shown)
                })
                .collect(),
            Event::Return | Event::Exception => Vars::new(),
        };
        frames.push(Frame {
            event: state.event,
            locals,
            source: format!("{}\n", state.source),
            value: state.value.clone(),
        });
    }
    frames
}

/// The prompt for the next frame after `frames`, as CWM's demo builds it
/// (`CWMDebugger._step`); `forced`: the next frame's event, written for the model
/// (how the demo steps over a call: it forces the `return`).
pub fn prompt(context: &str, frames: &[Frame], forced: Option<Event>) -> Vec<Piece> {
    let mut pieces = head(context);
    pieces.extend(after_head(frames, forced));
    pieces
}

/// How every prompt of a program begins: the program as a trace context.
pub fn head(context: &str) -> Vec<Piece> {
    vec![
        Piece::Special(BEGIN_OF_TEXT),
        Piece::Special(TRACE_CONTEXT_START),
        Piece::Text(context.to_string()),
        Piece::Special(FRAME_SEP),
    ]
}

/// The rest of [`prompt`] after its [`head`]: the frames, and the forced event.
pub fn after_head(frames: &[Frame], forced: Option<Event>) -> Vec<Piece> {
    let mut pieces = Vec::new();
    for frame in frames {
        pieces.push(Piece::Special(event_token(frame.event)));
        if matches!(frame.event, Event::Call | Event::Line) {
            pieces.push(Piece::Text(json_dumps_object(&frame.locals)));
        }
        pieces.push(Piece::Special(ACTION_SEP));
        pieces.push(Piece::Text(frame.source.clone()));
        if matches!(frame.event, Event::Return | Event::Exception) {
            pieces.push(Piece::Special(ARG_SEP));
            let value = frame.value.as_deref().map_or("null".into(), json_dumps_str);
            pieces.push(Piece::Text(value));
        }
        pieces.push(Piece::Special(FRAME_SEP));
    }
    if let Some(event) = forced {
        pieces.push(Piece::Special(event_token(event)));
    }
    pieces
}

/// What the model wrote for one frame, read as CWM's demo reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// A frame, and the program's line its text is (1-based), if one is.
    Frame(Frame, Option<u32>),
    /// `<|end_of_text|>`: the traced call is over.
    End,
}

/// Why a reply is not a frame.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplyError {
    #[error("the reply begins with {0:?}, not a frame's event")]
    NoEvent(String),
    #[error("the reply ends before its {0}")]
    Short(&'static str),
    #[error("the frame's locals are not a JSON object of strings: {0}")]
    Locals(String),
}

/// Reads a reply (its pieces: special tokens and the text decoded between them) into a
/// frame. `forced` is the event the prompt wrote for the model, if any; `lines` are the
/// program's lines, for finding the frame's line by its text.
pub fn read_reply(
    pieces: &[Piece],
    forced: Option<Event>,
    lines: &[String],
) -> Result<Reply, ReplyError> {
    let mut rest = pieces.iter().peekable();
    let event = match forced {
        Some(event) => event,
        None => match rest.next() {
            Some(Piece::Special(END_OF_TEXT)) => return Ok(Reply::End),
            Some(Piece::Special(token)) => Event::ALL
                .into_iter()
                .find(|&e| event_token(e) == *token)
                .ok_or_else(|| ReplyError::NoEvent(token.to_string()))?,
            Some(Piece::Text(text)) => return Err(ReplyError::NoEvent(text.clone())),
            None => return Err(ReplyError::Short("event")),
        },
    };
    // Text up to the next special token (which is consumed and returned).
    let mut text_until = |what| {
        let mut text = String::new();
        loop {
            match rest.next() {
                Some(Piece::Text(t)) => text.push_str(t),
                Some(Piece::Special(s)) => return Ok((text, *s)),
                None => return Err(ReplyError::Short(what)),
            }
        }
    };
    let (locals_text, _) = text_until("action")?;
    let (source, after) = text_until("end of frame")?;
    let value = match after {
        ARG_SEP => {
            let (text, _) = text_until("end of frame")?;
            Some(serde_json::from_str::<String>(&text).unwrap_or(text))
        }
        _ => None,
    };
    let locals = match locals_text.trim() {
        "" => Vars::new(),
        text => serde_json::from_str(text).map_err(|_| ReplyError::Locals(text.to_string()))?,
    };
    let wanted = source.trim_end_matches('\n');
    let wanted = wanted.strip_suffix(START_MARKER).unwrap_or(wanted);
    let line = lines
        .iter()
        .position(|l| l.strip_suffix(START_MARKER).unwrap_or(l) == wanted)
        .map(|i| i as u32 + 1);
    let frame = Frame {
        event,
        locals,
        source,
        value,
    };
    Ok(Reply::Frame(frame, line))
}

/// Python's `json.dumps` of a dict of strings: `{"a": "1", "b": "x"}`, non-ASCII as
/// `\uXXXX`.
pub fn json_dumps_object(vars: &Vars) -> String {
    let items: Vec<String> = vars
        .iter()
        .map(|(k, v)| format!("{}: {}", json_dumps_str(k), json_dumps_str(v)))
        .collect();
    format!("{{{}}}", items.join(", "))
}

/// Python's `json.dumps` of a string (`ensure_ascii`: everything past ASCII, and
/// control characters, escaped; a character past the BMP as a surrogate pair).
pub fn json_dumps_str(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests;
