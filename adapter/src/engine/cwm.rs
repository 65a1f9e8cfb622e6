//! The CWM engine: Meta's Code World Model (or any checkpoint that speaks its trace
//! dialect) predicts each next frame; [`neural_model::cwm::run`] turns frames into
//! states and walks the actions CWM has no token for.
//!
//! Every position the session has seen is a node whose parent is the state before it
//! in the run the model wrote, so each prediction's prompt is the run up to that node
//! (with the frames an action walked past, which the user never stopped at). Edits
//! make a sibling node: later predictions condition on the edited locals.

use super::{Engine, EngineError, Position, Prediction};
use neural_model::cwm::model::CwmModel;
use neural_model::cwm::run::{walk, CwmError, FrameSource};
use neural_model::program::ProgramModel;
use neural_model::{Action, Program, State};
use std::path::Path;
use std::sync::Mutex;

/// Most frames one action may walk (a Continue through a long loop).
const MAX_FRAMES: usize = 2_000;

/// A loaded model and where it runs.
type Loaded = (Box<dyn FrameSource + Send>, String);

pub struct CwmEngine {
    inner: Mutex<Inner>,
    entry: State,
    /// Where the model runs, for the launch notes.
    device: String,
}

struct Inner {
    model: Box<dyn FrameSource + Send>,
    program: ProgramModel,
    /// Every state seen, by key, with the key of the state before it in its run.
    nodes: Vec<(State, Option<usize>)>,
}

impl Inner {
    /// The run up to `key`, oldest first, with each state's key.
    fn run_to(&self, key: usize) -> Result<(Vec<State>, Vec<usize>), EngineError> {
        let mut keys = Vec::new();
        let mut at = Some(key);
        while let Some(k) = at {
            let (_, parent) = self
                .nodes
                .get(k)
                .ok_or_else(|| EngineError::Failed(format!("no position {k} in this session")))?;
            keys.push(k);
            at = *parent;
        }
        keys.reverse();
        let states = keys.iter().map(|&k| self.nodes[k].0.clone()).collect();
        Ok((states, keys))
    }

    fn add(&mut self, state: State, parent: usize) -> usize {
        self.nodes.push((state, Some(parent)));
        self.nodes.len() - 1
    }
}

impl CwmEngine {
    /// Loads the CWM checkpoint in `dir` for `program` (blocking: a large checkpoint
    /// takes minutes); `loaded` hears how many of its layers are read.
    pub fn open(
        dir: &Path,
        program: &Program,
        loaded: &mut dyn FnMut(usize, usize),
    ) -> Result<Self, String> {
        super::refuse_syntax_errors(program)?;
        let entry = neural_model::entry::entry_state(&program.source, program.call.as_deref())
            .map_err(|e| format!("the CWM engine cannot start this program: {e}"))?;
        let fail = |e: CwmError| format!("{}: {e}", dir.display());
        let (model, device): Loaded = match cuda::load(dir, &program.source, entry.line, loaded) {
            Some(done) => done.map_err(fail)?,
            None => (
                Box::new(
                    CwmModel::<neural_model::net::Cpu>::load(
                        dir,
                        &Default::default(),
                        &program.source,
                        entry.line,
                        loaded,
                    )
                    .map_err(fail)?,
                ),
                "the CPU (f32; a model of CWM's size needs a GPU: build with --features cuda)"
                    .into(),
            ),
        };
        let inner = Inner {
            model,
            program: ProgramModel::of(&program.source),
            nodes: vec![(entry.clone(), None)],
        };
        Ok(CwmEngine {
            inner: Mutex::new(inner),
            entry,
            device,
        })
    }

    fn inner(&self) -> Result<std::sync::MutexGuard<'_, Inner>, EngineError> {
        self.inner
            .lock()
            .map_err(|_| EngineError::Failed("the model crashed earlier".into()))
    }
}

impl Engine for CwmEngine {
    fn name(&self) -> &str {
        "cwm"
    }

    fn notes(&self) -> Vec<String> {
        vec![
            format!(
                "the checkpoint speaks CWM's trace dialect; it runs on {}",
                self.device
            ),
            "CWM writes no line numbers, printed output or module globals: lines are found \
             from their text, a return shows the frame's last locals, and Step Back, \
             Reverse Continue and the other inverse actions replay this session's history"
                .into(),
        ]
    }

    fn entry(&self) -> Result<Position, EngineError> {
        Ok(Position {
            state: self.entry.clone(),
            key: 0,
        })
    }

    fn predict(&self, from: &Position, action: &Action) -> Result<Prediction, EngineError> {
        let mut inner = self.inner()?;
        let (run, keys) = inner.run_to(from.key as usize)?;
        let Inner { model, program, .. } = &mut *inner;
        let walked =
            walk(model.as_mut(), program, &run, action, MAX_FRAMES).map_err(|e| match e {
                CwmError::Malformed(why) => EngineError::Malformed(why),
                _ => EngineError::Failed(e.to_string()),
            })?;
        let key = match walked.back_to {
            Some(index) => keys[index],
            None => {
                let mut key = from.key as usize;
                for state in walked.states {
                    key = inner.add(state, key);
                }
                key
            }
        };
        let probability = (!action.is_inverse()).then_some(walked.probability);
        Ok(Prediction {
            outcome: walked.outcome,
            key: key as u64,
            probability,
            confidence: None,
            check: None,
            guess: None,
        })
    }

    fn edit(&self, at: &Position, name: &str, value: &str) -> Result<Position, EngineError> {
        let state = super::edited(&at.state, name, value)?;
        let mut inner = self.inner()?;
        let parent = inner
            .nodes
            .get(at.key as usize)
            .ok_or_else(|| EngineError::Failed(format!("no position {} in this session", at.key)))?
            .1;
        inner.nodes.push((state.clone(), parent));
        let key = (inner.nodes.len() - 1) as u64;
        Ok(Position { state, key })
    }
}

/// The GPU, where the build has CUDA and the machine a device.
#[cfg(feature = "cuda")]
mod cuda {
    use super::*;
    use neural_model::net::CudaBf16;

    pub fn load(
        dir: &Path,
        source: &str,
        entry: u32,
        loaded: &mut dyn FnMut(usize, usize),
    ) -> Option<Result<Loaded, CwmError>> {
        let device = neural_model::net::cuda_device()?;
        Some(
            CwmModel::<CudaBf16>::load(dir, &device, source, entry, loaded).map(|model| {
                let source: Box<dyn FrameSource + Send> = Box::new(model);
                (source, "the GPU (CUDA, weights in bf16)".to_string())
            }),
        )
    }
}

#[cfg(not(feature = "cuda"))]
mod cuda {
    use super::*;

    /// No CUDA in this build: the CPU it is.
    pub fn load(
        _: &Path,
        _: &str,
        _: u32,
        _: &mut dyn FnMut(usize, usize),
    ) -> Option<Result<Loaded, CwmError>> {
        None
    }
}
