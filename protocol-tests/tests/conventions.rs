//! Clients that number lines from 0, name files by URI, or want none of DAP's optional
//! fields: each gets the protocol it asked for at `initialize`, in both engines. (The
//! other suites speak as VS Code does: 1-based lines, paths, every option on.)

use protocol_tests::{program, Client};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// The neural test checkpoint (see neural.rs).
fn checkpoint() -> String {
    std::env::var_os("NEURAL_TEST_MODEL")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../model/weights/test"))
        .display()
        .to_string()
}

fn launch_arguments(program: &str, engine: &str) -> Value {
    let mut args = json!({ "program": program, "engine": engine, "stopOnEntry": false });
    if engine == "neural" {
        args["model"] = json!(checkpoint());
    }
    args
}

/// initialize with `conventions`, launch `program` with a breakpoint on `source_path`
/// at the client's line `line`; the setBreakpoints answer, once stopped there.
fn start(
    client: &mut Client,
    conventions: Value,
    program: &str,
    engine: &str,
    source_path: &str,
    line: i64,
) -> Value {
    let mut init = json!({ "adapterID": "neural" });
    for (k, v) in conventions.as_object().unwrap() {
        init[k] = v.clone();
    }
    client.ok("initialize", init);
    client.event("initialized");
    let launch = client.send("launch", launch_arguments(program, engine));
    let placed = client.ok(
        "setBreakpoints",
        json!({ "source": { "path": source_path }, "breakpoints": [{ "line": line }] }),
    );
    client.ok("configurationDone", json!({}));
    let launched = client.response_to(launch);
    assert_eq!(launched["success"], true, "{launched}");
    client.event("stopped");
    placed
}

fn top_frame(client: &mut Client) -> Value {
    client.ok("stackTrace", json!({ "threadId": 1 }))["stackFrames"][0].clone()
}

#[test]
fn a_zero_based_client_sends_and_gets_lines_and_columns_from_zero() {
    for engine in ["trace", "neural"] {
        let mut client = Client::stdio();
        let conventions = json!({ "linesStartAt1": false, "columnsStartAt1": false });
        let nested = program("nested.py");
        // Line 6 of the file (`total = 0`) is line 5 to this client.
        let placed = start(&mut client, conventions, &nested, engine, &nested, 5);
        let breakpoint = &placed["breakpoints"][0];
        assert_eq!(breakpoint["verified"], true, "{engine}: {placed}");
        assert_eq!(breakpoint["line"], 5, "{engine}");
        let top = top_frame(&mut client);
        assert_eq!(
            (top["name"].as_str(), top["line"].as_i64()),
            (Some("outer"), Some(5)),
            "{engine}: {top}"
        );
        assert_eq!(top["column"], 0, "{engine}");
        // A blank line moves to the next statement, in the client's numbering too.
        let moved = client.ok(
            "setBreakpoints",
            json!({ "source": { "path": nested }, "breakpoints": [{ "line": 4 }, { "line": -1 }] }),
        );
        assert_eq!(moved["breakpoints"][0]["line"], 5, "{engine}: {moved}");
        assert_eq!(moved["breakpoints"][1]["verified"], false, "{engine}");
        client.finish();
    }
}

#[test]
fn a_uri_client_names_files_by_file_uri_with_spaces_and_non_ascii_encoded() {
    let dir = std::env::temp_dir().join(format!("neural uri {} ü", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("café nested.py");
    std::fs::copy(program("nested.py"), &file).unwrap();
    let path = std::fs::canonicalize(&file).unwrap();
    let uri = format!(
        "file://{}",
        path.display()
            .to_string()
            .replace('%', "%25")
            .replace(' ', "%20")
            .replace('é', "%C3%A9")
            .replace('ü', "%C3%BC")
    );
    for engine in ["trace", "neural"] {
        let mut client = Client::stdio();
        let conventions = json!({ "pathFormat": "uri" });
        let placed = start(
            &mut client,
            conventions,
            &path.display().to_string(),
            engine,
            &uri,
            6,
        );
        assert_eq!(
            placed["breakpoints"][0]["verified"], true,
            "{engine}: {placed}"
        );
        let top = top_frame(&mut client);
        assert_eq!(top["source"]["path"], uri, "{engine}");
        assert_eq!(top["line"], 6, "{engine}");
        let source = client.ok(
            "source",
            json!({ "source": { "path": uri }, "sourceReference": 0 }),
        );
        assert!(source["content"]
            .as_str()
            .unwrap()
            .starts_with("def outer(n):"));
        let refused = client.fails(
            "setBreakpoints",
            json!({ "source": { "path": "https://example.com/x.py" }, "breakpoints": [] }),
        );
        assert!(refused.contains("not a file URI"), "{refused}");
        client.finish();
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_client_that_asks_for_no_options_gets_none() {
    for engine in ["trace", "neural"] {
        let mut client = Client::stdio();
        let conventions = json!({
            "supportsVariableType": false,
            "supportsVariablePaging": false,
            "supportsProgressReporting": false,
        });
        let nested = program("nested.py");
        start(&mut client, conventions, &nested, engine, &nested, 6);
        let scopes = client.ok("scopes", json!({ "frameId": 1 }));
        let reference = scopes["scopes"][0]["variablesReference"].clone();
        for scope in scopes["scopes"].as_array().unwrap() {
            assert!(scope.get("namedVariables").is_none(), "{engine}: {scope}");
        }
        let variables = client.ok("variables", json!({ "variablesReference": reference }));
        let variables = variables["variables"].as_array().unwrap();
        assert!(!variables.is_empty(), "{engine}");
        for variable in variables {
            assert!(variable.get("type").is_none(), "{engine}: {variable}");
        }
        let evaluated = client.ok("evaluate", json!({ "expression": "n", "frameId": 1 }));
        assert!(evaluated.get("type").is_none(), "{engine}: {evaluated}");
        let progress = client
            .received
            .iter()
            .filter(|m| {
                m["event"]
                    .as_str()
                    .is_some_and(|e| e.starts_with("progress"))
            })
            .count();
        assert_eq!(progress, 0, "{engine}: progress events were not asked for");
        client.finish();
    }
}
