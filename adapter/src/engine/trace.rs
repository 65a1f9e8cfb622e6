//! The trace engine: the program runs once under the tracer; every action is then
//! answered exactly from the recorded state tree (record and replay, with full time
//! travel). It is the oracle the neural engine is checked against.

use super::{Engine, EngineError, ExceptionStops, Position, Prediction};
use neural_model::{
    trace, Action, Event, Exit, Limits, Outcome, Program, StateTree, Trace, Transition,
};

pub struct TraceEngine {
    trace: Trace,
    /// The first state shown: the module's `call` state (line 0, nothing bound yet)
    /// is skipped, so the entry is the first line of the script. In call mode the
    /// entry is the call itself, with its arguments.
    first: usize,
}

impl TraceEngine {
    /// Record `program` (blocking: runs Python; call it off the async runtime).
    pub fn record(program: &Program, limits: &Limits) -> Result<Self, neural_model::TraceError> {
        Ok(Self::from_trace(trace(program, limits)?))
    }

    pub fn from_trace(trace: Trace) -> Self {
        let states = trace.tree.states();
        let module_call = states
            .first()
            .is_some_and(|s| s.event == Event::Call && s.depth == 0 && s.function == "<module>");
        let first = if module_call && states.len() > 1 {
            1
        } else {
            0
        };
        TraceEngine { trace, first }
    }

    /// The entry, as an inverse action that finds nothing earlier reports it.
    fn start(&self) -> Prediction {
        let mut state = self.tree().state(self.first).clone();
        state.stdout.clear();
        Prediction {
            outcome: Outcome::Start { state },
            key: self.first as u64,
            probability: None,
            confidence: None,
            check: None,
            guess: None,
        }
    }

    /// The position of the recorded state `key`, if there is one.
    pub fn position(&self, key: u64) -> Option<Position> {
        let state = self.tree().states().get(key as usize)?.clone();
        Some(Position { state, key })
    }

    fn tree(&self) -> &StateTree {
        &self.trace.tree
    }

    fn index(&self, at: &Position) -> Result<usize, EngineError> {
        let index = at.key as usize;
        if index >= self.tree().len() || !same_position(self.tree().state(index), &at.state) {
            return Err(EngineError::Unsupported(format!(
                "position {} is not a state of the recorded run (was it edited?)",
                at.key
            )));
        }
        Ok(index)
    }

    /// The first exception state after `from` and before `before` that `stops` wants.
    fn exception_stop(&self, from: usize, before: usize, stops: ExceptionStops) -> Option<usize> {
        let states = self.tree().states();
        let is_origin = |i: usize| {
            states[i].event == Event::Exception
                && !(i > 0
                    && states[i - 1].event == Event::Exception
                    && states[i - 1].depth == states[i].depth + 1)
        };
        let raised = if stops.raised {
            (from + 1..before).find(|&i| is_origin(i))
        } else {
            None
        };
        let uncaught = if stops.uncaught {
            self.uncaught_origin().filter(|&i| i > from && i < before)
        } else {
            None
        };
        raised.into_iter().chain(uncaught).min()
    }

    /// Where the exception that ended the run was raised (the start of the chain of
    /// `exception` states that carries it out of the root frame).
    fn uncaught_origin(&self) -> Option<usize> {
        if !matches!(self.tree().exit(), Exit::Error { .. }) {
            return None;
        }
        let states = self.tree().states();
        let mut at = states.len().checked_sub(1)?;
        if states[at].event != Event::Exception {
            return None;
        }
        while at > 0
            && states[at - 1].event == Event::Exception
            && states[at - 1].depth == states[at].depth + 1
        {
            at -= 1;
        }
        Some(at)
    }
}

/// Whether two states are the same point of the run (`stdout` depends on where the
/// state was reached from, so it does not count).
fn same_position(a: &neural_model::State, b: &neural_model::State) -> bool {
    a.event == b.event
        && a.line == b.line
        && a.depth == b.depth
        && a.function == b.function
        && a.stack == b.stack
        && a.locals == b.locals
        && a.globals == b.globals
        && a.value == b.value
}

impl Engine for TraceEngine {
    fn name(&self) -> &str {
        "trace"
    }

    fn entry(&self) -> Result<Position, EngineError> {
        if self.tree().is_empty() {
            return Err(EngineError::Failed(format!(
                "the program ran no traced line ({})",
                self.tree().exit()
            )));
        }
        Ok(Position {
            state: self.tree().state(self.first).clone(),
            key: self.first as u64,
        })
    }

    fn predict(&self, from: &Position, action: &Action) -> Result<Prediction, EngineError> {
        let index = self.index(from)?;
        let key = match self.tree().transition(index, action) {
            Transition::To(to) if to < self.first => return Ok(self.start()),
            Transition::Start => return Ok(self.start()),
            Transition::To(to) => to as u64,
            Transition::End => 0,
        };
        let outcome = self.tree().outcome(index, action);
        Ok(Prediction {
            outcome,
            key,
            probability: None,
            confidence: None,
            check: None,
            guess: None,
        })
    }

    fn predict_stopping(
        &self,
        from: &Position,
        action: &Action,
        stops: ExceptionStops,
    ) -> Result<Prediction, EngineError> {
        let index = self.index(from)?;
        if !stops.any() || action.is_inverse() {
            return self.predict(from, action);
        }
        let before = match self.tree().transition(index, action) {
            Transition::To(to) => to,
            Transition::Start | Transition::End => self.tree().len(),
        };
        match self.exception_stop(index, before, stops) {
            Some(at) => {
                let mut state = self.tree().state(at).clone();
                state.stdout = self.tree().stdout_between(index, at);
                Ok(Prediction {
                    outcome: Outcome::State { state },
                    key: at as u64,
                    probability: None,
                    confidence: None,
                    check: None,
                    guess: None,
                })
            }
            None => self.predict(from, action),
        }
    }

    fn finds_exceptions(&self) -> bool {
        true
    }

    fn edit(&self, _at: &Position, name: &str, _value: &str) -> Result<Position, EngineError> {
        Err(EngineError::Unsupported(format!(
            "cannot set {name}: the trace engine replays a recorded run and cannot change its past. \
             Launch with \"engine\": \"neural\" to edit the state and see what the model predicts"
        )))
    }

    fn order(&self, key: u64) -> Option<u64> {
        Some(key)
    }

    fn printed(&self, from: u64, to: u64) -> Option<String> {
        let last = self.tree().len().checked_sub(1)? as u64;
        let (from, to) = (from.min(last) as usize, to.min(last) as usize);
        Some(if to > from {
            self.tree().stdout_between(from, to)
        } else {
            String::new()
        })
    }

    fn stderr(&self) -> Option<String> {
        Some(self.trace.stderr.clone()).filter(|s| !s.is_empty())
    }
}
