//! The program model: every fact of a program's text that decoding and the debugger
//! ask, read once ([`ProgramModel::of`]).

use super::effects;
use super::flow::Flow;
use super::layout::{self, Layout};
use crate::state::State;
use std::collections::BTreeSet;

/// What a program's text says about its runs: the facts that decoding and the
/// debugger ask of it, read once per program.
pub struct ProgramModel {
    /// The program's lines: what a state's source line may be.
    pub lines: Vec<String>,
    /// The frame each line runs in; the names the program could bind.
    pub layout: Layout,
    pub identifiers: Vec<String>,
    /// The parameters of the frame whose `call` stands on each line.
    pub parameters: std::collections::BTreeMap<u32, Vec<String>>,
    /// The names each function's lines mention (sorted).
    pub frame_names: std::collections::HashMap<String, Vec<String>>,
    /// Which line can follow which inside a frame.
    pub flow: Flow,
    /// Some line says `global` or `nonlocal`: a name can be rebound from another frame.
    pub rebinds_from_afar: bool,
    /// Some line could add or remove a module global from a function's frame
    /// (`global`, `del`, `globals()`, `setattr`, `exec`, ...).
    pub changes_globals_from_afar: bool,
    /// Functions a line may call without naming them (see `layout::called_from_afar`).
    pub called_from_afar: BTreeSet<String>,
    /// The lines that may remove, insert, reorder or delete items (`pop`, `sort`,
    /// `del`, ...): where a list may change under a loop other than by appending.
    reordering_lines: BTreeSet<u32>,
    /// The functions whose frame surely starts when called by name (see
    /// `plain_function`), worked out once: steps ask at every line.
    plain_functions: BTreeSet<String>,
    /// Every name a line, a parameter or a definition of the program binds, worked
    /// out once (see `builtin_in`).
    bound_anywhere: BTreeSet<String>,
    /// Name -> the lines that may bind it (see `binds`), worked out once.
    binding_lines: std::collections::BTreeMap<String, BTreeSet<u32>>,
    /// Some class of the program has code that Python may run where no line names it
    /// (see `class_code_runs_unasked`), worked out once.
    class_code_runs_unasked: bool,
    /// Some line reaches a frame's namespace (`locals()`, `vars()`, `sys._getframe`):
    /// the dict `locals()` gives is refreshed with the frame's names whenever the
    /// frame is read, so it changes where no line changes it.
    frames_exposed: bool,
    /// The program may store an attribute elsewhere than its object's fields (a
    /// `__setattr__`, a descriptor's `__set__`, a property's setter).
    attributes_hooked: bool,
    /// The classes whose instances show their fields by name, and of those the ones
    /// with Python's default repr (see `shows_fields`, `default_repr`), worked out
    /// once: rules ask per name they read.
    fields_shown: BTreeSet<String>,
    default_reprs: BTreeSet<String>,
    /// Each `except` line and the last line of its clause, in order (see
    /// `handler_of`), worked out once: flow rules ask per line a step may reach.
    handler_clauses: Vec<(u32, u32)>,
}

impl ProgramModel {
    /// Read `source` once.
    pub fn of(source: &str) -> Self {
        let lines: Vec<String> = source.lines().map(|l| l.trim_end().to_string()).collect();
        let layout = Layout::of(source);
        let parameters = layout.parameters(source);
        let mut model = ProgramModel {
            lines,
            frame_names: layout.frame_names(source, &parameters),
            called_from_afar: layout::called_from_afar(source, &layout),
            flow: Flow::of(source),
            parameters,
            layout,
            // A comment's words are no names (a comment line, wherever it stands,
            // binds nothing: inside a string its words are text).
            identifiers: source
                .lines()
                .filter(|line| !line.trim_start().starts_with('#'))
                .flat_map(layout::identifiers)
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect(),
            rebinds_from_afar: mentions(source, &["global", "nonlocal"]),
            changes_globals_from_afar: mentions(
                source,
                &[
                    "global", "del", "globals", "vars", "setattr", "delattr", "__dict__",
                    "modules", "exec", "eval",
                ],
            ),
            reordering_lines: (1..)
                .zip(source.lines())
                .filter(|(_, line)| {
                    let code = line.split(" #").next().unwrap_or(line);
                    layout::words(code).any(|w| {
                        matches!(
                            w,
                            "insert" | "remove" | "pop" | "sort" | "reverse" | "clear" | "del"
                        )
                    })
                })
                .map(|(number, _)| number)
                .collect(),
            plain_functions: BTreeSet::new(),
            bound_anywhere: BTreeSet::new(),
            binding_lines: Default::default(),
            class_code_runs_unasked: false,
            frames_exposed: mentions(
                source,
                &["locals", "vars", "_getframe", "currentframe", "f_locals"],
            ),
            fields_shown: BTreeSet::new(),
            default_reprs: BTreeSet::new(),
            handler_clauses: Vec::new(),
            attributes_hooked: mentions(
                source,
                &[
                    "__setattr__",
                    "__delattr__",
                    "__set__",
                    "property",
                    "setter",
                    "setattr",
                ],
            ),
        };
        model.class_code_runs_unasked = model.class_code_runs_unasked();
        model.handler_clauses = (1..=model.lines.len() as u32)
            .filter(|&line| model.is_handler(line))
            .map(|line| (line, *model.block(line).end()))
            .collect();
        let classes: BTreeSet<String> = model.layout.classes.values().cloned().collect();
        model.default_reprs = (classes.iter())
            .filter(|c| model.plain_class(c, 0))
            .cloned()
            .collect();
        model.fields_shown = (classes.into_iter())
            .filter(|c| model.default_reprs.contains(c) || model.named_tuple(c))
            .collect();
        for line in 1..=model.lines.len() as u32 {
            for name in model.binds(line) {
                model.binding_lines.entry(name).or_default().insert(line);
            }
        }
        model.bound_anywhere = (model.binding_lines.keys().cloned())
            .chain(model.parameters.values().flatten().cloned())
            .chain(model.layout.calls.values().cloned())
            .chain(model.layout.classes.values().cloned())
            .collect();
        model.plain_functions = (model.layout.calls.values())
            .filter(|f| model.plain_function(f))
            .cloned()
            .collect();
        model
    }

    /// Line `line`'s code, without a trailing comment (empty past the end).
    pub fn code(&self, line: u32) -> &str {
        let text = self.lines.get(line as usize - 1).map_or("", String::as_str);
        text.split(" #").next().unwrap_or(text)
    }

    /// The text of the statement on `line`, its lines joined (inside brackets a line
    /// break is a space), comments cut; `None` where a line continues with a
    /// backslash or a string spans lines.
    pub fn statement_text(&self, line: u32) -> Option<String> {
        let lines = self.flow.statement(line);
        let several = lines.len() > 1;
        let mut parts = Vec::new();
        for l in lines {
            let text = self.lines.get(l as usize - 1)?;
            let code = super::lexer::without_comment(text).trim_end();
            let spans = code.ends_with('\\') || code.contains("\"\"\"") || code.contains("\'\'\'");
            if several && spans {
                return None;
            }
            parts.push(code.trim().to_string());
        }
        Some(parts.join(" "))
    }

    /// The lines (1-based) that run in `function`'s frame.
    pub fn frame_lines<'s>(&'s self, function: &'s str) -> impl Iterator<Item = u32> + 's {
        let layout = &self.layout;
        (1..=layout.scope.len() as u32).filter(move |&l| {
            layout.scope[l as usize - 1] == function
                || layout.inline_bodies.get(&l).is_some_and(|f| f == function)
        })
    }

    /// The names line `line` may bind: what its statement binds, read from all its
    /// lines, if the statement begins there; none on its continuation lines.
    pub fn binds(&self, line: u32) -> BTreeSet<String> {
        let statement = self.flow.statement(line);
        if statement.first() != Some(&line) {
            return BTreeSet::new();
        }
        let code: Vec<&str> = statement.iter().map(|&l| self.code(l)).collect();
        layout::bound_by(&code.join(" "))
    }

    /// Whether `line` begins an `except` clause, which Python reports only as it
    /// handles an exception: right after an `exception` event of its frame, or after
    /// an earlier clause that did not match.
    pub fn is_handler(&self, line: u32) -> bool {
        let code = self.code(line).trim_start();
        code.strip_prefix("except")
            .is_some_and(|rest| !rest.starts_with(|c: char| c.is_alphanumeric() || c == '_'))
    }

    /// The `except` line whose clause (its line and block) holds `line`, the innermost
    /// where clauses nest.
    pub fn handler_of(&self, line: u32) -> Option<u32> {
        self.handler_clauses
            .iter()
            .rev()
            .find(|&&(h, last)| h <= line && line <= last)
            .map(|&(h, _)| h)
    }

    /// Whether a frame can return from `line`: the statement there can end it, or it
    /// pauses at a `yield`.
    pub fn ends_frame(&self, line: u32) -> bool {
        let text = self.lines.get(line as usize - 1).map_or("", String::as_str);
        self.flow.can_return(line) || layout::words(text).any(|w| w == "yield")
    }

    /// Whether `name` is Python's builtin of that name where `state` runs: the program
    /// defines, binds or takes no parameter of that name and the state shows none.
    pub fn builtin_in(&self, name: &str, state: &State) -> bool {
        let shown = state.locals.contains_key(name) || state.globals.contains_key(name);
        !shown && !self.bound_anywhere.contains(name)
    }

    /// Whether a `line` event on `line` can come right after a call made from it
    /// returns. Python reports a line when its first instruction runs or a jump goes
    /// back to it, so a return leads back to its calling line only inside a statement
    /// over several lines (it moves on to another of them and may come back) or a
    /// loop on that line (a comprehension, a one-line `for` or `while`) going round.
    pub fn may_report_again(&self, line: u32) -> bool {
        self.flow.statement(line).len() > 1
            || layout::words(self.code(line)).any(|w| w == "for" || w == "while")
    }

    /// Whether a Step Into from `line` must go into a call (or stop where something
    /// raises before it): its one-line statement calls, whenever it runs, a function
    /// that runs when called (see [`effects::unconditional_calls`] and
    /// `plain_function`).
    pub fn surely_calls(&self, line: u32) -> bool {
        !self.rebinds_from_afar
            && self.flow.statement(line).len() == 1
            && effects::unconditional_calls(self.code(line))
                .iter()
                .any(|name| self.plain_functions.contains(name))
    }

    /// The line of the one `call` a Step Into from `line` can stop at: its one-line
    /// statement can run no code of the program but that of one function, which
    /// starts a frame when called (see [`effects::only_program_call`] and
    /// `plain_function`), and no class's code runs unasked.
    pub fn only_callee(&self, line: u32) -> Option<u32> {
        let code = without_defined_name(self.code(line));
        let name = self.only_program_call(line, code)?;
        if !self.plain_functions.contains(&name) {
            return None;
        }
        let calls = &self.layout.calls;
        calls.iter().find(|(_, f)| **f == name).map(|(&def, _)| def)
    }

    /// Whether the one-line statement on `line` can run no code of the program but
    /// `function`'s, and names no `print` (see [`effects::only_program_call`]): what
    /// it prints, only `function` does.
    pub fn prints_nothing_but(&self, line: u32, function: &str) -> bool {
        let code = self.code(line);
        !layout::words(code).any(|w| w == "print")
            && self.only_program_call(line, code).as_deref() == Some(function)
    }

    /// The one function of the program that `code`, the one-line statement on
    /// `line`, can run (see [`effects::only_program_call`]); `None` where a name can
    /// be rebound from another frame or a class's code can run unasked.
    fn only_program_call(&self, line: u32, code: &str) -> Option<String> {
        if self.rebinds_from_afar
            || self.class_code_runs_unasked
            || self.flow.statement(line).len() != 1
        {
            return None;
        }
        effects::only_program_call(code, |word| self.defines(word))
    }

    /// Whether `name` is, everywhere in the program, one function whose frame starts
    /// when it is called: a single undecorated `def` at the module's top level, not a
    /// generator or coroutine, not a class, bound by no other line and no parameter.
    fn plain_function(&self, name: &str) -> bool {
        let layout = &self.layout;
        let mut defs = layout.calls.iter().filter(|(_, f)| *f == name);
        let (Some((&def, _)), None) = (defs.next(), defs.next()) else {
            return false;
        };
        let decorated = self.decorated(def);
        // What each statement binds, read from its first line (a docstring's or a
        // call's continuation lines bind nothing; `binds` would count their words).
        let starts = |l: &u32| self.flow.statement(*l).first() == Some(l);
        let rebound = (1..=self.lines.len() as u32)
            .filter(|&l| l != def)
            .filter(starts)
            .any(|l| layout::bound_by(self.code(l)).contains(name));
        let parameter = self
            .parameters
            .values()
            .any(|p| p.iter().any(|n| n == name));
        self.code(def).starts_with("def ")
            && !decorated
            && !rebound
            && !parameter
            && !layout.resumable.contains(name)
            && !layout.classes.values().any(|c| c == name)
    }

    /// Whether the `def` or `class` on line `def` has a decorator above it.
    pub fn decorated(&self, def: u32) -> bool {
        (1..def)
            .rev()
            .map(|l| self.code(l).trim())
            .find(|c| !c.is_empty())
            .is_some_and(|c| c.starts_with('@'))
    }

    /// The repr a fresh instance of the program's class `class` shows in its
    /// `__init__`'s `call` state, where nothing can have given it fields yet: `Name()`,
    /// as the tracer writes an object with Python's default repr by its (still empty)
    /// fields. `None` where the class or a base could write its own repr, give
    /// instances fields before `__init__` (`__new__`), keep them elsewhere
    /// (`__slots__`), or is not the program's plain class (a decorator, a builtin base
    /// such as `list`, a metaclass).
    pub fn fresh_instance_repr(&self, class: &str) -> Option<String> {
        self.plain_class(class, 0).then(|| format!("{class}()"))
    }

    /// Whether instances of the program's class `class` show Python's default repr,
    /// which the tracer writes as their fields (`Point(x=1, y=2)`): see
    /// [`Self::fresh_instance_repr`].
    pub fn default_repr(&self, class: &str) -> bool {
        self.default_reprs.contains(class)
    }

    /// Whether setting a field of an instance of `class` (`obj.x = v`) puts it in the
    /// fields its repr shows, and nothing else: [`Self::default_repr`], and no
    /// attribute hook anywhere in the program.
    pub fn fields_set_plainly(&self, class: &str) -> bool {
        !self.attributes_hooked && self.default_repr(class)
    }

    /// Whether instances of the program's class `class` show their fields by name
    /// (`Point(x=1, y=2)`), so that `obj.field` reads from the repr: a class with
    /// Python's default repr (see [`Self::default_repr`]), or a `typing.NamedTuple`
    /// whose repr is its own.
    pub fn shows_fields(&self, class: &str) -> bool {
        self.fields_shown.contains(class)
    }

    /// The program's classes whose instances show their fields (see
    /// [`Self::shows_fields`]).
    pub fn classes_showing_fields(&self) -> &BTreeSet<String> {
        &self.fields_shown
    }

    /// `class NAME(NamedTuple):`, undecorated, that writes no repr or attribute
    /// lookup of its own.
    fn named_tuple(&self, class: &str) -> bool {
        let Some(line) = self.only_class_line(class) else {
            return false;
        };
        let header = self.code(line).trim().replace(' ', "");
        let named = ["NamedTuple", "typing.NamedTuple"]
            .iter()
            .any(|base| header == format!("class{class}({base}):"));
        let own_ways = |l: u32| {
            layout::words(self.code(l)).any(|w| {
                matches!(
                    w,
                    "__repr__" | "__getattr__" | "__getattribute__" | "__class__"
                )
            })
        };
        named && !self.decorated(line) && !self.block(line).any(own_ways)
    }

    /// The line of the program's one `class` statement binding `class`; `None` where
    /// none or several do.
    fn only_class_line(&self, class: &str) -> Option<u32> {
        let lines: Vec<u32> = self
            .layout
            .classes
            .iter()
            .filter(|(_, c)| *c == class)
            .map(|(&line, _)| line)
            .collect();
        let [line] = lines[..] else { return None };
        Some(line)
    }

    fn plain_class(&self, class: &str, depth: usize) -> bool {
        let Some(line) = self.only_class_line(class) else {
            return false;
        };
        if depth > 8 || self.decorated(line) {
            return false;
        }
        let header = self.code(line).trim();
        let Some(rest) = header
            .strip_prefix("class ")
            .and_then(|r| r.trim_start().strip_prefix(class))
            .map(str::trim)
        else {
            return false;
        };
        let bases = match rest.strip_prefix('(').and_then(|r| r.strip_suffix("):")) {
            Some(bases) => bases,
            None if rest == ":" => "",
            None => return false,
        };
        let plain_bases = bases.split(',').map(str::trim).all(|base| {
            base.is_empty()
                || base == "object"
                || (layout::is_name(base) && self.plain_class(base, depth + 1))
        });
        let own_ways = |l: u32| {
            layout::words(self.code(l)).any(|w| {
                matches!(
                    w,
                    "__repr__"
                        | "__new__"
                        | "__slots__"
                        | "__getattr__"
                        | "__getattribute__"
                        | "__dict__"
                        | "__class__"
                )
            })
        };
        plain_bases && !self.block(line).any(own_ways)
    }

    /// Whether a `def` or `class` of the program binds `name`.
    pub fn defines(&self, name: &str) -> bool {
        let layout = &self.layout;
        layout
            .calls
            .values()
            .chain(layout.classes.values())
            .any(|f| f == name)
    }

    /// The locals a line of `function` may unbind (see [`ProgramModel::unbinding`]).
    pub fn unbindable(&self, function: &str) -> BTreeSet<String> {
        self.unbinding(function)
            .into_iter()
            .map(|(name, _)| name)
            .collect()
    }

    /// Where a local of `function` may vanish: each name with the lines a step must
    /// leave to unbind it. A `del` statement's lines, for every name on them (`del
    /// d[k]` unbinds none, but over-approximating only loosens a rule); an `except ...
    /// as NAME` block's lines, which Python unbinds NAME on leaving; and what the
    /// tracer stops showing: a name a `def`, `class` or `import` binds anew (a
    /// function, class or module), on that statement's lines.
    pub fn unbinding(&self, function: &str) -> Vec<(String, std::ops::RangeInclusive<u32>)> {
        let mut found = Vec::new();
        for line in self.frame_lines(function) {
            let code = self.code(line);
            let words: Vec<&str> = layout::words(code).filter(|w| !w.is_empty()).collect();
            // The lines of the statement that begins or goes on at `line`.
            let statement_lines = || {
                let statement = self.flow.statement(line);
                statement.first().copied().unwrap_or(line)
                    ..=statement.last().copied().unwrap_or(line)
            };
            let defined = self.layout.calls.get(&line).filter(|f| *f != function);
            let imports = matches!(words.first(), Some(&"import" | &"from"));
            if defined.is_some() || imports {
                let names = match defined {
                    Some(name) => BTreeSet::from([name.clone()]),
                    None => layout::bound_by(code),
                };
                let lines = statement_lines();
                found.extend(names.into_iter().map(|n| (n, lines.clone())));
            }
            if words.contains(&"del") {
                let lines = statement_lines();
                found.extend(
                    layout::identifiers(code)
                        .into_iter()
                        .map(|n| (n, lines.clone())),
                );
            }
            if words.contains(&"except") {
                let after_as = words.iter().skip_while(|w| **w != "as").skip(1);
                found.extend(after_as.map(|n| (n.to_string(), self.block(line))));
            }
        }
        found
    }

    /// Whether the statement on `line` can change no object, as its text says (see
    /// [`effects::mutates_nothing`]): not where a class's code could run unasked, nor
    /// where a frame's namespace is exposed.
    pub fn mutates_nothing(&self, line: u32) -> bool {
        let code: Vec<&str> = self
            .flow
            .statement(line)
            .into_iter()
            .map(|l| self.code(l))
            .collect();
        self.text_mutates_nothing(&code.join("\n"))
    }

    /// Whether a statement of the program written as `code` can change no object (see
    /// `mutates_nothing`).
    pub fn text_mutates_nothing(&self, code: &str) -> bool {
        !self.class_code_runs_unasked
            && !self.frames_exposed
            && effects::mutates_nothing(code, |word| self.defines(word))
    }

    /// Whether Python may run code of a class of the program where no line names it: a
    /// method it runs by itself (any dunder but `__init__`, which runs where the class
    /// is called by name: operators, `repr`, `==`, hashing, attribute access), a
    /// decorated method or a `property` (run on reading an attribute), a method named
    /// as a builtin type's reading method (`x.get()` may be the program's), a
    /// metaclass, or a decorator on the class other than `dataclass`.
    fn class_code_runs_unasked(&self) -> bool {
        let runs_unasked = |line: u32| {
            let code = self.code(line).trim();
            let defined = ["def ", "async def "]
                .iter()
                .find_map(|k| code.strip_prefix(k))
                .map(|rest| rest.trim_start().split(|c: char| !layout::is_name_char(c)))
                .and_then(|mut words| words.next());
            let dunder =
                |name: &str| name.len() > 4 && name.starts_with("__") && name.ends_with("__");
            let decorator = code.strip_prefix('@').map(str::trim);
            defined.is_some_and(|name| {
                (dunder(name) && name != "__init__") || effects::PURE_METHODS.contains(&name)
            }) || decorator.is_some_and(|d| !matches!(d, "staticmethod" | "classmethod"))
                || layout::words(code).any(|w| matches!(w, "property" | "metaclass"))
        };
        let decorated_by_other_than_dataclass = |class_line: u32| {
            (1..class_line)
                .rev()
                .map(|l| self.code(l).trim())
                .take_while(|c| c.starts_with('@'))
                .any(|c| {
                    let name = c.trim_start_matches('@').split('(').next().unwrap_or("");
                    !matches!(name.trim(), "dataclass" | "dataclasses.dataclass")
                })
        };
        self.layout.classes.keys().any(|&class_line| {
            decorated_by_other_than_dataclass(class_line)
                || runs_unasked(class_line)
                || self.block(class_line).any(runs_unasked)
        })
    }

    /// Whether the function defined on `line` closes over nothing: it is defined in
    /// the module or a class body, so its frame starts with its parameters alone.
    pub fn closes_over_nothing(&self, line: u32) -> bool {
        let layout = &self.layout;
        let mut line = line;
        // Out through the classes that enclose it: a method of a class defined in a
        // function closes over that function's names.
        loop {
            let Some(&enclosing) = layout.frames_of(line, false).first() else {
                return true;
            };
            if enclosing == "<module>" {
                return true;
            }
            let class_line = layout
                .classes
                .range(..line)
                .rev()
                .find(|(_, c)| *c == enclosing)
                .map(|(l, _)| *l);
            match class_line {
                Some(class_line) => line = class_line,
                None => return false,
            }
        }
    }

    /// The lines a `call` event may stand on when the statement on `line` calls: the
    /// frames of functions it names, of dunder methods (operators, `__repr__`; an
    /// `__init__` where it names a class), lambdas and comprehensions, generators
    /// resuming, and functions called from afar (passed around, nested); never the
    /// module's. Names, not types: errs towards yes.
    pub fn callees_of(&self, line: u32) -> BTreeSet<u32> {
        let statement = self.flow.statement(line);
        // A `def` or `class` header binds its name, it does not call it: only its
        // defaults, annotations and bases run there.
        let named: BTreeSet<&str> = statement
            .iter()
            .flat_map(|&l| layout::words(without_defined_name(self.code(l))))
            .collect();
        // `__init__` runs where a class is called (by name, or as `cls`, `type(self)`).
        let classes: BTreeSet<&str> = self.layout.classes.values().map(String::as_str).collect();
        let constructs = named.iter().any(|w| {
            classes.contains(w) || matches!(*w, "super" | "cls" | "type" | "__class__" | "replace")
        }) || classes.iter().any(|c| self.called_from_afar.contains(*c));
        let may_run = |frame: &&str| match *frame {
            "<module>" => false,
            // A class body runs from its own `class` statement only.
            class if classes.contains(class) => statement
                .iter()
                .any(|l| self.layout.classes.get(l).is_some_and(|c| c == class)),
            "__init__" | "__new__" | "__post_init__" => constructs,
            _ => {
                named.contains(frame)
                    || frame.starts_with("__")
                    || frame.contains('<')
                    || self.layout.resumable.contains(*frame)
                    || self.called_from_afar.contains(*frame)
            }
        };
        (1..=self.lines.len() as u32)
            .filter(|&n| self.layout.frames_of(n, true).iter().any(may_run))
            .collect()
    }

    /// Whether running `lines` may reorder a list (see `reordering_lines`): one of
    /// them, or a line of a frame they may call into, at any depth, removes, inserts
    /// or reorders items. Appending keeps the order.
    pub fn may_reorder_lists(&self, lines: std::ops::RangeInclusive<u32>) -> bool {
        if self.reordering_lines.is_empty() {
            return false;
        }
        // Worked through by frame: the lines to look at, and the frames whose lines
        // have been added to them.
        let mut todo: Vec<u32> = lines.collect();
        let mut frames: BTreeSet<&str> = BTreeSet::new();
        while let Some(line) = todo.pop() {
            if self.reordering_lines.contains(&line) {
                return true;
            }
            for call in self.callees_of(line) {
                for frame in self.layout.frames_of(call, true) {
                    if frames.insert(frame) {
                        todo.extend(
                            (1..=self.lines.len() as u32).filter(|&body| {
                                self.layout.frames_of(body, false).contains(&frame)
                            }),
                        );
                    }
                }
            }
        }
        false
    }

    /// What the `for` statement on `line` loops over, `TARGETS in ITERABLE`, where the
    /// line is a whole `for` header (its block on the lines below).
    pub fn for_header(&self, line: u32) -> Option<&str> {
        self.code(line)
            .trim()
            .strip_prefix("for ")?
            .strip_suffix(':')
    }

    /// Whether the `for` loop on `line` can begin at most once in a run of its frame,
    /// so that its variables `targets`, once bound, say it has begun: no loop of the
    /// same frame encloses it, and no other line or parameter of the program binds
    /// those names.
    pub fn loop_begins_once(&self, line: u32, targets: &[&str]) -> bool {
        let frame = self.layout.frames_of(line, false);
        let encloses = |header: u32| {
            let code = self.code(header).trim_start();
            let loops = ["for ", "while ", "while(", "async for "]
                .iter()
                .any(|k| code.starts_with(k));
            loops
                && self.layout.frames_of(header, false) == frame
                && self.block(header).contains(&line)
        };
        let binds_elsewhere = |name: &str| {
            self.parameters.values().flatten().any(|p| p == name)
                || self
                    .binding_lines
                    .get(name)
                    .is_some_and(|lines| lines.iter().any(|&l| l != line))
        };
        !(1..line).any(encloses) && !targets.iter().any(|t| binds_elsewhere(t))
    }

    /// The lines of the block that the clause header on `line` opens: every line
    /// after it up to the first statement indented no deeper than the header.
    pub fn block(&self, line: u32) -> std::ops::RangeInclusive<u32> {
        let indent = |text: &str| text.len() - text.trim_start().len();
        let header = indent(self.code(line));
        let mut end = self.flow.statement(line).last().copied().unwrap_or(line);
        for next in end + 1..=self.lines.len() as u32 {
            let code = self.code(next);
            let starts = self.flow.statement(next).first() == Some(&next);
            if code.trim().is_empty() || code.trim_start().starts_with('#') || !starts {
                continue;
            }
            if indent(code) <= header {
                break;
            }
            end = self.flow.statement(next).last().copied().unwrap_or(next);
        }
        line + 1..=end
    }

    /// Shows each caller of `state` on the line that calls the frame above it (the
    /// derived stack keeps a caller's line from before a jump).
    pub fn place_callers(&self, state: &mut State) {
        let callees: Vec<String> = state
            .stack
            .iter()
            .skip(1)
            .map(|frame| frame.function.clone())
            .chain(std::iter::once(state.function.clone()))
            .collect();
        for (frame, callee) in state.stack.iter_mut().zip(callees) {
            if frame.line > 0 {
                frame.line =
                    self.layout
                        .call_site(&self.lines, &frame.function, frame.line, &callee);
            }
        }
    }

    /// Whether the code on `line` can reach a frame of `function`: the function is
    /// named on the line, or in a function named there, and so on (a call graph read
    /// from the source: names, not types, so it errs towards yes).
    pub fn may_call(&self, line: u32, function: &str) -> bool {
        let mut seen = BTreeSet::new();
        let mut frontier: Vec<String> = self
            .lines
            .get((line as usize).wrapping_sub(1))
            .map(|text| layout::identifiers(text).into_iter().collect())
            .unwrap_or_default();
        while let Some(name) = frontier.pop() {
            if name == function {
                return true;
            }
            if !seen.insert(name.clone()) {
                continue;
            }
            for (text, scope) in self.lines.iter().zip(&self.layout.scope) {
                if *scope == name {
                    frontier.extend(layout::identifiers(text));
                }
            }
        }
        false
    }
}

/// Whether a line of `source` has one of `words` as a word.
fn mentions(source: &str, words: &[&str]) -> bool {
    source
        .lines()
        .any(|line| layout::words(line).any(|w| words.contains(&w)))
}

/// `code` without the name that a `def` or `class` header on it binds (`def f(x=g()):`
/// keeps `(x=g()):`); any other line whole.
fn without_defined_name(code: &str) -> &str {
    let trimmed = code.trim_start();
    let header = ["async def ", "def ", "class "]
        .iter()
        .find_map(|keyword| trimmed.strip_prefix(keyword));
    match header {
        Some(rest) => rest.trim_start().trim_start_matches(layout::is_name_char),
        None => code,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_codes_words_not_a_comments() {
        let model = ProgramModel::of(
            "# keys and classes
π = 1  # pi
    # indented note
x = π
",
        );
        assert_eq!(model.identifiers, ["pi", "x", "π"]);
    }

    #[test]
    fn a_one_line_function_runs_and_returns_on_its_def_line() {
        let source = "def outer(xs):\n    def twice(x): return 2 * x\n    return twice(xs)\n";
        let model = ProgramModel::of(source);
        assert_eq!(model.frame_lines("twice").collect::<Vec<_>>(), vec![2]);
        assert_eq!(model.layout.frames_of(2, false), vec!["outer", "twice"]);
        assert_eq!(model.flow.first(2), Some(&BTreeSet::from([2])));
        assert!(model.ends_frame(2), "its body returns there");
    }

    #[test]
    fn a_method_of_a_class_in_a_function_closes_over_the_function() {
        let source = "def make(name):\n    class Box:\n        def __init__(self):\n            self.name = name\n    return Box()\nclass Top:\n    def __init__(self):\n        pass\n";
        let model = ProgramModel::of(source);
        assert!(!model.closes_over_nothing(3));
        assert!(model.closes_over_nothing(7));
    }

    #[test]
    fn a_statement_over_lines_binds_its_targets_once() {
        let source = "def f(p, q,\n      r=1):\n    x = [\n        p,\n        q]\n    a, \\\n        b = 1, 2\n    return (p.x - q.x) * (\n        p.y - q.y\n    )\n";
        let model = ProgramModel::of(source);
        let binds = |line| model.binds(line).into_iter().collect::<Vec<_>>();
        assert_eq!(binds(2), Vec::<String>::new(), "a parameter's default");
        assert_eq!(binds(3), ["x"]);
        assert_eq!(binds(4), Vec::<String>::new());
        assert_eq!(binds(6), ["a", "b"]);
        assert_eq!(binds(7), Vec::<String>::new());
        assert_eq!(binds(8), Vec::<String>::new());
        assert_eq!(binds(9), Vec::<String>::new(), "the return's second line");
    }

    #[test]
    fn a_def_or_import_hides_the_name_it_binds_anew() {
        let source = "def f(g=None, m=1):\n    def g(x): return x\n    import m\n    return g(1)\n";
        let model = ProgramModel::of(source);
        let unbinding = model.unbinding("f");
        assert!(
            unbinding.contains(&("g".to_string(), 2..=2)),
            "{unbinding:?}"
        );
        assert!(
            unbinding.contains(&("m".to_string(), 3..=3)),
            "{unbinding:?}"
        );
    }

    #[test]
    fn a_class_runs_code_unasked_through_dunders_properties_and_decorators() {
        let runs = |source: &str| ProgramModel::of(source).class_code_runs_unasked;
        assert!(!runs("x = 1\n"));
        assert!(!runs("class P:\n    def __init__(self, x):\n        self.x = x\n    def norm(self):\n        return abs(self.x)\n"));
        assert!(!runs(
            "from typing import NamedTuple\nclass P(NamedTuple):\n    x: float\n"
        ));
        assert!(!runs("@dataclass\nclass P:\n    x: int = 0\n"));
        assert!(!runs(
            "class P:\n    @staticmethod\n    def make():\n        return P()\n"
        ));
        assert!(runs(
            "class P:\n    def __eq__(self, other):\n        return True\n"
        ));
        assert!(runs(
            "class P:\n    @property\n    def x(self):\n        return 1\n"
        ));
        assert!(runs("class P:\n    def get(self, k):\n        return k\n"));
        assert!(runs("class P(metaclass=M):\n    pass\n"));
        assert!(runs("@register\nclass P:\n    pass\n"));
        assert!(runs("class P:\n    x = property(lambda self: 1)\n"));
    }

    #[test]
    fn a_def_or_class_header_calls_what_its_defaults_name_not_itself() {
        let source = "def f(x):\n    return x\ndef g(y=f(1)):\n    return y\nclass P:\n    def __init__(self):\n        pass\nz = f(2)\n";
        let model = ProgramModel::of(source);
        assert!(!model.callees_of(1).contains(&1), "`def f` defines f");
        assert!(model.callees_of(3).contains(&1), "g's default calls f");
        assert!(!model.callees_of(3).contains(&3), "`def g` defines g");
        assert!(
            !model.callees_of(5).contains(&6),
            "`class P` constructs no P"
        );
        assert!(model.callees_of(8).contains(&1));
    }

    #[test]
    fn a_line_may_call_what_it_names_and_what_those_call() {
        let source = "def g(x):\n    return x\ndef f(x):\n    return g(x)\ny = f(1)\nz = 2\n";
        let model = ProgramModel::of(source);
        assert!(model.may_call(5, "f"));
        assert!(model.may_call(5, "g"), "through f");
        assert!(!model.may_call(6, "f"));
        assert!(!model.may_call(2, "f"));
    }

    #[test]
    fn the_module_returns_from_its_last_statement() {
        // The first line the module's frame may return from (after a line event
        // there): every such line lies in its last top-level statement.
        let at = |source: &str| {
            let model = ProgramModel::of(source);
            let (layout, flow) = (&model.layout, &model.flow);
            let module = |l: &u32| {
                layout
                    .scope
                    .get(*l as usize - 1)
                    .is_some_and(|s| s == "<module>")
            };
            let ends: Vec<u32> = (1..=source.lines().count() as u32)
                .filter(|l| module(l) && flow.can_return(*l))
                .collect();
            assert!(!ends.is_empty(), "{source}");
            ends[0]
        };
        assert_eq!(at("x = 1\nprint(x)\n"), 2);
        let source = "\
def f():
    return 1

@decorate
@twice
def g():
    pass
";
        assert!(at(source) >= 4);
        let source = "\
if __name__ == '__main__':
    f()
else:
    g()
# the end
";
        assert_eq!(at(source), 2, "the end of either block");
        let source = "text = '''\nnot code\n'''\ntry:\n    a()\nfinally:\n    b()\n";
        assert!(at(source) >= 4);
        assert_eq!(at("x = (1,\n2)\n"), 1);
    }
}
