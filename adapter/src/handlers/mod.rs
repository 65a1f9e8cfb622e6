//! One DAP connection's state and the request handlers, one file per family:
//! [`lifecycle`] (initialize, launch, configurationDone, terminate, disconnect, cancel),
//! [`breakpoints`], [`stepping`] (forward and reverse) and [`inspect`] (threads,
//! stack, scopes, variables, evaluate, exception info, source, setVariable).
//!
//! [`Connection::dispatch`] matches on each request's [`Command`], parsed once when
//! it was read. Each handler takes the typed arguments, applies them to the session, and
//! answers, or returns the [`RequestError`] to answer with; events (stopped, output,
//! exited) follow the response.

pub mod breakpoints;
pub mod inspect;
pub mod lifecycle;
pub mod stepping;

use crate::cancel::Cancels;
use crate::client::ClientConventions;
use crate::engine::ExceptionStops;
use crate::protocol::{Outbox, Request, RequestError};
use crate::request::Command;
use crate::session::{Move, Session, StopReason};
use crate::view::{probability_text, Confidence, View};
use serde_json::json;
use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// Whether the connection goes on after a request.
#[derive(Debug, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Close,
}

/// The launch arguments that are kept after launch.
#[derive(Debug, Default)]
pub struct LaunchState {
    pub stop_on_entry: bool,
}

/// Everything one client connection holds.
pub struct Connection {
    pub out: Outbox,
    pub cancels: Arc<Cancels>,
    /// What the client speaks (lines, paths, optional fields), from `initialize`.
    pub client: ClientConventions,
    /// Breakpoint lines asked for, per source file (canonical path), as placed.
    pub breakpoints: HashMap<PathBuf, BTreeSet<u32>>,
    pub exception_stops: ExceptionStops,
    pub session: Option<Arc<Mutex<Session>>>,
    pub view: Option<View>,
    pub launch: Option<LaunchState>,
    pub configuration_done: bool,
    /// The first stop (entry, or the first breakpoint) has been reported.
    pub started: bool,
    pub terminated: bool,
}

impl Connection {
    pub fn new(out: Outbox, cancels: Arc<Cancels>) -> Self {
        Connection {
            out,
            cancels,
            client: ClientConventions::default(),
            breakpoints: HashMap::new(),
            exception_stops: ExceptionStops::default(),
            session: None,
            view: None,
            launch: None,
            configuration_done: false,
            started: false,
            terminated: false,
        }
    }

    /// Answer one request: apply its command, or fail with why it could not be read.
    pub async fn dispatch(
        &mut self,
        request: Request,
        command: Result<Command, RequestError>,
    ) -> Flow {
        tracing::debug!(seq = request.seq, command = %request.command, "request");
        let closes = matches!(command, Ok(Command::Disconnect(_)));
        let result = match command {
            Ok(command) => self.apply(&request, command).await,
            Err(error) => Err(error),
        };
        match result {
            Ok(()) if closes => return Flow::Close,
            Ok(()) => {}
            Err(error) => {
                tracing::info!(seq = request.seq, command = %request.command, %error, "request failed");
                self.out.fail(&request, &error);
            }
        }
        Flow::Continue
    }

    /// Run the handler for `command`; it answers `request` when it succeeds.
    async fn apply(&mut self, request: &Request, command: Command) -> Result<(), RequestError> {
        match command {
            Command::Initialize(args) => lifecycle::initialize(self, request, args),
            Command::Launch(args) => lifecycle::launch(self, request, args).await,
            Command::Attach => Err(RequestError::failed("attach is not supported: use launch")),
            Command::ConfigurationDone => lifecycle::configuration_done(self, request).await,
            Command::Terminate(_) => lifecycle::terminate(self, request),
            Command::Disconnect(_) => lifecycle::disconnect(self, request),
            Command::Cancel(args) => lifecycle::cancel(self, request, args),
            Command::SetBreakpoints(args) => breakpoints::set_breakpoints(self, request, args),
            Command::SetExceptionBreakpoints(args) => {
                breakpoints::set_exception_breakpoints(self, request, args)
            }
            Command::Step(step) => stepping::step(self, request, step).await,
            Command::Pause(_) => stepping::pause(self, request),
            Command::Threads => inspect::threads(self, request),
            Command::StackTrace(args) => inspect::stack_trace(self, request, args),
            Command::Scopes(args) => inspect::scopes(self, request, args),
            Command::Variables(args) => inspect::variables(self, request, args),
            Command::Evaluate(args) => inspect::evaluate(self, request, args).await,
            Command::SetVariable(args) => inspect::set_variable(self, request, args).await,
            Command::ExceptionInfo(_) => inspect::exception_info(self, request),
            Command::Source(args) => inspect::source(self, request, args),
            Command::InverseCall(args) => inspect::inverse_call(self, request, args).await,
        }
    }

    /// The session, or the error to answer when there is none.
    pub fn session(&self) -> Result<Arc<Mutex<Session>>, RequestError> {
        self.session
            .clone()
            .ok_or_else(|| RequestError::failed("no program is being debugged: send launch first"))
    }

    /// The view of the current stop, or why there is none.
    pub fn view(&mut self) -> Result<&mut View, RequestError> {
        if self.terminated {
            return Err(RequestError::failed("the program has ended"));
        }
        self.view.as_mut().ok_or_else(|| {
            RequestError::failed(
                "the program is not stopped: send launch and configurationDone first",
            )
        })
    }

    /// Send the events for a move: output, then stopped or exited + terminated.
    pub fn report(&mut self, moved: Move) {
        let Some(session) = self.session.clone() else {
            return;
        };
        let mut session = session.lock().unwrap_or_else(|e| e.into_inner());
        let notes = session.take_notes();
        match moved {
            Move::Stopped {
                stop,
                reason,
                stdout,
            } => {
                self.out.output("stdout", &stdout);
                let stop = &session.history()[stop];
                let state = stop.state().clone();
                let reason_name = match reason {
                    StopReason::Entry => "entry",
                    StopReason::Step => "step",
                    StopReason::Breakpoint => "breakpoint",
                    StopReason::Exception => "exception",
                };
                let mut body =
                    json!({ "reason": reason_name, "threadId": 1, "allThreadsStopped": true });
                if reason == StopReason::Exception {
                    body["description"] = json!(format!(
                        "Exception: {}",
                        state.exception_type().unwrap_or("?")
                    ));
                    body["text"] = json!(state.value.clone().unwrap_or_default());
                } else if stop.guess.is_some() {
                    body["description"] = json!("a guess: the model's prediction ran away");
                } else if let Some(p) = stop.probability {
                    body["description"] = json!(format!(
                        "predicted with probability {}",
                        probability_text(p)
                    ));
                }
                if let Some(guess) = &stop.guess {
                    self.out.output("console", &format!("{guess}\n"));
                }
                if let Some(diffs) = stop.check.as_ref().filter(|d| !d.is_empty()) {
                    // Verify mode: say where the prediction and real Python part ways.
                    let text = format!(
                        "verify: the prediction differs from real Python: {}\n",
                        diffs.join("; ")
                    );
                    self.out.output("console", &text);
                }
                if reason == StopReason::Breakpoint {
                    if let Some(id) = self.breakpoint_id(&session, state.line) {
                        body["hitBreakpointIds"] = json!([id]);
                    }
                }
                for note in notes {
                    self.out.output("important", &format!("{note}\n"));
                }
                let mut view = View::new(state);
                if stop.probability.is_some() || stop.confidence.is_some() || stop.check.is_some() {
                    view = view.with_confidence(Confidence {
                        engine: session.engine().name().to_string(),
                        probability: stop.probability,
                        per_variable: stop.confidence.clone(),
                        check: stop.check.clone(),
                        guess: stop.guess.clone(),
                    });
                }
                self.view = Some(view);
                drop(session);
                self.out.event("stopped", Some(body));
            }
            Move::Exited { exit, stdout } => {
                self.out.output("stdout", &stdout);
                let code = match &exit {
                    neural_model::Exit::Normal => 0,
                    // sys.exit(n) and os._exit(n) end with status n; sys.exit("why")
                    // prints its message and ends with 1, as Python does.
                    neural_model::Exit::Error { r#type, message } if r#type == "SystemExit" => {
                        match message.trim().parse::<i64>() {
                            Ok(status) => status,
                            Err(_) => {
                                self.out.output("stderr", &format!("{message}\n"));
                                1
                            }
                        }
                    }
                    neural_model::Exit::Error { r#type, message } => {
                        let text = if message.is_empty() {
                            format!("{type}\n")
                        } else {
                            format!("{type}: {message}\n")
                        };
                        self.out
                            .output("stderr", &format!("Uncaught exception: {text}"));
                        1
                    }
                    neural_model::Exit::Never { reason } => {
                        self.out.output(
                            "console",
                            &format!("The program did not terminate: {reason}\n"),
                        );
                        1
                    }
                };
                if let Some(stderr) = session.engine().stderr() {
                    self.out.output("stderr", &stderr);
                }
                drop(session);
                self.end(Some(code));
            }
        }
    }

    /// End the debuggee: `exited` (when the code is known) then `terminated`, once.
    pub fn end(&mut self, exit_code: Option<i64>) {
        if self.terminated {
            return;
        }
        self.terminated = true;
        self.view = None;
        if let Some(code) = exit_code {
            self.out.event("exited", Some(json!({ "exitCode": code })));
        }
        self.out.event("terminated", None);
    }

    /// Breakpoint ids are their line numbers (one source file per session).
    fn breakpoint_id(&self, session: &Session, line: u32) -> Option<u32> {
        session.breakpoints().contains(&line).then_some(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Engine, EngineError, Position, Prediction};
    use neural_model::{Action, Event, Outcome, Program, State};
    use serde_json::Value;
    use tokio::sync::mpsc;

    /// An engine whose every prediction is checked and found wrong.
    struct Disagreeing;

    fn state(line: u32) -> State {
        State {
            event: Event::Line,
            line,
            source: String::new(),
            function: "<module>".into(),
            depth: 0,
            stack: Vec::new(),
            locals: [("x".to_string(), line.to_string())].into_iter().collect(),
            globals: Default::default(),
            value: None,
            stdout: String::new(),
        }
    }

    impl Engine for Disagreeing {
        fn name(&self) -> &str {
            "disagreeing"
        }
        fn entry(&self) -> Result<Position, EngineError> {
            Ok(Position {
                state: state(1),
                key: 0,
            })
        }
        fn predict(&self, from: &Position, _: &Action) -> Result<Prediction, EngineError> {
            Ok(Prediction {
                outcome: Outcome::State {
                    state: state(from.state.line + 1),
                },
                key: from.key + 1,
                probability: Some(0.5),
                confidence: Some([("x".to_string(), 0.25)].into_iter().collect()),
                check: Some(vec!["x: predicted 1, real 2".into()]),
                guess: None,
            })
        }
        fn edit(&self, at: &Position, _: &str, _: &str) -> Result<Position, EngineError> {
            Ok(at.clone())
        }
    }

    #[test]
    fn a_verify_mismatch_and_the_probability_are_shown() {
        let (tx, mut rx) = mpsc::channel(crate::protocol::MAX_QUEUED);
        let mut conn = Connection::new(Outbox::new(tx), Arc::new(Cancels::default()));
        // As VS Code and nvim-dap initialize: types and paging wanted.
        conn.client.variable_type = true;
        conn.client.variable_paging = true;
        let program = Program {
            path: "p.py".into(),
            source: String::new(),
            call: None,
            ..Program::default()
        };
        let mut session = Session::new(Arc::new(Disagreeing), program).unwrap();
        let moved = session.step(crate::session::Step::Over).unwrap();
        conn.session = Some(Arc::new(Mutex::new(session)));
        conn.report(moved);
        let mut sent: Vec<Value> = Vec::new();
        while let Ok(message) = rx.try_recv() {
            sent.push(message);
        }
        assert_eq!(sent[0]["event"], "output");
        assert!(sent[0]["body"]["output"]
            .as_str()
            .unwrap()
            .contains("x: predicted 1, real 2"));
        assert_eq!(sent[1]["event"], "stopped");
        assert_eq!(
            sent[1]["body"]["description"],
            "predicted with probability 0.50"
        );
    }

    fn connection(engine: Arc<dyn Engine>) -> (Connection, mpsc::Receiver<Value>) {
        let (tx, rx) = mpsc::channel(crate::protocol::MAX_QUEUED);
        let mut conn = Connection::new(Outbox::new(tx), Arc::new(Cancels::default()));
        // As VS Code and nvim-dap initialize: types and paging wanted.
        conn.client.variable_type = true;
        conn.client.variable_paging = true;
        let program = Program {
            path: "p.py".into(),
            source: String::new(),
            call: None,
            ..Program::default()
        };
        let session = Session::new(engine, program).unwrap();
        conn.session = Some(Arc::new(Mutex::new(session)));
        (conn, rx)
    }

    /// Answer one request and return its response body.
    fn ask(
        conn: &mut Connection,
        rx: &mut mpsc::Receiver<Value>,
        command: &str,
        arguments: Value,
    ) -> Value {
        let request = Request {
            seq: 1,
            command: command.into(),
        };
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(conn.dispatch(request, Command::parse(command, arguments)));
        let mut last = Value::Null;
        while let Ok(message) = rx.try_recv() {
            last = message;
        }
        assert_eq!(last["success"], true, "{last}");
        last["body"].clone()
    }

    fn step(conn: &mut Connection) {
        let session = conn.session.clone().unwrap();
        let moved = session
            .lock()
            .unwrap()
            .step(crate::session::Step::Over)
            .unwrap();
        conn.report(moved);
    }

    #[test]
    fn a_predicted_stop_has_a_prediction_scope_and_typed_confidence() {
        let (mut conn, mut rx) = connection(Arc::new(Disagreeing));
        step(&mut conn);
        let scopes = ask(&mut conn, &mut rx, "scopes", json!({ "frameId": 1 }));
        let scopes = scopes["scopes"].as_array().unwrap().clone();
        assert_eq!(scopes[0]["name"], "Locals");
        let prediction = scopes.last().unwrap();
        assert_eq!(prediction["name"], "Prediction");
        assert_eq!(prediction["expensive"], false);
        assert!(prediction.get("presentationHint").is_none(), "{prediction}");
        let rows = ask(
            &mut conn,
            &mut rx,
            "variables",
            json!({ "variablesReference": prediction["variablesReference"] }),
        );
        let rows: Vec<(String, String)> = rows["variables"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| {
                (
                    v["name"].as_str().unwrap().into(),
                    v["value"].as_str().unwrap().into(),
                )
            })
            .collect();
        assert_eq!(
            rows,
            [
                ("probability".to_string(), "0.50".to_string()),
                ("engine".into(), "disagreeing".into()),
                ("verify".into(), "1 difference from real Python".into()),
            ]
        );
        let locals = ask(
            &mut conn,
            &mut rx,
            "variables",
            json!({ "variablesReference": scopes[0]["variablesReference"] }),
        );
        assert_eq!(locals["variables"][0]["type"], "int · p=0.25");
        let hover = ask(&mut conn, &mut rx, "evaluate", json!({ "expression": "x" }));
        assert_eq!(hover["type"], "int · p=0.25");
    }

    #[test]
    fn exception_breakpoints_an_engine_cannot_honour_are_not_verified() {
        let (mut conn, mut rx) = connection(Arc::new(Disagreeing));
        let body = ask(
            &mut conn,
            &mut rx,
            "setExceptionBreakpoints",
            json!({ "filters": ["uncaught"] }),
        );
        let breakpoint = &body["breakpoints"][0];
        assert_eq!(breakpoint["verified"], false, "{body}");
        assert!(breakpoint["message"]
            .as_str()
            .unwrap()
            .contains("cannot stop at exceptions"));
    }

    #[test]
    fn the_entry_and_exact_stops_look_as_before() {
        let (mut conn, mut rx) = connection(Arc::new(Disagreeing));
        let entry = conn.session.clone().unwrap().lock().unwrap().current_id();
        conn.report(Move::Stopped {
            stop: entry,
            reason: StopReason::Entry,
            stdout: String::new(),
        });
        let scopes = ask(&mut conn, &mut rx, "scopes", json!({ "frameId": 1 }));
        let names: Vec<&str> = scopes["scopes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["Locals"], "the entry is not a prediction");
        assert_eq!(scopes["scopes"][0]["presentationHint"], "locals");
        let locals = ask(
            &mut conn,
            &mut rx,
            "variables",
            json!({ "variablesReference": scopes["scopes"][0]["variablesReference"] }),
        );
        assert_eq!(locals["variables"][0]["type"], "int");
    }
}
