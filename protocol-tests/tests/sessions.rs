//! Complete DAP sessions against the real `neural-dap` binary, with the trace engine.
//! Every message the adapter sends is checked against the DAP JSON schema by the
//! client (see `protocol_tests::Client::next_message`).

use protocol_tests::{frame, program, Client};
use serde_json::{json, Value};

fn no_entry() -> Value {
    json!({ "stopOnEntry": false })
}

/// What the user sees at a stop: the whole stack and the innermost locals.
type Snapshot = (Vec<(String, u64)>, Vec<(String, String)>);

fn snapshot(client: &mut Client) -> Snapshot {
    (client.stack(), client.locals())
}

fn local(client: &mut Client, name: &str) -> String {
    client
        .locals()
        .into_iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no local {name}"))
        .1
}

#[test]
fn initialize_advertises_what_works_and_rejects_what_does_not() {
    let mut client = Client::stdio();
    let caps = client.ok(
        "initialize",
        json!({ "adapterID": "neural", "linesStartAt1": true }),
    );
    for flag in [
        "supportsConfigurationDoneRequest",
        "supportsStepBack",
        "supportsSetVariable",
        "supportsEvaluateForHovers",
        "supportsExceptionInfoRequest",
        "supportsTerminateRequest",
        "supportsCancelRequest",
        "supportsProgressReporting",
    ] {
        assert_eq!(caps[flag], json!(true), "{flag}");
    }
    let filters: Vec<&str> = caps["exceptionBreakpointFilters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["filter"].as_str().unwrap())
        .collect();
    assert_eq!(filters, ["raised", "uncaught"]);
    client.event("initialized");

    assert!(client
        .fails("frobnicate", json!({}))
        .contains("unknown request"));
    assert!(client
        .fails("stackTrace", json!({ "threadId": 1 }))
        .contains("launch"));
    assert!(client
        .fails("launch", json!({ "engine": "trace" }))
        .contains("program"));
    assert!(client
        .fails("launch", json!({ "program": 5 }))
        .contains("bad arguments"));
    let missing = client.fails(
        "launch",
        json!({ "program": "/no/such/file.py", "engine": "trace" }),
    );
    assert!(missing.contains("/no/such/file.py"), "{missing}");
    // The default engine is the neural one: without a checkpoint, a clear error naming
    // where it looked (a checkpoint may exist in model/weights/default/, so name one
    // that cannot).
    let neural = client.fails(
        "launch",
        json!({ "program": program("nested.py"), "model": "/no/such/checkpoint" }),
    );
    assert!(neural.contains("/no/such/checkpoint"), "{neural}");
    let named = client.fails(
        "launch",
        json!({ "program": program("nested.py"), "engine": "neural", "model": "/ckpt/x" }),
    );
    assert!(named.contains("/ckpt/x"), "{named}");
    assert!(client
        .fails(
            "launch",
            json!({ "program": program("nested.py"), "engine": "gpt" })
        )
        .contains("unknown engine"));
    assert!(client.finish().success());
}

#[test]
fn stops_on_entry_with_one_thread_and_the_source() {
    let mut client = Client::stdio();
    let stopped = client.start(&program("nested.py"), &[], json!({}));
    assert_eq!(stopped["body"]["reason"], "entry");
    assert_eq!(
        client.ok("threads", json!({}))["threads"],
        json!([{ "id": 1, "name": "MainThread" }])
    );
    assert_eq!(client.stack(), vec![("<module>".to_string(), 1)]);
    let frames = client.ok("stackTrace", json!({ "threadId": 1 }));
    assert_eq!(
        frames["stackFrames"][0]["source"]["path"],
        json!(program("nested.py"))
    );
    let source = client.ok(
        "source",
        json!({ "source": { "path": program("nested.py") }, "sourceReference": 0 }),
    );
    assert!(source["content"]
        .as_str()
        .unwrap()
        .starts_with("def outer(n):"));
    assert!(client
        .fails(
            "source",
            json!({ "source": { "path": "/etc/passwd" }, "sourceReference": 0 })
        )
        .contains("not available"));
    // progress was asked for in initialize: launch reported it
    let kinds: Vec<&str> = client
        .received
        .iter()
        .filter_map(|m| m["event"].as_str())
        .collect();
    assert!(
        kinds.contains(&"progressStart") && kinds.contains(&"progressEnd"),
        "{kinds:?}"
    );
    client.finish();
}

#[test]
fn breakpoint_in_a_nested_function_then_step_over_in_and_out() {
    let mut client = Client::stdio();
    let stopped = client.start(&program("nested.py"), &[3], no_entry());
    assert_eq!(stopped["body"]["reason"], "breakpoint");
    assert_eq!(stopped["body"]["hitBreakpointIds"], json!([3]));
    let stack = client.stack();
    assert_eq!(
        stack,
        vec![
            ("inner".into(), 3),
            ("outer".into(), 8),
            ("<module>".into(), 13)
        ]
    );
    assert_eq!(local(&mut client, "x"), "0");

    assert_eq!(client.step("next").unwrap()["body"]["reason"], "step");
    assert_eq!(client.top(), ("inner".into(), 4));
    assert_eq!(local(&mut client, "y"), "0");

    client.step("stepOut").unwrap();
    assert_eq!(
        client.top(),
        ("outer".into(), 9),
        "stepOut lands in the caller after the call"
    );
    assert_eq!(local(&mut client, "total"), "0");

    client.step("next").unwrap(); // the print runs: its output arrives
    assert_eq!(client.top(), ("outer".into(), 7));
    assert_eq!(client.stdout(), "step 0 0\n");

    client.step("next").unwrap();
    assert_eq!(client.top(), ("outer".into(), 8));
    client.step("stepIn").unwrap();
    assert_eq!(
        client.stack()[..2],
        [("inner".into(), 2), ("outer".into(), 8)]
    );
    assert_eq!(local(&mut client, "x"), "1");
    client.step("stepIn").unwrap();
    assert_eq!(client.top(), ("inner".into(), 3));
    client.finish();
}

#[test]
fn stepping_back_then_forward_replays_exactly_the_same_states() {
    let mut client = Client::stdio();
    client.start(&program("nested.py"), &[8], no_entry());
    // Forward through two loop iterations at outer's level, and into one call.
    let commands = [
        "next", "next", "next", "next", "next", "stepIn", "stepIn", "next",
    ];
    let mut seen = vec![snapshot(&mut client)];
    for command in commands {
        client.step(command).unwrap();
        seen.push(snapshot(&mut client));
    }
    assert_eq!(seen[3].0[0], ("outer".into(), 8));
    assert_eq!(seen[7].0[0], ("inner".into(), 2), "stepped into the call");
    assert_eq!(seen[7].0.len(), 3);

    // Back over the same path: statement-level stepBack retraces every stop.
    for expected in seen.iter().rev().skip(1) {
        let stopped = client.step("stepBack").unwrap();
        assert_eq!(stopped["body"]["reason"], "step");
        assert_eq!(&snapshot(&mut client), expected);
    }
    // And forward again with the same requests: the same states.
    for (command, expected) in commands.iter().zip(seen.iter().skip(1)) {
        client.step(command).unwrap();
        assert_eq!(&snapshot(&mut client), expected);
    }
    // Output of the loop's prints was given once, in order, though stepped over twice.
    assert_eq!(client.stdout(), "step 0 0\nstep 1 2\n");
    client.finish();
}

#[test]
fn reverse_continue_runs_back_to_earlier_breakpoint_hits_then_to_the_entry() {
    let mut client = Client::stdio();
    client.start(&program("nested.py"), &[3], no_entry());
    let mut xs = vec![local(&mut client, "x")];
    for _ in 0..2 {
        assert_eq!(
            client.step("continue").unwrap()["body"]["reason"],
            "breakpoint"
        );
        xs.push(local(&mut client, "x"));
    }
    assert_eq!(xs, ["0", "1", "2"]);
    let hit = client.step("reverseContinue").unwrap();
    assert_eq!(hit["body"]["reason"], "breakpoint");
    assert_eq!(local(&mut client, "x"), "1");
    client.step("reverseContinue").unwrap();
    assert_eq!(local(&mut client, "x"), "0");
    assert_eq!(client.stack().len(), 3);
    let entry = client.step("reverseContinue").unwrap();
    assert_eq!(entry["body"]["reason"], "entry");
    assert_eq!(client.stack(), vec![("<module>".to_string(), 1)]);
    // Forward again from the entry: the same hits.
    client.step("continue").unwrap();
    assert_eq!(local(&mut client, "x"), "0");

    // With the breakpoints cleared, continue runs to the end.
    client.ok(
        "setBreakpoints",
        json!({ "source": { "path": program("nested.py") }, "breakpoints": [] }),
    );
    client.step("continue").unwrap_none_or_terminated();
    client.finish();
}

trait EndsRun {
    fn unwrap_none_or_terminated(self);
}

impl EndsRun for Option<Value> {
    fn unwrap_none_or_terminated(self) {
        assert!(
            self.is_none(),
            "expected the program to end, it stopped: {self:?}"
        );
    }
}

#[test]
fn reverse_continue_without_breakpoints_returns_to_the_entry() {
    let mut client = Client::stdio();
    client.start(&program("recursion.py"), &[], json!({}));
    for _ in 0..6 {
        client.step("stepIn").unwrap();
    }
    assert_eq!(client.top().0, "fact");
    let entry = client.step("reverseContinue").unwrap();
    assert_eq!(entry["body"]["reason"], "entry");
    assert_eq!(client.stack(), vec![("<module>".to_string(), 1)]);
    client.finish();
}

#[test]
fn recursion_shows_the_whole_stack_and_the_return_value() {
    let mut client = Client::stdio();
    client.start(&program("recursion.py"), &[2], no_entry());
    let mut ns = Vec::new();
    for depth in 0..4 {
        if depth > 0 {
            client.step("continue").unwrap();
        }
        ns.push(local(&mut client, "n"));
        let stack = client.stack();
        assert_eq!(stack.len(), depth + 2, "{stack:?}");
        assert_eq!(stack.last().unwrap(), &("<module>".to_string(), 7));
    }
    assert_eq!(ns, ["4", "3", "2", "1"]);
    // Out of fact(1): into fact(2), which is now returning 2.
    client.step("stepOut").unwrap();
    assert_eq!(client.top(), ("fact".into(), 4));
    assert_eq!(local(&mut client, "n"), "2");
    let scopes = client.ok("scopes", json!({ "frameId": 1 }));
    let names: Vec<&str> = scopes["scopes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Locals", "Return value"]);
    let value = client.children(scopes["scopes"][1]["variablesReference"].as_i64().unwrap());
    assert_eq!(value[0]["value"], "2");
    assert_eq!(
        client.ok(
            "evaluate",
            json!({ "expression": "(return)", "frameId": 1 })
        )["result"],
        "2"
    );
    // Callers' frames have no recorded locals: their scopes say so by being empty.
    assert_eq!(
        client.ok("scopes", json!({ "frameId": 2 }))["scopes"],
        json!([])
    );
    assert!(client.step("continue").is_none());
    assert_eq!(client.stdout(), "24\n");
    client.finish();
}

#[test]
fn exception_breakpoints_stop_where_exceptions_are_raised() {
    let mut client = Client::stdio();
    client.ok("initialize", json!({ "adapterID": "neural" }));
    client.event("initialized");
    let launch = client.send(
        "launch",
        json!({ "program": program("exceptions.py"), "engine": "trace", "stopOnEntry": false }),
    );
    let set = client.ok("setExceptionBreakpoints", json!({ "filters": ["raised"] }));
    assert_eq!(set["breakpoints"], json!([{ "verified": true }]));
    client.ok("configurationDone", json!({}));
    assert_eq!(client.response_to(launch)["success"], json!(true));
    let stopped = client.event("stopped");
    assert_eq!(stopped["body"]["reason"], "exception");
    assert_eq!(client.top(), ("parse".into(), 2));
    let info = client.ok("exceptionInfo", json!({ "threadId": 1 }));
    assert_eq!(info["exceptionId"], "ValueError");
    assert!(info["description"]
        .as_str()
        .unwrap()
        .contains("invalid literal"));
    let scopes = client.ok("scopes", json!({ "frameId": 1 }));
    assert_eq!(scopes["scopes"][1]["name"], "Exception");

    // The caught ValueError is not stopped at again as it propagates; the KeyError is.
    assert_eq!(
        client.step("continue").unwrap()["body"]["reason"],
        "exception"
    );
    assert_eq!(client.top(), ("<module>".into(), 16));
    assert_eq!(
        client.ok("exceptionInfo", json!({ "threadId": 1 }))["exceptionId"],
        "KeyError"
    );
    assert!(client.step("continue").is_none());
    let exited = client
        .received
        .iter()
        .find(|m| m["event"] == "exited")
        .expect("exited before terminated");
    assert_eq!(exited["body"]["exitCode"], 1);
    let stderr: String = client
        .received
        .iter()
        .filter(|m| m["event"] == "output" && m["body"]["category"] == "stderr")
        .map(|m| m["body"]["output"].as_str().unwrap())
        .collect();
    assert!(stderr.contains("KeyError"), "{stderr}");
    assert_eq!(client.stdout(), "parsed 12 -1\n");
    client.finish();
}

#[test]
fn uncaught_filter_stops_only_at_the_exception_that_ends_the_run() {
    let mut client = Client::stdio();
    client.ok("initialize", json!({ "adapterID": "neural" }));
    client.event("initialized");
    client.ok(
        "setExceptionBreakpoints",
        json!({ "filters": ["uncaught"] }),
    );
    assert!(client
        .fails(
            "setExceptionBreakpoints",
            json!({ "filters": ["sometimes"] })
        )
        .contains("unknown exception filter"));
    client.ok("configurationDone", json!({}));
    client.ok(
        "launch",
        json!({ "program": program("exceptions.py"), "engine": "trace" }),
    );
    assert_eq!(client.event("stopped")["body"]["reason"], "entry");
    assert!(client
        .fails("exceptionInfo", json!({ "threadId": 1 }))
        .contains("no exception"));
    let stopped = client.step("continue").unwrap();
    assert_eq!(stopped["body"]["reason"], "exception");
    assert_eq!(client.top(), ("<module>".into(), 16));
    assert_eq!(
        client.ok("exceptionInfo", json!({ "threadId": 1 }))["breakMode"],
        "unhandled"
    );
    // Time travel works from an exception stop too.
    client.step("stepBack").unwrap();
    assert_eq!(client.top(), ("<module>".into(), 16));
    assert_eq!(local(&mut client, "table"), "{'k': 1}");
    client.finish();
}

#[test]
fn variables_expand_page_and_evaluate() {
    let mut client = Client::stdio();
    client.start(&program("data.py"), &[8], no_entry());
    let scopes = client.ok("scopes", json!({ "frameId": 1 }));
    let names: Vec<&str> = scopes["scopes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Locals", "Globals"]);
    let locals = client.children(scopes["scopes"][0]["variablesReference"].as_i64().unwrap());
    let by_name = |name: &str| locals.iter().find(|v| v["name"] == name).unwrap().clone();
    let points = by_name("points");
    assert_eq!(points["value"], "[Point(x=1, y=2), Point(x=3, y=4)]");
    assert_eq!(points["type"], "list");
    let items = client.children(points["variablesReference"].as_i64().unwrap());
    assert_eq!(items.len(), 2);
    assert_eq!(items[1]["evaluateName"], "points[1]");
    assert_eq!(items[1]["type"], "Point");
    let fields = client.children(items[1]["variablesReference"].as_i64().unwrap());
    let fields: Vec<(&str, &str)> = fields
        .iter()
        .map(|f| (f["name"].as_str().unwrap(), f["value"].as_str().unwrap()))
        .collect();
    assert_eq!(fields, [("x", "3"), ("y", "4")]);

    let index = by_name("index");
    assert_eq!(index["type"], "dict");
    let entries = client.children(index["variablesReference"].as_i64().unwrap());
    assert_eq!(entries[0]["name"], "'a'");
    assert_eq!(entries[1]["value"], "(3,)");
    let tags = by_name("tags");
    assert_eq!(tags["type"], "set");
    assert_eq!(
        client.children(tags["variablesReference"].as_i64().unwrap())[0]["value"],
        "'red'"
    );

    // Paging through a global list of 30.
    let globals = client.children(scopes["scopes"][1]["variablesReference"].as_i64().unwrap());
    let numbers = globals[0]["variablesReference"].as_i64().unwrap();
    let page = client.ok(
        "variables",
        json!({ "variablesReference": numbers, "start": 10, "count": 5 }),
    );
    let page: Vec<&str> = page["variables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["value"].as_str().unwrap())
        .collect();
    assert_eq!(page, ["10", "11", "12", "13", "14"]);

    for (expression, result) in [
        ("points[1].y", "4"),
        ("index['a'][-1]", "2"),
        ("index[\"b\"]", "(3,)"),
        ("numbers[29]", "29"),
    ] {
        let body = client.ok(
            "evaluate",
            json!({ "expression": expression, "frameId": 1, "context": "hover" }),
        );
        assert_eq!(body["result"], result, "{expression}");
    }
    let watched = client.ok(
        "evaluate",
        json!({ "expression": "points[0]", "context": "watch" }),
    );
    assert!(watched["variablesReference"].as_i64().unwrap() > 0);
    assert!(client
        .fails(
            "evaluate",
            json!({ "expression": "len(points)", "frameId": 1 })
        )
        .contains("not available"));
    assert!(client
        .fails("evaluate", json!({ "expression": "nope", "frameId": 1 }))
        .contains("not defined"));
    assert!(client
        .fails("variables", json!({ "variablesReference": 9999 }))
        .contains("unknown variables reference"));

    // A move makes old references stale.
    client.step("next").unwrap();
    assert_eq!(local(&mut client, "first"), "Point(x=1, y=2)");
    client.finish();
}

#[test]
fn output_events_carry_stdout_in_order_and_the_run_ends_with_exited_then_terminated() {
    let mut client = Client::stdio();
    client.start(&program("nested.py"), &[], json!({}));
    assert!(client.step("continue").is_none());
    assert_eq!(client.stdout(), "step 0 0\nstep 1 2\nstep 2 6\nresult 6\n");
    let tail: Vec<&str> = client
        .received
        .iter()
        .filter_map(|m| m["event"].as_str())
        .filter(|e| *e == "exited" || *e == "terminated")
        .collect();
    assert_eq!(tail, ["exited", "terminated"]);
    let exited = client
        .received
        .iter()
        .find(|m| m["event"] == "exited")
        .unwrap();
    assert_eq!(exited["body"]["exitCode"], 0);
    assert!(client
        .fails("next", json!({ "threadId": 1 }))
        .contains("ended"));
    assert!(client
        .fails("stackTrace", json!({ "threadId": 1 }))
        .contains("ended"));
    client.finish();
}

#[test]
fn a_call_expression_debugs_one_call() {
    let mut client = Client::stdio();
    client.start(&program("recursion.py"), &[], json!({ "call": "fact(3)" }));
    assert_eq!(client.top().0, "fact");
    assert_eq!(local(&mut client, "n"), "3");
    assert!(client.step("continue").is_none());
    assert_eq!(
        client.stdout(),
        "",
        "the module's own print does not run in call mode"
    );
    client.finish();
}

#[test]
fn set_variable_is_refused_clearly_and_the_session_goes_on() {
    let mut client = Client::stdio();
    client.start(&program("nested.py"), &[3], no_entry());
    let locals = client.locals_reference();
    let refusal = client.fails(
        "setVariable",
        json!({ "variablesReference": locals, "name": "x", "value": "5" }),
    );
    assert!(refusal.contains("cannot change its past"), "{refusal}");
    let unknown = client.fails(
        "setVariable",
        json!({ "variablesReference": 999, "name": "x", "value": "5" }),
    );
    assert!(
        unknown.contains("unknown variables reference 999"),
        "{unknown}"
    );
    assert_eq!(local(&mut client, "x"), "0");
    client.step("next").unwrap();
    assert_eq!(client.top(), ("inner".into(), 4));
    client.ok("pause", json!({ "threadId": 1 }));
    client.ok("cancel", json!({ "requestId": 12345 }));
    client.ok("terminate", json!({}));
    client.event("terminated");
    client.finish();
}

#[test]
fn breakpoints_on_blank_lines_move_and_past_the_end_are_unverified() {
    let mut client = Client::stdio();
    client.ok("initialize", json!({ "adapterID": "neural" }));
    let body = client.ok(
        "setBreakpoints",
        json!({ "source": { "path": program("nested.py") }, "breakpoints": [{ "line": 5 }, { "line": 11 }, { "line": 99 }] }),
    );
    let placed: Vec<(bool, u64)> = body["breakpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["verified"].as_bool().unwrap(),
                b["line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(placed, [(true, 6), (true, 13), (false, 99)]);
    let other = client.ok(
        "setBreakpoints",
        json!({ "source": { "path": "/no/such.py" }, "breakpoints": [{ "line": 1 }] }),
    );
    assert_eq!(other["breakpoints"][0]["verified"], false);
    client.finish();
}

#[test]
fn unicode_names_take_breakpoints_and_show_their_values() {
    // setBreakpoints panicked in lines.rs on `π = 3` and the adapter died.
    let mut client = Client::stdio();
    let stopped = client.start(&program("unicode.py"), &[3], no_entry());
    assert_eq!(stopped["body"]["reason"], "breakpoint");
    assert_eq!(client.top(), ("<module>".into(), 3));
    client.step("next").unwrap();
    let globals = client.ok("scopes", json!({ "frameId": 1 }))["scopes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["variablesReference"].as_i64().unwrap())
        .flat_map(|r| client.children(r))
        .map(|v| (v["name"].clone(), v["value"].clone()))
        .collect::<Vec<_>>();
    assert!(globals.contains(&(json!("τ"), json!("6"))), "{globals:?}");
    client.finish();
}

#[test]
fn malformed_framing_and_messages_are_survived() {
    let mut client = Client::stdio();
    client.send_raw(b"Content-Length: 9\r\n\r\n{not json");
    client.send_raw(&frame(&json!([1, 2, 3])));
    client.send_raw(&frame(
        &json!({ "type": "event", "event": "hello", "seq": 1 }),
    ));
    // A request-shaped message of the wrong type with seq and command still gets an answer.
    client.send_raw(&frame(
        &json!({ "type": "reqest", "seq": 77, "command": "threads" }),
    ));
    let rejected = client.response_to(77);
    assert_eq!(rejected["success"], false);
    // The adapter is still there.
    let caps = client.ok("initialize", json!({ "adapterID": "neural" }));
    assert_eq!(caps["supportsStepBack"], true);
    assert!(client.fails("next", json!({})).contains("threadId"));
    // A body cut short ends the input; the adapter exits cleanly.
    client.send_raw(b"Content-Length: 100\r\n\r\n{\"seq\": 3");
    client.close_input();
    while client.next_message().is_some() {}
    assert!(
        client.wait().success(),
        "the adapter exits cleanly after a truncated message"
    );
}

/// A TCP server on a free port of 127.0.0.1, and its address.
fn tcp_server() -> (std::process::Child, String) {
    let mut server = std::process::Command::new(protocol_tests::adapter_binary())
        .args(["--port", "0"])
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let stderr = server.stderr.take().unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(stderr));
    let address = loop {
        let line = lines
            .next()
            .expect("the server says where it listens")
            .unwrap();
        if let Some(at) = line.strip_prefix("neural-dap listening on ") {
            break at.trim().to_string();
        }
    };
    std::thread::spawn(move || for _ in lines {}); // keep draining its log
    (server, address)
}

#[test]
fn a_header_without_a_usable_length_closes_the_connection_with_a_reason() {
    // Its body used to be read as header lines: every later request was lost while
    // the adapter stayed alive and the editor hung.
    let mut client = Client::stdio();
    client.ok("initialize", json!({ "adapterID": "neural" }));
    let body = json!({ "seq": 2, "type": "request", "command": "threads" }).to_string();
    // One write: the adapter may close its input as soon as it reads the bad header,
    // and a second write would then race it (a broken pipe in the test, not the adapter).
    let mut bytes = format!("Content-Length: -5\r\n\r\n{body}").into_bytes();
    bytes.extend(frame(
        &json!({ "seq": 3, "type": "request", "command": "threads" }),
    ));
    client.send_raw(&bytes);
    let said = client.event("output");
    let said = said["body"]["output"].as_str().unwrap();
    assert!(
        said.contains("closing the connection: bad header: Content-Length \"-5\""),
        "{said}"
    );
    while let Some(message) = client.next_message() {
        assert_eq!(
            message["type"], "event",
            "nothing after the bad header is answered"
        );
    }
    assert!(client.wait().success());
}

/// Connect, send `bytes`, end the input; everything the adapter sends back.
fn raw_exchange(address: &str, bytes: &[u8]) -> Vec<u8> {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    stream.write_all(bytes).unwrap();
    stream.shutdown(std::net::Shutdown::Write).unwrap();
    let mut answer = Vec::new();
    // A reset (the adapter closed with our bytes unread) is a close too.
    let _ = stream.read_to_end(&mut answer);
    answer
}

#[test]
fn over_tcp_http_is_not_answered_and_bad_framing_closes_only_its_connection() {
    let (mut server, address) = tcp_server();
    let mut live = Client::tcp(&address);
    live.start(&program("nested.py"), &[3], no_entry());
    // What any web page can send to 127.0.0.1: a POST whose body is a launch that
    // would run Python.
    let launch = json!({ "seq": 1, "type": "request", "command": "launch",
        "arguments": { "program": program("nested.py"), "engine": "trace", "call": "outer(1)" } })
    .to_string();
    let post = format!(
        "POST / HTTP/1.1\r\nHost: {address}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n{launch}",
        launch.len()
    );
    assert_eq!(raw_exchange(&address, post.as_bytes()), b"");
    let header = b"Content-Length: 2\r\nOrigin: http://example.com\r\n\r\n{}";
    assert_eq!(raw_exchange(&address, header), b"");
    let answer = raw_exchange(&address, b"Content-Length: -1\r\n\r\n");
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.contains("bad header"), "{answer}");
    // The live session goes on, and the server takes new ones.
    live.step("continue").unwrap();
    assert_eq!(local(&mut live, "x"), "1");
    let mut fresh = Client::tcp(&address);
    let caps = fresh.ok("initialize", json!({ "adapterID": "neural" }));
    assert_eq!(caps["supportsStepBack"], true);
    live.ok("disconnect", json!({}));
    fresh.ok("disconnect", json!({}));
    let _ = server.kill();
    let _ = server.wait();
}

#[test]
fn two_tcp_sessions_run_at_once_and_independently() {
    let (mut server, address) = tcp_server();
    let mut a = Client::tcp(&address);
    let mut b = Client::tcp(&address);
    a.start(&program("nested.py"), &[3], no_entry());
    b.start(&program("recursion.py"), &[2], no_entry());
    for round in 0..2 {
        a.step("continue").unwrap();
        b.step("continue").unwrap();
        assert_eq!(local(&mut a, "x"), (round + 1).to_string());
        assert_eq!(local(&mut b, "n"), (3 - round).to_string());
    }
    a.step("reverseContinue").unwrap();
    assert_eq!(local(&mut a, "x"), "1");
    assert_eq!(local(&mut b, "n"), "2", "b is untouched by a's moves");
    a.ok("disconnect", json!({}));
    b.step("next").unwrap();
    b.ok("disconnect", json!({}));
    let _ = server.kill();
    let _ = server.wait();
}

#[test]
fn a_launch_can_be_cancelled_while_it_records() {
    let mut client = Client::stdio();
    client.ok(
        "initialize",
        json!({ "adapterID": "neural", "supportsProgressReporting": true }),
    );
    // Launch and cancel in one write: the cancel is read long before the 3 s program
    // could finish recording.
    let launch = json!({ "seq": 100, "type": "request", "command": "launch",
                         "arguments": { "program": program("slow.py"), "engine": "trace" } });
    let cancel = json!({ "seq": 101, "type": "request", "command": "cancel", "arguments": { "requestId": 100 } });
    let mut bytes = frame(&launch);
    bytes.extend(frame(&cancel));
    client.send_raw(&bytes);
    let launched = client.response_to(100);
    assert_eq!(launched["success"], false);
    assert_eq!(launched["message"], "cancelled");
    assert_eq!(client.response_to(101)["success"], true);
    let progress: Vec<&str> = client
        .received
        .iter()
        .filter_map(|m| m["event"].as_str())
        .filter(|e| e.starts_with("progress"))
        .collect();
    assert_eq!(progress, ["progressStart", "progressEnd"]);
    client.finish();
}

#[test]
fn output_is_given_once_however_the_user_travels() {
    let mut client = Client::stdio();
    client.start(&program("nested.py"), &[3], no_entry());
    client.step("continue").unwrap();
    client.step("continue").unwrap();
    assert_eq!(client.stdout(), "step 0 0\nstep 1 2\n");
    client.step("reverseContinue").unwrap();
    client.step("reverseContinue").unwrap();
    assert_eq!(local(&mut client, "x"), "0");
    // Forward over unseen states between hits, then on to the end.
    client.step("stepOut").unwrap();
    client.step("next").unwrap();
    assert_eq!(client.stdout(), "step 0 0\nstep 1 2\n", "no output twice");
    client.ok(
        "setBreakpoints",
        json!({ "source": { "path": program("nested.py") }, "breakpoints": [] }),
    );
    assert!(client.step("continue").is_none());
    assert_eq!(client.stdout(), "step 0 0\nstep 1 2\nstep 2 6\nresult 6\n");
    client.finish();
}

#[test]
fn a_program_that_never_ends_is_cut_and_said_so() {
    let mut client = Client::stdio();
    client.start(&program("forever.py"), &[3], no_entry());
    assert_eq!(local(&mut client, "n"), "0");
    client.ok(
        "setBreakpoints",
        json!({ "source": { "path": program("forever.py") }, "breakpoints": [] }),
    );
    assert!(client.step("continue").is_none());
    let console: String = client
        .received
        .iter()
        .filter(|m| m["event"] == "output" && m["body"]["category"] == "console")
        .map(|m| m["body"]["output"].as_str().unwrap())
        .collect();
    assert!(console.contains("did not terminate"), "{console}");
    let exited = client
        .received
        .iter()
        .find(|m| m["event"] == "exited")
        .unwrap();
    assert_eq!(exited["body"]["exitCode"], 1);
    client.finish();
}

#[test]
fn next_and_step_out_stop_at_breakpoints_in_the_code_they_skip() {
    let mut client = Client::stdio();
    let entry = client.start(&program("nested.py"), &[], json!({}));
    assert_eq!(entry["body"]["reason"], "entry");
    assert_eq!(client.top(), ("<module>".into(), 1));
    client.step("next").unwrap();
    assert_eq!(
        client.top(),
        ("<module>".into(), 13),
        "the first next moves on from the entry"
    );
    client.ok(
        "setBreakpoints",
        json!({ "source": { "path": program("nested.py") }, "breakpoints": [{ "line": 3 }] }),
    );
    let hit = client.step("next").unwrap();
    assert_eq!(hit["body"]["reason"], "breakpoint");
    assert_eq!(client.top(), ("inner".into(), 3));
    client.step("next").unwrap();
    // On `return y`: next shows the return itself, then stepOut goes to the caller.
    client.step("next").unwrap();
    assert_eq!(client.top(), ("inner".into(), 4));
    let scopes = client.ok("scopes", json!({ "frameId": 1 }));
    assert_eq!(scopes["scopes"][1]["name"], "Return value");
    client.step("stepOut").unwrap();
    assert_eq!(client.top(), ("outer".into(), 9));
    // stepOut of outer passes inner's breakpoint on the next iteration: it stops there.
    let hit = client.step("stepOut").unwrap();
    assert_eq!(hit["body"]["reason"], "breakpoint");
    assert_eq!(client.top(), ("inner".into(), 3));
    assert_eq!(local(&mut client, "x"), "1");
    client.finish();
}

/// The `exitCode` of the run's `exited` event.
fn exit_code(client: &Client) -> Value {
    let exited = client.received.iter().find(|m| m["event"] == "exited");
    exited.expect("an exited event")["body"]["exitCode"].clone()
}

/// Whether process `pid` is still running (a zombie waiting to be reaped is not).
fn running(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
        Err(_) => false,
    }
}

#[test]
fn children_of_the_program_neither_hold_up_the_launch_nor_outlive_it() {
    // The sleeper used to hold the tracer's stdout pipe, so launch waited 300 s; the
    // shell's echo landed among the events and failed the launch ("bad event line");
    // 1.5 MB on stderr filled the pipe and killed the program with BrokenPipeError.
    let mut client = Client::stdio();
    client.start(&program("children.py"), &[9], no_entry());
    let pid = local(&mut client, "pid");
    // The tracer has killed its process group when launch answers; on a loaded
    // machine the kernel may take a moment to tear the child down, so wait for that
    // (a child left running stays and fails after the bound).
    let bound = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while running(&pid) && std::time::Instant::now() < bound {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(!running(&pid), "the program's child {pid} was left running");
    assert!(client.step("continue").is_none());
    assert_eq!(client.stdout(), "done\n");
    let stderr: String = client
        .received
        .iter()
        .filter(|m| m["event"] == "output" && m["body"]["category"] == "stderr")
        .map(|m| m["body"]["output"].as_str().unwrap())
        .collect();
    assert!(stderr.contains("from a shell"), "{:.200}", stderr);
    assert!(stderr.contains("eeee"));
    assert_eq!(
        exit_code(&client),
        5,
        "sys.exit(5) ends the run with status 5"
    );
    client.finish();
}

#[test]
fn exit_statuses_are_those_python_gives() {
    for (call, status, said) in [
        ("quit_with(7)", 7, None),
        ("quit_with('bye')", 1, Some("bye")),
        ("leave_at_once(3)", 3, None),
        ("leave_at_once(0)", 0, None),
    ] {
        let mut client = Client::stdio();
        client.start(&program("exits.py"), &[], json!({ "call": call }));
        assert!(client.step("continue").is_none());
        assert!(
            client.stdout().ends_with("ing\n"),
            "{call}: {}",
            client.stdout()
        );
        assert_eq!(exit_code(&client), status, "{call}");
        let stderr = client
            .received
            .iter()
            .filter(|m| m["event"] == "output" && m["body"]["category"] == "stderr")
            .map(|m| m["body"]["output"].as_str().unwrap().to_string())
            .collect::<String>();
        match said {
            Some(text) => assert_eq!(stderr.trim(), text, "{call}"),
            None => assert!(!stderr.contains("Uncaught"), "{call}: {stderr}"),
        }
        client.finish();
    }
}

#[test]
fn files_that_are_not_regular_files_are_refused_without_blocking() {
    let dir = std::env::temp_dir().join(format!("neural-fifo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("pipe.py");
    let _ = std::fs::remove_file(&fifo);
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let (mut server, address) = tcp_server();
    let mut probe = Client::tcp(&address);
    probe.ok("initialize", json!({ "adapterID": "neural" }));
    for path in [fifo.display().to_string(), "/dev/zero".to_string()] {
        // Opening a FIFO used to wait for a writer, stalling the server's other
        // connections; /dev/zero was read without end.
        let answer = probe.ok(
            "setBreakpoints",
            json!({ "source": { "path": path }, "breakpoints": [{ "line": 1 }] }),
        );
        let breakpoint = &answer["breakpoints"][0];
        assert_eq!(breakpoint["verified"], false, "{path}");
        let why = breakpoint["message"].as_str().unwrap();
        assert!(why.contains("not a regular file"), "{path}: {why}");
    }
    let refused = probe.fails(
        "launch",
        json!({ "program": "/dev/zero", "engine": "trace" }),
    );
    assert!(refused.contains("not a regular file"), "{refused}");
    // The same connection, and another one, still debug.
    let mut other = Client::tcp(&address);
    other.start(&program("nested.py"), &[3], no_entry());
    assert_eq!(local(&mut other, "x"), "0");
    probe.ok("disconnect", json!({}));
    other.ok("disconnect", json!({}));
    let _ = server.kill();
    let _ = server.wait();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_client_that_never_reads_is_disconnected_not_buffered_for() {
    use std::io::{Read, Write};
    let (mut server, address) = tcp_server();
    let mut other = Client::tcp(&address);
    other.start(&program("nested.py"), &[3], no_entry());
    // 300,000 requests (about 30 MB of answers, more than the sockets hold) that the
    // client never reads: the adapter used to queue every answer in memory.
    let mut stream = std::net::TcpStream::connect(&address).unwrap();
    let mut batch = Vec::new();
    for seq in 1..=300_000 {
        batch.extend(frame(
            &json!({ "seq": seq, "type": "request", "command": "threads" }),
        ));
        if seq % 10_000 == 0 {
            if stream.write_all(&batch).is_err() {
                break; // the adapter already closed the connection
            }
            batch.clear();
        }
    }
    let _ = stream.shutdown(std::net::Shutdown::Write);
    let mut answers = Vec::new();
    let _ = stream.read_to_end(&mut answers);
    let answered = String::from_utf8_lossy(&answers)
        .matches("Content-Length")
        .count();
    assert!(
        answered < 300_000,
        "the adapter answered all {answered} requests instead of closing"
    );
    // The other session goes on.
    other.step("continue").unwrap();
    assert_eq!(local(&mut other, "x"), "1");
    other.ok("disconnect", json!({}));
    let _ = server.kill();
    let _ = server.wait();
}

#[test]
fn a_long_call_expression_reaches_python() {
    // 200 KB of call used to exceed one argument's limit, and launch said to install
    // Python. It runs, and the error is the program's own.
    let items = "1, ".repeat(70_000);
    let mut client = Client::stdio();
    client.start(
        &program("nested.py"),
        &[],
        json!({ "call": format!("outer([{items}])") }),
    );
    assert!(client.step("continue").is_none());
    let stderr: String = client
        .received
        .iter()
        .filter(|m| m["event"] == "output" && m["body"]["category"] == "stderr")
        .map(|m| m["body"]["output"].as_str().unwrap())
        .collect();
    assert!(stderr.contains("TypeError"), "{stderr:.300}");
    client.finish();
}

#[test]
fn the_traced_program_runs_under_a_memory_limit() {
    // An 8 GiB allocation is refused by the address-space limit, whatever the machine
    // would lend: the program sees MemoryError, and the adapter goes on.
    let mut client = Client::stdio();
    client.start(&program("greedy.py"), &[], json!({}));
    assert!(client.step("continue").is_none());
    assert_eq!(client.stdout(), "MemoryError\n");
    assert_eq!(exit_code(&client), 0);
    client.finish();
}

#[test]
fn inverse_call_gives_the_recorded_inputs_and_refuses_the_module_frame() {
    let mut client = Client::stdio();
    client.start(&program("nested.py"), &[3, 9], json!({}));
    // At the module's own code there is no call to ask about.
    let refused = client.fails("inverseCall", json!({}));
    assert!(refused.contains("module's own code"), "{refused}");
    // Inside inner(0): the recorded run has one answer. inner is nested in outer, so
    // it cannot be called by its name to check it.
    client.step("continue");
    assert_eq!(client.top(), ("inner".into(), 3));
    let body = client.ok("inverseCall", json!({ "count": 5, "check": true }));
    let candidates = body["candidates"].as_array().unwrap();
    assert_eq!(candidates.len(), 1, "{body}");
    assert_eq!(
        candidates[0]["arguments"],
        json!([{ "name": "x", "value": "0" }])
    );
    assert_eq!(
        candidates[0]["probability"],
        json!(null),
        "exact: no probability"
    );
    assert_eq!(candidates[0]["call"], json!(null));
    assert!(candidates[0]["note"]
        .as_str()
        .unwrap()
        .contains("nested function"));
    // Inside outer: outer(3) is run under Python and reaches this very stop.
    client.step("continue");
    assert_eq!(client.top(), ("outer".into(), 9));
    let body = client.ok("inverseCall", json!({}));
    assert_eq!(body["candidates"][0]["call"], "outer(3)", "{body}");
    assert_eq!(body["candidates"][0]["reproduces"], json!(true), "{body}");
    client.finish();
}
