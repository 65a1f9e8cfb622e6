//! What an iterable yields, and the lists, tuples and dicts that displays and
//! comprehensions build, where the values they read settle them: `range(n + 1)`,
//! `enumerate(xs)`, `zip(a, b)`, `reversed(s)`, `d.items()`, `[*xs, 0]`,
//! `(a, b)`, `{k: n}`, `[[0] * n for _ in range(m)]`,
//! `{k: v for k, v in d.items() if v > 3}`, and a generator passed to a call
//! (`any(v > 4 for v in xs)`). A comprehension's variables are its own, as in
//! Python 3; the rest of its names are the scope's.

use super::conditions::{split_at_word, split_once_at_word};
use super::known::{self, Scope};
use super::{builtins, lexer};
use crate::repr::{Kind, Repr};

/// The builtins iterated over here.
pub const BUILTINS: [&str; 4] = ["range", "enumerate", "zip", "reversed"];

/// The most items a comprehension is worked out for (the tracer shows few more).
const MOST_ITEMS: usize = 1000;

/// The reprs of what iterating over `text` yields, in order.
pub fn items(text: &str, scope: &Scope) -> Option<Vec<String>> {
    let text = text.trim();
    let bare = text
        .strip_prefix('(')
        .filter(|inner| lexer::closes_at_end(inner))
        .map(|inner| &inner[..inner.len() - 1])
        .filter(|inner| split_once_at_word(inner, " for ").is_some());
    if let Some(generator) = bare.or_else(|| split_once_at_word(text, " for ").map(|_| text)) {
        return comprehension_values(generator, scope);
    }
    if let Some(found) = builtin_iterable(text, scope) {
        return found;
    }
    for (view, part) in [
        (".items()", None),
        (".keys()", Some(0)),
        (".values()", Some(1)),
    ] {
        let Some(base) = text.strip_suffix(view) else {
            continue;
        };
        let pairs = crate::entry::dict_items(&known::repr_of(base, scope)?)?;
        let items = pairs.into_iter().map(|(key, value)| match part {
            None => format!("({key}, {value})"),
            Some(0) => key,
            Some(_) => value,
        });
        return Some(items.collect());
    }
    crate::entry::elements(&known::repr_of(text, scope)?)
}

/// `range`, `enumerate`, `zip` or `reversed` of settled values (`Some(None)` where
/// the call is one of them but unsettled); `None` for any other text.
fn builtin_iterable(text: &str, scope: &Scope) -> Option<Option<Vec<String>>> {
    let (function, args) = builtins::split_call(text)?;
    let known_here = BUILTINS.contains(&function);
    if !known_here || !(scope.builtin)(function) {
        return None;
    }
    let whole = |text: &str| known::repr_of(text, scope)?.parse::<i128>().ok();
    Some((|| match (function, args.as_slice()) {
        ("range", [_, ..]) if args.len() <= 3 => {
            let bounds: Vec<String> = args
                .iter()
                .map(|a| whole(a).map(|n| n.to_string()))
                .collect::<Option<_>>()?;
            crate::entry::elements(&format!("range({})", bounds.join(", ")))
        }
        ("enumerate", [iterable, rest @ ..]) if rest.len() <= 1 => {
            let start = match rest.first() {
                Some(start) => whole(start.trim_start_matches("start="))?,
                None => 0,
            };
            let numbered = items(iterable, scope)?
                .into_iter()
                .zip(start..)
                .map(|(item, k)| format!("({k}, {item})"));
            Some(numbered.collect())
        }
        ("zip", [_, ..]) => {
            let each: Vec<Vec<String>> = args
                .iter()
                .map(|a| items(a, scope))
                .collect::<Option<_>>()?;
            let length = each.iter().map(Vec::len).min()?;
            let tuples = (0..length).map(|k| {
                let parts: Vec<String> = each.iter().map(|items| items[k].clone()).collect();
                known::tuple_repr(parts)
            });
            Some(tuples.collect())
        }
        ("reversed", [sequence]) => {
            let mut items = items(sequence, scope)?;
            items.reverse();
            Some(items)
        }
        _ => None,
    })())
}

/// `[...]`, `(...)` or `{...}`: a display of items whose values are settled (with
/// `*xs` and `**d` unpacked), or a list or dict comprehension.
pub fn display(text: &str, scope: &Scope) -> Option<String> {
    let text = text.trim();
    let open = text.chars().next()?;
    if !"([{".contains(open) || !lexer::closes_at_end(&text[1..]) {
        return None;
    }
    let inner = &text[1..text.len() - 1];
    let comprehension = split_once_at_word(inner, " for ").is_some();
    let repr = match open {
        '[' if comprehension => known::list_repr(&comprehension_values(inner, scope)?),
        '[' => known::list_repr(&starred_items(inner, scope)?),
        // A parenthesized generator is an object with an address.
        '(' if comprehension => return None,
        '(' if lexer::top_commas(inner).next().is_none() => known::repr_of(inner, scope)?,
        '(' => known::tuple_repr(starred_items(inner, scope)?),
        _ => builtins::dict_repr(dict_entries(inner, comprehension, scope)?)?,
    };
    known::bounded(repr)
}

/// The items of a display's comma-separated parts, `*X` spread.
fn starred_items(inner: &str, scope: &Scope) -> Option<Vec<String>> {
    let mut all = Vec::new();
    for part in lexer::split_top(inner) {
        match part.strip_prefix('*') {
            Some(spread) if !spread.starts_with('*') => all.extend(items(spread, scope)?),
            _ => all.push(known::repr_of(&part, scope)?),
        }
    }
    Some(all)
}

/// A dict display's or dict comprehension's entries (key and value reprs); `None`
/// for a set.
fn dict_entries(inner: &str, comprehension: bool, scope: &Scope) -> Option<Vec<(String, String)>> {
    let pair = |text: &str, scope: &Scope| {
        let colon = top_colon(text)?;
        let key = known::repr_of(&text[..colon], scope)?;
        Some((key, known::repr_of(&text[colon + 1..], scope)?))
    };
    if comprehension {
        let mut clauses = split_at_word(inner, " for ");
        let entry = clauses.remove(0);
        top_colon(entry)?;
        return each_binding(&clauses, scope)?
            .iter()
            .map(|bound| with_bound(scope, bound, |inner| pair(entry, inner)))
            .collect();
    }
    let mut entries = Vec::new();
    for part in lexer::split_top(inner) {
        match part.strip_prefix("**") {
            Some(spread) => {
                entries.extend(crate::entry::dict_items(&known::repr_of(spread, scope)?)?)
            }
            None => entries.push(pair(&part, scope)?),
        }
    }
    Some(entries)
}

/// Where `text` has a colon that is code outside brackets.
fn top_colon(text: &str) -> Option<usize> {
    lexer::chars(text)
        .find(|ch| ch.kind == lexer::Kind::Code && ch.depth == 0 && ch.c == ':')
        .map(|ch| ch.at)
}

/// `EXPR for T in I [if C]... [for ...]`: EXPR's value for each binding of the
/// clauses, in order.
fn comprehension_values(text: &str, scope: &Scope) -> Option<Vec<String>> {
    let mut clauses = split_at_word(text, " for ");
    let expr = clauses.remove(0);
    each_binding(&clauses, scope)?
        .iter()
        .map(|bound| with_bound(scope, bound, |inner| known::repr_of(expr, inner)))
        .collect()
}

type Bindings = Vec<(String, String)>;

/// The names the `for` clauses (`T in I [if C]...`) bind, for each item that passes
/// their conditions, in the order Python runs them.
fn each_binding(clauses: &[&str], scope: &Scope) -> Option<Vec<Bindings>> {
    fn walk(
        clauses: &[&str],
        scope: &Scope,
        bound: &mut Bindings,
        out: &mut Vec<Bindings>,
    ) -> Option<()> {
        let Some((clause, rest)) = clauses.split_first() else {
            out.push(bound.clone());
            return (out.len() <= MOST_ITEMS).then_some(());
        };
        let (target, after) = split_once_at_word(clause, " in ")?;
        let mut parts = split_at_word(after, " if ");
        let iterable = parts.remove(0);
        for item in with_bound(scope, bound, |inner| items(iterable, inner))? {
            let mark = bound.len();
            bound.extend(unpacked(target, &item)?);
            // The conditions run in turn, each only where those before it held.
            let mut passes = true;
            for condition in &parts {
                passes = with_bound(scope, bound, |inner| {
                    super::conditions::truth(condition, inner)
                })?;
                if !passes {
                    break;
                }
            }
            if passes {
                walk(rest, scope, bound, out)?;
            }
            bound.truncate(mark);
        }
        Some(())
    }
    let mut out = Vec::new();
    walk(clauses, scope, &mut Vec::new(), &mut out)?;
    Some(out)
}

/// The names `target` binds to `item` (a name, or names unpacking a tuple or list).
fn unpacked(target: &str, item: &str) -> Option<Bindings> {
    let target = target.trim();
    let inner = target
        .strip_prefix(['(', '['])
        .filter(|inner| lexer::closes_at_end(inner))
        .map(|inner| &inner[..inner.len() - 1]);
    let names = lexer::split_top(inner.unwrap_or(target));
    if inner.is_none() && names.len() == 1 {
        return super::layout::is_name(target)
            .then(|| vec![(target.to_string(), item.to_string())]);
    }
    let (Kind::Tuple(parts) | Kind::List(parts)) = Repr::parse(item).kind else {
        return None;
    };
    if parts.len() != names.len() {
        return None;
    }
    let mut bound = Vec::new();
    for (name, part) in names.iter().zip(parts) {
        bound.extend(unpacked(name, &part.text)?);
    }
    Some(bound)
}

/// `f` given `scope` with `bound`'s names (the latest binding of a name first)
/// hiding the scope's, and hiding builtins of those names.
pub fn with_bound<R>(scope: &Scope, bound: &[(String, String)], f: impl FnOnce(&Scope) -> R) -> R {
    let value_of = |name: &str| {
        let local = bound.iter().rev().find(|(n, _)| n == name);
        local
            .map(|(_, value)| Some(value.clone()))
            .unwrap_or_else(|| (scope.value_of)(name))
    };
    let builtin = |name: &str| !bound.iter().any(|(n, _)| n == name) && (scope.builtin)(name);
    f(&Scope {
        value_of: &value_of,
        builtin: &builtin,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known(text: &str) -> Option<String> {
        let shown = |name: &str| match name {
            "n" => Some("2".to_string()),
            "xs" => Some("[13, -2, 5]".to_string()),
            "d" => Some("{'a': 1, 'bb': 5}".to_string()),
            "w" => Some("'hi'".to_string()),
            _ => None,
        };
        known::repr_of(
            text,
            &Scope {
                value_of: &shown,
                builtin: &|_| true,
            },
        )
    }

    #[test]
    fn displays_of_settled_values() {
        assert_eq!(known("[n, w, n * 3]").as_deref(), Some("[2, 'hi', 6]"));
        assert_eq!(known("[*xs, 0]").as_deref(), Some("[13, -2, 5, 0]"));
        assert_eq!(known("(n, (w,))").as_deref(), Some("(2, ('hi',))"));
        assert_eq!(known("(n + 1)").as_deref(), Some("3"));
        assert_eq!(
            known("{w: n, 'x': 1, w: 0}").as_deref(),
            Some("{'hi': 0, 'x': 1}")
        );
        assert_eq!(known("{**d, 'a': 9}").as_deref(), Some("{'a': 9, 'bb': 5}"));
        assert_eq!(known("{n, 1}").as_deref(), Some("{1, 2}"));
        for unsettled in ["[q]", "(v for v in xs)", "{n: 2, 'a': 3}"] {
            assert_eq!(known(unsettled), None, "{unsettled}");
        }
    }

    #[test]
    fn comprehensions_bind_their_own_names() {
        assert_eq!(
            known("[v * 3 for v in xs]").as_deref(),
            Some("[39, -6, 15]")
        );
        assert_eq!(
            known("[[0] * (n + 1) for _ in range(n + 1)]").as_deref(),
            Some("[[0, 0, 0], [0, 0, 0], [0, 0, 0]]")
        );
        assert_eq!(
            known("[v for v in [v for v in [3, 4] if v % 2 == 0] if v > 1]").as_deref(),
            Some("[4]")
        );
        assert_eq!(
            known("{k: v for k, v in d.items() if v > 3}").as_deref(),
            Some("{'bb': 5}")
        );
        assert_eq!(
            known("{w: len(w) for w in ['a', 'bb']}").as_deref(),
            Some("{'a': 1, 'bb': 2}")
        );
        assert_eq!(
            known("[(i, c) for i, c in enumerate(w)]").as_deref(),
            Some("[(0, 'h'), (1, 'i')]")
        );
        assert_eq!(
            known("[a + b for a, b in zip(xs, reversed(xs))]").as_deref(),
            Some("[18, -4, 18]")
        );
        assert_eq!(
            known("[x for row in [[1], [2, 3]] for x in row]").as_deref(),
            Some("[1, 2, 3]")
        );
        assert_eq!(
            known("[len(w) for w in sorted(['fig', 'go'], key=len)]").as_deref(),
            Some("[2, 3]")
        );
        assert_eq!(
            known("'+'.join(str(v) for v in sorted(xs))").as_deref(),
            Some("'-2+5+13'")
        );
        // An `if` stops at the first condition that fails: `v // 0` never runs for 13.
        assert_eq!(
            known("[v for v in xs if v < 0 if 1 // v]").as_deref(),
            Some("[-2]")
        );
        for unsettled in [
            "[f(v) for v in xs]",
            "{v for v in xs}",
            "[v for v in q]",
            "[v // 0 for v in xs]",
        ] {
            assert_eq!(known(unsettled), None, "{unsettled}");
        }
    }
}
