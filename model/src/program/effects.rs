//! Which statements can change no object: they call only builtins and methods that
//! never mutate their arguments or receiver, pass them no function of the program, and
//! assign only to plain names. The constraints ask it to narrow "a call may mutate any
//! list the frame holds" to the statements that really can.
//!
//! Text only: the caller checks what the text cannot say (the program defines no class,
//! whose dunder methods a builtin could run; no value is an object whose code could run,
//! such as a generator; an augmented assignment's target is immutable, or its aliases
//! would change).

use super::layout;
use super::lexer::{chars, code_chars, Kind};

/// Builtins that read their arguments and build new values (given no user code to run).
const PURE_FUNCTIONS: &[&str] = &[
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
const PURE_METHODS: &[&str] = &[
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

/// Whether evaluating `code` (one statement, comments removed) changes no object:
/// every call is to a builtin of [`PURE_FUNCTIONS`] or a method of [`PURE_METHODS`],
/// no word names something `defines` says the program defines, no f-string holds an
/// expression, and what it assigns to is plain names.
pub fn mutates_nothing(code: &str, defines: impl Fn(&str) -> bool) -> bool {
    // The code with its strings blanked; an f-string's braces may hold calls.
    let mut plain = String::with_capacity(code.len());
    let mut in_f_string = false;
    for ch in chars(code) {
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
                plain.push(' ');
            }
            Kind::Text => {
                if in_f_string && ch.c == '{' {
                    return false;
                }
                plain.push(' ');
            }
            Kind::Comment => plain.push(' '),
        }
    }
    let bytes = plain.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        let c = bytes[at] as char;
        if !layout::is_name_char(c) {
            // A call of what a call or subscript gave: `f(x)(y)`, `fs[0](y)`.
            if c == '(' && plain[..at].trim_end().ends_with([')', ']']) {
                return false;
            }
            at += 1;
            continue;
        }
        let end = at
            + plain[at..]
                .find(|c| !layout::is_name_char(c))
                .unwrap_or(plain.len() - at);
        let word = &plain[at..end];
        let method = plain[..at].trim_end().ends_with('.');
        let called = plain[end..].trim_start().starts_with('(');
        if OPAQUE_WORDS.contains(&word) || (!method && defines(word)) {
            return false;
        }
        let keyword = layout::is_keyword(word);
        if called && !keyword {
            let known = if method { PURE_METHODS } else { PURE_FUNCTIONS };
            if !known.contains(&word) {
                return false;
            }
        }
        at = end;
    }
    assigns_plain_names(&plain)
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
    !plain[..targets_end].contains(['[', '.'])
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
        assert!(!pure("del xs[0]"));
        assert!(!pure("v = next(it)"));
    }
}
