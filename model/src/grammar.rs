//! What a predicted outcome may say, beyond being text: the shape of its body (locals as
//! an object of names to strings, then the optional sections, each once and in order).
//! The decoder asks this, token by token, so that a small model cannot invent a
//! variable, repeat one, ramble past a finished state, or dead-end in text that does
//! not parse. What the program's text allows (names it could bind, the function each
//! line belongs to) is the program model's ([`crate::program`]).

use crate::language::{GLOBALS, STDOUT, VALUE};

/// Longest string value a prediction may write (the tracer cuts reprs at 200).
pub const MAX_VALUE_CHARS: usize = 240;
/// Longest stdout text of one step.
pub const MAX_STDOUT_CHARS: usize = 2000;

/// `bytes` as whole characters and the first bytes of one cut off at the end (a
/// byte-level token may end inside a character); `None` if they are not UTF-8.
pub fn split_utf8(bytes: &[u8]) -> Option<(&str, &[u8])> {
    match std::str::from_utf8(bytes) {
        Ok(text) => Some((text, &[])),
        Err(e) if e.error_len().is_none() => {
            let (whole, begun) = bytes.split_at(e.valid_up_to());
            Some((std::str::from_utf8(whole).ok()?, begun))
        }
        Err(_) => None,
    }
}

/// What the body of one outcome may contain: known once its header is written.
#[derive(Clone, Debug, Default)]
pub struct BodySpec {
    /// Names that may appear as locals, sorted.
    pub local_names: Vec<String>,
    /// Names that may appear as globals, sorted.
    pub global_names: Vec<String>,
    /// Whether unchanged names may be carried with `"..": ".."`.
    pub diff: bool,
    /// Whether the state has a value (returns and exceptions).
    pub valued: bool,
    /// Names the locals must begin with (a frame's parameters, which come first in
    /// its locals).
    pub required: Vec<String>,
    /// The required names come in their order (a call's parameters, as its frame
    /// holds them), not in any order.
    pub ordered: bool,
    /// The locals are exactly the required names (a call of a function that closes
    /// over nothing).
    pub exact: bool,
    /// Names the locals must hold somewhere among them (a caller's, back from a call).
    pub held: Vec<String>,
    /// In a diff after one statement ran: the only names it can have changed
    /// (sorted). `None`: unknown, any name.
    pub changeable: Option<Vec<String>>,
    /// In a diff: names the locals hold whether written or carried by `..` (what the
    /// frame held and the step cannot unbind), so a diff without `..`, which writes
    /// the locals in full, must write them all.
    pub carried: Vec<String>,
    /// Whether the state writes stdout: `Some(true)` it must (a step over a `print`),
    /// `Some(false)` it cannot (a step that prints nothing), `None` either.
    pub stdout: Option<bool>,
    /// Whether the state writes globals: `Some(true)` it must, `Some(false)` it
    /// cannot (a call's globals are known, see `NextState::callee_globals`), `None`
    /// either.
    pub globals: Option<bool>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    Locals,
    Globals,
    Value,
    Stdout,
    ExitMessage,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Mode {
    ObjectOpen,
    /// After `{`: a key or `}`.
    FirstKey,
    /// After `,`: a key.
    NextKey,
    Key(String),
    Colon,
    ValueOpen,
    Str {
        chars: usize,
        escape: Escape,
        /// The text so far, kept only where it must equal `..`.
        rest_marker: Option<String>,
    },
    /// After an entry: `,` or `}`; `}` only after `..`.
    AfterEntry {
        was_rest: bool,
    },
    /// Before an exit error's type.
    ExitType(String),
    /// A part is complete: a new line (before a section) or the end.
    PartDone,
    /// After that new line: a section token.
    Section,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Escape {
    None,
    Backslash,
    /// Hex digits still to come in `\uXXXX`.
    Hex(u8),
    /// `\uD` written: the next digit must not make a UTF-16 surrogate (`\uD800` to
    /// `\uDFFF`), which no text the tracer writes holds alone and JSON cannot read.
    HexAfterD,
}

/// Where a body stands, fed one piece at a time.
#[derive(Clone, Debug)]
pub struct Body<'a> {
    spec: &'a BodySpec,
    part: Part,
    mode: Mode,
    /// Index into [GLOBALS, VALUE, STDOUT] of the first section that may still come.
    next_section: usize,
    used_keys: Vec<String>,
    /// The first bytes of a character a token ended inside (a key or a string may
    /// hold any character, and a byte-level token may split one).
    begun: Vec<u8>,
}

const SECTIONS: [&str; 3] = [GLOBALS, VALUE, STDOUT];

impl<'a> Body<'a> {
    /// The body of a state: its locals come first.
    pub fn state(spec: &'a BodySpec) -> Self {
        Body {
            spec,
            part: Part::Locals,
            mode: Mode::ObjectOpen,
            next_section: 0,
            used_keys: Vec::new(),
            begun: Vec::new(),
        }
    }

    /// The body after an exit token (`<|exit_normal|>` and friends): only stdout may
    /// follow a normal exit; an error first names its type and message; a program that
    /// never ends says why.
    pub fn exit(spec: &'a BodySpec, token: &str) -> Self {
        let mode = match token {
            crate::language::EXIT_ERROR => Mode::ExitType(String::new()),
            crate::language::EXIT_NEVER => Mode::ValueOpen,
            _ => Mode::PartDone,
        };
        Body {
            spec,
            part: Part::ExitMessage,
            mode,
            next_section: 2,
            used_keys: Vec::new(),
            begun: Vec::new(),
        }
    }

    /// Feed plain text; false if it cannot continue a well-formed body.
    pub fn push_str(&mut self, text: &str) -> bool {
        self.begun.is_empty() && text.chars().all(|c| self.push_char(c))
    }

    /// Feed a token's bytes, which may end inside a character or finish one that
    /// the last token began; false if they cannot continue a well-formed body.
    pub fn push_bytes(&mut self, bytes: &[u8]) -> bool {
        if self.begun.is_empty() {
            if let Ok(text) = std::str::from_utf8(bytes) {
                return self.push_text(text);
            }
        }
        let mut joined = std::mem::take(&mut self.begun);
        joined.extend_from_slice(bytes);
        let Some((text, begun)) = split_utf8(&joined) else {
            return false;
        };
        if !self.push_text(text) || !begun.is_empty() && !self.may_begin(begun) {
            return false;
        }
        self.begun = begun.to_vec();
        true
    }

    /// Whether a character that starts with `begun` may come next.
    fn may_begin(&self, begun: &[u8]) -> bool {
        match &self.mode {
            Mode::Key(key) => self.key_allowed(key, begun, false),
            Mode::Str { .. } => self.string_room().is_some_and(|room| room > 0),
            _ => false,
        }
    }

    /// Feed text that may hold section tokens.
    pub fn push_text(&mut self, mut text: &str) -> bool {
        if !self.begun.is_empty() {
            return false;
        }
        while !text.is_empty() {
            let section = SECTIONS.iter().find(|s| text.starts_with(**s));
            let taken = match section {
                Some(section) => self.push_section(section).then_some(section.len()),
                None => {
                    let c = text.chars().next().expect("text is not empty");
                    self.push_char(c).then_some(c.len_utf8())
                }
            };
            match taken {
                Some(n) => text = &text[n..],
                None => return false,
            }
        }
        true
    }

    /// Feed a section token (`<|globals|>` ...), allowed right after a part's new line.
    pub fn push_section(&mut self, token: &str) -> bool {
        if self.mode != Mode::Section {
            return false;
        }
        if !self.sections().contains(&token) {
            return false;
        }
        let index = SECTIONS
            .iter()
            .position(|s| *s == token)
            .expect("a section token");
        self.next_section = index + 1;
        self.part = [Part::Globals, Part::Value, Part::Stdout][index];
        self.used_keys.clear();
        self.mode = if self.part == Part::Globals {
            Mode::ObjectOpen
        } else {
            Mode::ValueOpen
        };
        true
    }

    /// The section tokens that may come now.
    pub fn sections(&self) -> Vec<&'static str> {
        let valued = self.spec.valued && self.part != Part::ExitMessage;
        let value_pending = valued && self.next_section < 2;
        let globals_pending = self.spec.globals == Some(true) && self.next_section < 1;
        (self.next_section..3)
            .filter(|&i| match i {
                0 => self.spec.globals != Some(false),
                1 => valued && !globals_pending,
                _ => !value_pending && !globals_pending && self.spec.stdout != Some(false),
            })
            .map(|i| SECTIONS[i])
            .collect()
    }

    /// Whether the outcome may end here (a return or exception state has its value,
    /// a state that must write stdout has it).
    pub fn can_end(&self) -> bool {
        let state = self.part != Part::ExitMessage;
        let value_pending = self.spec.valued && state && self.next_section < 2;
        let stdout_pending = self.spec.stdout == Some(true) && state && self.next_section < 3;
        let globals_pending = self.spec.globals == Some(true) && state && self.next_section < 1;
        let pending = value_pending || stdout_pending || globals_pending;
        self.mode == Mode::PartDone && !pending && self.begun.is_empty()
    }

    /// Inside an ordinary JSON string (not an escape, not the `..` marker): how many
    /// more plain characters it may take.
    pub fn string_room(&self) -> Option<usize> {
        if !self.begun.is_empty() {
            return None;
        }
        match &self.mode {
            Mode::Str {
                chars,
                escape: Escape::None,
                rest_marker: None,
            } => Some(self.max_chars().saturating_sub(*chars)),
            _ => None,
        }
    }

    /// Whether a section token is what must come next.
    pub fn wants_section(&self) -> bool {
        self.mode == Mode::Section
    }

    fn names(&self) -> &[String] {
        match self.part {
            Part::Globals => &self.spec.global_names,
            _ => self
                .spec
                .changeable
                .as_deref()
                .unwrap_or(&self.spec.local_names),
        }
    }

    /// Required names not written yet (in the locals only).
    fn missing(&self) -> impl Iterator<Item = &String> {
        let required = match self.part {
            Part::Locals => self.spec.required.as_slice(),
            _ => &[],
        };
        required.iter().filter(|r| !self.used_keys.contains(r))
    }

    /// Held names not written yet (in the locals only).
    fn unwritten_held(&self) -> impl Iterator<Item = &String> {
        let held = match self.part {
            Part::Locals => self.spec.held.as_slice(),
            _ => &[],
        };
        held.iter().filter(|h| !self.used_keys.contains(h))
    }

    /// Whether the object may close: its required and held names are written, and
    /// locals written in full (no `..`) hold the names they carry.
    fn may_close(&self) -> bool {
        let written = |name: &String| self.used_keys.contains(name);
        let whole = self.part != Part::Locals
            || !self.spec.diff
            || self.used_keys.iter().any(|k| k == "..")
            || self.spec.carried.iter().all(written);
        whole && self.missing().next().is_none() && self.unwritten_held().next().is_none()
    }

    /// Whether one more name may be written in this object.
    fn another_key(&self) -> bool {
        let complete =
            self.part == Part::Locals && self.spec.exact && self.missing().next().is_none();
        !complete && self.key_allowed("", &[], false)
    }

    /// Whether `prefix` is a key that may be written (`whole`), or the start of one
    /// whose next character begins with the bytes `begun`.
    fn key_allowed(&self, prefix: &str, begun: &[u8], whole: bool) -> bool {
        if self.used_keys.iter().any(|k| k == prefix) && whole {
            return false;
        }
        // `name` is the key being written (or, mid-key, one it can still become).
        let fits = |name: &str| {
            if whole {
                name == prefix
            } else {
                name.starts_with(prefix) && name.as_bytes()[prefix.len()..].starts_with(begun)
            }
        };
        if let Some(first) = self.missing().next().filter(|_| self.spec.ordered) {
            return fits(first);
        }
        if self.missing().next().is_some() {
            return self.missing().any(|r| fits(r));
        }
        // Only the object's end can follow `..`: it waits for the held names.
        if self.spec.diff && self.unwritten_held().next().is_none() && fits("..") {
            return true;
        }
        if self.unwritten_held().any(|h| fits(h)) {
            return true;
        }
        let names = self.names();
        let from = names.partition_point(|n| n.as_str() < prefix);
        if whole {
            names.get(from).is_some_and(|n| n == prefix)
        } else {
            names[from..]
                .iter()
                .take_while(|n| n.starts_with(prefix))
                .any(|n| fits(n) && !self.used_keys.contains(n))
        }
    }

    fn max_chars(&self) -> usize {
        match self.part {
            Part::Stdout => MAX_STDOUT_CHARS,
            _ => MAX_VALUE_CHARS,
        }
    }

    fn push_char(&mut self, c: char) -> bool {
        let mode = std::mem::replace(&mut self.mode, Mode::PartDone);
        let next = match mode {
            Mode::ObjectOpen => (c == '{').then_some(Mode::FirstKey),
            Mode::FirstKey if c == '}' && self.may_close() => Some(Mode::PartDone),
            // A key opens only if some name can still be written (no dead ends).
            Mode::FirstKey | Mode::NextKey => {
                (c == '"' && self.another_key()).then(|| Mode::Key(String::new()))
            }
            Mode::Key(mut key) => {
                if c == '"' {
                    self.key_allowed(&key, &[], true).then(|| {
                        self.used_keys.push(key);
                        Mode::Colon
                    })
                } else {
                    key.push(c);
                    self.key_allowed(&key, &[], false).then_some(Mode::Key(key))
                }
            }
            Mode::Colon => (c == ':').then_some(Mode::ValueOpen),
            Mode::ValueOpen => (c == '"').then(|| {
                let rest = self.part == Part::Locals || self.part == Part::Globals;
                let is_rest = rest && self.used_keys.last().is_some_and(|k| k == "..");
                Mode::Str {
                    chars: 0,
                    escape: Escape::None,
                    rest_marker: is_rest.then(String::new),
                }
            }),
            Mode::Str {
                chars,
                escape,
                rest_marker,
            } => self.string_char(c, chars, escape, rest_marker),
            Mode::AfterEntry { was_rest } => match c {
                '}' if self.may_close() => Some(Mode::PartDone),
                ',' if !was_rest && self.another_key() => Some(Mode::NextKey),
                _ => None,
            },
            Mode::ExitType(mut name) => {
                if c == ' ' && !name.is_empty() {
                    Some(Mode::ValueOpen)
                } else if c.is_alphanumeric() || c == '_' || c == '.' {
                    name.push(c);
                    (name.len() <= 80).then_some(Mode::ExitType(name))
                } else {
                    None
                }
            }
            Mode::PartDone => (c == '\n' && !self.sections().is_empty()).then_some(Mode::Section),
            Mode::Section => None,
        };
        match next {
            Some(mode) => {
                self.mode = mode;
                true
            }
            None => false,
        }
    }

    fn string_char(
        &self,
        c: char,
        chars: usize,
        escape: Escape,
        rest_marker: Option<String>,
    ) -> Option<Mode> {
        let string = |chars, escape, rest_marker| Mode::Str {
            chars,
            escape,
            rest_marker,
        };
        match escape {
            Escape::Backslash => match c {
                '"' | '\\' | '/' | 'b' | 'f' | 'n' | 'r' | 't' if rest_marker.is_none() => {
                    Some(string(chars + 1, Escape::None, None))
                }
                'u' if rest_marker.is_none() => Some(string(chars + 1, Escape::Hex(4), None)),
                _ => None,
            },
            Escape::Hex(4) if matches!(c, 'd' | 'D') => {
                Some(string(chars, Escape::HexAfterD, None))
            }
            Escape::HexAfterD => {
                matches!(c, '0'..='7').then(|| string(chars, Escape::Hex(2), None))
            }
            Escape::Hex(left) => c.is_ascii_hexdigit().then(|| {
                let escape = if left > 1 {
                    Escape::Hex(left - 1)
                } else {
                    Escape::None
                };
                string(chars, escape, None)
            }),
            Escape::None => match c {
                '"' => match &rest_marker {
                    Some(text) if text != ".." => None,
                    _ => {
                        let object = matches!(self.part, Part::Locals | Part::Globals);
                        Some(if object {
                            Mode::AfterEntry {
                                was_rest: rest_marker.is_some(),
                            }
                        } else {
                            Mode::PartDone
                        })
                    }
                },
                // The `..` marker has no escapes.
                '\\' if rest_marker.is_none() => Some(string(chars, Escape::Backslash, None)),
                c if c.is_control() => None,
                c => {
                    if chars >= self.max_chars() {
                        return None;
                    }
                    let rest_marker = match rest_marker {
                        Some(mut text) => {
                            text.push(c);
                            if !"..".starts_with(text.as_str()) {
                                return None;
                            }
                            Some(text)
                        }
                        None => None,
                    };
                    Some(string(chars + 1, Escape::None, rest_marker))
                }
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(diff: bool, valued: bool) -> BodySpec {
        BodySpec {
            local_names: vec!["n".into(), "total".into(), "x".into()],
            global_names: vec!["LIMIT".into()],
            diff,
            valued,
            required: Vec::new(),
            ordered: false,
            exact: false,
            held: Vec::new(),
            changeable: None,
            carried: Vec::new(),
            stdout: None,
            globals: None,
        }
    }

    fn accepts(spec: &BodySpec, text: &str) -> bool {
        let mut body = Body::state(spec);
        feed(&mut body, text)
    }

    fn feed(body: &mut Body, text: &str) -> bool {
        body.push_text(text)
    }

    #[test]
    fn a_character_split_between_tokens_is_judged_whole() {
        // `π` is two bytes, `größe` holds one of two: byte-level tokens may cut both.
        let mut s = spec(false, false);
        s.local_names = vec!["größe".into(), "π".into()];
        let pi = "π".as_bytes();
        let mut body = Body::state(&s);
        assert!(body.push_bytes(b"{\"") && body.push_bytes(&pi[..1]));
        assert!(!body.can_end() && body.string_room().is_none());
        assert!(!body.clone().push_bytes(b"x"), "not UTF-8");
        assert!(body.push_bytes(&pi[1..]) && body.push_bytes(b"\":\""));
        // A value may hold any character, cut anywhere.
        let e = "é".as_bytes();
        assert!(body.push_bytes(&[b"3", &e[..1]].concat()) && body.push_bytes(&e[1..]));
        assert!(body.push_bytes(b"\",\"gr\xc3"), "the first byte of ö");
        assert!(
            !body.clone().push_bytes(b"\xb6\x83"),
            "ö, then a stray byte"
        );
        let mut body = Body::state(&s);
        assert!(body.push_bytes(b"{\"gr"));
        assert!(
            !body.clone().push_bytes("ü".as_bytes()),
            "no name goes on with ü"
        );
        assert!(
            body.clone().push_bytes(&"ü".as_bytes()[..1]),
            "ü begins as ö does"
        );
        assert!(!body.clone().push_bytes(&"π".as_bytes()[..1]), "π does not");
        assert!(body.push_bytes("öße\":\"2\"}".as_bytes()) && body.can_end());
    }

    #[test]
    fn well_formed_bodies_are_accepted_and_can_end() {
        for text in [
            r#"{}"#,
            r#"{"n":"3","x":"[1, \"a\"]"}"#,
            r#"{"x":"2","..":".."}"#,
            "{\"n\":\"1\"}\n<|globals|>{\"LIMIT\":\"9\"}\n<|value|>\"4\"\n<|stdout|>\"hi\\n\"",
            "{\"n\":\"1\"}\n<|stdout|>\"\\u00e9\"",
        ] {
            let s = spec(true, text.contains(VALUE));
            let mut body = Body::state(&s);
            assert!(feed(&mut body, text), "{text}");
            assert!(body.can_end(), "{text}");
        }
    }

    #[test]
    fn escapes_are_of_characters_json_can_read() {
        let s = spec(true, false);
        assert!(accepts(&s, r#"{"x":"\u001b\uD7ff"#));
        assert!(
            !accepts(&s, r#"{"x":"\uDD"#),
            "a surrogate alone is no character"
        );
        assert!(!accepts(&s, r#"{"x":"\ud8"#));
    }

    #[test]
    fn invented_repeated_or_misplaced_names_are_refused() {
        let s = spec(true, true);
        assert!(!accepts(&s, r#"{"words"#));
        assert!(accepts(&s, r#"{"to"#));
        assert!(!accepts(&s, r#"{"n":"1","n""#));
        assert!(!accepts(&s, r#"{"..":"..","x""#));
        assert!(!accepts(&s, r#"{"..":"x"#));
        assert!(!accepts(&s, r#"{"..":"\"#));
        assert!(!accepts(&s, r#"{"LIMIT""#));
        assert!(!accepts(&spec(false, true), r#"{"..""#));
    }

    #[test]
    fn a_diff_names_only_what_the_statement_can_change() {
        let s = BodySpec {
            changeable: Some(vec!["total".into(), "x".into()]),
            ..spec(true, false)
        };
        assert!(!accepts(&s, r#"{"n":"#), "n cannot change");
        assert!(accepts(&s, r#"{"total":"4","x":"1","..":".."}"#));
    }

    #[test]
    fn a_diff_in_full_writes_every_name_it_carries() {
        let d = BodySpec {
            carried: vec!["n".into(), "x".into()],
            ..spec(true, false)
        };
        assert!(!accepts(&d, r#"{}"#), "n and x cannot vanish");
        assert!(!accepts(&d, r#"{"x":"1"}"#), "n cannot vanish");
        assert!(accepts(&d, r#"{"x":"1","..":".."}"#));
        assert!(accepts(&d, r#"{"n":"2","x":"1"}"#), "both changed");
        assert!(accepts(&d, r#"{"n":"2","x":"1","total":"3"}"#));
        // Written in full, nothing is carried: the rule is for diffs.
        let full = BodySpec {
            carried: vec!["n".into()],
            ..spec(false, false)
        };
        assert!(accepts(&full, r#"{}"#));
    }

    #[test]
    fn held_names_come_anywhere_but_all_of_them() {
        let s = BodySpec {
            held: vec!["total".into(), "n".into()],
            ..spec(false, false)
        };
        assert!(accepts(&s, r#"{"x":"1","total":"2","n":"3"}"#));
        assert!(!accepts(&s, r#"{"x":"1","n":"3"}"#), "total is missing");
        assert!(!accepts(&s, r#"{}"#));
        // In a diff, `..` (after which only `}` may come) waits for the held names,
        // which may be written even where the statement's changeable names leave
        // them out.
        let d = BodySpec {
            held: vec!["x".into()],
            changeable: Some(vec!["y".into()]),
            ..spec(true, false)
        };
        assert!(!accepts(&d, r#"{"..":".."}"#));
        assert!(accepts(&d, r#"{"x":"1","..":".."}"#));
        assert!(accepts(&d, r#"{"y":"2","x":"1","..":".."}"#));
        let mut body = Body::state(&d);
        assert!(feed(&mut body, r#"{""#));
        assert!(!body.clone().push_str(".."), "no dead end after the marker");
    }

    #[test]
    fn parameters_come_first_and_all_of_them() {
        let s = BodySpec {
            required: vec!["x".into(), "n".into()],
            ..spec(false, false)
        };
        assert!(!accepts(&s, r#"{"total""#), "a parameter first");
        assert!(!accepts(&s, r#"{}"#));
        assert!(!accepts(&s, r#"{"x":"1"}"#), "n is missing");
        assert!(accepts(&s, r#"{"n":"1","x":"2","total":"3"}"#));
        let ordered = BodySpec {
            ordered: true,
            ..s.clone()
        };
        assert!(!accepts(&ordered, r#"{"n""#), "x comes first");
        assert!(accepts(&ordered, r#"{"x":"2","n":"1","total":"3"}"#));
        let exact = BodySpec { exact: true, ..s };
        assert!(
            !accepts(&exact, r#"{"n":"1","x":"2","#),
            "nothing but the parameters"
        );
        assert!(accepts(&exact, r#"{"n":"1","x":"2"}"#));
        let nothing = BodySpec {
            exact: true,
            required: Vec::new(),
            ..spec(false, false)
        };
        assert!(!accepts(&nothing, r#"{""#));
        assert!(accepts(&nothing, r#"{}"#));
        let few = BodySpec {
            local_names: vec!["x".into()],
            ..spec(false, false)
        };
        assert!(
            !accepts(&few, r#"{"x":"1","#),
            "no key can follow: no dead end"
        );
    }

    #[test]
    fn sections_come_once_in_order_and_value_only_when_valued() {
        assert!(!accepts(&spec(false, false), "{}\n<|value|>"));
        assert!(!accepts(
            &spec(false, true),
            "{}\n<|stdout|>\"a\"\n<|globals|>"
        ));
        assert!(!accepts(&spec(false, true), "{}\n<|stdout|>\"a\"\n"));
        assert!(!accepts(&spec(false, true), "{}\n\n"));
        assert!(!accepts(&spec(false, true), "{\"n\":1"));
        let valued = spec(false, true);
        let mut body = Body::state(&valued);
        assert!(body.push_text("{}\n<|globals|>{}"));
        assert!(!body.can_end(), "a return state needs its value");
        assert!(
            !body.clone().push_text("\n<|stdout|>"),
            "no skipping the value"
        );
        assert!(body.push_text("\n<|value|>\"1\""));
        assert!(body.can_end());
    }

    #[test]
    fn stdout_comes_where_it_must_and_never_where_it_cannot() {
        let must = BodySpec {
            stdout: Some(true),
            ..spec(false, false)
        };
        let mut body = Body::state(&must);
        assert!(body.push_text("{}"));
        assert!(!body.can_end(), "a print's step writes its stdout");
        assert!(body.push_text("\n<|stdout|>\"a\\n\""));
        assert!(body.can_end());
        let never = BodySpec {
            stdout: Some(false),
            ..spec(false, false)
        };
        assert!(accepts(&never, "{}"));
        assert!(!accepts(&never, "{}\n<|stdout|>"));
    }

    #[test]
    fn globals_come_where_they_must_and_never_where_they_cannot() {
        let must = BodySpec {
            globals: Some(true),
            valued: true,
            ..spec(false, false)
        };
        let mut body = Body::state(&must);
        assert!(body.push_text("{}"));
        assert!(!body.can_end(), "known globals are written");
        assert!(!body.clone().push_text("\n<|value|>"), "and first");
        assert!(body.push_text("\n<|globals|>{\"LIMIT\":\"1\"}\n<|value|>\"2\""));
        assert!(body.can_end());
        let never = BodySpec {
            globals: Some(false),
            ..spec(false, false)
        };
        assert!(accepts(&never, "{}"));
        assert!(!accepts(&never, "{}\n<|globals|>"));
    }

    #[test]
    fn strings_are_valid_json_and_bounded() {
        let s = spec(false, false);
        assert!(!accepts(&s, "{\"n\":\"a\nb"));
        assert!(!accepts(&s, r#"{"n":"\q"#));
        let long = format!("{{\"n\":\"{}", "a".repeat(MAX_VALUE_CHARS + 1));
        assert!(!accepts(&s, &long));
    }

    #[test]
    fn plain_text_fits_a_string_by_length() {
        let s = spec(false, false);
        let mut body = Body::state(&s);
        assert_eq!(body.string_room(), None);
        assert!(body.push_text("{\"n\":\"ab"));
        let room = body.string_room().unwrap();
        assert_eq!(room, MAX_VALUE_CHARS - 2);
        assert!(body.clone().push_str(&"x".repeat(room)));
        assert!(!body.clone().push_str(&"x".repeat(room + 1)));
        assert!(body.push_text("\\"));
        assert_eq!(body.string_room(), None, "inside an escape");
    }

    #[test]
    fn exits_have_their_own_shapes() {
        let s = spec(false, false);
        let mut error = Body::exit(&s, crate::language::EXIT_ERROR);
        assert!(feed(&mut error, "ValueError \"bad\"\n<|stdout|>\"x\""));
        assert!(error.can_end());
        let mut normal = Body::exit(&s, crate::language::EXIT_NORMAL);
        assert!(normal.can_end());
        assert!(!feed(&mut normal.clone(), "\ndef"));
        assert!(!feed(&mut normal.clone(), "\n<|value|>"));
        assert!(feed(&mut normal, "\n<|stdout|>\"ok\""));
    }
}
