//! Programs from real code: a module and a call of one of its functions, taken from
//! the module's doctests (`>>> f(3)`) or, for exercism-style exercises, from the
//! assertions of the exercise's unit tests (`self.assertEqual(f(3), 6)`).
//!
//! The scan is textual (no Python parser): it keeps only calls that are one call
//! expression of a function defined at the module's top level, and skips modules that
//! import anything outside the standard library. What still fails (a call that names a
//! variable set up by earlier doctest lines, say) fails when traced, and is counted there.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// One module and one call to trace in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CorpusProgram {
    /// The top folder under the corpus root it came from (`thealgorithms`, `exercism`).
    pub origin: String,
    pub path: PathBuf,
    /// The module's text, without its `if __name__ == "__main__":` block.
    pub source: String,
    pub call: String,
}

/// What a scan found and skipped, per reason.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CorpusStats {
    pub files: usize,
    pub files_with_calls: usize,
    pub calls: usize,
    /// Files skipped, by reason.
    pub skipped: BTreeMap<String, usize>,
    /// Calls found per origin.
    pub calls_by_origin: BTreeMap<String, usize>,
}

/// How to scan.
#[derive(Clone, Debug)]
pub struct ScanOptions {
    /// Top-level modules Python ships (see [`stdlib_modules`]).
    pub stdlib: HashSet<String>,
    /// Most calls kept per called function (doctests often repeat one function many times).
    pub max_calls_per_function: usize,
    /// Longer modules are skipped: the whole module is part of every training example.
    pub max_lines: usize,
}

/// The names of the standard library's top-level modules, from the Python that traces.
pub fn stdlib_modules(python: &str) -> anyhow::Result<HashSet<String>> {
    let output = Command::new(python)
        .args([
            "-I",
            "-S",
            "-c",
            "import sys; print('\\n'.join(sorted(sys.stdlib_module_names)))",
        ])
        .output()
        .map_err(|e| {
            anyhow::anyhow!("cannot run {python:?} ({e}): install Python 3.10 or later")
        })?;
    if !output.status.success() {
        anyhow::bail!(
            "{python} could not list its standard library (needs Python 3.10 or later): {}",
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::to_string)
        .collect())
}

/// Every (module, call) pair under `root`, in a stable order (by path, then by position).
pub fn scan(
    root: &Path,
    options: &ScanOptions,
) -> anyhow::Result<(Vec<CorpusProgram>, CorpusStats)> {
    if !root.is_dir() {
        anyhow::bail!(
            "corpus folder {} does not exist: pass a folder of Python files",
            root.display()
        );
    }
    let mut files: Vec<PathBuf> = walkdir::WalkDir::new(root)
        .sort_by_file_name()
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file() && e.path().extension().is_some_and(|x| x == "py"))
        .map(|e| e.into_path())
        .collect();
    files.sort();
    let mut programs = Vec::new();
    let mut stats = CorpusStats::default();
    for path in files {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let in_meta = path
            .parent()
            .and_then(|p| p.file_name())
            .is_some_and(|n| n == ".meta");
        let calls_from_tests = in_meta && (name == "example.py" || name == "exemplar.py");
        if name.ends_with("_test.py") || name.starts_with("test_") || (in_meta && !calls_from_tests)
        {
            continue;
        }
        stats.files += 1;
        let skip = |stats: &mut CorpusStats, why: &str| {
            *stats.skipped.entry(why.to_string()).or_insert(0) += 1
        };
        let Ok(text) = std::fs::read_to_string(&path) else {
            skip(&mut stats, "unreadable or not UTF-8");
            continue;
        };
        if !imports_only(&text, &options.stdlib) {
            skip(&mut stats, "imports outside the standard library");
            continue;
        }
        let source = strip_main_block(&text);
        if source.lines().count() > options.max_lines {
            skip(&mut stats, "longer than max_lines");
            continue;
        }
        let functions = top_level_functions(&source);
        let mut calls = if calls_from_tests {
            test_calls(
                path.parent().and_then(Path::parent).unwrap_or(root),
                &functions,
            )
        } else {
            doctest_calls(&source, &functions)
        };
        limit_per_function(&mut calls, options.max_calls_per_function);
        if calls.is_empty() {
            skip(&mut stats, "no usable calls");
            continue;
        }
        let origin = path
            .strip_prefix(root)
            .ok()
            .and_then(|p| p.components().next())
            .filter(|_| path.parent() != Some(root))
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .unwrap_or_else(|| "corpus".to_string());
        stats.files_with_calls += 1;
        stats.calls += calls.len();
        *stats.calls_by_origin.entry(origin.clone()).or_insert(0) += calls.len();
        for call in calls {
            programs.push(CorpusProgram {
                origin: origin.clone(),
                path: path.clone(),
                source: source.clone(),
                call,
            });
        }
    }
    Ok((programs, stats))
}

/// Whether every import names a standard-library module (relative imports do not).
fn imports_only(text: &str, stdlib: &HashSet<String>) -> bool {
    for line in text.lines() {
        let line = line.trim_start();
        let modules: Vec<&str> = if let Some(rest) = line.strip_prefix("import ") {
            rest.split(',')
                .map(|m| m.split_whitespace().next().unwrap_or(""))
                .collect()
        } else if let Some(rest) = line.strip_prefix("from ") {
            match rest.split_whitespace().collect::<Vec<_>>().as_slice() {
                [module, "import", ..] => vec![*module],
                _ => continue, // `from` in prose (a docstring), not an import
            }
        } else {
            continue;
        };
        for module in modules {
            let top = module.split('.').next().unwrap_or("");
            if module.starts_with('.') || (!top.is_empty() && !stdlib.contains(top)) {
                return false;
            }
        }
    }
    true
}

/// The text without its `if __name__ == "__main__":` block: traced calls need only the
/// definitions, and the block may read input or run slow demos.
pub fn strip_main_block(text: &str) -> String {
    let mut out = Vec::new();
    let mut skipping = false;
    for line in text.lines() {
        let starts_block = line.starts_with("if __name__") && line.contains("__main__");
        if starts_block {
            skipping = true;
            continue;
        }
        if skipping {
            let indented = line.starts_with([' ', '\t']) || line.trim().is_empty();
            if indented {
                continue;
            }
            skipping = false;
        }
        out.push(line);
    }
    while out.last().is_some_and(|l| l.trim().is_empty()) {
        out.pop();
    }
    let mut text = out.join("\n");
    text.push('\n');
    text
}

/// Names of the functions defined at the module's top level.
fn top_level_functions(source: &str) -> HashSet<String> {
    source
        .lines()
        .filter_map(|l| l.strip_prefix("def "))
        .filter_map(|rest| rest.split('(').next())
        .map(|name| name.trim().to_string())
        .filter(|name| is_identifier(name))
        .collect()
}

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_')
}

/// `>>> f(...)` lines calling a top-level function, in file order.
fn doctest_calls(source: &str, functions: &HashSet<String>) -> Vec<String> {
    let lines: Vec<&str> = source.lines().collect();
    let mut calls = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(expr) = line.trim_start().strip_prefix(">>> ") else {
            continue;
        };
        let continued = lines
            .get(i + 1)
            .is_some_and(|next| next.trim_start().starts_with("..."));
        if continued {
            continue;
        }
        if let Some(call) = single_call(expr.trim(), functions) {
            calls.push(call);
        }
    }
    dedup(calls)
}

/// `expr` if it is one call `name(...)` of one of `functions`, with nothing after it.
fn single_call(expr: &str, functions: &HashSet<String>) -> Option<String> {
    let open = expr.find('(')?;
    if !functions.contains(expr[..open].trim_end()) || expr[..open].trim_end() != &expr[..open] {
        return None;
    }
    let close = matching_close(expr, open)?;
    (close == expr.len() - 1).then(|| expr.to_string())
}

/// Byte index just past the string literal that opens at `start` (a quote), if it ends.
fn skip_string(bytes: &[u8], start: usize) -> Option<usize> {
    let quote = bytes[start];
    let triple = bytes.get(start..start + 3) == Some(&[quote, quote, quote][..]);
    let width = if triple { 3 } else { 1 };
    let mut i = start + width;
    loop {
        match bytes.get(i)? {
            b'\\' => i += 2,
            &c if c == quote
                && (!triple || bytes.get(i..i + 3) == Some(&[quote, quote, quote][..])) =>
            {
                return Some(i + width);
            }
            b'\n' if !triple => return None,
            _ => i += 1,
        }
    }
}

/// Byte index of the bracket closing the one at `open`, skipping string literals and
/// comments.
fn matching_close(text: &str, open: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut i = open;
    while i < bytes.len() {
        match bytes[i] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            b'\'' | b'"' => {
                i = skip_string(bytes, i)?;
                continue;
            }
            b'#' => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The split of `args` (the text between brackets) at its top-level commas; the whole
/// text as one part where it does not scan.
fn top_level_args(args: &str) -> Vec<&str> {
    let bytes = args.as_bytes();
    let mut parts = Vec::new();
    let (mut start, mut i) = (0, 0);
    while i < bytes.len() {
        let next = match bytes[i] {
            b'(' | b'[' | b'{' => matching_close(args, i).map(|close| close + 1),
            b'\'' | b'"' => skip_string(bytes, i),
            b',' => {
                parts.push(&args[start..i]);
                start = i + 1;
                Some(i + 1)
            }
            _ => Some(i + 1),
        };
        match next {
            Some(next) => i = next,
            None => return vec![args],
        }
    }
    parts.push(&args[start..]);
    parts
}

const ASSERTS: &[&str] = &[
    "assertEqual",
    "assertIs",
    "assertAlmostEqual",
    "assertCountEqual",
    "assertMultiLineEqual",
    "assertSetEqual",
    "assertListEqual",
    "assertDictEqual",
    "assertTrue",
    "assertFalse",
    "assertIsNone",
    "assertIn",
];

/// Calls of `functions` in the unit tests of an exercise folder (`*_test.py`): the
/// first argument of an assertion, or the call under `with self.assertRaises(...)`.
fn test_calls(exercise: &Path, functions: &HashSet<String>) -> Vec<String> {
    let mut tests: Vec<PathBuf> = std::fs::read_dir(exercise)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with("_test.py"))
        })
        .collect();
    tests.sort();
    let mut calls = Vec::new();
    for test in tests {
        let Ok(text) = std::fs::read_to_string(&test) else {
            continue;
        };
        calls.extend(assertion_calls(&text, functions));
        calls.extend(raises_calls(&text, functions));
    }
    dedup(calls)
}

fn assertion_calls(text: &str, functions: &HashSet<String>) -> Vec<String> {
    let mut calls = Vec::new();
    let mut from = 0;
    while let Some(found) = text[from..].find("self.assert") {
        let at = from + found + "self.".len();
        from = at;
        let Some(open) = text[at..].find('(').map(|o| at + o) else {
            break;
        };
        if !ASSERTS.contains(&&text[at..open]) {
            continue;
        }
        let Some(close) = matching_close(text, open) else {
            continue;
        };
        let first = top_level_args(&text[open + 1..close])
            .first()
            .map(|a| a.trim())
            .unwrap_or("");
        if let Some(call) = one_line(first).and_then(|c| single_call(&c, functions)) {
            calls.push(call);
        }
    }
    calls
}

fn raises_calls(text: &str, functions: &HashSet<String>) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut calls = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        if !trimmed.starts_with("with self.assertRaises") {
            continue;
        }
        let Some(next) = lines.get(i + 1) else {
            continue;
        };
        if let Some(call) = single_call(next.trim(), functions) {
            calls.push(call);
        }
    }
    calls
}

/// A call written over several lines, on one line; `None` where a triple-quoted string
/// would make that change its meaning.
fn one_line(text: &str) -> Option<String> {
    if text.contains("\"\"\"") || text.contains("'''") || text.contains('#') {
        return None;
    }
    let joined: Vec<&str> = text.lines().map(str::trim).collect();
    let mut out = String::new();
    for part in joined {
        let glue = !(out.is_empty()
            || out.ends_with(['(', '[', '{'])
            || part.starts_with([')', ']', '}']));
        if glue {
            out.push(' ');
        }
        out.push_str(part);
    }
    Some(out.replace(",)", ")").replace(",]", "]"))
}

fn dedup(calls: Vec<String>) -> Vec<String> {
    let mut seen = HashSet::new();
    calls
        .into_iter()
        .filter(|c| seen.insert(c.clone()))
        .collect()
}

fn limit_per_function(calls: &mut Vec<String>, max: usize) {
    let mut per: BTreeMap<String, usize> = BTreeMap::new();
    calls.retain(|call| {
        let name = call.split('(').next().unwrap_or("").to_string();
        let count = per.entry(name).or_insert(0);
        *count += 1;
        *count <= max
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> ScanOptions {
        let stdlib = ["math", "collections", "typing", "__future__", "doctest"]
            .map(String::from)
            .into();
        ScanOptions {
            stdlib,
            max_calls_per_function: 2,
            max_lines: 200,
        }
    }

    fn write(root: &Path, path: &str, text: &str) {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    const ALGO: &str = r#"import math
from collections import Counter


def area(r: float) -> float:
    """
    >>> area(1.0)
    3.141592653589793
    >>> area(2)  # a comment
    12.566370614359172
    >>> area(3)
    28.274333882308138
    >>> x = 3
    >>> area(x) + 1
    29.274333882308138
    >>> helper(
    ...     1)
    >>> print(area(1))
    3.141592653589793
    >>> area("a, b)")
    Traceback (most recent call last):
    TypeError: bad
    """
    return math.pi * r * r


def helper(n):
    """
    >>> helper(f(1))
    """
    return n


if __name__ == "__main__":
    import doctest

    doctest.testmod()
    print(area(int(input())))
"#;

    #[test]
    fn doctests_give_calls_of_top_level_functions() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "algos/geometry/area.py", ALGO);
        write(
            dir.path(),
            "algos/uses_numpy.py",
            "import numpy as np\n\ndef f(x):\n    \"\"\">>> f(1)\"\"\"\n",
        );
        write(
            dir.path(),
            "algos/relative.py",
            "from .area import area\n\ndef f(x):\n    \"\"\">>> f(1)\"\"\"\n",
        );
        write(dir.path(), "algos/no_calls.py", "def f(x):\n    return x\n");
        let (programs, stats) = scan(dir.path(), &options()).unwrap();
        let calls: Vec<&str> = programs.iter().map(|p| p.call.as_str()).collect();
        // At most two per function; the comment-ended line is not a bare call; `x` lines,
        // continued lines and print() are not single calls of a defined function.
        assert_eq!(calls, ["area(1.0)", "area(3)", "helper(f(1))"]);
        assert!(programs.iter().all(|p| p.origin == "algos"));
        assert!(
            !programs[0].source.contains("__main__") && !programs[0].source.contains("input()")
        );
        assert!(programs[0].source.ends_with("return n\n"));
        assert_eq!(stats.files, 4);
        assert_eq!(stats.files_with_calls, 1);
        assert_eq!(stats.skipped["imports outside the standard library"], 2);
        assert_eq!(stats.skipped["no usable calls"], 1);
        assert_eq!(stats.calls_by_origin["algos"], 3);
    }

    #[test]
    fn exercise_tests_give_calls_of_the_example_solution() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "ex/practice/rebase/.meta/example.py",
            "def rebase(a, digits, b):\n    return digits\n",
        );
        write(
            dir.path(),
            "ex/practice/rebase/rebase_test.py",
            "import unittest\nfrom rebase import (\n    rebase,\n)\n\nclass T(unittest.TestCase):\n    def test_a(self):\n        self.assertEqual(rebase(2, [1, 0], 10), [2])\n\n    def test_b(self):\n        self.assertEqual(\n            rebase(3, [\"a,b\", (1, 2)],\n                   16),\n            [1],\n        )\n\n    def test_c(self):\n        with self.assertRaises(ValueError) as err:\n            rebase(1, [], 10)\n        self.assertEqual(err.exception.args[0], \"bad\")\n\n    def test_d(self):\n        self.assertIs(other(1), True)\n",
        );
        let options = ScanOptions {
            max_calls_per_function: 10,
            ..options()
        };
        let (programs, stats) = scan(dir.path(), &options).unwrap();
        let calls: Vec<&str> = programs.iter().map(|p| p.call.as_str()).collect();
        assert_eq!(
            calls,
            [
                "rebase(2, [1, 0], 10)",
                "rebase(3, [\"a,b\", (1, 2)], 16)",
                "rebase(1, [], 10)"
            ]
        );
        assert_eq!(stats.files, 1, "test files are not programs");
        assert_eq!(programs[0].origin, "ex");
    }

    #[test]
    fn brackets_and_arguments_split_around_strings() {
        assert_eq!(matching_close("f(a, ')', [1, (2)])", 1), Some(18));
        assert_eq!(matching_close("f('''x)''')", 1), Some(10));
        assert_eq!(matching_close("f(1", 1), None);
        assert_eq!(
            top_level_args("g(1, 2), 'a,b', [3, 4]"),
            ["g(1, 2)", " 'a,b'", " [3, 4]"]
        );
    }

    #[test]
    fn the_standard_library_comes_from_python() {
        let stdlib = stdlib_modules(&crate::tracer::python()).unwrap();
        assert!(stdlib.contains("math") && stdlib.contains("collections"));
        assert!(!stdlib.contains("numpy"));
    }
}
