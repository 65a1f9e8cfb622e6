//! What a program's text says about its frames and names, read line by line: which
//! frame runs each line ([`Layout`]), the names a statement may bind (`bound_by`),
//! every identifier, and the functions a line may call without naming them.

use super::lexer::logical_starts;
use std::collections::BTreeSet;

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
    /// One-line functions (`def f(x): return x`): the `def` line -> the function, whose
    /// frame runs its body there too.
    pub inline_bodies: std::collections::BTreeMap<u32, String>,
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
        let mut inline_bodies = std::collections::BTreeMap::new();
        // The frame a `def` or `class` header runs in, while its lines go on: the
        // enclosing one evaluates its defaults, annotations and bases.
        let mut header_in: Option<String> = None;
        for (i, line) in lines.iter().enumerate() {
            let text = line.trim_start();
            let blank = text.is_empty() || text.starts_with('#');
            if starts[i] {
                header_in = None;
            }
            if let Some(enclosing) = header_in.clone().filter(|_| !blank) {
                scope.push(enclosing);
                continue;
            }
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
                    let body = super::flow::header_colon(text).map(|at| text[at + 1..].trim());
                    let inline = body.is_some_and(|b| !b.is_empty() && !b.starts_with('#'));
                    if inline && !text.starts_with("class ") {
                        inline_bodies.insert(i as u32 + 1, name.clone());
                    }
                    open.push((indent, name));
                    header_in = Some(here.clone());
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
            inline_bodies,
        }
    }

    /// The parameters of each function whose `call` event may stand on a line (a `def`
    /// line, or the first decorator above one).
    pub fn parameters(&self, source: &str) -> std::collections::BTreeMap<u32, Vec<String>> {
        let lines: Vec<&str> = source.lines().collect();
        self.calls
            .keys()
            .filter_map(|&line| {
                let def = crate::entry::def_line(&lines, line)?;
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
        // Free variables: what an enclosing function holds. A class does not enclose
        // its methods, but the function that the class is defined in does.
        let class_scope: std::collections::HashMap<&String, &String> = self
            .classes
            .iter()
            .map(|(line, class)| (class, &self.scope[*line as usize - 1]))
            .collect();
        let enclosing = |parent: &String| {
            let mut parent = parent.clone();
            for _ in 0..8 {
                match class_scope.get(&parent) {
                    Some(outer) => parent = (*outer).clone(),
                    None => break,
                }
            }
            parent
        };
        for _ in 0..8 {
            for (child, parent) in &parents {
                let parent = enclosing(parent);
                if parent == "<module>" || class_scope.contains_key(&parent) || &parent == child {
                    continue;
                }
                let inherited = bound.get(&parent).cloned().unwrap_or_default();
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
            frames.extend(self.inline_bodies.get(&line).map(String::as_str));
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
    // An `except` clause binds only its `as` name (below), not the classes it names.
    if matches!(
        first,
        Some("import" | "from" | "global" | "nonlocal" | "case" | "with")
    ) {
        names.extend(identifiers(code));
    }
    // A `for` loop's targets (a comprehension's stay in its own scope), `as` targets,
    // `:=` targets.
    let words: Vec<&str> = code
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    let loop_at = usize::from(words.first() == Some(&"async"));
    for (k, word) in words.iter().enumerate() {
        if *word == "for" && k == loop_at {
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
        let targets = &code[..at];
        // `total: int = 0` binds `total`, not what annotates it.
        let annotated = crate::program::lexer::code_chars(targets)
            .find(|&(_, c, depth)| c == ':' && depth == 0)
            .map(|(colon, _, _)| targets[..colon].trim())
            .filter(|name| is_name(name));
        match annotated {
            Some(name) => {
                names.insert(name.to_string());
            }
            None => names.extend(target_names(targets)),
        }
    }
    names.retain(|n| !n.is_empty() && !KEYWORDS.contains(&n.as_str()));
    names
}

/// The names an assignment's targets bind: those outside any subscript or call
/// (`dp[i][j] = v` binds `dp`, whose value changes, not `i` or `j`), in a tuple or
/// list of targets too, and not an attribute's (`self.total`).
fn target_names(targets: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    // Per open bracket: whether it reads (a subscript or call) rather than groups.
    let mut reads: Vec<bool> = Vec::new();
    let (mut word, mut after_dot, mut last) = (String::new(), false, ' ');
    for (_, c, _) in crate::program::lexer::code_chars(targets).chain([(0, ' ', 0)]) {
        if c.is_alphanumeric() || c == '_' {
            if word.is_empty() {
                after_dot = last == '.';
            }
            word.push(c);
        } else {
            let starts_name = word.chars().next().is_some_and(|f| !f.is_ascii_digit());
            if starts_name && !after_dot && !reads.contains(&true) {
                names.insert(std::mem::take(&mut word));
            }
            word.clear();
            match c {
                '(' | '[' | '{' => {
                    reads.push(last.is_alphanumeric() || matches!(last, '_' | ']' | ')'))
                }
                ')' | ']' | '}' => {
                    reads.pop();
                }
                _ => {}
            }
        }
        if !c.is_whitespace() {
            last = c;
        }
    }
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

/// Whether `c` can be part of an identifier.
pub(crate) fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Whether `word` is one of Python's keywords.
pub(crate) fn is_keyword(word: &str) -> bool {
    KEYWORDS.contains(&word)
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
        assert_eq!(names("dp[i][j] = max(dp[i - 1][j], k)"), "dp");
        assert_eq!(names("self.total, [a, b] = t"), "a b self");
        assert_eq!(names("grid[f(r)].cells[c] = x = 0"), "grid x");
        assert_eq!(names("x <<= 2"), "x");
        assert_eq!(names("if a == b and c <= d:"), "");
        assert_eq!(names("for i, (k, v) in enumerate(d.items()):"), "i k v");
        // A comprehension's variable stays in its scope (Python 3).
        assert_eq!(names("ys = [w * 2 for w in xs if w != 0]"), "ys");
        assert_eq!(names("for x in (y for y in z):"), "x");
        assert_eq!(names("async for x in aiter():"), "x");
        assert_eq!(names("with open(p) as fh:"), "fh open p");
        assert_eq!(names("except (KeyError, ValueError) as e:"), "e");
        assert_eq!(names("except KeyError:"), "");
        assert_eq!(names("if (n := len(s)) > 3:"), "n");
        assert_eq!(names("print('x =', y)"), "");
        assert_eq!(names("d[key] = value"), "d");
        assert_eq!(names("series: list = []"), "series");
        assert_eq!(names("if ready: n = 1"), "n ready");
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
        let source = "def make(key):\n    class W:\n        def lt(self, other):\n            return key(self) < key(other)\n    return W\n";
        let layout = Layout::of(source);
        let names = layout.frame_names(source, &layout.parameters(source));
        assert_eq!(
            names["lt"],
            vec!["W", "key", "other", "self"],
            "the function a class is defined in encloses its methods"
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
                // The header's second line: the module evaluates its defaults and
                // annotations (Python reports a `line` event there in its frame).
                "<module>",
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
