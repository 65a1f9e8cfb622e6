//! What a `print(...)` statement writes, as far as the program's text and the values a
//! state shows tell: a pattern of known text and unknown stretches. Decoding uses it
//! so that the stdout of a step over a `print` line matches its literals and the
//! values of the names it prints (the model still writes what an expression makes).

use super::lexer::{code_chars, split_top};
use crate::entry::{exact_literal_repr, literal_repr};

/// One piece of a pattern: a known character, or any text (possibly none).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Piece {
    Char(char),
    Any,
}

/// The text one `print` call writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Printed {
    pieces: Vec<Piece>,
}

impl Printed {
    /// The pattern of `code` if it is one `print(...)` call that runs no code of the
    /// program (every name it reads holds a plain value: a number, a string, a
    /// container of such, `True`, `False` or `None`) and writes to stdout. `shown`
    /// gives the repr of a name's value as the state shows it.
    ///
    /// A print whose arguments call (`print(sum(xs) / len(xs))`) is followed only
    /// where `program::known` settles every argument, so that no code of the program
    /// runs; `builtin` says which names are Python's builtins there.
    pub fn of_statement(
        code: &str,
        shown: impl Fn(&str) -> Option<String>,
        builtin: impl Fn(&str) -> bool,
    ) -> Option<Self> {
        let inner = code.trim().strip_prefix("print(")?.strip_suffix(')')?;
        // The `)` closing `print(` must be the last character.
        if code_chars(inner).any(|(_, c, depth)| depth < 0 || (c == ')' && depth == 0)) {
            return None;
        }
        let calls = calls_or_reaches(inner);
        let (mut sep, mut end) = (String::from(" "), String::from("\n"));
        let mut parts: Vec<Vec<Piece>> = Vec::new();
        for arg in split_top(inner) {
            let arg = arg.trim();
            if arg.is_empty() {
                continue;
            }
            let keyword = arg
                .split_once('=')
                .filter(|(name, value)| is_name(name.trim()) && !value.starts_with('='));
            match keyword {
                Some((name, value)) if name.trim() == "sep" => {
                    sep = plain_str(&literal_repr(value.trim()).ok()?)?;
                }
                Some((name, value)) if name.trim() == "end" => {
                    end = plain_str(&literal_repr(value.trim()).ok()?)?;
                }
                Some(_) => return None, // `file=` writes elsewhere
                None if arg.starts_with('*') => return None,
                None if calls => parts.push(Self::settled(arg, &shown, &builtin)?),
                None => parts.push(Self::argument(arg, &shown)?),
            }
        }
        let mut pieces = Vec::new();
        for (k, part) in parts.into_iter().enumerate() {
            if k > 0 {
                pieces.extend(sep.chars().map(Piece::Char));
            }
            pieces.extend(part);
        }
        pieces.extend(end.chars().map(Piece::Char));
        Some(Printed { pieces })
    }

    /// What `str()` of an argument that `program::known` settles writes.
    fn settled(
        arg: &str,
        shown: &impl Fn(&str) -> Option<String>,
        builtin: &impl Fn(&str) -> bool,
    ) -> Option<Vec<Piece>> {
        let scope = super::known::Scope {
            value_of: shown,
            builtin,
        };
        let repr = super::known::repr_of(arg, &scope).filter(|r| plain(r))?;
        Some(str_of(&repr)?.chars().map(Piece::Char).collect())
    }

    /// What `str()` of one argument writes: known for a literal and a name, an
    /// f-string's text and names; unknown for other expressions.
    fn argument(arg: &str, shown: &impl Fn(&str) -> Option<String>) -> Option<Vec<Piece>> {
        if let Some(template) = arg.strip_prefix('f') {
            // Settled whole (its fields literals or plain values), else as a pattern.
            let whole = super::known::repr_of(arg, &scope_of(shown));
            if let Some(text) = whole.as_deref().and_then(plain_str) {
                return Some(text.chars().map(Piece::Char).collect());
            }
            return f_string(template, shown);
        }
        let values = plain_values(arg, shown)?;
        let repr = match exact_literal_repr(arg) {
            Some(repr) => Some(repr),
            None if is_name(arg) => values.into_iter().next(),
            // Whole-number arithmetic or a comparison: an `int` or `bool`, whose
            // `str()` is its repr.
            None => super::known::repr_of(arg, &scope_of(shown)),
        };
        Some(match repr.and_then(|r| str_of(&r)) {
            Some(text) => text.chars().map(Piece::Char).collect(),
            None => vec![Piece::Any],
        })
    }

    /// Whether `text` can begin what this prints.
    pub fn admits_prefix(&self, text: &str) -> bool {
        !self.positions(text).is_empty()
    }

    /// Whether `text` can go on with a character for which `next` holds.
    pub fn admits_next(&self, text: &str, next: impl Fn(char) -> bool) -> bool {
        self.positions(text)
            .iter()
            .any(|&at| match &self.pieces.get(at) {
                Some(Piece::Any) => true,
                Some(Piece::Char(c)) => next(*c),
                None => false,
            })
    }

    /// Whether `text` is exactly what this can print.
    pub fn admits(&self, text: &str) -> bool {
        self.positions(text).contains(&self.pieces.len())
    }

    /// The pattern positions reachable after reading `text` (Any repeats or ends).
    fn positions(&self, text: &str) -> Vec<usize> {
        let close = |mut set: Vec<usize>| {
            let mut k = 0;
            while k < set.len() {
                let at = set[k];
                if self.pieces.get(at) == Some(&Piece::Any) && !set.contains(&(at + 1)) {
                    set.push(at + 1);
                }
                k += 1;
            }
            set
        };
        let mut set = close(vec![0]);
        for c in text.chars() {
            let mut next = Vec::new();
            for &at in &set {
                match self.pieces.get(at) {
                    Some(Piece::Any) => next.push(at),
                    Some(Piece::Char(p)) if *p == c => next.push(at + 1),
                    _ => {}
                }
            }
            next.sort_unstable();
            next.dedup();
            set = close(next);
            if set.is_empty() {
                break;
            }
        }
        set
    }
}

/// Whether `code` calls, subscripts or reaches into an attribute: what could run the
/// program's code (or fail).
fn calls_or_reaches(code: &str) -> bool {
    let chars: Vec<char> = code_chars(code).map(|(_, c, _)| c).collect();
    chars.iter().enumerate().any(|(k, &c)| {
        let attribute = c == '.'
            && chars
                .get(k + 1)
                .is_some_and(|n| n.is_alphabetic() || *n == '_');
        matches!(c, '(' | '[') || attribute
    })
}

/// A name a value could be shown for (not `True`, `False`, `None`).
fn is_name(text: &str) -> bool {
    crate::program::layout::is_name(text) && !matches!(text, "True" | "False" | "None")
}

/// The names a print's argument reads, as `shown` gives them; no call (a print that
/// makes one is not followed), so no builtin.
fn scope_of(shown: &impl Fn(&str) -> Option<String>) -> super::known::Scope<'_> {
    super::known::Scope {
        value_of: shown,
        builtin: &|_| false,
    }
}

/// The values of the names `expr` reads, if every one is shown and plain.
fn plain_values(expr: &str, shown: &impl Fn(&str) -> Option<String>) -> Option<Vec<String>> {
    const WORDS: [&str; 7] = ["and", "or", "not", "in", "is", "if", "else"];
    let code = code_only(expr);
    let values: Vec<String> = crate::program::layout::words(&code)
        .filter(|w| is_name(w) && !WORDS.contains(w))
        .map(shown)
        .collect::<Option<_>>()?;
    // A cut repr is not the value's: its `str()` is longer.
    let whole = |v: &String| plain(v) && !super::known::cut(v);
    values.iter().all(whole).then_some(values)
}

/// `arg` with its string literals blanked out (their words are no names).
fn code_only(arg: &str) -> String {
    let mut kept = vec![' '; arg.chars().count()];
    let offsets: Vec<usize> = arg.char_indices().map(|(i, _)| i).collect();
    for (at, c, _) in code_chars(arg) {
        if let Ok(k) = offsets.binary_search(&at) {
            kept[k] = c;
        }
    }
    kept.into_iter().collect()
}

/// An f-string's pattern: its text, each `{NAME}` as that name's `str()`, any other
/// field as unknown text. `None` for what this reading does not follow (escapes,
/// doubled braces, a name without a plain value).
fn f_string(template: &str, shown: &impl Fn(&str) -> Option<String>) -> Option<Vec<Piece>> {
    let quote = template
        .chars()
        .next()
        .filter(|q| matches!(q, '\'' | '"'))?;
    let body = template.strip_prefix(quote)?.strip_suffix(quote)?;
    if body.contains(['\\', quote]) || body.contains("{{") || body.contains("}}") {
        return None;
    }
    let mut pieces = Vec::new();
    let mut rest = body;
    while let Some(open) = rest.find('{') {
        pieces.extend(rest[..open].chars().map(Piece::Char));
        let close = rest[open..].find('}')? + open;
        let field = rest[open + 1..close].trim();
        // A format spec or conversion, or a field that could run code: not followed.
        if field.contains([':', '!', '\'', '"']) || calls_or_reaches(field) {
            return None;
        }
        let values = plain_values(field, shown)?;
        let computed = || super::known::repr_of(field, &scope_of(shown)).and_then(|r| str_of(&r));
        match values
            .first()
            .filter(|_| is_name(field))
            .and_then(|v| str_of(v))
            .or_else(computed)
        {
            Some(text) => pieces.extend(text.chars().map(Piece::Char)),
            // A field that computes: its text is the model's.
            None => pieces.push(Piece::Any),
        }
        rest = &rest[close + 1..];
    }
    if rest.contains('}') {
        return None;
    }
    pieces.extend(rest.chars().map(Piece::Char));
    Some(pieces)
}

/// Whether a repr is of a plain value, whose `str()` and operators run no code of the
/// program: a number, a string, `True`/`False`/`None`, or a container of such (no
/// object of a class inside).
fn plain(repr: &str) -> bool {
    let r = repr.trim();
    if r.contains('<') && !r.starts_with(['\'', '"']) {
        return false;
    }
    let mut previous_word = false;
    for (_, c, _) in code_chars(r) {
        if c == '(' && previous_word {
            return false; // `Point(1, 2)`: an object with a repr of its own
        }
        previous_word = c.is_alphanumeric() || c == '_';
    }
    true
}

/// `str()` of a value from its repr, where the repr alone says it: a number, `True`,
/// `False`, `None`, a container (its `str` is its repr), or a string without escapes.
fn str_of(repr: &str) -> Option<String> {
    let r = repr.trim();
    if r.starts_with(['\'', '"']) {
        return plain_str(r);
    }
    Some(r.to_string())
}

/// The text of a string's repr, if it has no escapes.
fn plain_str(repr: &str) -> Option<String> {
    super::known::unescaped(repr).map(str::to_string)
}

/// How far a JSON string is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JsonString {
    /// Its text so far.
    Open(String),
    /// Its text so far, and an escape begun after it (`\\` or `\\u00`).
    Escaping(String, String),
    /// Its text so far, and the first bytes of a character (a token may end inside one).
    Splitting(String, Vec<u8>),
    /// Its whole text.
    Closed(String),
}

/// How far `bytes` (which begin with a JSON string's opening quote) write it. `None`
/// if they are no JSON string's beginning, or go on after its closing quote.
pub fn partial_json_string(bytes: &[u8]) -> Option<JsonString> {
    let (text, split) = match std::str::from_utf8(bytes) {
        Ok(text) => (text, None),
        // A token may end inside a character: read up to it.
        Err(e) if e.error_len().is_none() => {
            let (text, split) = bytes.split_at(e.valid_up_to());
            (std::str::from_utf8(text).ok()?, Some(split.to_vec()))
        }
        Err(_) => return None,
    };
    let read = read_json_string(text)?;
    match (read, split) {
        (JsonString::Open(text), Some(split)) => Some(JsonString::Splitting(text, split)),
        (_, Some(_)) => None,
        (read, None) => Some(read),
    }
}

fn read_json_string(text: &str) -> Option<JsonString> {
    let mut chars = text.strip_prefix('"')?.chars();
    let mut out = String::new();
    while let Some(c) = chars.next() {
        match c {
            '"' => return chars.next().is_none().then_some(JsonString::Closed(out)),
            '\\' => {
                let Some(e) = chars.next() else {
                    return Some(JsonString::Escaping(out, "\\".into()));
                };
                match e {
                    'n' => out.push('\n'),
                    't' => out.push('\t'),
                    'r' => out.push('\r'),
                    'b' => out.push('\u{8}'),
                    'f' => out.push('\u{c}'),
                    '"' | '\\' | '/' => out.push(e),
                    'u' => {
                        let hex: String = chars.by_ref().take(4).collect();
                        if hex.len() < 4 {
                            return Some(JsonString::Escaping(out, format!("\\u{hex}")));
                        }
                        // A surrogate half stands for something this reading skips.
                        match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                            Some(c) => out.push(c),
                            None => return None,
                        }
                    }
                    _ => return None,
                }
            }
            c => out.push(c),
        }
    }
    Some(JsonString::Open(out))
}

/// Whether `c` written in a JSON string begins with the escape `begun`.
pub fn escape_begins(c: char, begun: &str) -> bool {
    let written = serde_json::Value::from(c.to_string()).to_string();
    written[1..].starts_with(begun)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(name: &str) -> Option<String> {
        match name {
            "i" => Some("5".into()),
            "word" => Some("'kiwi'".into()),
            "xs" => Some("[1, 'a']".into()),
            "p" => Some("Point(1, 2)".into()),
            "err" => Some("ValueError('bad')".into()),
            _ => None,
        }
    }

    fn printed(code: &str) -> Printed {
        Printed::of_statement(code, shown, |_| true).unwrap()
    }

    #[test]
    fn literals_and_names_are_printed_as_str_shows_them() {
        let p = printed("print('no index', i, word, xs)");
        assert!(p.admits("no index 5 kiwi [1, 'a']\n"));
        assert!(p.admits_prefix("no index 5"));
        assert!(!p.admits_prefix("no break"));
        assert!(!p.admits("no index 5 kiwi [1, 'a']"));
    }

    #[test]
    fn sep_end_and_f_strings_are_followed_and_expressions_are_left_open() {
        assert!(printed("print('a:', i, sep='=', end=' ')").admits("a:=5 "));
        let p = printed("print(f'{word} -> {word * 2} {i ** -1}')");
        assert!(p.admits("kiwi -> kiwikiwi anything\n"));
        assert!(!p.admits("kiwi -> kiwi anything\n"));
        assert!(!p.admits_prefix("apple"));
        let p = printed("print(f\"{''} -> {i}{'!'}\")");
        assert!(p.admits(" -> 5!\n"));
        assert!(!p.admits(" -> 6!\n"));
        let p = printed("print(word + 's', 'x')");
        assert!(p.admits("kiwis x\n"));
        assert!(!p.admits("kiwis y\n"));
    }

    #[test]
    fn whole_number_arithmetic_and_comparisons_are_worked_out() {
        let p = printed("print(f'{word} -> {i * 2}')");
        assert!(p.admits("kiwi -> 10\n"));
        assert!(!p.admits("kiwi -> 11\n"));
        let p = printed("print(i + 1, i % 2 == 0)");
        assert!(p.admits("6 False\n"));
        assert!(!p.admits("7 False\n"));
    }

    #[test]
    fn prints_that_call_only_builtins_the_values_settle_are_followed() {
        let p = printed("print(len(xs), sum([i, 2]) / 2, xs[1])");
        assert!(p.admits("2 3.5 a\n"));
        assert!(!p.admits("2 3.5 b\n"));
        let own_len = Printed::of_statement("print(len(xs))", shown, |name| name != "len");
        assert_eq!(own_len, None, "the program's own len");
    }

    #[test]
    fn a_value_the_state_shows_cut_is_not_printed_from_its_repr() {
        let long = |name: &str| (name == "xs").then(|| format!("[{}…", "1, ".repeat(70)));
        assert_eq!(Printed::of_statement("print(xs)", long, |_| true), None);
    }

    #[test]
    fn a_set_python_may_order_otherwise_is_any_text() {
        // CPython prints {1, 8, 9} as {8, 1, 9}; small ints come out sorted.
        assert!(printed("print({1, 8, 9})").admits("{8, 1, 9}\n"));
        assert!(printed("print({3, 1})").admits("{1, 3}\n"));
        assert!(!printed("print({3, 1})").admits("{3, 1}\n"));
    }

    #[test]
    fn prints_that_could_run_code_or_are_not_read_have_no_pattern() {
        for code in [
            "print(p)",
            "print(err)",
            "print(len(q))",
            "print(g(i))",
            "print(p.x)",
            "print(unknown)",
            "print(i, file=out)",
            "print(f'{p}')",
            "x = print(i)",
        ] {
            assert_eq!(Printed::of_statement(code, shown, |_| true), None, "{code}");
        }
    }

    #[test]
    fn json_strings_are_read_as_far_as_they_go() {
        use JsonString::*;
        assert_eq!(
            partial_json_string(br#""no \n"#),
            Some(Open("no \n".into()))
        );
        assert_eq!(
            partial_json_string(br#""a\"#),
            Some(Escaping("a".into(), "\\".into()))
        );
        assert_eq!(
            partial_json_string(br#""a\u00"#),
            Some(Escaping("a".into(), "\\u00".into()))
        );
        assert_eq!(partial_json_string(br#""ab""#), Some(Closed("ab".into())));
        assert_eq!(partial_json_string(br#""ab"c"#), None);
        assert_eq!(
            partial_json_string("\"é".as_bytes()[..2].as_ref()),
            Some(Splitting(String::new(), vec![0xc3]))
        );
        assert!(escape_begins('\n', "\\"));
        assert!(escape_begins('\u{1b}', "\\u00"));
        assert!(!escape_begins('a', "\\"));
    }
}
