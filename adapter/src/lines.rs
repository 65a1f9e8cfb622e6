//! Which lines of a Python program can hold a breakpoint, read from the source alone
//! (no Python runs: the neural engine has none). A line counts if a statement starts
//! on it; continuation lines, blank lines, comments, `else:`/`finally:` headers and
//! function docstrings do not (CPython reports no line event for them).

/// 1-based numbers of the lines where a statement starts, in order.
pub fn executable_lines(source: &str) -> Vec<u32> {
    let mut out = Vec::new();
    let mut depth: i32 = 0; // open brackets carried over from earlier lines
    let mut in_triple: Option<&[u8]> = None;
    let mut continued = false; // the previous line ended with a backslash
    let mut after_header = false; // the previous statement was a def/class header
    for (index, line) in source.lines().enumerate() {
        let trimmed = line.trim();
        let starts_statement = depth == 0 && in_triple.is_none() && !continued;
        if starts_statement && !trimmed.is_empty() && !trimmed.starts_with('#') {
            let header_only = ["else:", "finally:"].iter().any(|h| trimmed.starts_with(h))
                && trimmed
                    .split('#')
                    .next()
                    .unwrap_or("")
                    .trim()
                    .ends_with(':')
                && trimmed.split('#').next().unwrap_or("").trim().len() <= "finally:".len();
            let docstring = after_header
                && (trimmed.starts_with("\"\"\"")
                    || trimmed.starts_with("'''")
                    || trimmed.starts_with('"')
                    || trimmed.starts_with('\''));
            if !header_only && !docstring {
                out.push(index as u32 + 1);
            }
            let code = trimmed.split('#').next().unwrap_or("");
            after_header = (code.starts_with("def ")
                || code.starts_with("async def ")
                || code.starts_with("class "))
                && code.trim_end().ends_with(':');
        }
        scan(line, &mut depth, &mut in_triple);
        continued = in_triple.is_none() && line.trim_end().ends_with('\\');
    }
    out
}

/// Track brackets and triple-quoted strings across one line. It reads bytes, not
/// chars: every delimiter is ASCII and UTF-8 never uses an ASCII byte inside a
/// multi-byte character, so any byte offset is safe however names are spelt
/// (`π = 3`), where slicing the `str` at them panicked.
fn scan(line: &str, depth: &mut i32, in_triple: &mut Option<&'static [u8]>) {
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let rest = &bytes[i..];
        if let Some(close) = *in_triple {
            match rest.windows(close.len()).position(|w| w == close) {
                Some(at) => {
                    i += at + close.len();
                    *in_triple = None;
                    continue;
                }
                None => return,
            }
        }
        for quotes in [b"\"\"\"", b"'''"] {
            if rest.starts_with(quotes) {
                *in_triple = Some(quotes);
            }
        }
        if in_triple.is_some() {
            i += 3;
            continue;
        }
        match bytes[i] {
            b'#' => return,
            q @ (b'\'' | b'"') => {
                i += 1;
                while i < bytes.len() && bytes[i] != q {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'(' | b'[' | b'{' => *depth += 1,
            b')' | b']' | b'}' => *depth = (*depth - 1).max(0),
            _ => {}
        }
        i += 1;
    }
}

/// Where a breakpoint asked for at `line` lands: that line if it is executable, else
/// the next executable line, else nowhere.
pub fn place_breakpoint(executable: &[u32], line: u32) -> Option<u32> {
    executable.iter().copied().find(|&l| l >= line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_cpython_line_table_on_a_sample() {
        // Expected lines are those CPython 3.11's co_lines() reports for this program.
        let source = "\"\"\"doc\"\"\"\nimport sys\n\ndef f(x):\n    \"\"\"doc\"\"\"\n    try:\n        y = x + 1\n    except ValueError:\n        pass\n    else:\n        y = 2\n    finally:\n        z = 3\n    total = (1 +\n             2)\n    s = '''a\n    b'''\n    return y  # done\n";
        assert_eq!(
            executable_lines(source),
            vec![1, 2, 4, 6, 7, 8, 9, 11, 13, 14, 16, 18]
        );
    }

    #[test]
    fn unicode_names_and_strings_are_read_not_a_panic() {
        let source =
            "π = 3\nnom_é = ('ü',\n         \"日本\")\ns = '''ß\n'''\nprint(π, nom_é)  # ✓\n";
        assert_eq!(executable_lines(source), vec![1, 2, 4, 6]);
    }

    #[test]
    fn breakpoints_move_to_the_next_executable_line() {
        let lines = [2, 5, 9];
        assert_eq!(place_breakpoint(&lines, 5), Some(5));
        assert_eq!(place_breakpoint(&lines, 3), Some(5));
        assert_eq!(place_breakpoint(&lines, 10), None);
    }
}
