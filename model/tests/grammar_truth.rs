//! The decoding grammar must never rule out what really happens: for every program in
//! `tests/programs/`, from every state (up to a cap) and for every action, the true
//! outcome, written as the model would write it, passes the grammar token by token.
//! (The grammar only needs a tokenizer; the small test model supplies one.)

use neural_model::infer::Predictor;
use neural_model::net::Cpu;
use neural_model::{trace, Action, Limits, Program};
use std::path::PathBuf;

const STATES_PER_PROGRAM: usize = 40;

#[test]
fn the_grammar_admits_every_true_outcome() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let predictor = Predictor::<Cpu>::load(&root.join("weights/test"), &Default::default())
        .expect("the test model ships with the repository");
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
        for (i, state) in states.iter().enumerate().take(STATES_PER_PROGRAM) {
            for action in &actions {
                let truth = run.tree.outcome(i, action);
                checked += 1;
                // The state before, one Step Into back: the way the program came here.
                let came_from = i.checked_sub(1).map(|k| &states[k]);
                if let Err(why) =
                    predictor.grammar_admits(&context, state, came_from, action, &truth)
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
    let predictor = Predictor::<Cpu>::load(&root.join("weights/test"), &Default::default())
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
        .grammar_admits(&context, current, None, &Action::StepInto, &truth)
        .unwrap();
    let mut wrong = truth.clone();
    if let neural_model::Outcome::State { state } = &mut wrong {
        state.value = Some("12345".into());
    }
    assert!(predictor
        .grammar_admits(&context, current, None, &Action::StepInto, &wrong)
        .is_err());
}

#[test]
fn a_loop_variable_takes_the_first_item_then_the_next() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let predictor = Predictor::<Cpu>::load(&root.join("weights/test"), &Default::default())
        .expect("the test model ships with the repository");
    let source =
        "def spell(word):\n    out = ''\n    for c in word:\n        out += c\n    return out\n";
    let path = std::env::temp_dir().join(format!("spell-{}.py", std::process::id()));
    std::fs::write(&path, source).unwrap();
    let program = Program::load(&path, Some("spell('a-b')".into())).unwrap();
    let run = trace(&program, &Limits::default()).unwrap();
    std::fs::remove_file(&path).unwrap();
    let context = predictor.prepare(source, program.call.as_deref()).unwrap();
    let states = run.tree.states();
    let on_header: Vec<usize> = (1..states.len())
        .filter(|&k| states[k].event == neural_model::Event::Line && states[k].line == 3)
        .collect();
    // With the loop variable `c` as the step writes it.
    let with_c = |k: usize, c: &str| {
        let mut outcome = run.tree.outcome(k, &Action::StepInto);
        if let neural_model::Outcome::State { state } = &mut outcome {
            state.locals.insert("c".into(), c.into());
        }
        outcome
    };
    let admits = |k: usize, came_from: Option<usize>, c: &str| {
        predictor
            .grammar_admits(
                &context,
                &states[k],
                came_from.map(|j| &states[j]),
                &Action::StepInto,
                &with_c(k, c),
            )
            .is_ok()
    };
    // Entering the loop (from line 2): only the first item.
    let first = on_header[0];
    assert!(admits(first, Some(first - 1), "'a'"));
    assert!(!admits(first, Some(first - 1), "'-'"));
    // Going round again (from line 4, after `c` was 'a'): only the item after it,
    // which the step's diff of locals must write (an unchanged 'a' is left out of it);
    // where the way in is unknown, any item, or none.
    let again = on_header[1];
    assert_eq!(states[again - 1].line, 4);
    assert!(admits(again, Some(again - 1), "'-'"));
    assert!(!admits(again, Some(again - 1), "'b'"));
    assert!(!admits(again, Some(again - 1), "'a'"));
    assert!(admits(again, None, "'b'"));
    assert!(admits(again, None, "'a'"));
}
