//! What the next state may say, worked out from the program model and where the run
//! stands: the current state, the step that reached it, its frame's caller and the
//! action. No tokens and no weights: the decoder (`crate::infer`) turns these answers
//! into token masks, and the tests here check them on their own.
//!
//! A [`NextState`] answers in three values, one per part of the outcome as it is
//! written: [`NextState::openings`] (how it may begin), [`NextState::headers`] (the
//! headers a state may have, each with its line's text; [`Headers::trie`] is the
//! automaton the decoder walks) and, once a header is written, [`NextState::body`]
//! (a [`BodyRules`]: the locals' names, and the text that some of the body must be).
//! Each value is narrowed by the rules below, in the order they apply:
//!
//! | part | rule | why it holds |
//! |---|---|---|
//! | opening | [`NextState::openings`] | a state's event must have some line to stand on (a breakpoint's is a `line`); a run may end; an inverse step may reach the run's first state |
//! | header | [`NextState::frames`] | a frame is left only through its `return` or `exception`, so a step stays in its frame, goes one call deeper or back to the caller |
//! | header | [`NextState::flow_lines`] | control flow: the lines that can follow (or, backwards, precede) the current one; a loop whose next item is known, or an `if`/`while` whose condition the shown values settle ([`NextState::branch_taken`], `crate::program::conditions`), goes into its block or out; a return leads back to its calling line only where that line can be reported again |
//! | header | [`NextState::headers`] | a state stands on a code line of a frame that runs it, at a depth the step reaches (a breakpoint's line for a breakpoint action), and writes that line's text exactly |
//! | locals | [`NextState::body_spec`] | names a frame can hold; a fresh call begins with its parameters in order; a diff after one statement changes only what it can change (what it binds or may unbind; mutable values only where it may run code that changes an object, see `crate::program::effects`) |
//! | locals | `held_names` | a call cannot unbind its caller's locals; a Step Out's return holds what the frame holds |
//! | locals | `caller_names` | back in a caller whose state at the call is known: its names and what the calling statement binds |
//! | locals | `newly_bound` | after a one-line assignment the names it binds first are there, and those whose value it changed are written |
//! | values | [`NextState::bound_arguments`] | a plain call binds its arguments to its parameters as Python does; a constructor's `__init__` binds `self` to the fresh instance where its repr is plain |
//! | values | [`NextState::bindings`] | a `for` over shown items binds the next one (from its count where the steps since it began are known; a loop that begins once has begun where its variables are bound; a list is reordered only by what the loop runs); a one-line assignment, augmented assignment, `append` or item set binds what the shown values settle (`crate::program::known`), in its own frame once it ran |
//! | values | [`NextState::kept`] | a caller keeps what the call cannot reach; a Step Out keeps the immutable values the function never rebinds |
//! | values | [`NextState::kept_by_step`] | in full locals, a name the statement cannot change is written again with its value |
//! | values | [`NextState::assigned_by_return`] | past `NAMES = CALLEE(...)`, the names hold what `CALLEE` returned |
//! | values | `assigned_kinds`, `argument_values` | an assigned value's or an argument's repr begins as its text says (`crate::program::kinds`); a call's known arguments where not all are |
//! | stdout | `stdout_written` | a step over a whole `print` writes stdout; one over a statement that prints nothing and runs no code of the program writes none |
//! | stdout | [`NextState::printed_by_step`] | a `print` of literals, shown names and what they settle writes their `str()` |
//! | value | [`NextState::returned_value`] | `return EXPR` returns what the return state's values settle of it, `return LITERAL` the literal |
//!
//! Where the program could change what a rule relies on (`global`, `nonlocal`, `del`,
//! a list reordered under its loop, a class whose dunder methods a builtin could run),
//! the rule answers "anything" rather than guess.

mod body;
mod reach;
mod values;

pub use reach::{Depths, Header, Headers, MAX_DEPTH_DIGITS};
pub use values::{Binding, Bindings, Returned};

use crate::action::Action;
use crate::grammar::BodySpec;
use crate::language::Locals;
use crate::program::printed::Printed;
use crate::program::ProgramModel;
use crate::state::{Event, State};
use std::cell::OnceCell;
use std::collections::BTreeSet;

/// Where the run stands before a step, and what the next state may say from there.
/// What takes work is worked out once and kept: a prediction's header never changes
/// once its body has begun.
pub struct NextState<'a> {
    pub program: &'a ProgramModel,
    /// The current state: the step starts here.
    pub prev: &'a State,
    /// The state one forward step before `prev`, where known.
    pub came_from: Option<&'a State>,
    /// The state that called `prev`'s frame, at the call, where known.
    pub caller: Option<&'a State>,
    pub action: &'a Action,
    /// How many items the `for` loop on `prev`'s line has bound since it began, where
    /// known (see `crate::infer::Footprints`).
    pub round: Option<usize>,
    /// A breakpoint action lands on a `line` state on one of these lines (or ends).
    pub breakpoints: Option<&'a BTreeSet<u32>>,
    /// What the next state keeps of one seen before (see `kept_values`).
    kept: OnceCell<Option<Bindings>>,
    /// What the current line binds (see `bindings`).
    bindings: OnceCell<Option<Bindings>>,
    /// What the current line prints, if it is a `print` whose text can be read.
    printed: OnceCell<Option<Printed>>,
    /// The exception the current statement surely raises (see `surely_raises`).
    raises: OnceCell<Option<String>>,
    /// How the next state writes its locals: a diff, or in full (then the names the
    /// step cannot change are written again with their values, see `kept_by_step`).
    pub locals: Locals,
}

impl<'a> NextState<'a> {
    pub fn new(
        program: &'a ProgramModel,
        prev: &'a State,
        came_from: Option<&'a State>,
        caller: Option<&'a State>,
        action: &'a Action,
    ) -> Self {
        NextState {
            program,
            prev,
            came_from,
            caller,
            action,
            round: None,
            breakpoints: action.breakpoint_lines(),
            kept: OnceCell::new(),
            bindings: OnceCell::new(),
            printed: OnceCell::new(),
            raises: OnceCell::new(),
            locals: Locals::Diff,
        }
    }

    /// The same, for a model that writes its locals as `locals` says.
    pub fn writing(self, locals: Locals) -> Self {
        NextState { locals, ..self }
    }

    /// The same, where the loop on `prev`'s line is known to have bound `round` items.
    pub fn in_round(self, round: Option<usize>) -> Self {
        NextState { round, ..self }
    }
}

/// What the body of a state may say once its header is written: each body rule's
/// answer, in the order the decoder applies them.
#[derive(Clone, Debug, Default)]
pub struct BodyRules {
    /// The names the locals may, must and cannot hold ([`NextState::body_spec`]).
    pub spec: BodySpec,
    /// The exact text the locals begin with: a call binds its arguments
    /// ([`NextState::bound_arguments`]).
    pub arguments: Option<String>,
    /// The exact text of the globals, where a call's are the caller's
    /// ([`NextState::callee_globals`]) or a caller's are those a call returned with
    /// ([`NextState::returned_globals`]).
    pub globals: Option<String>,
    /// Per name, the values it may take ([`NextState::bindings`], else
    /// [`NextState::kept`]; with full locals, also what the step cannot change).
    pub values: Option<Bindings>,
    /// What the step prints ([`NextState::printed_by_step`]).
    pub printed: Option<Printed>,
    /// What a return returns ([`NextState::returned`]).
    pub returned: Option<Returned>,
}

impl NextState<'_> {
    /// The body rules' answers for the state `header` begins (`EVENT LINE DEPTH
    /// FUNCTION`); `at_start`: it is the run's first state.
    pub fn body(&self, header: &str, at_start: bool) -> BodyRules {
        let globals = self
            .callee_globals(header)
            .or_else(|| self.returned_globals(header));
        // Known globals must be written unless there are none (the spec's section rule).
        let spec = BodySpec {
            globals: (globals.as_ref().map(|g| g != "{}")).or_else(|| self.globals_written(header)),
            ..self.body_spec(header, at_start)
        };
        BodyRules {
            spec,
            arguments: self.bound_arguments(header),
            globals,
            values: self.values(header, at_start),
            printed: self.printed_by_step(header).cloned(),
            returned: self.returned(header),
        }
    }
}

impl NextState<'_> {
    /// A state to show where the model gave none, for a single step: the line
    /// control flow reaches next in the same frame (forward: the first after the
    /// current one, else the first; backward: the last before it, else the last), the
    /// variables unchanged. Forward past a frame's last line, or from an exception no
    /// handler of the frame can catch, its return (the value unknown: `None`); from a
    /// return, the caller's next line with what it held at the call (its calling line
    /// with no variables where that is not known). `None` where nothing of the kind is
    /// known.
    pub fn guess(&self) -> Option<State> {
        let prev = self.prev;
        let backward = match self.action {
            Action::StepInto | Action::StepOver | Action::StepReturn => false,
            Action::InvStepInto | Action::InvStepOver => true,
            _ => return None,
        };
        let (depth, lines) = self.flow_lines("<|line|>").unzip();
        let lines = lines.unwrap_or_default();
        let (holder, near) = match (prev.event, self.caller) {
            (Event::Return, Some(caller)) if !backward => (caller, caller.line),
            _ => (prev, prev.line),
        };
        let in_frame = |line: &u32| {
            let frames = self.program.layout.frames_of(*line, false);
            frames.iter().any(|f| *f == holder.function)
        };
        // An exception goes on to a handler of the frame, if any.
        let handler = |line: &u32| {
            let code = self.program.code(*line).trim_start();
            code.starts_with("except") || code.starts_with("finally")
        };
        let handled = |line: &u32| prev.event != Event::Exception || handler(line);
        let lines: Vec<u32> = lines.into_iter().filter(in_frame).filter(handled).collect();
        let line = if backward {
            let before = lines.iter().rev().find(|&&l| l < near);
            before.or(lines.last())
        } else {
            let after = lines.iter().find(|&&l| l > near);
            after.or(lines.first())
        };
        if let Some(&line) = line.filter(|_| depth == Some(holder.depth)) {
            let mut state = State {
                event: Event::Line,
                line,
                source: self.program.lines.get(line as usize - 1)?.clone(),
                value: None,
                stdout: String::new(),
                ..holder.clone()
            };
            // What the rules settle of the names holds in a guess too.
            let header = format!("<|line|>{line} {} {}", holder.depth, holder.function);
            let values = self.values(&header, false).filter(|_| !backward);
            let settled = values.into_iter().flat_map(|b| b.targets);
            for target in settled {
                if let [only] = &target.options[..] {
                    if let Ok(value) = serde_json::from_str::<String>(only) {
                        state.locals.insert(target.name, value);
                    }
                }
            }
            return Some(state);
        }
        // Back from a call whose caller's state is not known (or not where the stack
        // says): its calling line, with no variables to show (the guess says so).
        if let (Event::Return, false) = (prev.event, backward) {
            let (frame, callers) = prev.stack.split_last()?;
            return Some(State {
                event: Event::Line,
                line: frame.line,
                source: self
                    .program
                    .lines
                    .get(frame.line.checked_sub(1)? as usize)?
                    .clone(),
                function: frame.function.clone(),
                depth: prev.depth.checked_sub(1)?,
                stack: callers.to_vec(),
                locals: Default::default(),
                value: None,
                stdout: String::new(),
                ..prev.clone()
            });
        }
        let returns = self.flow_lines("<|return|>");
        let ends_here =
            returns.is_some_and(|(d, lines)| d == prev.depth && lines.contains(&prev.line));
        // An exception no line of the frame handles ends the frame where it was raised.
        let ends = match prev.event {
            Event::Line => ends_here,
            Event::Exception => true,
            _ => false,
        };
        (!backward && ends).then(|| State {
            event: Event::Return,
            value: Some("None".into()),
            stdout: String::new(),
            ..prev.clone()
        })
    }

    /// Where no state can be guessed after a forward step from a frame's return with
    /// no caller on the stack, the run's end: it ended normally (a guess; an entry
    /// call's code may call again, or the return may carry an exception out).
    pub fn guess_exit(&self) -> Option<crate::state::Exit> {
        let prev = self.prev;
        let forward = matches!(
            self.action,
            Action::StepInto | Action::StepOver | Action::StepReturn
        );
        (forward && prev.event == Event::Return && prev.stack.is_empty())
            .then_some(crate::state::Exit::Normal)
    }
}

/// What a name holds in `state`: its local, else its global.
pub fn shown_value(state: &State, name: &str) -> Option<String> {
    state.locals.get(name).or(state.globals.get(name)).cloned()
}

/// The depth and function of a state's header (`<|line|>3 1 f`).
pub fn header_frame(header: &str) -> Option<(u32, &str)> {
    let fields: Vec<&str> = header.split("|>").nth(1)?.split(' ').collect();
    Some((fields.get(1)?.parse().ok()?, fields.get(2)?))
}

/// Where the locals being written (the first line of `rest`) hold `name`'s value: the
/// text from its opening quote on, while the locals are still being written.
pub fn value_of<'r>(rest: &'r str, name: &str) -> Option<&'r str> {
    if rest.contains('\n') {
        return None;
    }
    let key = format!("\"{name}\":");
    let (at, _) = rest
        .match_indices(&key)
        .filter(|(at, _)| rest[..*at].ends_with(['{', ',']))
        .last()?;
    Some(&rest[at + key.len()..])
}

/// Whether a repr is of a value that nothing but rebinding its name can change: a
/// number, string, bytes, `None`, a bool, or a tuple of such (by its text: anything
/// bracketed or called inside counts as mutable).
fn immutable(repr: &str) -> bool {
    let r = repr.trim();
    if r.starts_with(['\'', '"']) || r.starts_with("b'") || r.starts_with("b\"") {
        return true;
    }
    if matches!(r, "None" | "True" | "False" | "inf" | "-inf" | "nan") || r.parse::<f64>().is_ok() {
        return true;
    }
    r.strip_prefix('(')
        .and_then(|inner| inner.strip_suffix(')'))
        .is_some_and(|inner| !inner.contains(['(', '[', '{', '<']))
}

impl NextState<'_> {
    /// The repr of `text`'s value in the current state, where it is a literal, a
    /// name the state shows, or what [`crate::program::known`] works out of those.
    fn known_repr(&self, text: &str) -> Option<String> {
        self.with_scope(|scope| crate::program::known::repr_of(text, scope))
    }

    /// `f` given the current state's names: the values it shows, and the builtins no
    /// name of the program hides.
    fn with_scope<R>(&self, f: impl FnOnce(&crate::program::known::Scope) -> R) -> R {
        let (prev, program) = (self.prev, self.program);
        f(&crate::program::known::Scope {
            value_of: &|name| {
                let shown =
                    |name: &str| shown_value(prev, name).filter(|v| !crate::program::known::cut(v));
                crate::program::known::dotted_value(name, shown, |c| program.shows_fields(c))
            },
            builtin: &|name| program.builtin_in(name, prev),
        })
    }
}

#[cfg(test)]
mod tests;
