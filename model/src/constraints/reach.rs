//! Where the next state may stand: the frames a step can reach, the lines control flow
//! allows in them, and the header (`LINE DEPTH FUNCTION`) those admit.

use super::NextState;
use crate::language;
use crate::program::ProgramModel;
use crate::trie::{NodeId, Trie};
use crate::{Action, Event};
use std::collections::{BTreeMap, BTreeSet};

impl NextState<'_> {
    /// The frames a forward step can reach from the current state, as (depth,
    /// function if known); `None`: any. A frame is left only through its `return` or
    /// `exception` state, so from inside a frame a step stays in it (same depth, same
    /// function) or goes one deeper into a call; from a frame's end it goes to the
    /// caller (an exception may also be caught in the frame that raised it).
    pub fn frames(&self, event: &str) -> Option<Vec<(u32, Option<&str>)>> {
        let prev = self.prev;
        let d = prev.depth;
        let here = (d, Some(prev.function.as_str()));
        let caller = d
            .checked_sub(1)
            .map(|c| (c, prev.stack.last().map(|f| f.function.as_str())));
        let inside = matches!(prev.event, Event::Line | Event::Call);
        match self.action {
            Action::StepInto if event == "<|call|>" => Some(match prev.event {
                _ if inside => vec![(d + 1, None)],
                Event::Return => vec![(d, None)],
                _ => vec![(d, None), (d + 1, None)],
            }),
            Action::StepInto | Action::StepOver | Action::StepReturn => Some(match prev.event {
                Event::Return => caller.into_iter().collect(),
                Event::Exception => std::iter::once(here).chain(caller).collect(),
                _ => vec![here],
            }),
            // Backwards: a frame's call is entered from its caller's line (or, one
            // state back, right after a sibling call's end, as in `f(g(x))`); before
            // any other state of a frame comes the frame itself, or the end of a
            // call it made (one step back into it). A sibling call ends with its
            // `return` (after an `exception`, too), so a `line` or `call` one step
            // before a call is the caller's.
            Action::InvStepInto if prev.event == Event::Call => Some(match event {
                "<|return|>" | "<|exception|>" => vec![(d, None)],
                _ => caller.into_iter().collect(),
            }),
            Action::InvStepOver | Action::InvStepCall if prev.event == Event::Call => {
                Some(caller.into_iter().collect())
            }
            // One step back into a call made here lands on its end: a callee's last
            // state is its `return`.
            Action::InvStepInto => Some(match event {
                "<|return|>" => vec![(d + 1, None)],
                "<|exception|>" => vec![here, (d + 1, None)],
                _ => vec![here],
            }),
            Action::InvStepOver | Action::InvStepCall => Some(vec![here]),
            _ => None,
        }
    }

    /// How the next outcome may begin: with the event of a state that some line can
    /// stand on (after a function's last line a step goes on to its return, not to a
    /// line; a breakpoint stops at a `line`), with an exit of the program, or, for an
    /// inverse action, with the mark of the run's first state (then any event).
    pub fn openings(&self) -> Vec<&'static str> {
        let mut openings: Vec<&str> = language::EVENTS
            .into_iter()
            .filter(|e| self.breakpoints.is_none() || *e == "<|line|>")
            .filter(|e| self.some_line(e))
            .collect();
        openings.extend(language::EXITS);
        if self.action.is_inverse() {
            openings.push(language::AT_START);
        }
        openings
    }

    /// Whether a state of this event can stand on any line at all.
    pub fn some_line(&self, event: &str) -> bool {
        !self.headers(event, false).is_empty()
    }

    /// Whether a forward step from an `if`, `elif` or `while` line goes into its
    /// block, where its condition tests shown values in ways that run no code (see
    /// [`crate::program::conditions`]): `if not xs:`, `while n != 1:`, `if lo <= hi
    /// and x is None:`. Nothing else can happen first.
    pub fn branch_taken(&self) -> Option<bool> {
        let prev = self.prev;
        if !self.action.is_forward_step() || prev.event != Event::Line {
            return None;
        }
        let code = self.program.code(prev.line).trim();
        let condition = ["if ", "elif ", "while "]
            .iter()
            .find_map(|keyword| code.strip_prefix(keyword))?
            .strip_suffix(':')?;
        self.with_scope(|scope| crate::program::conditions::truth(condition, scope))
    }

    /// The lines a state of this event may stand on, by the program's control flow,
    /// in the one frame where the step's flow is known (its depth); `None`: any line.
    /// Forward: after a line, the lines that can follow it (or, to end the frame, the
    /// same statement); a fresh call's first lines; back in a caller after a return,
    /// its calling statement or what follows it; a Step Into's `call`, the first lines
    /// of what the running statement can call (see `ProgramModel::callees_of`).
    /// Backward: the lines that can lead to the current one.
    pub fn flow_lines(&self, event: &str) -> Option<(u32, BTreeSet<u32>)> {
        let (prev, flow) = (self.prev, &self.program.flow);
        // Stepping into a call: a function the running statement may call.
        if event == "<|call|>" && *self.action == Action::StepInto {
            return match prev.event {
                // A statement Python settles runs no code of the program, nor one that
                // fails before any does.
                Event::Line if self.cannot_raise() || self.surely_raises().is_some() => {
                    Some((prev.depth + 1, BTreeSet::new()))
                }
                Event::Line => Some((
                    prev.depth + 1,
                    match self.program.only_callee(prev.line) {
                        Some(def) => BTreeSet::from([def]),
                        None => self.program.callees_of(prev.line),
                    },
                )),
                Event::Return => {
                    let caller = prev.stack.last()?;
                    Some((prev.depth, self.program.callees_of(caller.line)))
                }
                _ => None,
            };
        }
        let line_event = event == "<|line|>";
        if !line_event && event != "<|return|>" && event != "<|exception|>" {
            return None;
        }
        let here = prev.depth;
        let forward = self.action.is_forward_step();
        let backward = matches!(self.action, Action::InvStepInto | Action::InvStepOver);
        // A statement that surely raises goes on to its exception, nowhere else.
        let fails = forward && prev.event == Event::Line && self.surely_raises().is_some();
        match prev.event {
            Event::Line if fails => Some((
                here,
                match event {
                    "<|exception|>" => BTreeSet::from([prev.line]),
                    _ => BTreeSet::new(),
                },
            )),
            Event::Line | Event::Exception if forward => Some((
                here,
                if line_event {
                    let mut lines = flow.after(prev.line)?.clone();
                    // From a `for` line whose next item is known, or an `if`, `elif`
                    // or `while` on a shown value: into its block or out of it.
                    let into = self.bindings().and_then(|b| b.continues);
                    if let Some(into) = into.or_else(|| self.branch_taken()) {
                        let block = self.program.block(prev.line);
                        lines.retain(|line| block.contains(line) == into);
                    }
                    // No exception is being handled after a line that raised none.
                    if prev.event == Event::Line {
                        lines.retain(|&line| !self.enters_handler(prev.line, line));
                    }
                    lines
                } else {
                    let mut lines = flow.statement(prev.line);
                    // The frame returns right after this statement only if it can end it.
                    if event == "<|return|>" && !lines.iter().any(|&l| self.program.ends_frame(l)) {
                        lines.clear();
                    }
                    // A statement Python settles cannot raise.
                    if event == "<|exception|>" && prev.event == Event::Line && self.cannot_raise()
                    {
                        lines.clear();
                    }
                    lines
                },
            )),
            Event::Call if forward && line_event => {
                let fresh = self.program.layout.calls.get(&prev.line) == Some(&prev.function)
                    || (prev.line == 1 && prev.function == "<module>");
                if fresh {
                    Some((here, flow.first(prev.line)?.clone()))
                } else {
                    // A generator resumes where it paused.
                    let mut lines = flow.after(prev.line)?.clone();
                    lines.extend(flow.statement(prev.line));
                    Some((here, lines))
                }
            }
            Event::Return if forward => {
                let caller = prev.stack.last()?;
                let mut lines = flow.statement(caller.line);
                if line_event {
                    lines.extend(flow.after(caller.line)?.iter().copied());
                    if !self.program.may_report_again(caller.line) {
                        lines.remove(&caller.line);
                    }
                    // A call that returned raised nothing to handle.
                    lines.retain(|&line| !self.enters_handler(caller.line, line));
                }
                Some((here.checked_sub(1)?, lines))
            }
            // A frame returns from a line that can end it, or pauses at a `yield`.
            Event::Line | Event::Call
                if *self.action == Action::StepReturn && event == "<|return|>" =>
            {
                let program = self.program;
                let lines = program
                    .frame_lines(&prev.function)
                    .filter(|&l| program.ends_frame(l))
                    .collect();
                Some((here, lines))
            }
            Event::Line if backward && line_event => Some((here, flow.before(prev.line))),
            Event::Return | Event::Exception if backward && line_event => {
                Some((here, flow.statement(prev.line)))
            }
            Event::Call if backward && line_event => {
                let caller = prev.stack.last()?;
                Some((here.checked_sub(1)?, flow.statement(caller.line)))
            }
            _ => None,
        }
    }

    /// Whether a `line` event on `to` right after one on `from` in the same frame,
    /// with no exception between, would enter an `except` clause: only an exception
    /// does that, or an earlier clause that did not match going on to the next.
    fn enters_handler(&self, from: u32, to: u32) -> bool {
        let program = self.program;
        match program.handler_of(to) {
            Some(h) if h == to => !program.is_handler(from),
            Some(h) => h != from && !program.block(h).contains(&from),
            None => false,
        }
    }

    /// Whether the step must stop in a call (or where something raises first), not
    /// at a line or return of the frame: a Step Into from a line that surely calls
    /// (see `ProgramModel::surely_calls`).
    pub fn enters_call(&self) -> bool {
        *self.action == Action::StepInto
            && self.prev.event == Event::Line
            && self.program.surely_calls(self.prev.line)
    }

    /// Every header a state of this event may have (`LINE DEPTH FUNCTION`): a code
    /// line of the program (a `def` line for a `call`; a breakpoint's line for a
    /// breakpoint action), where control flow lets the step land (none in the frame
    /// where the step must enter a call), in a frame that runs
    /// that line and that the step can reach, at that frame's depth. `at_start`: the
    /// state is the run's first (an inverse step's answer), which any frame of the
    /// line may be.
    pub fn headers(&self, event: &str, at_start: bool) -> Headers {
        let in_frame = event == "<|line|>" || event == "<|return|>";
        if in_frame && !at_start && self.enters_call() {
            return Headers::default();
        }
        let (frames, flow) = match at_start {
            true => (None, None),
            false => (self.frames(event), self.flow_lines(event)),
        };
        let program = self.program;
        let is_call = event == "<|call|>";
        // A state is never on a blank or comment line; a call stands on a `def`.
        let code_line = |n: u32| {
            let text = program.lines.get(n as usize - 1);
            // The module's frame starts on line 1, whatever is written there.
            (is_call && n == 1 && text.is_some())
                || text.is_some_and(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
                    && (!is_call || !program.layout.frames_of(n, true).is_empty())
        };
        let hit = |n: u32| at_start || self.breakpoints.is_none_or(|b| b.contains(&n));
        // A script's module frame is the only one at depth 0.
        let prev = self.prev;
        let script = (prev.depth == 0 && prev.function == "<module>")
            || prev.stack.first().is_some_and(|f| f.function == "<module>");
        let at_depth = |scope: &str, d: u32| !script || (d == 0) == (scope == "<module>");
        let flows_to = |n: u32, d: u32| {
            flow.as_ref()
                .is_none_or(|(at, lines)| *at != d || lines.contains(&n))
        };
        let mut headers = Headers::default();
        for n in (1..=program.lines.len() as u32).filter(|&n| code_line(n) && hit(n)) {
            // The frames that run line `n` (function, class body or module).
            for scope in program.layout.frames_of(n, is_call) {
                let header = |depths| Header {
                    line: n,
                    depths,
                    function: scope.to_string(),
                };
                match &frames {
                    // A jump lands at any depth: 0 for a script's module, else from 1
                    // up in a script, from 0 up in a call.
                    None if script && scope == "<module>" => {
                        headers.0.insert(header(Depths::Exact(0)));
                    }
                    None => {
                        headers.0.insert(header(Depths::From(u32::from(script))));
                    }
                    Some(frames) => {
                        let depths = frames
                            .iter()
                            .filter(|(_, f)| f.is_none_or(|f| f == scope))
                            .map(|&(d, _)| d)
                            .filter(|&d| flows_to(n, d) && at_depth(scope, d));
                        headers.0.extend(depths.map(|d| header(Depths::Exact(d))));
                    }
                }
            }
        }
        headers
    }
}

/// The headers a next state may have (see [`NextState::headers`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Headers(pub BTreeSet<Header>);

/// One header a state may have: its line, the depths its frame may be at, and the
/// frame's function.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Header {
    pub line: u32,
    pub depths: Depths,
    pub function: String,
}

/// The depths a header may name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Depths {
    Exact(u32),
    /// This depth or any deeper (a jump can land at any depth), written with at most
    /// [`MAX_DEPTH_DIGITS`] digits.
    From(u32),
}

/// The most digits a depth is written with.
pub const MAX_DEPTH_DIGITS: usize = 4;

impl Headers {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The text each header allows, from the end of its event token: `LINE DEPTH
    /// FUNCTION`, a newline, the line's text exactly, a newline and the locals'
    /// opening brace; then whatever the body's grammar allows.
    pub fn trie(&self, program: &ProgramModel) -> Trie {
        let mut trie = Trie::new();
        // Where the names of each line's headers begin, by depth (a range of depths
        // joins one node, the same for every number it is written with).
        let mut names: BTreeMap<(u32, Depths), NodeId> = BTreeMap::new();
        for header in &self.0 {
            // A name that would read as more fields is no function's.
            if header.function.contains([' ', '\n']) {
                continue;
            }
            let line_end = trie.insert(Trie::ROOT, format!("{} ", header.line).as_bytes());
            let names_at =
                *names
                    .entry((header.line, header.depths))
                    .or_insert_with(|| match header.depths {
                        Depths::Exact(d) => trie.insert(line_end, format!("{d} ").as_bytes()),
                        Depths::From(from) => depth_digits(&mut trie, line_end, from),
                    });
            let source = &program.lines[header.line as usize - 1];
            let text = format!("{}\n{source}\n{{", header.function);
            let end = trie.insert(names_at, text.as_bytes());
            trie.open(end);
        }
        trie
    }
}

/// From `from`, every depth of at least `least` (0 or 1) written in up to
/// [`MAX_DEPTH_DIGITS`] digits (no leading zero) and a space, all joined at the node
/// returned.
fn depth_digits(trie: &mut Trie, from: NodeId, least: u32) -> NodeId {
    debug_assert!(least <= 1, "only 0.. and 1.. are ranges of depths");
    let names = trie.node();
    if least == 0 {
        let zero = trie.edge(from, b'0');
        trie.join(zero, b' ', names);
    }
    // One node per count of digits written, each followed by a space or a digit.
    let written: Vec<NodeId> = (0..MAX_DEPTH_DIGITS).map(|_| trie.node()).collect();
    for b in b'1'..=b'9' {
        trie.join(from, b, written[0]);
    }
    for (k, &at) in written.iter().enumerate() {
        trie.join(at, b' ', names);
        if let Some(&longer) = written.get(k + 1) {
            for b in b'0'..=b'9' {
                trie.join(at, b, longer);
            }
        }
    }
    names
}
