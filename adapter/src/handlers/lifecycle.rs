//! initialize, launch, configurationDone, terminate, disconnect, cancel.

use super::{Connection, LaunchState};
use crate::client::ClientConventions;
use crate::engine::{self, EngineConfig, EngineKind};
use crate::protocol::{Request, RequestError};
use crate::request::LaunchArguments;
use crate::session::{Session, Step};
use dap::requests::{CancelArguments, InitializeArguments};
use dap::types::{Capabilities, ExceptionBreakpointsFilter};
use neural_model::Program;
use serde::Serialize;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The `initialize` response's body: DAP's capabilities, plus
/// `supportsProgressReporting`, which DAP names only as a client capability and which
/// this adapter has always announced too.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AdapterCapabilities {
    #[serde(flatten)]
    pub dap: Capabilities,
    pub supports_progress_reporting: bool,
}

/// What the adapter can do: only what works.
pub fn capabilities() -> AdapterCapabilities {
    let filter =
        |filter: &str, label: &str, default, description: &str| ExceptionBreakpointsFilter {
            filter: filter.into(),
            label: label.into(),
            description: Some(description.into()),
            default: Some(default),
            ..Default::default()
        };
    AdapterCapabilities {
        dap: Capabilities {
            supports_configuration_done_request: Some(true),
            supports_step_back: Some(true),
            supports_set_variable: Some(true),
            supports_evaluate_for_hovers: Some(true),
            supports_exception_info_request: Some(true),
            supports_terminate_request: Some(true),
            supports_cancel_request: Some(true),
            supports_delayed_stack_trace_loading: Some(false),
            exception_breakpoint_filters: Some(vec![
                filter(
                    "raised",
                    "Raised Exceptions",
                    false,
                    "Stop where any exception is raised",
                ),
                filter(
                    "uncaught",
                    "Uncaught Exceptions",
                    true,
                    "Stop where the exception that ends the program is raised",
                ),
            ]),
            ..Default::default()
        },
        supports_progress_reporting: true,
    }
}

pub fn initialize(
    conn: &mut Connection,
    request: &Request,
    args: InitializeArguments,
) -> Result<(), RequestError> {
    let mut client = ClientConventions::new(
        args.lines_start_at1,
        args.columns_start_at1,
        args.path_format.as_ref(),
    )
    .map_err(RequestError::failed)?;
    client.variable_type = args.supports_variable_type.unwrap_or(false);
    client.variable_paging = args.supports_variable_paging.unwrap_or(false);
    client.progress = args.supports_progress_reporting.unwrap_or(false);
    conn.client = client;
    let body = serde_json::to_value(capabilities()).expect("capabilities are JSON");
    conn.out.respond(request, Some(body));
    conn.out.event("initialized", None);
    Ok(())
}

pub async fn launch(
    conn: &mut Connection,
    request: &Request,
    args: LaunchArguments,
) -> Result<(), RequestError> {
    if conn.session.is_some() || conn.terminated {
        return Err(RequestError::failed(
            "this connection already launched a program; start a new debug session",
        ));
    }
    let program_path = resolve(&args.program, args.cwd.as_deref());
    let config = EngineConfig {
        kind: args
            .engine
            .as_deref()
            .unwrap_or("neural")
            .parse::<EngineKind>()
            .map_err(RequestError::failed)?,
        model: args.model.as_ref().map(PathBuf::from),
        verify: args.verify,
        search: args.search,
    };
    if args.verify && config.kind == EngineKind::Trace {
        conn.out.output(
            "console",
            "verify applies to the neural engine only; the trace engine is exact\n",
        );
    }
    if !args.args.is_empty() && config.kind == EngineKind::Neural {
        conn.out.output(
            "console",
            "program args reach real Python only (verify); the model does not read sys.argv\n",
        );
    }
    let mut program =
        Program::load(&program_path, args.call.clone()).map_err(RequestError::failed)?;
    program.args = args.args.clone();
    program.cwd = args.cwd.as_ref().map(PathBuf::from);

    let progress_id = format!("launch-{}", request.seq);
    if conn.client.progress {
        conn.out.event(
            "progressStart",
            Some(json!({ "progressId": progress_id, "title": "Starting the engine", "requestId": request.seq,
                          "cancellable": true, "message": program_path.display().to_string() })),
        );
    }
    let recording = {
        let program = program.clone();
        let (out, id, progress) = (conn.out.clone(), progress_id.clone(), conn.client.progress);
        // A large checkpoint loads layer by layer for minutes: say how far it is.
        let mut loaded = move |done: usize, of: usize| {
            if progress && of > 0 {
                out.event(
                    "progressUpdate",
                    Some(json!({ "progressId": id, "message": format!("loading the model: layer {done} of {of}"),
                                 "percentage": (100 * done / of) as u32 })),
                );
            }
        };
        tokio::task::spawn_blocking(move || engine::open_with(&config, &program, &mut loaded))
    };
    let cancels = conn.cancels.clone();
    let outcome = tokio::select! {
        done = recording => Some(done),
        _ = cancels.cancelled(request.seq, &progress_id) => None,
    };
    if conn.client.progress {
        conn.out
            .event("progressEnd", Some(json!({ "progressId": progress_id })));
    }
    let engine = match outcome {
        None => return Err(RequestError::cancelled()),
        Some(Err(panic)) => {
            return Err(RequestError::failed(format!(
                "recording the program failed: {panic}"
            )))
        }
        Some(Ok(Err(e))) => return Err(RequestError::failed(e)),
        Some(Ok(Ok(engine))) => engine,
    };
    for note in engine.notes() {
        conn.out.output("console", &format!("{note}\n"));
    }
    let session = tokio::task::spawn_blocking(move || Session::new(engine, program))
        .await
        .map_err(|e| RequestError::failed(format!("starting the session failed: {e}")))?
        .map_err(RequestError::failed)?;
    let mut session = session;
    let key = canonical(&program_path);
    session.set_breakpoints(conn.breakpoints.get(&key).cloned().unwrap_or_default());
    session.set_exception_stops(conn.exception_stops);
    if conn.exception_stops.any() && !session.engine().finds_exceptions() {
        conn.out.output(
            "console",
            "this engine cannot stop at exceptions; exception breakpoints are ignored\n",
        );
    }
    conn.session = Some(Arc::new(Mutex::new(session)));
    conn.launch = Some(LaunchState {
        stop_on_entry: args.stop_on_entry.unwrap_or(true),
    });
    conn.out.respond(request, None);
    if conn.configuration_done {
        start(conn).await;
    }
    Ok(())
}

fn resolve(program: &str, cwd: Option<&str>) -> PathBuf {
    let path = PathBuf::from(program);
    match cwd {
        Some(cwd) if path.is_relative() => Path::new(cwd).join(path),
        _ => path,
    }
}

/// The key breakpoints are stored under.
pub fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

pub async fn configuration_done(
    conn: &mut Connection,
    request: &Request,
) -> Result<(), RequestError> {
    conn.configuration_done = true;
    conn.out.respond(request, None);
    if conn.session.is_some() {
        start(conn).await;
    }
    Ok(())
}

/// Report the first stop once both launch and configurationDone have arrived.
async fn start(conn: &mut Connection) {
    if conn.started {
        return;
    }
    conn.started = true;
    let stop_on_entry = conn.launch.as_ref().is_some_and(|l| l.stop_on_entry);
    let Ok(session) = conn.session() else { return };
    let moved = if stop_on_entry {
        let session = session.lock().unwrap_or_else(|e| e.into_inner());
        Ok(crate::session::Move::Stopped {
            stop: session.current_id(),
            reason: crate::session::StopReason::Entry,
            stdout: String::new(),
        })
    } else {
        super::stepping::run_step(session, Step::Continue).await
    };
    match moved {
        Ok(moved) => conn.report(moved),
        Err(error) => {
            conn.out.output("console", &format!("{error}\n"));
            conn.end(None);
        }
    }
}

pub fn terminate(conn: &mut Connection, request: &Request) -> Result<(), RequestError> {
    conn.out.respond(request, None);
    conn.end(None);
    Ok(())
}

pub fn disconnect(conn: &mut Connection, request: &Request) -> Result<(), RequestError> {
    conn.out.respond(request, None);
    conn.session = None;
    conn.view = None;
    Ok(())
}

/// The reader task already recorded the cancel; here it is only acknowledged.
pub fn cancel(
    conn: &mut Connection,
    request: &Request,
    args: CancelArguments,
) -> Result<(), RequestError> {
    conn.cancels.cancel(args.request_id, args.progress_id);
    conn.out.respond(request, None);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_capabilities_are_the_ones_announced_before_and_nothing_more() {
        let announced = serde_json::to_value(capabilities()).unwrap();
        assert_eq!(
            announced,
            json!({
                "supportsConfigurationDoneRequest": true,
                "supportsStepBack": true,
                "supportsSetVariable": true,
                "supportsEvaluateForHovers": true,
                "supportsExceptionInfoRequest": true,
                "supportsTerminateRequest": true,
                "supportsCancelRequest": true,
                "supportsProgressReporting": true,
                "supportsDelayedStackTraceLoading": false,
                "exceptionBreakpointFilters": [
                    { "filter": "raised", "label": "Raised Exceptions", "default": false,
                      "description": "Stop where any exception is raised" },
                    { "filter": "uncaught", "label": "Uncaught Exceptions", "default": true,
                      "description": "Stop where the exception that ends the program is raised" },
                ],
            })
        );
    }
}
