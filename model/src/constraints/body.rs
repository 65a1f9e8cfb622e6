//! Which names the next state's locals hold: the body's spec (what may, must and
//! cannot be written) from the frame's names, its parameters, what the step can change,
//! what a frame cannot lose and what an assignment binds first.

use super::values::{assignment, header_line};
use super::{header_frame, immutable, shown_value, NextState};
use crate::grammar::BodySpec;
use crate::program::layout;
use crate::{Action, Event};
use std::collections::BTreeSet;

impl NextState<'_> {
    /// What the body of the state whose header is `header` may hold: the names the
    /// program could bind, and whether it is written as a diff of the current state.
    pub fn body_spec(&self, header: &str, at_start: bool) -> BodySpec {
        let (event, fields) = header.split_once("|>").unwrap_or(("", header));
        let fields: Vec<&str> = fields.split(' ').collect();
        let function = fields.get(2).copied().unwrap_or("");
        let event = format!("{event}|>");
        let same_frame = self.single_step_in_frame(header, at_start);
        let diff = same_frame && self.locals.is_diff();
        let names = |known: &[String], current: &crate::state::Vars| {
            let mut names: Vec<String> = known.to_vec();
            names.extend(current.keys().cloned());
            names.sort();
            names.dedup();
            names
        };
        // A function's locals are names its lines mention (and, in the same function,
        // what it holds now).
        let same_function = function == self.prev.function;
        let no_vars = crate::state::Vars::new();
        let mut local_names = match self.program.frame_names.get(function) {
            Some(known) => names(
                known,
                if same_function {
                    &self.prev.locals
                } else {
                    &no_vars
                },
            ),
            None => names(&self.program.identifiers, &self.prev.locals),
        };
        // A frame's locals begin with its parameters (a class body or the module
        // has none to require).
        let line = fields.first().and_then(|f| f.parse::<u32>().ok());
        let defined_here = |line: &u32| {
            self.program
                .layout
                .calls
                .get(line)
                .is_some_and(|f| f == function)
        };
        let fresh_call = event == "<|call|>" && !diff && line.as_ref().is_some_and(defined_here);
        let required = match line {
            Some(line) if fresh_call => self
                .program
                .parameters
                .get(&line)
                .cloned()
                .unwrap_or_default(),
            // Going into a loop's block, a name that must take a new value is written
            // (a diff cannot carry it over unchanged).
            Some(line) if diff && event == "<|line|>" => self
                .bindings()
                .into_iter()
                .filter(|b| b.written_on.as_ref().is_some_and(|on| on.contains(&line)))
                .flat_map(|b| &b.targets)
                .filter(|target| target.must_write)
                .map(|target| target.name.clone())
                .collect(),
            _ => Vec::new(),
        };
        // A function that closes over nothing starts with its parameters alone.
        let closes_over_nothing = line.is_some_and(|line| self.program.closes_over_nothing(line));
        // After one statement in the same frame, only what it binds or (through a
        // call, subscript or attribute) mutates can change.
        let changeable = self.changeable_in(header, at_start);
        let changes_known = changeable.is_some();
        // What a frame held before and cannot have lost (see `held_names`).
        let mut held = self.held_names(header);
        held.extend(self.newly_bound(header));
        // Once an assignment has run, a name whose value it changed is written,
        // wherever the locals put it (not one the program defines: see `newly_bound`).
        let assigned = self.bindings().filter(|b| b.written_on.is_none());
        if self.ran_in_frame(header) {
            let changed = assigned
                .iter()
                .flat_map(|b| &b.targets)
                .filter(|t| t.must_write);
            let shown = changed.filter(|t| !self.program.defines(&t.name));
            held.extend(shown.map(|t| t.name.clone()));
        }
        let assigned = self.assigned_by_return(header).into_iter().flatten();
        held.extend(assigned.map(|binding| binding.name));
        // Written in full, a step whose changes are known (`changeable`) writes every
        // name again, but for those it may unbind.
        if !self.locals.is_diff() && changeable.is_some() {
            let vanishing = self.vanishing(line);
            let kept = self.prev.locals.keys().filter(|n| !vanishing.contains(*n));
            held.extend(kept.cloned());
        }
        // Into a loop's block, in full, its targets are there (a diff writes those that
        // must change: `required`).
        if !self.locals.is_diff() && same_frame && event == "<|line|>" {
            let into_block = |b: &&super::Bindings| {
                let block = b.written_on.as_ref();
                block.is_some_and(|block| line.is_some_and(|line| block.contains(&line)))
            };
            let loop_bound = self.bindings().filter(into_block);
            held.extend(
                loop_bound
                    .iter()
                    .flat_map(|b| &b.targets)
                    .map(|t| t.name.clone()),
            );
        }
        held.sort();
        held.dedup();
        if let Some(names) = self.caller_names(header) {
            local_names.retain(|name| names.contains(name));
        }
        local_names.extend(held.iter().cloned());
        local_names.sort();
        local_names.dedup();
        // A forward step in the frame loses no name but those it can unbind.
        let carried = match diff && self.action.is_forward_step() && !self.program.rebinds_from_afar
        {
            true => {
                let vanishing = self.vanishing(line);
                let kept = self.prev.locals.keys().filter(|n| !vanishing.contains(*n));
                let mut kept: Vec<String> = kept.cloned().collect();
                kept.sort();
                kept
            }
            false => Vec::new(),
        };
        BodySpec {
            carried,
            changeable,
            local_names,
            held,
            global_names: match diff.then(|| self.changeable_globals(changes_known)) {
                Some(Some(changeable)) => changeable,
                _ => names(&self.program.identifiers, &self.prev.globals),
            },
            diff,
            valued: event == "<|return|>" || event == "<|exception|>",
            exact: fresh_call && closes_over_nothing,
            ordered: fresh_call,
            required,
            stdout: self.stdout_written(header),
            globals: None, // set by `body` with the globals themselves
        }
    }

    /// Whether the state `header` begins writes globals where no step can have
    /// changed whether the module holds any: never in the module's own frame (its
    /// globals are its locals); in a function's frame next to another function's (a
    /// single step, or a Step Out, from a function's frame), as that state does: every
    /// frame shares the module's globals, the module runs no line between, and no
    /// line of the program adds or removes a global (see
    /// `ProgramModel::changes_globals_from_afar`).
    pub(super) fn globals_written(&self, header: &str) -> Option<bool> {
        let (_, function) = header_frame(header)?;
        if function == "<module>" {
            return Some(false);
        }
        let next_to = self.action.is_single_step() || *self.action == Action::StepReturn;
        let prev = self.prev;
        if !next_to || prev.function == "<module>" || self.program.changes_globals_from_afar {
            return None;
        }
        Some(!prev.globals.is_empty())
    }

    /// Whether the state `header` begins writes stdout, after a forward step in the
    /// same frame: it must where the step ran a whole `print` (one that runs no code
    /// of the program and writes its `end`, or whose text cannot be empty, see
    /// `printed_by_step`), and did not end in a handler; it cannot where the statement
    /// prints nothing and runs no code of the program (see `changes_no_object`), nor
    /// from a call to the frame's first line, nor back in the caller after a Step
    /// Into from a return where the rest of the calling statement prints nothing.
    fn stdout_written(&self, header: &str) -> Option<bool> {
        let (prev, program) = (self.prev, self.program);
        if *self.action == Action::StepInto && prev.event == Event::Return {
            // Only the rest of the calling statement has run: a second call of the
            // function that returned would have stopped at that call.
            let caller = prev.stack.last()?;
            let in_caller = header_frame(header)
                == Some((prev.depth.checked_sub(1)?, caller.function.as_str()));
            let quiet = program.prints_nothing_but(caller.line, &prev.function);
            return (in_caller && quiet).then_some(false);
        }
        let same_frame = header_frame(header) == Some((prev.depth, prev.function.as_str()));
        if !self.action.is_forward_step() || !same_frame {
            return None;
        }
        // From a frame's start to its first line nothing runs (a generator resumed
        // where it paused may finish that line: not this rule).
        let fresh_call = prev.event == Event::Call
            && program.layout.calls.get(&prev.line) == Some(&prev.function)
            && !program.layout.resumable.contains(&prev.function);
        if fresh_call {
            return Some(false);
        }
        if prev.event != Event::Line {
            return None;
        }
        let statement = program.flow.statement(prev.line);
        let prints = statement
            .iter()
            .any(|&line| layout::words(program.code(line)).any(|w| w == "print"));
        if !prints {
            return (self.changes_no_object() || self.cannot_raise()).then_some(false);
        }
        let code = program.code(prev.line).trim();
        let whole_print = statement.len() == 1
            && code.starts_with("print(")
            && code.ends_with(')')
            && !code.contains("end=")
            && !code.contains("file=")
            && program.mutates_nothing(prev.line);
        let never_empty = self.printed_by_step(header).is_some_and(|p| !p.admits(""));
        let ran = header.starts_with("<|line|>") || header.starts_with("<|return|>");
        let handled = header_line(header).is_some_and(|line| {
            let next = program.code(line).trim_start();
            ["except", "finally", "with ", "async with "]
                .iter()
                .any(|k| next.starts_with(k))
        });
        ((whole_print || never_empty) && ran && !handled).then_some(true)
    }

    /// Whether the state `header` begins follows one single step in the frame it
    /// started in (the step a diff is written after).
    pub(super) fn single_step_in_frame(&self, header: &str, at_start: bool) -> bool {
        !at_start
            && self.action.is_single_step()
            && !header.starts_with("<|call|>")
            && header_frame(header).is_some_and(|(depth, function)| {
                depth == self.prev.depth && function == self.prev.function
            })
    }

    /// The names the one statement run from the current line may have changed, where
    /// the state `header` begins is the next in its frame (see `changeable_names`).
    pub(super) fn changeable_in(&self, header: &str, at_start: bool) -> Option<Vec<String>> {
        let forward = self.action.is_forward_step();
        if !self.single_step_in_frame(header, at_start) || !forward {
            return None;
        }
        match self.prev.event {
            Event::Line => self.changeable_names(header_line(header)),
            // From a function's fresh call to its first line nothing runs. (Not a
            // generator resumed mid-line, nor a class body, which binds its dunders.)
            Event::Call if self.fresh_function_call() => Some(Vec::new()),
            _ => None,
        }
    }

    /// In a diff after one statement of a function's frame whose changes are known
    /// (`locals_known`, see `changeable_in`), the globals it can have changed: none
    /// from a fresh call to its first line or where it changes no object (see
    /// `changes_no_object`), else those whose values may be mutable. `None` where a
    /// line could rebind or remove a global.
    fn changeable_globals(&self, locals_known: bool) -> Option<Vec<String>> {
        let prev = self.prev;
        if !locals_known || self.program.changes_globals_from_afar || prev.function == "<module>" {
            return None;
        }
        if prev.event == Event::Call || self.changes_no_object() {
            return Some(Vec::new());
        }
        let mutable = prev.globals.iter().filter(|(_, value)| !immutable(value));
        let mut names: Vec<String> = mutable.map(|(name, _)| name.clone()).collect();
        names.sort();
        Some(names)
    }

    /// Whether the current state is the `call` of a function at its `def` line, one
    /// that closes over nothing (a closure's free variables appear at its first line).
    fn fresh_function_call(&self) -> bool {
        let (prev, layout) = (self.prev, &self.program.layout);
        prev.event == Event::Call
            && layout.calls.get(&prev.line) == Some(&prev.function)
            && !layout.classes.values().any(|class| *class == prev.function)
            && self.program.closes_over_nothing(prev.line)
    }

    /// The locals that running the current statement can change: the names it binds
    /// and, if it calls, subscripts or reaches into an attribute, every local whose
    /// value may be mutable (aliases included), unless it changes no object (see
    /// `changes_no_object`). A name the step may unbind (see `vanishing`) is
    /// changeable too; a diff that loses a name is written in full, so `None` for
    /// diffs there, and `None` where a name can change from another frame (`global`,
    /// `nonlocal`). A `for` loop that ends (its next line, `next_line`, past its
    /// block) binds nothing: its targets keep their values.
    fn changeable_names(&self, next_line: Option<u32>) -> Option<Vec<String>> {
        let prev = self.prev;
        let program = self.program;
        if program.rebinds_from_afar {
            return None;
        }
        let mut changeable = self.vanishing(next_line);
        if self.locals.is_diff() && !changeable.is_empty() {
            return None;
        }
        // Worked out for a `for` line only.
        let past_loop = || next_line.is_some_and(|line| !program.block(prev.line).contains(&line));
        let statement = program.flow.statement(prev.line);
        // `import a.b as c` binds modules only, which the tracer hides too.
        let plain_import = statement
            .first()
            .is_some_and(|&l| program.code(l).trim_start().starts_with("import "));
        let mut reaches_in = false;
        for &line in &statement {
            let code = program.code(line);
            if code.trim_start().starts_with('@') {
                return None; // a decorator: which definition it binds is further down
            }
            // A `def` or `class` binds its name, to a function or class of that name,
            // which the tracer hides (the source shows it), unless a decorator bound
            // something else. (A name it hides that the state showed is `vanishing`.)
            let defined = program.layout.calls.get(&line);
            changeable.extend(defined.filter(|_| program.decorated(line)).cloned());
            // A `def` line runs only its defaults and annotations: a call among them
            // is a second bracket (its parameters' is the first).
            let defines = ["def ", "async def "]
                .iter()
                .any(|k| code.trim_start().starts_with(k));
            reaches_in |= match defines {
                true => code.matches('(').count() > 1,
                false => code.contains(['(', '[', '.']),
            };
            if plain_import {
                continue;
            }
            let targets = loop_targets(code).filter(|_| line == prev.line && past_loop());
            let binds = program.binds(line).into_iter();
            changeable.extend(binds.filter(|n| !targets.as_ref().is_some_and(|t| t.contains(n))));
        }
        // A settled pop changes its list or dict, and whatever other name shows it
        // (which may be the same object), where the rest of the statement changes none.
        let popped = self.popped(program.code(prev.line)).filter(|p| {
            program.text_mutates_nothing(&p.statement) && self.changes_no_object_but_calls()
        });
        if let Some(p) = popped.filter(|_| reaches_in) {
            let before = shown_value(prev, &p.name);
            changeable.extend(
                prev.locals
                    .iter()
                    .filter(|(name, value)| **name == p.name || Some(*value) == before.as_ref())
                    .map(|(name, _)| name.clone()),
            );
        } else if reaches_in && !self.changes_no_object() {
            changeable.extend(
                prev.locals
                    .iter()
                    .filter(|(_, value)| !immutable(value))
                    .map(|(name, _)| name.clone()),
            );
        }
        Some(changeable.into_iter().collect())
    }

    /// The names of the current state that a step to `next_line` (`None`: unknown) in
    /// the same frame may unbind: leaving a `del` statement or an `except ... as NAME`
    /// block (see `ProgramModel::unbinding`).
    fn vanishing(&self, next_line: Option<u32>) -> BTreeSet<String> {
        let (prev, program) = (self.prev, self.program);
        let leaves = |lines: &std::ops::RangeInclusive<u32>| {
            lines.contains(&prev.line) && !next_line.is_some_and(|line| lines.contains(&line))
        };
        program
            .unbinding(&prev.function)
            .into_iter()
            .filter(|(name, lines)| prev.locals.contains_key(name) && leaves(lines))
            .map(|(name, _)| name)
            .collect()
    }

    /// Whether the current statement changes no object: its text calls only what
    /// mutates nothing (see `ProgramModel::mutates_nothing`), no value it could reach
    /// is an object whose code could run (a generator, an instance: `<...>`), and an
    /// augmented assignment (`xs += ...`, which changes a list in place, aliases and
    /// all) has an immutable target.
    fn changes_no_object(&self) -> bool {
        self.program.mutates_nothing(self.prev.line) && self.changes_no_object_but_calls()
    }

    /// Whether the current statement changes no object but through what it calls: no
    /// value it could reach is an object whose code could run, and an augmented
    /// assignment has an immutable target (see `changes_no_object`).
    fn changes_no_object_but_calls(&self) -> bool {
        let prev = self.prev;
        let opaque = |vars: &crate::state::Vars| vars.values().any(|v| v.starts_with('<'));
        let code = self.program.code(prev.line);
        let in_place = augmented_target(code)
            .and_then(|name| shown_value(prev, name))
            .is_some_and(|value| !immutable(&value));
        !opaque(&prev.locals) && !opaque(&prev.globals) && !in_place
    }

    /// Names the locals of the state `header` begins must hold (anywhere among them):
    /// back in the caller after a return, every name it held at the call (a call
    /// cannot unbind a caller's local) and, on a line past the calling statement, the
    /// names it assigns; at the return a Step Out reaches, every name the frame holds
    /// now. Never a name the frame could unbind (`del`, the end of an `except ... as`
    /// block); none where `global` or `nonlocal` could.
    pub(super) fn held_names(&self, header: &str) -> Vec<String> {
        if self.kept(header).is_none() {
            return Vec::new();
        }
        let back_in_caller = self.caller.filter(|_| !self.returns_here(header));
        let holder = back_in_caller.unwrap_or(self.prev);
        let program = self.program;
        let unbindable = program.unbindable(&holder.function);
        let mut held: Vec<String> = holder
            .locals
            .keys()
            .filter(|n| !unbindable.contains(*n))
            .cloned()
            .collect();
        let Some(caller) = back_in_caller else {
            return held;
        };
        // On a line after the calling statement, an assignment's names are bound.
        let statement = program.flow.statement(caller.line);
        let line = header
            .split(' ')
            .next()
            .and_then(|h| h.strip_prefix("<|line|>"));
        let after = line
            .and_then(|l| l.parse::<u32>().ok())
            .is_some_and(|l| !statement.contains(&l));
        if let Some((names, _)) = assignment(program.code(caller.line)).filter(|_| after) {
            held.extend(
                names
                    .into_iter()
                    .filter(|n| !caller.locals.contains_key(n) && !unbindable.contains(n)),
            );
        }
        held
    }

    /// Back in the caller after a return (where `kept_by_caller` holds), the names its
    /// frame can hold: those it held at the call and those its calling statement binds.
    /// A call binds none of its caller's names (no `global` or `nonlocal` is there).
    fn caller_names(&self, header: &str) -> Option<BTreeSet<String>> {
        let caller = self.caller.filter(|_| !self.returns_here(header))?;
        self.kept(header)?;
        let program = self.program;
        let statement = program.flow.statement(caller.line);
        let bound = statement.into_iter().flat_map(|line| program.binds(line));
        Some(caller.locals.keys().cloned().chain(bound).collect())
    }

    /// After a one-line `NAMES = VALUE` has run (a `line` state of the same frame
    /// follows), the names it bound that the frame did not hold are there, so the
    /// state must write them. Not where a name can be bound elsewhere (`global`,
    /// `nonlocal`) or vanish (`del`, the end of an `except ... as` block), nor for what
    /// the tracer hides: a function, class or builtin under its own name (the value's
    /// text names the target, or the program defines it), or a module (a bare name the
    /// state does not show could be one).
    pub(super) fn newly_bound(&self, header: &str) -> Vec<String> {
        let (prev, program) = (self.prev, self.program);
        let same_frame = header_frame(header) == Some((prev.depth, prev.function.as_str()));
        let ran = header.starts_with("<|line|>") && same_frame;
        if !ran || !self.steps_past_one_line() {
            return Vec::new();
        }
        let Some((names, value)) = assignment(program.code(prev.line)) else {
            return Vec::new();
        };
        let value = value.trim();
        let unseen_name = value.split('.').all(layout::is_name)
            && shown_value(prev, value.split('.').next().unwrap_or(value)).is_none();
        if unseen_name || value.contains("yield") || value.contains("await") {
            return Vec::new();
        }
        let mentioned: BTreeSet<&str> = layout::words(value).collect();
        let unbindable = program.unbindable(&prev.function);
        names
            .into_iter()
            .filter(|n| !prev.locals.contains_key(n) && !prev.globals.contains_key(n))
            .filter(|n| !(n.starts_with("__") && n.ends_with("__")))
            .filter(|n| !mentioned.contains(n.as_str()))
            .filter(|n| !program.defines(n))
            .filter(|n| !unbindable.contains(n))
            .collect()
    }

    /// Whether the action is a forward step from a `line` state whose statement is on
    /// that line alone.
    pub(super) fn steps_from_one_line(&self) -> bool {
        let (prev, program) = (self.prev, self.program);
        self.action.is_forward_step()
            && prev.event == Event::Line
            && program.flow.statement(prev.line).len() == 1
    }

    /// Whether the action is a forward step from a one-line statement whose own
    /// bindings hold once it has run: as `steps_past_one_line`, or where another frame
    /// could rebind names but this frame declares no `global` (its names, `nonlocal`
    /// ones too, show among its locals, and the statement binds them last).
    pub(super) fn steps_past_own_binding(&self) -> bool {
        let (prev, program) = (self.prev, self.program);
        let declares_global = || {
            program
                .frame_lines(&prev.function)
                .any(|l| program.code(l).trim_start().starts_with("global "))
        };
        self.steps_from_one_line() && (!program.rebinds_from_afar || !declares_global())
    }

    /// Whether the action is a forward step from a one-line statement whose names no
    /// other frame can rebind (no `global` or `nonlocal` in the program).
    pub(super) fn steps_past_one_line(&self) -> bool {
        self.steps_from_one_line() && !self.program.rebinds_from_afar
    }
}

/// The names a `for` statement's header binds on each round (`None` for another line).
fn loop_targets(code: &str) -> Option<BTreeSet<String>> {
    let code = code.trim_start();
    let header = code
        .strip_prefix("async ")
        .unwrap_or(code)
        .strip_prefix("for ")?;
    let (targets, _) = header.split_once(" in ")?;
    Some(layout::identifiers(targets))
}

/// The name an augmented assignment (`NAME OP= VALUE`) rebinds, in place if its value
/// is mutable. Errs towards a name (`x <= y` gives `x`).
fn augmented_target(code: &str) -> Option<&str> {
    let (target, _) = code.split_once('=')?;
    let target = target.trim_end();
    let name = target.trim_end_matches(['+', '-', '*', '/', '%', '&', '|', '^', '<', '>', '@']);
    (name.len() < target.len()).then(|| name.trim())
}
