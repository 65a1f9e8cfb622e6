//! CWM's actions walked over an oracle that writes each frame as the real run has it:
//! every action from every state of the test programs must land where the recorded
//! run's own tree says (`StateTree::outcome`), with the depth, function, callers and
//! locals rebuilt from CWM's frames, which write none of the first three. Programs
//! whose frames CWM's format cannot place (class bodies, whose frames begin without a
//! `call`) are left out.

use neural_model::cwm::run::{walk, CwmError, FrameSource};
use neural_model::cwm::{frames, Reply};
use neural_model::program::ProgramModel;
use neural_model::{trace, Action, Event, Limits, Outcome, Program, State, StateTree};
use std::path::PathBuf;

/// Answers as the real run: the state after the path's last one, or, where a `return`
/// is forced after a call, the state that ends that call.
struct Oracle<'a> {
    tree: &'a StateTree,
    /// The real run's index of each state of the path.
    indices: Vec<usize>,
    asked: usize,
}

impl FrameSource for Oracle<'_> {
    fn next_frame(
        &mut self,
        path: &[State],
        forced: Option<Event>,
    ) -> Result<(Reply, f64), CwmError> {
        self.asked += 1;
        assert_eq!(
            self.indices.len(),
            path.len(),
            "the oracle follows the path"
        );
        let at = *self.indices.last().unwrap();
        let next = match forced {
            Some(Event::Return) => match self.tree.transition(at, &Action::StepReturn) {
                neural_model::Transition::To(end) => Some(end),
                _ => None,
            },
            _ => Some(at + 1).filter(|&n| n < self.tree.len()),
        };
        let Some(next) = next else {
            return Ok((Reply::End, 1.0));
        };
        if let Some(event) = forced {
            if self.tree.state(next).event != event {
                // A call that raises: the real run leaves it by its exception, which a
                // forced return cannot say.
                return Err(CwmError::Model(RAISES.into()));
            }
        }
        self.indices.push(next);
        let pair = [path.last().unwrap().clone(), self.tree.state(next).clone()];
        let frame = frames(&pair).pop().unwrap();
        Ok((Reply::Frame(frame, None), 1.0))
    }
}

/// A state as CWM can know it: no globals, no stdout.
fn seen(state: &State) -> State {
    let mut state = state.clone();
    state.globals.clear();
    state.stdout.clear();
    state
}

/// What an outcome says, short enough to read in a failure.
fn comparable(outcome: &Outcome) -> String {
    let state =
        |s: &State| {
            let callers: Vec<String> = s
                .stack
                .iter()
                .map(|f| format!("{}:{}", f.function, f.line))
                .collect();
            format!(
            "{} line {} in {} at depth {} (callers {} of {}, last {:?}), locals {:?}, value {:?}",
            s.event,
            s.line,
            s.function,
            s.depth,
            callers.len(),
            callers.iter().collect::<std::collections::BTreeSet<_>>().len(),
            callers.last(),
            // CWM writes no locals with a return or an exception: the frame's last ones
            // are shown, without what the line that returned assigned.
            matches!(s.event, Event::Call | Event::Line).then_some(&s.locals),
            s.value
        )
        };
    match outcome {
        Outcome::State { state: s } => format!("state {}", state(s)),
        Outcome::Start { state: s } => format!("start {}", state(s)),
        Outcome::Exit { exit, .. } => format!("exit {}", exit.kind()),
    }
}

const RAISES: &str = "the call raises";

const LEFT_OUT: [&str; 5] = [
    "syntax_error",
    "nonterminating",
    "class_methods",
    "object_repr",
    "with_block",
];

#[test]
fn every_action_from_every_state_lands_where_the_real_run_does() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/programs");
    let mut programs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "py"))
        .filter(|p| !LEFT_OUT.contains(&p.file_stem().unwrap().to_str().unwrap()))
        .collect();
    programs.sort();
    let (mut checked, mut over_raising_calls) = (0, 0);
    for path in &programs {
        let program = Program::load(path, None).unwrap();
        let run = trace(&program, &Limits::default()).unwrap();
        let tree = &run.tree;
        let model = ProgramModel::of(&program.source);
        let lines: std::collections::BTreeSet<u32> = tree
            .states()
            .iter()
            .map(|s| s.line)
            .filter(|l| l % 3 == 0)
            .collect();
        let mut actions = vec![
            Action::StepInto,
            Action::StepOver,
            Action::StepReturn,
            Action::Continue,
            Action::InvStepInto,
            Action::InvStepOver,
            Action::InvStepCall,
        ];
        if !lines.is_empty() {
            actions.push(Action::Breakpoint(lines.clone()));
            actions.push(Action::InvBreakpoint(lines));
        }
        // Every state of a short run; of a long one (deep recursion), 25 spread over it.
        let stride = if tree.len() <= 300 {
            1
        } else {
            tree.len().div_ceil(25)
        };
        for from in (0..tree.len()).step_by(stride) {
            let run_so_far: Vec<State> = tree.states()[..=from].iter().map(seen).collect();
            for action in &actions {
                let mut oracle = Oracle {
                    tree,
                    indices: (0..=from).collect(),
                    asked: 0,
                };
                let walked = match walk(&mut oracle, &model, &run_so_far, action, 10_000) {
                    Ok(walked) => walked,
                    Err(CwmError::Model(why)) if why == RAISES => {
                        over_raising_calls += 1;
                        continue;
                    }
                    Err(e) => panic!("{}: {action} from {from}: {e}", path.display()),
                };
                let expected = tree.outcome(from, action);
                if std::env::var("CWM_WALK_DEBUG").is_ok()
                    && comparable(&walked.outcome) != comparable(&expected)
                {
                    for (k, st) in walked.states.iter().enumerate() {
                        eprintln!(
                            "walked {k}: {} {} {} d{}",
                            st.event, st.line, st.function, st.depth
                        );
                    }
                    for k in from.saturating_sub(3)..(from + 5).min(tree.len()) {
                        let st = tree.state(k);
                        eprintln!(
                            "true {k}: {} {} {} d{}",
                            st.event, st.line, st.function, st.depth
                        );
                    }
                }
                assert_eq!(
                    comparable(&walked.outcome),
                    comparable(&expected),
                    "{}: {action} from state {from}",
                    program.path.display()
                );
                if action.is_inverse() {
                    assert_eq!(oracle.asked, 0, "inverse actions ask the model nothing");
                }
                checked += 1;
            }
        }
    }
    eprintln!("{checked} actions checked, {over_raising_calls} over a raising call left out");
    assert!(checked > 1000, "only {checked} actions checked");
    assert!(
        over_raising_calls * 20 < checked,
        "{over_raising_calls} steps over a raising call, of {checked}"
    );
}
