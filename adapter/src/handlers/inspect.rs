//! threads, stackTrace, scopes, variables, evaluate, setVariable, exceptionInfo, source,
//! and our inverseCall ("which inputs give this?").

use super::Connection;
use crate::client::SourcePoint;
use crate::inputs;
use crate::protocol::{Request, RequestError};
use crate::request::{InverseCallArguments, SourceArguments};
use crate::view::{VariableView, View};
use dap::requests::{
    EvaluateArguments, ScopesArguments, SetVariableArguments, StackTraceArguments,
    VariablesArguments,
};
use serde_json::{json, Value};

pub fn threads(conn: &mut Connection, request: &Request) -> Result<(), RequestError> {
    conn.out.respond(
        request,
        Some(json!({ "threads": [{ "id": 1, "name": "MainThread" }] })),
    );
    Ok(())
}

pub fn stack_trace(
    conn: &mut Connection,
    request: &Request,
    args: StackTraceArguments,
) -> Result<(), RequestError> {
    let (path, name) = program_source(conn)?;
    let frames = conn.view()?.frames();
    let client = conn.client;
    let total = frames.len();
    let start = count(args.start_frame).unwrap_or(0);
    let levels = count(args.levels).filter(|&l| l > 0).unwrap_or(total);
    let frames: Vec<Value> = frames
        .into_iter()
        .skip(start)
        .take(levels)
        .map(|f| {
            let (line, column) = client.point_out(SourcePoint {
                line: f.line,
                column: 1,
            });
            json!({ "id": f.id, "name": f.name, "line": line, "column": column,
                    "source": { "name": name, "path": path } })
        })
        .collect();
    conn.out.respond(
        request,
        Some(json!({ "stackFrames": frames, "totalFrames": total })),
    );
    Ok(())
}

/// A paging argument (`startFrame`, `levels`, `start`, `count`); a negative one is 0.
fn count(argument: Option<i64>) -> Option<usize> {
    argument.map(|n| usize::try_from(n).unwrap_or(0))
}

/// The program's `Source.path` (as the client names files) and name.
fn program_source(conn: &Connection) -> Result<(String, String), RequestError> {
    let session = conn.session()?;
    let session = session.lock().unwrap_or_else(|e| e.into_inner());
    let path = super::lifecycle::canonical(&session.program().path);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok((conn.client.path_out(&path), name))
}

pub fn scopes(
    conn: &mut Connection,
    request: &Request,
    args: ScopesArguments,
) -> Result<(), RequestError> {
    let scopes = conn
        .view()?
        .scopes(args.frame_id)
        .map_err(RequestError::failed)?;
    let paging = conn.client.variable_paging;
    let scopes: Vec<Value> = scopes
        .into_iter()
        .map(|s| {
            let mut scope = json!({ "name": s.name, "variablesReference": s.reference,
                                    "expensive": false });
            if paging {
                scope["namedVariables"] = json!(s.count);
            }
            if let Some(hint) = s.hint {
                scope["presentationHint"] = json!(hint);
            }
            scope
        })
        .collect();
    conn.out.respond(request, Some(json!({ "scopes": scopes })));
    Ok(())
}

pub fn variables(
    conn: &mut Connection,
    request: &Request,
    args: VariablesArguments,
) -> Result<(), RequestError> {
    let vars = conn
        .view()?
        .variables(
            args.variables_reference,
            count(args.start).unwrap_or(0),
            count(args.count),
        )
        .map_err(RequestError::failed)?;
    let typed = conn.client.variable_type;
    let vars: Vec<Value> = vars.into_iter().map(|v| variable_json(v, typed)).collect();
    conn.out
        .respond(request, Some(json!({ "variables": vars })));
    Ok(())
}

/// A variable; with its `type` where the client shows types.
fn variable_json(v: VariableView, typed: bool) -> Value {
    let mut out = json!({ "name": v.name, "value": v.value, "variablesReference": v.reference });
    if let Some(t) = v.type_name.filter(|_| typed) {
        out["type"] = json!(t);
    }
    if let Some(e) = v.evaluate_name {
        out["evaluateName"] = json!(e);
    }
    out
}

/// The Debug Console's command for the inverse call: `:inputs` or `:inputs N`.
const INPUTS_COMMAND: &str = ":inputs";

pub async fn evaluate(
    conn: &mut Connection,
    request: &Request,
    args: EvaluateArguments,
) -> Result<(), RequestError> {
    if let Some(rest) = args.expression.trim().strip_prefix(INPUTS_COMMAND) {
        let count = inputs::written_count(rest).map_err(RequestError::failed)?;
        let found = which_inputs(conn, count, true).await?;
        conn.out.respond(
            request,
            Some(json!({ "result": inputs::render(&found), "variablesReference": 0 })),
        );
        return Ok(());
    }
    if args.frame_id.is_some_and(|f| f != 1) {
        return Err(RequestError::failed(
            "not available: only the innermost frame's variables are recorded",
        ));
    }
    let v = conn
        .view()?
        .evaluate(&args.expression)
        .map_err(RequestError::failed)?;
    let mut body = json!({ "result": v.value, "variablesReference": v.reference });
    if let Some(t) = v.type_name.filter(|_| conn.client.variable_type) {
        body["type"] = json!(t);
    }
    conn.out.respond(request, Some(body));
    Ok(())
}

pub async fn set_variable(
    conn: &mut Connection,
    request: &Request,
    args: SetVariableArguments,
) -> Result<(), RequestError> {
    // Only what a state records can change: the innermost frame's locals.
    let scope = conn
        .view()?
        .scope_name(args.variables_reference)
        .map_err(RequestError::failed)?;
    match scope {
        Some("Locals") => {}
        Some(other) => {
            return Err(RequestError::failed(format!(
                "{other} cannot be set: only a local variable of the innermost frame can"
            )))
        }
        None => {
            return Err(RequestError::failed(format!(
            "{:?} is part of a value, which cannot be set on its own: set the whole local variable",
            args.name
        )))
        }
    }
    let session = conn.session()?;
    let name = args.name.clone();
    let edited = tokio::task::spawn_blocking(move || {
        let mut session = session.lock().unwrap_or_else(|e| e.into_inner());
        session
            .set_variable(&args.name, &args.value)
            .map(|stop| stop.state().clone())
            .map_err(RequestError::failed)
    })
    .await
    .map_err(|e| RequestError::failed(format!("the engine stopped unexpectedly: {e}")))??;
    let value = edited.locals.get(&name).cloned().unwrap_or_default();
    conn.view = Some(View::new(edited));
    conn.out.respond(request, Some(json!({ "value": value })));
    Ok(())
}

pub fn exception_info(conn: &mut Connection, request: &Request) -> Result<(), RequestError> {
    let state = conn.view()?.state().clone();
    let kind = state
        .exception_type()
        .ok_or_else(|| {
            RequestError::failed("no exception here: exceptionInfo needs a stop at an exception")
        })?
        .to_string();
    let uncaught = conn.exception_stops.uncaught && !conn.exception_stops.raised;
    conn.out.respond(
        request,
        Some(json!({
            "exceptionId": kind,
            "description": state.value.unwrap_or_default(),
            "breakMode": if uncaught { "unhandled" } else { "always" },
        })),
    );
    Ok(())
}

/// Only the program under debug is served (stack frames name it by path).
pub fn source(
    conn: &mut Connection,
    request: &Request,
    args: SourceArguments,
) -> Result<(), RequestError> {
    let session = conn.session()?;
    let session = session.lock().unwrap_or_else(|e| e.into_inner());
    let program = session.program();
    let asked = args.source.and_then(|s| s.path);
    let matches = match asked {
        Some(path) => {
            let path = conn.client.path_in(&path).map_err(RequestError::failed)?;
            super::lifecycle::canonical(&path) == super::lifecycle::canonical(&program.path)
        }
        None => args.source_reference == 0,
    };
    if !matches {
        return Err(RequestError::failed(
            "source not available: only the program being debugged can be shown",
        ));
    }
    let content = program.source.clone();
    drop(session);
    conn.out.respond(
        request,
        Some(json!({ "content": content, "mimeType": "text/x-python" })),
    );
    Ok(())
}

/// Our `inverseCall` request: which arguments could the current frame's call have had
/// (see [`inputs`]).
pub async fn inverse_call(
    conn: &mut Connection,
    request: &Request,
    args: InverseCallArguments,
) -> Result<(), RequestError> {
    let count = inputs::checked_count(args.count.unwrap_or(inputs::DEFAULT_COUNT))
        .map_err(RequestError::failed)?;
    let found = which_inputs(conn, count, args.check.unwrap_or(true)).await?;
    conn.out
        .respond(request, Some(json!({ "candidates": found })));
    Ok(())
}

/// The candidates for the current stop, worked out off the async runtime.
async fn which_inputs(
    conn: &mut Connection,
    count: usize,
    check: bool,
) -> Result<Vec<inputs::Candidate>, RequestError> {
    conn.view()?; // stopped, and not ended
    let session = conn.session()?;
    tokio::task::spawn_blocking(move || {
        let session = session.lock().unwrap_or_else(|e| e.into_inner());
        inputs::which_inputs(&session, count, check).map_err(RequestError::failed)
    })
    .await
    .map_err(|e| RequestError::failed(format!("the engine stopped unexpectedly: {e}")))?
}
