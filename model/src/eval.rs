//! `neural-model eval`: next-state exact match per action, given the true current
//! state, for the model and for a trivial baseline (the next line, locals unchanged),
//! with the paper's components: event, line, locals, value.
//!
//! Predictions are decoded greedily and constrained, exactly as the debugger makes
//! them; the call stack (derived, not predicted) is left out of the comparison.

use crate::action::Action;
use crate::data::{sample_episode, Episode, EpisodeOptions, Mixture};
use crate::infer::{Footprints, Predictor};
use crate::net::Decoder;
use crate::state::{Event, State};
use crate::tree::Outcome;
use rand::SeedableRng;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

/// Counts for one action (or for all).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Tally {
    pub examples: usize,
    pub exact: usize,
    pub event: usize,
    pub line: usize,
    pub locals: usize,
    /// Among outcomes that carry a value (return, exception, exit error).
    pub value: usize,
    pub with_value: usize,
    pub baseline_exact: usize,
    /// Predictions that failed (malformed, too long): counted as wrong.
    pub failures: usize,
}

impl Tally {
    fn rate(n: usize, of: usize) -> Option<f64> {
        (of > 0).then(|| n as f64 / of as f64)
    }

    pub fn em(&self) -> Option<f64> {
        Self::rate(self.exact, self.examples)
    }

    pub fn baseline_em(&self) -> Option<f64> {
        Self::rate(self.baseline_exact, self.examples)
    }

    fn add(&mut self, other: &Tally) {
        self.examples += other.examples;
        self.exact += other.exact;
        self.event += other.event;
        self.line += other.line;
        self.locals += other.locals;
        self.value += other.value;
        self.with_value += other.with_value;
        self.baseline_exact += other.baseline_exact;
        self.failures += other.failures;
    }
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Report {
    pub per_action: BTreeMap<String, Tally>,
    pub all: Tally,
    pub programs: usize,
    pub ms_per_prediction: f64,
    /// Predictions that ended only after decoding backed off from a runaway.
    pub backed_off: usize,
    /// Of `programs`, those the model read without their idle lines (too long whole).
    pub shortened: usize,
    /// Programs the model could not read at all (too long even so): not in `programs`.
    pub refused: usize,
}

/// Outcomes equal but for the call stack (which the engine derives, not predicts).
pub fn same_outcome(a: &Outcome, b: &Outcome) -> bool {
    match (a, b) {
        (Outcome::State { state: x }, Outcome::State { state: y })
        | (Outcome::Start { state: x }, Outcome::Start { state: y }) => {
            State {
                stack: Vec::new(),
                ..x.clone()
            } == State {
                stack: Vec::new(),
                ..y.clone()
            }
        }
        _ => a == b,
    }
}

/// The baseline: the next line of the same frame, nothing changed.
pub fn baseline(current: &State) -> Outcome {
    Outcome::State {
        state: State {
            event: Event::Line,
            line: current.line + 1,
            source: String::new(),
            value: None,
            stdout: String::new(),
            ..current.clone()
        },
    }
}

fn score_one(tally: &mut Tally, predicted: Option<&Outcome>, truth: &Outcome, current: &State) {
    tally.examples += 1;
    let base = baseline(current);
    // The baseline knows the program's text: give it the real source line.
    let base = match (&base, truth.state()) {
        (Outcome::State { state }, Some(t)) if t.line == state.line => Outcome::State {
            state: State {
                source: t.source.clone(),
                ..state.clone()
            },
        },
        _ => base,
    };
    tally.baseline_exact += same_outcome(&base, truth) as usize;
    let value_of = |o: &Outcome| match o {
        Outcome::State { state } | Outcome::Start { state } => state.value.clone(),
        Outcome::Exit { exit, .. } => Some(exit.to_string()),
    };
    if value_of(truth).is_some() {
        tally.with_value += 1;
    }
    let Some(predicted) = predicted else {
        tally.failures += 1;
        return;
    };
    tally.exact += same_outcome(predicted, truth) as usize;
    let kind = |o: &Outcome| match o {
        Outcome::State { state } => format!("{}", state.event),
        Outcome::Start { state } => format!("start {}", state.event),
        Outcome::Exit { exit, .. } => format!("exit {}", exit.kind()),
    };
    tally.event += (kind(predicted) == kind(truth)) as usize;
    let line = |o: &Outcome| o.state().map(|s| s.line);
    tally.line += (line(predicted) == line(truth)) as usize;
    let locals = |o: &Outcome| o.state().map(|s| s.locals.clone());
    tally.locals += (locals(predicted) == locals(truth)) as usize;
    if value_of(truth).is_some() && value_of(predicted) == value_of(truth) {
        tally.value += 1;
    }
}

/// One prediction, for reading what the model got wrong.
#[derive(Clone, Debug, Serialize)]
pub struct Sample {
    pub program: usize,
    pub action: String,
    /// Where the step started: the current state's event, line, depth, function and
    /// source line.
    pub from: String,
    pub exact: bool,
    /// The true outcome, in the trace language.
    pub truth: String,
    /// What the model wrote, or why it wrote nothing usable.
    pub predicted: Result<String, String>,
}

/// A state as a sample's `from`: its event, line, depth, function and source line.
fn where_from(state: &State) -> String {
    format!(
        "{} {} {} {}: {}",
        state.event.name(),
        state.line,
        state.depth,
        state.function,
        state.source.trim()
    )
}

/// Evaluate `predictor` on every step of `episodes` (at most `limit` predictions);
/// every prediction goes to `record` as it is made. Predictions are the debugger's
/// ([`Predictor::predict`]), or with `jumps` one decode per action, breakpoints
/// included ([`Predictor::predict_one`], as the paper measures them).
pub fn evaluate<M: Decoder>(
    predictor: &Predictor<M>,
    episodes: &[Episode],
    limit: usize,
    jumps: bool,
    progress: &indicatif::ProgressBar,
    mut record: impl FnMut(Sample),
) -> Report {
    let mut report = Report::default();
    let mut predictions = 0usize;
    let started = std::time::Instant::now();
    for episode in episodes {
        if predictions >= limit {
            break;
        }
        let Ok(mut context) = predictor.prepare(&episode.source, episode.call.as_deref()) else {
            report.refused += 1;
            continue;
        };
        report.programs += 1;
        report.shortened += (context.lines_left_out > 0) as usize;
        let mut current = episode.start.clone();
        for (action, truth) in &episode.steps {
            if predictions >= limit {
                break;
            }
            let prediction = if jumps {
                predictor.predict_one(&mut context, &current, action)
            } else {
                predictor.predict(&mut context, &current, action)
            };
            predictions += 1;
            progress.inc(1);
            let tally = report
                .per_action
                .entry(action.name().to_string())
                .or_default();
            // A guess is the model failing: it is scored as a failure.
            let (predicted, written) = match &prediction {
                Ok(p) if p.guess.is_none() => {
                    report.backed_off += (p.backed_off > 0) as usize;
                    (Some(&p.outcome), Ok(p.text.clone()))
                }
                Ok(p) => (None, Err(p.guess.clone().unwrap_or_default())),
                Err(e) => (None, Err(e.to_string())),
            };
            score_one(tally, predicted, truth, &current);
            record(Sample {
                program: report.programs,
                action: action.to_string(),
                from: where_from(&current),
                exact: predicted.is_some_and(|p| same_outcome(p, truth)),
                truth: predictor.render_step(&current, action, truth),
                predicted: written,
            });
            // The next step reads the true outcome, as a debugger user's next step
            // would start from where the run really is.
            if predictor.observe(&mut context, truth).is_err() {
                break;
            }
            match truth.state() {
                Some(state) => current = state.clone(),
                None => break,
            }
        }
    }
    for tally in report.per_action.values() {
        report.all.add(tally);
    }
    report.ms_per_prediction = started.elapsed().as_secs_f64() * 1e3 / predictions.max(1) as f64;
    report
}

/// How debugging sessions went: Step Into from the entry, again and again, each step
/// from the model's own last prediction (as the debugger runs), against the real run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SessionReport {
    pub sessions: usize,
    /// Step Into requests made in all.
    pub requests: usize,
    /// Requests that gave no usable state; a session ends at its first.
    pub failed: usize,
    /// Requests answered with a guess (every decode ran away): counted as misses, and
    /// the session goes on from the guess as the debugger does.
    pub guessed: usize,
    pub sessions_with_failure: usize,
    /// Per session: the stops that matched Python before the first that did not.
    pub matched: Vec<usize>,
    /// Sessions whose every stop matched until the program's end or the step limit.
    pub all_matched: usize,
    pub ms_per_request: f64,
    /// Programs the model could not read (too long): no session was run on them.
    pub refused: usize,
}

impl SessionReport {
    pub fn mean_matched(&self) -> f64 {
        self.matched.iter().sum::<usize>() as f64 / self.matched.len().max(1) as f64
    }

    /// The report for people.
    pub fn table(&self) -> String {
        let mut sorted = self.matched.clone();
        sorted.sort_unstable();
        let median = sorted.get(sorted.len() / 2).copied().unwrap_or(0);
        let refused = match self.refused {
            0 => String::new(),
            n => format!("\n{n} more programs were too long for the model to read\n"),
        };
        format!(
            "| sessions | Step Into requests | failed | guessed | sessions with a failure | stops matching before the first miss (mean) | median | all matched | ms per request |\n\
             |---|---|---|---|---|---|---|---|---|\n\
             | {} | {} | {} | {} | {} | {:.1} | {} | {} | {:.0} |\n{refused}",
            self.sessions,
            self.requests,
            self.failed,
            self.guessed,
            self.sessions_with_failure,
            self.mean_matched(),
            median,
            self.all_matched,
            self.ms_per_request
        )
    }
}

/// Runs one session of at most `steps` Step Into requests on each program (source and
/// optional call), traced now under Python for the truth. Each session's first miss
/// (a wrong stop, a guess or a failed request) goes to `record`, and a failed request
/// after it.
pub fn sessions<M: Decoder>(
    predictor: &Predictor<M>,
    programs: &[(String, Option<String>)],
    steps: usize,
    progress: &indicatif::ProgressBar,
    mut record: impl FnMut(Sample),
) -> anyhow::Result<SessionReport> {
    use crate::tree::Transition;
    let dir = tempfile::tempdir()?;
    let mut report = SessionReport::default();
    let started = std::time::Instant::now();
    for (i, (source, call)) in programs.iter().enumerate() {
        progress.inc(1);
        let path = dir.path().join(format!("program_{i}.py"));
        std::fs::write(&path, source)?;
        let program = crate::tracer::Program {
            path,
            source: source.clone(),
            call: call.clone(),
            args: Vec::new(),
            cwd: None,
        };
        let Ok(trace) = crate::tracer::trace(&program, &crate::tracer::Limits::default()) else {
            continue;
        };
        let tree = &trace.tree;
        if tree.is_empty() {
            continue;
        }
        let Ok(mut context) = predictor.prepare(source, call.as_deref()) else {
            report.refused += 1;
            continue;
        };
        report.sessions += 1;
        let mut current = tree.state(0).clone();
        // Where the real run is while every stop so far has matched.
        let mut real = Some(0usize);
        let mut matched = 0;
        let mut missed = false;
        for stop in 1..=steps {
            report.requests += 1;
            let step = Action::StepInto;
            let predicted = predictor.predict(&mut context, &current, &step);
            let first_miss = |written: Result<String, String>, at: Option<usize>| Sample {
                program: report.sessions,
                action: format!("session stop {stop}"),
                from: where_from(&current),
                exact: false,
                truth: at.map_or_else(String::new, |at| {
                    predictor.render_step(&current, &step, &tree.outcome(at, &step))
                }),
                predicted: written,
            };
            let prediction = match predicted {
                Ok(p) => p,
                Err(error) => {
                    // A failed request is recorded wherever it comes (it ends the session).
                    record(first_miss(Err(error.to_string()), real.filter(|_| !missed)));
                    report.failed += 1;
                    report.sessions_with_failure += 1;
                    missed = true;
                    break;
                }
            };
            report.guessed += prediction.guess.is_some() as usize;
            let right = real.filter(|&at| {
                prediction.guess.is_none()
                    && same_outcome(&prediction.outcome, &tree.outcome(at, &step))
            });
            match right.filter(|_| !missed) {
                Some(at) => {
                    matched += 1;
                    real = match tree.transition(at, &step) {
                        Transition::To(next) => Some(next),
                        _ => None,
                    };
                }
                None if !missed => {
                    let written = match &prediction.guess {
                        Some(why) => Err(why.clone()),
                        None => Ok(prediction.text.clone()),
                    };
                    record(first_miss(written, real));
                    missed = true;
                }
                None => {}
            }
            match prediction.outcome.state() {
                Some(state) => current = state.clone(),
                None => break,
            }
        }
        if !missed {
            report.all_matched += 1;
        }
        report.matched.push(matched);
    }
    report.ms_per_request = started.elapsed().as_secs_f64() * 1e3 / report.requests.max(1) as f64;
    Ok(report)
}

/// Check that the decoding grammar admits the true outcome of every step of
/// `episodes` (at most `limit`): how many were checked, and why each refusal happened.
pub fn check_grammar<M: Decoder>(
    predictor: &Predictor<M>,
    episodes: &[Episode],
    limit: usize,
) -> (usize, Vec<String>) {
    let (mut checked, mut refused) = (0, Vec::new());
    for (index, episode) in episodes.iter().enumerate() {
        let Ok(context) = predictor.prepare(&episode.source, episode.call.as_deref()) else {
            continue;
        };
        let mut current = &episode.start;
        // How the run came to `current`, as the debugger would know it.
        let mut footprints = Footprints::default();
        for (action, truth) in &episode.steps {
            if checked >= limit {
                return (checked, refused);
            }
            checked += 1;
            if let Err(why) =
                predictor.grammar_admits(&context, current, &footprints, action, truth)
            {
                refused.push(format!(
                    "episode {index} ({}) {action} from {} {} {}: {why}",
                    episode.origin, current.event, current.line, current.function
                ));
            }
            let Some(state) = truth.state() else {
                break;
            };
            footprints.record(context.program(), current, action, Some(state));
            current = state;
        }
    }
    (checked, refused)
}

/// Episodes from every `.py` file in `dir`, each traced as a script, with a fixed seed.
pub fn episodes_from_programs(dir: &Path, per_program: usize) -> anyhow::Result<Vec<Episode>> {
    let mut files: Vec<_> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "py"))
        .collect();
    files.sort();
    let options = EpisodeOptions {
        mixtures: vec![Mixture::mixed(), Mixture::single_steps()],
        ..Default::default()
    };
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
    let mut episodes = Vec::new();
    for path in files {
        let program = crate::tracer::Program::load(&path, None)?;
        let Ok(trace) = crate::tracer::trace(&program, &crate::tracer::Limits::default()) else {
            continue;
        };
        for _ in 0..per_program {
            if let Some(e) = sample_episode(&trace.tree, &program.source, None, &options, &mut rng)
            {
                episodes.push(e);
            }
        }
    }
    Ok(episodes)
}

/// The report as a table for people.
pub fn table(report: &Report) -> String {
    let pct = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{:.1}%", v * 100.0));
    let mut out = String::from(
        "| action | n | exact match | baseline | em_event | em_line | em_locals | em_value | failed |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    let mut rows: Vec<(&str, &Tally)> = Action::NAMES
        .iter()
        .filter_map(|name| report.per_action.get(*name).map(|t| (*name, t)))
        .collect();
    rows.push(("all", &report.all));
    for (name, t) in rows {
        out += &format!(
            "| {name} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            t.examples,
            pct(t.em()),
            pct(t.baseline_em()),
            pct(Tally::rate(t.event, t.examples)),
            pct(Tally::rate(t.line, t.examples)),
            pct(Tally::rate(t.locals, t.examples)),
            pct(Tally::rate(t.value, t.with_value)),
            t.failures
        );
    }
    out += &format!(
        "\n{} programs ({} read without their idle lines; {} more too long to read), {:.0} ms \
         per prediction, {} predictions backed off from a runaway\n",
        report.programs,
        report.shortened,
        report.refused,
        report.ms_per_prediction,
        report.backed_off
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn episode(source: String) -> Episode {
        let next = Outcome::State {
            state: State::module_line(2, source.lines().nth(1).unwrap()),
        };
        Episode {
            start: State::module_line(1, source.lines().next().unwrap()),
            source,
            call: None,
            origin: "test".into(),
            mixture: "test".into(),
            start_index: 0,
            steps: vec![(Action::StepInto, next)],
        }
    }

    #[test]
    fn a_program_too_long_for_the_model_is_counted_not_skipped() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("weights/test");
        let predictor = Predictor::load(&dir).unwrap();
        let long: String = (0..300).map(|i| format!("value_{i} = {i}\n")).collect();
        let episodes = [episode("x = 1\ny = 2\n".into()), episode(long)];
        let hidden = indicatif::ProgressBar::hidden();
        let report = evaluate(&predictor, &episodes, 10, false, &hidden, |_| {});
        assert_eq!(
            (report.programs, report.shortened, report.refused),
            (1, 0, 1)
        );
        assert!(table(&report)
            .contains("1 programs (0 read without their idle lines; 1 more too long to read)"));
    }
}
