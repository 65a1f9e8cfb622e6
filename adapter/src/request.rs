//! The typed request: each request's arguments are parsed once, here, into a
//! [`Command`]; handlers take typed arguments and never read JSON.
//!
//! The `dap` crate's argument types are used where they read what the DAP schema
//! says. Ours stand where the crate has none (`launch`'s configuration is ours to
//! define) or reads the wrong keys: its `Source` and `SourceBreakpoint` lack
//! `rename_all = "camelCase"`, so `sourceReference` or `logMessage` would be dropped.

use crate::protocol::RequestError;
use crate::session::Step;
use dap::requests::{
    CancelArguments, ContinueArguments, DisconnectArguments, EvaluateArguments,
    ExceptionInfoArguments, InitializeArguments, NextArguments, PauseArguments,
    ReverseContinueArguments, ScopesArguments, SetExceptionBreakpointsArguments,
    SetVariableArguments, StackTraceArguments, StepBackArguments, StepInArguments,
    StepOutArguments, TerminateArguments, VariablesArguments,
};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;

/// A request this adapter implements, with its arguments.
#[derive(Debug)]
pub enum Command {
    Initialize(InitializeArguments),
    Launch(LaunchArguments),
    /// Refused: its arguments are not read.
    Attach,
    ConfigurationDone,
    Terminate(TerminateArguments),
    Disconnect(DisconnectArguments),
    Cancel(CancelArguments),
    SetBreakpoints(SetBreakpointsArguments),
    SetExceptionBreakpoints(SetExceptionBreakpointsArguments),
    /// `continue`, `next`, `stepIn`, `stepOut`, `stepBack` and `reverseContinue`. Their
    /// arguments are checked (`threadId` is required) and dropped: there is one thread,
    /// and steps are always by statement.
    Step(Step),
    Pause(PauseArguments),
    Threads,
    StackTrace(StackTraceArguments),
    Scopes(ScopesArguments),
    Variables(VariablesArguments),
    Evaluate(EvaluateArguments),
    SetVariable(SetVariableArguments),
    ExceptionInfo(ExceptionInfoArguments),
    Source(SourceArguments),
    /// Ours: "which inputs give this?" (see [`crate::inputs`]).
    InverseCall(InverseCallArguments),
}

impl Command {
    /// Parse `arguments` as `command`'s (an object; `{}` when the request has none).
    pub fn parse(command: &str, arguments: Value) -> Result<Command, RequestError> {
        let args = Arguments { command, arguments };
        Ok(match command {
            "initialize" => Command::Initialize(args.read()?),
            "launch" => Command::Launch(args.read()?),
            "attach" => Command::Attach,
            "configurationDone" => Command::ConfigurationDone,
            "terminate" => Command::Terminate(args.read()?),
            "disconnect" => Command::Disconnect(args.read()?),
            "cancel" => Command::Cancel(args.read()?),
            "setBreakpoints" => Command::SetBreakpoints(args.read()?),
            "setExceptionBreakpoints" => Command::SetExceptionBreakpoints(args.read()?),
            "continue" => args.step::<ContinueArguments>(Step::Continue)?,
            "next" => args.step::<NextArguments>(Step::Over)?,
            "stepIn" => args.step::<StepInArguments>(Step::Into)?,
            "stepOut" => args.step::<StepOutArguments>(Step::Out)?,
            "stepBack" => args.step::<StepBackArguments>(Step::Back)?,
            "reverseContinue" => args.step::<ReverseContinueArguments>(Step::ReverseContinue)?,
            "pause" => Command::Pause(args.read()?),
            "threads" => Command::Threads,
            "stackTrace" => Command::StackTrace(args.read()?),
            "scopes" => Command::Scopes(args.read()?),
            "variables" => Command::Variables(args.read()?),
            "evaluate" => Command::Evaluate(args.read()?),
            "setVariable" => Command::SetVariable(args.read()?),
            "exceptionInfo" => Command::ExceptionInfo(args.read()?),
            "source" => Command::Source(args.read()?),
            "inverseCall" => Command::InverseCall(args.read()?),
            other => return Err(RequestError::unknown(other)),
        })
    }
}

/// A request's arguments, not yet read.
struct Arguments<'a> {
    command: &'a str,
    arguments: Value,
}

impl Arguments<'_> {
    fn read<T: DeserializeOwned>(self) -> Result<T, RequestError> {
        serde_json::from_value(self.arguments).map_err(|e| {
            RequestError::malformed(format!("bad arguments for {}: {e}", self.command))
        })
    }

    fn step<T: DeserializeOwned>(self, step: Step) -> Result<Command, RequestError> {
        self.read::<T>().map(|_| Command::Step(step))
    }
}

/// `launch`'s arguments: DAP leaves them to the adapter.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LaunchArguments {
    pub program: String,
    /// `neural` (the default) or `trace`.
    #[serde(default)]
    pub engine: Option<String>,
    #[serde(default)]
    pub stop_on_entry: Option<bool>,
    /// A call expression to run after the program's top level.
    #[serde(default)]
    pub call: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub cwd: Option<String>,
    /// The neural engine's checkpoint.
    #[serde(default)]
    pub model: Option<String>,
    /// Check each prediction against real Python.
    #[serde(default)]
    pub verify: bool,
    /// Other decodes a neural step may try where the model was unsure.
    #[serde(default)]
    pub search: Option<usize>,
}

/// DAP's `Source`, as far as it is read here.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Source {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub path: Option<String>,
    #[serde(default)]
    pub source_reference: Option<i64>,
}

/// DAP's `SourceBreakpoint`: conditions and log messages are not supported, so only
/// the line is read.
#[derive(Debug, Deserialize)]
pub struct SourceBreakpoint {
    pub line: i64,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SetBreakpointsArguments {
    pub source: Source,
    #[serde(default)]
    pub breakpoints: Option<Vec<SourceBreakpoint>>,
    /// Deprecated form of `breakpoints`.
    #[serde(default)]
    pub lines: Option<Vec<i64>>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceArguments {
    #[serde(default)]
    pub source: Option<Source>,
    pub source_reference: i64,
}

/// `inverseCall`'s arguments (our request): how many candidates, and whether to run
/// each under Python to see whether it reproduces the stop.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InverseCallArguments {
    #[serde(default)]
    pub count: Option<usize>,
    #[serde(default)]
    pub check: Option<bool>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(command: &str, arguments: Value) -> Command {
        Command::parse(command, arguments).unwrap_or_else(|e| panic!("{command}: {e}"))
    }

    fn refused(command: &str, arguments: Value) -> RequestError {
        Command::parse(command, arguments).unwrap_err()
    }

    #[test]
    fn each_request_kind_parses_into_its_command() {
        let thread = json!({ "threadId": 1 });
        let cases = [
            (
                "initialize",
                json!({ "adapterID": "neural", "linesStartAt1": false, "pathFormat": "uri" }),
            ),
            ("launch", json!({ "program": "p.py", "engine": "trace" })),
            ("attach", json!({ "pid": 5 })),
            ("configurationDone", json!({})),
            ("terminate", json!({})),
            ("disconnect", json!({ "terminateDebuggee": true })),
            ("cancel", json!({ "requestId": 3 })),
            (
                "setBreakpoints",
                json!({ "source": { "path": "p.py" }, "breakpoints": [{ "line": 2 }] }),
            ),
            ("setExceptionBreakpoints", json!({ "filters": ["raised"] })),
            ("pause", thread.clone()),
            ("threads", json!({})),
            (
                "stackTrace",
                json!({ "threadId": 1, "startFrame": 0, "levels": 20 }),
            ),
            ("scopes", json!({ "frameId": 1 })),
            (
                "variables",
                json!({ "variablesReference": 2, "start": 0, "count": 5 }),
            ),
            (
                "evaluate",
                json!({ "expression": "x", "frameId": 1, "context": "clipboard" }),
            ),
            (
                "setVariable",
                json!({ "variablesReference": 2, "name": "x", "value": "3" }),
            ),
            ("exceptionInfo", thread.clone()),
            (
                "source",
                json!({ "source": { "path": "p.py" }, "sourceReference": 0 }),
            ),
        ];
        for (command, arguments) in cases {
            let parsed = format!("{:?}", parse(command, arguments));
            let variant = parsed.split(['(', ' ']).next().unwrap();
            assert!(
                command.eq_ignore_ascii_case(variant),
                "{command} parsed as {parsed}"
            );
        }
    }

    #[test]
    fn each_step_command_is_its_own_step_kind() {
        let thread = json!({ "threadId": 1, "granularity": "statement" });
        let steps = [
            ("continue", Step::Continue),
            ("next", Step::Over),
            ("stepIn", Step::Into),
            ("stepOut", Step::Out),
            ("stepBack", Step::Back),
            ("reverseContinue", Step::ReverseContinue),
        ];
        for (command, step) in steps {
            assert!(
                matches!(parse(command, thread.clone()), Command::Step(s) if s == step),
                "{command}"
            );
            let missing = refused(command, json!({}));
            assert!(missing.format.contains("threadId"), "{missing}");
        }
    }

    #[test]
    fn unknown_commands_and_bad_arguments_are_named() {
        let unknown = refused("frobnicate", json!({}));
        assert_eq!(unknown.id, RequestError::UNKNOWN_ID);
        assert!(unknown.format.contains("\"frobnicate\""), "{unknown}");
        assert!(
            refused("stepBackwards", json!({ "threadId": 1 }))
                .format
                .contains("unknown request"),
            "no catch-all step"
        );
        let bad = refused("launch", json!({ "program": 5 }));
        assert_eq!(bad.id, RequestError::MALFORMED_ID);
        assert!(bad.format.starts_with("bad arguments for launch"), "{bad}");
        assert!(refused("launch", json!({})).format.contains("program"));
        // Required by the DAP schema, so required here.
        assert!(refused("initialize", json!({}))
            .format
            .contains("adapterID"));
        assert!(refused("scopes", json!({ "frameId": "top" }))
            .format
            .contains("scopes"));
    }

    #[test]
    fn sources_are_read_by_their_camel_case_keys() {
        let source = json!({ "name": "p.py", "path": "/tmp/p.py", "sourceReference": 0,
                             "presentationHint": "deemphasize", "origin": "x",
                             "checksums": [{ "algorithm": "SHA256", "checksum": "00" }] });
        let Command::Source(args) = parse(
            "source",
            json!({ "source": source.clone(), "sourceReference": 0 }),
        ) else {
            panic!("not a source request")
        };
        let read = args.source.unwrap();
        assert_eq!(read.path.as_deref(), Some("/tmp/p.py"));
        assert_eq!(read.source_reference, Some(0));
        // The crate's own Source reads `source_reference`, and so drops the client's.
        let theirs: dap::types::Source = serde_json::from_value(source).unwrap();
        assert_eq!(theirs.source_reference, None);
        let Command::SetBreakpoints(args) = parse(
            "setBreakpoints",
            json!({ "source": { "path": "p.py" }, "lines": [3, 4],
                    "breakpoints": [{ "line": 3, "logMessage": "x", "hitCondition": "2" }] }),
        ) else {
            panic!("not a setBreakpoints request")
        };
        assert_eq!(args.breakpoints.unwrap()[0].line, 3);
        assert_eq!(args.lines, Some(vec![3, 4]));
    }
}
