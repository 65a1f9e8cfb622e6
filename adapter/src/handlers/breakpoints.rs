//! setBreakpoints and setExceptionBreakpoints.

use super::lifecycle::canonical;
use super::Connection;
use crate::engine::ExceptionStops;
use crate::protocol::{Request, RequestError};
use crate::request::SetBreakpointsArguments;
use dap::requests::SetExceptionBreakpointsArguments;
use neural_model::program::{executable_lines, place_breakpoint};
use serde_json::{json, Value};
use std::collections::BTreeSet;

pub fn set_breakpoints(
    conn: &mut Connection,
    request: &Request,
    args: SetBreakpointsArguments,
) -> Result<(), RequestError> {
    let path = args.source.path.or(args.source.name).ok_or_else(|| {
        RequestError::failed(
            "setBreakpoints needs source.path (sources without a path are not supported)",
        )
    })?;
    let requested: Vec<i64> = match (args.breakpoints, args.lines) {
        (Some(bps), _) => bps.into_iter().map(|b| b.line).collect(),
        (None, Some(lines)) => lines,
        (None, None) => Vec::new(),
    };
    let key = canonical(&conn.client.path_in(&path).map_err(RequestError::failed)?);
    let program = conn.session.as_ref().map(|s| {
        let s = s.lock().unwrap_or_else(|e| e.into_inner());
        (canonical(&s.program().path), s.program().source.clone())
    });
    let source = match &program {
        Some((program_path, source)) if *program_path == key => Ok(source.clone()),
        Some(_) => Err(
            "not the program being debugged: breakpoints work in the launched program only"
                .to_string(),
        ),
        None => neural_model::tracer::read_source(&key).map_err(|e| e.to_string()),
    };
    let executable = source.as_deref().map(executable_lines).unwrap_or_default();
    let mut placed = BTreeSet::new();
    let client = conn.client;
    let breakpoints: Vec<Value> = requested
        .iter()
        .map(|&asked| {
            let line = client.line_in(asked);
            let at = line.and_then(|line| place_breakpoint(&executable, line));
            match (&source, line, at) {
                (Err(why), _, _) => json!({ "verified": false, "line": asked, "message": why }),
                (Ok(_), None, _) => json!({ "verified": false, "line": asked,
                                     "message": "before the first line of the file" }),
                (Ok(_), Some(_), None) => json!({ "verified": false, "line": asked,
                                     "message": "no code on or after this line" }),
                (Ok(_), Some(_), Some(at)) => {
                    placed.insert(at);
                    json!({ "id": at, "verified": true, "line": client.line_out(at) })
                }
            }
        })
        .collect();
    if source.is_ok() {
        if let Some(session) = &conn.session {
            session
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .set_breakpoints(placed.clone());
        }
        conn.breakpoints.insert(key, placed);
    }
    conn.out
        .respond(request, Some(json!({ "breakpoints": breakpoints })));
    Ok(())
}

pub fn set_exception_breakpoints(
    conn: &mut Connection,
    request: &Request,
    args: SetExceptionBreakpointsArguments,
) -> Result<(), RequestError> {
    let mut filters = args.filters;
    filters.extend(
        args.filter_options
            .unwrap_or_default()
            .into_iter()
            .map(|f| f.filter_id),
    );
    let mut stops = ExceptionStops::default();
    for filter in &filters {
        match filter.as_str() {
            "raised" => stops.raised = true,
            "uncaught" => stops.uncaught = true,
            other => {
                return Err(RequestError::failed(format!(
                    "unknown exception filter {other:?}: use \"raised\" or \"uncaught\""
                )))
            }
        }
    }
    conn.exception_stops = stops;
    // Before launch the engine is not known yet; launch says then if it cannot stop.
    let mut ignored = false;
    if let Some(session) = &conn.session {
        let mut session = session.lock().unwrap_or_else(|e| e.into_inner());
        if stops.any() && !session.engine().finds_exceptions() {
            ignored = true;
            conn.out.output(
                "console",
                "this engine cannot stop at exceptions; exception breakpoints are ignored\n",
            );
        }
        session.set_exception_stops(stops);
    }
    let verified: Vec<Value> = filters
        .iter()
        .map(|_| match ignored {
            false => json!({ "verified": true }),
            true => json!({ "verified": false,
                            "message": "this engine cannot stop at exceptions (use \"engine\": \"trace\")" }),
        })
        .collect();
    conn.out
        .respond(request, Some(json!({ "breakpoints": verified })));
    Ok(())
}
