//! Which line can come next inside one frame: a control-flow over-approximation read
//! from the program's indentation. Decoding uses it so that a step never lands on a
//! line Python could not reach from the current one (the model still chooses among
//! the lines that it can).
//!
//! Over-approximate on purpose: a statement spanning several lines may report any of
//! its lines where an expression begins (entered from elsewhere, only its first where
//! that runs first), an exception inside a `try` may jump to any of its handlers, a `with` line
//! reports again on leaving its block. `eval --check-grammar` checks on a dataset that
//! no true step is ruled out.

use std::collections::{BTreeMap, BTreeSet};

use super::lexer::{chars, code_chars, logical_lines, without_comment, Kind};

type Lines = BTreeSet<u32>;

/// Not a line: where a frame ends normally (a return), kept in the line sets while
/// the flow is worked out.
const END: u32 = 0;

/// The line-to-line flow of every frame of one program.
#[derive(Clone, Debug, Default)]
pub struct Flow {
    /// Line -> the lines a `line` event there may be followed by in the same frame.
    after: BTreeMap<u32, Lines>,
    /// `def`/`class` line (or its first decorator), or line 1 for the module -> the
    /// first `line` events of the frame it starts.
    first: BTreeMap<u32, Lines>,
    /// Line -> the first and last line of the statement it belongs to.
    span: BTreeMap<u32, (u32, u32)>,
    /// Lines a frame can return from (a `return`, or the last statement that ran).
    ends: Lines,
}

impl Flow {
    pub fn of(source: &str) -> Self {
        let statements = statements(source);
        let mut flow = Flow::default();
        for s in &statements {
            for line in s.first..=s.last {
                flow.span.insert(line, (s.first, s.last));
            }
        }
        let roots: Vec<usize> = (0..statements.len())
            .filter(|&i| !statements.iter().any(|p| p.body.contains(&i)))
            .collect();
        let mut walk = Walk {
            statements: &statements,
            flow: &mut flow,
        };
        let module_entry = walk.block_entry(&roots, false);
        walk.flow.first.entry(1).or_default().extend(module_entry);
        walk.block(&roots, &Lines::from([END]), &Context::default());
        for (line, next) in flow.after.iter_mut() {
            if next.remove(&END) {
                flow.ends.insert(*line);
            }
        }
        flow
    }

    /// Whether a frame can return right after a `line` event on `line`: the `return`
    /// event then stands on the same line.
    pub fn can_return(&self, line: u32) -> bool {
        self.ends.contains(&line)
    }

    /// The lines a `line` event on `line` may be followed by in the same frame;
    /// `None` where the line holds no statement.
    pub fn after(&self, line: u32) -> Option<&Lines> {
        self.after.get(&line)
    }

    /// The first `line` events of the frame a `call` event on `line` starts.
    pub fn first(&self, line: u32) -> Option<&Lines> {
        self.first.get(&line)
    }

    /// The lines of the statement `line` belongs to (just `line` if it holds none).
    pub fn statement(&self, line: u32) -> Lines {
        let (first, last) = self.span.get(&line).copied().unwrap_or((line, line));
        (first..=last).collect()
    }

    /// The first line of every statement a `line` event may stand on, in order: where
    /// a breakpoint can stop. Left out: blank lines, comments, continuation lines, a
    /// function's docstring, declarations, and `else:`/`finally:` headers.
    pub fn statement_lines(&self) -> Vec<u32> {
        let statement = |line: &u32| self.span.get(line).copied();
        // A statement over several lines reaches its own lines: that is no way in.
        let from_others = self.after.iter().flat_map(|(from, next)| {
            next.iter()
                .filter(move |to| statement(to) != statement(from))
        });
        let reached: Lines = from_others
            .chain(self.first.values().flatten())
            .copied()
            .collect();
        let firsts: Lines = self.span.values().map(|&(first, _)| first).collect();
        firsts
            .into_iter()
            .filter(|line| reached.contains(line))
            .collect()
    }

    /// The lines whose `line` event may be followed by one on `line` in the same frame.
    pub fn before(&self, line: u32) -> Lines {
        self.after
            .iter()
            .filter(|(_, next)| next.contains(&line))
            .map(|(&from, _)| from)
            .collect()
    }
}

/// One logical line: a simple statement or a clause header, with its block.
#[derive(Debug)]
struct Statement {
    first: u32,
    last: u32,
    keyword: Keyword,
    /// A one-line compound statement (`if x: y = 1`): what its body begins with.
    inline: Option<Keyword>,
    /// A string literal on its own line (a docstring).
    docstring: bool,
    /// `global`, `nonlocal` and a function's bare annotations (`n: int`) declare and
    /// run no code: no event stands on them.
    declaration: bool,
    /// Indices of the statements of its block.
    body: Vec<usize>,
    /// Lines after the first on which nothing begins (see `silent_lines`).
    silent: Lines,
    /// Over several lines, the statement runs code of its first line first (see
    /// `first_line_runs_first`): from elsewhere, a step reaches that line.
    enters_at_first: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Keyword {
    If,
    Elif,
    Else,
    For,
    While,
    Try,
    Except,
    Finally,
    With,
    Def,
    Class,
    Match,
    Case,
    Decorator,
    Return,
    Raise,
    Break,
    Continue,
    Other,
}

impl Keyword {
    fn of(code: &str, header: bool) -> Keyword {
        let code = code.strip_prefix("async ").unwrap_or(code).trim_start();
        if code.starts_with('@') {
            return Keyword::Decorator;
        }
        let word: String = code
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let next = code[word.len()..].chars().next();
        // `match` and `case` are soft keywords: `match = 1` is an assignment.
        let soft = header && next.is_some_and(|c| c == ' ' || c == '(' || c == '[');
        match word.as_str() {
            "if" => Keyword::If,
            "elif" => Keyword::Elif,
            "else" => Keyword::Else,
            "for" => Keyword::For,
            "while" => Keyword::While,
            "try" => Keyword::Try,
            "except" => Keyword::Except,
            "finally" => Keyword::Finally,
            "with" => Keyword::With,
            "def" => Keyword::Def,
            "class" => Keyword::Class,
            "match" if soft => Keyword::Match,
            "case" if soft => Keyword::Case,
            "return" => Keyword::Return,
            "raise" => Keyword::Raise,
            "break" => Keyword::Break,
            "continue" => Keyword::Continue,
            _ => Keyword::Other,
        }
    }

    fn compound(self) -> bool {
        !matches!(
            self,
            Keyword::Decorator
                | Keyword::Return
                | Keyword::Raise
                | Keyword::Break
                | Keyword::Continue
                | Keyword::Other
        )
    }

    /// A clause that continues the compound statement before it.
    fn clause(self) -> bool {
        matches!(
            self,
            Keyword::Elif | Keyword::Else | Keyword::Except | Keyword::Finally
        )
    }
}

/// The program's logical lines, each with the indices of its block's statements.
fn statements(source: &str) -> Vec<Statement> {
    let lines: Vec<&str> = source.lines().collect();
    let mut statements: Vec<Statement> = Vec::new();
    let mut open: Vec<(usize, usize)> = Vec::new(); // (indent, statement index)
    for (i, last) in logical_lines(source) {
        let line = lines[i];
        let code = line.trim_start();
        let text = lines[i..=last].join("\n");
        let indent = line.len() - code.len();
        let colon = header_colon(text.trim_start());
        let keyword = Keyword::of(code, colon.is_some());
        let (keyword, inline) = match colon {
            Some(at) if keyword.compound() => {
                let after = text.trim_start()[at + 1..].trim();
                let after = without_comment(after).trim();
                let inline = (!after.is_empty()).then(|| Keyword::of(after, false));
                (keyword, inline)
            }
            _ if keyword.compound() => (Keyword::Other, None),
            _ => (keyword, None),
        };
        while open.last().is_some_and(|(at, _)| *at >= indent) {
            open.pop();
        }
        let index = statements.len();
        if let Some(&(_, parent)) = open.last() {
            statements[parent].body.push(index);
        }
        let docstring = keyword == Keyword::Other
            && (code.starts_with('"') || code.starts_with('\'') || code.starts_with("r\""));
        let word = crate::program::layout::words(code).next();
        // A bare annotation of a name (`total: int`) runs no code in a function.
        let in_function = open
            .iter()
            .rev()
            .map(|&(_, p)| statements[p].keyword)
            .find(|k| matches!(k, Keyword::Def | Keyword::Class))
            == Some(Keyword::Def);
        let annotation = keyword == Keyword::Other
            && colon.is_some_and(|at| {
                let text = text.trim_start();
                crate::program::layout::is_name(text[..at].trim())
                    && !code_chars(&text[at + 1..]).any(|(_, c, depth)| c == '=' && depth == 0)
            });
        let declaration = matches!(word, Some("global" | "nonlocal")) || annotation && in_function;
        statements.push(Statement {
            declaration,
            first: i as u32 + 1,
            last: last as u32 + 1,
            keyword,
            inline,
            docstring,
            body: Vec::new(),
            silent: silent_lines(&text, i as u32 + 1),
            enters_at_first: last > i
                && matches!(keyword, Keyword::Other | Keyword::Return | Keyword::Raise)
                && !docstring
                && first_line_runs_first(text.trim_start()),
        });
        if keyword.compound() && inline.is_none() {
            open.push((indent, index));
        }
    }
    statements
}

/// The lines after the first of a statement's `text` (which begins on line `first`)
/// on which no expression begins: blank, a comment, the inside or end of a string,
/// or only closing brackets, commas and colons. Python reports a line where an
/// instruction's expression begins, so no event stands on them. (Every line of an
/// f-string may hold one of its expressions.)
fn silent_lines(text: &str, first: u32) -> Lines {
    let mut speaks = vec![false; text.lines().count()];
    let mut line = 0;
    let mut before = Kind::Code;
    let mut in_f_string = false;
    for ch in chars(text) {
        let opens_string = ch.kind == Kind::Quote && !matches!(before, Kind::Text | Kind::Quote);
        if opens_string {
            let prefix = text[..ch.at]
                .chars()
                .rev()
                .take_while(|c| c.is_alphabetic());
            in_f_string = prefix.take(2).any(|c| c == 'f' || c == 'F');
        } else if ch.kind == Kind::Code {
            in_f_string = false;
        }
        let begins_code = ch.kind == Kind::Code
            && !ch.c.is_whitespace()
            && !matches!(ch.c, ')' | ']' | '}' | ',' | ':' | '\\');
        let f_text = ch.kind == Kind::Text && in_f_string && !ch.c.is_whitespace();
        if let Some(speaks) = speaks.get_mut(line) {
            *speaks |= opens_string || begins_code || f_text;
        }
        if ch.c == '\n' {
            line += 1;
        }
        before = ch.kind;
    }
    (1..speaks.len())
        .filter(|&k| !speaks[k])
        .map(|k| first + k as u32)
        .collect()
}

/// Whether a simple statement over several lines (`text`) runs code of its first line
/// before any other: Python evaluates its value left to right, so where nothing
/// reorders evaluation (a conditional expression, a comprehension, a lambda, `:=`, a
/// string over lines) the first leaf after its keyword and assignment targets (which
/// are stored last) runs first. True where that leaf (a name, a number or a string)
/// is on the first line.
fn first_line_runs_first(text: &str) -> bool {
    let code: String = chars(text)
        .filter(|ch| ch.kind == Kind::Code)
        .map(|ch| ch.c)
        .collect();
    let reorders = crate::program::layout::words(&code).any(|w| {
        matches!(
            w,
            "if" | "else" | "for" | "lambda" | "yield" | "await" | "async"
        )
    });
    let string_over_lines = chars(text).any(|ch| ch.kind == Kind::Text && ch.c == '\n');
    if reorders || code.contains(":=") || string_over_lines {
        return false;
    }
    let first = text.lines().next().unwrap_or("");
    // Past the last assignment on the line at the top level (`a = b = f(`, `x += (`).
    let chars: Vec<_> = chars(first).collect();
    let assigned = chars.iter().enumerate().rev().find(|(k, ch)| {
        let next = chars.get(k + 1).map(|c| c.c);
        let before = k.checked_sub(1).map(|b| chars[b].c);
        ch.kind == Kind::Code
            && ch.c == '='
            && ch.depth == 0
            && next != Some('=')
            && !matches!(before, Some('=' | '!' | '<' | '>'))
    });
    let value = assigned.map_or(&chars[..], |(k, _)| &chars[k + 1..]);
    let opens_string = value.iter().enumerate().any(|(k, ch)| {
        ch.kind == Kind::Quote && (k == 0 || !matches!(value[k - 1].kind, Kind::Text | Kind::Quote))
    });
    let code: String = value
        .iter()
        .map(|ch| if ch.kind == Kind::Code { ch.c } else { ' ' })
        .collect();
    // Keywords are no leaves (`return`, `not`, `in`), but for the constants.
    let names_a_leaf = crate::program::layout::words(&code).any(|w| {
        !w.is_empty()
            && (!crate::program::layout::is_keyword(w) || matches!(w, "True" | "False" | "None"))
    });
    opens_string || names_a_leaf
}

/// Where a compound statement's header ends: its first `:` outside brackets, strings
/// and comments (a lambda's colon sits inside brackets in all but odd code). A header
/// may span lines, with comments on them (`def f(\n    a,  # first\n):`).
pub(crate) fn header_colon(text: &str) -> Option<usize> {
    chars(text)
        .filter(|ch| ch.kind == Kind::Code)
        .find(|ch| ch.c == ':' && ch.depth == 0 && !text[ch.at + 1..].starts_with('='))
        .map(|ch| ch.at)
}

/// Where control can go from inside a block, besides falling off its end.
#[derive(Clone, Debug, Default)]
struct Context {
    /// The enclosing loop's header lines (`continue`, and the end of its body).
    loop_head: Lines,
    /// Where a `break` goes.
    loop_exit: Lines,
    /// Where an exception (or a `return` through a `finally`) may go in this frame.
    handlers: Lines,
}

struct Walk<'a> {
    statements: &'a [Statement],
    flow: &'a mut Flow,
}

impl Walk<'_> {
    /// The lines a `line` event of statement `i` may stand on: any of a statement
    /// over several lines, but only the first of a bare string (a docstring), whose
    /// other lines are inside the literal.
    fn lines(&self, i: usize) -> Lines {
        let s = &self.statements[i];
        let last = if s.docstring { s.first } else { s.last };
        (s.first..=last).filter(|l| !s.silent.contains(l)).collect()
    }

    /// The lines whose events may start the statement group beginning at `i`.
    fn entry(&self, i: usize) -> Lines {
        let s = &self.statements[i];
        if s.enters_at_first {
            return Lines::from([s.first]);
        }
        // (A `try:` line reports as it is entered, before its body: Python 3.11.)
        self.lines(i)
    }

    /// The first events of a block; a function's docstring runs no code.
    fn block_entry(&self, block: &[usize], skip_docstring: bool) -> Lines {
        let block = self.with_code(block);
        let skip =
            usize::from(skip_docstring && block.len() > 1 && self.statements[block[0]].docstring);
        block.get(skip).map(|&i| self.entry(i)).unwrap_or_default()
    }

    /// The statements of a block that run code.
    fn with_code(&self, block: &[usize]) -> Vec<usize> {
        let runs = |i: &&usize| !self.statements[**i].declaration;
        block.iter().filter(runs).copied().collect()
    }

    fn add(&mut self, i: usize, next: &Lines) {
        let lines = self.lines(i);
        for line in &lines {
            let after = self.flow.after.entry(*line).or_default();
            after.extend(next.iter().copied());
            // A statement over several lines reports them in any order.
            if lines.len() > 1 {
                after.extend(lines.iter().copied());
            }
        }
    }

    /// Record the flow of a block whose end falls through to `exit`.
    fn block(&mut self, block: &[usize], exit: &Lines, context: &Context) {
        // Group each compound statement with its clauses.
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for i in self.with_code(block) {
            // Decorators join the definition they decorate.
            let joins = |group: &Vec<usize>| {
                let last = self.statements[group[group.len() - 1]].keyword;
                self.statements[i].keyword.clause() || last == Keyword::Decorator
            };
            match groups.last_mut() {
                Some(group) if joins(group) => group.push(i),
                _ => groups.push(vec![i]),
            }
        }
        for (k, group) in groups.iter().enumerate() {
            let follow = match groups.get(k + 1) {
                Some(next) => self.entry(next[0]),
                None => exit.clone(),
            };
            self.group(group, &follow, context);
        }
    }

    /// What an inline body (`if x: break`) adds besides falling through.
    fn inline_targets(&self, inline: Keyword, follow: &Lines, context: &Context) -> Lines {
        match inline {
            Keyword::Break => context.loop_exit.clone(),
            Keyword::Continue => context.loop_head.clone(),
            Keyword::Return => Lines::from([END]),
            Keyword::Raise => Lines::new(),
            _ => follow.clone(),
        }
    }

    fn group(&mut self, group: &[usize], follow: &Lines, context: &Context) {
        let head = &self.statements[group[0]];
        let handlers = &context.handlers;
        match head.keyword {
            Keyword::If => {
                for (k, &clause) in group.iter().enumerate() {
                    let s = &self.statements[clause];
                    let otherwise = match group.get(k + 1) {
                        Some(&next) if self.statements[next].keyword == Keyword::Else => {
                            self.clause_entry(next)
                        }
                        Some(&next) => self.lines(next),
                        None => follow.clone(),
                    };
                    let mut next = self.clause_entry(clause);
                    next.extend(otherwise);
                    next.extend(handlers.iter().copied());
                    if let Some(inline) = s.inline {
                        next.extend(self.inline_targets(inline, follow, context));
                    }
                    self.add(clause, &next);
                    let body = s.body.clone();
                    self.block(&body, follow, context);
                }
            }
            Keyword::For | Keyword::While => {
                let head_lines = self.lines(group[0]);
                let otherwise = match group.get(1) {
                    Some(&clause) => self.clause_entry(clause),
                    None => follow.clone(),
                };
                let mut next = self.clause_entry(group[0]);
                next.extend(otherwise);
                next.extend(handlers.iter().copied());
                if head.inline.is_some() {
                    next.extend(head_lines.iter().copied());
                }
                self.add(group[0], &next);
                let inner = Context {
                    loop_head: head_lines.clone(),
                    loop_exit: follow.clone(),
                    handlers: handlers.clone(),
                };
                let body = head.body.clone();
                self.block(&body, &head_lines, &inner);
                if let Some(&clause) = group.get(1) {
                    self.add(clause, &self.clause_entry(clause));
                    let body = self.statements[clause].body.clone();
                    self.block(&body, follow, context);
                }
            }
            Keyword::Try => self.try_group(group, follow, context),
            Keyword::With => {
                // Leaving the block (normally, by break or by an exception) reports
                // the `with` line again.
                let with_lines = self.lines(group[0]);
                let mut next = self.clause_entry(group[0]);
                next.extend(follow.iter().copied());
                next.extend(handlers.iter().copied());
                next.extend(context.loop_exit.iter().copied());
                next.extend(context.loop_head.iter().copied());
                next.insert(END);
                self.add(group[0], &next);
                let mut inner = context.clone();
                inner.handlers.extend(with_lines.iter().copied());
                let body = head.body.clone();
                self.block(&body, &with_lines, &inner);
            }
            Keyword::Def | Keyword::Class | Keyword::Decorator => {
                self.definition(group, follow, context)
            }
            Keyword::Match => {
                let cases: Vec<usize> = head.body.clone();
                let mut next: Lines = cases.iter().flat_map(|&c| self.lines(c)).collect();
                next.extend(follow.iter().copied());
                next.extend(handlers.iter().copied());
                self.add(group[0], &next);
                for (k, &case) in cases.iter().enumerate() {
                    let mut next = self.clause_entry(case);
                    next.extend(cases[k + 1..].iter().flat_map(|&c| self.lines(c)));
                    next.extend(follow.iter().copied());
                    next.extend(handlers.iter().copied());
                    self.add(case, &next);
                    let body = self.statements[case].body.clone();
                    self.block(&body, follow, context);
                }
            }
            _ => {
                let mut next = handlers.clone();
                match head.keyword {
                    Keyword::Break => next.extend(context.loop_exit.iter().copied()),
                    Keyword::Continue => next.extend(context.loop_head.iter().copied()),
                    Keyword::Return => {
                        next.insert(END);
                    }
                    Keyword::Raise => {}
                    _ => next.extend(follow.iter().copied()),
                }
                self.add(group[0], &next);
            }
        }
    }

    /// A `def` or `class`, with its decorators: they report in turn, the definition
    /// line, then each decorator again as it applies; the body is a frame of its own.
    fn definition(&mut self, group: &[usize], follow: &Lines, context: &Context) {
        let unit: Lines = group.iter().flat_map(|&i| self.lines(i)).collect();
        let mut next = unit.clone();
        next.extend(follow.iter().copied());
        next.extend(context.handlers.iter().copied());
        let Some(&definition) = group.last() else {
            return;
        };
        let head = &self.statements[definition];
        let mut first = if head.inline.is_some() || head.body.is_empty() {
            self.lines(definition)
        } else {
            self.block_entry(&head.body, head.keyword == Keyword::Def)
        };
        if head.keyword == Keyword::Class {
            // A class body's frame starts on the `class` line itself.
            next.extend(first.iter().copied());
            first.extend(self.lines(definition));
        }
        // A one-line function (`def f(x): return x`) runs its body on its `def` line,
        // so a line event there may be followed by the function's return.
        let inline_def = head.inline.is_some() && head.keyword == Keyword::Def;
        for &i in group {
            let mut next = next.clone();
            if unit.len() == 1 {
                next.remove(&self.statements[i].first);
            }
            if inline_def && i == definition {
                next.insert(END);
            }
            self.add(i, &next);
        }
        for &i in [group[0], definition].iter() {
            let line = self.statements[i].first;
            self.flow
                .first
                .entry(line)
                .or_default()
                .extend(first.iter().copied());
        }
        let body = head.body.clone();
        self.block(&body, &Lines::from([END]), &Context::default());
    }

    /// The first events inside a clause: its body's, or its inline body's (its own
    /// line).
    fn clause_entry(&self, clause: usize) -> Lines {
        let s = &self.statements[clause];
        if s.inline.is_some() || s.body.is_empty() {
            return self.lines(clause);
        }
        let mut lines = self.block_entry(&s.body, false);
        // A handler or a case reports its own line as it tests a match.
        if matches!(s.keyword, Keyword::Except | Keyword::Case) {
            lines.extend(self.lines(clause));
        }
        lines
    }

    fn try_group(&mut self, group: &[usize], follow: &Lines, context: &Context) {
        let find = |keyword: Keyword| {
            group
                .iter()
                .copied()
                .filter(|&i| self.statements[i].keyword == keyword)
                .collect::<Vec<usize>>()
        };
        let excepts = find(Keyword::Except);
        let otherwise = find(Keyword::Else).first().copied();
        let finally = find(Keyword::Finally).first().copied();
        let finally_entry = finally.map(|f| self.clause_entry(f)).unwrap_or_default();
        let after_handlers = if finally.is_some() {
            finally_entry.clone()
        } else {
            follow.clone()
        };
        let outer = &context.handlers;
        // Inside the body an exception may go to any handler, or through `finally`.
        let mut caught: Lines = excepts.iter().flat_map(|&e| self.clause_entry(e)).collect();
        caught.extend(finally_entry.iter().copied());
        caught.extend(outer.iter().copied());
        let body_exit = match otherwise {
            Some(clause) => self.clause_entry(clause),
            None => after_handlers.clone(),
        };
        let head = group[0];
        let mut next = self.clause_entry(head);
        next.extend(outer.iter().copied());
        self.add(head, &next);
        let inner = Context {
            handlers: caught,
            ..context.clone()
        };
        let body = self.statements[head].body.clone();
        self.block(&body, &body_exit, &inner);

        let mut later = Context {
            handlers: finally_entry.clone(),
            ..context.clone()
        };
        later.handlers.extend(outer.iter().copied());
        for (k, &clause) in excepts.iter().enumerate() {
            let mut next = self.clause_entry(clause);
            next.extend(excepts[k + 1..].iter().flat_map(|&e| self.lines(e)));
            next.extend(later.handlers.iter().copied());
            self.add(clause, &next);
            let body = self.statements[clause].body.clone();
            self.block(&body, &after_handlers, &later);
        }
        if let Some(clause) = otherwise {
            let body = self.statements[clause].body.clone();
            self.block(&body, &after_handlers, &later);
        }
        if let Some(clause) = finally {
            // A `finally` block ends where the code that entered it was going.
            let mut exit = follow.clone();
            exit.extend(context.loop_exit.iter().copied());
            exit.extend(context.loop_head.iter().copied());
            exit.extend(outer.iter().copied());
            exit.insert(END);
            let body = self.statements[clause].body.clone();
            self.block(&body, &exit, context);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn after(flow: &Flow, line: u32) -> Vec<u32> {
        flow.after(line)
            .map(|l| l.iter().copied().collect())
            .unwrap_or_default()
    }

    const PROGRAM: &str = "\
def f(xs):
    \"\"\"doc\"\"\"
    total = 0
    for x in xs:
        if x > 2:
            break
        total += x
    else:
        total = -1
    try:
        y = 1 / (total - 3)
    except ZeroDivisionError:
        y = 0
    finally:
        z = 2
    with open('f') as fh:
        w = 1
    while total < 5: total += 1
    return total

f([1, 2])
";

    #[test]
    fn a_header_over_several_lines_with_comments_is_still_a_header() {
        // The comment on a parameter line hid the header's colon: the body was taken
        // for module-level code.
        let source = "x = 0\ndef f(\n    a,  # first\n    b,\n):\n    \"\"\"doc\"\"\"\n    return a\nf(1, 2)\n";
        let flow = Flow::of(source);
        let first: Vec<u32> = flow.first(2).unwrap().iter().copied().collect();
        assert_eq!(first, [7], "f's body starts after its docstring");
        assert_eq!(flow.statement_lines(), [1, 2, 7, 8]);
    }

    #[test]
    fn loops_branches_and_handlers() {
        let flow = Flow::of(PROGRAM);
        // Line 1 starts both frames: f's body (after its docstring) and the module.
        let first: Vec<u32> = flow.first(1).unwrap().iter().copied().collect();
        assert_eq!(first, vec![1, 3]);
        assert_eq!(after(&flow, 3), vec![4]);
        // The loop header: its body, or its else block when it ends.
        assert_eq!(after(&flow, 4), vec![5, 9]);
        assert_eq!(after(&flow, 5), vec![6, 7]);
        // break skips the else block; a `try:` line reports before its body.
        assert_eq!(after(&flow, 6), vec![10]);
        assert_eq!(after(&flow, 7), vec![4]);
        // In a try body an exception may go to the handler or the finally block.
        assert_eq!(after(&flow, 11), vec![12, 13, 15]);
        assert_eq!(after(&flow, 13), vec![15]);
        assert_eq!(after(&flow, 15), vec![16]);
        // The with line reports again on leaving its block.
        assert_eq!(after(&flow, 17), vec![16]);
        assert_eq!(after(&flow, 16), vec![17, 18]);
        assert_eq!(after(&flow, 18), vec![18, 19]);
        assert_eq!(after(&flow, 19), Vec::<u32>::new());
        // f returns on its return line (or, a return inside them, on leaving a
        // finally or with block), the module after its last line.
        let ends: Vec<u32> = (1..=21).filter(|&l| flow.can_return(l)).collect();
        assert_eq!(ends, vec![15, 16, 19, 21]);
        // The module: the def line, then the call.
        assert_eq!(after(&flow, 1), vec![21]);
        assert!(flow.before(4).contains(&3) && flow.before(4).contains(&7));
    }

    #[test]
    fn statements_over_several_lines_report_any_of_them() {
        let flow = Flow::of("x = [\n    1,\n    2,\n]\ny = x\n");
        // Not the closing bracket: no expression begins there.
        assert_eq!(after(&flow, 1), vec![1, 2, 3, 5]);
        assert_eq!(after(&flow, 3), vec![1, 2, 3, 5]);
        assert_eq!(flow.statement(2), (1..=4).collect());
    }

    #[test]
    fn no_event_stands_where_nothing_begins() {
        // Found in a session on a TheAlgorithms function: a return over three lines
        // was predicted to stop first on its closing bracket.
        let source =
            "x = foo(\n    a,  # the first\n\n    \"\"\"text\n    more\"\"\",\n    b\n)\ny = x\n";
        let flow = Flow::of(source);
        assert_eq!(after(&flow, 1), vec![1, 2, 4, 6, 8]);
        assert_eq!(flow.statement(7), (1..=7).collect());
        // An f-string's expression may stand on any of its lines.
        let flow = Flow::of("x = f\"\"\"a\n{b}\n\"\"\"\ny = x\n");
        assert_eq!(after(&flow, 1), vec![1, 2, 4]);
    }

    #[test]
    fn a_statement_whose_first_line_runs_first_is_entered_there() {
        // Found in a session on a TheAlgorithms function: a return over three lines
        // was predicted to stop first on its second line.
        let flow = Flow::of("x = 0\ndef f(a, b):\n    return (a - b) * (\n        b - a\n    )\n");
        assert_eq!(flow.first(2).unwrap(), &Lines::from([3]));
        assert_eq!(after(&flow, 3), vec![3, 4]);
        // The value's first leaf is not on the first line, or evaluation is reordered.
        for source in [
            "x = (\n    1 + y\n)\n",
            "x = [\n    y\n]\n",
            "x = not (\n    y\n)\n",
            "x = [v for v in\n    ys]\n",
            "return(\n    y)\n",
            "x = a if (\n    b) else c\n",
        ] {
            let flow = Flow::of(source);
            assert_eq!(flow.first(1).unwrap(), &Lines::from([1, 2]), "{source}");
        }
        for source in [
            "a.b = c = foo(\n    y\n)\n",
            "x += f(\n    y)\n",
            "raise E(\n    y)\n",
        ] {
            let flow = Flow::of(source);
            assert_eq!(flow.first(1).unwrap(), &Lines::from([1]), "{source}");
        }
    }

    #[test]
    fn a_docstring_over_several_lines_is_stood_on_at_its_first_line_only() {
        // Found on a TheAlgorithms module: Step Into from its docstring on line 1 was
        // allowed onto lines inside the literal.
        let flow = Flow::of("\"\"\"A module.\n\nIt adds.\n\"\"\"\nx = 1\ny = x + 1\n");
        assert_eq!(after(&flow, 1), vec![5]);
        assert_eq!(flow.statement_lines(), vec![1, 5, 6]);
    }

    #[test]
    fn declarations_run_no_code() {
        let flow = Flow::of("count = 0\ndef bump():\n    global count\n    count += 1\nbump()\n");
        assert_eq!(
            flow.first(2).unwrap().iter().copied().collect::<Vec<_>>(),
            vec![4]
        );
        // A bare annotation runs no code in a function; in the module it does.
        let flow = Flow::of("n: int\ndef f():\n    a: int\n    b: int = 1\n    return b\n");
        let lines = |set: &Lines| set.iter().copied().collect::<Vec<_>>();
        assert_eq!(lines(flow.first(2).unwrap()), vec![4]);
        assert_eq!(lines(flow.after(1).unwrap()), vec![2]);
    }

    #[test]
    fn soft_keywords_and_class_bodies() {
        let flow = Flow::of("match = 1\nclass A:\n    x = 1\n    y = 2\nz = 3\n");
        assert_eq!(after(&flow, 1), vec![2]);
        // The class line runs in the module (on to line 5) and starts the body.
        assert_eq!(after(&flow, 2), vec![3, 5]);
        assert_eq!(after(&flow, 4), Vec::<u32>::new());
    }
}
