//! The debugger reaches a breakpoint by walking there with the model's own Step Into
//! predictions (`Predictor::predict`): the outcome is the walk's last state, with all
//! that was printed on the way as its stdout, and a walk that runs out of steps ends
//! with one jump. Checked against the same walk made by hand with single predictions,
//! on the small test model (whatever it predicts, both must agree).
#![cfg(feature = "neural")]

use neural_model::infer::{Predictor, BREAKPOINT_WALK};
use neural_model::{Action, Event, Outcome};
use std::collections::BTreeSet;
use std::path::PathBuf;

/// The walk as the debugger should make it, from single predictions.
fn walk_by_hand(
    predictor: &Predictor,
    source: &str,
    start: &neural_model::State,
    lines: &BTreeSet<u32>,
) -> Outcome {
    let mut context = predictor.prepare(source, None).unwrap();
    let mut at = start.clone();
    let mut printed = String::new();
    for _ in 0..BREAKPOINT_WALK {
        match predictor
            .predict_one(&mut context, &at, &Action::StepInto)
            .unwrap()
            .outcome
        {
            Outcome::State { state } => {
                printed.push_str(&state.stdout);
                at = state.clone();
                if state.event == Event::Line && lines.contains(&state.line) {
                    return Outcome::State {
                        state: neural_model::State {
                            stdout: printed,
                            ..state
                        },
                    };
                }
            }
            Outcome::Exit { exit, stdout } => {
                return Outcome::Exit {
                    exit,
                    stdout: printed + &stdout,
                }
            }
            other => panic!("a forward step found the start: {other:?}"),
        }
    }
    match predictor
        .predict_one(&mut context, &at, &Action::Breakpoint(lines.clone()))
        .unwrap()
        .outcome
    {
        Outcome::State { mut state } => {
            state.stdout = printed + &state.stdout;
            Outcome::State { state }
        }
        Outcome::Exit { exit, stdout } => Outcome::Exit {
            exit,
            stdout: printed + &stdout,
        },
        start => start,
    }
}

#[test]
fn a_breakpoint_is_walked_to_and_keeps_what_was_printed_on_the_way() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let predictor = Predictor::load(&root.join("weights/test"))
        .expect("the test model ships with the repository");
    // A program the test model knows: line 13 prints, line 15 is two steps on.
    let path = root.join("../protocol-tests/node/programs/calls.py");
    let program = neural_model::Program::load(&path, None).unwrap();
    let run = neural_model::trace(&program, &neural_model::Limits::default()).unwrap();
    let states = run.tree.states();
    let print_line = states.iter().find(|s| s.line == 13).unwrap();
    let lines = BTreeSet::from([15]);
    // From line 13 the walk meets line 15; from the entry it runs out of steps first
    // and ends with a jump.
    for start in [print_line, &states[0]] {
        let mut context = predictor.prepare(&program.source, None).unwrap();
        let walked = predictor
            .predict(&mut context, start, &Action::Breakpoint(lines.clone()))
            .unwrap();
        assert_eq!(
            walked.outcome,
            walk_by_hand(&predictor, &program.source, start, &lines),
            "from line {}",
            start.line
        );
        assert!(walked.probability > 0.0 && walked.probability <= 1.0);
    }
    // What the model knows by heart: the print's output arrives with the stop.
    let mut context = predictor.prepare(&program.source, None).unwrap();
    let walked = predictor
        .predict(&mut context, print_line, &Action::Breakpoint(lines.clone()))
        .unwrap();
    let state = walked.outcome.state().expect("a stop on line 15");
    assert_eq!((state.line, state.stdout.as_str()), (15, "7\n"));
}
