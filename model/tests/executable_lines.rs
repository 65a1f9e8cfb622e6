//! The lines a breakpoint can stop on, read from the source alone, against CPython's
//! own line table (`co_lines()` of every code object) on the test programs and the
//! shipped examples. Every line offered must hold code, and every statement whose
//! first line holds code must be offered.
//!
//! `NEURAL_LINES_DIRS=dir1:dir2 cargo test --release --test executable_lines -- --nocapture`
//! also measures other folders of programs (such as ../shared/corpus) and prints the
//! counts; it asserts only on the shipped programs.

use neural_model::program::{executable_lines, lexer::logical_lines};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Lines CPython gives bytecode to, over the module and every nested code object;
/// `None` if CPython cannot compile the file.
fn cpython_lines(path: &Path) -> Option<BTreeSet<u32>> {
    let script = "import sys\n\
        def walk(code, out):\n\
        \x20   out.update(l for _, _, l in code.co_lines() if l)\n\
        \x20   for k in code.co_consts:\n\
        \x20       if hasattr(k, 'co_lines'): walk(k, out)\n\
        try:\n\
        \x20   code = compile(open(sys.argv[1], 'rb').read(), sys.argv[1], 'exec')\n\
        except (SyntaxError, ValueError): sys.exit(3)\n\
        out = set(); walk(code, out); print(' '.join(map(str, sorted(out))))\n";
    let python = std::env::var("NEURAL_PYTHON").unwrap_or_else(|_| "python3".into());
    let output = Command::new(python)
        .args(["-I", "-S", "-c", script])
        .arg(path)
        .output()
        .expect("python3 runs (set NEURAL_PYTHON to its path)");
    if !output.status.success() {
        return None;
    }
    let text = String::from_utf8(output.stdout).unwrap();
    Some(
        text.split_whitespace()
            .map(|l| l.parse().unwrap())
            .collect(),
    )
}

#[derive(Default, Debug)]
struct Tally {
    files: usize,
    offered: usize,
    /// Offered, but CPython has no code there.
    without_code: Vec<String>,
    /// A statement's first line that holds code, not offered.
    missed: Vec<String>,
}

fn measure(files: &[PathBuf]) -> Tally {
    let mut tally = Tally::default();
    for path in files {
        let Ok(source) = std::fs::read_to_string(path) else {
            continue;
        };
        let Some(truth) = cpython_lines(path) else {
            continue;
        };
        tally.files += 1;
        let ours: BTreeSet<u32> = executable_lines(&source).into_iter().collect();
        tally.offered += ours.len();
        let firsts: BTreeSet<u32> = logical_lines(&source)
            .into_iter()
            .map(|(first, _)| first as u32 + 1)
            .collect();
        let name = path.display();
        tally
            .without_code
            .extend(ours.difference(&truth).map(|l| format!("{name}:{l}")));
        tally.missed.extend(
            truth
                .intersection(&firsts)
                .filter(|l| !ours.contains(l))
                .map(|l| format!("{name}:{l}")),
        );
    }
    tally
}

fn python_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "py") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

#[test]
fn breakpoint_lines_agree_with_cpythons_line_table() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut files = python_files(&root.join("tests/programs"));
    files.extend(python_files(&root.join("../examples")));
    let tally = measure(&files);
    assert!(tally.files >= 20, "{tally:?}");
    assert!(
        tally.without_code.is_empty(),
        "offered without code: {:?}",
        tally.without_code
    );
    assert!(tally.missed.is_empty(), "missed: {:?}", tally.missed);

    for dir in std::env::var("NEURAL_LINES_DIRS")
        .unwrap_or_default()
        .split(':')
    {
        if dir.is_empty() {
            continue;
        }
        let tally = measure(&python_files(Path::new(dir)));
        println!(
            "{dir}: {} files, {} lines offered, {} without code, {} missed",
            tally.files,
            tally.offered,
            tally.without_code.len(),
            tally.missed.len()
        );
        for line in tally.without_code.iter().chain(&tally.missed).take(40) {
            println!("  {line}");
        }
    }
}
