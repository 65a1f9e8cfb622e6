//! Which exception an expression surely raises, where every part of it that runs
//! before the failing operation is settled (see [`super::known`]) and the operation
//! is one whose failure the values decide: a division or modulo by zero, an index out
//! of range, a missing dict key, `int()` of text that is no number. Messages as
//! Python 3.11 writes them.

use super::conditions::split_at_word;
use super::known::{self, Scope};
use super::lexer;
use crate::repr::{Kind, Repr};

/// The repr of the exception evaluating `text` raises (`ZeroDivisionError('integer
/// division or modulo by zero')`), where it surely raises; `None` where it does not or
/// the values do not say.
pub fn raised_by(text: &str, scope: &Scope) -> Option<String> {
    let text = text.trim();
    if let Some(inner) = text.strip_prefix('(').filter(|i| lexer::closes_at_end(i)) {
        return raised_by(&inner[..inner.len() - 1], scope);
    }
    // Only arithmetic is split here: a condition, a comparison or a bitwise operator
    // binds looser than it and may skip a part.
    let looser = [
        " if ", " and ", " or ", "not ", " in ", " is ", "==", "!=", "<", ">", " | ", " & ", " ^ ",
        "lambda",
    ];
    if looser.iter().any(|w| split_at_word(text, w).len() > 1) {
        return None;
    }
    // Loosest first; each operator joins left to right, so the last one runs last.
    for ops in [&[" + ", " - "][..], &[" * ", " // ", " % ", " / "][..]] {
        let last = ops
            .iter()
            .filter_map(|op| {
                let parts = split_at_word(text, op);
                (parts.len() > 1)
                    .then(|| (text.len() - parts.last().unwrap().len() - op.len(), *op))
            })
            .max();
        let Some((at, op)) = last else { continue };
        let (left, right) = (&text[..at], &text[at + op.len()..]);
        let left_value = settled_or_raises(left, scope)?;
        let right_value = settled_or_raises(right, scope)?;
        let (left, right) = match (left_value, right_value) {
            (Err(raised), _) | (Ok(_), Err(raised)) => return Some(raised),
            (Ok(left), Ok(right)) => (left, right),
        };
        return division_by_zero(op, &left, &right);
    }
    if let Some(raised) = int_of_text(text, scope) {
        return Some(raised);
    }
    missing_item(text, scope)
}

/// `Ok(repr)` where `text` is settled, `Err(exception)` where it surely raises,
/// `None` where neither is known.
fn settled_or_raises(text: &str, scope: &Scope) -> Option<Result<String, String>> {
    match known::repr_of(text, scope) {
        Some(repr) => Some(Ok(repr)),
        None => raised_by(text, scope).map(Err),
    }
}

/// `A // 0`, `A % 0`, `A / 0` of numbers.
fn division_by_zero(op: &str, left: &str, right: &str) -> Option<String> {
    let number = |r: &str| {
        r.parse::<i128>()
            .map(|_| false)
            .or_else(|_| r.parse::<f64>().map(|_| true))
    };
    let (left_float, right_float) = (number(left).ok()?, number(right).ok()?);
    if right.parse::<f64>().ok()? != 0.0 || left.starts_with(['\'', '"']) {
        return None;
    }
    let message = match (op, left_float || right_float) {
        (" // ", false) => "integer division or modulo by zero",
        (" % ", false) => "integer modulo by zero",
        (" / ", false) => "division by zero",
        (" // ", true) => "float floor division by zero",
        (" % ", true) => "float modulo",
        (" / ", true) => "float division by zero",
        _ => return None,
    };
    Some(format!("ZeroDivisionError('{message}')"))
}

/// `int(TEXT)` of a string that holds no whole number.
fn int_of_text(text: &str, scope: &Scope) -> Option<String> {
    let arg = text
        .strip_prefix("int(")
        .filter(|rest| lexer::closes_at_end(rest))?;
    if !(scope.builtin)("int") {
        return None;
    }
    let repr = known::repr_of(&arg[..arg.len() - 1], scope)?;
    let value = known::unescaped(&repr)?;
    // ASCII text only (other scripts' digits count too); a whole number is spaces, a
    // sign, digits with single underscores between them, spaces.
    if !value.is_ascii() {
        return None;
    }
    let digits = value.trim().trim_start_matches(['+', '-']);
    let whole = !digits.is_empty()
        && value.trim().len() - digits.len() <= 1
        && digits
            .split('_')
            .all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()));
    if whole {
        return None;
    }
    let message = format!("invalid literal for int() with base 10: {repr}");
    Some(format!(
        "ValueError({})",
        crate::entry::python_str_repr(&message)
    ))
}

/// `BASE[INDEX]` of a list, tuple or string out of range, or of a dict without the key.
fn missing_item(text: &str, scope: &Scope) -> Option<String> {
    let inner = text.strip_suffix(']')?;
    let open = lexer::code_chars(inner)
        .filter(|&(_, c, depth)| c == '[' && depth == 0)
        .map(|(at, _, _)| at)
        .last()?;
    let (base, index) = (&inner[..open], &inner[open + 1..]);
    if base.trim().is_empty() || !lexer::closes_at_end(&text[open + 1..]) {
        return None;
    }
    let base = known::repr_of(base, scope)?;
    let index = known::repr_of(index, scope)?;
    let kind = Repr::parse(&base).kind;
    let out_of_range = |len: usize, what: &str| {
        let at = index.parse::<i128>().ok()?;
        let len = len as i128;
        (at >= len || at < -len).then(|| format!("IndexError('{what} index out of range')"))
    };
    match kind {
        Kind::List(items) => out_of_range(items.len(), "list"),
        Kind::Tuple(items) => out_of_range(items.len(), "tuple"),
        Kind::Dict(entries) => match known::dict_value(&entries, &index)? {
            Some(_) => None,
            None => Some(format!("KeyError({index})")),
        },
        _ => {
            let text = known::unescaped(&base)?;
            out_of_range(text.chars().count(), "string")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raised(text: &str) -> Option<String> {
        let shown = |name: &str| match name {
            "n" => Some("0".to_string()),
            "xs" => Some("[3, 4]".to_string()),
            "d" => Some("{'a': 1}".to_string()),
            _ => None,
        };
        raised_by(
            text,
            &Scope {
                value_of: &shown,
                builtin: &|_| true,
            },
        )
    }

    #[test]
    fn raises_as_python_3_11_says() {
        // Each as `python3.11 -c "..."` raises it.
        let zero = "ZeroDivisionError('integer division or modulo by zero')";
        assert_eq!(raised("11 // (len(xs) % 2)").as_deref(), Some(zero));
        assert_eq!(
            raised("1 + 5 % n").as_deref(),
            Some("ZeroDivisionError('integer modulo by zero')")
        );
        assert_eq!(
            raised("1.5 / n").as_deref(),
            Some("ZeroDivisionError('float division by zero')")
        );
        assert_eq!(
            raised("xs[2]").as_deref(),
            Some("IndexError('list index out of range')")
        );
        assert_eq!(
            raised("'ab'[-3]").as_deref(),
            Some("IndexError('string index out of range')")
        );
        assert_eq!(
            raised("(1,)[n + 1]").as_deref(),
            Some("IndexError('tuple index out of range')")
        );
        assert_eq!(raised("d['b']").as_deref(), Some("KeyError('b')"));
        assert!(raised("int('1e3')").is_some() && raised("int('1__0')").is_some());
        assert_eq!(
            raised("int('x7')").as_deref(),
            Some("ValueError(\"invalid literal for int() with base 10: 'x7'\")")
        );
        // What does not raise, or is not settled.
        let fine = [
            "xs[1]",
            "d['a']",
            "int(' 5 ')",
            "1 // 2",
            "q // n",
            "f(1) // n",
            "int('-1_000')",
        ];
        for fine in fine
            .into_iter()
            .chain(["1 // n > 0", "0 if n == 0 else 1 // n"])
        {
            assert_eq!(raised(fine), None, "{fine}");
        }
    }
}
