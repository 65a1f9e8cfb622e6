//! A seeded mutation fuzzer over everything that reads untrusted text: DAP framing
//! (bytes from the editor or a TCP peer), reprs and literals (values the user types in
//! setVariable, evaluate or a call), program text (the debuggee, read without Python)
//! and the trace language (a model's prediction). No input may panic or overflow the
//! stack; an error is the right answer to garbage.
//!
//! CI runs a bounded number of executions. A long run, with the count printed:
//!   NEURAL_FUZZ_EXECS=10000000 cargo test --release -p neural-dap --test fuzz -- --nocapture

use neural_dap::framing::FrameReader;
use neural_model::repr::Repr;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Inputs that mutations start from: one of each shape the parsers meet.
const SEEDS: &[&str] = &[
    "Content-Length: 2\r\n\r\n{}",
    "Content-Length: 58\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{\"seq\":1,\"type\":\"request\",\"command\":\"initialize\"}xxxxxxx",
    "[1, (2, 'a'), {'k': [3.5, None]}, {4, 5}, frozenset({6})]",
    "Point(x=1, y=[2, 3], inner=Node(value='π', next=None))",
    "{'a': {'b': {'c': ()}}, 1: -2e-3, 'q': \"it's\"}",
    "b'\\x00\\n' + 'tab\\t' * 3",
    "def f(a, b=2, *args, **kw):\n    \"\"\"doc\"\"\"\n    for i in range(a):\n        if i % 2:\n            b += i  # odd\n    return [x * 2 for x in args]\n\n\nprint(f(3, 4, 5))\n",
    "class C:\n    def m(self):\n        try:\n            return {1: (2,\n                3)}\n        except (ValueError, KeyError) as e:\n            raise\n        finally:\n            pass\nπ = 3\nx = '''a\nb''' if π else f\"{π!r:>4}\"\n",
    "line 3\n  x = 1\n  y = [1, 2]\nreturn 4\ncall f:7\n  n = 2\n",
];

/// Pieces that mutations splice in: the parsers' delimiters and the ways they nest.
const TOKENS: &[&str] = &[
    "Content-Length: ",
    "Content-Type: x",
    "\r\n",
    "\r\n\r\n",
    "\n",
    "{",
    "}",
    "[",
    "]",
    "(",
    ")",
    "'",
    "\"",
    "\"\"\"",
    "'''",
    "\\",
    ",",
    ":",
    "=",
    "#",
    "def ",
    "class ",
    "    ",
    "\t",
    "π",
    "\u{1F600}",
    "\0",
    "-",
    "999999999999999999999",
    "1e309",
    "frozenset({",
    "...",
    "x=",
    "f\"{",
    "lambda: ",
    "\\\n",
];

/// splitmix64: a tiny, seeded, reproducible source of randomness.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// One input: a seed with a few random edits.
fn mutate(rng: &mut Rng) -> Vec<u8> {
    let mut input = SEEDS[rng.below(SEEDS.len())].as_bytes().to_vec();
    for _ in 0..1 + rng.below(8) {
        let at = rng.below(input.len() + 1);
        match rng.below(7) {
            0 => input.insert(at, rng.next() as u8),
            1 => {
                let end = (at + 1 + rng.below(16)).min(input.len());
                input.drain(at..end);
            }
            2 | 3 => {
                let token = TOKENS[rng.below(TOKENS.len())].as_bytes();
                input.splice(at..at, token.iter().copied());
            }
            4 => {
                // Deep nesting: the input shape that once overflowed the stack.
                let open = [b"[", b"(", b"{"][rng.below(3)];
                let most = if rng.below(50) == 0 { 20_000 } else { 300 };
                let depth = 1 + rng.below(most);
                let nest: Vec<u8> = open.repeat(depth);
                input.splice(at..at, nest);
            }
            5 => {
                // Repeat a slice of the input (long lines, many messages).
                let end = (at + rng.below(64)).min(input.len());
                let piece = input[at..end].to_vec();
                for _ in 0..rng.below(8) {
                    input.splice(at..at, piece.iter().copied());
                }
            }
            _ => {
                if let Some(byte) = input.get_mut(at) {
                    *byte ^= 1 << rng.below(8);
                }
            }
        }
    }
    input
}

/// Every reader of untrusted text, on one input. `parse_tree`: the syntax check too,
/// whose tree-sitter parse costs 20 times the rest (so it runs on every 8th input).
fn exercise(runtime: &tokio::runtime::Runtime, bytes: &[u8], parse_tree: bool) {
    runtime.block_on(async {
        let mut reader = FrameReader::new(bytes);
        for _ in 0..64 {
            match reader.next().await {
                Ok(Some(_)) => {}
                Err(e) if e.is_recoverable() => {}
                Ok(None) | Err(_) => break,
            }
        }
    });
    let text = String::from_utf8_lossy(bytes);
    let repr = Repr::parse(&text);
    for child in repr.children() {
        let _ = child.value.children();
    }
    let _ = neural_model::repr::type_name(&text);
    let _ = neural_model::entry::literal_repr(&text);
    let _ = neural_model::entry::elements(&text);
    let _ = neural_model::entry::dict_items(&text);
    let _ = neural_model::entry::entry_state(&text, None);
    let _ = neural_model::entry::entry_state(&text, Some(&text));
    let _ = neural_model::program::executable_lines(&text);
    if parse_tree {
        let _ = neural_model::program::syntax::check(&text);
    }
    let _ = neural_model::language::parse_outcome(&text, None);
    let _ = neural_model::language::parse_action(&text);
}

#[test]
fn no_input_panics_any_reader_of_untrusted_text() {
    let execs: u64 = std::env::var("NEURAL_FUZZ_EXECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    let seed: u64 = std::env::var("NEURAL_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let mut rng = Rng(seed);
    let started = std::time::Instant::now();
    for exec in 0..execs {
        let input = mutate(&mut rng);
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            exercise(&runtime, &input, exec % 8 == 0)
        }));
        if outcome.is_err() {
            let path = std::env::temp_dir().join(format!("neural-fuzz-crash-{seed}-{exec}"));
            let _ = std::fs::write(&path, &input);
            panic!(
                "execution {exec} (seed {seed}) panicked; its input is in {}",
                path.display()
            );
        }
        if exec > 0 && exec % 1_000_000 == 0 {
            eprintln!(
                "{exec} executions, {:.0} s",
                started.elapsed().as_secs_f64()
            );
        }
    }
    eprintln!(
        "fuzz: {execs} executions from seed {seed} without a panic in {:.1} s",
        started.elapsed().as_secs_f64()
    );
}
