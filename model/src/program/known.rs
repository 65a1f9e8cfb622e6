//! The value of an expression where the values it reads settle it: a literal, a name,
//! whole-number arithmetic ([`super::arithmetic`]) or a comparison
//! ([`super::conditions`]) of those. What Python gives there is certain, so the grammar
//! can hold a prediction to it.

use super::{arithmetic, conditions};

/// The repr of `text`'s value, where `value_of` gives the reprs of the names it reads.
pub fn repr_of(text: &str, value_of: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    let text = text.trim();
    let python_bool = |b: bool| if b { "True" } else { "False" }.to_string();
    crate::entry::exact_literal_repr(text)
        .or_else(|| value_of(super::layout::is_name(text).then_some(text)?))
        .or_else(|| Some(arithmetic::whole_number(text, value_of)?.to_string()))
        .or_else(|| conditions::boolean(text, value_of).map(python_bool))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_names_arithmetic_and_comparisons() {
        let shown = |name: &str| (name == "n").then(|| "7".to_string());
        assert_eq!(repr_of("'a'", &shown).as_deref(), Some("'a'"));
        assert_eq!(repr_of("n", &shown).as_deref(), Some("7"));
        assert_eq!(repr_of("n * 2 - 1", &shown).as_deref(), Some("13"));
        assert_eq!(repr_of("n % 2 == 1", &shown).as_deref(), Some("True"));
        assert_eq!(repr_of("n and 0", &shown), None);
        assert_eq!(repr_of("m + 1", &shown), None);
    }
}
