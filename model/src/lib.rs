//! The world model of a Python program run, and the transformer that learns it.
//!
//! Read in this order: [`state`] (what the debugger shows), [`action`] (what the user
//! does), [`tree`] (the exact effect of an action on a recorded run), [`tracer`]
//! (recording a run with real Python), [`language`] (the text the model reads and
//! writes).
//!
//! Layout, by role:
//! - The world model: [`state`], [`action`], [`tree`] (a recorded run and what each
//!   action does in it).
//! - Real Python: [`tracer`] (runs a program, records its states), [`sandbox`] (the
//!   process group and limits it runs under).
//! - The program's text, without Python: [`program`] (the program model: lexer, frame
//!   layout, flow, prints, syntax, executable lines), [`entry`] (the first state of a
//!   script or a call; literals), [`repr`] (reprs read back into their parts, for the
//!   variables view and for what a loop yields).
//! - The trace language: [`language`] (rendering and parsing states and actions),
//!   [`cwm`] (Meta's CWM's dialect of it: its prompts and frames; `cwm::run`, its
//!   frames as states and the actions walked with them; `cwm::model`, a checkpoint
//!   writing them),
//!   [`grammar`] (the shape a predicted state's text may take, character by character),
//!   [`trie`] (a set of strings a part of a state may be, as a byte automaton).
//! - What the next state may say: [`constraints`] (the decoding rules, read from the
//!   program model and the states around, as plain data; no tokens, no weights).
//! - The transformer (feature `neural`): [`net`] (Llama in burn and the fast CPU decode
//!   path), [`tokenizer`], [`infer`] (the session's episode in the cache; the
//!   constraints and the grammar turned into token masks).
//! - [`weights`]: where the shipped checkpoint is found (the environment, a bundle
//!   next to the executable, the source tree).
//! - Data and measurement: [`data`] (generated and corpus programs, episodes, shards),
//!   [`train`] (burn trainer and the PyTorch trainer's driver), [`eval`],
//!   [`cruxeval`], [`progress`] (progress bars).

pub mod action;
pub mod constraints;
#[cfg(feature = "neural")]
pub mod cruxeval;
pub mod cwm;
pub mod data;
pub mod entry;
#[cfg(feature = "neural")]
pub mod eval;
pub mod grammar;
#[cfg(feature = "neural")]
pub mod infer;
pub mod language;
#[cfg(feature = "neural")]
pub mod net;
pub mod program;
pub mod progress;
pub mod repr;
pub mod sandbox;
pub mod state;
#[cfg(feature = "neural")]
pub mod tokenizer;
pub mod tracer;
#[cfg(feature = "neural")]
pub mod train;
pub mod tree;
pub mod trie;
pub mod weights;

pub use action::Action;
pub use state::{Event, Exit, Frame, State, Vars};
pub use tracer::{trace, Limits, Program, Trace, TraceError};
pub use tree::{Outcome, StateTree, Transition};
