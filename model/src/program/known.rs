//! The value of an expression where the values it reads settle it: a literal, a name,
//! whole-number arithmetic ([`super::arithmetic`]), a comparison
//! ([`super::conditions`]), a conditional expression or `str()` of those. What Python
//! gives there is certain, so the grammar can hold a prediction to it.

use super::{arithmetic, conditions};

/// The builtins an expression may call here: `len`, `abs`, `str`.
pub const BUILTINS: [&str; 3] = ["len", "abs", "str"];

/// What an expression's names stand for where it runs.
pub struct Scope<'a> {
    /// The repr of a name's value, where the state shows it.
    pub value_of: &'a dyn Fn(&str) -> Option<String>,
    /// Whether a name is Python's builtin of that name there (nothing of the
    /// program's hides it).
    pub builtin: &'a dyn Fn(&str) -> bool,
}

/// The repr of `text`'s value in `scope`, where it is settled.
pub fn repr_of(text: &str, scope: &Scope) -> Option<String> {
    let text = text.trim();
    // What these begin is not the value of the expression that follows them.
    let first_word = text.split([' ', ':', '(']).next().unwrap_or("");
    if ["lambda", "yield", "await"].contains(&first_word) {
        return None;
    }
    let python_bool = |b: bool| if b { "True" } else { "False" }.to_string();
    crate::entry::exact_literal_repr(text)
        .or_else(|| (scope.value_of)(super::layout::is_name(text).then_some(text)?))
        .or_else(|| Some(arithmetic::whole_number(text, scope)?.to_string()))
        .or_else(|| conditions::boolean(text, scope).map(python_bool))
        .or_else(|| conditional(text, scope))
        .or_else(|| str_call(text, scope))
}

/// `A if C else B`: Python runs only the branch the condition picks.
fn conditional(text: &str, scope: &Scope) -> Option<String> {
    let (value, rest) = conditions::split_once_at_word(text, " if ")?;
    let (condition, otherwise) = conditions::split_once_at_word(rest, " else ")?;
    match conditions::truth(condition, scope)? {
        true => repr_of(value, scope),
        false => repr_of(otherwise, scope),
    }
}

/// `str(X)` of a number, a bool, `None` or a string.
fn str_call(text: &str, scope: &Scope) -> Option<String> {
    let inner = text.strip_prefix("str(")?.strip_suffix(')')?;
    if !(scope.builtin)("str") || !super::lexer::closes_at_end(&text[4..]) {
        return None;
    }
    let repr = repr_of(inner, scope)?;
    if repr.starts_with(['\'', '"']) {
        return Some(repr);
    }
    let plain = matches!(repr.as_str(), "True" | "False" | "None") || repr.parse::<f64>().is_ok();
    plain.then(|| crate::entry::python_str_repr(&repr))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known(text: &str) -> Option<String> {
        let shown = |name: &str| match name {
            "n" => Some("7".to_string()),
            "s" => Some("'it'".to_string()),
            _ => None,
        };
        repr_of(
            text,
            &Scope {
                value_of: &shown,
                builtin: &|_| true,
            },
        )
    }

    #[test]
    fn literals_names_arithmetic_and_comparisons() {
        assert_eq!(known("'a'").as_deref(), Some("'a'"));
        assert_eq!(known("n").as_deref(), Some("7"));
        assert_eq!(known("n * 2 - 1").as_deref(), Some("13"));
        assert_eq!(known("n % 2 == 1").as_deref(), Some("True"));
        assert_eq!(known("n and 0"), None);
        assert_eq!(known("m + 1"), None);
    }

    #[test]
    fn conditional_expressions_run_one_branch() {
        assert_eq!(
            known("n // 2 if n % 2 == 0 else 3 * n + 1").as_deref(),
            Some("22")
        );
        assert_eq!(known("s if n > 1 else g(n)").as_deref(), Some("'it'"));
        assert_eq!(
            known("'a' if n < 0 else 'b' if n < 9 else 'c'").as_deref(),
            Some("'b'")
        );
        assert_eq!(known("1 if m else 2"), None);
        assert_eq!(known("lambda: 1 if n else 2"), None);
        assert_eq!(known("yield 1 if n else 2"), None);
    }

    #[test]
    fn str_of_numbers_and_strings() {
        assert_eq!(known("str(n + 1)").as_deref(), Some("'8'"));
        assert_eq!(known("str(s)").as_deref(), Some("'it'"));
        assert_eq!(known("str(n) + str(n)"), None);
    }
}
