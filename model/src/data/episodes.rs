//! Episodes: walks of debugger actions over a recorded run, as the model learns them.
//!
//! An episode is the program (and its call), a start state, then (action, outcome)
//! pairs read off the state tree. Each episode draws its actions from one of two
//! mixtures, which the paper mixes equally:
//! - **(a) mixed**: step_into .35, step_over .10, step_return .20, breakpoint .10,
//!   continue .05 as printed in the paper; that sums to .80, and our choice for the other
//!   .20 is the inverse actions, which the paper also trains but whose weights it does
//!   not print: inv_step_into .06, inv_step_over .06, inv_step_call .04,
//!   inv_breakpoint .04 (the single steps back most often, as stepBack is the common
//!   request; inv_step_call is what input prediction needs).
//! - **(b) single steps**: step_into .5, step_over .5.
//!
//! "Equally" is taken as half the *actions* each, not half the episodes: mixed walks end
//! much sooner (continue, a step_return or breakpoint off the end; about 7 actions
//! against 20 measured on generated programs), so three episodes in four are mixed.
//!
//! A walk starts at the run's first state, or (a quarter of the time) at a random state,
//! given in full, so that predictions deep into long runs are learned too. It ends when
//! the program ends (continue, or any action that runs off the end), or when the step or
//! character budget is spent. Breakpoints target lines the walk will reach from where it
//! is (four times in five), else any line of the program (which may never be hit: then
//! the outcome is the program's end, as the paper has it).

use crate::action::Action;
use crate::language;
use crate::state::{Event, State};
use crate::tree::{Outcome, StateTree, Transition};
use rand::seq::IndexedRandom;
use rand::Rng;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::ops::Range;

/// Weights of the nine actions, in [`Action::NAMES`] order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Mixture {
    pub name: String,
    /// Chance of an episode using this mixture, relative to the others.
    pub share: f64,
    pub weights: [f64; 9],
}

impl Mixture {
    /// The paper's mixture (a), with our weights for the inverse actions (module docs).
    pub fn mixed() -> Self {
        Mixture {
            name: "mixed".into(),
            share: 0.75,
            weights: [0.35, 0.10, 0.20, 0.10, 0.05, 0.06, 0.06, 0.04, 0.04],
        }
    }

    /// The paper's mixture (b): single steps forward.
    pub fn single_steps() -> Self {
        Mixture {
            name: "single_steps".into(),
            share: 0.25,
            weights: [0.5, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        }
    }
}

/// How episodes are drawn.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EpisodeOptions {
    /// The mixtures to draw from, one per episode, by their shares.
    pub mixtures: Vec<Mixture>,
    /// Most actions in one episode.
    pub max_steps: usize,
    /// Most characters of rendered episode text (the program included); an episode
    /// always has at least one action.
    pub max_chars: usize,
    /// Chance that an episode starts at a random state rather than the first.
    pub random_start: f64,
}

impl Default for EpisodeOptions {
    fn default() -> Self {
        EpisodeOptions {
            mixtures: vec![Mixture::mixed(), Mixture::single_steps()],
            max_steps: 32,
            max_chars: 6_000,
            random_start: 0.25,
        }
    }
}

/// One training example: the program, a start state and what each action led to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Episode {
    pub source: String,
    pub call: Option<String>,
    /// Where the program came from (`generated`, or the corpus folder); set by the
    /// dataset builder.
    #[serde(default)]
    pub origin: String,
    /// Which mixture drew the actions.
    pub mixture: String,
    /// Index of the start state in the run.
    pub start_index: usize,
    pub start: State,
    pub steps: Vec<(Action, Outcome)>,
}

impl Episode {
    /// The episode as model text, with the byte ranges the model must predict
    /// ([`language::render_episode`]).
    pub fn render(&self) -> (String, Vec<Range<usize>>) {
        self.render_as(language::Locals::Diff)
    }

    /// The episode as text for a model that writes its locals as `locals` says.
    pub fn render_as(&self, locals: language::Locals) -> (String, Vec<Range<usize>>) {
        language::render_episode(
            &self.source,
            self.call.as_deref(),
            &self.start,
            &self.steps,
            locals,
        )
    }
}

/// Draw one episode from the run `tree` of `source`.
pub fn sample_episode<R: Rng>(
    tree: &StateTree,
    source: &str,
    call: Option<&str>,
    options: &EpisodeOptions,
    rng: &mut R,
) -> Option<Episode> {
    if tree.is_empty() {
        return None;
    }
    let mixture = options.mixtures.choose_weighted(rng, |m| m.share).ok()?;
    let start_index = if rng.random_bool(options.random_start.clamp(0.0, 1.0)) {
        rng.random_range(0..tree.len())
    } else {
        0
    };
    let start = tree.state(start_index).clone();
    let code_lines = code_lines(source);
    let mut chars = language::render_context(source, call).len()
        + language::render_outcome(
            None,
            None,
            &Outcome::State {
                state: start.clone(),
            },
        )
        .len();
    let mut steps: Vec<(Action, Outcome)> = Vec::new();
    let mut at = start_index;
    while steps.len() < options.max_steps {
        let action = draw_action(mixture, tree, at, &code_lines, rng);
        let outcome = tree.outcome(at, &action);
        let prev = steps.last().and_then(|(_, o)| o.state()).unwrap_or(&start);
        let cost = language::render_action(&action).len()
            + language::FRAME_SEP.len()
            + language::render_outcome(Some(prev), Some(&action), &outcome).len();
        if chars + cost > options.max_chars && !steps.is_empty() {
            break;
        }
        chars += cost;
        let next = tree.transition(at, &action);
        steps.push((action, outcome));
        match next {
            Transition::To(index) => at = index,
            Transition::Start => at = 0,
            Transition::End => break,
        }
    }
    Some(Episode {
        source: source.to_string(),
        call: call.map(str::to_string),
        origin: String::new(),
        mixture: mixture.name.clone(),
        start_index,
        start,
        steps,
    })
}

/// Lines with code on them (not blank, not only a comment).
fn code_lines(source: &str) -> Vec<u32> {
    source
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .map(|(i, _)| i as u32 + 1)
        .collect()
}

fn draw_action<R: Rng>(
    mixture: &Mixture,
    tree: &StateTree,
    at: usize,
    code_lines: &[u32],
    rng: &mut R,
) -> Action {
    let total: f64 = mixture.weights.iter().sum();
    let mut roll = rng.random_range(0.0..total.max(f64::MIN_POSITIVE));
    let mut kind = 0;
    for (i, weight) in mixture.weights.iter().enumerate() {
        if roll < *weight {
            kind = i;
            break;
        }
        roll -= weight;
    }
    match Action::NAMES[kind] {
        "step_into" => Action::StepInto,
        "step_over" => Action::StepOver,
        "step_return" => Action::StepReturn,
        "breakpoint" => Action::Breakpoint(breakpoint_lines(tree, at, true, code_lines, rng)),
        "continue" => Action::Continue,
        "inv_step_into" => Action::InvStepInto,
        "inv_step_over" => Action::InvStepOver,
        "inv_step_call" => Action::InvStepCall,
        _ => Action::InvBreakpoint(breakpoint_lines(tree, at, false, code_lines, rng)),
    }
}

/// One line (sometimes two) to break on: mostly a line the run reaches from `at` in the
/// action's direction, else any code line.
fn breakpoint_lines<R: Rng>(
    tree: &StateTree,
    at: usize,
    forward: bool,
    code_lines: &[u32],
    rng: &mut R,
) -> BTreeSet<u32> {
    let range = if forward { at + 1..tree.len() } else { 0..at };
    let reached: Vec<u32> = tree.states()[range]
        .iter()
        .filter(|s| s.event == Event::Line)
        .map(|s| s.line)
        .collect::<BTreeSet<u32>>()
        .into_iter()
        .collect();
    let count = if rng.random_bool(0.2) { 2 } else { 1 };
    let mut lines = BTreeSet::new();
    for _ in 0..count {
        let pool = if !reached.is_empty() && rng.random_bool(0.8) {
            &reached
        } else {
            code_lines
        };
        if let Some(&line) = pool.choose(rng) {
            lines.insert(line);
        }
    }
    if lines.is_empty() {
        lines.insert(1);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::{Exit, Vars};
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    const SOURCE: &str =
        "def g(n):\n    return n * 2\n\ndef f(x):\n    y = g(x)\n    z = g(y)\n    return y + z\n";

    fn state(event: Event, line: u32, function: &str, depth: u32) -> State {
        State {
            event,
            line,
            source: SOURCE.lines().nth(line as usize - 1).unwrap().to_string(),
            function: function.into(),
            depth,
            stack: Vec::new(),
            locals: Vars::new(),
            globals: Vars::new(),
            value: matches!(event, Event::Return).then(|| "2".to_string()),
            stdout: String::new(),
        }
    }

    /// f(1): call f, line 5, call g, line 2, return g, line 6, call g, line 2, return g,
    /// line 7, return f.
    fn tree() -> StateTree {
        use Event::*;
        let states = vec![
            state(Call, 4, "f", 0),
            state(Line, 5, "f", 0),
            state(Call, 1, "g", 1),
            state(Line, 2, "g", 1),
            state(Return, 2, "g", 1),
            state(Line, 6, "f", 0),
            state(Call, 1, "g", 1),
            state(Line, 2, "g", 1),
            state(Return, 2, "g", 1),
            state(Line, 7, "f", 0),
            state(Return, 7, "f", 0),
        ];
        StateTree::new(states, Exit::Normal, String::new())
    }

    #[test]
    fn every_step_is_what_the_tree_says() {
        let tree = tree();
        let options = EpisodeOptions::default();
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for _ in 0..200 {
            let episode = sample_episode(&tree, SOURCE, Some("f(1)"), &options, &mut rng).unwrap();
            assert!(!episode.steps.is_empty() && episode.steps.len() <= options.max_steps);
            let mut at = episode.start_index;
            assert_eq!(&episode.start, tree.state(at));
            for (i, (action, outcome)) in episode.steps.iter().enumerate() {
                assert_eq!(outcome, &tree.outcome(at, action));
                match tree.transition(at, action) {
                    Transition::To(next) => at = next,
                    Transition::Start => at = 0,
                    Transition::End => {
                        assert_eq!(i + 1, episode.steps.len(), "the walk stops at the end")
                    }
                }
                if let Some(lines) = action.breakpoint_lines() {
                    assert!(
                        lines.iter().all(|l| (1..=7).contains(l) && *l != 3),
                        "{lines:?}"
                    );
                }
            }
            let (text, targets) = episode.render();
            assert_eq!(targets.len(), episode.steps.len());
            assert!(text.len() <= options.max_chars || episode.steps.len() == 1);
        }
    }

    #[test]
    fn both_mixtures_are_drawn_and_single_steps_only_step() {
        let tree = tree();
        let options = EpisodeOptions {
            random_start: 0.5,
            ..EpisodeOptions::default()
        };
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut counts = [0usize; 9];
        let mut by_mixture = std::collections::BTreeMap::new();
        for _ in 0..400 {
            let episode = sample_episode(&tree, SOURCE, None, &options, &mut rng).unwrap();
            *by_mixture.entry(episode.mixture.clone()).or_insert(0) += 1;
            for (action, _) in &episode.steps {
                counts[Action::NAMES
                    .iter()
                    .position(|n| *n == action.name())
                    .unwrap()] += 1;
                if episode.mixture == "single_steps" {
                    assert!(matches!(action, Action::StepInto | Action::StepOver));
                }
            }
        }
        assert!(
            by_mixture["mixed"] > 250 && by_mixture["single_steps"] > 60,
            "{by_mixture:?}"
        );
        assert!(
            counts.iter().all(|&c| c > 0),
            "every action is drawn: {counts:?}"
        );
        assert!(
            counts[0] > counts[4],
            "step_into outnumbers continue: {counts:?}"
        );
    }

    #[test]
    fn the_character_budget_cuts_episodes() {
        let tree = tree();
        let options = EpisodeOptions {
            mixtures: vec![Mixture::single_steps()],
            max_chars: 400,
            random_start: 0.0,
            ..EpisodeOptions::default()
        };
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let episode = sample_episode(&tree, SOURCE, None, &options, &mut rng).unwrap();
        let (text, _) = episode.render();
        assert!(text.len() <= 400, "{} chars", text.len());
        assert!(!episode.steps.is_empty());
        let unbounded = EpisodeOptions {
            max_chars: usize::MAX,
            ..options
        };
        let longer = sample_episode(
            &tree,
            SOURCE,
            None,
            &unbounded,
            &mut ChaCha8Rng::seed_from_u64(3),
        )
        .unwrap();
        assert!(longer.steps.len() > episode.steps.len());
    }

    #[test]
    fn an_empty_run_has_no_episode() {
        let empty = StateTree::new(Vec::new(), Exit::Normal, String::new());
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        assert!(
            sample_episode(&empty, SOURCE, None, &EpisodeOptions::default(), &mut rng).is_none()
        );
    }
}
