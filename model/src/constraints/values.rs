//! Which values the next state's names take, where the program's text and the state
//! shown say: a `for` loop's next item, what an assignment or a list or dict change
//! binds (where the shown values settle it), what a caller keeps
//! when a call returns to it and what a frame keeps to its return, the arguments a call
//! binds, the value a `return` line gives, what a `print` writes.

use super::{header_frame, immutable, shown_value, NextState};
use crate::language;
use crate::program::lexer::{closes_at_end, closing_bracket};
use crate::program::{effects, layout};
use crate::repr::{Kind, Repr};
use crate::{Action, Event};
use indexmap::IndexMap;
use std::collections::BTreeSet;

/// What a step from a `for` line or a plain assignment binds: per name, the values it
/// can take; for a loop, whether it goes into its block (`Some(true)`), ends
/// (`Some(false)`) or either.
#[derive(Clone, Debug)]
pub struct Bindings {
    pub targets: Vec<Binding>,
    /// The lines on which a state must write the names that cannot keep their values:
    /// a loop's block; `None` after an assignment, any line of the same frame.
    pub written_on: Option<std::ops::RangeInclusive<u32>>,
    pub continues: Option<bool>,
}

/// Which lists a loop's iterable reads: in place (its block could reorder them under
/// it), or as a copy made when the loop starts (which no later change of the list
/// reaches, so the state's list says nothing of the items once the loop has begun).
#[derive(Clone, Copy, Default)]
struct Reads {
    live_list: bool,
    copied_list: bool,
}

impl Reads {
    fn and(self, other: Reads) -> Reads {
        Reads {
            live_list: self.live_list || other.live_list,
            copied_list: self.copied_list || other.copied_list,
        }
    }
}

/// Where a loop goes from its `for` line, as far as the state and the step before say.
struct Next {
    /// The items it can bind (each as the parts its targets take); `None`: any.
    items: Option<Vec<Vec<String>>>,
    /// Into its block (`Some(true)`), out of it, or either.
    continues: Option<bool>,
}

/// Whether position `at` of the statement `code` lies in a comprehension or a
/// lambda, whose names are not the frame's: a bracket around it holds a `for` or a
/// `lambda`, or a `lambda` comes before it outside brackets.
fn in_own_scope(code: &str, at: usize) -> bool {
    let own = |text: &str| layout::words(text).any(|w| w == "for" || w == "lambda");
    let (pairs, unclosed) = bracket_pairs(code);
    let enclosed = pairs
        .iter()
        .any(|&(open, close)| open < at && at < close && own(&code[open + 1..close]));
    // A bracket that never closes runs to the end.
    let unclosed = unclosed
        .iter()
        .any(|&open| open < at && own(&code[open + 1..]));
    let top_before: String = crate::program::lexer::code_chars(&code[..at])
        .filter(|&(_, _, depth)| depth == 0)
        .map(|(_, c, _)| c)
        .collect();
    enclosed || unclosed || layout::words(&top_before).any(|w| w == "lambda")
}

/// `code` with the text of every bracket that does not enclose position `at` blanked:
/// what decides whether the code at `at` runs.
fn outside_other_brackets(code: &str, at: usize) -> String {
    let mut text = code.as_bytes().to_vec();
    for (open, close) in bracket_pairs(code).0 {
        if !(open < at && at < close) {
            text[open + 1..close].fill(b' ');
        }
    }
    String::from_utf8(text).unwrap_or_default()
}

/// The byte positions of each pair of brackets in `code` (strings left out), and of
/// the brackets left open.
fn bracket_pairs(code: &str) -> (Vec<(usize, usize)>, Vec<usize>) {
    let (mut pairs, mut open) = (Vec::new(), Vec::new());
    for (pos, c, _) in crate::program::lexer::code_chars(code) {
        match c {
            '(' | '[' | '{' => open.push(pos),
            ')' | ']' | '}' => pairs.extend(open.pop().map(|start| (start, pos))),
            _ => {}
        }
    }
    (pairs, open)
}

/// Whether `word` may keep part of a statement from running, or run it again: a
/// condition, `and`/`or`, a comprehension, a lambda.
fn may_skip(word: &str) -> bool {
    matches!(word, "if" | "and" | "or" | "for" | "lambda" | "while")
}

/// A statement's pop worked out (see `NextState::popped`).
pub(super) struct Popped {
    /// The statement with the popped value in place of the call.
    pub statement: String,
    /// The list or dict popped from, and its repr after.
    pub name: String,
    pub value: String,
    pub after: String,
}

/// A name, the values it can take (JSON strings of their reprs), and whether the next
/// state must write it (it cannot keep its value).
#[derive(Clone, Debug)]
pub struct Binding {
    pub name: String,
    pub options: Vec<String>,
    pub must_write: bool,
}

impl NextState<'_> {
    /// What a forward step from the current line binds: a loop's variables (see
    /// `loop_values`), or a plain assignment's names. Worked out once.
    pub fn bindings(&self) -> Option<&Bindings> {
        self.bindings
            .get_or_init(|| {
                self.loop_values()
                    .or_else(|| self.assigned_values())
                    .or_else(|| self.mutated_values())
            })
            .as_ref()
    }

    /// The values the state `header` begins may give its names: what the line binds
    /// (see `bindings`), else what it keeps of a state seen before (see `kept`); with
    /// full locals, the names the step cannot change keep their values as well.
    /// Then, for names none of those bind: what a call returned to an assignment (see
    /// `assigned_by_return`), how an assigned value's repr begins (see
    /// `assigned_kinds`), what a call's arguments are or how they begin (see
    /// `argument_values`).
    pub fn values(&self, header: &str, at_start: bool) -> Option<Bindings> {
        let more: Vec<Binding> = [
            self.assigned_by_return(header),
            self.assigned_kinds(header),
            self.argument_values(header),
        ]
        .into_iter()
        .flatten()
        .flatten()
        .collect();
        let mut values = self.values_known(header, at_start);
        if !more.is_empty() {
            let values = values.get_or_insert_with(|| Bindings {
                targets: Vec::new(),
                written_on: None,
                continues: None,
            });
            for binding in more {
                if !values.targets.iter().any(|t| t.name == binding.name) {
                    values.targets.push(binding);
                }
            }
        }
        values
    }

    /// Whether the state `header` begins follows the current line's run in its own
    /// frame, where what the line binds holds: not in a call it makes (a callee may
    /// have names of its own alike), nor where it raised.
    pub(super) fn ran_in_frame(&self, header: &str) -> bool {
        let prev = self.prev;
        let in_frame = header_frame(header) == Some((prev.depth, prev.function.as_str()));
        in_frame
            && ["<|line|>", "<|return|>"]
                .iter()
                .any(|e| header.starts_with(e))
    }

    /// What the line binds, else what the state keeps (see `values`).
    fn values_known(&self, header: &str, at_start: bool) -> Option<Bindings> {
        let bound = self.bindings().filter(|_| self.ran_in_frame(header));
        let bound = bound.or(self.kept(header)).cloned();
        let Some(unchanged) = self.kept_by_step(header, at_start) else {
            return bound;
        };
        // A loop's values hold in its block only: past its end the loop binds nothing
        // new (a diff leaves its variables out), and full locals write them again.
        let line = header_line(header);
        let bound = bound.filter(|b| {
            b.written_on
                .as_ref()
                .is_none_or(|block| line.is_some_and(|line| block.contains(&line)))
        });
        let Some(mut bound) = bound else {
            return Some(unchanged);
        };
        let named = |name: &str| bound.targets.iter().any(|t| t.name == name);
        let more: Vec<Binding> = unchanged
            .targets
            .into_iter()
            .filter(|t| !named(&t.name))
            .collect();
        bound.targets.extend(more);
        Some(bound)
    }

    /// With full locals, after one statement in the same frame: each name of the
    /// current state that the statement cannot change (see `changeable_names`) is
    /// written again, with its value. `None` for diffs, which leave such names out.
    pub fn kept_by_step(&self, header: &str, at_start: bool) -> Option<Bindings> {
        if self.locals.is_diff() {
            return None;
        }
        let changeable = self.changeable_in(header, at_start)?;
        Some(keeping(self.prev, |name, _| {
            changeable
                .binary_search_by(|c| c.as_str().cmp(name))
                .is_err()
        }))
    }

    /// What the state `header` begins keeps of a state seen before (see
    /// `kept_values`). Worked out once: a prediction's header never changes after its
    /// body has begun.
    pub fn kept(&self, header: &str) -> Option<&Bindings> {
        self.kept.get_or_init(|| self.kept_values(header)).as_ref()
    }

    /// After a `for TARGETS in ITERABLE:` line whose items the state shows (see
    /// `loop_items`), each loop variable can only take its part of one of the items,
    /// and where the way in is known only of the next one (see `next_items`).
    fn loop_values(&self) -> Option<Bindings> {
        let prev = self.prev;
        let forward = self.action.is_forward_step();
        if !forward || prev.event != Event::Line {
            return None;
        }
        let header = self.program.for_header(prev.line)?;
        let (target, iterable) = header.split_once(" in ")?;
        let target = target.trim();
        let target = target
            .strip_prefix('(')
            .and_then(|t| t.strip_suffix(')'))
            .unwrap_or(target);
        let names: Vec<&str> = target.split(',').map(str::trim).collect();
        if !names.iter().all(|n| layout::is_name(n)) {
            return None;
        }
        let iterable = iterable.trim();
        let (items, reads) = self.loop_items(iterable)?;
        // Each item as the parts the targets take.
        let rows: Vec<Vec<String>> = match names.len() {
            1 => items.into_iter().map(|item| vec![item]).collect(),
            n => items
                .iter()
                .map(|item| tuple_parts(item).filter(|parts| parts.len() == n))
                .collect::<Option<_>>()?,
        };
        // As the state shows them: an item longer than the tracer's limit is cut.
        let rows: Vec<Vec<String>> = rows
            .into_iter()
            .map(|row| {
                row.into_iter()
                    .map(crate::program::known::as_shown)
                    .collect()
            })
            .collect();
        let current: Vec<Option<String>> = names.iter().map(|n| shown_value(prev, n)).collect();
        let next = self.next_items(&names, iterable, reads, &rows, &current)?;
        let continues = next.continues;
        let (rows, known) = match next.items {
            Some(items) => (items, true),
            None => (rows, false),
        };
        let targets = names
            .iter()
            .enumerate()
            .map(|(k, name)| {
                let mut options: Vec<String> = rows
                    .iter()
                    .map(|row| serde_json::Value::from(row[k].as_str()).to_string())
                    .collect();
                options.sort();
                options.dedup();
                let keeps = |row: &Vec<String>| Some(&row[k]) == current[k].as_ref();
                Binding {
                    name: name.to_string(),
                    options,
                    must_write: known && !rows.iter().any(keeps),
                }
            })
            .collect();
        Some(Bindings {
            targets,
            written_on: Some(self.program.block(prev.line)),
            continues,
        })
    }

    /// Back in the caller after a return (the state `header` begins is in the frame
    /// that made the call, seen at the call): its locals keep their values, but for
    /// the names its calling statement binds. Immutable values always; mutable ones
    /// where the call cannot reach them (see `call_reaches_mutables`). Not where
    /// `global` or `nonlocal` could rebind them from the call.
    pub(super) fn kept_by_caller(&self, header: &str) -> Option<Bindings> {
        let (prev, program, caller) = (self.prev, self.program, self.caller?);
        let forward = self.action.is_forward_step();
        if !forward || prev.event != Event::Return || caller.event != Event::Line {
            return None;
        }
        let (depth, function) = header_frame(header)?;
        let frame = prev.stack.last()?;
        let same = depth + 1 == prev.depth
            && caller.depth == depth
            && caller.function == function
            && frame.function == function
            && frame.line == caller.line;
        if !same || !header.starts_with("<|line|>") && !header.starts_with("<|return|>") {
            return None;
        }
        if program.rebinds_from_afar {
            return None;
        }
        let bound: BTreeSet<String> = program
            .flow
            .statement(caller.line)
            .into_iter()
            .flat_map(|line| program.binds(line))
            .collect();
        let mutables_kept = !self.call_reaches_mutables(caller);
        Some(keeping(caller, |name, value| {
            (mutables_kept || immutable(value)) && !bound.contains(name)
        }))
    }

    /// Whether a call from `caller`'s line may change a mutable value of its locals:
    /// its statement names one (passing it, or a method of it, or an object that may
    /// hold it; `super()` names `self`), or the caller is the module (its names are
    /// every function's globals) or a nested function (its free variables are any
    /// call's to reach), or it defines a function, lambda or class that could close
    /// over its locals.
    /// A value reached only through some global's reference is not looked for.
    fn call_reaches_mutables(&self, caller: &crate::State) -> bool {
        let program = self.program;
        if caller.function == "<module>" {
            return true;
        }
        // A nested function's free variables are shared with every call that reaches
        // them (a recursive call of itself, a sibling closure).
        let nested = program
            .layout
            .calls
            .iter()
            .any(|(line, f)| *f == caller.function && !program.closes_over_nothing(*line));
        if nested {
            return true;
        }
        let mutable: BTreeSet<&str> = caller
            .locals
            .iter()
            .filter(|(_, value)| !immutable(value))
            .map(|(name, _)| name.as_str())
            .collect();
        let statement = program.flow.statement(caller.line);
        // `super()` reaches the caller's `self` without naming it.
        let names_one = statement.iter().any(|&line| {
            layout::words(program.code(line)).any(|w| mutable.contains(w) || w == "super")
        });
        let encloses = program.frame_lines(&caller.function).any(|line| {
            layout::words(program.code(line))
                .any(|w| matches!(w, "def" | "lambda" | "class" | "yield"))
        });
        names_one || encloses
    }

    /// What the state `header` begins keeps of a state seen before: back in the caller
    /// (see `kept_by_caller`), or at the return of the frame a Step Out starts in (see
    /// `kept_by_frame`).
    pub fn kept_values(&self, header: &str) -> Option<Bindings> {
        self.kept_by_caller(header)
            .or_else(|| self.kept_by_frame(header))
    }

    /// Back in the caller after a return, on a line past its calling statement: where
    /// that statement is one line `NAMES = CALLEE(...)` and the frame that returned is
    /// `CALLEE`'s (the call was the last thing the statement ran), the names hold the
    /// value it returned (unpacked for several names). Not where another frame could
    /// rebind them (`global`, `nonlocal`), nor for a value the tracer would hide or
    /// that shows no repr of its own (a function, class or module: `<...>`).
    pub fn assigned_by_return(&self, header: &str) -> Option<Vec<Binding>> {
        let (prev, program) = (self.prev, self.program);
        if !self.action.is_forward_step() || prev.event != Event::Return {
            return None;
        }
        let caller = prev.stack.last()?;
        let (depth, function) = header_frame(header)?;
        let line = header_line(header)?;
        let statement = program.flow.statement(caller.line);
        let back = header.starts_with("<|line|>")
            && depth + 1 == prev.depth
            && function == caller.function
            && statement.len() == 1
            && !statement.contains(&line);
        if !back || program.rebinds_from_afar {
            return None;
        }
        let code = program.code(caller.line).trim();
        let (targets, value) = code.split_once('=')?;
        let value = value.trim();
        if value.starts_with('=') {
            return None;
        }
        let names = plain_names(targets)?;
        let returned = prev.value.as_deref()?;
        // `CALLEE(...)` and nothing more, with no other call of that name inside; or
        // an expression around that one call that Python settles once it returned.
        let open = value.find('(')?;
        let callee = &value[..open];
        let last = callee.rsplit('.').next()?;
        let plain_path = callee.split('.').all(layout::is_name);
        let args = &value[open + 1..];
        let whole = closes_at_end(args);
        let value = if plain_path
            && last == prev.function
            && whole
            && !args.contains(&format!("{last}("))
        {
            returned.to_string()
        } else {
            self.around_returned_call(value, &prev.function, returned)?
        };
        let values = match names.len() {
            1 => vec![value],
            n => tuple_parts(&value).filter(|parts| parts.len() == n)?,
        };
        if values.iter().any(|v| v.starts_with('<')) {
            return None;
        }
        let unbindable = program.unbindable(&caller.function);
        if names.iter().any(|n| unbindable.contains(n)) {
            return None;
        }
        let bindings = names
            .into_iter()
            .zip(values)
            .map(|(name, value)| Binding {
                options: vec![serde_json::Value::from(value).to_string()],
                name,
                must_write: true,
            })
            .collect();
        Some(bindings)
    }

    /// The value of `expr`, which makes one call of `function` (just returned
    /// `returned`), worked out from that value and the caller's other values as shown
    /// at the call: `total + fib(k)`. Only immutable values are read beside the call
    /// (it could have changed a list), and only where the caller is known.
    fn around_returned_call(&self, expr: &str, function: &str, returned: &str) -> Option<String> {
        let caller = self.caller.filter(|c| c.event == Event::Line)?;
        let calls: Vec<usize> = crate::program::lexer::chars(expr)
            .filter(|ch| ch.kind == crate::program::lexer::Kind::Code)
            .map(|ch| ch.at)
            .filter(|&at| {
                let before = expr[..at].chars().next_back();
                let starts_word = !before.is_some_and(|c| layout::is_name_char(c) || c == '.');
                starts_word
                    && expr[at..].starts_with(function)
                    && expr[at + function.len()..].starts_with('(')
            })
            .collect();
        let [at] = calls[..] else { return None };
        let open = at + function.len() + 1;
        let close = open + crate::program::lexer::closing_bracket(&expr[open..])?;
        const RETURNED: &str = "__returned__";
        let text = format!("{}{RETURNED}{}", &expr[..at], &expr[close + 1..]);
        let value_of = |name: &str| match name {
            RETURNED => Some(returned.to_string()),
            _ => {
                shown_value(caller, name).filter(|v| immutable(v) && !crate::program::known::cut(v))
            }
        };
        let scope = crate::program::known::Scope {
            value_of: &value_of,
            builtin: &|name| self.program.builtin_in(name, caller),
        };
        crate::program::known::repr_of(&text, &scope).map(crate::program::known::as_shown)
    }

    /// After a one-line `NAME = VALUE` whose value the state does not settle (see
    /// `assigned_values`), on a line of the same frame: how the name's repr can begin,
    /// where the value's text says (see `kinds::repr_beginnings`).
    fn assigned_kinds(&self, header: &str) -> Option<Vec<Binding>> {
        let (prev, program) = (self.prev, self.program);
        let same_frame = header_frame(header) == Some((prev.depth, prev.function.as_str()));
        if !header.starts_with("<|line|>") || !same_frame || !self.steps_past_one_line() {
            return None;
        }
        let (names, value) = assignment(program.code(prev.line))?;
        let [name] = &names[..] else { return None };
        let beginnings = self.repr_beginnings(value)?;
        Some(vec![beginning_with(name, beginnings)])
    }

    /// At a fresh Step Into call whose locals `bound_arguments` cannot give whole: each
    /// parameter's value where its argument is a literal or a shown name, else how its
    /// repr begins where the argument's text says. Under the same conditions as there.
    fn argument_values(&self, header: &str) -> Option<Vec<Binding>> {
        const UNKNOWN: char = '\u{1}';
        let locals = self.call_locals(header, &|arg| {
            let known = self.known_repr(arg).map(crate::program::known::as_shown);
            Some(known.unwrap_or_else(|| format!("{UNKNOWN}{arg}")))
        })?;
        // Every argument known: `bound_arguments` gives the locals whole.
        if !locals.values().any(|value| value.contains(UNKNOWN)) {
            return None;
        }
        let bindings = locals
            .iter()
            .filter_map(|(name, value)| match value.strip_prefix(UNKNOWN) {
                Some(arg) => Some(beginning_with(name, self.repr_beginnings(arg)?)),
                None if value.contains(UNKNOWN) => None,
                None => Some(Binding {
                    name: name.clone(),
                    options: vec![serde_json::Value::from(value.as_str()).to_string()],
                    must_write: false,
                }),
            })
            .collect();
        Some(bindings)
    }

    /// How the repr of `expr`'s value can begin, in the current state.
    fn repr_beginnings(&self, expr: &str) -> Option<&'static [&'static str]> {
        let prev = self.prev;
        let builtin = |name: &str| self.program.builtin_in(name, prev);
        let is_str =
            |name: &str| shown_value(prev, name).is_some_and(|v| v.starts_with(['\'', '"']));
        crate::program::kinds::repr_beginnings(expr, &builtin, &is_str)
    }

    /// At the return a Step Out (`step_return`) reaches in the same frame: its locals
    /// of immutable values that no line of the function binds keep them (a parameter
    /// it never assigns). Not where `global` or `nonlocal` could rebind them.
    fn kept_by_frame(&self, header: &str) -> Option<Bindings> {
        let (prev, program) = (self.prev, self.program);
        if *self.action != Action::StepReturn || !self.returns_here(header) {
            return None;
        }
        if program.rebinds_from_afar {
            return None;
        }
        // Every name a line of the function may bind (a `def` in it binds its name).
        let bound: BTreeSet<String> = program
            .frame_lines(&prev.function)
            .flat_map(|line| {
                let defined = program.layout.calls.get(&line).cloned();
                program.binds(line).into_iter().chain(defined)
            })
            .collect();
        Some(keeping(prev, |name, value| {
            immutable(value) && !bound.contains(name)
        }))
    }

    /// Whether `header` begins the return of the frame `prev` is in.
    pub(super) fn returns_here(&self, header: &str) -> bool {
        header.starts_with("<|return|>")
            && header_frame(header).is_some_and(|(depth, function)| {
                depth == self.prev.depth && function == self.prev.function
            })
    }

    /// After a one-line `NAMES = VALUES`, each name whose value is a literal, a name
    /// the state shows or whole-number arithmetic of those (`a, b = b, a`,
    /// `low, n = (3, k)`, `mid = (lo + hi) // 2`, `n -= 1`) takes it where the next state
    /// writes it; a name whose value changes must be written (held, see `body_spec`). Where
    /// only some values are known (`a, b = b, a + b`), only immutable ones bind: a
    /// later value's call could change a list the earlier name now holds. Not where
    /// `global` or `nonlocal` could put a name elsewhere, nor for a literal with braces
    /// (a set's repr has an order of its own).
    fn assigned_values(&self) -> Option<Bindings> {
        let prev = self.prev;
        let (names, values) = self.assignment_values()?;
        let values: Vec<Option<String>> = values
            .into_iter()
            .map(|v| v.map(crate::program::known::as_shown))
            .collect();
        let all_known = values.iter().all(Option::is_some);
        let repeated = |name: &str| names.iter().filter(|n| *n == name).count() > 1;
        let targets: Vec<Binding> = names
            .iter()
            .zip(values)
            .filter_map(|(name, value)| {
                let value = value.filter(|v| all_known || immutable(v))?;
                (!repeated(name)).then(|| Binding {
                    must_write: shown_value(prev, name).as_ref() != Some(&value),
                    options: vec![serde_json::Value::from(value).to_string()],
                    name: name.clone(),
                })
            })
            .collect();
        if targets.is_empty() {
            return None;
        }
        Some(Bindings {
            targets,
            written_on: None,
            continues: None,
        })
    }

    /// The names a one-line assignment or augmented assignment binds, and the value
    /// each takes where Python settles it (whole, not cut as a state shows it).
    fn assignment_values(&self) -> Option<(Vec<String>, Vec<Option<String>>)> {
        if !self.steps_past_own_binding() {
            return None;
        }
        let code = self.program.code(self.prev.line);
        // A pop: its value stands in the statement, and the list or dict changes.
        let popped = self.popped(code);
        let code = popped.as_ref().map_or(code, |p| p.statement.as_str());
        if let Some(p) = popped.as_ref().filter(|p| p.statement.trim() == p.value) {
            return Some((vec![p.name.clone()], vec![Some(p.after.clone())]));
        }
        let (mut names, values) = match assignment(code) {
            Some((names, values)) => (names, values.to_string()),
            None => {
                let (name, value) = augmented_arithmetic(code)?;
                (vec![name.to_string()], value)
            }
        };
        let value = |text: &str| self.known_repr(text.trim());
        let values: Vec<Option<String>> = match names.len() {
            1 => vec![value(&values)],
            n => {
                let parts = crate::program::lexer::split_top(unparenthesized(&values));
                match parts.len() {
                    // One value unpacked: `q, r = divmod(n, 2)`.
                    1 => {
                        let items = tuple_parts(&value(&parts[0])?)?;
                        if items.len() != n {
                            return None;
                        }
                        items.into_iter().map(Some).collect()
                    }
                    len if len == n => parts.iter().map(|p| value(p)).collect(),
                    _ => return None,
                }
            }
        };
        let mut values = values;
        if let Some(p) = popped {
            names.push(p.name);
            values.push(Some(p.after));
        }
        Some((names, values))
    }

    /// The statement on the current line with its one `NAME.pop(ARGS)` worked out,
    /// where `NAME` is a list or dict the state shows whole, the arguments are settled
    /// and nothing else of the statement names it or may skip or repeat the pop (a
    /// condition, `and`/`or`, a comprehension, a lambda).
    pub(super) fn popped(&self, code: &str) -> Option<Popped> {
        let code = code.trim();
        let mut sites = code.match_indices(".pop(");
        let (at, _) = sites.next()?;
        let name = layout::trailing_name(&code[..at]);
        let starts = at - name.len();
        let before = code[..starts].chars().next_back();
        if sites.next().is_some() || !layout::is_name(name) || before == Some('.') {
            return None;
        }
        let mentions = layout::words(code).filter(|w| *w == name).count();
        if mentions != 1 || layout::words(code).any(may_skip) || code.contains(":=") {
            return None;
        }
        let args_start = at + ".pop(".len();
        let args_end = args_start + closing_bracket(&code[args_start..])?;
        let args: Vec<String> = crate::program::lexer::split_top(&code[args_start..args_end])
            .iter()
            .map(|a| self.known_repr(a))
            .collect::<Option<_>>()?;
        // A local's (a global's change is not bound here).
        let shown = self
            .prev
            .locals
            .get(name)
            .filter(|v| !crate::program::known::cut(v))?;
        let (value, after) = crate::program::known::pop(shown, &args)?;
        let statement = format!("{}{value}{}", &code[..starts], &code[args_end + 1..]);
        Some(Popped {
            statement,
            name: name.to_string(),
            value,
            after,
        })
    }

    /// Whether the statement on the current line finishes without raising, as Python
    /// settles it from the values shown: `pass`, a `return` of a settled value, an
    /// assignment of settled values to names, or a change of a list, dict or field
    /// the rules settle (see `mutated_values`). Nothing of the program runs there.
    pub(super) fn cannot_raise(&self) -> bool {
        if !self.steps_past_one_line() {
            return false;
        }
        let code = self.program.code(self.prev.line).trim();
        match code.strip_prefix("return") {
            _ if code == "pass" => true,
            Some("") => true,
            Some(expr) if expr.starts_with([' ', '(']) => self.known_repr(expr.trim()).is_some(),
            _ => {
                let settled = self.assignment_values();
                settled.is_some_and(|(_, values)| values.iter().all(Option::is_some))
                    || self.mutated_values().is_some()
            }
        }
    }

    /// After a one-line `NAME.append(VALUE)`, `NAME[KEY] = VALUE` or `NAME[KEY] OP=
    /// VALUE` on a list or dict the frame holds, where the value is immutable and
    /// settled (see `known_repr`) and the index is in range: the name's new repr. An
    /// immutable value cannot be the list itself, nor change under it. The same of a
    /// field of an object that shows its fields (`self.total += v`, `self.x = x`,
    /// `self.seen.append(v)`; see `program::known::dotted_value`), where a literal
    /// (a fresh `[]`) may be set too.
    fn mutated_values(&self) -> Option<Bindings> {
        let prev = self.prev;
        if !self.steps_past_one_line() {
            return None;
        }
        let code = self.program.code(prev.line).trim();
        let (target, change) = item_change(code)?;
        let (name, field) = match target.split_once('.') {
            Some((name, field)) => (name, Some(field)),
            None => (target, None),
        };
        let before = prev
            .locals
            .get(name)
            .filter(|b| !crate::program::known::cut(b))?;
        let shows_fields = |class: &str| self.program.shows_fields(class);
        let old = match field {
            Some(field) => {
                let shown = |n: &str| (n == name).then(|| before.clone());
                crate::program::known::dotted_value(&format!("{name}.{field}"), shown, shows_fields)
            }
            None => Some(before.clone()),
        };
        let settled = |text: &str| self.known_repr(text).filter(|v| immutable(v));
        let new = match change {
            ItemChange::Append(value) => {
                let Kind::List(items) = Repr::parse(&old?).kind else {
                    return None;
                };
                let mut items: Vec<String> = items.into_iter().map(|item| item.text).collect();
                items.push(settled(value)?);
                crate::program::known::list_repr(&items)
            }
            ItemChange::Assign(value) => {
                let literal = crate::entry::exact_literal_repr(&value);
                literal.or_else(|| settled(&value))?
            }
            ItemChange::Set { key, value } => {
                let value = settled(&value)?;
                let key = self.known_repr(key)?;
                match Repr::parse(&old?).kind {
                    Kind::List(items) => {
                        let mut items: Vec<String> = items.into_iter().map(|i| i.text).collect();
                        let at = crate::program::known::position(&key, items.len())?;
                        items[at] = value;
                        crate::program::known::list_repr(&items)
                    }
                    Kind::Dict(entries) => {
                        // Where the key is there, its value changes in place.
                        crate::program::known::dict_value(&entries, &key)?;
                        let mut entries: Vec<(String, String)> =
                            entries.into_iter().map(|(k, v)| (k.text, v.text)).collect();
                        match entries.iter_mut().find(|(k, _)| *k == key) {
                            Some(entry) => entry.1 = value,
                            None => entries.push((key, value)),
                        }
                        let entries: Vec<String> =
                            entries.iter().map(|(k, v)| format!("{k}: {v}")).collect();
                        format!("{{{}}}", entries.join(", "))
                    }
                    _ => return None,
                }
            }
        };
        let set_plainly = |class: &str| self.program.fields_set_plainly(class);
        let after = match field {
            Some(field) => with_field(before, field, new, set_plainly)?,
            None => new,
        };
        let after = crate::program::known::as_shown(crate::program::known::bounded(after)?);
        Some(Bindings {
            targets: vec![Binding {
                name: name.to_string(),
                must_write: after != *before,
                options: vec![serde_json::Value::from(after).to_string()],
            }],
            written_on: None,
            continues: None,
        })
    }

    /// The reprs of the items a loop over `iterable` yields, read from the state: a
    /// name or a literal, a slice of one with whole-number bounds, `range(...)`,
    /// `enumerate(...)` or `zip(...)` of those, or a dict name's `.items()`,
    /// `.keys()` or `.values()`. And whether the loop reads a list in place (which
    /// its block could reorder under it).
    fn loop_items(&self, iterable: &str) -> Option<(Vec<String>, Reads)> {
        let iterable = iterable.trim();
        let value = |text: &str| self.known_repr(text.trim());
        let number = |text: &str| value(text)?.parse::<i64>().ok();
        if let Some(args) = call_arguments(iterable, "range") {
            let values: Vec<String> = args.iter().map(|a| value(a)).collect::<Option<_>>()?;
            let items = crate::entry::elements(&format!("range({})", values.join(", ")))?;
            return Some((items, Reads::default()));
        }
        if let Some(args) = call_arguments(iterable, "enumerate") {
            let (items, reads) = self.loop_items(args.first()?)?;
            let start = match args.get(1) {
                Some(start) => number(start.trim().trim_start_matches("start="))?,
                None => 0,
            };
            let items = items
                .iter()
                .zip(start..)
                .map(|(item, k)| format!("({k}, {item})"))
                .collect();
            return Some((items, reads));
        }
        if let Some(args) = call_arguments(iterable, "zip") {
            let each: Vec<(Vec<String>, Reads)> = args
                .iter()
                .map(|a| self.loop_items(a))
                .collect::<Option<_>>()?;
            let length = each.iter().map(|(items, _)| items.len()).min()?;
            let items = (0..length)
                .map(|k| {
                    let parts: Vec<&str> =
                        each.iter().map(|(items, _)| items[k].as_str()).collect();
                    format!("({})", parts.join(", "))
                })
                .collect();
            let reads = each
                .iter()
                .fold(Reads::default(), |all, (_, r)| all.and(*r));
            return Some((items, reads));
        }
        for (view, part) in [
            (".items()", None),
            (".keys()", Some(0)),
            (".values()", Some(1)),
        ] {
            if let Some(name) = iterable.strip_suffix(view) {
                let pairs = crate::entry::dict_items(&value(name)?)?;
                let items = pairs
                    .into_iter()
                    .map(|(key, value)| match part {
                        None => format!("({key}, {value})"),
                        Some(0) => key,
                        Some(_) => value,
                    })
                    .collect();
                return Some((items, Reads::default()));
            }
        }
        if let Some((base, bounds)) = iterable
            .strip_suffix(']')
            .and_then(|t| t.rsplit_once('['))
            .filter(|(base, _)| !base.is_empty())
        {
            let (start, stop) = bounds.split_once(':')?;
            let bound = |text: &str| match text.trim() {
                "" => Some(None),
                text => number(text).map(Some),
            };
            let (start, stop) = (bound(start)?, bound(stop)?);
            let (items, of_base) = self.loop_items(base)?;
            let len = items.len() as i64;
            let at = |bound: Option<i64>, default: i64| {
                let b = bound.unwrap_or(default);
                (if b < 0 { b + len } else { b }).clamp(0, len) as usize
            };
            let (from, to) = (at(start, 0), at(stop, len));
            // A slice is a copy, made when the loop starts.
            let reads = Reads {
                live_list: false,
                copied_list: of_base.live_list || of_base.copied_list,
            };
            return Some((items[from..to.max(from)].to_vec(), reads));
        }
        let Some(repr) = value(iterable) else {
            // `reversed(xs)`, a generator: what it yields, read as the loop goes
            // (as a list in place may be).
            let items =
                self.with_scope(|scope| crate::program::iteration::items(iterable, scope))?;
            let reads = Reads {
                live_list: true,
                copied_list: false,
            };
            return Some((items, reads));
        };
        let reads = Reads {
            live_list: repr.trim_start().starts_with('[') && !makes_a_new_list(iterable),
            copied_list: false,
        };
        Some((crate::entry::elements(&repr)?, reads))
    }

    /// Where the loop on the current line goes, of its items (each as the parts its
    /// `targets` take): the first when the loop starts (a variable is unbound, or the
    /// step before came from outside the loop's block), the one after the variables'
    /// current values when it goes round again (the step before came from inside),
    /// out when there is none; where the way in is unknown, either of those. Unknown
    /// where the loop's block could rebind a variable, or where the program could
    /// reorder a list under the loop (appending keeps the order). `None` where the
    /// state's items need not be the loop's at all: the loop may have begun, and its
    /// block could rebind a name the iterable reads or change a list it copied (the
    /// loop goes on over what the iterable gave when it started).
    fn next_items(
        &self,
        targets: &[&str],
        iterable: &str,
        reads: Reads,
        rows: &[Vec<String>],
        current: &[Option<String>],
    ) -> Option<Next> {
        let unknown = Next {
            items: None,
            continues: None,
        };
        let (prev, program) = (self.prev, self.program);
        let block = program.block(prev.line);
        let read = layout::identifiers(iterable);
        let read: Vec<&str> = read.iter().map(String::as_str).collect();
        // One pass over the block: what its lines bind (`del` may unbind anything).
        // The loop itself rebinds its targets (`for k in range(k + 1)`).
        let reads_a_target = targets.iter().any(|t| read.contains(t));
        let (mut rebinds_iterable, mut rebinds_targets, mut unbinds) =
            (reads_a_target, false, false);
        for line in block.clone() {
            let code = program.code(line);
            let bound = layout::bound_by(code);
            let del = layout::words(code).any(|w| w == "del");
            unbinds |= del;
            rebinds_iterable |= del || read.iter().any(|n| bound.contains(*n));
            rebinds_targets |= del || targets.iter().any(|n| bound.contains(*n));
        }
        let changes_a_copy = reads.copied_list
            && block
                .clone()
                .any(|line| changes_in_place(program.code(line), &read));
        let current: Option<Vec<String>> = current.iter().cloned().collect();
        // Whether the loop starts here (`None`: it may start again, or go round).
        let starts = match (&current, self.came_from) {
            (None, _) => Some(true),
            (Some(_), Some(from))
                if from.event == Event::Line
                    && from.function == prev.function
                    && from.depth == prev.depth
                    && from.line != prev.line =>
            {
                Some(!block.contains(&from.line))
            }
            _ => None,
        };
        // Where the step before is unknown, bound variables still say the loop has
        // begun if it can begin only once.
        let starts = starts.or_else(|| {
            program
                .loop_begins_once(prev.line, targets)
                .then_some(false)
        });
        if (rebinds_iterable || changes_a_copy) && starts != Some(true) {
            return None;
        }
        // A loop that starts here takes the first item of what its iterable gives
        // now, whatever its block does later; but where the block may unbind its
        // variables, a loop going round can look like one starting.
        let first = rows.first().cloned();
        if starts == Some(true) && !unbinds {
            return Some(Next {
                continues: Some(first.is_some()),
                items: Some(first.into_iter().collect()),
            });
        }
        if rebinds_iterable || rebinds_targets {
            return Some(unknown);
        }
        if reads.live_list
            && (program.may_reorder_lists(block.clone())
                || block
                    .clone()
                    .any(|line| assigns_an_item(program.code(line))))
        {
            return Some(unknown);
        }
        let current = current.expect("a loop going round again has its variables");
        // The values are not an item's: they changed in ways not foreseen here.
        if !rows.contains(&current) {
            return Some(unknown);
        }
        // Where the steps since the loop began are known, its count says which item
        // comes next, though equal items come before it.
        if let Some(round) = self
            .round
            .filter(|&r| r > 0 && rows.get(r - 1) == Some(&current))
        {
            return Some(Next {
                continues: Some(round < rows.len()),
                items: rows.get(round).map(|next| vec![next.clone()]),
            });
        }
        let mut next: Vec<Vec<String>> = rows
            .windows(2)
            .filter(|pair| pair[0] == current)
            .map(|pair| pair[1].clone())
            .collect();
        // On the last item the loop may end (with no item to bind).
        let may_end = rows.last() == Some(&current);
        let mut continues = match (next.is_empty(), may_end) {
            (false, false) => Some(true),
            (true, _) => Some(false),
            (false, true) => None,
        };
        if starts.is_none() {
            // It may also start again: with the first item.
            next.extend(first.filter(|f| !next.contains(f)));
            if continues == Some(false) {
                continues = None;
            }
        }
        Some(Next {
            items: (!next.is_empty()).then_some(next),
            continues,
        })
    }

    /// Where the current line's statement calls the function that the state `header`
    /// begins a fresh call of (a Step Into from a line), if it does so at one site:
    /// the statement's text (comments cut) and the site. `None` where the statement
    /// could rebind a name first (a comprehension, a lambda, `:=`).
    fn call_site(&self, header: &str) -> Option<CallSite> {
        let prev = self.prev;
        let fields: Vec<&str> = header.strip_prefix("<|call|>")?.split(' ').collect();
        let line: u32 = fields.first()?.parse().ok()?;
        let depth: u32 = fields.get(1)?.parse().ok()?;
        let function = *fields.get(2)?;
        let program = self.program;
        let fresh = *self.action == Action::StepInto
            && prev.event == Event::Line
            && depth == prev.depth + 1
            && program
                .layout
                .calls
                .get(&line)
                .is_some_and(|f| f == function);
        if !fresh {
            return None;
        }
        let code: String = program
            .flow
            .statement(prev.line)
            .iter()
            .filter_map(|l| program.lines.get(*l as usize - 1))
            .map(|t| t.split(" #").next().unwrap_or(t))
            .collect::<Vec<_>>()
            .join(" ");
        if code.trim_start().starts_with("for ") || code.contains(":=") {
            return None;
        }
        // A constructor's `__init__` is called by its class's name.
        let constructs = function == "__init__";
        let called = match constructs {
            true => program.layout.scope.get(line as usize - 1)?.as_str(),
            false => function,
        };
        let pattern = format!("{called}(");
        let sites: Vec<usize> = code
            .match_indices(&pattern)
            .map(|(at, _)| at)
            .filter(|&at| {
                !code[..at]
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_alphanumeric() || c == '_')
            })
            .collect();
        // Of several sites the first runs first, where none is inside another's
        // arguments and no part of the statement may be skipped.
        let &at = sites.first()?;
        // (An assignment runs its value before its targets: `d[f(1)] = f(2)`.)
        let assigns_later = crate::program::lexer::code_chars(&code)
            .filter(|&(pos, c, depth)| pos > at && depth == 0 && c == '=')
            .any(|(pos, _, _)| {
                let before = code[..pos].chars().next_back();
                let after = code[pos + 1..].chars().next();
                !matches!(before, Some('=' | '!' | '<' | '>')) && after != Some('=')
            });
        let around = outside_other_brackets(&code, at);
        if sites.len() > 1 && (layout::words(&around).any(may_skip) || assigns_later) {
            return None;
        }
        // A comprehension's or lambda's names are its own, not the frame's.
        if in_own_scope(&code, at) {
            return None;
        }
        let args_start = at + pattern.len();
        let args_end = args_start + closing_bracket(&code[args_start..])?;
        if sites[1..].iter().any(|&other| other < args_end) {
            return None;
        }
        Some(CallSite {
            line,
            code,
            at,
            args: args_start..args_end,
            constructs,
        })
    }

    /// The locals a call's state must begin with when the current line calls that
    /// function once, with arguments that are literals or names of values the current
    /// state shows (a method's receiver too): bound to the parameters as Python binds
    /// them, as the JSON text of the locals. `None` where the line is not that plain (a
    /// comprehension or lambda may rebind a name, `:=` may change one, a closure holds
    /// more than its parameters, a decorator may wrap the function).
    pub fn bound_arguments(&self, header: &str) -> Option<String> {
        let mut locals = self.call_locals(header, &|arg| self.known_repr(arg))?;
        for value in locals.values_mut() {
            *value = crate::program::known::as_shown(std::mem::take(value));
        }
        Some(serde_json::to_value(&locals).ok()?.to_string())
    }

    /// The locals the call `header` begins binds, each argument's repr given by
    /// `value` (a literal's is its own); see `bound_arguments`.
    fn call_locals(
        &self,
        header: &str,
        value: &dyn Fn(&str) -> Option<String>,
    ) -> Option<crate::state::Vars> {
        let program = self.program;
        let layout = &program.layout;
        let site = self.call_site(header)?;
        let def_text = program.lines.get(site.line as usize - 1)?.trim_start();
        if def_text.starts_with('@') {
            return None;
        }
        let owner = layout.scope.get(site.line as usize - 1)?;
        let method = layout.classes.values().any(|class| class == owner);
        if owner != "<module>" && !method {
            return None;
        }
        let before = &site.code[..site.at];
        let constructs = method && site.constructs;
        let receiver = match before.strip_suffix('.') {
            // `Class(...)`: `self` is the fresh instance, shown as far as it can be.
            None if constructs => Some(match program.fresh_instance_repr(owner) {
                Some(fresh) => fresh,
                None => value(&format!("{owner}(...)"))?,
            }),
            Some(object) if method && !constructs => {
                let name = layout::trailing_name(object);
                let attribute = object[..object.len() - name.len()].ends_with('.');
                if name.is_empty() || attribute {
                    return None;
                }
                Some(value(name)?)
            }
            None if !method => None,
            _ => return None,
        };
        crate::entry::bind_call(
            &program.lines.join("\n"),
            site.line,
            receiver.as_deref(),
            &site.code[site.args.clone()],
            value,
        )
    }

    /// The globals a fresh call's state shows, where nothing the statement runs before
    /// the call can have changed them: the caller's (the module's locals, when the
    /// caller is the module). Any code of the program run first would have been a call
    /// of its own, where Step Into stops instead, so only builtins run before it: what
    /// the statement completes before the call (its text before the call site, where a
    /// bracket closes, and the call's arguments) calls nothing but builtins that change
    /// no object (`len`, `sorted`, ...; no method, no `next`, `setattr`), and subscripts
    /// no `defaultdict`, which a read changes. As the JSON text of the globals; `None`
    /// where that is not so plain.
    pub fn callee_globals(&self, header: &str) -> Option<String> {
        let prev = self.prev;
        let site = self.call_site(header)?;
        let globals = match prev.function.as_str() {
            "<module>" => &prev.locals,
            _ => &prev.globals,
        };
        // Calls the statement completes before the site, then those in its arguments
        // (a call enclosing the site runs after the call returns).
        let before = &site.code[..site.at];
        let completed = completed_calls(before)
            .into_iter()
            .chain(completed_calls(&site.code[site.args.clone()]));
        for callee in completed {
            if !effects::PURE_FUNCTIONS.contains(&callee) {
                return None;
            }
        }
        let reads_defaultdict = globals.values().any(|v| v.starts_with("defaultdict("))
            && site.code[..site.args.end].contains('[');
        if reads_defaultdict {
            return None;
        }
        Some(serde_json::to_value(globals).ok()?.to_string())
    }

    /// Back in a function's frame after a Step Into from a return, the globals its
    /// state shows (written in full: the frame changed): the returning frame's, where
    /// nothing the rest of the calling statement can run changes a global. Any code of
    /// the program would have stopped the step at its call; so only builtins and
    /// methods that change no object run (see `effects::PURE_FUNCTIONS`), and no line
    /// says `global`. As the JSON text of the globals.
    pub fn returned_globals(&self, header: &str) -> Option<String> {
        let (prev, program) = (self.prev, self.program);
        let caller = prev.stack.last()?;
        let in_caller =
            header_frame(header) == Some((prev.depth.checked_sub(1)?, caller.function.as_str()));
        let ran = header.starts_with("<|line|>") || header.starts_with("<|return|>");
        if *self.action != Action::StepInto
            || prev.event != Event::Return
            || !in_caller
            || !ran
            || caller.function == "<module>"
            || program.changes_globals_from_afar
            || program.rebinds_from_afar
        {
            return None;
        }
        let statement = program.flow.statement(caller.line);
        let code: Vec<&str> = statement.iter().map(|&l| program.code(l)).collect();
        let code = code.join(" ");
        let harmless = |callee: &str| match callee.strip_prefix('.') {
            Some(method) => effects::PURE_METHODS.contains(&method),
            None => effects::PURE_FUNCTIONS.contains(&callee) || program.defines(callee),
        };
        if !completed_calls(&code).into_iter().all(harmless) {
            return None;
        }
        Some(serde_json::to_value(&prev.globals).ok()?.to_string())
    }

    /// The value a `return` state must carry when its line says it outright:
    /// `return LITERAL` the literal's repr, `return EXPR` what the state's values
    /// settle of it (see [`Returned`]). As the JSON text written after `<|value|>`;
    /// `None` when they do not settle it or the value section has not begun.
    pub fn returned_value(&self, header: &str, rest: &str) -> Option<String> {
        rest.rfind(language::VALUE)?;
        self.returned(header)?.value(rest)
    }

    /// What a `return` state with this header returns, where its line says it
    /// outright (see [`Returned`]); for an `exception` state on the current line, the
    /// exception it raises (see `surely_raises` and `raised`).
    pub fn returned(&self, header: &str) -> Option<Returned> {
        if header.starts_with("<|exception|>") {
            // Raised by the current line, in its frame.
            let prev = self.prev;
            let here = header_line(header) == Some(prev.line)
                && header_frame(header) == Some((prev.depth, prev.function.as_str()));
            let raised = || self.surely_raises().or_else(|| self.raised());
            return here.then(raised).flatten().map(Returned::Repr);
        }
        if !header.starts_with("<|return|>") {
            return None;
        }
        // The module's code returns nothing.
        if header_frame(header).is_some_and(|(_, function)| function == "<module>") {
            return Some(Returned::Repr("None".to_string()));
        }
        let line: usize = header["<|return|>".len()..]
            .split(' ')
            .next()?
            .parse()
            .ok()?;
        // The whole statement: `return (a +` may go on over lines.
        let code = self.program.statement_text(u32::try_from(line).ok()?)?;
        let expr = code.strip_prefix("return ")?.trim();
        if let Some(repr) = crate::entry::exact_literal_repr(expr) {
            return Some(Returned::Repr(repr));
        }
        let builtins = crate::program::known::builtin_names()
            .filter(|name| self.program.builtin_in(name, self.prev))
            .map(|name| name.to_string())
            .collect();
        Some(Returned::Computed {
            expr: expr.to_string(),
            locals_before: self.prev.locals.clone(),
            globals_before: self.prev.globals.clone(),
            builtins,
            fields_shown_by: self.program.classes_showing_fields().clone(),
        })
    }

    /// The exception a forward step from the current one-line statement surely raises
    /// there, its repr: an assignment's value, an augmented assignment, or a returned
    /// expression whose settled parts make an operation fail (see
    /// [`crate::program::raises`]). Nothing of the program runs before it fails.
    pub(super) fn surely_raises(&self) -> Option<String> {
        self.raises
            .get_or_init(|| {
                if !self.steps_from_one_line() {
                    return None;
                }
                let code = self.program.code(self.prev.line).trim();
                let expr = match code.strip_prefix("return ") {
                    Some(expr) => expr.to_string(),
                    None => match assignment(code) {
                        Some((_, value)) => value.to_string(),
                        None => augmented_arithmetic(code)?.1,
                    },
                };
                self.with_scope(|scope| crate::program::raises::raised_by(&expr, scope))
            })
            .clone()
    }

    /// The exception a forward step from a `raise CLASS(ARGS)` line raises there,
    /// where `CLASS` is one of Python's plain exception classes (see
    /// `known::exception_repr`) that no name of the program hides and its arguments are
    /// settled: its repr.
    fn raised(&self) -> Option<String> {
        let prev = self.prev;
        if !self.action.is_forward_step() || prev.event != Event::Line {
            return None;
        }
        let line = prev.line;
        let code = self.program.statement_text(line)?;
        let raised = code.strip_prefix("raise ")?.trim();
        let (class, args) = match raised.split_once('(') {
            Some((class, rest)) => {
                let inner = rest.strip_suffix(')').filter(|_| closes_at_end(rest))?;
                let args: Vec<String> = crate::program::lexer::split_top(inner)
                    .iter()
                    .map(|a| self.known_repr(a))
                    .collect::<Option<_>>()?;
                (class.trim(), args)
            }
            None => (raised, Vec::new()),
        };
        if !self.program.builtin_in(class, prev) {
            return None;
        }
        crate::program::known::exception_repr(class, &args).map(crate::program::known::as_shown)
    }

    /// What a forward step from a `print(...)` line prints, where the line's text and
    /// the values shown say (see [`crate::program::printed`]): the step that finishes the print
    /// in the same frame (a `line` or `return` state at the frame's depth).
    pub fn printed_by_step(&self, header: &str) -> Option<&crate::program::printed::Printed> {
        let prev = self.prev;
        let event_ok = header.starts_with("<|line|>") || header.starts_with("<|return|>");
        if prev.event == Event::Return {
            let caller = self.caller?;
            let in_caller = header_frame(header) == Some((caller.depth, caller.function.as_str()));
            return self
                .printed
                .get_or_init(|| self.printed_after_return(caller))
                .as_ref()
                .filter(|_| in_caller && event_ok);
        }
        let same_frame = header_frame(header) == Some((prev.depth, prev.function.as_str()));
        if !same_frame || !event_ok {
            return None;
        }
        self.printed
            .get_or_init(|| {
                if !self.steps_from_one_line() {
                    return None;
                }
                let code = self.program.code(prev.line);
                crate::program::printed::Printed::of_statement(
                    code,
                    |name| shown_value(prev, name),
                    |name| self.program.builtin_in(name, prev),
                )
            })
            .as_ref()
    }

    /// Back in `caller` from the call its one-line `print(CALL)` made, the call the
    /// print's one argument is (the outermost, made once): what the print writes of
    /// the value returned.
    fn printed_after_return(
        &self,
        caller: &crate::State,
    ) -> Option<crate::program::printed::Printed> {
        let (prev, program) = (self.prev, self.program);
        let returned = prev
            .value
            .as_deref()
            .filter(|v| !crate::program::known::cut(v))?;
        let one_line = program.flow.statement(caller.line).len() == 1;
        let back = prev.stack.last().is_some_and(|f| f.line == caller.line);
        if !self.action.is_forward_step() || caller.event != Event::Line || !one_line || !back {
            return None;
        }
        let code = program.code(caller.line).trim();
        let inner = code.strip_prefix("print(")?.strip_suffix(')')?;
        let args = crate::program::lexer::split_top(inner);
        let keyword = |a: &str| {
            a.split_once('=')
                .is_some_and(|(k, _)| layout::is_name(k.trim()))
        };
        let [call] = &args.iter().filter(|a| !keyword(a)).collect::<Vec<_>>()[..] else {
            return None;
        };
        let call = call.trim();
        let pattern = format!("{}(", prev.function);
        let at = call.find(&pattern)?;
        let plain_site = call[..at].is_empty() || call[..at].ends_with('.');
        let once = call.matches(&pattern).count() == 1;
        if !plain_site || !once || !closes_at_end(&call[at + pattern.len()..]) {
            return None;
        }
        let printed = code.replacen(call, returned, 1);
        crate::program::printed::Printed::of_statement(&printed, |_| None, |_| false)
    }
}

/// What a `return` line returns, read from its text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Returned {
    /// This repr (`return 3`, or the module's `None`).
    Repr(String),
    /// An expression's value where it is a name (`return total`), whole-number
    /// arithmetic or a comparison of names and literals (`return a + 2 * b`, see
    /// `program::known`), from the values the return state writes, or those it carries
    /// unchanged (`"..": ".."`) from the state before.
    Computed {
        expr: String,
        locals_before: crate::state::Vars,
        globals_before: crate::state::Vars,
        /// Those of [`crate::program::known::builtin_names`] no name of the program
        /// hides.
        builtins: BTreeSet<String>,
        /// The program's classes whose instances show their fields (see
        /// [`crate::program::known::dotted_value`]).
        fields_shown_by: BTreeSet<String>,
    },
}

impl Returned {
    /// The value's JSON text, given the state's body written so far (its locals on
    /// the first line, then its globals); `None` where they do not say it.
    pub fn value(&self, body: &str) -> Option<String> {
        let repr = match self {
            Returned::Repr(repr) => repr.clone(),
            Returned::Computed {
                expr,
                locals_before,
                globals_before,
                builtins,
                fields_shown_by,
            } => {
                let section = |text: &str| -> Option<IndexMap<String, String>> {
                    serde_json::from_str(text).ok()
                };
                let locals = section(body.lines().next()?)?;
                let globals = body
                    .lines()
                    .find_map(|line| line.strip_prefix(language::GLOBALS))
                    .and_then(section);
                let carries = |vars: &IndexMap<String, String>| vars.contains_key(language::REST);
                let value_of = |name: &str| match locals.get(name) {
                    Some(value) => Some(value.clone()),
                    None if carries(&locals) && locals_before.contains_key(name) => {
                        locals_before.get(name).cloned()
                    }
                    // Not a local: a global, as the state writes it or carries it.
                    None => match &globals {
                        Some(globals) if !carries(globals) => globals.get(name).cloned(),
                        Some(globals) => globals.get(name).or(globals_before.get(name)).cloned(),
                        None => globals_before.get(name).cloned(),
                    },
                };
                let dotted = |name: &str| {
                    let whole =
                        |name: &str| value_of(name).filter(|v| !crate::program::known::cut(v));
                    crate::program::known::dotted_value(name, whole, |class| {
                        fields_shown_by.contains(class)
                    })
                };
                let scope = crate::program::known::Scope {
                    value_of: &dotted,
                    builtin: &|name| builtins.contains(name),
                };
                crate::program::known::as_shown(crate::program::known::repr_of(expr, &scope)?)
            }
        };
        Some(serde_json::Value::from(repr).to_string())
    }
}

/// A binding of `name` to any value whose repr begins with one of `beginnings`.
fn beginning_with(name: &str, beginnings: &[&str]) -> Binding {
    let json_start = |b: &&str| {
        let quoted = serde_json::Value::from(*b).to_string();
        quoted[..quoted.len() - 1].to_string() // without the closing quote
    };
    Binding {
        name: name.to_string(),
        options: beginnings.iter().map(json_start).collect(),
        must_write: false,
    }
}

/// Bindings that hold each of `state`'s locals that `keeps` picks to its value.
fn keeping(state: &crate::State, keeps: impl Fn(&str, &str) -> bool) -> Bindings {
    let targets = state
        .locals
        .iter()
        .filter(|(name, value)| keeps(name, value))
        .map(|(name, value)| Binding {
            name: name.clone(),
            options: vec![serde_json::Value::from(value.as_str()).to_string()],
            must_write: false,
        })
        .collect();
    Bindings {
        targets,
        written_on: None,
        continues: None,
    }
}

/// Where a statement calls a function (see [`NextState::call_site`]).
struct CallSite {
    /// The function's `def` line.
    line: u32,
    /// The statement's text, comments cut.
    code: String,
    /// Where the call's name begins in `code`.
    at: usize,
    /// The text between the call's brackets.
    args: std::ops::Range<usize>,
    /// The call is a class's, which runs its `__init__` on a fresh instance.
    constructs: bool,
}

/// The callees of the calls that `text` (a prefix of a statement, or an argument list)
/// opens and closes: a name (`len`), or for a method or a call of anything else, a
/// text that names no builtin (`.append`, `)`), so that it counts as not pure.
pub(super) fn completed_calls(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut calls = Vec::new();
    for (at, _) in text.match_indices('(') {
        if closing_bracket(&text[at + 1..]).is_none() {
            continue; // encloses what follows: it runs later
        }
        let before = &text[..at];
        let name = layout::trailing_name(before);
        let start = at - name.len();
        let callee = if name.is_empty() {
            // `(a + b)` groups; `f(x)(y)` and `xs[0](y)` call what a bracket gave.
            match before.trim_end().chars().next_back() {
                Some(')' | ']') => ")",
                _ => continue,
            }
        } else if start > 0 && bytes[start - 1] == b'.' {
            &text[start - 1..at]
        } else {
            name
        };
        calls.push(callee);
    }
    calls
}

/// The line of a state's header (`<|line|>3 1 f`).
pub(super) fn header_line(header: &str) -> Option<u32> {
    header.split("|>").nth(1)?.split(' ').next()?.parse().ok()
}

/// The arguments of `text` if it is one call of `function` (`zip(a, b)`).
fn call_arguments(text: &str, function: &str) -> Option<Vec<String>> {
    let inner = text.strip_prefix(function)?.strip_prefix('(')?;
    closes_at_end(inner).then(|| crate::program::lexer::split_top(&inner[..inner.len() - 1]))
}

/// `NAMES = VALUES` with plain names for targets (`a, b = ...`, `(a, b) = ...`, or one
/// annotated name, `a: list[int] = ...`): the names and the values' text. Not a
/// comparison, nor a chain (`a = b = c`).
pub(super) fn assignment(code: &str) -> Option<(Vec<String>, &str)> {
    let (targets, values) = code.trim().split_once('=')?;
    // A second `=` outside brackets chains the assignment (`key=` inside a call's
    // brackets is an argument; `==`, `<=` compare).
    use crate::program::lexer::{chars, Kind};
    let bytes = values.as_bytes();
    let top_equals =
        chars(values).filter(|ch| ch.kind == Kind::Code && ch.depth == 0 && ch.c == '=');
    let assigns_again = top_equals.map(|ch| ch.at).any(|at| {
        let before = at.checked_sub(1).map(|b| bytes[b]);
        let compares =
            before.is_some_and(|b| b"=!<>".contains(&b)) || bytes.get(at + 1) == Some(&b'=');
        !compares
    });
    if values.starts_with('=') || assigns_again {
        return None;
    }
    if let Some((name, _annotation)) = targets.split_once(':') {
        let name = name.trim();
        return layout::is_name(name).then(|| (vec![name.to_string()], values));
    }
    Some((plain_names(targets)?, values))
}

/// `repr`, an object's that shows its fields, with `field` set to `value` (a new field
/// comes last, as Python's instance dict keeps them in order).
fn with_field(
    repr: &str,
    field: &str,
    value: String,
    set_plainly: impl Fn(&str) -> bool,
) -> Option<String> {
    let (class, mut fields) = crate::program::known::object_fields(repr, set_plainly)?;
    match fields.iter_mut().find(|(f, _)| f == field) {
        Some(entry) => entry.1 = value,
        None => fields.push((field.to_string(), value)),
    }
    let shown: Vec<String> = fields.iter().map(|(f, v)| format!("{f}={v}")).collect();
    Some(format!("{class}({})", shown.join(", ")))
}

/// How a statement changes one item of a name's list or dict, or a field of its
/// object.
enum ItemChange<'c> {
    /// `NAME.append(VALUE)` (or `NAME.FIELD.append(VALUE)`).
    Append(&'c str),
    /// `NAME.FIELD = VALUE`, the value's text (`NAME.FIELD + (V)` for `+=`).
    Assign(String),
    /// `NAME[KEY] = VALUE`, the value's text (`NAME[KEY] + (V)` for `NAME[KEY] += V`).
    Set { key: &'c str, value: String },
}

/// The name and change of `NAME.append(VALUE)`, `NAME[KEY] = VALUE` or
/// `NAME[KEY] OP= VALUE` (a whole-number operator).
fn item_change(code: &str) -> Option<(&str, ItemChange<'_>)> {
    // `NAME` or `NAME.FIELD`.
    let plain_target = |text: &str| {
        let parts: Vec<&str> = text.split('.').collect();
        parts.len() <= 2 && parts.iter().all(|p| layout::is_name(p))
    };
    if let Some((name, rest)) = code.split_once(".append(") {
        let value = rest.strip_suffix(')').filter(|_| closes_at_end(rest))?;
        return plain_target(name).then_some((name, ItemChange::Append(value)));
    }
    let (target, value) = code.split_once('=')?;
    if value.starts_with('=') {
        return None;
    }
    let (target, op) = match augmented_operator(target) {
        Some((target, op)) => (target.trim(), Some(op)),
        None => (target.trim(), None),
    };
    let value = match op {
        Some(op) => format!("{target} {op} ({})", value.trim()),
        None => value.trim().to_string(),
    };
    if target.contains('.') && plain_target(target) {
        return Some((target, ItemChange::Assign(value)));
    }
    let (name, key) = target.strip_suffix(']')?.split_once('[')?;
    if !layout::is_name(name) || !closes_at_end(&target[name.len() + 1..]) {
        return None;
    }
    Some((name, ItemChange::Set { key, value }))
}

/// `NAME OP= VALUE` with a whole-number operator (`n -= 1`, `k //= 2`): the name, and
/// the arithmetic it takes the value of (`n - (1)`).
fn augmented_arithmetic(code: &str) -> Option<(&str, String)> {
    let (target, value) = code.trim().split_once('=')?;
    if value.starts_with('=') {
        return None;
    }
    let (name, op) = augmented_operator(target)?;
    let name = name.trim();
    layout::is_name(name).then(|| (name, format!("{name} {op} ({})", value.trim())))
}

/// The target before an augmented assignment's `=` (`n //`), split from its
/// whole-number operator (`n`, `//`).
fn augmented_operator(target: &str) -> Option<(&str, &str)> {
    ["//", "+", "-", "*", "%"]
        .iter()
        .find_map(|op| Some((target.trim_end().strip_suffix(op)?, *op)))
}

/// The names of `a, b` or `(a, b)` as assignment targets, if each is a plain name.
fn plain_names(targets: &str) -> Option<Vec<String>> {
    let names: Vec<String> = unparenthesized(targets)
        .split(',')
        .map(|n| n.trim().to_string())
        .collect();
    names.iter().all(|n| layout::is_name(n)).then_some(names)
}

/// `text` trimmed, without parentheses that enclose all of it.
fn unparenthesized(text: &str) -> &str {
    let text = text.trim();
    text.strip_prefix('(')
        .and_then(|t| t.strip_suffix(')'))
        .filter(|_| crate::program::lexer::split_top(text).len() == 1)
        .unwrap_or(text)
}

/// The parts of a tuple's or list's repr (what unpacking it gives).
fn tuple_parts(repr: &str) -> Option<Vec<String>> {
    let repr = repr.trim();
    let inner = repr
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .or_else(|| repr.strip_prefix('[').and_then(|r| r.strip_suffix(']')))?;
    let parts = crate::program::lexer::split_top(inner);
    Some(parts.into_iter().map(|p| p.trim().to_string()).collect())
}

/// Whether `iterable` builds a list of its own, which no name of the program holds
/// (so no statement can change it under a loop): a display or comprehension,
/// `sorted(...)`, `list(...)`, a string's `split(...)`, a concatenation.
fn makes_a_new_list(iterable: &str) -> bool {
    let text = iterable.trim();
    let display = text.starts_with('[') && closes_at_end(&text[1..]);
    let built = crate::program::builtins::split_call(text)
        .is_some_and(|(name, _)| ["sorted", "list"].contains(&name));
    let split = text
        .rsplit_once(".split(")
        .is_some_and(|(_, rest)| closes_at_end(rest));
    let joined = crate::program::conditions::split_at_word(text, " + ").len() > 1;
    display || built || split || joined
}

/// Whether a line assigns to an item or a slice (`xs[i] = v`, `xs[i] += v`).
/// Whether the line `code` may change one of the lists `names` in place: a method
/// that does (`xs.append(...)`, `xs.sort()`, ...), an item or slice assignment to it,
/// or `del` of its items. (A call that changes it through another name is not seen,
/// as for a list read in place.)
fn changes_in_place(code: &str, names: &[&str]) -> bool {
    const CHANGING: [&str; 8] = [
        "append", "extend", "insert", "remove", "pop", "sort", "reverse", "clear",
    ];
    let code = code.trim_start();
    // `text` in `code`, not as the tail of a longer name (`xs.pop(` in `ys.pop(`).
    let has = |text: &str| {
        code.match_indices(text).any(|(at, _)| {
            !code[..at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.')
        })
    };
    names.iter().any(|name| {
        let method = CHANGING.iter().any(|m| has(&format!("{name}.{m}(")));
        let item = code.starts_with(&format!("{name}[")) && assigns_an_item(code)
            || code.starts_with("del ") && has(&format!("{name}["));
        method || item
    })
}

fn assigns_an_item(code: &str) -> bool {
    let chars: Vec<(usize, char, i32)> = crate::program::lexer::code_chars(code).collect();
    let assignment = chars.iter().enumerate().find(|(k, &(_, c, depth))| {
        let before = k.checked_sub(1).map(|k| chars[k].1);
        let after = chars.get(k + 1).map(|c| c.1);
        c == '='
            && depth == 0
            && !matches!(before, Some('=' | '!' | '<' | '>' | ':'))
            && after != Some('=')
    });
    assignment.is_some_and(|(k, _)| chars[..k].iter().any(|&(_, c, _)| c == ']'))
}
