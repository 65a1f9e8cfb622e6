//! `neural-model cruxeval`: CruxEval-format benchmarks (jsonl with `code`, `input`,
//! `output`, `id`; `input` is the comma-joined argument list of `f`).
//!
//! - Output mode: from the call state of `f(input)`, predict the return value, once with
//!   step_return, once with a breakpoint jump to the `return` lines followed by a step
//!   into the return (both one decode, as the paper measures them), and once with the
//!   debugger's Step Out (`step_out`: walked with Step Over predictions).
//! - Input mode: from a return state carrying `output`, predict the arguments with
//!   inv_step_call; and `inv_checked`: that prediction where the model's own Step Out
//!   from its call takes it to the output, else the output itself (see
//!   `predict_input_checked`).
//!
//! - Baseline (both modes): `f` returns its first argument unchanged.
//!
//! Scored pass@1 as CruxEval scores: the predicted output must equal the expected one
//! (both read with `ast.literal_eval` in a sandboxed `python3 -I`, 3 s timeout), and a
//! predicted input must satisfy `f(INPUT) == OUTPUT` when run (3 s timeout).

use crate::action::Action;
use crate::entry::entry_state;
use crate::infer::Predictor;
use crate::net::Decoder;
use crate::state::{Event, State};
use crate::tree::Outcome;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;
use wait_timeout::ChildExt;

#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct Sample {
    pub code: String,
    pub input: String,
    pub output: String,
    pub id: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct Scored {
    pub id: String,
    pub method: String,
    pub prediction: Option<String>,
    pub error: Option<String>,
    pub pass: bool,
}

pub fn load(path: &Path) -> anyhow::Result<Vec<Sample>> {
    let text = std::fs::read_to_string(path)?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_str(l)
                .map_err(|e| anyhow::anyhow!("{}:{}: {e}", path.display(), i + 1))
        })
        .collect()
}

/// Run a small Python check in isolation; true iff it exits 0 within 3 s.
fn python_check(script: &str, args: &[&str]) -> bool {
    let Ok(mut child) = Command::new(crate::tracer::python())
        .arg("-I")
        .arg("-c")
        .arg(script)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
    else {
        return false;
    };
    match child.wait_timeout(Duration::from_secs(3)) {
        Ok(Some(status)) => status.success(),
        _ => {
            let _ = child.kill();
            let _ = child.wait();
            false
        }
    }
}

const SAME_VALUE: &str = "import ast, sys\nsys.exit(0 if ast.literal_eval(sys.argv[1]) == ast.literal_eval(sys.argv[2]) else 1)";
const INPUT_WORKS: &str =
    "import sys\nns = {}\nexec(sys.argv[1], ns)\nsys.exit(0 if eval('f(' + sys.argv[2] + ')', ns) == eval(sys.argv[3], ns) else 1)";

fn return_lines(code: &str) -> Vec<u32> {
    code.lines()
        .enumerate()
        .filter(|(_, l)| l.trim_start().starts_with("return"))
        .map(|(i, _)| i as u32 + 1)
        .collect()
}

/// Output prediction for one sample by `method` (`step_return`, `breakpoint` or
/// `step_out`).
fn predict_output<M: Decoder>(
    predictor: &Predictor<M>,
    sample: &Sample,
    method: &str,
) -> Result<String, String> {
    let call = format!("f({})", sample.input);
    let start = entry_state(&sample.code, Some(&call))?;
    let mut context = predictor
        .prepare(&sample.code, Some(&call))
        .map_err(|e| e.to_string())?;
    let mut step = |state: &State, action: Action| -> Result<Outcome, String> {
        predictor
            .predict_one(&mut context, state, &action)
            .map(|p| p.outcome)
            .map_err(|e| e.to_string())
    };
    let returned = if method == "step_return" {
        step(&start, Action::StepReturn)?
    } else if method == "step_out" {
        predictor
            .predict(&mut context, &start, &Action::StepReturn)
            .map_err(|e| e.to_string())?
            .outcome
    } else {
        let lines = return_lines(&sample.code).into_iter().collect();
        match step(&start, Action::Breakpoint(lines))? {
            Outcome::State { state } if state.event == Event::Line => {
                step(&state, Action::StepInto)?
            }
            other => other,
        }
    };
    match returned {
        Outcome::State { state } if state.event == Event::Return && state.depth == 0 => state
            .value
            .ok_or_else(|| "a return without a value".to_string()),
        other => Err(format!(
            "predicted no return of f: {}",
            serde_json::to_string(&other).unwrap_or_default()
        )),
    }
}

/// Input prediction: from `return output`, back to the call.
fn predict_input<M: Decoder>(predictor: &Predictor<M>, sample: &Sample) -> Result<String, String> {
    let def_line = sample
        .code
        .lines()
        .position(|l| l.starts_with("def f("))
        .ok_or("no `def f(` in the code")?;
    let line = return_lines(&sample.code)
        .last()
        .copied()
        .unwrap_or(def_line as u32 + 1);
    let end = State {
        event: Event::Return,
        line,
        source: sample
            .code
            .lines()
            .nth(line as usize - 1)
            .unwrap_or("")
            .trim_end()
            .to_string(),
        function: "f".into(),
        depth: 0,
        stack: Vec::new(),
        locals: Default::default(),
        globals: Default::default(),
        value: Some(sample.output.clone()),
        stdout: String::new(),
    };
    // The model reads the call as "f(?)": the input is what it must find.
    let mut context = predictor
        .prepare(&sample.code, Some("f(?)"))
        .map_err(|e| e.to_string())?;
    let outcome = predictor
        .predict_one(&mut context, &end, &Action::InvStepCall)
        .map_err(|e| e.to_string())?;
    let state = outcome
        .outcome
        .state()
        .filter(|s| s.event == Event::Call)
        .ok_or("predicted no call state")?;
    Ok(state
        .locals
        .values()
        .cloned()
        .collect::<Vec<_>>()
        .join(", "))
}

/// Input prediction checked forward with the same model: the inverse prediction
/// where the model's own Step Out from its call reaches the expected output, else the
/// trivial guess (the output itself, as the baseline). An unconfirmed inverse
/// prediction is trusted no more than that guess. Still one answer, and no Python
/// runs: the world model checks itself.
fn predict_input_checked<M: Decoder>(
    predictor: &Predictor<M>,
    sample: &Sample,
    inverse: Result<String, String>,
) -> Result<String, String> {
    let confirmed = inverse.ok().filter(|candidate| {
        let tried = Sample {
            input: candidate.clone(),
            ..sample.clone()
        };
        predict_output(predictor, &tried, "step_out")
            .is_ok_and(|output| output.trim() == sample.output.trim())
    });
    Ok(confirmed.unwrap_or_else(|| sample.output.clone()))
}

/// The first argument of a comma-joined argument list (commas inside brackets or
/// strings do not split).
fn first_argument(input: &str) -> &str {
    let end = crate::program::lexer::top_commas(input).next();
    input[..end.unwrap_or(input.len())].trim()
}

/// The trivial baseline: `f` returns its first argument unchanged (output mode), or
/// `f` of the output gives the output back (input mode).
fn baseline(sample: &Sample, mode: &str) -> String {
    if mode == "output" {
        first_argument(&sample.input).to_string()
    } else {
        sample.output.clone()
    }
}

/// Score every sample in `mode` (`output` or `input`).
pub fn run<M: Decoder>(
    predictor: &Predictor<M>,
    samples: &[Sample],
    mode: &str,
    progress: &indicatif::ProgressBar,
) -> Vec<Scored> {
    let methods: &[&str] = if mode == "output" {
        &["step_return", "step_out", "breakpoint", "baseline"]
    } else {
        &["inv_step_call", "inv_checked", "baseline"]
    };
    let mut scored = Vec::new();
    for sample in samples {
        // Input mode's inverse prediction, made once for both methods that use it.
        let inverse = (mode != "output").then(|| predict_input(predictor, sample));
        for &method in methods {
            let prediction = match (&inverse, method) {
                (_, "baseline") => Ok(baseline(sample, mode)),
                (None, method) => predict_output(predictor, sample, method),
                (Some(inverse), "inv_checked") => {
                    predict_input_checked(predictor, sample, inverse.clone())
                }
                (Some(inverse), _) => inverse.clone(),
            };
            let pass = match &prediction {
                Ok(p) if mode == "output" => python_check(SAME_VALUE, &[&sample.output, p]),
                Ok(p) => python_check(INPUT_WORKS, &[&sample.code, p, &sample.output]),
                Err(_) => false,
            };
            scored.push(Scored {
                id: sample.id.clone(),
                method: method.to_string(),
                prediction: prediction.as_ref().ok().cloned(),
                error: prediction.err(),
                pass,
            });
        }
        progress.inc(1);
    }
    scored
}

/// pass@1 per method.
pub fn summary(scored: &[Scored]) -> Vec<(String, usize, usize)> {
    let mut methods: Vec<String> = scored.iter().map(|s| s.method.clone()).collect();
    methods.dedup();
    methods.sort();
    methods.dedup();
    methods
        .into_iter()
        .map(|m| {
            let of: Vec<&Scored> = scored.iter().filter(|s| s.method == m).collect();
            (m, of.iter().filter(|s| s.pass).count(), of.len())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_argument_ignores_nested_and_quoted_commas() {
        assert_eq!(first_argument("[1, 2], 3"), "[1, 2]");
        assert_eq!(first_argument("'a,b', 'c'"), "'a,b'");
        assert_eq!(first_argument("\"x\\\",\", 1"), "\"x\\\",\"");
        assert_eq!(first_argument(" 5 "), "5");
        assert_eq!(first_argument("{'k': (1, 2)}, x"), "{'k': (1, 2)}");
    }
}
