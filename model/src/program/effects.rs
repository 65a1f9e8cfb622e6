//! Which statements can change no object: they call only builtins and methods that
//! never mutate their arguments or receiver, pass them no function of the program, and
//! assign only to plain names. The constraints ask it to narrow "a call may mutate any
//! list the frame holds" to the statements that really can. And which calls a
//! statement makes whenever it runs (`unconditional_calls`).
//!
//! Text only: the caller checks what the text cannot say (no class of the program has
//! code that Python runs unasked, such as dunder methods a builtin calls; no value is an object whose code could run,
//! such as a generator; an augmented assignment's target is immutable, or its aliases
//! would change).

use super::layout;
use super::lexer::{chars, code_chars, Kind};

/// Builtins that read their arguments and build new values (given no user code to run).
pub(crate) const PURE_FUNCTIONS: &[&str] = &[
    "abs",
    "all",
    "any",
    "bin",
    "bool",
    "chr",
    "dict",
    "divmod",
    "enumerate",
    "filter",
    "float",
    "format",
    "frozenset",
    "hash",
    "hex",
    "int",
    "isinstance",
    "len",
    "list",
    "map",
    "max",
    "min",
    "oct",
    "ord",
    "pow",
    "print",
    "range",
    "repr",
    "reversed",
    "round",
    "set",
    "sorted",
    "str",
    "sum",
    "tuple",
    "type",
    "zip",
];

/// Methods of the builtin types that leave their receiver as it was.
pub(crate) const PURE_METHODS: &[&str] = &[
    "capitalize",
    "casefold",
    "center",
    "copy",
    "count",
    "decode",
    "encode",
    "endswith",
    "find",
    "format",
    "get",
    "index",
    "isalnum",
    "isalpha",
    "isdigit",
    "islower",
    "isspace",
    "isupper",
    "items",
    "join",
    "keys",
    "ljust",
    "lower",
    "lstrip",
    "partition",
    "replace",
    "rfind",
    "rindex",
    "rjust",
    "rpartition",
    "rsplit",
    "rstrip",
    "split",
    "splitlines",
    "startswith",
    "strip",
    "swapcase",
    "title",
    "upper",
    "values",
    "zfill",
];

/// Words after which code may run that the text does not show, or a name may vanish.
const OPAQUE_WORDS: &[&str] = &[
    "lambda", "yield", "await", "del", "global", "nonlocal", "import", "with", "raise",
];

/// `code` with its strings and comments blanked but an f-string's expressions kept:
/// they run.
fn runnable_text(code: &str) -> String {
    let mut plain = String::with_capacity(code.len());
    let mut in_f_string = false;
    // Open `{` of the f-string expression being read; `{{` is a literal brace.
    let mut braces = 0;
    let mut text = chars(code).peekable();
    while let Some(ch) = text.next() {
        match ch.kind {
            Kind::Code => {
                in_f_string = false;
                plain.push(ch.c);
            }
            Kind::Quote => {
                // An opening quote follows its prefix (`f`, `rf`, ...) straight away.
                let prefix = layout::trailing_name(&plain);
                if prefix.contains(['f', 'F']) && prefix.chars().all(|c| "rRbBfFuU".contains(c)) {
                    in_f_string = true;
                }
                braces = 0;
                plain.push(' ');
            }
            Kind::Text if in_f_string => match ch.c {
                '{' if braces == 0 && text.peek().is_some_and(|next| next.c == '{') => {
                    text.next();
                    plain.push_str("  ");
                }
                '{' => {
                    braces += 1;
                    plain.push(' ');
                }
                '}' if braces > 0 => {
                    braces -= 1;
                    plain.push(' ');
                }
                // `{x=}` shows `x=`: no assignment.
                c if braces > 0 && c != '=' => plain.push(c),
                _ => plain.push(' '),
            },
            Kind::Text | Kind::Comment => plain.push(' '),
        }
    }
    plain
}

/// A word of runnable text (see `runnable_text`).
struct Word<'t> {
    text: &'t str,
    /// It follows a `.`: a method or an attribute.
    method: bool,
    called: bool,
}

impl Word<'_> {
    /// A call of a builtin of [`PURE_FUNCTIONS`] or a method of [`PURE_METHODS`].
    fn calls_pure(&self) -> bool {
        let known = if self.method {
            PURE_METHODS
        } else {
            PURE_FUNCTIONS
        };
        known.contains(&self.text)
    }
}

/// The words of runnable text; `None` where it calls what a call or subscript gave
/// (`f(x)(y)`, `fs[0](y)`), which no word names.
fn words_of(plain: &str) -> Option<Vec<Word<'_>>> {
    let bytes = plain.as_bytes();
    let mut words = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let c = bytes[at] as char;
        if !layout::is_name_char(c) {
            if c == '(' && plain[..at].trim_end().ends_with([')', ']']) {
                return None;
            }
            at += 1;
            continue;
        }
        let end = at
            + plain[at..]
                .find(|c| !layout::is_name_char(c))
                .unwrap_or(plain.len() - at);
        words.push(Word {
            text: &plain[at..end],
            method: plain[..at].trim_end().ends_with('.'),
            called: plain[end..].trim_start().starts_with('('),
        });
        at = end;
    }
    Some(words)
}

/// Whether evaluating `code` (one statement, comments removed) changes no object:
/// every call (an f-string's expressions included) is to a builtin of
/// [`PURE_FUNCTIONS`] or a method of [`PURE_METHODS`], no word names something
/// `defines` says the program defines, and what it assigns to is plain names.
pub fn mutates_nothing(code: &str, defines: impl Fn(&str) -> bool) -> bool {
    let plain = runnable_text(code);
    let Some(words) = words_of(&plain) else {
        return false;
    };
    let harmless = |w: &Word| {
        !OPAQUE_WORDS.contains(&w.text)
            && (w.method || !defines(w.text))
            && (!w.called || layout::is_keyword(w.text) || w.calls_pure())
    };
    words.iter().all(harmless) && assigns_plain_names(&plain)
}

/// The one function of the program that evaluating `code` (one statement, comments
/// removed) can call: it calls, by plain name, only that function of those `defines`
/// says the program defines and names no other, and every other call is to a
/// builtin of [`PURE_FUNCTIONS`] or a method of [`PURE_METHODS`]. No comprehension
/// or lambda (each runs in a frame of its own). `None` where there is no such one.
pub fn only_program_call(code: &str, defines: impl Fn(&str) -> bool) -> Option<String> {
    let plain = runnable_text(code);
    let mut only: Option<&str> = None;
    for w in words_of(&plain)? {
        if OPAQUE_WORDS.contains(&w.text) || w.text == "for" {
            return None;
        }
        if !w.method && defines(w.text) {
            if !w.called || *only.get_or_insert(w.text) != w.text {
                return None;
            }
        } else if w.called && !layout::is_keyword(w.text) && !w.calls_pure() {
            return None;
        }
    }
    only.map(str::to_string)
}

/// Words that make part of a statement run only sometimes (short-circuits, conditional
/// expressions, comprehensions, lambdas) or pause it (`yield`, `await`).
const CONDITIONAL_WORDS: &[&str] = &[
    "and", "or", "if", "else", "for", "lambda", "yield", "await", "async",
];

/// The names a one-line statement calls by plain name (`f(...)`, not `x.f(...)`)
/// whenever it runs and raises nothing first: an expression statement, an assignment,
/// a `return` or `raise`, or the condition of an `if`, `elif` or `while` line (which
/// runs each time the line does). None where any part of it may not run (see
/// [`CONDITIONAL_WORDS`]) or for other statements (a `for` line runs its iterable
/// once, not each round; an `assert` its message only on failure).
pub fn unconditional_calls(code: &str) -> Vec<String> {
    // The code with its strings blanked: a string's words are no calls.
    let plain: String = chars(code)
        .map(|ch| match ch.kind {
            Kind::Code => ch.c,
            _ => ' ',
        })
        .collect();
    let mut words = layout::words(&plain).filter(|w| !w.is_empty());
    let first = words.next().unwrap_or("");
    let condition = matches!(first, "if" | "elif" | "while");
    let led = condition || matches!(first, "return" | "raise");
    if layout::is_keyword(first) && !led {
        return Vec::new();
    }
    if words.any(|w| CONDITIONAL_WORDS.contains(&w)) {
        return Vec::new();
    }
    // A condition's line holds nothing after its colon (`if ok: f()` calls only
    // sometimes); elsewhere a colon outside brackets is an annotation's.
    let colon = code_chars(&plain)
        .find(|&(_, c, depth)| c == ':' && depth == 0)
        .map(|(at, _, _)| at);
    let text = match (condition, colon) {
        (true, Some(at)) if plain[at + 1..].trim().is_empty() => &plain[..at],
        (true, _) => return Vec::new(),
        (false, _) => plain.as_str(),
    };
    let mut called = Vec::new();
    let mut at = 0;
    while let Some(offset) = text[at..].find(layout::is_name_char) {
        let start = at + offset;
        let end = text[start..]
            .find(|c| !layout::is_name_char(c))
            .map_or(text.len(), |n| start + n);
        let word = &text[start..end];
        let method = text[..start].trim_end().ends_with('.');
        let calls = text[end..].trim_start().starts_with('(');
        if calls && !method && !layout::is_keyword(word) && !called.iter().any(|c| c == word) {
            called.push(word.to_string());
        }
        at = end;
    }
    called
}

/// Whether the statement's assignment targets (if it assigns) are plain names: a
/// subscript or attribute target (`d[k] = v`, `self.n += 1`) changes an object.
fn assigns_plain_names(plain: &str) -> bool {
    let bytes = plain.as_bytes();
    // An `=` outside brackets that is not part of `==`, `!=`, `<=` or `>=`.
    let assigns = |at: usize| {
        let before = bytes.get(at.wrapping_sub(1)).copied().unwrap_or(b' ');
        let after = bytes.get(at + 1).copied().unwrap_or(b' ');
        !(after == b'=' || matches!(before, b'=' | b'!' | b'<' | b'>'))
    };
    let targets_end = code_chars(plain)
        .filter(|&(at, c, depth)| c == '=' && depth == 0 && assigns(at))
        .map(|(at, _, _)| at)
        .last()
        .unwrap_or(0);
    let targets = &plain[..targets_end];
    // One annotated name (`stack: list[int] = []`): the annotation is no target.
    let annotated = code_chars(targets)
        .find(|&(_, c, depth)| c == ':' && depth == 0)
        .map(|(at, _, _)| targets[..at].trim())
        .filter(|name| layout::is_name(name) && !layout::is_keyword(name));
    annotated.is_some() || !targets.contains(['[', '.'])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pure(code: &str) -> bool {
        mutates_nothing(code, |w| w == "helper")
    }

    #[test]
    fn builtins_and_reading_methods_change_nothing() {
        assert!(pure(
            "pair = (min(queue, default=0), max(queue, default=0))"
        ));
        assert!(pure(
            "queue = [len(w) for w in [w.upper() for w in labels]]"
        ));
        assert!(pure("word = str(s.count('e'))"));
        assert!(pure("is_even = any(v > 0 for v in sorted(data, key=abs))"));
        assert!(pure("if buf.startswith('o') and (len(arr) <= 1):"));
        assert!(pure("x = xs[0] + d['k']"));
        assert!(pure("print('a(b', x == y, sep=' ')"));
        assert!(pure("total += len(xs)"));
        assert!(pure("stack: list[int] = []"));
        assert!(pure("print(f\"{''} -> {value}\")"));
        assert!(pure("label = f'{len(xs)!r:>{width}} {{literal}} {x=}'"));
    }

    #[test]
    fn the_one_function_of_the_program_a_statement_calls() {
        let only = |code| only_program_call(code, |w| w == "check" || w == "helper");
        assert_eq!(
            only("table = check('a-b-c'.capitalize())").as_deref(),
            Some("check")
        );
        assert_eq!(
            only("print(check(len('a b c'), {'key': 3}))").as_deref(),
            Some("check")
        );
        assert_eq!(
            only("x = check(1) + check(2) if ok else 0").as_deref(),
            Some("check")
        );
        assert_eq!(only("s = f'{check(x)}'").as_deref(), Some("check"));
        for code in [
            "x = len(xs)",
            "x = check(helper(1))",
            "x = check(helper)",
            "x = check(other(1))",
            "x = check([v for v in xs])",
            "x = check(lambda: 1)",
            "x = check(1)(2)",
        ] {
            assert_eq!(only(code), None, "{code}");
        }
    }

    #[test]
    fn calls_that_run_whenever_the_statement_does() {
        let calls = |code| unconditional_calls(code);
        assert_eq!(calls("d1 = direction(p3, p4, p1)"), ["direction"]);
        assert_eq!(
            calls("print(check(len('a b c'), {'key': 3}))"),
            ["print", "check", "len"]
        );
        assert_eq!(calls("return fib(n - 1) + fib(n - 2)"), ["fib"]);
        assert_eq!(calls("if valid(x):"), ["valid"]);
        assert_eq!(calls("best: int = score(xs)"), ["score"]);
        assert_eq!(calls("xs.sort(key=f)"), Vec::<String>::new());
        assert_eq!(calls("s = 'f(x)'"), Vec::<String>::new());
        // Parts that run only sometimes, and statements that run a call once or not.
        for code in [
            "x = a or f(y)",
            "x = f(a) if ok else g(b)",
            "ys = [f(y) for y in xs]",
            "k = lambda: f(1)",
            "if ok: f(x)",
            "for x in f(y):",
            "assert ok, f(x)",
            "with f() as g:",
            "def f(x=g()):",
        ] {
            assert!(calls(code).is_empty(), "{code}");
        }
    }

    #[test]
    fn what_may_change_an_object_is_no_pure_statement() {
        assert!(!pure("xs.append(x)"));
        assert!(!pure("t = arr.pop()"));
        assert!(!pure("d[k] = v"));
        assert!(!pure("self.n += 1"));
        assert!(!pure("y = helper(xs)"));
        assert!(!pure("ys = sorted(xs, key=helper)"));
        assert!(!pure("ys = sorted(xs, key=lambda v: v.pop())"));
        assert!(!pure("y = fs[0](xs)"));
        assert!(!pure("s = f'{xs.pop()}'"));
        assert!(!pure("print(f'{helper(x)}')"));
        assert!(!pure("s = f'{{{xs.pop()}}}'"));
        assert!(!pure("del xs[0]"));
        assert!(!pure("v = next(it)"));
        assert!(!pure("d[k]: int = 1"));
        assert!(!pure("if ok: xs[0] = 1"));
    }
}
