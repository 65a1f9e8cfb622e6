//! `neural-model eval --sessions`: a session steps from the model's own predictions and
//! counts the stops that match the real run before the first miss. Checked against the
//! same session stepped by hand, on the small test model (whatever it predicts, the
//! two must agree).
#![cfg(feature = "neural")]

use neural_model::eval::{same_outcome, sessions};
use neural_model::infer::Predictor;
use neural_model::tracer::{trace, Limits, Program};
use neural_model::Action;
use std::path::PathBuf;

const SOURCE: &str = "def double(n):\n    m = n * 2\n    return m\n\n\ntotal = 0\nfor k in range(3):\n    total = total + double(k)\nprint(total)\n";

#[test]
fn a_session_counts_the_stops_that_match_before_the_first_miss() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let predictor = Predictor::load(&root.join("weights/test")).unwrap();
    let steps = 12;
    let progress = indicatif::ProgressBar::hidden();
    let mut misses = Vec::new();
    let program = [(SOURCE.to_string(), None)];
    let report = sessions(&predictor, &program, steps, &progress, |miss| {
        misses.push(miss)
    })
    .unwrap();
    assert_eq!(report.sessions, 1);
    assert!(report.requests >= 1 && report.requests <= steps);

    // By hand: the truth from the tracer, each step from the last prediction.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.py");
    std::fs::write(&path, SOURCE).unwrap();
    let program = Program {
        path,
        source: SOURCE.to_string(),
        call: None,
        args: Vec::new(),
        cwd: None,
    };
    let tree = trace(&program, &Limits::default()).unwrap().tree;
    let mut context = predictor.prepare(SOURCE, None).unwrap();
    let mut current = tree.state(0).clone();
    let (mut matched, mut requests, mut missed) = (0, 0, false);
    for at in 0..steps {
        requests += 1;
        let Ok(prediction) = predictor.predict(&mut context, &current, &Action::StepInto) else {
            break;
        };
        if !missed
            && at < tree.len()
            && same_outcome(&prediction.outcome, &tree.outcome(at, &Action::StepInto))
        {
            matched += 1;
        } else {
            missed = true;
        }
        match prediction.outcome.state() {
            Some(state) => current = state.clone(),
            None => break,
        }
    }
    assert_eq!(report.matched, vec![matched]);
    assert_eq!(report.requests, requests);
    assert_eq!(report.all_matched, usize::from(!missed));
    // The first miss is recorded, at the stop after the last that matched.
    let first = misses.first().map(|m| m.action.clone());
    let expected = missed.then(|| format!("session stop {}", matched + 1));
    assert_eq!(first, expected);
}
