//! The terminal debugger end to end: the built binary, the trace engine (real Python),
//! the shipped examples. Each test runs a `--script` and checks the transcript.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples")
}

/// Run `neural-dap cli` from the examples folder (so paths in the transcript are short).
fn cli(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_neural-dap"))
        .current_dir(examples())
        .arg("cli")
        .args(args)
        .output()
        .expect("the neural-dap binary runs")
}

fn script(program: &str, commands: &str) -> String {
    let output = cli(&[program, "--engine", "trace", "--script", commands]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "exit {:?}; stderr: {stderr}",
        output.status
    );
    String::from_utf8(output.stdout).expect("utf-8 transcript")
}

/// The transcript after the command `command` (its echo line excluded) up to the next prompt.
fn after<'a>(transcript: &'a str, command: &str) -> &'a str {
    let echo = format!("(ndb) {command}\n");
    let start = transcript
        .find(&echo)
        .unwrap_or_else(|| panic!("no {echo:?} in {transcript}"));
    let rest = &transcript[start + echo.len()..];
    &rest[..rest.find("(ndb) ").unwrap_or(rest.len())]
}

#[test]
fn the_readme_demo_stops_steps_prints_and_steps_back() {
    let text = script("fib.py", "b 6; c; n; p a; w; back; p a");
    let expected = "\
> fib.py(2)<module>()  [entry]
-> def fib(n):
(ndb) b 6
Breakpoint at fib.py:6
(ndb) c
> fib.py(6)fib()  [breakpoint]
-> a, b = b, a + b
(ndb) n
> fib.py(7)fib()  [step]
-> print(a)
(ndb) p a
1
(ndb) w
  fib.py(13)<module>()
-> total = total + fib(k)
> fib.py(7)fib()
-> print(a)
(ndb) back
> fib.py(6)fib()  [step]
-> a, b = b, a + b
(ndb) p a
0
";
    assert_eq!(text, expected);
}

#[test]
fn program_output_comes_with_the_move_that_printed_it_and_only_once() {
    let text = script("fib.py", "b 8; c; c; rc; c; cl 8; c");
    // First return of fib(3): it printed 1, 1, 2 on the way.
    assert_eq!(after(&text, "b 8"), "Breakpoint at fib.py:8\n");
    let first = text.split("(ndb) c\n").nth(1).unwrap();
    assert!(
        first.starts_with("1\n1\n2\n> fib.py(8)fib()  [breakpoint]\n-> return a\n"),
        "{first}"
    );
    let second = text.split("(ndb) c\n").nth(2).unwrap();
    assert!(
        second.starts_with("1\n1\n2\n3\n5\n> fib.py(8)fib()  [breakpoint]\n"),
        "{second}"
    );
    // Back to the first hit and forward again: nothing is printed twice.
    assert_eq!(
        after(&text, "rc"),
        "> fib.py(8)fib()  [breakpoint]\n-> return a\n"
    );
    let third = text.split("(ndb) c\n").nth(3).unwrap();
    assert!(
        third.starts_with("> fib.py(8)fib()  [breakpoint]\n"),
        "{third}"
    );
    assert_eq!(after(&text, "cl 8"), "Cleared breakpoint at fib.py:8\n");
    assert!(text.ends_with(
        "(ndb) c\ntotal 7\n--- The program exited normally.\n--- The run is over: restart to debug it again, q to quit.\n"
    ), "{text}");
}

#[test]
fn step_into_out_and_back_return_to_the_same_states() {
    let text = script("fib.py", "b 13; c; s; s; p n; r; p total; back; p k; s; s");
    let into = "--Call--\n> fib.py(2)fib()  [step]\n-> def fib(n):\n";
    assert_eq!(after(&text, "s"), into);
    assert_eq!(after(&text, "p n"), "3\n");
    // Out of fib(3) and on to the caller's next line: the loop, with the sum stored.
    assert_eq!(
        after(&text, "r"),
        "1\n1\n2\n> fib.py(12)<module>()  [step]\n-> for k in [3, 5]:\n"
    );
    assert_eq!(after(&text, "p total"), "2\n");
    // Back: the line that called fib, before the sum was stored, as at the breakpoint.
    assert_eq!(
        after(&text, "back"),
        "> fib.py(13)<module>()  [step]\n-> total = total + fib(k)\n"
    );
    assert_eq!(after(&text, "p k"), "3\n");
    // Forward again: the same call, the same first line, nothing printed twice.
    let again: Vec<&str> = text.split("(ndb) s\n").collect();
    assert_eq!(again.len(), 5, "{text}");
    assert_eq!(again[3], into);
    assert_eq!(again[4], "> fib.py(3)fib()  [step]\n-> a = 0\n");
}

#[test]
fn an_uncaught_exception_stops_where_it_is_raised_then_ends_the_run() {
    let text = script(
        "account.py",
        "c; p amount; p self.balance; locals; w; rc; c; c; back",
    );
    let first_c = after(&text, "c");
    assert_eq!(
        first_c,
        "left 7\n--Exception-- ValueError('insufficient funds')\n\
         > account.py(8)withdraw()  [exception]\n-> raise ValueError(\"insufficient funds\")\n"
    );
    assert_eq!(after(&text, "p amount"), "20\n");
    assert_eq!(after(&text, "p self.balance"), "7\n");
    assert_eq!(
        after(&text, "locals"),
        "self = Account(balance=7)\namount = 20\n(exception) = ValueError('insufficient funds')\n"
    );
    assert_eq!(
        after(&text, "w"),
        "  account.py(16)<module>()\n-> left = acct.withdraw(20)\n> account.py(8)withdraw()\n-> raise ValueError(\"insufficient funds\")\n"
    );
    assert_eq!(
        after(&text, "rc"),
        "> account.py(2)<module>()  [entry]\n-> class Account:\n"
    );
    assert!(
        text.contains(
            "(ndb) c\n--- The program exited with uncaught ValueError: insufficient funds.\n"
        ),
        "{text}"
    );
    assert!(
        after(&text, "back")
            .starts_with("*** the program has ended (exited with uncaught ValueError"),
        "{text}"
    );
}

#[test]
fn set_is_refused_clearly_by_the_trace_engine_and_errors_keep_the_prompt() {
    let text = script(
        "account.py",
        "b 9; c; set amount 1; frob; p nope; b 99; b x; n 2; p amount",
    );
    assert!(
        after(&text, "set amount 1").starts_with(
            "*** cannot set amount: the trace engine replays a recorded run and cannot change its past"
        ),
        "{text}"
    );
    assert_eq!(
        after(&text, "frob"),
        "*** unknown command \"frob\": type h for help\n"
    );
    assert_eq!(after(&text, "p nope"), "*** nope is not defined here\n");
    assert_eq!(
        after(&text, "b 99"),
        "*** no code on or after line 99 of account.py: no breakpoint set\n"
    );
    assert_eq!(
        after(&text, "b x"),
        "*** b needs a line number, e.g. b 12 (got \"x\")\n"
    );
    assert_eq!(after(&text, "n 2"), "*** n takes no argument (got \"2\")\n");
    // Every line above is one line, and the session is still at the breakpoint.
    assert_eq!(after(&text, "p amount"), "3\n");
}

#[test]
fn list_marks_the_current_line_and_breakpoints() {
    let text = script("fib.py", "b 5; b 12; l; b");
    assert_eq!(after(&text, "b 5"), "Breakpoint at fib.py:5\n");
    assert_eq!(
        after(&text, "l"),
        "  1     # Fibonacci numbers, two at a time, summed over a list of sizes.\n\
         \x20 2  -> def fib(n):\n\
         \x20 3         a = 0\n\
         \x20 4         b = 1\n\
         \x20 5 B       for i in range(n):\n\
         \x20 6             a, b = b, a + b\n\
         \x20 7             print(a)\n\
         \x20 8         return a\n\
         \x20 9     \n\
         \x2010     \n\
         \x2011     total = 0\n"
    );
    assert_eq!(after(&text, "b"), "Breakpoints at lines 5, 12\n");
}

#[test]
fn a_call_starts_at_the_function_with_its_arguments() {
    let text = script("fib.py", "p n; c");
    assert!(text.starts_with("> fib.py(2)<module>()"), "{text}");
    let output = cli(&[
        "fib.py", "--engine", "trace", "--call", "fib(4)", "--script", "p n; c",
    ]);
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(
        text.starts_with("--Call--\n> fib.py(2)fib()  [entry]\n-> def fib(n):\n"),
        "{text}"
    );
    assert_eq!(after(&text, "p n"), "4\n");
    assert!(
        text.contains("1\n1\n2\n3\n--- The program exited normally.\n"),
        "{text}"
    );
}

#[test]
fn a_missing_program_fails_to_start_with_exit_code_1() {
    let output = cli(&["no_such_program.py", "--engine", "trace", "--script", "n"]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("cannot read no_such_program.py"),
        "{stderr}"
    );
    assert!(output.stdout.is_empty());
}

#[test]
fn interactive_mode_reads_commands_from_stdin_until_end_of_input() {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_neural-dap"))
        .current_dir(examples())
        .args(["cli", "fib.py", "--engine", "trace"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // An empty line repeats the last command, as in pdb.
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"n\n\np total\n")
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    assert_eq!(
        text,
        "> fib.py(2)<module>()  [entry]\n-> def fib(n):\n\
         (ndb) > fib.py(11)<module>()  [step]\n-> total = 0\n\
         (ndb) > fib.py(12)<module>()  [step]\n-> for k in [3, 5]:\n\
         (ndb) 0\n(ndb) \n"
    );
}

#[test]
fn the_dap_server_is_still_the_default() {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_neural-dap"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let body =
        r#"{"seq":1,"type":"request","command":"initialize","arguments":{"adapterID":"neural"}}"#;
    let message = format!("Content-Length: {}\r\n\r\n{body}", body.len());
    child
        .stdin
        .take()
        .unwrap()
        .write_all(message.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.starts_with("Content-Length: "), "{text}");
    assert!(text.contains("\"supportsStepBack\":true"), "{text}");
}

#[test]
fn program_arguments_follow_a_double_dash() {
    let dir = std::env::temp_dir().join(format!("neural-cli-args-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let program = dir.join("argv.py");
    std::fs::write(&program, "import sys\nprint(sys.argv[1:])\n").unwrap();
    let output = cli(&[
        program.to_str().unwrap(),
        "--engine",
        "trace",
        "--script",
        "c",
        "--",
        "-v",
        "two words",
    ]);
    let transcript = String::from_utf8_lossy(&output.stdout);
    assert!(transcript.contains("['-v', 'two words']"), "{transcript}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn unicode_names_work_at_the_terminal() {
    // This panicked at start in lines.rs ("byte index 1 is not a char boundary").
    let text = script(
        "../protocol-tests/programs/unicode.py",
        "b 3; c; p π; n; p τ",
    );
    assert!(text.contains("[breakpoint]\n-> τ = 2 * π\n"), "{text}");
    assert_eq!(after(&text, "p π"), "3\n");
    assert_eq!(after(&text, "p τ"), "6\n");
}
