//! One or more tests per rule, each named after it: a program, the state the run
//! stands in, an action, and what the rule says of the next state. No weights.

use super::*;
use crate::language;
use crate::state::{Event, Frame};
use crate::Action;

/// A state of `program` on `line` (its text from the program), in `function` at
/// `depth`, holding `locals`; its callers are `stack` (outermost first).
fn state(
    program: &ProgramModel,
    event: Event,
    line: u32,
    function: &str,
    stack: &[(&str, u32)],
    locals: &[(&str, &str)],
) -> State {
    State {
        event,
        line,
        source: program.lines[line as usize - 1].clone(),
        function: function.into(),
        depth: stack.len() as u32,
        stack: stack
            .iter()
            .map(|&(function, line)| Frame {
                function: function.into(),
                line,
            })
            .collect(),
        locals: locals
            .iter()
            .map(|&(n, v)| (n.to_string(), v.to_string()))
            .collect(),
        globals: Default::default(),
        value: None,
        stdout: String::new(),
    }
}

/// A `line` state of `add` (called from line 6) in [`CALLS`].
fn line_in_add(program: &ProgramModel, line: u32, locals: &[(&str, &str)]) -> State {
    state(
        program,
        Event::Line,
        line,
        "add",
        &[("<module>", 6)],
        locals,
    )
}

/// A `line` state of the module.
fn module_line(program: &ProgramModel, line: u32, locals: &[(&str, &str)]) -> State {
    state(program, Event::Line, line, "<module>", &[], locals)
}

fn lines(set: &[u32]) -> BTreeSet<u32> {
    set.iter().copied().collect()
}

/// The values a binding allows each name, as reprs (not their JSON text).
fn options(bindings: Option<&Bindings>) -> Vec<(String, Vec<String>)> {
    let decode = |o: &String| serde_json::from_str::<String>(o).unwrap();
    bindings
        .expect("the rule binds")
        .targets
        .iter()
        .map(|t| (t.name.clone(), t.options.iter().map(decode).collect()))
        .collect()
}

fn named(pairs: &[(&str, &[&str])]) -> Vec<(String, Vec<String>)> {
    pairs
        .iter()
        .map(|(n, vs)| (n.to_string(), vs.iter().map(|v| v.to_string()).collect()))
        .collect()
}

const CALLS: &str = "\
def add(a, b):
    total = a + b
    return total

x = 5
y = add(x, 2)
print(y)
";

// --- frames: a step stays in its frame, goes one call deeper, or back to the caller

#[test]
fn frames_a_step_into_from_a_line_calls_one_deeper() {
    let p = ProgramModel::of(CALLS);
    let prev = module_line(&p, 6, &[("x", "5")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
    assert_eq!(next.frames("<|call|>"), Some(vec![(1, None)]));
    assert_eq!(next.frames("<|line|>"), Some(vec![(0, Some("<module>"))]));
}

#[test]
fn frames_after_a_return_the_step_is_in_the_caller() {
    let p = ProgramModel::of(CALLS);
    let prev = state(&p, Event::Return, 3, "add", &[("<module>", 6)], &[]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    assert_eq!(next.frames("<|line|>"), Some(vec![(0, Some("<module>"))]));
}

#[test]
fn frames_after_an_exception_it_may_be_caught_here_or_in_the_caller() {
    let p = ProgramModel::of(CALLS);
    let prev = state(&p, Event::Exception, 2, "add", &[("<module>", 6)], &[]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
    assert_eq!(
        next.frames("<|line|>"),
        Some(vec![(1, Some("add")), (0, Some("<module>"))])
    );
}

#[test]
fn frames_one_step_back_from_a_call_is_the_callers_line() {
    let p = ProgramModel::of(CALLS);
    let prev = state(&p, Event::Call, 1, "add", &[("<module>", 6)], &[]);
    let next = NextState::new(&p, &prev, None, None, &Action::InvStepInto);
    assert_eq!(next.frames("<|line|>"), Some(vec![(0, Some("<module>"))]));
    assert_eq!(next.frames("<|return|>"), Some(vec![(1, None)]));
}

#[test]
fn frames_one_step_back_into_a_call_lands_on_its_return() {
    let p = ProgramModel::of(CALLS);
    let prev = module_line(&p, 7, &[]);
    let next = NextState::new(&p, &prev, None, None, &Action::InvStepInto);
    assert_eq!(next.frames("<|return|>"), Some(vec![(1, None)]));
    assert_eq!(next.frames("<|line|>"), Some(vec![(0, Some("<module>"))]));
}

#[test]
fn frames_continue_can_go_anywhere() {
    let p = ProgramModel::of(CALLS);
    let prev = module_line(&p, 5, &[]);
    let next = NextState::new(&p, &prev, None, None, &Action::Continue);
    assert_eq!(next.frames("<|line|>"), None);
}

// --- flow_lines: where control flow goes

#[test]
fn flow_lines_a_plain_line_goes_to_the_next() {
    let p = ProgramModel::of(CALLS);
    let prev = module_line(&p, 5, &[]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    assert_eq!(next.flow_lines("<|line|>"), Some((0, lines(&[6]))));
}

#[test]
fn flow_lines_a_return_may_report_a_loop_or_a_long_statement_again() {
    let source = "\
def f(v):
    return v

for v in (1, 2): f(v)
w = [f(v) for v in (3, 4)]
z = (f(1) +
     f(2))
";
    let p = ProgramModel::of(source);
    for (line, again) in [(4, true), (5, true), (7, true)] {
        let prev = state(&p, Event::Return, 2, "f", &[("<module>", line)], &[]);
        let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
        let (_, reached) = next.flow_lines("<|line|>").unwrap();
        assert_eq!(reached.contains(&line), again, "from line {line}");
    }
}

#[test]
fn flow_lines_an_if_or_while_on_a_shown_value_goes_where_its_truth_says() {
    let source = "\
def f(xs, n):
    if xs:
        n = 1
    while not n:
        n = 2
    return n
";
    let p = ProgramModel::of(source);
    let after = |line: u32, locals: &[(&str, &str)]| {
        let prev = state(&p, Event::Line, line, "f", &[], locals);
        let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
        next.flow_lines("<|line|>").map(|(_, lines)| lines)
    };
    assert_eq!(after(2, &[("xs", "[]")]), Some(lines(&[4])));
    assert_eq!(after(2, &[("xs", "[0]")]), Some(lines(&[3])));
    assert_eq!(after(4, &[("n", "0")]), Some(lines(&[5])));
    assert_eq!(after(4, &[("n", "'0'")]), Some(lines(&[6])));
    // An object may define its own truth; a name not shown says nothing.
    assert_eq!(after(2, &[("xs", "Box(1)")]), Some(lines(&[3, 4])));
    assert_eq!(after(2, &[]), Some(lines(&[3, 4])));
}

#[test]
fn flow_lines_an_if_goes_where_its_comparison_of_shown_values_says() {
    let source =
        "def f(n):\n    if n > 0:\n        n = 1\n    else:\n        n = 2\n    return n\n";
    let p = ProgramModel::of(source);
    let after = |locals: &[(&str, &str)]| {
        let prev = state(&p, Event::Line, 2, "f", &[], locals);
        NextState::new(&p, &prev, None, None, &Action::StepOver).flow_lines("<|line|>")
    };
    assert_eq!(after(&[("n", "3")]), Some((0, lines(&[3]))));
    assert_eq!(after(&[("n", "-1")]), Some((0, lines(&[5]))));
    // A value the state does not show, or one whose comparison could run code.
    assert_eq!(after(&[]), Some((0, lines(&[3, 5]))));
    assert_eq!(after(&[("n", "Box(1)")]), Some((0, lines(&[3, 5]))));
}

#[test]
fn flow_lines_a_frame_returns_only_after_a_statement_that_ends_it() {
    let p = ProgramModel::of(CALLS);
    let middle = line_in_add(&p, 2, &[]);
    let next = NextState::new(&p, &middle, None, None, &Action::StepOver);
    assert_eq!(next.flow_lines("<|return|>"), Some((1, lines(&[]))));
    let last = line_in_add(&p, 3, &[]);
    let next = NextState::new(&p, &last, None, None, &Action::StepOver);
    assert_eq!(next.flow_lines("<|return|>"), Some((1, lines(&[3]))));
}

#[test]
fn flow_lines_a_step_into_calls_what_the_line_can_call() {
    let p = ProgramModel::of(CALLS);
    let prev = module_line(&p, 6, &[("x", "5")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
    assert_eq!(next.flow_lines("<|call|>"), Some((1, lines(&[1]))));
}

#[test]
fn headers_a_step_into_a_line_that_surely_calls_stops_in_the_call() {
    let p = ProgramModel::of(CALLS);
    let prev = module_line(&p, 6, &[("x", "5")]);
    let into = NextState::new(&p, &prev, None, None, &Action::StepInto);
    assert!(into.enters_call());
    assert!(into.headers("<|line|>", false).is_empty());
    assert!(into.headers("<|return|>", false).is_empty());
    assert!(!into.headers("<|call|>", false).is_empty());
    // The arguments may raise first; a Step Over goes on to the next line.
    assert!(!into.headers("<|exception|>", false).is_empty());
    let over = NextState::new(&p, &prev, None, None, &Action::StepOver);
    assert!(!over.headers("<|line|>", false).is_empty());
    // A function bound again elsewhere may be another when called.
    let rebound = ProgramModel::of(&format!("{CALLS}add = max\n"));
    let prev = module_line(&rebound, 6, &[("x", "5")]);
    let into = NextState::new(&rebound, &prev, None, None, &Action::StepInto);
    assert!(!into.enters_call());
    // A docstring's words bind nothing: `>>> add(1, 2)` is text.
    let documented = "def add(a, b):\n    \"\"\"Sum.\n\n    >>> add = 3\n    \"\"\"\n    return a + b\n\ny = add(1, 2)\n";
    let p = ProgramModel::of(documented);
    let prev = module_line(&p, 8, &[]);
    assert!(NextState::new(&p, &prev, None, None, &Action::StepInto).enters_call());
}

#[test]
fn flow_lines_a_fresh_call_goes_to_its_first_line() {
    let source = "N = 3\n\ndef add(a, b):\n    total = a + b\n    return total\n\nadd(N, 1)\n";
    let p = ProgramModel::of(source);
    let prev = state(&p, Event::Call, 3, "add", &[("<module>", 7)], &[]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
    assert_eq!(next.flow_lines("<|line|>"), Some((1, lines(&[4]))));
}

#[test]
fn flow_lines_back_in_the_caller_after_a_return_past_its_calling_line() {
    let p = ProgramModel::of(CALLS);
    let prev = state(&p, Event::Return, 3, "add", &[("<module>", 6)], &[]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    assert_eq!(next.flow_lines("<|line|>"), Some((0, lines(&[7]))));
}

#[test]
fn flow_lines_a_step_out_returns_from_a_line_that_ends_the_frame() {
    let p = ProgramModel::of(CALLS);
    let prev = line_in_add(&p, 2, &[]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepReturn);
    assert_eq!(next.flow_lines("<|return|>"), Some((1, lines(&[3]))));
}

#[test]
fn flow_lines_backward_the_lines_that_lead_here() {
    let p = ProgramModel::of(CALLS);
    let prev = module_line(&p, 7, &[]);
    let next = NextState::new(&p, &prev, None, None, &Action::InvStepOver);
    assert_eq!(next.flow_lines("<|line|>"), Some((0, lines(&[6]))));
}

const LOOP: &str = "\
def f(xs):
    total = 0
    for x in xs:
        total += x
    return total
";

#[test]
fn flow_lines_a_loop_starting_on_items_goes_into_its_block() {
    let p = ProgramModel::of(LOOP);
    let prev = state(
        &p,
        Event::Line,
        3,
        "f",
        &[],
        &[("xs", "[1, 2]"), ("total", "0")],
    );
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    assert_eq!(next.flow_lines("<|line|>"), Some((0, lines(&[4]))));
}

#[test]
fn flow_lines_a_loop_past_its_last_item_goes_out() {
    let p = ProgramModel::of(LOOP);
    let from = state(
        &p,
        Event::Line,
        4,
        "f",
        &[],
        &[("xs", "[1, 2]"), ("total", "1"), ("x", "2")],
    );
    let prev = state(
        &p,
        Event::Line,
        3,
        "f",
        &[],
        &[("xs", "[1, 2]"), ("total", "3"), ("x", "2")],
    );
    let next = NextState::new(&p, &prev, Some(&from), None, &Action::StepOver);
    assert_eq!(next.flow_lines("<|line|>"), Some((0, lines(&[5]))));
}

// --- header_admits and some_line: where a state can stand

fn admits(next: &NextState, text: &str) -> bool {
    let split = text.find("|>").unwrap() + 2;
    let trie = next.headers(&text[..split], false).trie(next.program);
    trie.walk(&text.as_bytes()[split..]).is_on()
}

#[test]
fn header_admits_the_line_control_flow_reaches() {
    let p = ProgramModel::of(CALLS);
    let prev = module_line(&p, 5, &[]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    assert!(admits(&next, "<|line|>6 0 <module>\n"));
    assert!(!admits(&next, "<|line|>7 0 <module>\n"));
}

#[test]
fn header_admits_no_function_but_the_lines() {
    let p = ProgramModel::of(CALLS);
    let prev = module_line(&p, 5, &[]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    assert!(!admits(&next, "<|line|>6 0 add\n"));
    assert!(!admits(&next, "<|line|>6 1 <module>\n"));
}

#[test]
fn header_admits_prefixes_of_what_it_admits() {
    let p = ProgramModel::of(CALLS);
    let prev = module_line(&p, 5, &[]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    assert!(admits(&next, "<|line|>6"));
    assert!(admits(&next, "<|line|>6 0 <mod"));
    assert!(!admits(&next, "<|line|>06"));
}

#[test]
fn header_admits_then_the_lines_text_exactly() {
    let p = ProgramModel::of(CALLS);
    let prev = module_line(&p, 5, &[]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    assert!(admits(&next, "<|line|>6 0 <module>\ny = add("));
    assert!(admits(&next, "<|line|>6 0 <module>\ny = add(x, 2)\n{"));
    assert!(!admits(&next, "<|line|>6 0 <module>\ny = sub("));
}

#[test]
fn header_admits_a_call_only_on_a_def_line() {
    let p = ProgramModel::of(CALLS);
    let prev = module_line(&p, 6, &[("x", "5")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
    assert!(admits(&next, "<|call|>1 1 add\n"));
    assert!(!admits(&next, "<|call|>2 1 add\n"));
}

#[test]
fn header_admits_for_a_breakpoint_only_its_lines() {
    let p = ProgramModel::of(CALLS);
    let prev = module_line(&p, 5, &[]);
    let action = Action::Breakpoint(lines(&[7]));
    let next = NextState::new(&p, &prev, None, None, &action);
    assert!(admits(&next, "<|line|>7 0 <module>\n"));
    assert!(!admits(&next, "<|line|>6 0 <module>\n"));
}

/// The headers as `(line, depths, function)` triples, in order.
fn header_set(next: &NextState, event: &str, at_start: bool) -> Vec<(u32, Depths, String)> {
    let headers = next.headers(event, at_start).0;
    headers
        .into_iter()
        .map(|h| (h.line, h.depths, h.function))
        .collect()
}

#[test]
fn headers_a_step_over_in_the_module_is_its_next_line_at_depth_0() {
    let p = ProgramModel::of(CALLS);
    let prev = module_line(&p, 6, &[("x", "5")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    let module = "<module>".to_string();
    assert_eq!(
        header_set(&next, "<|line|>", false),
        vec![(7, Depths::Exact(0), module)]
    );
}

#[test]
fn headers_a_step_into_a_statement_that_can_run_one_function_enters_that_one() {
    let source = "class Box:\n    def __init__(self, s):\n        self.s = s\ndef check(s):\n    return Box(s)\ntable = check('a-b'.upper())\nother = Box(check('c'))\n";
    let p = ProgramModel::of(source);
    let prev = module_line(&p, 6, &[]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
    assert_eq!(
        header_set(&next, "<|call|>", false),
        vec![(4, Depths::Exact(1), "check".to_string())]
    );
    // Where the statement names a class too, its `__init__` may come first.
    let prev = module_line(&p, 7, &[]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
    let calls: Vec<u32> = header_set(&next, "<|call|>", false)
        .into_iter()
        .map(|(line, _, _)| line)
        .collect();
    assert_eq!(calls, [2, 4]);
}

#[test]
fn body_a_functions_frame_writes_globals_as_the_state_before_did() {
    let source = "LIMIT = 3\ndef f(x):\n    y = x + LIMIT\n    return y\nz = f(1)\n";
    let p = ProgramModel::of(source);
    let mut prev = state(&p, Event::Line, 3, "f", &[("<module>", 5)], &[("x", "1")]);
    prev.globals.insert("LIMIT".into(), "3".into());
    let globals = |prev: &State, action: Action, header: &str| {
        NextState::new(&p, prev, None, None, &action)
            .body(header, false)
            .spec
            .globals
    };
    assert_eq!(
        globals(&prev, Action::StepOver, "<|line|>4 1 f"),
        Some(true)
    );
    assert_eq!(
        globals(&prev, Action::InvStepOver, "<|call|>2 1 f"),
        Some(true)
    );
    assert_eq!(
        globals(&prev, Action::StepReturn, "<|return|>4 1 f"),
        Some(true)
    );
    // The module's frame never writes its globals apart: they are its locals.
    assert_eq!(
        globals(&prev, Action::StepOver, "<|line|>6 0 <module>"),
        Some(false)
    );
    // A jump may pass through the module, which may bind globals on the way.
    let continues = Action::Breakpoint(BTreeSet::from([3]));
    assert_eq!(globals(&prev, continues, "<|line|>3 1 f"), None);
    prev.globals.clear();
    assert_eq!(
        globals(&prev, Action::StepOver, "<|line|>4 1 f"),
        Some(false)
    );
    // Where a line may add or remove a global, either.
    let p = ProgramModel::of("def f():\n    global n\n    n = 1\n");
    let prev = state(&p, Event::Line, 3, "f", &[("<module>", 9)], &[]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    assert_eq!(next.body("<|line|>3 1 f", false).spec.globals, None);
}

#[test]
fn body_a_diff_changes_only_the_globals_a_statement_can_reach() {
    let source =
        "LIMIT = 3\nSEEN = []\ndef f(x):\n    y = len(str(x))\n    SEEN.append(y)\n    return y\n";
    let p = ProgramModel::of(source);
    let mut prev = state(&p, Event::Line, 4, "f", &[("<module>", 9)], &[("x", "1")]);
    prev.globals.insert("LIMIT".into(), "3".into());
    prev.globals.insert("SEEN".into(), "[]".into());
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    assert!(next
        .body_spec("<|line|>5 1 f", false)
        .global_names
        .is_empty());
    let mut prev = prev.clone();
    prev.line = 5;
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    assert_eq!(
        next.body_spec("<|line|>6 1 f", false).global_names,
        ["SEEN"]
    );
}

#[test]
fn body_back_in_the_caller_the_rest_of_a_quiet_statement_prints_nothing() {
    let source = "def f(x):\n    print(x)\n    return x\ny = f(1) + len('ab')\nprint(f(2))\n";
    let p = ProgramModel::of(source);
    let stdout = |caller_line: u32, header: &str| {
        let mut prev = state(
            &p,
            Event::Return,
            3,
            "f",
            &[("<module>", caller_line)],
            &[("x", "1")],
        );
        prev.value = Some("1".into());
        let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
        next.body(header, false).spec.stdout
    };
    assert_eq!(stdout(4, "<|line|>5 0 <module>"), Some(false));
    assert_eq!(stdout(5, "<|line|>6 0 <module>"), None, "the caller prints");
}

#[test]
fn headers_a_step_into_a_call_is_a_def_line_one_deeper() {
    let p = ProgramModel::of(CALLS);
    let prev = module_line(&p, 6, &[("x", "5")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
    assert_eq!(
        header_set(&next, "<|call|>", false),
        vec![(1, Depths::Exact(1), "add".to_string())]
    );
}

#[test]
fn headers_a_return_goes_back_to_the_callers_next_line_and_depth() {
    let p = ProgramModel::of(CALLS);
    let mut prev = line_in_add(&p, 3, &[("a", "5"), ("b", "2"), ("total", "7")]);
    prev.event = Event::Return;
    prev.value = Some("7".into());
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    let lines: Vec<(u32, Depths)> = header_set(&next, "<|line|>", false)
        .into_iter()
        .map(|(line, depths, function)| {
            assert_eq!(function, "<module>");
            (line, depths)
        })
        .collect();
    assert_eq!(lines, vec![(7, Depths::Exact(0))]);
}

#[test]
fn headers_a_jump_in_a_script_is_the_module_at_0_or_a_function_at_any_depth_from_1() {
    let p = ProgramModel::of(CALLS);
    let prev = module_line(&p, 5, &[]);
    let action = Action::Breakpoint(lines(&[2, 7]));
    let next = NextState::new(&p, &prev, None, None, &action);
    assert_eq!(
        header_set(&next, "<|line|>", false),
        vec![
            (2, Depths::From(1), "add".to_string()),
            (7, Depths::Exact(0), "<module>".to_string()),
        ]
    );
}

#[test]
fn headers_a_jump_from_a_call_may_be_at_any_depth_from_0() {
    // A call's episode (no module frame below it): its depth is the run's own.
    let p = ProgramModel::of(CALLS);
    let prev = state(&p, Event::Call, 1, "add", &[], &[("a", "1"), ("b", "2")]);
    let action = Action::Breakpoint(lines(&[2]));
    let next = NextState::new(&p, &prev, None, None, &action);
    assert_eq!(
        header_set(&next, "<|line|>", false),
        vec![(2, Depths::From(0), "add".to_string())]
    );
}

#[test]
fn headers_at_the_start_any_frame_of_any_code_line() {
    let p = ProgramModel::of(CALLS);
    let prev = module_line(&p, 7, &[("x", "5"), ("y", "7")]);
    let next = NextState::new(&p, &prev, None, None, &Action::InvStepOver);
    let stood: BTreeSet<u32> = header_set(&next, "<|line|>", true)
        .iter()
        .map(|h| h.0)
        .collect();
    // Not the blank line 4.
    assert_eq!(stood, lines(&[1, 2, 3, 5, 6, 7]));
}

#[test]
fn headers_trie_writes_a_range_of_depths_in_one_to_four_digits_without_a_leading_zero() {
    let p = ProgramModel::of(CALLS);
    let prev = module_line(&p, 5, &[]);
    let action = Action::Breakpoint(lines(&[2]));
    let next = NextState::new(&p, &prev, None, None, &action);
    for depth in ["1", "12", "9999"] {
        assert!(
            admits(&next, &format!("<|line|>2 {depth} add\n")),
            "{depth}"
        );
    }
    for depth in ["0", "01", "10000"] {
        assert!(
            !admits(&next, &format!("<|line|>2 {depth} add\n")),
            "{depth}"
        );
    }
}

#[test]
fn headers_trie_admits_a_token_that_ends_inside_a_character() {
    let p = ProgramModel::of("def größe(n):\n    return n\n\ngröße(2)\n");
    let prev = module_line(&p, 4, &[]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
    let trie = next.headers("<|call|>", false).trie(next.program);
    let name = "1 1 größe\n".as_bytes();
    let inside = name.iter().position(|&b| b >= 0x80).unwrap() + 1;
    let cursor = trie.walk(&name[..inside]);
    assert!(cursor.is_on());
    assert!(cursor.admits(&name[inside..]));
    assert!(!cursor.admits(b"x"));
}

#[test]
fn some_line_none_past_a_functions_last_line() {
    let p = ProgramModel::of(CALLS);
    let prev = line_in_add(&p, 3, &[]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    assert!(!next.some_line("<|line|>"));
    assert!(next.some_line("<|return|>"));
}

// --- openings: how the next outcome may begin

#[test]
fn openings_past_a_functions_last_line_are_no_line_but_its_return_and_the_exits() {
    let p = ProgramModel::of(CALLS);
    let prev = line_in_add(&p, 3, &[]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    let openings = next.openings();
    assert!(!openings.contains(&"<|line|>"));
    assert!(openings.contains(&"<|return|>"));
    assert!(language::EXITS.iter().all(|exit| openings.contains(exit)));
}

#[test]
fn openings_of_a_breakpoint_are_a_line_or_an_exit() {
    let p = ProgramModel::of(CALLS);
    let prev = module_line(&p, 5, &[]);
    let action = Action::Breakpoint(lines(&[7]));
    let next = NextState::new(&p, &prev, None, None, &action);
    let mut expected = vec!["<|line|>"];
    expected.extend(language::EXITS);
    assert_eq!(next.openings(), expected);
}

#[test]
fn openings_of_an_inverse_step_may_mark_the_runs_first_state() {
    let p = ProgramModel::of(CALLS);
    let prev = module_line(&p, 6, &[("x", "5")]);
    let next = NextState::new(&p, &prev, None, None, &Action::InvStepOver);
    assert_eq!(next.openings().last(), Some(&language::AT_START));
    let forward = NextState::new(&p, &prev, None, None, &Action::StepOver);
    assert!(!forward.openings().contains(&language::AT_START));
}

// --- body_spec: which names the locals hold

#[test]
fn body_spec_a_step_in_the_same_frame_is_a_diff() {
    let p = ProgramModel::of(CALLS);
    let prev = line_in_add(&p, 2, &[("a", "5"), ("b", "2")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    let spec = next.body_spec("<|line|>3 1 add", false);
    assert!(spec.diff);
    assert!(!spec.valued);
    assert_eq!(spec.local_names, ["a", "b", "total"]);
}

#[test]
fn body_spec_a_fresh_call_begins_with_its_parameters_in_order() {
    let p = ProgramModel::of(CALLS);
    let prev = module_line(&p, 6, &[("x", "5")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
    let spec = next.body_spec("<|call|>1 1 add", false);
    assert!(!spec.diff);
    assert_eq!(spec.required, ["a", "b"]);
    assert!(spec.ordered);
    assert!(spec.exact, "add closes over nothing");
}

#[test]
fn body_spec_a_return_carries_a_value() {
    let p = ProgramModel::of(CALLS);
    let prev = line_in_add(&p, 3, &[("total", "7")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    assert!(next.body_spec("<|return|>3 1 add", false).valued);
}

#[test]
fn body_spec_after_an_assignment_only_its_names_change() {
    let p = ProgramModel::of(CALLS);
    let prev = line_in_add(&p, 2, &[("a", "5"), ("b", "2")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    let spec = next.body_spec("<|line|>3 1 add", false);
    assert_eq!(spec.changeable, Some(vec!["total".to_string()]));
}

#[test]
fn body_spec_a_call_may_change_every_mutable_local() {
    let source = "def f(xs, n):\n    xs.append(n)\n    return xs\n";
    let p = ProgramModel::of(source);
    let prev = state(&p, Event::Line, 2, "f", &[], &[("xs", "[1]"), ("n", "2")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    let spec = next.body_spec("<|line|>3 0 f", false);
    assert_eq!(spec.changeable, Some(vec!["xs".to_string()]));
}

#[test]
fn body_spec_with_global_anything_may_change() {
    let source = "n = 0\ndef f():\n    global n\n    n = 1\n    return n\n";
    let p = ProgramModel::of(source);
    let prev = state(&p, Event::Line, 4, "f", &[], &[]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    assert_eq!(next.body_spec("<|line|>5 0 f", false).changeable, None);
}

#[test]
fn body_spec_entering_a_loops_block_writes_its_variable() {
    let p = ProgramModel::of(LOOP);
    let prev = state(
        &p,
        Event::Line,
        3,
        "f",
        &[],
        &[("xs", "[1, 2]"), ("total", "0")],
    );
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    assert_eq!(next.body_spec("<|line|>4 0 f", false).required, ["x"]);
}

#[test]
fn body_spec_after_an_at_start_marker_is_written_in_full() {
    let p = ProgramModel::of(CALLS);
    let prev = line_in_add(&p, 2, &[("a", "5"), ("b", "2")]);
    let next = NextState::new(&p, &prev, None, None, &Action::InvStepOver);
    assert!(!next.body_spec("<|line|>2 1 add", true).diff);
}

// --- held_names: what a frame cannot have lost

#[test]
fn held_names_back_in_the_caller_it_holds_what_it_held() {
    let p = ProgramModel::of(CALLS);
    let caller = module_line(&p, 6, &[("x", "5")]);
    let prev = state(
        &p,
        Event::Return,
        3,
        "add",
        &[("<module>", 6)],
        &[("total", "7")],
    );
    let next = NextState::new(&p, &prev, None, Some(&caller), &Action::StepOver);
    let spec = next.body_spec("<|line|>7 0 <module>", false);
    assert!(spec.held.contains(&"x".to_string()), "{:?}", spec.held);
    assert!(
        spec.held.contains(&"y".to_string()),
        "the statement assigns y"
    );
}

#[test]
fn held_names_a_step_out_holds_what_the_frame_holds() {
    let p = ProgramModel::of(CALLS);
    let prev = line_in_add(&p, 2, &[("a", "5"), ("b", "2")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepReturn);
    assert_eq!(next.body_spec("<|return|>3 1 add", false).held, ["a", "b"]);
}

#[test]
fn held_names_not_one_del_can_unbind() {
    let source = "def f(a, b):\n    del a\n    return b\n";
    let p = ProgramModel::of(source);
    let prev = state(&p, Event::Line, 2, "f", &[], &[("a", "1"), ("b", "2")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepReturn);
    assert_eq!(next.body_spec("<|return|>3 0 f", false).held, ["b"]);
}

// --- newly_bound: what a one-line assignment binds first

#[test]
fn newly_bound_an_assignment_binds_its_name() {
    let p = ProgramModel::of(CALLS);
    let prev = line_in_add(&p, 2, &[("a", "5"), ("b", "2")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    assert_eq!(next.body_spec("<|line|>3 1 add", false).held, ["total"]);
}

#[test]
fn newly_bound_not_a_bare_name_the_state_does_not_show() {
    // `m = math` may bind a module, which the tracer hides.
    let source = "def f():\n    m = math\n    return m\n";
    let p = ProgramModel::of(source);
    let prev = state(&p, Event::Line, 2, "f", &[], &[]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    assert!(next.body_spec("<|line|>3 0 f", false).held.is_empty());
}

#[test]
fn newly_bound_not_a_name_the_program_defines() {
    let source = "def g():\n    return 1\ndef f():\n    g = 2\n    return g\n";
    let p = ProgramModel::of(source);
    let prev = state(&p, Event::Line, 4, "f", &[], &[]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    assert!(next.body_spec("<|line|>5 0 f", false).held.is_empty());
}

// --- bound_arguments: a plain call binds its parameters

#[test]
fn bound_arguments_a_call_of_names_and_literals() {
    let p = ProgramModel::of(CALLS);
    let prev = module_line(&p, 6, &[("x", "5")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
    assert_eq!(
        next.bound_arguments("<|call|>1 1 add").as_deref(),
        Some(r#"{"a":"5","b":"2"}"#)
    );
}

#[test]
fn bound_arguments_of_arithmetic_on_shown_values() {
    let source = CALLS.replace("add(x, 2)", "add(x - 1, x % 2 == 1)");
    let p = ProgramModel::of(&source);
    let prev = module_line(&p, 6, &[("x", "5")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
    assert_eq!(
        next.bound_arguments("<|call|>1 1 add").as_deref(),
        Some(r#"{"a":"4","b":"True"}"#)
    );
}

#[test]
fn bound_arguments_none_where_a_lambda_could_rebind() {
    let source = "def add(a, b):\n    return a + b\n\nx = 5\ny = add(x, (lambda: 2)())\n";
    let p = ProgramModel::of(source);
    let prev = module_line(&p, 5, &[("x", "5")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
    assert_eq!(next.bound_arguments("<|call|>1 1 add"), None);
}

#[test]
fn bound_arguments_none_for_a_name_the_state_does_not_show() {
    let p = ProgramModel::of(CALLS);
    let prev = module_line(&p, 6, &[]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
    assert_eq!(next.bound_arguments("<|call|>1 1 add"), None);
}

#[test]
fn bound_arguments_a_methods_receiver_is_self() {
    let source = "\
class Box:
    def put(self, v):
        self.v = v

b = Box()
b.put(3)
";
    let p = ProgramModel::of(source);
    let prev = module_line(&p, 6, &[("b", "<Box>")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
    assert_eq!(
        next.bound_arguments("<|call|>2 1 put").as_deref(),
        Some(r#"{"self":"<Box>","v":"3"}"#)
    );
}

#[test]
fn bound_arguments_a_constructor_binds_a_fresh_instance() {
    let source = "\
class Base:
    pass

class Meter(Base):
    def __init__(self, start):
        self.total = start

m = Meter(5)
";
    let p = ProgramModel::of(source);
    let prev = module_line(&p, 8, &[]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
    assert_eq!(
        next.bound_arguments("<|call|>5 1 __init__").as_deref(),
        Some(r#"{"self":"Meter()","start":"5"}"#)
    );
    // A class that writes its own repr: `self` is the model's to write, `start` not.
    let own = source.replace(
        "        self.total = start\n",
        "        self.total = start\n    def __repr__(self):\n        return 'M'\n",
    );
    let p = ProgramModel::of(&own);
    let prev = module_line(&p, 10, &[]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
    assert_eq!(next.bound_arguments("<|call|>5 1 __init__"), None);
    let values = next
        .values("<|call|>5 1 __init__", false)
        .expect("the argument binds");
    let named: Vec<(&str, &[String])> = values
        .targets
        .iter()
        .map(|t| (t.name.as_str(), t.options.as_slice()))
        .collect();
    assert_eq!(named, vec![("start", &["\"5\"".to_string()][..])]);
    // A builtin base has its own repr.
    let listed = source.replace("class Base:", "class Base(list):");
    let p = ProgramModel::of(&listed);
    let prev = module_line(&p, 8, &[]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
    assert_eq!(next.bound_arguments("<|call|>5 1 __init__"), None);
}

#[test]
fn bound_arguments_only_for_a_step_into() {
    let p = ProgramModel::of(CALLS);
    let prev = module_line(&p, 6, &[("x", "5")]);
    let next = NextState::new(&p, &prev, None, None, &Action::Continue);
    assert_eq!(next.bound_arguments("<|call|>1 1 add"), None);
}

// --- callee_globals: a fresh call's globals are the caller's

#[test]
fn callee_globals_from_the_module_are_its_locals() {
    let p = ProgramModel::of(CALLS);
    let prev = module_line(&p, 6, &[("x", "5")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
    assert_eq!(
        next.callee_globals("<|call|>1 1 add").as_deref(),
        Some(r#"{"x":"5"}"#)
    );
}

#[test]
fn callee_globals_from_a_function_are_its_globals() {
    let source = "LIMIT = 3\n\ndef inner(v):\n    return v\n\ndef outer(xs):\n    return inner(len(sorted(xs)))\n\nouter([2, 1])\n";
    let p = ProgramModel::of(source);
    let mut prev = state(
        &p,
        Event::Line,
        7,
        "outer",
        &[("<module>", 9)],
        &[("xs", "[2, 1]")],
    );
    prev.globals.insert("LIMIT".into(), "3".into());
    let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
    assert_eq!(
        next.callee_globals("<|call|>3 2 inner").as_deref(),
        Some(r#"{"LIMIT":"3"}"#),
        "len and sorted change nothing"
    );
}

#[test]
fn callee_globals_none_where_a_method_or_a_call_ran_first() {
    let source = "def add(a, b):\n    return a + b\n\nxs = [5]\ny = add(xs.pop(), 2)\nz = g(1) + add(1, 2)\nw = print(add(1, 2))\n";
    let p = ProgramModel::of(source);
    let prev = module_line(&p, 5, &[("xs", "[5]")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
    assert_eq!(
        next.callee_globals("<|call|>1 1 add"),
        None,
        "pop ran first"
    );
    let prev = module_line(&p, 6, &[("xs", "[5]")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
    assert_eq!(next.callee_globals("<|call|>1 1 add"), None, "g ran first");
    let prev = module_line(&p, 7, &[("xs", "[5]")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
    assert_eq!(
        next.callee_globals("<|call|>1 1 add").as_deref(),
        Some(r#"{"xs":"[5]"}"#),
        "print runs after the call"
    );
}

#[test]
fn callee_globals_only_for_a_step_into_a_fresh_call() {
    let p = ProgramModel::of(CALLS);
    let prev = module_line(&p, 6, &[("x", "5")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    assert_eq!(next.callee_globals("<|call|>1 1 add"), None);
    let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
    assert_eq!(next.callee_globals("<|line|>2 1 add"), None);
}

#[test]
fn completed_calls_are_those_closed_before_the_site() {
    assert_eq!(
        super::values::completed_calls("y = print(len(xs), "),
        vec!["len"]
    );
    assert_eq!(
        super::values::completed_calls("q.pop() + f(1)(2) + "),
        vec![".pop", "f", ")"]
    );
    assert!(super::values::completed_calls("total = (a + b) * ").is_empty());
}

// --- returned_value: what a `return` line gives

#[test]
fn returned_value_of_a_name_as_the_locals_write_it() {
    let p = ProgramModel::of(CALLS);
    let prev = line_in_add(&p, 3, &[("total", "7")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    let written = "{\"total\":\"7\"}\n<|value|>";
    assert_eq!(
        next.returned_value("<|return|>3 1 add", written).as_deref(),
        Some("\"7\"")
    );
}

#[test]
fn returned_value_of_a_name_carried_by_the_diff_marker() {
    let p = ProgramModel::of(CALLS);
    let prev = line_in_add(&p, 3, &[("total", "7")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    let written = "{\"..\":\"..\"}\n<|value|>";
    assert_eq!(
        next.returned_value("<|return|>3 1 add", written).as_deref(),
        Some("\"7\"")
    );
}

#[test]
fn returned_value_of_a_literal() {
    let source = "def f():\n    return 'a'\n";
    let p = ProgramModel::of(source);
    let prev = state(&p, Event::Line, 2, "f", &[], &[]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    let written = "{}\n<|value|>";
    assert_eq!(
        next.returned_value("<|return|>2 0 f", written).as_deref(),
        Some("\"'a'\"")
    );
}

#[test]
fn returned_value_of_the_module_is_none() {
    let p = ProgramModel::of(CALLS);
    let prev = module_line(&p, 7, &[]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    let written = "{}\n<|value|>";
    assert_eq!(
        next.returned_value("<|return|>7 0 <module>", written)
            .as_deref(),
        Some("\"None\"")
    );
}

#[test]
fn returned_value_of_whole_number_arithmetic() {
    let source = "K = 10\ndef f(a, b):\n    return a * 2 - b % K\n";
    let p = ProgramModel::of(source);
    let mut prev = state(
        &p,
        Event::Line,
        3,
        "f",
        &[("<module>", 5)],
        &[("a", "4"), ("b", "13")],
    );
    prev.globals.insert("K".into(), "10".into());
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    let carried = "{\"..\":\"..\"}\n<|globals|>{\"..\":\"..\"}\n<|value|>";
    assert_eq!(
        next.returned_value("<|return|>3 1 f", carried).as_deref(),
        Some("\"5\"")
    );
    let written = "{\"a\":\"1\",\"b\":\"2\"}\n<|globals|>{\"K\":\"3\"}\n<|value|>";
    assert_eq!(
        next.returned_value("<|return|>3 1 f", written).as_deref(),
        Some("\"0\"")
    );
}

#[test]
fn returned_value_not_of_a_call_but_of_a_float() {
    let source = "def f(a):\n    return g(a) + 1\ndef g(a):\n    return a / 2\n";
    let p = ProgramModel::of(source);
    let written = "{\"..\":\"..\"}\n<|value|>";
    for (line, function, value) in [(2, "f", None), (4, "g", Some("\"0.5\""))] {
        let prev = state(&p, Event::Line, line, function, &[], &[("a", "1")]);
        let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
        let header = format!("<|return|>{line} 0 {function}");
        assert_eq!(next.returned_value(&header, written).as_deref(), value);
    }
}

#[test]
fn returned_value_only_once_the_value_begins() {
    let p = ProgramModel::of(CALLS);
    let prev = line_in_add(&p, 3, &[("total", "7")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    assert_eq!(next.returned_value("<|return|>3 1 add", "{"), None);
}

// --- printed_by_step: what a `print` writes

#[test]
fn printed_by_step_literals_and_shown_names() {
    let source = "x = 1\nprint(x, 'a', sep='-')\n";
    let p = ProgramModel::of(source);
    let prev = module_line(&p, 2, &[("x", "1")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    let printed = next
        .printed_by_step("<|return|>2 0 <module>")
        .expect("readable");
    assert!(printed.admits("1-a\n"));
    assert!(!printed.admits("1 a\n"));
}

#[test]
fn printed_by_step_not_for_a_state_in_another_frame() {
    let p = ProgramModel::of(CALLS);
    let prev = module_line(&p, 7, &[("y", "7")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    assert!(next.printed_by_step("<|line|>2 1 add").is_none());
}

#[test]
fn printed_by_step_not_backwards() {
    let p = ProgramModel::of(CALLS);
    let prev = module_line(&p, 7, &[("y", "7")]);
    let next = NextState::new(&p, &prev, None, None, &Action::InvStepOver);
    assert!(next.printed_by_step("<|line|>6 0 <module>").is_none());
}

// --- bindings: what a loop or an assignment binds

#[test]
fn bindings_a_loop_starts_with_its_first_item() {
    let p = ProgramModel::of(LOOP);
    let prev = state(
        &p,
        Event::Line,
        3,
        "f",
        &[],
        &[("xs", "[1, 2]"), ("total", "0")],
    );
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    assert_eq!(options(next.bindings()), named(&[("x", &["1"])]));
    assert_eq!(next.bindings().unwrap().continues, Some(true));
}

#[test]
fn bindings_a_loop_going_round_takes_the_next_item() {
    let p = ProgramModel::of(LOOP);
    let locals = [("xs", "[1, 2, 3]"), ("total", "1"), ("x", "1")];
    let from = state(&p, Event::Line, 4, "f", &[], &locals);
    let prev = state(&p, Event::Line, 3, "f", &[], &locals);
    let next = NextState::new(&p, &prev, Some(&from), None, &Action::StepOver);
    assert_eq!(options(next.bindings()), named(&[("x", &["2"])]));
}

#[test]
fn bindings_a_loop_whose_way_in_is_unknown_may_start_again() {
    // In a loop of its frame, the inner loop begins again each time round.
    let source = "def f(xs):\n    while xs:\n        for x in xs:\n            print(x)\n        xs = xs[1:]\n";
    let p = ProgramModel::of(source);
    let locals = [("xs", "[1, 2, 3]"), ("x", "1")];
    let prev = state(&p, Event::Line, 3, "f", &[], &locals);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    assert_eq!(options(next.bindings()), named(&[("x", &["1", "2"])]));
}

#[test]
fn bindings_a_loop_that_begins_once_has_begun_where_its_variable_is_bound() {
    let p = ProgramModel::of(LOOP);
    let locals = [("xs", "[1, 2, 3]"), ("total", "1"), ("x", "1")];
    let prev = state(&p, Event::Line, 3, "f", &[], &locals);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    assert_eq!(options(next.bindings()), named(&[("x", &["2"])]));
    // Not where another line binds the variable first: it may not have begun.
    let source = "def f(xs):\n    x = 1\n    for x in xs:\n        print(x)\n";
    let p = ProgramModel::of(source);
    let prev = state(
        &p,
        Event::Line,
        3,
        "f",
        &[],
        &[("xs", "[1, 2, 3]"), ("x", "1")],
    );
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    assert_eq!(options(next.bindings()), named(&[("x", &["1", "2"])]));
}

#[test]
fn bindings_a_list_is_reordered_under_a_loop_only_by_what_the_loop_runs() {
    // `pop` elsewhere in the program cannot reach the loop's list.
    let source = "def f(xs):\n    for x in xs:\n        print(x)\n    xs.pop()\n";
    let p = ProgramModel::of(source);
    let locals = [("xs", "[1, 2, 3]"), ("x", "1")];
    let prev = state(&p, Event::Line, 2, "f", &[], &locals);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    assert_eq!(options(next.bindings()), named(&[("x", &["2"])]));
    // A function the loop calls can.
    let source = "def g(xs):\n    xs.pop(0)\n\ndef f(xs):\n    for x in xs:\n        g(xs)\n";
    let p = ProgramModel::of(source);
    let prev = state(&p, Event::Line, 5, "f", &[], &locals);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    assert_eq!(options(next.bindings()), named(&[("x", &["1", "2", "3"])]));
}

#[test]
fn bindings_a_loop_over_equal_items_goes_on_from_its_count() {
    let source = "def f(s):\n    for c in s:\n        print(c)\n";
    let p = ProgramModel::of(source);
    let prev = state(
        &p,
        Event::Line,
        2,
        "f",
        &[],
        &[("s", "'a-b-c'"), ("c", "'-'")],
    );
    // Its values alone: `'-'` comes before `'b'` and before `'c'`.
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    assert_eq!(options(next.bindings()), named(&[("c", &["'b'", "'c'"])]));
    // Four items bound since the loop began: the fifth comes next.
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver).in_round(Some(4));
    assert_eq!(options(next.bindings()), named(&[("c", &["'c'"])]));
    // A count that does not fit the values is not believed.
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver).in_round(Some(3));
    assert_eq!(options(next.bindings()), named(&[("c", &["'b'", "'c'"])]));
}

#[test]
fn bindings_a_loop_over_range() {
    let source = "def f(n):\n    for i in range(1, n):\n        print(i)\n";
    let p = ProgramModel::of(source);
    let prev = state(&p, Event::Line, 2, "f", &[], &[("n", "4")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    assert_eq!(options(next.bindings()), named(&[("i", &["1"])]));
}

#[test]
fn bindings_a_loop_over_enumerate_unpacks_its_pairs() {
    let source = "def f(xs):\n    for i, x in enumerate(xs, 1):\n        print(i, x)\n";
    let p = ProgramModel::of(source);
    let prev = state(&p, Event::Line, 2, "f", &[], &[("xs", "['a', 'b']")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    assert_eq!(
        options(next.bindings()),
        named(&[("i", &["1"]), ("x", &["'a'"])])
    );
}

#[test]
fn bindings_a_loop_that_starts_takes_the_first_item_whatever_its_block_changes() {
    let source = "def f(nums):\n    for i, _ in enumerate(nums):\n        nums[i - 1], nums[i] = nums[i], nums[i - 1]\n    return nums\n";
    let p = ProgramModel::of(source);
    let prev = state(&p, Event::Line, 2, "f", &[], &[("nums", "[3, 1]")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    assert_eq!(
        options(next.bindings()),
        named(&[("i", &["0"]), ("_", &["3"])])
    );
    let prev = state(&p, Event::Line, 2, "f", &[], &[("nums", "[]")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    assert_eq!(next.bindings().unwrap().continues, Some(false));
    // Going round, the swaps may have changed what comes next.
    let locals = [("nums", "[3, 1]"), ("i", "0"), ("_", "3")];
    let from = state(&p, Event::Line, 3, "f", &[], &locals);
    let prev = state(&p, Event::Line, 2, "f", &[], &locals);
    let next = NextState::new(&p, &prev, Some(&from), None, &Action::StepOver);
    assert!(next.bindings().is_none());
}

#[test]
fn bindings_a_loop_over_zip() {
    let source = "def f(a, b):\n    for x, y in zip(a, b):\n        print(x, y)\n";
    let p = ProgramModel::of(source);
    let prev = state(
        &p,
        Event::Line,
        2,
        "f",
        &[],
        &[("a", "[1, 2]"), ("b", "'xyz'")],
    );
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    assert_eq!(
        options(next.bindings()),
        named(&[("x", &["1"]), ("y", &["'x'"])])
    );
}

#[test]
fn bindings_a_loop_over_a_dicts_items() {
    let source = "def f(d):\n    for k, v in d.items():\n        print(k, v)\n";
    let p = ProgramModel::of(source);
    let prev = state(&p, Event::Line, 2, "f", &[], &[("d", "{'a': 1, 'b': 2}")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    assert_eq!(
        options(next.bindings()),
        named(&[("k", &["'a'"]), ("v", &["1"])])
    );
}

#[test]
fn bindings_a_loop_over_a_slice() {
    let source = "def f(xs):\n    for x in xs[1:]:\n        print(x)\n";
    let p = ProgramModel::of(source);
    let prev = state(&p, Event::Line, 2, "f", &[], &[("xs", "[5, 6, 7]")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    assert_eq!(options(next.bindings()), named(&[("x", &["6"])]));
}

#[test]
fn bindings_an_empty_loop_goes_out() {
    let p = ProgramModel::of(LOOP);
    let prev = state(
        &p,
        Event::Line,
        3,
        "f",
        &[],
        &[("xs", "[]"), ("total", "0")],
    );
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    assert_eq!(next.bindings().unwrap().continues, Some(false));
}

#[test]
fn bindings_none_where_the_block_rebinds_the_variable() {
    let source = "def f(xs):\n    for x in xs:\n        x = 0\n    return xs\n";
    let p = ProgramModel::of(source);
    let locals = [("xs", "[1, 2]"), ("x", "0")];
    let from = state(&p, Event::Line, 3, "f", &[], &locals);
    let prev = state(&p, Event::Line, 2, "f", &[], &locals);
    let next = NextState::new(&p, &prev, Some(&from), None, &Action::StepOver);
    let bindings = next.bindings().expect("a loop");
    assert!(
        bindings.targets.iter().all(|t| t.options.len() == 2),
        "either item"
    );
    assert_eq!(bindings.continues, None);
}

#[test]
fn bindings_a_loop_over_its_own_variable_knows_only_its_first_item() {
    let source = "k = 5\nfor k in range(1, k + 1):\n    pass\n";
    let p = ProgramModel::of(source);
    let from = module_line(&p, 1, &[]);
    let prev = module_line(&p, 2, &[("k", "5")]);
    let next = NextState::new(&p, &prev, Some(&from), None, &Action::StepOver);
    assert_eq!(options(next.bindings()), named(&[("k", &["1"])]));
    // Going round, `k + 1` no longer says what `range` gave when the loop began.
    let from = module_line(&p, 3, &[("k", "2")]);
    let prev = module_line(&p, 2, &[("k", "2")]);
    let next = NextState::new(&p, &prev, Some(&from), None, &Action::StepOver);
    assert!(next.bindings().is_none());
}

#[test]
fn bindings_a_swap_takes_the_shown_values() {
    let source = "def f(a, b):\n    a, b = b, a\n    return a\n";
    let p = ProgramModel::of(source);
    let prev = state(&p, Event::Line, 2, "f", &[], &[("a", "1"), ("b", "'x'")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    assert_eq!(
        options(next.bindings()),
        named(&[("a", &["'x'"]), ("b", &["1"])])
    );
}

#[test]
fn bindings_the_known_immutable_values_of_a_partly_known_assignment() {
    let source = "def f(a, b, xs):\n    a, b = b, g(a)\n    ys, n = xs, xs.pop()\n    return a\n";
    let p = ProgramModel::of(source);
    let locals = [("a", "0"), ("b", "1"), ("xs", "[1]")];
    let prev = state(&p, Event::Line, 2, "f", &[], &locals);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    assert_eq!(options(next.bindings()), named(&[("a", &["1"])]));
    // `a` changes, so a diff on the next line of the frame must write it.
    assert!(next
        .body_spec("<|line|>4 0 f", false)
        .held
        .contains(&"a".to_string()));
    // `xs.pop()` could change the list `ys` now holds: a list binds only where every
    // value is known.
    let prev = state(&p, Event::Line, 3, "f", &[], &locals);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    assert!(next.bindings().is_none());
}

#[test]
fn values_an_assignment_binds_nothing_in_a_call_it_makes_or_where_it_raised() {
    let source = "def g(a):\n    return a\ndef f(a, b):\n    a, b = b, g(a)\n    return a\n";
    let p = ProgramModel::of(source);
    let prev = state(&p, Event::Line, 4, "f", &[], &[("a", "0"), ("b", "1")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
    let a_of = |header: &str| {
        let values = next.values(header, false)?;
        let a = values.targets.into_iter().find(|t| t.name == "a")?;
        Some(a.options)
    };
    assert_eq!(a_of("<|line|>5 0 f"), Some(vec!["\"1\"".to_string()]));
    assert_ne!(a_of("<|call|>1 1 g"), Some(vec!["\"1\"".to_string()]));
    assert_eq!(a_of("<|exception|>4 0 f"), None);
}

#[test]
fn bindings_an_unchanged_value_need_not_be_written() {
    let source = "def f(a, b):\n    a, b = b, a * b\n    return a\n";
    let p = ProgramModel::of(source);
    let prev = state(&p, Event::Line, 2, "f", &[], &[("a", "1"), ("b", "1")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    assert_eq!(
        options(next.bindings()),
        named(&[("a", &["1"]), ("b", &["1"])])
    );
    assert!(next.body_spec("<|line|>3 0 f", false).held.is_empty());
}

#[test]
fn bindings_whole_number_arithmetic_of_shown_values() {
    let source = "def f(lo, hi):\n    mid, lo = (lo + hi) // 2, lo - 1\n    return mid\n";
    let p = ProgramModel::of(source);
    let prev = state(&p, Event::Line, 2, "f", &[], &[("lo", "-3"), ("hi", "6")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    assert_eq!(
        options(next.bindings()),
        named(&[("mid", &["1"]), ("lo", &["-4"])])
    );
    let spec = next.body_spec("<|line|>3 0 f", false);
    assert!(
        spec.required.is_empty(),
        "in the frame's order, wherever that puts them"
    );
    assert_eq!(spec.held, ["lo", "mid"]);
}

#[test]
fn bindings_an_augmented_assignment_of_settled_values() {
    let source = "def f(n, s):\n    n //= 2 + 1\n    s += 'x'\n    n **= 2\n    return n\n";
    let p = ProgramModel::of(source);
    let prev = |line| {
        state(
            &p,
            Event::Line,
            line,
            "f",
            &[],
            &[("n", "-7"), ("s", "'a'")],
        )
    };
    let bindings = |line| {
        let prev = prev(line);
        let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
        next.bindings().cloned()
    };
    assert_eq!(options(bindings(2).as_ref()), named(&[("n", &["-3"])]));
    assert_eq!(options(bindings(3).as_ref()), named(&[("s", &["'ax'"])]));
    assert!(bindings(4).is_none(), "not a power");
}

#[test]
fn bindings_an_item_appended_or_set_in_a_list_or_dict() {
    let source = "def f(xs, d, k):\n    xs.append(str(k))\n    xs[-1] = k * 2\n    d[k] += 1\n    d['new'] = xs[0]\n    xs.append(xs)\n    xs[5] = 0\n    d[1] = 0\n    return xs\n";
    let p = ProgramModel::of(source);
    let locals = [("xs", "[1, 'a']"), ("d", "{'x': 3}"), ("k", "'x'")];
    let after = |line| {
        let prev = state(&p, Event::Line, line, "f", &[], &locals);
        let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
        next.bindings().cloned()
    };
    assert_eq!(
        options(after(2).as_ref()),
        named(&[("xs", &["[1, 'a', 'x']"])])
    );
    assert_eq!(
        options(after(3).as_ref()),
        named(&[("xs", &["[1, 'xx']"])]),
        "'x' * 2 repeats the string"
    );
    assert_eq!(options(after(4).as_ref()), named(&[("d", &["{'x': 4}"])]));
    assert_eq!(
        options(after(5).as_ref()),
        named(&[("d", &["{'x': 3, 'new': 1}"])])
    );
    assert!(after(5).unwrap().targets[0].must_write);
    // The list itself, an index out of range, a key of another kind than the dict's.
    for line in [6, 7, 8] {
        assert!(after(line).is_none(), "line {line}");
    }
}

#[test]
fn bindings_of_a_literal_only_where_its_text_fixes_the_repr() {
    let source = "def f():\n    s = {9, 1}\n    t = {3, 1}\n    d = {'x': 7, 'z': 2}\n    stack: list[int] = []\n    return s\n";
    let p = ProgramModel::of(source);
    let step = |line| {
        let prev = state(&p, Event::Line, line, "f", &[], &[]);
        NextState::new(&p, &prev, None, None, &Action::StepOver)
            .bindings()
            .cloned()
    };
    let after = |line| options(step(line).as_ref());
    // Python iterates {9, 1} as {9, 1} (hash order, see `program::sets`).
    assert_eq!(after(2), named(&[("s", &["{9, 1}"])]));
    assert_eq!(after(3), named(&[("t", &["{1, 3}"])]));
    assert_eq!(after(4), named(&[("d", &["{'x': 7, 'z': 2}"])]));
    assert_eq!(after(5), named(&[("stack", &["[]"])]));
}

#[test]
fn bindings_not_backwards() {
    let source = "def f(a, b):\n    a, b = b, a\n    return a\n";
    let p = ProgramModel::of(source);
    let prev = state(&p, Event::Line, 2, "f", &[], &[("a", "1"), ("b", "2")]);
    let next = NextState::new(&p, &prev, None, None, &Action::InvStepOver);
    assert!(next.bindings().is_none());
}

// --- kept: what a caller or a frame keeps

const KEEPS: &str = "\
def grow(xs):
    xs.append(1)
    return len(xs)

def f():
    n = 2
    xs = [0]
    ys = [5]
    k = grow(xs)
    return k
";

#[test]
fn kept_a_caller_keeps_its_immutables_and_what_the_call_cannot_reach() {
    let p = ProgramModel::of(KEEPS);
    let locals = [("n", "2"), ("xs", "[0]"), ("ys", "[5]")];
    let caller = state(&p, Event::Line, 9, "f", &[], &locals);
    let prev = state(
        &p,
        Event::Return,
        3,
        "grow",
        &[("f", 9)],
        &[("xs", "[0, 1]")],
    );
    let next = NextState::new(&p, &prev, None, Some(&caller), &Action::StepOver);
    // `xs` is passed to the call, so only the immutable `n` is sure to keep its value.
    assert_eq!(
        options(next.kept("<|line|>10 0 f")),
        named(&[("n", &["2"])])
    );
}

#[test]
fn kept_a_caller_that_passes_no_mutable_keeps_them_all() {
    let source = "\
def size(n):
    return n

def f():
    xs = [0]
    k = size(3)
    return k
";
    let p = ProgramModel::of(source);
    let caller = state(&p, Event::Line, 6, "f", &[], &[("xs", "[0]")]);
    let prev = state(&p, Event::Return, 2, "size", &[("f", 6)], &[("n", "3")]);
    let next = NextState::new(&p, &prev, None, Some(&caller), &Action::StepOver);
    assert_eq!(
        options(next.kept("<|line|>7 0 f")),
        named(&[("xs", &["[0]"])])
    );
}

#[test]
fn kept_an_assignment_of_the_call_binds_what_it_returned() {
    let p = ProgramModel::of(CALLS);
    let mut prev = state(&p, Event::Return, 3, "add", &[("<module>", 6)], &[]);
    prev.value = Some("7".into());
    let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
    assert_eq!(
        options(next.values("<|line|>7 0 <module>", false).as_ref()),
        named(&[("y", &["7"])])
    );
    assert!(next
        .body_spec("<|line|>7 0 <module>", false)
        .held
        .contains(&"y".into()));
    // A tuple unpacks; a value the tracer hides binds nothing known.
    let source = "def f():\n    return 1, 2\n\na, b = f()\nprint(a)\n";
    let p = ProgramModel::of(source);
    let mut prev = state(&p, Event::Return, 2, "f", &[("<module>", 4)], &[]);
    prev.value = Some("(1, 2)".into());
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    assert_eq!(
        options(next.values("<|line|>5 0 <module>", false).as_ref()),
        named(&[("a", &["1"]), ("b", &["2"])])
    );
    prev.value = Some("<function g>".into());
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    assert!(next.values("<|line|>5 0 <module>", false).is_none());
}

#[test]
fn values_an_assignment_the_state_cannot_settle_still_gives_its_kind() {
    let source = "def f(ys):\n    xs = sorted(ys)\n    n = g(ys)\n    return xs\n";
    let p = ProgramModel::of(source);
    // Objects order themselves (a `__lt__` may run).
    let prev = state(&p, Event::Line, 2, "f", &[], &[("ys", "[P(2), P(1)]")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    let values = next.values("<|line|>3 0 f", false).expect("a kind");
    assert_eq!(values.targets[0].name, "xs");
    assert_eq!(values.targets[0].options, ["\"["]);
    // Not in another frame (a call the line makes), nor where the text says nothing.
    assert!(next.values("<|call|>9 1 g", false).is_none());
    let prev = state(&p, Event::Line, 3, "f", &[], &[("ys", "[2, 1]")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    assert!(next.values("<|line|>4 0 f", false).is_none());
}

#[test]
fn values_a_call_binds_the_arguments_it_can_and_the_kinds_of_others() {
    let source = "def add(a, b):\n    return a\n\nx = 5\ny = add(x, len(sorted(str(x), key=h)))\n";
    let p = ProgramModel::of(source);
    let prev = module_line(&p, 5, &[("x", "5")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
    assert_eq!(next.bound_arguments("<|call|>1 1 add"), None);
    let values = next.values("<|call|>1 1 add", false).expect("arguments");
    let options: Vec<(&str, usize)> = values
        .targets
        .iter()
        .map(|t| (t.name.as_str(), t.options.len()))
        .collect();
    assert_eq!(options, [("a", 1), ("b", 10)]);
    assert_eq!(values.targets[0].options, ["\"5\""]);
}

#[test]
fn kept_a_call_inside_a_larger_value_binds_nothing_known() {
    let source = "def f():\n    return 1\n\nx = f() + 1\ny = g(f())\nprint(x)\n";
    let p = ProgramModel::of(source);
    for line in [4, 5] {
        let mut prev = state(&p, Event::Return, 2, "f", &[("<module>", line)], &[]);
        prev.value = Some("1".into());
        let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
        assert!(next
            .assigned_by_return(&format!("<|line|>{} 0 <module>", line + 1))
            .is_none());
    }
}

#[test]
fn kept_a_call_inside_a_larger_value_that_python_settles_once_it_returned() {
    let source = "def f():
    return 1

x = f() + k * 2
y = g(f())
z = f() + len(xs)
";
    let p = ProgramModel::of(source);
    let after = |line: u32| {
        let mut prev = state(&p, Event::Return, 2, "f", &[("<module>", line)], &[]);
        prev.value = Some("1".into());
        let caller = module_line(&p, line, &[("k", "3"), ("xs", "[1]")]);
        let next = NextState::new(&p, &prev, None, Some(&caller), &Action::StepOver);
        next.assigned_by_return(&format!("<|line|>{} 0 <module>", line + 1))
            .map(|bindings| (bindings[0].name.clone(), bindings[0].options.clone()))
    };
    assert_eq!(after(4), Some(("x".to_string(), vec!["\"7\"".to_string()])));
    assert_eq!(after(5), None, "g runs after f");
    assert_eq!(after(6), None, "f could have changed the list");
}

#[test]
fn body_spec_back_in_the_caller_holds_its_names_and_what_the_call_binds() {
    let source = "\
def grow(xs):
    xs.append(1)
    return len(xs)

def f():
    xs = [0]
    k = grow(xs)
    m = k + 1
    return m
";
    let p = ProgramModel::of(source);
    let caller = state(&p, Event::Line, 7, "f", &[], &[("xs", "[0]")]);
    let prev = state(
        &p,
        Event::Return,
        3,
        "grow",
        &[("f", 7)],
        &[("xs", "[0, 1]")],
    );
    let next = NextState::new(&p, &prev, None, Some(&caller), &Action::StepOver);
    assert_eq!(
        next.body_spec("<|line|>8 0 f", false).local_names,
        ["k", "xs"]
    );
    // Without the caller's state, any name of the function may be there.
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    let spec = next.body_spec("<|line|>8 0 f", false);
    assert_eq!(spec.local_names, ["k", "m", "xs"]);
}

#[test]
fn kept_a_step_out_keeps_parameters_the_function_never_assigns() {
    let source = "def f(a, b):\n    b = b + a\n    return b\n";
    let p = ProgramModel::of(source);
    let prev = state(&p, Event::Line, 2, "f", &[], &[("a", "1"), ("b", "2")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepReturn);
    assert_eq!(
        options(next.kept("<|return|>3 0 f")),
        named(&[("a", &["1"])])
    );
}

#[test]
fn kept_nothing_where_global_can_rebind() {
    let source = "n = 0\ndef f(a):\n    global n\n    n = a\n    return a\n";
    let p = ProgramModel::of(source);
    let prev = state(&p, Event::Line, 4, "f", &[], &[("a", "1")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepReturn);
    assert!(next.kept("<|return|>5 0 f").is_none());
}

// --- guess: what to show where the model gave nothing usable

#[test]
fn guess_the_next_line_with_nothing_changed() {
    let p = ProgramModel::of(CALLS);
    let prev = module_line(&p, 5, &[("x", "5")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    let guess = next.guess().expect("a line follows");
    assert_eq!((guess.event, guess.line), (Event::Line, 6));
    assert_eq!(guess.source, "y = add(x, 2)");
    assert_eq!(guess.locals, prev.locals);
}

#[test]
fn guess_backward_the_line_before() {
    let p = ProgramModel::of(CALLS);
    let prev = module_line(&p, 7, &[("y", "7")]);
    let next = NextState::new(&p, &prev, None, None, &Action::InvStepOver);
    assert_eq!(next.guess().map(|g| g.line), Some(6));
}

#[test]
fn guess_in_a_loops_block_goes_round() {
    let p = ProgramModel::of(LOOP);
    let locals = [("xs", "[1, 2]"), ("total", "0"), ("x", "1")];
    let prev = state(&p, Event::Line, 4, "f", &[], &locals);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    assert_eq!(next.guess().map(|g| g.line), Some(3));
}

#[test]
fn guess_past_a_frames_last_line_its_return() {
    let p = ProgramModel::of(CALLS);
    let prev = line_in_add(&p, 3, &[("total", "7")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    let guess = next.guess().expect("the frame can end here");
    assert_eq!((guess.event, guess.line), (Event::Return, 3));
    assert_eq!(guess.value.as_deref(), Some("None"));
    assert_eq!(guess.locals, prev.locals);
}

#[test]
fn guess_an_unhandled_exception_ends_the_frame() {
    let p = ProgramModel::of(CALLS);
    let mut prev = line_in_add(&p, 2, &[("a", "1"), ("b", "'x'")]);
    prev.event = Event::Exception;
    prev.value = Some("TypeError(\"unsupported operand type(s)\")".into());
    let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
    let guess = next.guess().expect("the frame ends where it raised");
    assert_eq!((guess.event, guess.line), (Event::Return, 2));
    assert_eq!(guess.value.as_deref(), Some("None"));
}

#[test]
fn guess_none_before_a_frames_first_line() {
    let source = "def f(n):\n    if n:\n        n = 1\n";
    let p = ProgramModel::of(source);
    let prev = state(&p, Event::Line, 2, "f", &[], &[("n", "0")]);
    let next = NextState::new(&p, &prev, None, None, &Action::InvStepOver);
    assert!(next.guess().is_none(), "nothing before the first line");
}

#[test]
fn guess_from_a_return_the_callers_next_line() {
    let p = ProgramModel::of(CALLS);
    let caller = module_line(&p, 6, &[("x", "5")]);
    let prev = state(
        &p,
        Event::Return,
        3,
        "add",
        &[("<module>", 6)],
        &[("total", "7")],
    );
    let next = NextState::new(&p, &prev, None, Some(&caller), &Action::StepOver);
    let guess = next.guess().expect("the caller goes on");
    assert_eq!((guess.event, guess.line, guess.depth), (Event::Line, 7, 0));
    assert_eq!(guess.locals, caller.locals);
}

#[test]
fn guess_after_the_last_frame_returns_the_run_ends() {
    let p = ProgramModel::of(CALLS);
    let prev = state(&p, Event::Return, 3, "add", &[], &[("total", "7")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
    assert!(next.guess().is_none(), "no line to go on to");
    assert_eq!(next.guess_exit(), Some(crate::state::Exit::Normal));
    // With a caller on the stack, the run goes on.
    let prev = state(
        &p,
        Event::Return,
        3,
        "add",
        &[("<module>", 6)],
        &[("total", "7")],
    );
    let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
    assert_eq!(next.guess_exit(), None);
}

#[test]
fn guess_none_for_a_jump() {
    let p = ProgramModel::of(CALLS);
    let prev = module_line(&p, 5, &[]);
    let next = NextState::new(&p, &prev, None, None, &Action::Continue);
    assert!(next.guess().is_none());
}

#[test]
fn bindings_none_once_the_block_may_have_rebound_what_the_loop_reads() {
    // The loop goes over what `name[:5]` gave when it began, not over the new `name`.
    let source = "def f(name):\n    for ch in name[:5]:\n        name = 'AR'\n    return name\n";
    let p = ProgramModel::of(source);
    let locals = [("name", "'AR'"), ("ch", "'i'")];
    let from = state(&p, Event::Line, 3, "f", &[], &locals);
    let prev = state(&p, Event::Line, 2, "f", &[], &locals);
    let next = NextState::new(&p, &prev, Some(&from), None, &Action::StepInto);
    assert!(next.bindings().is_none());
}

#[test]
fn bindings_a_loop_whose_block_rebinds_what_it_reads_starts_with_its_first_item() {
    let source = "def f(name):\n    for ch in name[:5]:\n        name = 'AR'\n    return name\n";
    let p = ProgramModel::of(source);
    let prev = state(&p, Event::Line, 2, "f", &[], &[("name", "'iwik'")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
    // The block rebinds a name the loop reads, but `ch` is unbound: the loop starts
    // here, over the state's `name`.
    assert_eq!(options(next.bindings()), named(&[("ch", &["'i'"])]));
}

#[test]
fn bindings_none_once_the_block_may_have_changed_a_list_the_loop_copied() {
    // `xs[-2:]` was copied from [5, 6, 7] when the loop began: after its 6 comes 7,
    // though the state's `xs[-2:]` now ends with 6.
    let source = "def f(xs):\n    for x in xs[-2:]:\n        xs.append(x)\n    return xs\n";
    let p = ProgramModel::of(source);
    let locals = [("xs", "[5, 6, 7, 6]"), ("x", "6")];
    let from = state(&p, Event::Line, 3, "f", &[], &locals);
    let prev = state(&p, Event::Line, 2, "f", &[], &locals);
    let next = NextState::new(&p, &prev, Some(&from), None, &Action::StepOver);
    assert!(next.bindings().is_none());
}

#[test]
fn bindings_a_loop_over_a_copy_goes_round_where_the_block_changes_other_lists() {
    let source =
        "def f(xs):\n    out = []\n    for x in xs[1:]:\n        out.append(x)\n    return out\n";
    let p = ProgramModel::of(source);
    let locals = [("xs", "[5, 6, 7]"), ("out", "[6]"), ("x", "6")];
    let from = state(&p, Event::Line, 4, "f", &[], &locals);
    let prev = state(&p, Event::Line, 3, "f", &[], &locals);
    let next = NextState::new(&p, &prev, Some(&from), None, &Action::StepOver);
    assert_eq!(options(next.bindings()), named(&[("x", &["7"])]));
}

// --- full locals: what a step cannot change is written again, as it was

#[test]
fn full_locals_a_step_keeps_what_its_line_cannot_change() {
    let p = ProgramModel::of(LOOP);
    let locals = [("xs", "[1, 2]"), ("total", "0"), ("x", "1")];
    let prev = state(&p, Event::Line, 4, "f", &[], &locals);
    let header = "<|line|>3 0 f";
    let diff = NextState::new(&p, &prev, None, None, &Action::StepOver);
    assert!(diff.kept_by_step(header, false).is_none());
    assert!(diff.body_spec(header, false).diff);
    let full = diff.writing(Locals::Full);
    // `total += x` rebinds total; xs and x keep their values and must be written.
    assert_eq!(
        options(full.kept_by_step(header, false).as_ref()),
        named(&[("xs", &["[1, 2]"]), ("x", &["1"])])
    );
    let spec = full.body_spec(header, false);
    assert!(!spec.diff);
    // Every name is written again: the step can unbind none.
    assert_eq!(spec.held, ["total", "x", "xs"].map(String::from));
    // Not into a call, which starts a frame of its own.
    assert!(full.kept_by_step("<|call|>1 1 g", false).is_none());
}

#[test]
fn full_locals_past_a_loops_end_its_variable_keeps_its_last_item() {
    let p = ProgramModel::of(LOOP);
    let locals = [("xs", "[1, 2]"), ("total", "3"), ("x", "2")];
    let from = state(&p, Event::Line, 4, "f", &[], &locals);
    let prev = state(&p, Event::Line, 3, "f", &[], &locals);
    let next =
        NextState::new(&p, &prev, Some(&from), None, &Action::StepOver).writing(Locals::Full);
    // Into the block, x takes the loop's next item (none here: the loop ends) ...
    assert!(next.values("<|line|>4 0 f", false).is_some());
    // ... and past it the loop's values do not hold: a loop that ends binds nothing,
    // so x keeps its last item, as every name the line cannot change keeps its value.
    let after = next.values("<|line|>5 0 f", false);
    assert_eq!(
        options(after.as_ref()),
        named(&[("xs", &["[1, 2]"]), ("total", &["3"]), ("x", &["2"])])
    );
    // A diff past the loop's end cannot name x.
    let diff = NextState::new(&p, &prev, Some(&from), None, &Action::StepOver);
    assert_eq!(
        diff.body_spec("<|line|>5 0 f", false).changeable,
        Some(vec![])
    );
}

#[test]
fn a_name_an_except_block_unbinds_is_the_only_one_left_open() {
    // `e` vanishes where its `except` block ends; the function's other steps still
    // keep (full) or leave out (diff) what they cannot change.
    let source = "def f(xs):\n    total = 0\n    for x in xs:\n        try:\n            total += 10 // x\n        except ZeroDivisionError as e:\n            total = -1\n    return total\n";
    let p = ProgramModel::of(source);
    let locals = [
        ("xs", "[0, 2]"),
        ("total", "-1"),
        ("x", "0"),
        (
            "e",
            "ZeroDivisionError('integer division or modulo by zero')",
        ),
    ];
    let prev = state(&p, Event::Line, 7, "f", &[], &locals);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    // `total = -1` ends the block: total is rebound, e may be gone, and a diff that
    // loses a name is written in full.
    let header = "<|line|>3 0 f";
    assert_eq!(next.body_spec(header, false).changeable, None);
    let full = next.writing(Locals::Full);
    assert_eq!(
        full.body_spec(header, false).changeable,
        Some(["e", "total"].map(String::from).to_vec())
    );
    assert_eq!(
        options(full.kept_by_step(header, false).as_ref()),
        named(&[("xs", &["[0, 2]"]), ("x", &["0"])])
    );
    // Every name but e is written again.
    assert_eq!(
        full.body_spec(header, false).held,
        ["total", "x", "xs"].map(String::from)
    );
}

#[test]
fn a_name_an_except_block_could_unbind_but_does_not_hold_leaves_a_diff_known() {
    let source = "def f(xs):\n    total = 0\n    for x in xs:\n        try:\n            total += 10 // x\n        except ZeroDivisionError as e:\n            total = -1\n    return total\n";
    let p = ProgramModel::of(source);
    let prev = state(
        &p,
        Event::Line,
        5,
        "f",
        &[],
        &[("xs", "[2]"), ("total", "0"), ("x", "2")],
    );
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    assert_eq!(
        next.body_spec("<|line|>3 0 f", false).changeable,
        Some(vec!["total".to_string()])
    );
}

#[test]
fn from_a_fresh_call_to_its_first_line_nothing_changes() {
    let p = ProgramModel::of(LOOP);
    let call = state(&p, Event::Call, 1, "f", &[], &[("xs", "[1, 2]")]);
    let diff = NextState::new(&p, &call, None, None, &Action::StepInto);
    assert_eq!(
        diff.body_spec("<|line|>2 0 f", false).changeable,
        Some(vec![])
    );
    let full = diff.writing(Locals::Full);
    assert_eq!(
        options(full.kept_by_step("<|line|>2 0 f", false).as_ref()),
        named(&[("xs", &["[1, 2]"])])
    );
}

#[test]
fn from_a_closures_fresh_call_its_free_variables_may_appear() {
    // Python copies a closure's free variables into its frame at its first
    // instruction, after the `call` event: the first line shows `scale` too.
    let source = "def f(scale):\n    def g(x):\n        return x * scale\n    return g(2)\n\ndef h(x):\n    return x\n";
    let p = ProgramModel::of(source);
    let call = state(&p, Event::Call, 2, "g", &[("f", 4)], &[("x", "2")]);
    let next = NextState::new(&p, &call, None, None, &Action::StepInto);
    assert_eq!(next.body_spec("<|line|>3 1 g", false).changeable, None);
    // A function of the module starts with its parameters alone.
    let call = state(&p, Event::Call, 6, "h", &[("f", 4)], &[("x", "2")]);
    let next = NextState::new(&p, &call, None, None, &Action::StepInto);
    assert_eq!(
        next.body_spec("<|line|>7 1 h", false).changeable,
        Some(vec![])
    );
}

// --- statements that change no object

/// The names a diff may write after a Step Over from `line` of `f` to `to`.
fn changeable_after(p: &ProgramModel, line: u32, locals: &[(&str, &str)], to: u32) -> Vec<String> {
    let prev = state(p, Event::Line, line, "f", &[], locals);
    let next = NextState::new(p, &prev, None, None, &Action::StepOver);
    let header = format!("<|line|>{to} 0 f");
    next.body_spec(&header, false).changeable.expect("known")
}

#[test]
fn a_statement_of_pure_builtins_changes_only_what_it_binds() {
    let source =
        "def f(xs, ys):\n    pair = (min(xs), max(xs))\n    ys.append(pair)\n    return ys\n";
    let p = ProgramModel::of(source);
    let locals = [("xs", "[3, 1]"), ("ys", "[]")];
    assert_eq!(changeable_after(&p, 2, &locals, 3), ["pair"]);
    // `ys.append(...)` may change every list the frame holds (aliases included).
    let locals = [("xs", "[3, 1]"), ("ys", "[]"), ("pair", "(1, 3)")];
    assert_eq!(changeable_after(&p, 3, &locals, 4), ["xs", "ys"]);
}

#[test]
fn a_def_class_or_import_binds_nothing_the_tracer_shows() {
    // The tracer hides a function or class under its own name and every module: the
    // source shows them. A decorator may bind something else.
    let source = "def f(xs):\n    import os.path as osp\n    def g(y):\n        return y\n    class C:\n        pass\n    @staticmethod\n    def h():\n        pass\n    n = 1\n    return n\n";
    let p = ProgramModel::of(source);
    let locals = [("xs", "(1,)")];
    assert!(changeable_after(&p, 2, &locals, 3).is_empty());
    assert!(changeable_after(&p, 3, &locals, 5).is_empty());
    assert!(changeable_after(&p, 5, &locals, 7).is_empty());
    assert!(p.decorated(8) && !p.decorated(3));
    assert_eq!(changeable_after(&p, 8, &locals, 10), ["h"]);
}

#[test]
fn a_pure_looking_statement_may_change_objects_where_code_could_run_unseen() {
    // A class's dunder methods run under builtins; a generator's code runs when it
    // is iterated; `xs += ...` changes the list that aliases share.
    let with_dunder = "class A:\n    def __len__(self):\n        return 0\ndef f(xs):\n    n = len(xs)\n    return n\n";
    let p = ProgramModel::of(with_dunder);
    assert_eq!(changeable_after(&p, 5, &[("xs", "[1]")], 6), ["n", "xs"]);
    // A class whose code runs only where it is named changes nothing unseen.
    let plain_class = "class A:\n    pass\ndef f(xs):\n    n = len(xs)\n    return n\n";
    let p = ProgramModel::of(plain_class);
    assert_eq!(changeable_after(&p, 4, &[("xs", "[1]")], 5), ["n"]);
    // The dict `locals()` gave is refreshed with the frame's names when it is read.
    let exposed = "def f(xs):\n    seen = locals()\n    n = len(xs)\n    return n\n";
    let p = ProgramModel::of(exposed);
    let locals = [("xs", "[1]"), ("seen", "{'xs': [1]}")];
    assert_eq!(changeable_after(&p, 3, &locals, 4), ["n", "seen", "xs"]);
    let source = "def f(xs, g):\n    n = sum(g)\n    xs += [n]\n    return xs\n";
    let p = ProgramModel::of(source);
    let generator = [("xs", "[1]"), ("g", "<generator object <genexpr> at 0x1>")];
    assert_eq!(changeable_after(&p, 2, &generator, 3), ["g", "n", "xs"]);
    let locals = [("xs", "[1]"), ("ys", "[1]"), ("n", "1")];
    assert_eq!(changeable_after(&p, 3, &locals, 4), ["xs", "ys"]);
}

#[test]
fn full_locals_into_a_loops_block_its_variable_is_written() {
    let p = ProgramModel::of(LOOP);
    let prev = state(
        &p,
        Event::Line,
        3,
        "f",
        &[],
        &[("xs", "[1, 2]"), ("total", "0")],
    );
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver).writing(Locals::Full);
    assert_eq!(
        next.body_spec("<|line|>4 0 f", false).held,
        ["total", "x", "xs"].map(String::from)
    );
    // Past the block (an empty list), x is not bound.
    assert_eq!(
        next.body_spec("<|line|>5 0 f", false).held,
        ["total", "xs"].map(String::from)
    );
}

#[test]
fn inside_its_except_block_the_name_stays() {
    let source = "def f(x):\n    try:\n        y = 1 // x\n    except ZeroDivisionError as e:\n        print(e)\n        y = 0\n    return y\n";
    let p = ProgramModel::of(source);
    let locals = [
        ("x", "0"),
        (
            "e",
            "ZeroDivisionError('integer division or modulo by zero')",
        ),
    ];
    let prev = state(&p, Event::Line, 5, "f", &[], &locals);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    // `print(e)` on to `y = 0`: still in the block, nothing changes.
    assert_eq!(
        next.body_spec("<|line|>6 0 f", false).changeable,
        Some(vec![])
    );
    // Leaving the block (an exception in `print`, caught further out) may unbind e.
    assert_eq!(next.body_spec("<|line|>7 0 f", false).changeable, None);
    let full = next.writing(Locals::Full);
    assert_eq!(
        full.body_spec("<|line|>6 0 f", false).held,
        ["e", "x"].map(String::from)
    );
}

#[test]
fn a_print_step_writes_stdout_and_a_pure_step_none() {
    let source = "def f(x):\n    print(x)\n    y = len(str(x))\n    g(y)\n    return y\n";
    let p = ProgramModel::of(source);
    let at = |line| state(&p, Event::Line, line, "f", &[], &[("x", "1"), ("y", "1")]);
    let (print, pure, call) = (at(2), at(3), at(4));
    let step = |prev| NextState::new(&p, prev, None, None, &Action::StepOver);
    assert_eq!(
        step(&print).body_spec("<|line|>3 0 f", false).stdout,
        Some(true)
    );
    assert_eq!(
        step(&pure).body_spec("<|line|>4 0 f", false).stdout,
        Some(false)
    );
    // A call of the program's (or an unknown) function may print.
    assert_eq!(step(&call).body_spec("<|line|>5 0 f", false).stdout, None);
    // Backwards, the rule stands back.
    let back = NextState::new(&p, &pure, None, None, &Action::InvStepOver);
    assert_eq!(back.body_spec("<|line|>2 0 f", false).stdout, None);
}

#[test]
fn nothing_is_printed_between_a_call_and_its_first_line() {
    let source =
        "def f(x):\n    print(x)\n    return x\n\ndef g():\n    yield print(1)\n    return 2\n";
    let p = ProgramModel::of(source);
    let call = state(&p, Event::Call, 1, "f", &[], &[("x", "1")]);
    let step = NextState::new(&p, &call, None, None, &Action::StepInto);
    assert_eq!(step.body_spec("<|line|>2 0 f", false).stdout, Some(false));
    // A generator resumed on its `yield` line finishes that line (and may print).
    let resumed = state(&p, Event::Call, 6, "g", &[], &[]);
    let step = NextState::new(&p, &resumed, None, None, &Action::StepInto);
    assert_eq!(step.body_spec("<|line|>7 0 g", false).stdout, None);
}

#[test]
fn a_print_of_expressions_writes_stdout_unless_its_step_ends_in_a_handler() {
    let source = "def f(xs):\n    try:\n        print(min(xs) // 0)\n    except ZeroDivisionError:\n        pass\n    print(*xs, end='')\n    return xs\n";
    let p = ProgramModel::of(source);
    let at = |line| state(&p, Event::Line, line, "f", &[], &[("xs", "[1]")]);
    let (print, bare) = (at(3), at(6));
    let step = |prev| NextState::new(&p, prev, None, None, &Action::StepOver);
    assert_eq!(step(&print).body_spec("<|line|>4 0 f", false).stdout, None);
    assert_eq!(
        step(&print).body_spec("<|line|>6 0 f", false).stdout,
        Some(true)
    );
    // `end=''` may print nothing (`xs` may be empty).
    assert_eq!(step(&bare).body_spec("<|line|>7 0 f", false).stdout, None);
}

#[test]
fn a_diff_carries_every_name_the_step_cannot_unbind() {
    let source = "def f(x):\n    try:\n        y = 1 // x\n    except ZeroDivisionError as e:\n        print(e)\n        y = 0\n    return y\n";
    let p = ProgramModel::of(source);
    let error = "ZeroDivisionError('integer division or modulo by zero')";
    let prev = state(&p, Event::Line, 5, "f", &[], &[("x", "0"), ("e", error)]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    // In the block, e stays; leaving it (an exception in `print`) may unbind e.
    assert_eq!(next.body_spec("<|line|>6 0 f", false).carried, ["e", "x"]);
    assert_eq!(next.body_spec("<|line|>7 0 f", false).carried, ["x"]);
    // Backwards, a name bound by the statement is not there before it.
    let back = NextState::new(&p, &prev, None, None, &Action::InvStepOver);
    assert!(back.body_spec("<|line|>4 0 f", false).carried.is_empty());
}

#[test]
fn bindings_a_field_set_or_appended_on_an_object_that_shows_its_fields() {
    let source = "class Meter:\n    def __init__(self, start):\n        self.total = start\n        self.seen = []\n\n    def add(self, value):\n        self.total += value\n        self.seen.append(value)\n        return self.total\n";
    let p = ProgramModel::of(source);
    let after = |line, locals: &[(&str, &str)]| {
        let prev = state(&p, Event::Line, line, "f", &[], locals);
        let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
        next.bindings().cloned()
    };
    let fresh = [("self", "Meter()"), ("start", "5")];
    assert_eq!(
        options(after(3, &fresh).as_ref()),
        named(&[("self", &["Meter(total=5)"])])
    );
    let built = [("self", "Meter(total=5)"), ("start", "5")];
    assert_eq!(
        options(after(4, &built).as_ref()),
        named(&[("self", &["Meter(total=5, seen=[])"])])
    );
    let adding = [("self", "Meter(total=5, seen=[1])"), ("value", "2")];
    assert_eq!(
        options(after(7, &adding).as_ref()),
        named(&[("self", &["Meter(total=7, seen=[1])"])])
    );
    assert_eq!(
        options(after(8, &adding).as_ref()),
        named(&[("self", &["Meter(total=5, seen=[1, 2])"])])
    );
    // Not of an object whose repr is its own, nor where a property could take the value.
    assert!(after(7, &[("self", "Other(total=5)"), ("value", "2")]).is_none());
    let hooked = ProgramModel::of(&format!(
        "{source}\n    @property\n    def mean(self):\n        return 0\n"
    ));
    let prev = state(&hooked, Event::Line, 7, "f", &[], &adding);
    let next = NextState::new(&hooked, &prev, None, None, &Action::StepOver);
    assert!(next.bindings().is_none());
}

#[test]
fn bindings_a_long_value_as_the_tracer_cuts_it() {
    let source = "def f(n):\n    dp = [[0] * (n + 1) for _ in range(n + 1)]\n    return dp\n";
    let p = ProgramModel::of(source);
    let prev = state(&p, Event::Line, 2, "f", &[], &[("n", "20")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    let row = format!("[{}0]", "0, ".repeat(20));
    let whole = format!("[{}]", vec![row; 21].join(", "));
    let shown = crate::program::known::as_shown(whole);
    assert!(shown.ends_with('…'));
    assert_eq!(
        options(next.bindings()),
        named(&[("dp", &[shown.as_str()])])
    );
}

#[test]
fn returned_value_of_a_statement_over_lines_reading_named_tuple_fields() {
    let source = "from typing import NamedTuple\n\nclass Point(NamedTuple):\n    x: int\n    y: int\n\ndef cross(p, q):\n    return (p.x * q.y) - (\n        p.y * q.x\n    )\n";
    let p = ProgramModel::of(source);
    let locals = [("p", "Point(x=1, y=2)"), ("q", "Point(x=3, y=5)")];
    let prev = state(&p, Event::Line, 8, "cross", &[], &locals);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    let written = "{\"..\":\"..\"}\n<|value|>";
    assert_eq!(
        next.returned_value("<|return|>8 0 cross", written)
            .as_deref(),
        Some("\"-1\"")
    );
}

#[test]
fn a_statement_python_settles_cannot_raise() {
    let source = "def f(step):\n    n = step * 2\n    return n\n    return g(n)\n    m = n // 0\n";
    let p = ProgramModel::of(source);
    let raises_at = |line| {
        let prev = state(
            &p,
            Event::Line,
            line,
            "f",
            &[],
            &[("step", "3"), ("n", "6")],
        );
        let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
        next.flow_lines("<|exception|>")
            .map(|(_, lines)| !lines.is_empty())
    };
    assert_eq!(raises_at(2), Some(false));
    assert_eq!(raises_at(3), Some(false));
    assert_eq!(raises_at(4), Some(true), "g may raise");
    assert_eq!(raises_at(5), Some(true), "a division by zero raises");
}

// --- handlers: an `except` line follows only an exception

#[test]
fn flow_lines_no_handler_after_a_line_or_a_return_that_raised_nothing() {
    let source = "\
def f(xs):
    try:
        k = xs[0]
    except IndexError:
        k = 0
    return k

y = f([1])
";
    let p = ProgramModel::of(source);
    let after = |event: Event, line: u32| {
        let prev = state(&p, event, line, "f", &[("<module>", 8)], &[]);
        let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
        next.flow_lines("<|line|>").map(|(_, lines)| lines)
    };
    assert_eq!(after(Event::Line, 3), Some(lines(&[6])));
    assert!(after(Event::Exception, 3).unwrap().contains(&4));
    // From the handler's line into its block.
    assert!(after(Event::Line, 4).unwrap().contains(&5));
    // Back in a caller after a return, no handler of its either.
    let source = "\
def g():
    return 1

try:
    y = g()
except ValueError:
    y = 2
print(y)
";
    let p = ProgramModel::of(source);
    let prev = state(&p, Event::Return, 2, "g", &[("<module>", 5)], &[]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
    let (_, reached) = next.flow_lines("<|line|>").unwrap();
    assert!(!reached.contains(&6), "{reached:?}");
}

// --- pops: `NAME.pop()` gives a value and changes the list or dict

#[test]
fn bindings_a_pop_binds_its_value_and_shortens_the_list() {
    let source = "\
def f(heights, stack):
    h = heights[stack.pop()]
    return h
";
    let p = ProgramModel::of(source);
    let locals = [("heights", "[2, 1, 5]"), ("stack", "[0, 2]")];
    let prev = state(&p, Event::Line, 2, "f", &[], &locals);
    let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
    assert_eq!(
        options(next.bindings()),
        named(&[("h", &["5"]), ("stack", &["[0]"])])
    );
    // The list it reads is not one the step can change.
    let spec = next.body_spec("<|line|>3 0 f", false);
    assert_eq!(
        spec.changeable,
        Some(vec!["h".to_string(), "stack".to_string()])
    );
    // Nothing is settled where the pop would raise, or may not run at all.
    let prev = state(
        &p,
        Event::Line,
        2,
        "f",
        &[],
        &[("heights", "[2]"), ("stack", "[]")],
    );
    let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
    assert!(next.bindings().is_none());
    let source = "def f(d, ok):\n    v = d.pop('a') if ok else 0\n    return v\n";
    let p = ProgramModel::of(source);
    let at = |ok: &str| {
        let prev = state(
            &p,
            Event::Line,
            2,
            "f",
            &[],
            &[("d", "{'a': 1}"), ("ok", ok)],
        );
        let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
        next.bindings().map(|_| options(next.bindings()))
    };
    // The branch that does not pop is settled; the one that does is not worked out.
    assert_eq!(at("False"), Some(named(&[("v", &["0"])])));
    assert_eq!(at("True"), None);
}

#[test]
fn bindings_a_bare_pop_of_a_dict_key() {
    let source = "def f(d):\n    d.pop('a')\n    return d\n";
    let p = ProgramModel::of(source);
    let prev = state(&p, Event::Line, 2, "f", &[], &[("d", "{'a': 1, 'b': 2}")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
    assert_eq!(options(next.bindings()), named(&[("d", &["{'b': 2}"])]));
}

// --- raised: what a `raise` line raises

#[test]
fn returned_the_exception_a_raise_line_raises() {
    let source = "\
def check(n):
    if n < 0:
        raise ValueError('negative: ' + str(n))
    return n
";
    let p = ProgramModel::of(source);
    let prev = state(&p, Event::Line, 3, "check", &[], &[("n", "-2")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
    let raised = next.returned("<|exception|>3 0 check").expect("settled");
    assert_eq!(
        raised.value("{}").as_deref(),
        Some(r#""ValueError('negative: -2')""#)
    );
    // Not for a class of the program's, nor an exception from elsewhere.
    let p = ProgramModel::of(&format!(
        "class ValueError(Exception):\n    pass\n\n{source}"
    ));
    let prev = state(&p, Event::Line, 6, "check", &[], &[("n", "-2")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
    assert!(next.returned("<|exception|>6 0 check").is_none());
}

// --- call sites: the first of several, and arguments built by a comprehension

#[test]
fn bound_arguments_the_first_of_several_calls_and_a_comprehension_argument() {
    let source = "\
def f(m):
    return m

def g(n):
    return f(n - 1) + f([v * 2 for v in range(n)])
";
    let p = ProgramModel::of(source);
    let prev = state(&p, Event::Line, 5, "g", &[], &[("n", "2")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
    assert_eq!(
        next.bound_arguments("<|call|>1 1 f").as_deref(),
        Some(r#"{"m":"1"}"#)
    );
    // A call in a comprehension binds the comprehension's names, not the frame's.
    let source = source.replace(
        "f(n - 1) + f([v * 2 for v in range(n)])",
        "[f(n) for n in [5]]",
    );
    let p = ProgramModel::of(&source);
    let prev = state(&p, Event::Line, 5, "g", &[], &[("n", "2")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
    assert_eq!(next.bound_arguments("<|call|>1 1 f"), None);
    // An assignment runs its value first: `d[f(1)] = f(2)` calls `f(2)` first.
    let source = "def f(m):\n    return m\n\ndef g(d):\n    d[f(1)] = f(2)\n";
    let p = ProgramModel::of(source);
    let prev = state(&p, Event::Line, 5, "g", &[], &[("d", "{}")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
    assert_eq!(next.bound_arguments("<|call|>1 1 f"), None);
}

// --- guess: what the rules settle holds in a guess

#[test]
fn guess_keeps_what_the_rules_settle() {
    let source = "def f(xs):\n    n = len(xs) + 1\n    return n\n";
    let p = ProgramModel::of(source);
    let prev = state(&p, Event::Line, 2, "f", &[], &[("xs", "[4, 5]")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
    let guess = next.guess().expect("a guess");
    assert_eq!(guess.line, 3);
    assert_eq!(guess.locals.get("n").map(String::as_str), Some("3"));
}

#[test]
fn printed_by_step_back_from_the_call_a_print_makes() {
    let source = "def f(n):\n    return [n, n * 2]\n\nprint(f(3), end='!')\nprint(f(1) + [0])\n";
    let p = ProgramModel::of(source);
    let back = |line: u32, value: &str, header: &str| {
        let caller = module_line(&p, line, &[]);
        let mut prev = state(
            &p,
            Event::Return,
            2,
            "f",
            &[("<module>", line)],
            &[("n", "3")],
        );
        prev.value = Some(value.into());
        let next = NextState::new(&p, &prev, None, Some(&caller), &Action::StepInto);
        next.printed_by_step(header)
            .map(|printed| printed.admits("[3, 6]!"))
    };
    assert_eq!(back(4, "[3, 6]", "<|line|>5 0 <module>"), Some(true));
    assert_eq!(back(4, "[3, 7]", "<|line|>5 0 <module>"), Some(false));
    // Not where the print does more with the value, nor in another frame.
    assert_eq!(back(5, "[1, 2]", "<|return|>5 0 <module>"), None);
    assert_eq!(back(4, "[3, 6]", "<|line|>2 1 f"), None);
}

#[test]
fn flow_lines_a_settled_statement_calls_nothing() {
    let p = ProgramModel::of(CALLS);
    let prev = line_in_add(&p, 2, &[("a", "5"), ("b", "2")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
    assert_eq!(next.flow_lines("<|call|>"), Some((2, lines(&[]))));
}

#[test]
fn guess_back_in_a_caller_not_known_is_its_calling_line() {
    let p = ProgramModel::of(CALLS);
    let prev = state(
        &p,
        Event::Return,
        3,
        "add",
        &[("<module>", 6)],
        &[("total", "7")],
    );
    let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
    let guess = next.guess().expect("a guess");
    assert_eq!(
        (guess.line, guess.depth, guess.function.as_str()),
        (6, 0, "<module>")
    );
    assert!(guess.locals.is_empty());
}

#[test]
fn bindings_an_assignment_binds_where_a_nested_function_says_nonlocal() {
    let source = "\
def bump(words):
    calls = 0
    def go(w):
        nonlocal calls
        calls += 1
    return calls
";
    let p = ProgramModel::of(source);
    let prev = state(&p, Event::Line, 2, "bump", &[], &[("words", "[]")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
    assert_eq!(options(next.bindings()), named(&[("calls", &["0"])]));
    // Not where the frame's own names may be globals.
    let p = ProgramModel::of("count = 0\ndef bump():\n    global count\n    count = 1\n");
    let prev = state(&p, Event::Line, 4, "bump", &[], &[]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
    assert!(next.bindings().is_none());
}

// --- surely_raises: a statement whose settled parts make an operation fail

#[test]
fn flow_lines_a_statement_that_surely_raises_goes_to_its_exception() {
    let source = "def f(xs):\n    idx = 11 // (len(xs) % 3)\n    return idx\n";
    let p = ProgramModel::of(source);
    let prev = state(&p, Event::Line, 2, "f", &[], &[("xs", "[1, 2, 3]")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
    assert_eq!(next.flow_lines("<|line|>"), Some((0, lines(&[]))));
    assert_eq!(next.flow_lines("<|exception|>"), Some((0, lines(&[2]))));
    assert_eq!(next.flow_lines("<|call|>"), Some((1, lines(&[]))));
    let raised = next.returned("<|exception|>2 0 f").expect("settled");
    assert_eq!(
        raised.value("{}").as_deref(),
        Some(r#""ZeroDivisionError('integer division or modulo by zero')""#)
    );
    // Where it does not divide by zero, the step goes on.
    let prev = state(&p, Event::Line, 2, "f", &[], &[("xs", "[1]")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
    assert_eq!(next.flow_lines("<|line|>"), Some((0, lines(&[3]))));
}

#[test]
fn body_spec_a_def_line_changes_no_object_and_a_settled_append_prints_nothing() {
    let source = "def f(words):\n    def go(w):\n        return w\n    words.append('x')\n    return words\n";
    let p = ProgramModel::of(source);
    let prev = state(&p, Event::Line, 2, "f", &[], &[("words", "['a']")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
    // (The function it binds the tracer hides.)
    assert_eq!(
        next.body_spec("<|line|>4 0 f", false).changeable,
        Some(vec![])
    );
    let prev = state(&p, Event::Line, 4, "f", &[], &[("words", "['a']")]);
    let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
    assert_eq!(next.body_spec("<|line|>5 0 f", false).stdout, Some(false));
}

#[test]
fn returned_globals_back_in_a_caller_are_the_returning_frames() {
    let source = "\
LIMIT = 2

def rank(xs):
    return len(xs)

def compute(words):
    low = rank([w.upper() for w in words])
    return low
";
    let p = ProgramModel::of(source);
    let mut prev = state(
        &p,
        Event::Return,
        4,
        "rank",
        &[("compute", 7)],
        &[("xs", "[]")],
    );
    prev.depth = 2;
    prev.stack.insert(
        0,
        Frame {
            function: "<module>".into(),
            line: 10,
        },
    );
    prev.globals.insert("LIMIT".into(), "2".into());
    let next = NextState::new(&p, &prev, None, None, &Action::StepInto);
    assert_eq!(
        next.returned_globals("<|line|>8 1 compute").as_deref(),
        Some(r#"{"LIMIT":"2"}"#)
    );
    // Not in the frame that returned, nor after a Step Over (which runs more).
    assert_eq!(next.returned_globals("<|line|>4 2 rank"), None);
    let next = NextState::new(&p, &prev, None, None, &Action::StepOver);
    assert_eq!(next.returned_globals("<|line|>8 1 compute"), None);
}
