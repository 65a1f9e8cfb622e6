//! The one scanner of Python text in the crate: it tells code from string literals
//! and comments, and counts brackets, so that nothing else re-implements quotes,
//! escapes, triple quotes and continuations. Statements ([`logical_starts`]),
//! signatures, print arguments and bindings are all read through it.
//!
//! It is a scanner, not a parser: it never fails, and text Python would refuse (an
//! unterminated string, an unbalanced bracket) still scans, as well as it can.

/// What a character of the text is part of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Code outside strings and comments (a newline ending a line is code too).
    Code,
    /// A quote that opens or closes a string literal (all three of a triple quote).
    Quote,
    /// Inside a string literal.
    Text,
    /// A comment, from its `#` to the end of its line.
    Comment,
}

/// One character of the text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Char {
    /// Byte position in the text.
    pub at: usize,
    pub c: char,
    /// Open brackets before this character (negative after an unmatched closer).
    pub depth: i32,
    pub kind: Kind,
}

/// The characters of `text`, each with what it is part of.
pub fn chars(text: &str) -> impl Iterator<Item = Char> + '_ {
    let bytes = text.as_bytes();
    // Quotes are ASCII and UTF-8 never uses an ASCII byte inside a multi-byte
    // character, so looking ahead by bytes is safe whatever the text holds.
    let tripled = move |at: usize, q: char| {
        bytes.get(at + 1) == Some(&(q as u8)) && bytes.get(at + 2) == Some(&(q as u8))
    };
    let mut depth = 0i32;
    let mut quote: Option<(char, bool)> = None; // (quote, triple)
    let (mut escaped, mut comment, mut closing) = (false, false, 0u8);
    text.char_indices().map(move |(at, c)| {
        let kind = if closing > 0 {
            closing -= 1;
            Kind::Quote
        } else if comment {
            comment = c != '\n';
            if comment {
                Kind::Comment
            } else {
                Kind::Code
            }
        } else if let Some((q, triple)) = quote {
            if escaped {
                escaped = false;
                Kind::Text
            } else if c == '\\' {
                escaped = true;
                Kind::Text
            } else if c == q && (!triple || tripled(at, q)) {
                quote = None;
                closing = if triple { 2 } else { 0 };
                Kind::Quote
            } else {
                if c == '\n' && !triple {
                    quote = None; // an unterminated string: Python would refuse it
                }
                Kind::Text
            }
        } else {
            match c {
                '#' => {
                    comment = true;
                    Kind::Comment
                }
                '\'' | '"' => {
                    let triple = tripled(at, c);
                    quote = Some((c, triple));
                    closing = if triple { 2 } else { 0 };
                    Kind::Quote
                }
                _ => Kind::Code,
            }
        };
        let before = depth;
        if kind == Kind::Code {
            match c {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => depth -= 1,
                _ => {}
            }
        }
        Char {
            at,
            c,
            depth: before,
            kind,
        }
    })
}

/// The characters of Python code outside its string literals (quotes left out), each
/// with its byte position and the bracket depth before it. Comments are kept, `#` and
/// all (a quote in a comment opens no string).
pub fn code_chars(text: &str) -> impl Iterator<Item = (usize, char, i32)> + '_ {
    chars(text)
        .filter(|ch| matches!(ch.kind, Kind::Code | Kind::Comment))
        .map(|ch| (ch.at, ch.c, ch.depth))
}

/// `text` without its comment, if it has one.
pub fn without_comment(text: &str) -> &str {
    match chars(text).find(|ch| ch.kind == Kind::Comment) {
        Some(ch) => &text[..ch.at],
        None => text,
    }
}

/// Where `text` has a comma that is code outside brackets (byte positions).
pub fn top_commas(text: &str) -> impl Iterator<Item = usize> + '_ {
    chars(text)
        .filter(|ch| ch.kind == Kind::Code && ch.c == ',' && ch.depth == 0)
        .map(|ch| ch.at)
}

/// The parts of `text` between its commas that are code outside brackets (an
/// argument list, a signature's parameters, a tuple's items), trimmed; empty parts (a
/// trailing comma's) left out. A comma in a string or a comment splits nothing.
pub fn split_top(text: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut start = 0;
    for at in top_commas(text) {
        parts.push(&text[start..at]);
        start = at + 1;
    }
    parts.push(&text[start..]);
    parts
        .into_iter()
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .map(String::from)
        .collect()
}

/// The length of `text` before the bracket that closes one opened just before it
/// (brackets in strings and comments do not count).
pub fn closing_bracket(text: &str) -> Option<usize> {
    code_chars(text)
        .find(|&(_, c, depth)| matches!(c, ')' | ']' | '}') && depth == 0)
        .map(|(at, _, _)| at)
}

/// Whether `text` (after an opening bracket) closes that bracket at its very end.
pub fn closes_at_end(text: &str) -> bool {
    closing_bracket(text).is_some_and(|at| at + 1 == text.len())
}

/// For each of the first `count` lines: whether a logical line (a statement, or a
/// clause header) starts on it, rather than continuing one from the line before
/// inside brackets, a triple-quoted string or after a backslash.
pub fn logical_starts(source: &str, count: usize) -> Vec<bool> {
    let mut starts = vec![true; count];
    let (mut line, mut depth) = (0usize, 0usize);
    let mut backslash = false; // the previous character was a backslash in code
    for ch in chars(source) {
        if ch.c == '\n' {
            line += 1;
            if line < count {
                starts[line] = ch.kind == Kind::Code && depth == 0 && !backslash;
            }
        } else if ch.kind == Kind::Code {
            // Unmatched closers do not count: what follows them still nests.
            match ch.c {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        backslash = ch.kind == Kind::Code && ch.c == '\\';
    }
    starts
}

/// The logical lines of a program that hold code, as (first, last) 0-based line
/// indices: blank lines and lines holding only a comment are left out.
pub fn logical_lines(source: &str) -> Vec<(usize, usize)> {
    let lines: Vec<&str> = source.lines().collect();
    let starts = logical_starts(source, lines.len());
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let code = line.trim_start();
        if !starts[i] || code.is_empty() || code.starts_with('#') {
            continue;
        }
        let mut last = i;
        while last + 1 < lines.len() && !starts[last + 1] {
            last += 1;
        }
        out.push((i, last));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> String {
        chars(text)
            .map(|ch| match ch.kind {
                Kind::Code => 'c',
                Kind::Quote => 'q',
                Kind::Text => 't',
                Kind::Comment => '#',
            })
            .collect()
    }

    #[test]
    fn strings_comments_and_code_are_told_apart() {
        assert_eq!(kinds("a='b'#c"), "ccqtq##");
        assert_eq!(kinds(r#"x = "a\"b""#), "ccccqttttq");
        assert_eq!(kinds("s='''a'b'''+1"), "ccqqqtttqqqcc");
    }

    #[test]
    fn a_quote_in_a_comment_opens_no_string() {
        let code: String = code_chars("x = 1  # don't\ny = (2)")
            .map(|(_, c, _)| c)
            .collect();
        assert_eq!(code, "x = 1  # don't\ny = (2)");
    }

    #[test]
    fn depth_counts_brackets_outside_strings() {
        let depths: Vec<i32> = code_chars("f(a, '(', [b])")
            .filter(|&(_, c, _)| c == ')' || c == ']')
            .map(|(_, _, d)| d)
            .collect();
        assert_eq!(depths, vec![2, 1]);
    }

    #[test]
    fn comments_are_cut_off_but_hashes_in_strings_stay() {
        assert_eq!(without_comment("x = '#'  # note"), "x = '#'  ");
        assert_eq!(without_comment("y = 2"), "y = 2");
    }

    #[test]
    fn logical_lines_join_brackets_triple_strings_and_backslashes() {
        let source = "a = (1,\n     2)\ns = '''x\ny'''\nb = 1 + \\\n    2\n\n# note\nc = 3\n";
        assert_eq!(
            logical_starts(source, 9),
            vec![true, false, true, false, true, false, true, true, true]
        );
        assert_eq!(logical_lines(source), vec![(0, 1), (2, 3), (4, 5), (8, 8)]);
    }

    #[test]
    fn an_unterminated_string_ends_at_its_line() {
        // Python refuses it; the scanner goes on with the next line as code.
        let source = "s = 'abc\nt = 1\n";
        assert_eq!(logical_starts(source, 2), vec![true, false]);
        let code: String = code_chars("s = 'abc\nt = (1)").map(|(_, c, _)| c).collect();
        assert_eq!(code, "s = t = (1)");
    }

    #[test]
    fn top_level_commas_split_but_not_those_in_brackets_strings_or_comments() {
        assert_eq!(
            split_top("a, (b, c), 'd, e', [f, {g: h}],"),
            vec!["a", "(b, c)", "'d, e'", "[f, {g: h}]"]
        );
        assert_eq!(
            split_top(r#"'it\'s, ok', "x""#),
            vec![r#"'it\'s, ok'"#, r#""x""#]
        );
        assert_eq!(split_top("x,  # one, two\n y"), vec!["x", "# one, two\n y"]);
        assert_eq!(split_top("  "), Vec::<String>::new());
    }

    #[test]
    fn the_closing_bracket_is_found_past_nested_ones_and_strings() {
        assert_eq!(closing_bracket("a, (b), ')') + 1"), Some(11));
        assert_eq!(closing_bracket("a, [b"), None);
    }

    #[test]
    fn non_ascii_text_scans_without_a_panic() {
        let source = "π = ('ü',\n     \"日本\")  # ✓\nnom_é = '''ß\n'''\n";
        assert_eq!(logical_lines(source), vec![(0, 1), (2, 3)]);
        assert_eq!(without_comment("π = 1  # ✓"), "π = 1  ");
    }
}
