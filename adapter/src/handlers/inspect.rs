//! threads, stackTrace, scopes, variables, evaluate, setVariable, exceptionInfo, source.

use super::Connection;
use crate::client::SourcePoint;
use crate::protocol::Request;
use crate::view::{VariableView, View};
use serde::Deserialize;
use serde_json::{json, Value};

pub fn threads(conn: &mut Connection, request: &Request) -> Result<(), String> {
    conn.out.respond(
        request,
        Some(json!({ "threads": [{ "id": 1, "name": "MainThread" }] })),
    );
    Ok(())
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct StackTraceArgs {
    #[allow(dead_code)]
    thread_id: i64,
    #[serde(default)]
    start_frame: Option<usize>,
    #[serde(default)]
    levels: Option<usize>,
}

pub fn stack_trace(conn: &mut Connection, request: &Request) -> Result<(), String> {
    let args: StackTraceArgs = request.args()?;
    let (path, name) = program_source(conn)?;
    let frames = conn.view()?.frames();
    let client = conn.client;
    let total = frames.len();
    let start = args.start_frame.unwrap_or(0);
    let levels = args.levels.filter(|&l| l > 0).unwrap_or(total);
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

/// The program's `Source.path` (as the client names files) and name.
fn program_source(conn: &Connection) -> Result<(String, String), String> {
    let session = conn.session()?;
    let session = session.lock().unwrap_or_else(|e| e.into_inner());
    let path = super::lifecycle::canonical(&session.program().path);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok((conn.client.path_out(&path), name))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ScopesArgs {
    frame_id: i64,
}

pub fn scopes(conn: &mut Connection, request: &Request) -> Result<(), String> {
    let args: ScopesArgs = request.args()?;
    let scopes = conn
        .view()?
        .scopes(args.frame_id)
        .map_err(|e| e.to_string())?;
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

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct VariablesArgs {
    variables_reference: i64,
    #[serde(default)]
    start: Option<usize>,
    #[serde(default)]
    count: Option<usize>,
}

pub fn variables(conn: &mut Connection, request: &Request) -> Result<(), String> {
    let args: VariablesArgs = request.args()?;
    let vars = conn
        .view()?
        .variables(
            args.variables_reference,
            args.start.unwrap_or(0),
            args.count,
        )
        .map_err(|e| e.to_string())?;
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

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct EvaluateArgs {
    expression: String,
    #[serde(default)]
    frame_id: Option<i64>,
}

pub fn evaluate(conn: &mut Connection, request: &Request) -> Result<(), String> {
    let args: EvaluateArgs = request.args()?;
    if args.frame_id.is_some_and(|f| f != 1) {
        return Err("not available: only the innermost frame's variables are recorded".into());
    }
    let v = conn
        .view()?
        .evaluate(&args.expression)
        .map_err(|e| e.to_string())?;
    let mut body = json!({ "result": v.value, "variablesReference": v.reference });
    if let Some(t) = v.type_name.filter(|_| conn.client.variable_type) {
        body["type"] = json!(t);
    }
    conn.out.respond(request, Some(body));
    Ok(())
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SetVariableArgs {
    variables_reference: i64,
    name: String,
    value: String,
}

pub async fn set_variable(conn: &mut Connection, request: &Request) -> Result<(), String> {
    let args: SetVariableArgs = request.args()?;
    // Only what a state records can change: the innermost frame's locals.
    let scope = conn
        .view()?
        .scope_name(args.variables_reference)
        .map_err(|e| e.to_string())?;
    match scope {
        Some("Locals") => {}
        Some(other) => {
            return Err(format!(
                "{other} cannot be set: only a local variable of the innermost frame can"
            ))
        }
        None => {
            return Err(format!(
            "{:?} is part of a value, which cannot be set on its own: set the whole local variable",
            args.name
        ))
        }
    }
    let session = conn.session()?;
    let edited = tokio::task::spawn_blocking(move || {
        let mut session = session.lock().unwrap_or_else(|e| e.into_inner());
        session
            .set_variable(&args.name, &args.value)
            .map(|stop| stop.state().clone())
            .map_err(|e| e.to_string())
    })
    .await
    .map_err(|e| format!("the engine stopped unexpectedly: {e}"))??;
    let name: String = request.arguments["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let value = edited.locals.get(&name).cloned().unwrap_or_default();
    conn.view = Some(View::new(edited));
    conn.out.respond(request, Some(json!({ "value": value })));
    Ok(())
}

pub fn exception_info(conn: &mut Connection, request: &Request) -> Result<(), String> {
    let state = conn.view()?.state().clone();
    let kind = state
        .exception_type()
        .ok_or("no exception here: exceptionInfo needs a stop at an exception")?
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

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SourceArgs {
    #[serde(default)]
    source: Option<Value>,
    #[serde(default)]
    source_reference: Option<i64>,
}

/// Only the program under debug is served (stack frames name it by path).
pub fn source(conn: &mut Connection, request: &Request) -> Result<(), String> {
    let args: SourceArgs = request.args()?;
    let session = conn.session()?;
    let session = session.lock().unwrap_or_else(|e| e.into_inner());
    let program = session.program();
    let asked = args
        .source
        .as_ref()
        .and_then(|s| s.get("path"))
        .and_then(Value::as_str);
    let matches = match asked {
        Some(path) => {
            let path = conn.client.path_in(path)?;
            super::lifecycle::canonical(&path) == super::lifecycle::canonical(&program.path)
        }
        None => args.source_reference.unwrap_or(0) == 0,
    };
    if !matches {
        return Err("source not available: only the program being debugged can be shown".into());
    }
    let content = program.source.clone();
    drop(session);
    conn.out.respond(
        request,
        Some(json!({ "content": content, "mimeType": "text/x-python" })),
    );
    Ok(())
}
