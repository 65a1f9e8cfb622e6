//! The decoding grammar must never rule out what really happens: for every program in
//! `tests/programs/`, from every state (up to a cap) and for every action, the true
//! outcome, written as the model would write it, passes the grammar token by token.
//! (The grammar only needs a tokenizer; the small test model supplies one.) Both trace
//! forms: diffs after a single step, and full locals, where the grammar also writes
//! what a step cannot change.
#![cfg(feature = "neural")]

use neural_model::infer::{Footprints, Predictor};
use neural_model::language::Locals;
use neural_model::{trace, Action, Limits, Program};
use std::path::PathBuf;

const STATES_PER_PROGRAM: usize = 40;

#[test]
fn the_grammar_admits_every_true_outcome_written_as_diffs() {
    admits_every_true_outcome(Locals::Diff);
}

#[test]
fn the_grammar_admits_every_true_outcome_written_in_full() {
    admits_every_true_outcome(Locals::Full);
}

fn admits_every_true_outcome(form: Locals) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut predictor = Predictor::load(&root.join("weights/test"))
        .expect("the test model ships with the repository");
    predictor.config.trace_locals = form;
    let limits = Limits {
        max_events: 300,
        ..Limits::default()
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(root.join("tests/programs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "py"))
        .collect();
    files.sort();
    let (mut checked, mut refused) = (0, Vec::new());
    for path in files {
        let program = Program::load(&path, None).unwrap();
        let Ok(run) = trace(&program, &limits) else {
            continue; // the syntax error program
        };
        let Ok(context) = predictor.prepare(&program.source, None) else {
            continue; // longer than the test model's context
        };
        let states = run.tree.states();
        let some_lines: std::collections::BTreeSet<u32> =
            states.iter().step_by(3).map(|s| s.line).take(2).collect();
        let actions = [
            Action::StepInto,
            Action::StepOver,
            Action::StepReturn,
            Action::Breakpoint(some_lines.clone()),
            Action::Continue,
            Action::InvStepInto,
            Action::InvStepOver,
            Action::InvStepCall,
            Action::InvBreakpoint(some_lines),
        ];
        // How the run came here: each state is one Step Into on from the one before.
        let mut footprints = Footprints::default();
        for (i, state) in states.iter().enumerate().take(STATES_PER_PROGRAM) {
            if let Some(from) = i.checked_sub(1).map(|k| &states[k]) {
                footprints.record(context.program(), from, &Action::StepInto, Some(state));
            }
            for action in &actions {
                let truth = run.tree.outcome(i, action);
                checked += 1;
                if let Err(why) =
                    predictor.grammar_admits(&context, state, &footprints, action, &truth)
                {
                    refused.push(format!(
                        "{} state {i} ({} line {}) {action}: {why}",
                        path.file_name().unwrap().to_string_lossy(),
                        state.event,
                        state.line
                    ));
                }
            }
        }
    }
    assert!(checked > 1000, "only {checked} outcomes checked");
    assert!(
        refused.is_empty(),
        "{} of {checked} true outcomes refused:\n{}",
        refused.len(),
        refused.join("\n")
    );
}

#[test]
fn a_return_of_a_local_carries_that_locals_value() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let predictor = Predictor::load(&root.join("weights/test"))
        .expect("the test model ships with the repository");
    let program = Program::load(
        &root.join("tests/programs/loop_break_continue.py"),
        Some("scan([1, -2, 3, 12, 4])".into()),
    )
    .unwrap();
    let run = trace(&program, &Limits::default()).unwrap();
    let context = predictor
        .prepare(&program.source, program.call.as_deref())
        .unwrap();
    let states = run.tree.states();
    // The step into `return total`'s return state, from the line before it.
    let at = states
        .iter()
        .position(|s| s.event == neural_model::Event::Return && s.source.trim() == "return total")
        .expect("the program returns total");
    let (current, truth) = (&states[at - 1], run.tree.outcome(at - 1, &Action::StepInto));
    predictor
        .grammar_admits(
            &context,
            current,
            &Footprints::default(),
            &Action::StepInto,
            &truth,
        )
        .unwrap();
    let mut wrong = truth.clone();
    if let neural_model::Outcome::State { state } = &mut wrong {
        state.value = Some("12345".into());
    }
    assert!(predictor
        .grammar_admits(
            &context,
            current,
            &Footprints::default(),
            &Action::StepInto,
            &wrong
        )
        .is_err());
}

/// A traced program and what the grammar says of edited outcomes of its steps.
struct Traced {
    predictor: Predictor,
    context: neural_model::infer::ProgramContext,
    states: Vec<neural_model::State>,
    run: neural_model::Trace,
}

impl Traced {
    fn new(name: &str, source: &str, call: &str) -> Self {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let predictor = Predictor::load(&root.join("weights/test"))
            .expect("the test model ships with the repository");
        let path = std::env::temp_dir().join(format!("{name}-{}.py", std::process::id()));
        std::fs::write(&path, source).unwrap();
        let program = Program::load(&path, Some(call.into())).unwrap();
        let run = trace(&program, &Limits::default()).unwrap();
        std::fs::remove_file(&path).unwrap();
        let context = predictor.prepare(source, Some(call)).unwrap();
        let states = run.tree.states().to_vec();
        Traced {
            predictor,
            context,
            states,
            run,
        }
    }

    /// The states on `line`, in the order they ran.
    fn on_line(&self, line: u32) -> Vec<usize> {
        (1..self.states.len())
            .filter(|&k| {
                self.states[k].event == neural_model::Event::Line && self.states[k].line == line
            })
            .collect()
    }

    /// Whether the grammar admits the true Step Into from state `k`, with `edits` made
    /// to its locals, knowing (or not) the state one step before.
    fn admits(&self, k: usize, knows_the_way_in: bool, edits: &[(&str, &str)]) -> bool {
        self.admits_edited(k, knows_the_way_in, |state| {
            for (name, value) in edits {
                state.locals.insert(name.to_string(), value.to_string());
            }
        })
    }

    fn admits_edited(
        &self,
        k: usize,
        knows_the_way_in: bool,
        edit: impl Fn(&mut neural_model::State),
    ) -> bool {
        let mut outcome = self.run.tree.outcome(k, &Action::StepInto);
        if let neural_model::Outcome::State { state } = &mut outcome {
            edit(state);
        }
        let mut footprints = Footprints::default();
        if knows_the_way_in {
            footprints.record(
                self.context.program(),
                &self.states[k - 1],
                &Action::StepInto,
                Some(&self.states[k]),
            );
        }
        self.predictor
            .grammar_admits(
                &self.context,
                &self.states[k],
                &footprints,
                &Action::StepInto,
                &outcome,
            )
            .is_ok()
    }
}

#[test]
fn a_loop_variable_takes_the_first_item_then_the_next() {
    let source =
        "def spell(word):\n    out = ''\n    for c in word:\n        out += c\n    return out\n";
    let t = Traced::new("spell", source, "spell('a-b')");
    let on_header = t.on_line(3);
    // Entering the loop (from line 2): only the first item.
    let first = on_header[0];
    assert!(t.admits(first, true, &[("c", "'a'")]));
    assert!(!t.admits(first, true, &[("c", "'-'")]));
    // Going round again (from line 4, after `c` was 'a'): only the item after it,
    // which the step's diff of locals must write (an unchanged 'a' is left out of it);
    // where the way in is unknown, the same: no loop encloses this one and no other
    // line binds `c`, so a bound `c` says the loop has begun.
    let again = on_header[1];
    assert_eq!(t.states[again - 1].line, 4);
    assert!(t.admits(again, true, &[("c", "'-'")]));
    assert!(!t.admits(again, true, &[("c", "'b'")]));
    assert!(!t.admits(again, true, &[("c", "'a'")]));
    assert!(t.admits(again, false, &[("c", "'-'")]));
    assert!(!t.admits(again, false, &[("c", "'a'")]));
    assert!(!t.admits(again, false, &[("c", "'b'")]));
    // With an item left the loop goes into its block (whichever way it came); after
    // the last it ends.
    let to_line = |line: u32, text: &'static str| {
        move |state: &mut neural_model::State| {
            state.line = line;
            state.source = text.into();
        }
    };
    assert!(!t.admits_edited(again, true, to_line(5, "    return out")));
    assert!(!t.admits_edited(again, false, to_line(5, "    return out")));
    let last = *on_header.last().unwrap();
    assert_eq!(t.states[last + 1].line, 5);
    assert!(t.admits(last, true, &[]));
    assert!(!t.admits_edited(last, true, to_line(4, "        out += c")));
    // Not knowing the way in, still no second start: the loop begins once.
    let again_from_the_start = |state: &mut neural_model::State| {
        to_line(4, "        out += c")(state);
        state.locals.insert("c".into(), "'a'".into());
    };
    assert!(!t.admits_edited(last, false, again_from_the_start));
    assert!(!t.admits_edited(last, false, to_line(4, "        out += c")));
}

#[test]
fn a_loop_inside_a_loop_may_begin_again_where_the_way_in_is_unknown() {
    let source = "def spell(words):\n    out = ''\n    for w in words:\n        for c in w:\n            out += c\n    return out\n";
    let t = Traced::new("spell2", source, "spell(['ab', 'cd'])");
    // The inner loop's line, going round after `c` was 'a'.
    let again = t.on_line(4)[1];
    assert_eq!(t.states[again - 1].line, 5);
    assert!(t.admits(again, true, &[("c", "'b'")]));
    assert!(!t.admits(again, true, &[("c", "'a'")]));
    // Not knowing the way in, it may be beginning again, with the first item.
    assert!(t.admits(again, false, &[("c", "'a'")]));
}

#[test]
fn a_loop_over_equal_items_goes_on_from_its_count() {
    let source =
        "def spell(word):\n    out = ''\n    for c in word:\n        out += c\n    return out\n";
    let t = Traced::new("spell3", source, "spell('a-b-c')");
    // Walk the run from its entry, as a session steps, up to the loop's line after
    // the second '-': only the count since the loop began says 'c' comes next.
    let third_dash = t.on_line(3)[4];
    let mut footprints = Footprints::default();
    for k in 1..=third_dash {
        let program = t.context.program();
        footprints.record(
            program,
            &t.states[k - 1],
            &Action::StepInto,
            Some(&t.states[k]),
        );
    }
    let admits = |c: &str| {
        let mut outcome = t.run.tree.outcome(third_dash, &Action::StepInto);
        if let neural_model::Outcome::State { state } = &mut outcome {
            state.locals.insert("c".into(), c.into());
        }
        t.predictor
            .grammar_admits(
                &t.context,
                &t.states[third_dash],
                &footprints,
                &Action::StepInto,
                &outcome,
            )
            .is_ok()
    };
    assert!(admits("'c'"));
    assert!(!admits("'b'"));
}

#[test]
fn loops_over_slices_enumerate_zip_and_dict_items_go_item_by_item() {
    let source = "\
def pairs(xs, d):
    out = []
    for i, v in enumerate(xs[1:]):
        out.append(i)
    for k, n in d.items():
        out.append(n)
    for a, b in zip(xs, 'pq'):
        out.append(b)
    return out
";
    let t = Traced::new("pairs", source, "pairs([5, 6, 7], {'a': 1, 'b': 2})");
    // The second time on each loop's line: the true next item, then a wrong one.
    let cases = [
        (3, ("i", "1"), ("v", "6")),
        (5, ("k", "'b'"), ("n", "1")),
        (7, ("a", "6"), ("b", "'p'")),
    ];
    for (line, right, wrong) in cases {
        let again = t.on_line(line)[1];
        assert!(t.admits(again, true, &[right]), "line {line}");
        assert!(!t.admits(again, true, &[wrong]), "line {line}");
        // The way in unknown, the same: each loop begins once in its frame.
        assert!(!t.admits(again, false, &[wrong]), "line {line}");
    }
}

#[test]
fn a_print_writes_its_literals_and_the_values_of_its_names() {
    let source = "\
def show(n):
    label = 'no'
    print('no index', n)
    print(f'{label} -> {n * 2}', end='!')
    return n
";
    let t = Traced::new("show", source, "show(5)");
    let stdout =
        |text: &'static str| move |state: &mut neural_model::State| state.stdout = text.into();
    let first = t.on_line(3)[0];
    assert!(t.admits_edited(first, false, stdout("no index 5\n")));
    assert!(!t.admits_edited(first, false, stdout("no break 5\n")));
    assert!(!t.admits_edited(first, false, stdout("no index 4\n")));
    assert!(!t.admits_edited(first, false, stdout("no index 5")));
    // The f-string's text, its names and the arithmetic the state settles are not
    // the model's to write.
    let second = t.on_line(4)[0];
    assert!(t.admits_edited(second, false, stdout("no -> 10!")));
    assert!(!t.admits_edited(second, false, stdout("no -> 11!")));
    assert!(!t.admits_edited(second, false, stdout("yes -> 10!")));
}

#[test]
fn a_plain_assignment_binds_its_literals_and_the_values_of_its_names() {
    let source = "\
def swap(k):
    a, b = (1, 'x')
    a, b = b, a
    c = k
    return c
";
    let t = Traced::new("swap", source, "swap(7)");
    let cases = [
        (2, ("a", "1"), ("a", "2")),
        (3, ("b", "1"), ("b", "2")),
        (4, ("c", "7"), ("c", "8")),
    ];
    for (line, right, wrong) in cases {
        let at = t.on_line(line)[0];
        assert!(t.admits(at, false, &[right]), "line {line}");
        assert!(!t.admits(at, false, &[wrong]), "line {line}");
    }
}

#[test]
fn a_name_an_assignment_binds_for_the_first_time_is_written() {
    let source = "\
import math

def run(k):
    total = k * 3
    m = math
    sqrt = math.sqrt
    return total
";
    let t = Traced::new("bound", source, "run(7)");
    let dropped = |name: &'static str| {
        move |state: &mut neural_model::State| {
            state.locals.shift_remove(name);
        }
    };
    let at = t.on_line(4)[0];
    assert!(t.admits(at, false, &[]));
    assert!(
        !t.admits_edited(at, false, dropped("total")),
        "total is bound now"
    );
    // What the tracer hides is not required: a module, a builtin under its own name.
    let at = t.on_line(5)[0];
    assert!(!t.states[at + 1].locals.contains_key("m"));
    assert!(t.admits(at, false, &[]));
    let at = t.on_line(6)[0];
    assert!(!t.states[at + 1].locals.contains_key("sqrt"));
    assert!(t.admits(at, false, &[]));
}

#[test]
fn back_in_the_caller_its_plain_values_are_what_they_were_at_the_call() {
    let source = "\
def inc(v):
    return v + 1

def run(k):
    label = 'n'
    total = inc(k)
    return total
";
    let t = Traced::new("caller", source, "run(3)");
    let s = &t.states;
    let call = (0..s.len())
        .find(|&k| s[k].event == neural_model::Event::Call && s[k].function == "inc")
        .unwrap();
    let back = (call..s.len())
        .find(|&k| s[k].event == neural_model::Event::Return && s[k].function == "inc")
        .unwrap();
    let admits = |caller: Option<usize>, name: &str, value: &str| {
        let mut outcome = t.run.tree.outcome(back, &Action::StepInto);
        if let neural_model::Outcome::State { state } = &mut outcome {
            state.locals.insert(name.into(), value.into());
        }
        // The step into the call, from the caller's line.
        let mut footprints = Footprints::default();
        if let Some(k) = caller {
            footprints.record(
                t.context.program(),
                &s[k],
                &Action::StepInto,
                Some(&s[k + 1]),
            );
        }
        t.predictor
            .grammar_admits(
                &t.context,
                &s[back],
                &footprints,
                &Action::StepInto,
                &outcome,
            )
            .is_ok()
    };
    let at_call = Some(call - 1);
    assert_eq!(s[call - 1].line, 6);
    assert!(admits(at_call, "label", "'n'"));
    assert!(!admits(at_call, "label", "'m'"));
    assert!(!admits(at_call, "k", "5"));
    // `total` is what the calling line binds: the value `inc` returned.
    assert!(admits(at_call, "total", "4"));
    assert!(!admits(at_call, "total", "9"));
    assert!(!admits(None, "total", "9"));
    assert!(admits(None, "label", "'m'"));
}

#[test]
fn a_call_that_cannot_reach_a_callers_list_leaves_it_and_its_names_as_they_were() {
    let source = "\
def inc(v):
    return v + 1

def push(xs):
    xs.append(0)
    return len(xs)

def run(k):
    seen = [k]
    total = inc(k)
    size = push(seen)
    return total + size
";
    let t = Traced::new("reach", source, "run(3)");
    let s = &t.states;
    let returns = |function: &str| {
        (0..s.len())
            .find(|&k| s[k].event == neural_model::Event::Return && s[k].function == function)
            .unwrap()
    };
    let call_of = |function: &str| {
        (0..s.len())
            .find(|&k| s[k].event == neural_model::Event::Call && s[k].function == function)
            .unwrap()
    };
    let admits = |function: &str, knows_caller: bool, edit: &dyn Fn(&mut neural_model::State)| {
        let back = returns(function);
        let mut outcome = t.run.tree.outcome(back, &Action::StepInto);
        if let neural_model::Outcome::State { state } = &mut outcome {
            edit(state);
        }
        let mut footprints = Footprints::default();
        if knows_caller {
            let call = call_of(function);
            footprints.record(
                t.context.program(),
                &s[call - 1],
                &Action::StepInto,
                Some(&s[call]),
            );
        }
        t.predictor
            .grammar_admits(
                &t.context,
                &s[back],
                &footprints,
                &Action::StepInto,
                &outcome,
            )
            .is_ok()
    };
    let set = |name: &'static str, value: &'static str| {
        move |state: &mut neural_model::State| {
            state.locals.insert(name.into(), value.into());
        }
    };
    let drop = |name: &'static str| {
        move |state: &mut neural_model::State| {
            state.locals.shift_remove(name);
        }
    };
    assert!(admits("inc", true, &|_| {}));
    // `inc(k)` names no list: `seen` stays, and is still there; `total` is bound.
    assert!(!admits("inc", true, &set("seen", "[4]")));
    assert!(!admits("inc", true, &drop("seen")));
    assert!(!admits("inc", true, &drop("total")));
    // Not knowing the call, the model decides.
    assert!(admits("inc", false, &set("seen", "[4]")));
    assert!(admits("inc", false, &drop("seen")));
    // `push(seen)` passes the list: what it holds now is the model's to write.
    assert!(admits("push", true, &|_| {}));
    assert!(admits("push", true, &set("seen", "[3, 0, 1]")));
    assert!(!admits("push", true, &drop("seen")));
}

#[test]
fn stepping_out_keeps_what_the_function_never_binds_and_every_name_it_holds() {
    let source = "\
def scale(n, label):
    total = n * 2
    label = label + '!'
    return total
";
    let t = Traced::new("out", source, "scale(4, 'x')");
    let s = &t.states;
    let admits = |edit: &dyn Fn(&mut neural_model::State)| {
        let mut outcome = t.run.tree.outcome(0, &Action::StepReturn);
        if let neural_model::Outcome::State { state } = &mut outcome {
            assert_eq!(state.event, neural_model::Event::Return);
            edit(state);
        }
        t.predictor
            .grammar_admits(
                &t.context,
                &s[0],
                &Footprints::default(),
                &Action::StepReturn,
                &outcome,
            )
            .is_ok()
    };
    assert_eq!(s[0].event, neural_model::Event::Call);
    assert!(admits(&|_| {}));
    // `n` is never assigned: it is still 4, and still there.
    assert!(!admits(&|state| {
        state.locals.insert("n".into(), "5".into());
    }));
    assert!(!admits(&|state| {
        state.locals.shift_remove("n");
    }));
    // `label` is assigned, `total` computed: the model's to write.
    assert!(admits(&|state| {
        state.locals.insert("label".into(), "'y'".into());
    }));
    assert!(admits(&|state| {
        state.locals.insert("total".into(), "9".into());
        state.value = Some("9".into()); // what `return total` returns
    }));
}

#[test]
fn a_step_into_a_call_enters_a_function_the_line_can_reach() {
    let source = |passed: &str, line_8: &str| {
        format!(
            "\
def f(x):
    return x + 1

def g(x):
    return x * 2

def run(k):
    {line_8}
    b = g(a)
    return b
{passed}"
        )
    };
    // Whether, from the state on line 8, the grammar admits the first call of `g`
    // (from line 9 where line 8 does not call it).
    let admits_g_from_line_8 = |passed: &str, line_8: &str| {
        let t = Traced::new("callee", &source(passed, line_8), "run(3)");
        let s = &t.states;
        let on_8 = t.on_line(8)[0];
        let call_g = (0..s.len())
            .find(|&k| s[k].event == neural_model::Event::Call && s[k].function == "g")
            .unwrap();
        let outcome = t.run.tree.outcome(call_g - 1, &Action::StepInto);
        assert!(t
            .predictor
            .grammar_admits(
                &t.context,
                &s[call_g - 1],
                &Footprints::default(),
                &Action::StepInto,
                &outcome
            )
            .is_ok());
        t.predictor
            .grammar_admits(
                &t.context,
                &s[on_8],
                &Footprints::default(),
                &Action::StepInto,
                &outcome,
            )
            .is_ok()
    };
    assert!(
        !admits_g_from_line_8("", "a = f(k)"),
        "line 8 names f, not g"
    );
    // A Step Into stops at the first call: from `a = f(k)` that is f's, even where a
    // function f runs could call g.
    assert!(!admits_g_from_line_8("HANDLERS = [g]\n", "a = f(k)"));
    assert!(
        admits_g_from_line_8("HANDLERS = [g]\n", "a = f(HANDLERS[0](k))"),
        "g is passed around and called through the list first"
    );
}
