//! The world model of a Python program run, and the transformer that learns it.
//!
//! Read in this order: [`state`] (what the debugger shows), [`action`] (what the user
//! does), [`tree`] (the exact effect of an action on a recorded run), [`tracer`]
//! (recording a run with real Python), [`language`] (the text the model reads and
//! writes).

pub mod action;
#[cfg(feature = "neural")]
pub mod cruxeval;
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
pub mod sandbox;
pub mod state;
#[cfg(feature = "neural")]
pub mod tokenizer;
pub mod tracer;
#[cfg(feature = "neural")]
pub mod train;
pub mod tree;

pub use action::Action;
pub use state::{Event, Exit, Frame, State, Vars};
pub use tracer::{trace, Limits, Program, Trace, TraceError};
pub use tree::{Outcome, StateTree, Transition};
