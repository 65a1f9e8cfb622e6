//! `neural-dap`: a Debug Adapter Protocol server for the neural Python debugger.
//!
//! Data flows one way: bytes ([`framing`]) -> messages ([`protocol`]) -> requests
//! ([`handlers`], one file per family) -> the [`session`] (breakpoints, history,
//! moves) -> the [`engine`] (what the next state is) -> the [`view`] (state as
//! frames, scopes and variables) -> messages -> bytes. [`server`] wires a connection
//! together over stdio or TCP.
//!
//! Invariants: the session and the engines never see DAP (a terminal CLI can drive
//! [`session::Session`] directly); nothing but DAP messages is written to stdout.

pub mod cancel;
pub mod cli;
pub mod client;
pub mod engine;
pub mod framing;
pub mod handlers;
pub mod protocol;
pub mod pyrepr;
pub mod server;
pub mod session;
pub mod view;
