//! The neural engine: a transformer predicts every next state; no Python runs (except
//! in verify mode, where the trace engine runs beside it as the referee).
//!
//! The program is read into the model's key/value cache once, when the engine opens;
//! each prediction reuses that prefix, and forward steps reuse the episode so far
//! ([`neural_model::infer`]). The entry state is worked out from the source
//! ([`neural_model::entry`]), edits to a state are accepted (a counterfactual: later
//! predictions condition on the edited state), and every prediction carries the
//! model's probability and a confidence per variable.

use super::trace::TraceEngine;
use super::{Engine, EngineError, ExceptionStops, Position, Prediction};
use neural_model::infer::{PredictError, Predictor, ProgramContext};
use neural_model::net::{CpuModel, Decoder};
use neural_model::{Action, Limits, Outcome, Program, State};
use std::collections::HashMap;
use std::sync::Mutex;

pub struct NeuralEngine<M: Decoder = CpuModel> {
    model: Mutex<Model<M>>,
    entry: State,
    /// Verify mode: the real run, followed action by action beside the predictions.
    referee: Option<TraceEngine>,
    /// Where the model runs, where that is worth saying (a GPU).
    device: Option<String>,
}

/// The model and what it has said in this session.
struct Model<M: Decoder> {
    predictor: Predictor<M>,
    context: ProgramContext<M>,
    /// Every predicted state gets a fresh key (the session keeps its history by key).
    next_key: u64,
    /// Verify mode: the referee's position for each key.
    real: HashMap<u64, u64>,
}

impl<M: Decoder> Model<M> {
    /// A key no position of this session has had.
    fn fresh_key(&mut self) -> u64 {
        self.next_key += 1;
        self.next_key - 1
    }

    /// The predictor's answer as the engine's, under a fresh key (not checked).
    fn keyed(&mut self, prediction: neural_model::infer::Prediction) -> Prediction {
        Prediction {
            outcome: prediction.outcome,
            key: self.fresh_key(),
            probability: Some(prediction.probability),
            confidence: Some(prediction.confidence),
            check: None,
            guess: prediction.guess,
        }
    }
}

impl<M: Decoder> NeuralEngine<M> {
    /// Read `program` (checked by [`super::refuse_syntax_errors`]) into
    /// `predictor`'s model (blocking; seconds); `device` names where it runs, for the
    /// launch notes. With `verify`, also record the program under real Python.
    pub fn with(
        predictor: Predictor<M>,
        program: &Program,
        verify: bool,
        device: Option<String>,
    ) -> Result<Self, String> {
        let entry = neural_model::entry::entry_state(&program.source, program.call.as_deref())
            .map_err(|e| format!("the neural engine cannot start this program: {e}"))?;
        let context = predictor
            .prepare(&program.source, program.call.as_deref())
            .map_err(|e| e.to_string())?;
        let referee = if verify {
            Some(
                TraceEngine::record(program, &Limits::default())
                    .map_err(|e| format!("verify: {e}"))?,
            )
        } else {
            None
        };
        let real = referee
            .iter()
            .filter_map(|r| r.entry().ok())
            .map(|p| (0, p.key))
            .collect();
        let model = Model {
            predictor,
            context,
            next_key: 1,
            real,
        };
        Ok(NeuralEngine {
            model: Mutex::new(model),
            entry,
            referee,
            device,
        })
    }

    /// One prediction with `predict` (a way of the predictor's), given a fresh key
    /// and, in verify mode, checked against the real run (stopping at the same
    /// exceptions).
    fn predict_with(
        &self,
        from: &Position,
        action: &Action,
        stops: ExceptionStops,
        predict: impl FnOnce(
            &Predictor<M>,
            &mut ProgramContext<M>,
            &State,
        ) -> Result<neural_model::infer::Prediction, PredictError>,
    ) -> Result<Prediction, EngineError> {
        let mut model = self.model()?;
        let Model {
            predictor, context, ..
        } = &mut *model;
        let prediction = predict(predictor, context, &from.state).map_err(engine_error)?;
        let mut prediction = model.keyed(prediction);
        let real = model.real.get(&from.key).copied();
        prediction.check = real
            .and_then(|real| self.referee_says(real, action, stops, &prediction.outcome))
            .map(|(real, notes)| {
                model.real.insert(prediction.key, real);
                notes
            });
        Ok(prediction)
    }

    /// The model, or why it cannot be used.
    fn model(&self) -> Result<std::sync::MutexGuard<'_, Model<M>>, EngineError> {
        self.model
            .lock()
            .map_err(|_| EngineError::Failed("the model crashed earlier".into()))
    }

    /// Where the real run goes for the same action from the real position `key`, and
    /// how the prediction differs from it (`None` when it is exact).
    fn referee_says(
        &self,
        key: u64,
        action: &Action,
        stops: ExceptionStops,
        predicted: &Outcome,
    ) -> Option<(u64, Vec<String>)> {
        let referee = self.referee.as_ref()?;
        let real = referee.position(key)?;
        let truth = referee.predict_stopping(&real, action, stops).ok()?;
        Some((truth.key, differences(predicted, &truth.outcome)))
    }
}

/// What differs between a predicted and a real outcome, for people (empty: exact).
pub fn differences(predicted: &Outcome, real: &Outcome) -> Vec<String> {
    let mut notes = Vec::new();
    match (predicted.state(), real.state()) {
        (Some(p), Some(r)) => {
            if (p.event, p.line, &p.function, p.depth) != (r.event, r.line, &r.function, r.depth) {
                notes.push(format!(
                    "predicted a {} state at line {} in {} (depth {}), Python has a {} state at line {} in {} (depth {})",
                    p.event, p.line, p.function, p.depth, r.event, r.line, r.function, r.depth
                ));
            }
            for (name, value) in &r.locals {
                match p.locals.get(name) {
                    Some(v) if v == value => {}
                    Some(v) => notes.push(format!("{name}: predicted {v}, Python has {value}")),
                    None => notes.push(format!(
                        "{name}: missing from the prediction, Python has {value}"
                    )),
                }
            }
            for name in p.locals.keys().filter(|n| !r.locals.contains_key(*n)) {
                notes.push(format!(
                    "{name}: predicted, but Python has no such variable here"
                ));
            }
            if p.value != r.value {
                notes.push(format!(
                    "value: predicted {:?}, Python has {:?}",
                    p.value, r.value
                ));
            }
        }
        _ if predicted == real => {}
        _ => notes.push(format!(
            "predicted {}, Python gives {}",
            describe(predicted),
            describe(real)
        )),
    }
    notes
}

fn describe(outcome: &Outcome) -> String {
    match outcome {
        Outcome::State { state } => format!("{} at line {}", state.event, state.line),
        Outcome::Start { .. } => "the start".into(),
        Outcome::Exit { exit, .. } => format!("the end ({exit})"),
    }
}

fn engine_error(error: PredictError) -> EngineError {
    match error {
        PredictError::Model(neural_model::net::Error::NoAllowedToken { after }) => {
            EngineError::Malformed(format!(
            "the model's prediction went where no valid state can follow (after {after} tokens)"
        ))
        }
        PredictError::Malformed { .. } | PredictError::TooLong { .. } => {
            EngineError::Malformed(error.to_string())
        }
        other => EngineError::Failed(other.to_string()),
    }
}

impl<M: Decoder + Send> Engine for NeuralEngine<M>
where
    M::Cache: Send,
{
    fn name(&self) -> &str {
        "neural"
    }

    fn notes(&self) -> Vec<String> {
        let left_out = self.model.lock().map_or(0, |m| m.context.lines_left_out);
        let long = (left_out > 0).then(|| {
            format!(
                "the program is long: the model reads it without its {left_out} blank, comment \
                 and docstring lines (the lines of code keep their numbers)"
            )
        });
        let device = self
            .device
            .as_ref()
            .map(|d| format!("the model runs on {d}"));
        device.into_iter().chain(long).collect()
    }

    fn entry(&self) -> Result<Position, EngineError> {
        Ok(Position {
            state: self.entry.clone(),
            key: 0,
        })
    }

    fn predict(&self, from: &Position, action: &Action) -> Result<Prediction, EngineError> {
        self.predict_stopping(from, action, ExceptionStops::default())
    }

    /// A Continue that asks for exception stops walks with Step Into predictions and
    /// stops at a predicted exception: where one is raised, or where the one that ends
    /// the program was raised.
    fn predict_stopping(
        &self,
        from: &Position,
        action: &Action,
        stops: ExceptionStops,
    ) -> Result<Prediction, EngineError> {
        self.predict_with(from, action, stops, |predictor, context, state| {
            predictor.predict_stopping(context, state, action, stops)
        })
    }

    fn finds_exceptions(&self) -> bool {
        true
    }

    fn candidates(
        &self,
        from: &Position,
        action: &Action,
        count: usize,
    ) -> Result<Vec<Prediction>, EngineError> {
        let mut model = self.model()?;
        let Model {
            predictor, context, ..
        } = &mut *model;
        let found = predictor
            .candidates(context, &from.state, action, count)
            .map_err(engine_error)?;
        Ok(found.into_iter().map(|p| model.keyed(p)).collect())
    }

    fn predict_quickly(&self, from: &Position, action: &Action) -> Result<Prediction, EngineError> {
        self.predict_with(
            from,
            action,
            ExceptionStops::default(),
            |p, context, state| p.predict_one(context, state, action),
        )
    }

    fn edit(&self, at: &Position, name: &str, value: &str) -> Result<Position, EngineError> {
        let state = super::edited(&at.state, name, value)?;
        // A new position: the real run never was here, so verify mode stops checking.
        let key = self.model()?.fresh_key();
        Ok(Position { state, key })
    }
}
