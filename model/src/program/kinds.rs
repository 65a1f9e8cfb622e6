//! How the repr of an expression's value can begin, read from the expression's text
//! alone: a list display or `sorted(...)` gives a list (`[`), a string literal or
//! `.upper()` of one a string (a quote), `len(...)` a whole number, `not x` a bool. No
//! value is computed; where the text does not settle the kind, nothing is said.

use super::layout;
use super::lexer::{closes_at_end, code_chars, split_top};

/// Builtins whose result's kind is fixed, by the beginnings of its repr.
const BUILTIN_KINDS: &[(&str, &[&str])] = &[
    ("list", LIST),
    ("sorted", LIST),
    ("dict", DICT),
    ("tuple", &["("]),
    ("set", &["{", "set()"]),
    ("str", STR),
    ("repr", STR),
    ("chr", STR),
    ("hex", STR),
    ("bin", STR),
    ("oct", STR),
    ("len", DIGITS),
    ("ord", DIGITS),
    ("bool", BOOL),
    ("isinstance", BOOL),
    ("callable", BOOL),
    ("hasattr", BOOL),
    ("all", BOOL),
    ("any", BOOL),
];

/// `str` methods whose result's kind is fixed (on a receiver known to be a string).
const STR_METHODS: &[(&str, &[&str])] = &[
    ("upper", STR),
    ("lower", STR),
    ("capitalize", STR),
    ("title", STR),
    ("swapcase", STR),
    ("casefold", STR),
    ("strip", STR),
    ("lstrip", STR),
    ("rstrip", STR),
    ("replace", STR),
    ("join", STR),
    ("format", STR),
    ("center", STR),
    ("ljust", STR),
    ("rjust", STR),
    ("zfill", STR),
    ("split", LIST),
    ("rsplit", LIST),
    ("splitlines", LIST),
    ("count", DIGITS),
    ("find", INT),
    ("rfind", INT),
    ("startswith", BOOL),
    ("endswith", BOOL),
    ("isalpha", BOOL),
    ("isdigit", BOOL),
    ("isalnum", BOOL),
    ("isspace", BOOL),
    ("isupper", BOOL),
    ("islower", BOOL),
];

const LIST: &[&str] = &["["];
const DICT: &[&str] = &["{"];
const STR: &[&str] = &["'", "\""];
const BOOL: &[&str] = &["True", "False"];
const DIGITS: &[&str] = &["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"];
const INT: &[&str] = &["-", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9"];

/// The texts the repr of `expr`'s value can begin with (the whole repr where it is a
/// bool), or `None` where its text does not say. `builtin(name)`: whether `name` is
/// Python's builtin there (nothing of the program or the frame rebinds it);
/// `is_str(name)`: whether the name holds a string.
pub fn repr_beginnings(
    expr: &str,
    builtin: &dyn Fn(&str) -> bool,
    is_str: &dyn Fn(&str) -> bool,
) -> Option<&'static [&'static str]> {
    let expr = expr.trim();
    if let Some(rest) = expr.strip_prefix("not ") {
        return (!rest.trim().is_empty()).then_some(BOOL);
    }
    if whole_string_literal(expr) {
        return Some(STR);
    }
    // A display: `[...]` is a list, `{...}` a dict or set (an empty set comprehension
    // shows as `set()`).
    for (open, kinds) in [('[', LIST), ('{', &["{", "set()"][..])] {
        if let Some(inner) = expr.strip_prefix(open) {
            return closes_at_end(inner).then_some(kinds);
        }
    }
    // The call that ends the expression (`split` in `s.strip().split(',')`): of a
    // builtin, or of a method of a string.
    let (open, _) = expr
        .match_indices('(')
        .find(|&(at, _)| closes_at_end(&expr[at + 1..]))?;
    let callee = &expr[..open];
    if layout::is_name(callee) {
        let kinds = BUILTIN_KINDS.iter().find(|(name, _)| *name == callee)?.1;
        return builtin(callee).then_some(kinds);
    }
    let (receiver, method) = callee.rsplit_once('.')?;
    let kinds = STR_METHODS.iter().find(|(name, _)| *name == method)?.1;
    let receiver_is_str = whole_string_literal(receiver)
        || layout::is_name(receiver) && is_str(receiver)
        || receiver.ends_with(')') && is_str_call(receiver, builtin, is_str);
    receiver_is_str.then_some(kinds)
}

/// Whether `expr` is a call whose result is surely a string (`s.strip()` in
/// `s.strip().lower()`).
fn is_str_call(expr: &str, builtin: &dyn Fn(&str) -> bool, is_str: &dyn Fn(&str) -> bool) -> bool {
    repr_beginnings(expr, builtin, is_str) == Some(STR)
}

/// Whether `expr` is one string literal (`'a'`, `f"{x}"`, `r'\d'`): nothing of it
/// is code but its prefix letters. Not bytes, whose repr begins with `b`.
fn whole_string_literal(expr: &str) -> bool {
    let quote = expr.find(['\'', '"']);
    let Some(quote) = quote.filter(|&q| q <= 2) else {
        return false;
    };
    let prefix = expr[..quote].to_ascii_lowercase();
    let plain_prefix = prefix.chars().all(|c| matches!(c, 'r' | 'u' | 'f'));
    plain_prefix && split_top(expr).len() == 1 && code_chars(expr).all(|(at, _, _)| at < quote)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(expr: &str) -> Option<&'static [&'static str]> {
        repr_beginnings(expr, &|name| name != "shadowed", &|name| name == "word")
    }

    #[test]
    fn displays_and_literals_say_their_kind() {
        assert_eq!(kinds("[v * 3 for v in []]"), Some(LIST));
        assert_eq!(kinds("[*heights, 0]"), Some(LIST));
        assert_eq!(kinds("{'a': 1}"), Some(&["{", "set()"][..]));
        assert_eq!(kinds("'a b' "), Some(STR));
        assert_eq!(kinds("f\"{x} -> {y}\""), Some(STR));
        assert_eq!(kinds("not done"), Some(BOOL));
    }

    #[test]
    fn builtins_and_string_methods_say_their_kind() {
        assert_eq!(kinds("sorted(xs, key=len)"), Some(LIST));
        assert_eq!(kinds("len('a b c')"), Some(DIGITS));
        assert_eq!(kinds("word.capitalize()"), Some(STR));
        assert_eq!(kinds("'hello'.find('e')"), Some(INT));
        assert_eq!(kinds("word.strip().split(',')"), Some(LIST));
    }

    #[test]
    fn what_the_text_does_not_settle_says_nothing() {
        for expr in [
            "[1, 2][0]",
            "[1] + [2]",
            "'a' * n",
            "'a' + b",
            "b'x'",
            "x // 2",
            "len(xs) - 1",
            "shadowed(xs)",
            "other.upper()",
            "f(x)",
            "(1, 2)",
        ] {
            assert_eq!(kinds(expr), None, "{expr}");
        }
    }
}
