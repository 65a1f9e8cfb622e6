//! The engine: what answers "the program is at this state; the user does this action;
//! where does it go?".
//!
//! Two engines fit this trait: [`trace::TraceEngine`] (the program was recorded once
//! under real Python; every answer is exact) and the neural engine (a transformer
//! predicts the next state; it may be slow, may fail, and reports its confidence).
//! The session calls engines from a blocking thread (`spawn_blocking`), never on the
//! async runtime, so an implementation may take its time.

#[cfg(feature = "neural")]
pub mod cwm;
#[cfg(feature = "neural")]
pub mod neural;
pub mod trace;

use indexmap::IndexMap;
pub use neural_model::action::ExceptionStops;
use neural_model::{Action, Limits, Outcome, Program, State};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;

/// Which engine a launch asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EngineKind {
    Trace,
    Neural,
}

impl FromStr for EngineKind {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, String> {
        match name {
            "trace" => Ok(EngineKind::Trace),
            "neural" => Ok(EngineKind::Neural),
            other => Err(format!(
                "unknown engine {other:?}: use \"trace\" or \"neural\""
            )),
        }
    }
}

/// The launch arguments that choose and configure an engine.
#[derive(Clone, Debug, PartialEq)]
pub struct EngineConfig {
    pub kind: EngineKind,
    /// Checkpoint directory (neural); `None`: [`neural_checkpoint`].
    pub model: Option<PathBuf>,
    /// Check each neural prediction against the trace engine.
    pub verify: bool,
    /// Neural: other decodes a step may try where the model was unsure (see
    /// `Predictor::with_search`); `None`: [`neural_model::infer::DEFAULT_SEARCH`].
    pub search: Option<usize>,
}

/// Open the engine `config` asks for on `program` (blocking: the trace engine runs
/// the program; a neural engine loads its weights). The error is for the user.
pub fn open(config: &EngineConfig, program: &Program) -> Result<Arc<dyn Engine>, String> {
    open_with(config, program, &mut |_, _| {})
}

/// [`open`], telling `loaded` how many of a checkpoint's layers are read (done, of).
pub fn open_with(
    config: &EngineConfig,
    program: &Program,
    loaded: &mut dyn FnMut(usize, usize),
) -> Result<Arc<dyn Engine>, String> {
    match config.kind {
        EngineKind::Trace => {
            let engine = trace::TraceEngine::record(program, &Limits::default())
                .map_err(|e| e.to_string())?;
            Ok(Arc::new(engine))
        }
        EngineKind::Neural => {
            let checkpoint = config.model.clone().unwrap_or_else(neural_checkpoint);
            open_neural(&checkpoint, program, config, loaded)
        }
    }
}

/// Refuses a program Python would refuse to compile: predicting its run would be
/// make-believe.
pub fn refuse_syntax_errors(program: &Program) -> Result<(), String> {
    neural_model::program::syntax::check(&program.source).map_err(|problem| {
        format!(
            "{} in the program: {} ({}, line {}). Python would not run it either: \
             fix that line and start the session again",
            problem.kind,
            problem.message,
            program.path.display(),
            problem.line
        )
    })
}

/// The shipped model: `$NEURAL_MODEL`, else a checkpoint bundled next to the adapter
/// (`model/` beside the executable), else `model/weights/default/` of the source tree
/// (see `neural_model::weights::default_dir`).
pub fn neural_checkpoint() -> PathBuf {
    neural_model::weights::default_dir()
}

/// Our own model, or a checkpoint that speaks CWM's dialect (its tokenizer says).
#[cfg(feature = "neural")]
fn open_neural(
    checkpoint: &Path,
    program: &Program,
    config: &EngineConfig,
    loaded: &mut dyn FnMut(usize, usize),
) -> Result<Arc<dyn Engine>, String> {
    let verify = config.verify;
    // Each decode tried costs about one more step's time: 16 is already slow.
    let search = config
        .search
        .unwrap_or(neural_model::infer::DEFAULT_SEARCH)
        .min(16);
    if neural_model::cwm::model::speaks_cwm(checkpoint) {
        if verify {
            return Err(format!(
                "{} speaks CWM's trace dialect, which verify does not check yet: launch without \
                 \"verify\", or with \"engine\": \"trace\" to debug under real Python",
                checkpoint.display()
            ));
        }
        return Ok(Arc::new(cwm::CwmEngine::open(checkpoint, program, loaded)?));
    }
    refuse_syntax_errors(program)?;
    #[cfg(feature = "cuda")]
    if let Some(device) = neural_model::net::cuda_device() {
        // A build with CUDA and a GPU that answers: the burn model there, in bf16.
        let predictor = neural_model::infer::Predictor::<
            neural_model::net::Llama<neural_model::net::CudaBf16>,
        >::load_on(checkpoint, &device)
        .map_err(|e| e.to_string())?
        .with_search(search);
        let gpu = Some("the GPU (CUDA, bf16)".to_string());
        return Ok(Arc::new(neural::NeuralEngine::with(
            predictor, program, verify, gpu,
        )?));
    }
    let predictor = neural_model::infer::Predictor::load(checkpoint)
        .map_err(|e| e.to_string())?
        .with_search(search);
    // Only a build that could have used a GPU says why it did not.
    let device = cfg!(feature = "cuda")
        .then(|| "the CPU: this build has CUDA, but no GPU answered".to_string());
    Ok(Arc::new(neural::NeuralEngine::with(
        predictor, program, verify, device,
    )?))
}

#[cfg(not(feature = "neural"))]
fn open_neural(
    checkpoint: &Path,
    _program: &Program,
    _config: &EngineConfig,
    _loaded: &mut dyn FnMut(usize, usize),
) -> Result<Arc<dyn Engine>, String> {
    Err(format!(
        "this build of neural-dap has no neural engine (built without the `neural` feature; checkpoint {}). \
         Rebuild with default features, or launch with \"engine\": \"trace\" to debug under real Python",
        checkpoint.display()
    ))
}

/// `state` with its frame's variable `name` (a local, else a module-level name it
/// shows) set to the Python literal `value`: a what-if edit of a predicting engine.
#[cfg(feature = "neural")]
pub fn edited(state: &State, name: &str, value: &str) -> Result<State, EngineError> {
    let repr = neural_model::entry::literal_repr(value).map_err(EngineError::Unsupported)?;
    let mut state = state.clone();
    let slot = match state.locals.get_mut(name) {
        Some(slot) => slot,
        None => state.globals.get_mut(name).ok_or_else(|| {
            EngineError::Unsupported(format!("there is no variable {name} in this frame"))
        })?,
    };
    *slot = repr;
    Ok(state)
}

/// An engine-private handle on a position in the run (the trace engine: the index of
/// the state in its tree; the neural engine: whatever it needs to find its cache).
/// The session only stores it and hands it back with the state it came with.
pub type PositionKey = u64;

/// Where the program is: the state shown to the user and the engine's key for it.
#[derive(Clone, Debug, PartialEq)]
pub struct Position {
    pub state: State,
    pub key: PositionKey,
}

/// An engine's answer to one action.
#[derive(Clone, Debug, PartialEq)]
pub struct Prediction {
    /// The next state, the start (inverse actions with nothing earlier), or the exit.
    pub outcome: Outcome,
    /// The engine's key for the outcome's state (ignored for an exit).
    pub key: PositionKey,
    /// Probability of the whole outcome under the model (`None`: exact engine).
    pub probability: Option<f64>,
    /// Probability per variable name, where the engine can tell.
    pub confidence: Option<IndexMap<String, f64>>,
    /// Verify mode: how the prediction differs from real Python (empty: exact);
    /// `None` when nothing checked it.
    pub check: Option<Vec<String>>,
    /// Why the outcome is a guess and not the engine's prediction (`None`: it is its
    /// prediction).
    pub guess: Option<String>,
}

/// Why an engine could not answer. The session stays usable after any of these.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum EngineError {
    /// The engine's output could not be read as a state (e.g. a malformed prediction).
    #[error("the engine's prediction could not be used: {0}")]
    Malformed(String),
    /// The engine cannot do this at all (e.g. the trace engine editing the past).
    #[error("{0}")]
    Unsupported(String),
    /// Anything else that went wrong while predicting.
    #[error("the engine failed: {0}")]
    Failed(String),
}

/// A source of next states. Implementations must be cheap to share across threads.
pub trait Engine: Send + Sync {
    /// A short name for messages (`"trace"`, `"neural"`).
    fn name(&self) -> &str;

    /// The state the program starts at.
    fn entry(&self) -> Result<Position, EngineError>;

    /// Where `action` leads from `from` (the state exactly as the user sees it, which
    /// may have been edited with [`Engine::edit`]).
    fn predict(&self, from: &Position, action: &Action) -> Result<Prediction, EngineError>;

    /// Where `action` leads, answered as cheaply as the engine can: the session asks
    /// it where the next breakpoint lands before each Step Over and Step Out. The
    /// neural engine makes one jump here instead of walking there step by step.
    fn predict_quickly(&self, from: &Position, action: &Action) -> Result<Prediction, EngineError> {
        self.predict(from, action)
    }

    /// Like [`Engine::predict`] for a forward `action`, but stop early at the first
    /// exception state that `stops` asks for. Engines that cannot find exception
    /// states keep the default, which ignores `stops`.
    fn predict_stopping(
        &self,
        from: &Position,
        action: &Action,
        stops: ExceptionStops,
    ) -> Result<Prediction, EngineError> {
        let _ = stops;
        self.predict(from, action)
    }

    /// Up to `count` different answers to `action` from `from`, the likeliest first,
    /// for questions with more than one right answer ("which inputs give this?" is
    /// `inv_step_call`). None of them becomes a stop. An exact engine has one answer,
    /// the default.
    fn candidates(
        &self,
        from: &Position,
        action: &Action,
        count: usize,
    ) -> Result<Vec<Prediction>, EngineError> {
        let _ = count;
        self.predict(from, action).map(|p| vec![p])
    }

    /// Whether [`Engine::predict_stopping`] honours exception stops.
    fn finds_exceptions(&self) -> bool {
        false
    }

    /// Set variable `name` of the current frame to the Python expression `value`;
    /// the edited position, on which later predictions condition.
    fn edit(&self, at: &Position, name: &str, value: &str) -> Result<Position, EngineError>;

    /// Where a position falls in the run's order, for engines that know it (the trace
    /// engine: the state's index). With [`Engine::printed`] it lets the session print
    /// each piece of stdout once, however the user moves back and forth.
    fn order(&self, key: PositionKey) -> Option<u64> {
        let _ = key;
        None
    }

    /// What the program printed after the position of order `from` up to and
    /// including that of order `to`, for engines that know [`Engine::order`].
    fn printed(&self, from: u64, to: u64) -> Option<String> {
        let _ = (from, to);
        None
    }

    /// What the user should know of how the engine reads this program (shown once,
    /// at launch).
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }

    /// What the program wrote to stderr, if known (sent at the end of the run).
    fn stderr(&self) -> Option<String> {
        None
    }
}
