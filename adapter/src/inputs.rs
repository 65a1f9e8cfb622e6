//! "Which inputs give this?": the inverse call. Stopped inside a call, the engine is
//! asked what the call's frame held when it began (`inv_step_call`), several times
//! over where it can give more than one answer (the neural engine); each answer
//! becomes a call expression, and where Python is available that call is run under
//! the tracer to see whether it reaches the state the user is looking at.
//!
//! No debugger that runs the program can answer this: it needs a model of the run
//! that can be read backwards.

use crate::session::Session;
use neural_model::{trace, Action, Event, Limits, Outcome, Program, State};
use serde::Serialize;

/// Candidates asked for when the client names no number.
pub const DEFAULT_COUNT: usize = 3;
/// The most candidates one request may ask for (each is a decode).
pub const MAX_COUNT: usize = 10;

/// One answer: the arguments a call may have begun with.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Candidate {
    /// The function called, and the line its call stands on.
    pub function: String,
    pub line: u32,
    /// Each parameter and the repr of its value, in the frame's order.
    pub arguments: Vec<Argument>,
    /// The call as Python (`None`: a method or nested function, not callable alone).
    pub call: Option<String>,
    /// The engine's probability of this answer (`None`: an exact engine).
    pub probability: Option<f64>,
    /// Whether running `call` under Python reaches the state asked about (`None`: not
    /// checked; `note` says why).
    pub reproduces: Option<bool>,
    pub note: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Argument {
    pub name: String,
    pub value: String,
}

/// `count` if it is a number of candidates one request may ask for.
pub fn checked_count(count: usize) -> Result<usize, String> {
    if (1..=MAX_COUNT).contains(&count) {
        Ok(count)
    } else {
        Err(format!("count must be 1 to {MAX_COUNT}, not {count}"))
    }
}

/// The count written after `inputs` in the Debug Console or the terminal (nothing:
/// [`DEFAULT_COUNT`]).
pub fn written_count(text: &str) -> Result<usize, String> {
    match text.trim() {
        "" => Ok(DEFAULT_COUNT),
        n => checked_count(n.parse().map_err(|_| {
            format!("inputs takes a number of candidates (1 to {MAX_COUNT}), not {n:?}")
        })?),
    }
}

/// Up to `count` calls that may have led to the current stop, the likeliest first;
/// with `check`, each run under the tracer (blocking: decodes and Python runs).
pub fn which_inputs(
    session: &Session,
    count: usize,
    check: bool,
) -> Result<Vec<Candidate>, String> {
    if let Some(exit) = session.ended() {
        return Err(format!(
            "the program has ended ({exit:?}): step back into a call first"
        ));
    }
    let here = &session.current().position;
    let program = session.program();
    if here.state.depth == 0 && program.call.is_none() {
        return Err(
            "stopped in the module's own code, not in a call: step into a function (or \
             launch with a \"call\") and ask again"
                .into(),
        );
    }
    // At the call itself, its arguments are what the stop shows.
    if here.state.event == Event::Call {
        return Ok(vec![candidate(
            program,
            &here.state,
            here.state.clone(),
            None,
            check,
        )]);
    }
    // Twice as many as wanted: answers that differ only outside the arguments (the
    // globals, the stack) are one candidate.
    let answers = session
        .engine()
        .candidates(here, &Action::InvStepCall, 2 * count)
        .map_err(|e| e.to_string())?;
    let mut calls: Vec<(State, Option<f64>)> = Vec::new();
    for answer in answers {
        let (Outcome::State { state } | Outcome::Start { state }) = answer.outcome else {
            continue;
        };
        let seen = calls.iter().any(|(call, _)| {
            (call.line, &call.function, &call.locals)
                == (state.line, &state.function, &state.locals)
        });
        // A value that no Python object shows (`fib(,)`) is no input.
        let readable = state.locals.values().all(|v| is_repr(v));
        let this_frame = state.event == Event::Call && state.function == here.state.function;
        if this_frame && !seen && readable && calls.len() < count {
            calls.push((state, answer.probability));
        }
    }
    if calls.is_empty() {
        return Err(format!(
            "the {} engine found no call of {} that begins this frame",
            session.engine().name(),
            here.state.function
        ));
    }
    Ok(calls
        .into_iter()
        .map(|(call, probability)| candidate(program, &here.state, call, probability, check))
        .collect())
}

fn candidate(
    program: &Program,
    target: &State,
    call: State,
    probability: Option<f64>,
    check: bool,
) -> Candidate {
    let expression = call_expression(program, &call);
    let (reproduces, note) = match (&expression, check) {
        (_, false) => (None, None),
        (None, true) => (
            None,
            Some(format!(
                "not checked: {} is a method or a nested function, which cannot be called on its own",
                call.function
            )),
        ),
        (Some(expression), true) => match reaches(program, expression, target) {
            Ok(true) => (Some(true), None),
            Ok(false) => (
                Some(false),
                Some(format!("under Python, {expression} never reaches this state")),
            ),
            Err(why) => (None, Some(format!("not checked: {why}"))),
        },
    };
    Candidate {
        function: call.function,
        line: call.line,
        arguments: call
            .locals
            .into_iter()
            .map(|(name, value)| Argument { name, value })
            .collect(),
        call: expression,
        probability,
        reproduces,
        note,
    }
}

/// The call in Python that begins the frame of the call state `call`.
fn call_expression(program: &Program, call: &State) -> Option<String> {
    neural_model::entry::call_expression(&program.source, call.line, &call.function, &call.locals)
}

/// Whether `value` reads as a repr: a literal, a container or object of reprs, or a
/// `<...>` placeholder (an object without a readable repr).
fn is_repr(value: &str) -> bool {
    value.starts_with('<')
        || neural_model::entry::literal_repr(value).is_ok()
        || neural_model::repr::Repr::parse(value).kind != neural_model::repr::Kind::Atom
}

/// Whether the call `expression`, run under the tracer, passes through `target` in
/// its own frame: the same event, line, function, locals and value.
fn reaches(program: &Program, expression: &str, target: &State) -> Result<bool, String> {
    let run = Program {
        call: Some(expression.to_string()),
        ..program.clone()
    };
    let traced = trace(&run, &Limits::default()).map_err(|e| e.to_string())?;
    Ok(traced.tree.states().iter().any(|s| {
        s.depth == 0
            && (s.event, s.line, &s.function, &s.locals, &s.value)
                == (
                    target.event,
                    target.line,
                    &target.function,
                    &target.locals,
                    &target.value,
                )
    }))
}

/// The candidates as the Debug Console and the terminal show them.
pub fn render(candidates: &[Candidate]) -> String {
    let mut text = String::new();
    for (i, c) in candidates.iter().enumerate() {
        let call = c.call.clone().unwrap_or_else(|| {
            let arguments: Vec<String> = c
                .arguments
                .iter()
                .map(|a| format!("{}={}", a.name, a.value))
                .collect();
            format!("{}({})", c.function, arguments.join(", "))
        });
        let probability = c
            .probability
            .map(|p| format!("  p={}", crate::view::probability_text(p)))
            .unwrap_or_default();
        let verdict = match c.reproduces {
            Some(true) => "  reproduces this state under Python".to_string(),
            Some(false) | None => c
                .note
                .as_ref()
                .map(|n| format!("  ({n})"))
                .unwrap_or_default(),
        };
        text.push_str(&format!("{}. {call}{probability}{verdict}\n", i + 1));
    }
    text
}
