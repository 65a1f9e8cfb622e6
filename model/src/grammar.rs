//! What a predicted outcome may say, beyond being text: the shape of its body (locals as
//! an object of names to strings, then the optional sections, each once and in order)
//! and what the program's text allows (names it could bind, the function each line
//! belongs to). The decoder asks these, token by token, so that a small model cannot
//! invent a variable, repeat one, ramble past a finished state, or dead-end in text
//! that does not parse.

use crate::language::{GLOBALS, STDOUT, VALUE};
use crate::program::lexer::logical_starts;
use std::collections::BTreeSet;

/// Longest string value a prediction may write (the tracer cuts reprs at 200).
pub const MAX_VALUE_CHARS: usize = 240;
/// Longest stdout text of one step.
pub const MAX_STDOUT_CHARS: usize = 2000;

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
        }
    }

    /// Feed plain text; false if it cannot continue a well-formed body.
    pub fn push_str(&mut self, text: &str) -> bool {
        text.chars().all(|c| self.push_char(c))
    }

    /// Feed text that may hold section tokens.
    pub fn push_text(&mut self, mut text: &str) -> bool {
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
        (self.next_section..3)
            .filter(|&i| match i {
                1 => valued,
                2 => !value_pending,
                _ => true,
            })
            .map(|i| SECTIONS[i])
            .collect()
    }

    /// Whether the outcome may end here (a return or exception state has its value).
    pub fn can_end(&self) -> bool {
        let value_pending =
            self.spec.valued && self.part != Part::ExitMessage && self.next_section < 2;
        self.mode == Mode::PartDone && !value_pending
    }

    /// Inside an ordinary JSON string (not an escape, not the `..` marker): how many
    /// more plain characters it may take.
    pub fn string_room(&self) -> Option<usize> {
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

    /// Whether the object may close: its required and held names are written.
    fn may_close(&self) -> bool {
        self.missing().next().is_none() && self.unwritten_held().next().is_none()
    }

    /// Whether one more name may be written in this object.
    fn another_key(&self) -> bool {
        let complete =
            self.part == Part::Locals && self.spec.exact && self.missing().next().is_none();
        !complete && self.key_allowed("", false)
    }

    fn key_allowed(&self, prefix: &str, whole: bool) -> bool {
        if self.used_keys.iter().any(|k| k == prefix) && whole {
            return false;
        }
        // `name` is the key being written (or, mid-key, one it can still become).
        let fits = |name: &str| {
            if whole {
                name == prefix
            } else {
                name.starts_with(prefix)
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
                .any(|n| !self.used_keys.contains(n))
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
                    self.key_allowed(&key, true).then(|| {
                        self.used_keys.push(key);
                        Mode::Colon
                    })
                } else {
                    key.push(c);
                    self.key_allowed(&key, false).then_some(Mode::Key(key))
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

/// Python's keywords: never a variable's name.
const KEYWORDS: [&str; 35] = [
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

/// Every identifier in `source` but the keywords (a superset of the names a run can
/// bind).
pub fn identifiers(source: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut current = String::new();
    for c in source.chars().chain(std::iter::once(' ')) {
        if c.is_alphanumeric() || c == '_' {
            current.push(c);
        } else {
            let keyword = KEYWORDS.contains(&current.as_str());
            if !keyword && current.chars().next().is_some_and(|f| !f.is_ascii_digit()) {
                names.insert(std::mem::take(&mut current));
            }
            current.clear();
        }
    }
    names
}

/// Which frame runs each line of a program, and the frames that `def` and `class`
/// lines start: a `def` line runs in the enclosing frame (which defines the function),
/// while the `call` event of the function it defines stands on it (or on its first
/// decorator).
#[derive(Clone, Debug, Default)]
pub struct Layout {
    /// By line number - 1: the function, class body or `<module>` running the line.
    pub scope: Vec<String>,
    /// Line of a `call` event -> the function (or class) whose frame starts there.
    pub calls: std::collections::BTreeMap<u32, String>,
    /// A class body's frame starts with a `line` event on the `class` line itself.
    pub classes: std::collections::BTreeMap<u32, String>,
    /// Generators and coroutines: their frames resume with a `call` event on the line
    /// where they paused.
    pub resumable: BTreeSet<String>,
}

impl Layout {
    pub fn of(source: &str) -> Self {
        let lines: Vec<&str> = source.lines().collect();
        let starts = logical_starts(source, lines.len());
        // Open blocks: (indent, name).
        let mut open: Vec<(usize, String)> = Vec::new();
        let mut scope = Vec::with_capacity(lines.len());
        let mut calls = std::collections::BTreeMap::new();
        let mut classes = std::collections::BTreeMap::new();
        let mut decorator: Option<u32> = None;
        for (i, line) in lines.iter().enumerate() {
            let text = line.trim_start();
            let blank = text.is_empty() || text.starts_with('#');
            if starts[i] && !blank {
                let indent = line.len() - text.len();
                while open.last().is_some_and(|(at, _)| *at >= indent) {
                    open.pop();
                }
                let here = open
                    .last()
                    .map_or_else(|| "<module>".to_string(), |(_, n)| n.clone());
                if text.starts_with('@') {
                    decorator.get_or_insert(i as u32 + 1);
                } else if let Some(name) = block_name(text) {
                    calls.insert(i as u32 + 1, name.clone());
                    if text.starts_with("class ") {
                        classes.insert(i as u32 + 1, name.clone());
                    }
                    if let Some(first) = decorator.take() {
                        calls.insert(first, name.clone());
                    }
                    open.push((indent, name));
                    scope.push(here);
                    continue;
                } else {
                    decorator = None;
                }
            }
            scope.push(
                open.last()
                    .map_or_else(|| "<module>".to_string(), |(_, n)| n.clone()),
            );
        }
        let mut resumable = BTreeSet::new();
        for (text, frame) in lines.iter().zip(&scope) {
            let words = text.split(|c: char| !(c.is_alphanumeric() || c == '_'));
            if words.into_iter().any(|w| w == "yield" || w == "await") {
                resumable.insert(frame.clone());
            }
        }
        Layout {
            scope,
            calls,
            classes,
            resumable,
        }
    }

    /// The parameters of each function whose `call` event may stand on a line (a `def`
    /// line, or the first decorator above one).
    pub fn parameters(&self, source: &str) -> std::collections::BTreeMap<u32, Vec<String>> {
        let lines: Vec<&str> = source.lines().collect();
        self.calls
            .keys()
            .filter_map(|&line| {
                let def = (line..line + 20).find(|&l| {
                    lines
                        .get(l as usize - 1)
                        .is_some_and(|t| !t.trim_start().starts_with('@'))
                })?;
                Some((line, crate::entry::parameter_names(source, def)?))
            })
            .collect()
    }

    /// The names each function's frame can hold as locals (by function name; functions
    /// of the same name share a set): what its lines bind (parameters, assignment, `for`
    /// and `as` targets, imports, `:=`, `nonlocal`) and, for a nested function, what
    /// its enclosing functions can hold (free variables). A superset, never a subset:
    /// continuation lines of a statement count whole. The module's frame is left out
    /// (it holds every module-level name, also from star imports).
    /// `parameters` is [`Layout::parameters`] of the same source.
    pub fn frame_names(
        &self,
        source: &str,
        parameters: &std::collections::BTreeMap<u32, Vec<String>>,
    ) -> std::collections::HashMap<String, Vec<String>> {
        let lines: Vec<&str> = source.lines().collect();
        let starts = logical_starts(source, lines.len());
        let mut bound: std::collections::HashMap<String, BTreeSet<String>> = Default::default();
        let mut parents: Vec<(String, String)> = Vec::new();
        for (i, text) in lines.iter().enumerate() {
            let line = i as u32 + 1;
            if let Some(defined) = self.calls.get(&line) {
                let code = text.trim_start();
                if code.starts_with("def ") || code.starts_with("async def ") {
                    let params = parameters.get(&line).cloned().unwrap_or_default();
                    bound.entry(defined.clone()).or_default().extend(params);
                    parents.push((defined.clone(), self.scope[i].clone()));
                }
                // A def binds its name where it runs (a decorated one stays a local).
                if self.scope[i] != "<module>" {
                    bound
                        .entry(self.scope[i].clone())
                        .or_default()
                        .insert(defined.clone());
                }
                continue;
            }
            let Some(frame) = self.scope.get(i).filter(|f| f.as_str() != "<module>") else {
                continue;
            };
            let names = if starts[i] {
                bound_by(text)
            } else {
                identifiers(text)
            };
            bound.entry(frame.clone()).or_default().extend(names);
        }
        // Free variables: what an enclosing function holds (classes do not enclose).
        let classes: BTreeSet<&String> = self.classes.values().collect();
        for _ in 0..8 {
            for (child, parent) in &parents {
                if parent == "<module>" || classes.contains(parent) || parent == child {
                    continue;
                }
                let inherited = bound.get(parent).cloned().unwrap_or_default();
                bound.entry(child.clone()).or_default().extend(inherited);
            }
        }
        bound
            .into_iter()
            .map(|(frame, set)| (frame, set.into_iter().collect()))
            .collect()
    }

    /// The frames that can run `line` (1-based) for an event of this kind: for a
    /// `call`, the function defined there (and the module, whose frame starts on line
    /// 1); otherwise the enclosing function, class body or module (and, on a `class`
    /// line, the class body). Empty where no such event can be.
    pub fn frames_of(&self, line: u32, call: bool) -> Vec<&str> {
        let mut frames = Vec::new();
        let index = (line as usize).checked_sub(1);
        if call {
            frames.extend(self.calls.get(&line).map(String::as_str));
            if line == 1 {
                frames.push("<module>");
            }
            let paused_in = index.and_then(|i| self.scope.get(i));
            frames.extend(
                paused_in
                    .filter(|f| self.resumable.contains(*f))
                    .map(String::as_str),
            );
        } else if let Some(index) = index {
            frames.extend(self.scope.get(index).map(String::as_str));
            frames.extend(self.classes.get(&line).map(String::as_str));
        }
        frames
    }

    /// Where a frame of `caller`, shown at `line`, calls `callee`: `line` itself if it
    /// names the callee, else the one line of the caller that does (not a `def`
    /// line; a class body is called from its `class` line). A stack derived after a
    /// jump keeps the caller's line from before the jump (a breakpoint hit from the
    /// module's `def` line showed the module at that `def`); calls by no name
    /// (`__init__`, operators) keep `line`, as does a callee named on several lines.
    /// `lines` are the program's lines.
    pub fn call_site<S: AsRef<str>>(
        &self,
        lines: &[S],
        caller: &str,
        line: u32,
        callee: &str,
    ) -> u32 {
        let names = |l: u32| {
            lines.get((l as usize).wrapping_sub(1)).is_some_and(|text| {
                let code = text.as_ref().trim_start();
                let def = code.starts_with("def ") || code.starts_with("async def ");
                !def && words(code).any(|w| w == callee)
            })
        };
        if names(line) {
            return line;
        }
        let mut sites = (1..=lines.len() as u32)
            .filter(|&l| self.scope.get(l as usize - 1).is_some_and(|s| s == caller) && names(l));
        match (sites.next(), sites.next()) {
            (Some(site), None) => site,
            _ => line,
        }
    }
}

/// The names one logical line (its first physical line) may bind: assignment and
/// augmented-assignment targets, `for` targets, `as` targets, imports, `:=` targets,
/// `nonlocal` and `global` names, `case` patterns. Over-approximate on purpose.
pub(crate) fn bound_by(text: &str) -> BTreeSet<String> {
    let code = text.split(" #").next().unwrap_or(text).trim();
    let mut names = BTreeSet::new();
    let first = code
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .next();
    if matches!(
        first,
        Some("import" | "from" | "global" | "nonlocal" | "case" | "with" | "except")
    ) {
        names.extend(identifiers(code));
    }
    // `for` targets (loops and comprehensions), `as` targets, `:=` targets.
    let words: Vec<&str> = code
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    for (k, word) in words.iter().enumerate() {
        if *word == "for" {
            let rest = &words[k + 1..];
            let end = rest.iter().position(|w| *w == "in").unwrap_or(rest.len());
            names.extend(rest[..end].iter().map(|w| w.to_string()));
        }
        if *word == "as" {
            names.extend(words.get(k + 1).map(|w| w.to_string()));
        }
    }
    for (at, _) in code.match_indices(":=") {
        names.insert(trailing_name(code[..at].trim_end()).to_string());
    }
    // Assignment targets: everything before the last `=` outside brackets that is not
    // part of a comparison (an augmented `+=` included).
    let mut last = None;
    for (at, c, depth) in crate::program::lexer::code_chars(code) {
        if c != '=' || depth != 0 {
            continue;
        }
        let before = &code[..at];
        let prev = before.chars().next_back();
        // `<<=` and `>>=` assign; `<=`, `>=`, `==`, `!=` and `:=` do not here.
        let shift = before.ends_with("<<") || before.ends_with(">>");
        let comparison = matches!(prev, Some('=' | '!' | '<' | '>' | ':')) && !shift
            || code[at + 1..].starts_with('=');
        if !comparison {
            last = Some(at);
        }
    }
    if let Some(at) = last {
        names.extend(identifiers(&code[..at]));
    }
    names.retain(|n| !n.is_empty() && !KEYWORDS.contains(&n.as_str()));
    names
}

/// Names the program mentions other than to call them right there (`key=rank`,
/// `apply(f, x)`, `@decorate`, `handlers = {'a': on_a}`), and functions defined inside
/// other functions (returned, stored, wrapped): a line may call these without naming
/// them. A `def` or `class` line's own name does not count.
pub fn called_from_afar(source: &str, layout: &Layout) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for line in source.lines() {
        let code = line.split(" #").next().unwrap_or(line);
        let trimmed = code.trim_start();
        let defined = ["def ", "async def ", "class "]
            .iter()
            .find_map(|k| trimmed.strip_prefix(k))
            .map(|rest| trailing_name(&rest[..rest.find(['(', ':']).unwrap_or(rest.len())]));
        let mut rest = code;
        while let Some(start) = rest.find(|c: char| c.is_alphanumeric() || c == '_') {
            let after = &rest[start..];
            let len = after
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            let word = &after[..len];
            let called = after[len..].trim_start().starts_with('(');
            // A string's prefix (`f"..."`, `r'...'`) is no name.
            let prefix = after[len..].starts_with(['\'', '"']);
            if !called && !prefix && is_name(word) && defined != Some(word) {
                names.insert(word.to_string());
            }
            rest = &after[len..];
        }
    }
    let classes: BTreeSet<&String> = layout.classes.values().collect();
    for (&line, function) in &layout.calls {
        let enclosing = layout.scope.get(line as usize - 1);
        if enclosing.is_some_and(|e| e != "<module>" && !classes.contains(e)) {
            names.insert(function.clone());
        }
    }
    names
}

/// The words of `text`: its runs of identifier characters (and empty pieces between
/// other characters).
pub(crate) fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
}

/// Whether `text` is one identifier (a name, or a keyword such as `True`).
pub(crate) fn is_name(text: &str) -> bool {
    !text.is_empty()
        && !text.starts_with(|c: char| c.is_ascii_digit())
        && text.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// The identifier `text` ends with (empty if none).
pub(crate) fn trailing_name(text: &str) -> &str {
    let start = text
        .trim_end_matches(|c: char| c.is_alphanumeric() || c == '_')
        .len();
    &text[start..]
}

fn block_name(text: &str) -> Option<String> {
    let rest = text
        .strip_prefix("def ")
        .or_else(|| text.strip_prefix("async def "))
        .or_else(|| text.strip_prefix("class "))?;
    let name: String = rest
        .trim_start()
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty()).then_some(name)
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

    #[test]
    fn names_passed_around_or_nested_may_be_called_from_afar() {
        let source = "\
def rank(v):
    return v
def outer():
    def inner():
        return 1
    return inner
def main(xs):
    print(sorted(xs, key=rank))
    return outer()
";
        let source = format!("{source}    print(f\"{{xs}}\")\n");
        let afar = called_from_afar(&source, &Layout::of(&source));
        assert!(!afar.contains("f"), "a string prefix");
        assert!(afar.contains("rank"), "passed as a key");
        assert!(afar.contains("inner"), "nested, and returned");
        assert!(!afar.contains("outer"), "only ever called by name");
        assert!(!afar.contains("main"), "a def line's own name");
    }

    #[test]
    fn identifiers_skip_numbers() {
        let names = identifiers("x1 = 2 * y_ + 3.5e2 if True else None");
        assert_eq!(
            names.into_iter().collect::<Vec<_>>(),
            vec!["x1".to_string(), "y_".to_string()]
        );
    }

    #[test]
    fn bound_names_are_targets_not_reads() {
        let names = |t: &str| bound_by(t).into_iter().collect::<Vec<_>>().join(" ");
        assert_eq!(names("total = len(xs) + offset"), "total");
        assert_eq!(names("a, (b, c) = f(x=1)"), "a b c");
        assert_eq!(names("count += step"), "count");
        assert_eq!(names("x <<= 2"), "x");
        assert_eq!(names("if a == b and c <= d:"), "");
        assert_eq!(names("for i, (k, v) in enumerate(d.items()):"), "i k v");
        assert_eq!(names("ys = [w * 2 for w in xs if w != 0]"), "w ys");
        assert_eq!(names("with open(p) as fh:"), "fh open p");
        assert_eq!(names("if (n := len(s)) > 3:"), "n");
        assert_eq!(names("print('x =', y)"), "");
        assert_eq!(names("d[key] = value"), "d key");
    }

    #[test]
    fn a_caller_is_shown_on_the_line_that_calls() {
        let site = |source: &str, caller: &str, line: u32, callee: &str| {
            let lines: Vec<&str> = source.lines().collect();
            Layout::of(source).call_site(&lines, caller, line, callee)
        };
        let two = "def fib(n):\n    return n\n\nclass P:\n    def __init__(self):\n        pass\n\ntotal = fib(3)\np = P()\nq = fib(1) + fib(2)\n";
        // Line 1 (the def) does not call fib; two lines do: kept.
        assert_eq!(site(two, "<module>", 1, "fib"), 1);
        // A line that names the callee stays.
        assert_eq!(site(two, "<module>", 10, "fib"), 10);
        // __init__ is named on no line: kept.
        assert_eq!(site(two, "<module>", 1, "__init__"), 1);
        let one = "def fib(n):\n    return n\n\ntotal = 0\nfor k in [3, 5]:\n    total = total + fib(k)\n";
        assert_eq!(site(one, "<module>", 1, "fib"), 6);
        assert_eq!(site(one, "<module>", 4, "fib"), 6);
        assert_eq!(site(one, "fib", 2, "other"), 2);
        // A class body is called from its class line.
        assert_eq!(
            site("class K:\n    z = 1\nk = K()\n", "<module>", 1, "K"),
            1
        );
    }

    #[test]
    fn a_nested_function_can_hold_what_encloses_it() {
        let source = "def outer(a):\n    b = a + 1\n    def inner(c):\n        return b + c + len(a)\n    return inner\nclass K:\n    z = 1\n    def m(self):\n        print(z)\n";
        let layout = Layout::of(source);
        let names = layout.frame_names(source, &layout.parameters(source));
        assert_eq!(names["outer"], vec!["a", "b", "inner"]);
        assert_eq!(names["inner"], vec!["a", "b", "c", "inner"]);
        assert_eq!(names["K"], vec!["m", "z"]);
        assert_eq!(
            names["m"],
            vec!["self"],
            "a class body does not enclose its methods"
        );
    }

    #[test]
    fn layout_follows_blocks_strings_and_decorators() {
        let source = "import f\n\n@deco\ndef a(x,\n      y):\n    s = \"\"\"\ntext at column 0\n\"\"\"\n    return (x +\ny)\n\nclass B:\n    def m(self):\n        pass\n    z = 1\nq = a(1, 2)\n";
        let layout = Layout::of(source);
        let scopes: Vec<String> = (1..=16)
            .map(|l| layout.frames_of(l, false).join("|"))
            .collect();
        assert_eq!(
            scopes,
            vec![
                "<module>",
                "<module>",
                "<module>",
                "<module>",
                "a",
                "a",
                "a",
                "a",
                "a",
                "a",
                "a",
                "<module>|B",
                "B",
                "m",
                "B",
                "<module>"
            ]
        );
        let calls: Vec<(u32, &str)> = layout.calls.iter().map(|(l, n)| (*l, n.as_str())).collect();
        assert_eq!(calls, vec![(3, "a"), (4, "a"), (12, "B"), (13, "m")]);
        assert!(layout.frames_of(5, true).is_empty());
        assert_eq!(layout.frames_of(1, true), vec!["<module>"]);
        let generator = Layout::of("def g(n):\n    for i in range(n):\n        yield i\n");
        assert_eq!(
            generator.frames_of(3, true),
            vec!["g"],
            "a generator resumes where it paused"
        );
    }
}
