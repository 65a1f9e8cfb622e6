//! Whether a condition holds, where the values it tests are shown and testing them runs
//! no code: `n != 1`, `lo <= hi and not found`, `x is None`, `s == 'done'`. Anything
//! else (a call, a float, a comparison of values of different kinds that Python could
//! still find equal) is not worked out.

use super::arithmetic::Arithmetic;
use super::known::Scope;
use super::lexer::{chars, closes_at_end, Kind};

/// The truth of `expr` in `scope`; `None` where the values it reads do not settle it.
pub fn truth(expr: &str, scope: &Scope) -> Option<bool> {
    let expr = unparenthesized(expr.trim());
    // A conditional expression binds loosest of all.
    if let Some((value, rest)) = split_once_at_word(expr, " if ") {
        let (condition, otherwise) = split_once_at_word(rest, " else ")?;
        let picked = if truth(condition, scope)? {
            value
        } else {
            otherwise
        };
        return truth(picked, scope);
    }
    // `or` binds loosest, then `and`; each stops at the first part that settles it,
    // as Python does (a later part is never run, so it need not be known).
    for (word, settles) in [(" or ", true), (" and ", false)] {
        let parts = split_at_word(expr, word);
        if parts.len() > 1 {
            for part in parts {
                if truth(part, scope)? == settles {
                    return Some(settles);
                }
            }
            return Some(!settles);
        }
    }
    if let Some(inner) = expr.strip_prefix("not ") {
        return truth(inner, scope).map(|t| !t);
    }
    if let Some((needle, haystack, negated)) = membership(expr) {
        return contains(needle, haystack, scope).map(|found| found != negated);
    }
    match comparison(expr) {
        Some((first, rest)) => {
            let mut left = operand(first, scope)?;
            for (op, text) in rest {
                let right = operand(text, scope)?;
                if !compare(op, &left, &right)? {
                    return Some(false);
                }
                left = right;
            }
            Some(true)
        }
        None => match operand(expr, scope)? {
            Value::Int(n) => Some(n != 0),
            Value::Repr(repr) => truth_of_repr(&repr),
        },
    }
}

/// The value of `expr` where it is a comparison or a `not` (always a `bool`) that
/// `truth` settles; `None` for anything else (`a and b` gives one of its parts, as
/// `a == b if c else d` may give `d`).
pub fn boolean(expr: &str, scope: &Scope) -> Option<bool> {
    let expr = unparenthesized(expr.trim());
    let loose = [" or ", " and ", " if "]
        .iter()
        .any(|w| split_at_word(expr, w).len() > 1);
    let compares =
        expr.starts_with("not ") || comparison(expr).is_some() || membership(expr).is_some();
    if loose || !compares {
        return None;
    }
    truth(expr, scope)
}

/// Whether a value of a builtin kind is true, by its repr (`[]`, `0`, `''`, `None`
/// are false); `None` for a repr that does not say (an object's).
pub fn truth_of_repr(repr: &str) -> Option<bool> {
    match repr {
        "None" | "False" | "''" | "\"\"" | "[]" | "{}" | "()" | "set()" | "b''" => {
            return Some(false)
        }
        "True" => return Some(true),
        _ => {}
    }
    if repr.starts_with(['\'', '"', '[', '{', '(']) {
        return Some(true); // a non-empty string or container
    }
    let number = repr.parse::<f64>().ok()?;
    Some(number != 0.0)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Is,
    IsNot,
}

enum Value {
    Int(i128),
    Repr(String),
}

/// A literal, a shown name, or what [`super::known`] works out of those.
fn operand(text: &str, scope: &Scope) -> Option<Value> {
    let text = text.trim();
    if let Some(n) = Arithmetic::of(text).and_then(|a| a.value(scope)) {
        return Some(Value::Int(n));
    }
    let repr = super::known::repr_of(text, scope)?;
    Some(match repr.parse::<i128>() {
        Ok(n) => Value::Int(n),
        Err(_) => Value::Repr(repr),
    })
}

/// `left OP right` where it runs no code and the reprs settle it.
fn compare(op: Cmp, left: &Value, right: &Value) -> Option<bool> {
    match (op, left, right) {
        (Cmp::Is | Cmp::IsNot, Value::Repr(a), Value::Repr(b)) if a == "None" || b == "None" => {
            Some((a == b) == (op == Cmp::Is))
        }
        // A number is not `None`.
        (Cmp::Is | Cmp::IsNot, Value::Int(_), Value::Repr(r))
        | (Cmp::Is | Cmp::IsNot, Value::Repr(r), Value::Int(_))
            if r == "None" =>
        {
            Some(op == Cmp::IsNot)
        }
        (_, Value::Int(a), Value::Int(b)) => Some(match op {
            Cmp::Eq => a == b,
            Cmp::Ne => a != b,
            Cmp::Lt => a < b,
            Cmp::Le => a <= b,
            Cmp::Gt => a > b,
            Cmp::Ge => a >= b,
            Cmp::Is | Cmp::IsNot => return None,
        }),
        (Cmp::Is | Cmp::IsNot, _, _) => None,
        // Numbers, strings without escapes, and tuples or lists of those compare as
        // their reprs order them.
        (_, a, b) => {
            let repr = |v: &Value| match v {
                Value::Int(n) => n.to_string(),
                Value::Repr(r) => r.clone(),
            };
            let ordering = super::builtins::order(&repr(a), &repr(b));
            match (op, ordering) {
                (_, Some(o)) => Some(match op {
                    Cmp::Eq => o.is_eq(),
                    Cmp::Ne => o.is_ne(),
                    Cmp::Lt => o.is_lt(),
                    Cmp::Le => o.is_le(),
                    Cmp::Gt => o.is_gt(),
                    _ => o.is_ge(),
                }),
                (Cmp::Eq | Cmp::Ne, None) => equal_kinds(op, left, right),
                _ => None,
            }
        }
    }
}

/// `a == b` (or `!=`) where the kinds settle it: two strings are equal exactly when
/// their reprs are; a string or `None` equals no value of another kind (a number
/// included).
fn equal_kinds(op: Cmp, a: &Value, b: &Value) -> Option<bool> {
    let kind = |v: &Value| match v {
        Value::Int(_) => Some("number"),
        Value::Repr(r) if r.starts_with(['\'', '"']) => Some("str"),
        Value::Repr(r) if r == "None" => Some("None"),
        Value::Repr(r) if r.parse::<f64>().is_ok() => Some("number"),
        Value::Repr(_) => None,
    };
    let (ka, kb) = (kind(a)?, kind(b)?);
    let equal = match (a, b) {
        _ if ka == "number" && kb == "number" => return None,
        (Value::Repr(a), Value::Repr(b)) if ka == kb => a == b,
        _ => ka == kb,
    };
    Some(equal == (op == Cmp::Eq))
}

/// `A in B` or `A not in B` (true for the latter) where that is the whole comparison.
fn membership(expr: &str) -> Option<(&str, &str, bool)> {
    let (parts, negated) = match split_at_word(expr, " not in ") {
        parts if parts.len() == 2 => (parts, true),
        _ => (split_at_word(expr, " in "), false),
    };
    let [needle, haystack] = parts[..] else {
        return None;
    };
    let compares = |part: &str| {
        let top = top_level_code(part);
        ["==", "!=", "<", ">", " is "]
            .iter()
            .any(|op| part.match_indices(op).any(|(at, _)| top[at]))
    };
    (!compares(needle) && !compares(haystack)).then_some((needle, haystack, negated))
}

/// Whether `haystack` holds `needle`: a substring of a string, or an item of a list,
/// tuple, set or dict (its keys) where every item is a whole number or a string (of
/// other kinds, `1 == 1.0 == True`).
fn contains(needle: &str, haystack: &str, scope: &Scope) -> Option<bool> {
    let needle = super::known::repr_of(needle, scope)?;
    let haystack = super::known::repr_of(haystack, scope)?;
    if let Some(text) = super::known::unescaped(&haystack) {
        return Some(text.contains(super::known::unescaped(&needle)?));
    }
    if !haystack.starts_with(['[', '(', '{']) {
        return None;
    }
    let items = crate::entry::elements(&haystack)?;
    let kind = |repr: &str| match repr {
        r if r.starts_with(['\'', '"']) => Some("str"),
        r if r.parse::<i128>().is_ok() => Some("int"),
        _ => None,
    };
    kind(&needle)?;
    for item in &items {
        kind(item)?;
    }
    Some(items.contains(&needle))
}

/// `expr` split at its top-level comparison operators: the first operand, then each
/// operator with the operand after it. `None` where it compares nothing (or with `in`).
fn comparison(expr: &str) -> Option<(&str, Vec<(Cmp, &str)>)> {
    const OPS: [(&str, Cmp); 8] = [
        (" is not ", Cmp::IsNot),
        (" is ", Cmp::Is),
        ("==", Cmp::Eq),
        ("!=", Cmp::Ne),
        ("<=", Cmp::Le),
        (">=", Cmp::Ge),
        ("<", Cmp::Lt),
        (">", Cmp::Gt),
    ];
    let top = top_level_code(expr);
    let mut found = Vec::new();
    let mut at = 0;
    while at < expr.len() {
        let op = OPS.iter().find(|(text, _)| {
            expr[at..].starts_with(text) && (at..at + text.len()).all(|i| top[i])
        });
        match op {
            Some((text, op)) => {
                found.push((at, text.len(), *op));
                at += text.len();
            }
            None => at += expr[at..].chars().next().map_or(1, char::len_utf8),
        }
    }
    if found.is_empty() || split_at_word(expr, " in ").len() > 1 {
        return None;
    }
    let first = &expr[..found[0].0];
    let rest = found
        .iter()
        .enumerate()
        .map(|(k, &(at, len, op))| {
            let end = found.get(k + 1).map_or(expr.len(), |next| next.0);
            (op, &expr[at + len..end])
        })
        .collect();
    Some((first, rest))
}

/// For each byte of `expr`: whether it is code outside brackets and strings.
fn top_level_code(expr: &str) -> Vec<bool> {
    let mut top = vec![false; expr.len()];
    for ch in chars(expr) {
        if ch.kind == Kind::Code && ch.depth == 0 {
            top[ch.at..ch.at + ch.c.len_utf8()].fill(true);
        }
    }
    top
}

/// `expr` before and after its first top-level occurrence of `word`.
pub(super) fn split_once_at_word<'e>(expr: &'e str, word: &str) -> Option<(&'e str, &'e str)> {
    let parts = split_at_word(expr, word);
    let first = parts.first()?;
    (parts.len() > 1).then(|| (*first, &expr[first.len() + word.len()..]))
}

/// The parts of `expr` between its top-level occurrences of `word` (` and `).
pub fn split_at_word<'e>(expr: &'e str, word: &str) -> Vec<&'e str> {
    let top = top_level_code(expr);
    let mut parts = Vec::new();
    let (mut start, mut at) = (0, 0);
    while let Some(found) = expr[at..].find(word) {
        let found = at + found;
        if (found..found + word.len()).all(|i| top[i]) {
            parts.push(&expr[start..found]);
            start = found + word.len();
        }
        at = found + word.len();
    }
    parts.push(&expr[start..]);
    parts
}

/// `text` without parentheses that enclose all of it.
fn unparenthesized(text: &str) -> &str {
    match text.strip_prefix('(') {
        Some(inner) if closes_at_end(inner) => unparenthesized(inner[..inner.len() - 1].trim()),
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn holds(expr: &str) -> Option<bool> {
        let shown = |name: &str| {
            let repr = match name {
                "n" => "7",
                "lo" => "2",
                "hi" => "5",
                "s" => "'done'",
                "none" => "None",
                "xs" => "[1, 2]",
                "found" => "False",
                "f" => "1.5",
                "t" => "True",
                _ => return None,
            };
            Some(repr.to_string())
        };
        truth(
            expr,
            &Scope {
                value_of: &shown,
                builtin: &|_| true,
            },
        )
    }

    #[test]
    fn comparisons_of_whole_numbers() {
        assert_eq!(holds("n != 1"), Some(true));
        assert_eq!(holds("n % 2 == 0"), Some(false));
        assert_eq!(holds("lo <= hi"), Some(true));
        assert_eq!(holds("0 <= lo < hi <= 4"), Some(false));
        assert_eq!(holds("(lo + hi) // 2 > 3"), Some(false));
    }

    #[test]
    fn none_strings_and_truth() {
        assert_eq!(holds("none is None"), Some(true));
        assert_eq!(holds("s is not None"), Some(true));
        assert_eq!(holds("n is None"), Some(false));
        assert_eq!(holds("f == ''"), Some(false));
        assert_eq!(holds("none != f"), Some(true));
        assert_eq!(holds("None is not lo"), Some(true));
        assert_eq!(holds("s == 'done'"), Some(true));
        assert_eq!(holds("s != \"done\""), Some(false));
        assert_eq!(holds("s[0] == 'd' and xs[1] > xs[0]"), Some(true));
        assert_eq!(holds("s == n"), Some(false), "a string equals no number");
        assert_eq!(holds("xs"), Some(true));
        assert_eq!(holds("not found"), Some(true));
    }

    #[test]
    fn and_or_stop_where_python_does() {
        assert_eq!(holds("lo < hi and not found"), Some(true));
        // `g(n)` is never run: the first part settles it.
        assert_eq!(holds("found and g(n)"), Some(false));
        assert_eq!(holds("n > 1 or g(n)"), Some(true));
        assert_eq!(holds("n > 1 and g(n)"), None);
        assert_eq!(holds("found or n if n < 0 else not n"), Some(false));
    }

    #[test]
    fn booleans_only_of_comparisons() {
        let shown = |name: &str| (name == "n").then(|| "7".to_string());
        let scope = Scope {
            value_of: &shown,
            builtin: &|_| true,
        };
        assert_eq!(boolean("n > 1", &scope), Some(true));
        assert_eq!(boolean("not n", &scope), Some(false));
        assert_eq!(boolean("n", &scope), None, "the value is 7, not a bool");
        assert_eq!(boolean("n > 1 and n", &scope), None, "the value is 7");
    }

    #[test]
    fn membership_and_the_order_of_strings_and_sequences() {
        assert_eq!(holds("n in xs"), Some(false));
        assert_eq!(holds("2 in xs and 'on' in s"), Some(true));
        assert_eq!(holds("'x' not in s"), Some(true));
        assert_eq!(holds("s in ('done', 'x')"), Some(true));
        assert_eq!(holds("s < 'e'"), Some(true));
        assert_eq!(holds("xs == [1, 2]"), Some(true));
        assert_eq!(holds("(lo, s) < (lo, 'a')"), Some(false));
        assert_eq!(holds("not n in xs"), Some(true));
        assert_eq!(holds("f < 2 and f != 1"), Some(true));
    }

    #[test]
    fn not_what_could_run_code_or_what_reprs_do_not_settle() {
        for expr in [
            "g(n) > 1",
            "t == 1",
            "xs == (1, 2)",
            "f in xs",
            "n in [1.0]",
            "unknown > 1",
            "n is 7",
            "s == 'a, b' and",
        ] {
            assert_eq!(holds(expr), None, "{expr}");
        }
        assert_eq!(
            holds("s == 'a == b'"),
            Some(false),
            "an operator in a string"
        );
    }
}
