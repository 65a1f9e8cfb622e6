//! `neural-dap`: a Debug Adapter Protocol server for the neural Python debugger.
//!
//! The layers, in the order a request flows through them:
//!
//! 1. framing ([`framing`]): Content-Length frames -> JSON messages, and back.
//! 2. typed request: the envelope ([`protocol::Request`]: `seq`, command) is read
//!    first, then the arguments once, into a [`request::Command`] (the `dap` crate's
//!    argument types, ours where it has none or reads the wrong keys).
//! 3. handler ([`handlers`], one file per family): dispatches on the `Command`,
//!    converts the client's lines and paths at the edge ([`client`]), and answers or
//!    fails with a [`protocol::RequestError`] (DAP's error `Message`).
//! 4. session ([`session`]): breakpoints, history, moves.
//! 5. engine ([`engine`]): what the next state is (the model, or recorded Python).
//! 6. view ([`view`]): a state as frames, scopes and variables.
//! 7. typed response ([`protocol::Outbox`]): responses and events, numbered and
//!    written back through the framing. Typed so far: the initialize body (the crate's
//!    `Capabilities`) and errors; other bodies are built as JSON in the handlers, and
//!    the schema tests in protocol-tests check every one.
//!
//! [`server`] wires a connection together over stdio or TCP.
//!
//! Invariants: the session and the engines never see DAP (a terminal CLI can drive
//! [`session::Session`] directly); handlers never read JSON arguments; nothing but DAP
//! messages is written to stdout.

pub mod cancel;
pub mod cli;
pub mod client;
pub mod engine;
pub mod framing;
pub mod handlers;
pub mod inputs;
pub mod protocol;
pub mod request;
pub mod server;
pub mod session;
pub mod view;
