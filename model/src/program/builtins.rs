//! Calls of Python's builtins on values the state settles, where the result is
//! certain and no code of the program runs: `sum`, `min`, `max` and `sorted` (with
//! `key=` a lambda or a builtin, `default=`, `reverse=`), `any`, `all`, `divmod`,
//! `ord`, `chr`, `int`, `round` and `bool` of whole numbers, `tuple`, `dict`, and `str`
//! of a container (its repr). Values are compared only where their reprs settle the
//! order: whole numbers, strings without escapes, and tuples or lists of those.

use super::arithmetic::{self, Number};
use super::known::{self, Scope};
use super::{conditions, iteration, lexer};
use crate::repr::{Kind, Repr};
use std::cmp::Ordering;

/// The builtins worked out here.
pub const BUILTINS: [&str; 14] = [
    "sum", "min", "max", "sorted", "any", "all", "divmod", "ord", "chr", "int", "round", "bool",
    "tuple", "dict",
];

/// The repr of `text`'s value where it is a call of one of [`BUILTINS`] (or `str` of a
/// container) that the values it reads settle.
pub fn call(text: &str, scope: &Scope) -> Option<String> {
    let (function, args) = split_call(text)?;
    if !(scope.builtin)(function) {
        return None;
    }
    let (positional, keywords) = arguments(&args)?;
    let keyword = |name: &str| keywords.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
    if keywords
        .iter()
        .any(|(k, _)| !["key", "default", "reverse"].contains(k))
    {
        return None;
    }
    let value = |text: &str| known::repr_of(text, scope);
    let whole = |text: &str| value(text)?.parse::<i128>().ok();
    match (function, positional.as_slice()) {
        ("sum", [items]) | ("sum", [items, _]) if keywords.is_empty() => {
            let start = match positional.get(1) {
                Some(start) => whole(start)?,
                None => 0,
            };
            iteration::items(items, scope)?
                .iter()
                .try_fold(start, |total, item| total.checked_add(item.parse().ok()?))
                .map(|total| total.to_string())
        }
        ("min" | "max", [_, ..]) => {
            let candidates = match positional.as_slice() {
                [items] => iteration::items(items, scope)?,
                several if keyword("default").is_none() => {
                    several.iter().map(|a| value(a)).collect::<Option<_>>()?
                }
                _ => return None,
            };
            let keys = keys_of(&candidates, keyword("key"), scope)?;
            let wanted = if function == "min" {
                Ordering::Less
            } else {
                Ordering::Greater
            };
            // The first of the best, as Python keeps it.
            let mut best: Option<usize> = None;
            for k in 0..candidates.len() {
                match best {
                    Some(b) if order(&keys[k], &keys[b])? != wanted => {}
                    _ => best = Some(k),
                }
            }
            match best {
                Some(b) => Some(candidates[b].clone()),
                None => value(keyword("default")?),
            }
        }
        ("sorted", [items]) => {
            let items = iteration::items(items, scope)?;
            let keys = keys_of(&items, keyword("key"), scope)?;
            let reverse = match keyword("reverse") {
                Some(flag) => conditions::truth(flag, scope)?,
                None => false,
            };
            let mut indices: Vec<usize> = (0..items.len()).collect();
            // Any pair the reprs cannot order makes the whole sort unknown.
            let mut unordered = false;
            indices.sort_by(|&a, &b| {
                let ordering = order(&keys[a], &keys[b]).unwrap_or_else(|| {
                    unordered = true;
                    Ordering::Equal
                });
                // Python's reverse keeps equal items in their order, as this does.
                if reverse {
                    ordering.reverse()
                } else {
                    ordering
                }
            });
            let sorted: Vec<String> = indices.into_iter().map(|k| items[k].clone()).collect();
            (!unordered).then(|| known::bounded(known::list_repr(&sorted)))?
        }
        ("any" | "all", [items]) if keywords.is_empty() => {
            let truths: Vec<bool> = iteration::items(items, scope)?
                .iter()
                .map(|item| conditions::truth_of_repr(item))
                .collect::<Option<_>>()?;
            Some(known::python_bool(match function {
                "any" => truths.contains(&true),
                _ => !truths.contains(&false),
            }))
        }
        ("divmod", [a, b]) if keywords.is_empty() => {
            let (a, b) = (whole(a)?, whole(b)?);
            let quotient = super::arithmetic::floor_div(a, b)?;
            let remainder = super::arithmetic::floor_mod(a, b)?;
            Some(format!("({quotient}, {remainder})"))
        }
        ("ord", [c]) if keywords.is_empty() => {
            let text = known::unescaped(&value(c)?)?.to_string();
            let mut chars = text.chars();
            let first = chars.next()?;
            chars.next().is_none().then(|| (first as u32).to_string())
        }
        ("chr", [code]) if keywords.is_empty() => {
            // Printable ASCII, whose repr is plain.
            let code = u8::try_from(whole(code)?)
                .ok()
                .filter(|c| (32..127).contains(c))?;
            Some(crate::entry::python_str_repr(&(code as char).to_string()))
        }
        ("int", [number]) if keywords.is_empty() => integer_of(&value(number)?),
        ("float", [number]) if keywords.is_empty() => {
            let repr = value(number)?;
            let x = match Number::of_repr(&repr) {
                Some(number) => number.float()?,
                // Python reads a string's text as a float literal (no `inf` here).
                None => {
                    let text = known::unescaped(&repr)?.trim_matches(' ');
                    let literal = text
                        .bytes()
                        .all(|c| c.is_ascii_digit() || b".e+-".contains(&c));
                    literal.then(|| text.parse::<f64>().ok())??
                }
            };
            arithmetic::float_repr(x)
        }
        ("round", [number]) if keywords.is_empty() => match Number::of_repr(&value(number)?)? {
            Number::Int(n) => Some(n.to_string()),
            // Ties go to the even neighbour, as Python's do.
            Number::Float(x) => whole_float(x.round_ties_even()),
        },
        ("round", [number, digits]) if keywords.is_empty() => {
            let digits = usize::try_from(whole(digits)?).ok().filter(|d| *d <= 15)?;
            match Number::of_repr(&value(number)?)? {
                // A whole number rounded to whole digits or more stays itself.
                Number::Int(n) => Some(n.to_string()),
                // Rust's fixed-point formatting rounds the float's exact value half to
                // even, as Python's `round` does; read back, it is Python's result.
                Number::Float(x) => arithmetic::float_repr(format!("{x:.digits$}").parse().ok()?),
            }
        }
        ("bool", [x]) if keywords.is_empty() => {
            conditions::truth_of_repr(&value(x)?).map(known::python_bool)
        }
        ("tuple", [items]) if keywords.is_empty() => {
            known::bounded(known::tuple_repr(iteration::items(items, scope)?))
        }
        ("dict", [pairs]) if keywords.is_empty() => {
            let pairs = match Repr::parse(&value(pairs).unwrap_or_default()).kind {
                Kind::Dict(entries) => entries.into_iter().map(|(k, v)| (k.text, v.text)).collect(),
                _ => iteration::items(pairs, scope)?
                    .iter()
                    .map(|pair| match Repr::parse(pair).kind {
                        Kind::Tuple(kv) | Kind::List(kv) if kv.len() == 2 => {
                            Some((kv[0].text.clone(), kv[1].text.clone()))
                        }
                        _ => None,
                    })
                    .collect::<Option<_>>()?,
            };
            known::bounded(dict_repr(pairs)?)
        }
        ("isinstance", [x, types]) if keywords.is_empty() => {
            let kinds = kinds_of(&value(x)?)?;
            let types = types.trim();
            let names = match types.strip_prefix('(').and_then(|t| t.strip_suffix(')')) {
                Some(inner) => lexer::split_top(inner),
                None => vec![types.to_string()],
            };
            let mut found = false;
            for name in &names {
                let known_type = TYPES.contains(&name.as_str()) && (scope.builtin)(name);
                if !known_type {
                    return None;
                }
                found |= kinds.contains(&name.as_str());
            }
            Some(known::python_bool(found))
        }
        ("str", [x]) if keywords.is_empty() => {
            // A builtin container's str is its repr.
            let repr = value(x)?;
            let container = matches!(
                Repr::parse(&repr).kind,
                Kind::List(_) | Kind::Tuple(_) | Kind::Dict(_)
            );
            container.then(|| known::bounded(crate::entry::python_str_repr(&repr)))?
        }
        _ => None,
    }
}

/// The builtin types `isinstance` is worked out for.
pub const TYPES: [&str; 8] = [
    "int", "float", "str", "bool", "list", "tuple", "dict", "set",
];

/// The builtin types (of [`TYPES`]) a value whose repr this is belongs to; `None`
/// where the repr does not say (an object, which may subclass any of them).
fn kinds_of(repr: &str) -> Option<&'static [&'static str]> {
    Some(match repr {
        "True" | "False" => &["bool", "int"],
        r if r.starts_with(['\'', '"']) => &["str"],
        "set()" => &["set"],
        r => match (Number::of_repr(r), Repr::parse(r).kind) {
            (Some(Number::Int(_)), _) => &["int"],
            (Some(Number::Float(_)), _) => &["float"],
            (_, Kind::List(_)) => &["list"],
            (_, Kind::Tuple(_)) => &["tuple"],
            (_, Kind::Dict(_)) => &["dict"],
            (_, Kind::Set(_)) => &["set"],
            _ => return None,
        },
    })
}

/// `SEQ.count(V)` or `SEQ.index(V)` of a settled list or tuple whose items, and V,
/// are whole numbers or strings (their equality is their reprs').
pub fn sequence_method(text: &str, scope: &Scope) -> Option<String> {
    let inner = text.trim().strip_suffix(')')?;
    let (base, method, needle) = ["count", "index"].iter().find_map(|m| {
        let (base, needle) = inner.rsplit_once(&format!(".{m}("))?;
        let closes = lexer::closes_at_end(&text.trim()[base.len() + m.len() + 2..]);
        (closes && known::primary(base)).then_some((base, *m, needle))
    })?;
    let (Kind::List(items) | Kind::Tuple(items)) = Repr::parse(&known::repr_of(base, scope)?).kind
    else {
        return None;
    };
    let needle = known::repr_of(needle, scope)?;
    let comparable = |r: &str| r.starts_with(['\'', '"']) || r.parse::<i128>().is_ok();
    if !comparable(&needle) || !items.iter().all(|i| comparable(&i.text)) {
        return None;
    }
    let mut equal = items.iter().map(|i| i.text == needle);
    match method {
        "count" => Some(equal.filter(|e| *e).count().to_string()),
        _ => equal.position(|e| e).map(|at| at.to_string()),
    }
}

/// `NAME(ARGS)` as the name and the arguments' texts, the call closing at the end.
pub fn split_call(text: &str) -> Option<(&str, Vec<String>)> {
    let text = text.trim();
    let open = text.find('(')?;
    let name = &text[..open];
    let closes = lexer::closes_at_end(&text[open + 1..]);
    (super::layout::is_name(name) && closes)
        .then(|| (name, lexer::split_top(&text[open + 1..text.len() - 1])))
}

/// A call's keyword arguments: name and value texts.
type Keywords<'a> = Vec<(&'a str, &'a str)>;

/// Positional arguments and `name=value` keywords; `None` for `*args` or `**kw`.
fn arguments(args: &[String]) -> Option<(Vec<&str>, Keywords<'_>)> {
    let (mut positional, mut keywords) = (Vec::new(), Vec::new());
    for arg in args {
        if arg.starts_with('*') {
            return None;
        }
        let keyword = arg
            .split_once('=')
            .filter(|(name, value)| super::layout::is_name(name.trim()) && !value.starts_with('='));
        match keyword {
            Some((name, value)) => keywords.push((name.trim(), value.trim())),
            None if keywords.is_empty() => positional.push(arg.as_str()),
            None => return None,
        }
    }
    Some((positional, keywords))
}

/// What each item sorts by: itself, or `key` applied to it (a one-parameter lambda
/// whose body the item settles, or a builtin such as `len` or `abs`).
fn keys_of(items: &[String], key: Option<&str>, scope: &Scope) -> Option<Vec<String>> {
    let Some(key) = key.filter(|k| *k != "None") else {
        return Some(items.to_vec());
    };
    match key.strip_prefix("lambda ") {
        Some(rest) => {
            let (parameter, body) = rest.split_once(':')?;
            let parameter = parameter.trim();
            if !super::layout::is_name(parameter) {
                return None;
            }
            items
                .iter()
                .map(|item| {
                    let bound = [(parameter.to_string(), item.clone())];
                    iteration::with_bound(scope, &bound, |inner| known::repr_of(body, inner))
                })
                .collect()
        }
        None if super::layout::is_name(key) && (scope.builtin)(key) => items
            .iter()
            .map(|item| known::repr_of(&format!("{key}({item})"), scope))
            .collect(),
        None => None,
    }
}

/// How two values compare in Python, where their reprs settle it: numbers (a whole
/// number beside a float within 2^53), strings without escapes, and tuples or lists of those (item by item). `None` for
/// anything else (Python may raise, or run a `__lt__`).
pub fn order(a: &str, b: &str) -> Option<Ordering> {
    match (Number::of_repr(a), Number::of_repr(b)) {
        (Some(Number::Int(a)), Some(Number::Int(b))) => return Some(a.cmp(&b)),
        (Some(a), Some(b)) => return a.float()?.partial_cmp(&b.float()?),
        _ => {}
    }
    if let (Some(a), Some(b)) = (known::unescaped(a), known::unescaped(b)) {
        return Some(a.cmp(b));
    }
    let (a, b) = (Repr::parse(a).kind, Repr::parse(b).kind);
    let (a, b) = match (a, b) {
        (Kind::Tuple(a), Kind::Tuple(b)) | (Kind::List(a), Kind::List(b)) => (a, b),
        _ => return None,
    };
    for (x, y) in a.iter().zip(&b) {
        match order(&x.text, &y.text)? {
            Ordering::Equal => {}
            unequal => return Some(unequal),
        }
    }
    Some(a.len().cmp(&b.len()))
}

/// `int(X)` of a number, a bool or a string of decimal digits (Python's own
/// reading: sign, underscores between digits, spaces around).
fn integer_of(repr: &str) -> Option<String> {
    match repr {
        "True" => return Some("1".into()),
        "False" => return Some("0".into()),
        _ => {}
    }
    match Number::of_repr(repr) {
        Some(Number::Int(n)) => return Some(n.to_string()),
        // Towards zero.
        Some(Number::Float(x)) => return whole_float(x.trunc()),
        None => {}
    }
    let text = known::unescaped(repr)?.trim_matches(' ');
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    let well_formed = !digits.is_empty()
        && !digits.starts_with('_')
        && !digits.ends_with('_')
        && !digits.contains("__")
        && digits.chars().all(|c| c.is_ascii_digit() || c == '_');
    well_formed
        .then(|| text.replace('_', "").parse::<i128>().ok())?
        .map(|n| n.to_string())
}

/// The repr of a float with no fraction as an `int`, where an `i128` holds it.
fn whole_float(x: f64) -> Option<String> {
    (x.abs() < 1e38).then(|| (x as i128).to_string())
}

/// A dict's repr from its entries in order, a later duplicate key replacing the
/// value where the key first stood. `None` unless every key is a whole number or
/// every key a string (reprs cannot tell `1 == True == 1.0`).
pub fn dict_repr(pairs: Vec<(String, String)>) -> Option<String> {
    let all_ints = pairs.iter().all(|(k, _)| k.parse::<i128>().is_ok());
    let all_strs = pairs.iter().all(|(k, _)| k.starts_with(['\'', '"']));
    if !(all_ints || all_strs) {
        return None;
    }
    let mut entries: Vec<(String, String)> = Vec::new();
    for (key, value) in pairs {
        match entries.iter_mut().find(|(k, _)| *k == key) {
            Some(entry) => entry.1 = value,
            None => entries.push((key, value)),
        }
    }
    let shown: Vec<String> = entries.iter().map(|(k, v)| format!("{k}: {v}")).collect();
    Some(format!("{{{}}}", shown.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known(text: &str) -> Option<String> {
        let shown = |name: &str| match name {
            "xs" => Some("[3, 1, 2]".to_string()),
            "ws" => Some("['pear', 'fig', 'apple']".to_string()),
            "d" => Some("{'b': 2, 'a': 1}".to_string()),
            "f" => Some("<function f at 0x1>".to_string()),
            _ => None,
        };
        known::repr_of(
            text,
            &Scope {
                value_of: &shown,
                builtin: &|name| name != "f",
            },
        )
    }

    #[test]
    fn sums_and_extremes() {
        assert_eq!(known("sum(xs)").as_deref(), Some("6"));
        assert_eq!(known("sum(xs, 10) + 1").as_deref(), Some("17"));
        assert_eq!(known("max(xs)").as_deref(), Some("3"));
        assert_eq!(known("min(4, 2, 9)").as_deref(), Some("2"));
        assert_eq!(known("min([], default=0)").as_deref(), Some("0"));
        assert_eq!(known("max(ws, key=len)").as_deref(), Some("'apple'"));
        assert_eq!(known("min(ws)").as_deref(), Some("'apple'"));
        assert_eq!(known("max(['ab', 'cd'], key=len)").as_deref(), Some("'ab'"));
        for unsettled in ["max([])", "sum(ws)", "min(xs, key=f)", "max([1, 'a'])"] {
            assert_eq!(known(unsettled), None, "{unsettled}");
        }
    }

    #[test]
    fn sorting_is_stable_and_keyed() {
        assert_eq!(known("sorted(xs)").as_deref(), Some("[1, 2, 3]"));
        assert_eq!(
            known("sorted(xs, reverse=True)").as_deref(),
            Some("[3, 2, 1]")
        );
        assert_eq!(
            known("sorted(ws, key=len)").as_deref(),
            Some("['fig', 'pear', 'apple']")
        );
        assert_eq!(
            known("sorted([5, 4, 3], key=lambda v: (v % 3, v))").as_deref(),
            Some("[3, 4, 5]")
        );
        assert_eq!(
            known("sorted(['bb', 'a', 'cc'], key=len, reverse=True)").as_deref(),
            Some("['bb', 'cc', 'a']")
        );
        assert_eq!(
            known("sorted(d.items(), key=lambda kv: kv[1])").as_deref(),
            Some("[('a', 1), ('b', 2)]")
        );
        assert_eq!(known("sorted(d)").as_deref(), Some("['a', 'b']"));
        assert_eq!(known("sorted([None, 1])"), None);
    }

    #[test]
    fn small_conversions() {
        assert_eq!(known("divmod(-7, 2)").as_deref(), Some("(-4, 1)"));
        assert_eq!(known("ord('a') + 1").as_deref(), Some("98"));
        assert_eq!(
            known("chr((ord('y') - 97 + 3) % 26 + 97)").as_deref(),
            Some("'b'")
        );
        assert_eq!(known("int(' -1_0 ')").as_deref(), Some("-10"));
        assert_eq!(known("int(True)").as_deref(), Some("1"));
        assert_eq!(known("round(7, 2)").as_deref(), Some("7"));
        assert_eq!(known("tuple(xs)").as_deref(), Some("(3, 1, 2)"));
        assert_eq!(known("tuple('a')").as_deref(), Some("('a',)"));
        assert_eq!(
            known("dict(zip(['a', 'b', 'a'], [1, 2, 3]))").as_deref(),
            Some("{'a': 3, 'b': 2}")
        );
        assert_eq!(known("str(xs)").as_deref(), Some("'[3, 1, 2]'"));
        assert_eq!(known("any(v > 2 for v in xs)").as_deref(), Some("True"));
        assert_eq!(known("isinstance(xs, list)").as_deref(), Some("True"));
        assert_eq!(
            known("isinstance(True, (float, int))").as_deref(),
            Some("True")
        );
        assert_eq!(known("isinstance(2, float)").as_deref(), Some("False"));
        assert_eq!(known("[v * 3 for v in xs].count(9)").as_deref(), Some("1"));
        assert_eq!(known("ws.index('fig') + 1").as_deref(), Some("2"));
        assert_eq!(
            known("isinstance(f, int)"),
            None,
            "an object may subclass int"
        );
        assert_eq!(known("xs.index(7)"), None, "Python raises");
        assert_eq!(known("all(xs)").as_deref(), Some("True"));
        for unsettled in [
            "int('3.5')",
            "int('')",
            "chr(10)",
            "ord('ab')",
            "divmod(1, 0)",
        ] {
            assert_eq!(known(unsettled), None, "{unsettled}");
        }
    }
}
