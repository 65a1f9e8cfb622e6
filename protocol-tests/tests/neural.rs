//! Complete DAP sessions against the real `neural-dap` binary with the neural engine,
//! on the tiny checkpoint committed for tests (`model/weights/test/`, trained on the
//! test programs only). They check protocol behaviour, not prediction quality: a step
//! either stops or is refused with a message and the session goes on; predicted stops
//! show a Prediction scope and the model's confidence in each local's type; moves
//! already made are answered from history. Every message is checked against the DAP
//! schema by the client.
//!
//! Run them with the model's speed: `cargo test --release -p protocol-tests --test neural`.
//! Without the checkpoint they fail and say where they looked (`NEURAL_TEST_MODEL`
//! points them at another checkpoint directory).

use protocol_tests::{program, Client};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// The test checkpoint: `$NEURAL_TEST_MODEL`, else `model/weights/test/` of the workspace.
fn checkpoint() -> String {
    let dir = std::env::var_os("NEURAL_TEST_MODEL")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../model/weights/test"));
    for file in ["config.json", "model.safetensors", "tokenizer.json"] {
        assert!(
            dir.join(file).is_file(),
            "the neural protocol tests need the test checkpoint, and {} is missing. \
             It is trained on the test programs (model/configs/test-fixture.toml says how) \
             and committed to model/weights/test/; or set NEURAL_TEST_MODEL to a checkpoint directory",
            dir.join(file).display()
        );
    }
    std::fs::canonicalize(&dir).unwrap().display().to_string()
}

/// A program of the Node suite (`protocol-tests/node/programs/`).
fn node_program(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("node/programs")
        .join(name);
    std::fs::canonicalize(&path)
        .unwrap_or_else(|e| panic!("missing test program {}: {e}", path.display()))
        .display()
        .to_string()
}

/// A client stopped at the entry of `program` under the neural engine.
fn launch(program: &str, extra: Value) -> Client {
    let mut client = Client::stdio();
    let mut args = json!({ "engine": "neural", "model": checkpoint() });
    for (k, v) in extra.as_object().into_iter().flatten() {
        args[k] = v.clone();
    }
    let stopped = client.start(program, &[], args);
    assert_eq!(stopped["body"]["reason"], "entry", "{stopped}");
    client
}

/// What one step did.
#[derive(Debug)]
enum Stepped {
    Stopped(Value),
    Ended,
    /// The engine could not answer: the error response's message.
    Refused(String),
}

/// Send a step; a refusal must carry a message and leave the session usable.
fn try_step(client: &mut Client, command: &str) -> Stepped {
    let response = client.request(command, json!({ "threadId": 1 }));
    if response["success"] == json!(false) {
        let message = response["message"].as_str().unwrap_or_default().to_string();
        assert!(
            !message.trim().is_empty(),
            "a refused {command} says why: {response}"
        );
        // Still stopped where it was: the next requests are answered.
        assert!(
            !client.stack().is_empty(),
            "the session goes on after {message}"
        );
        client.ok("threads", json!({}));
        return Stepped::Refused(message);
    }
    loop {
        let message = client
            .next_message()
            .expect("the adapter answers a step with stopped or terminated");
        match message["event"].as_str() {
            Some("stopped") => return Stepped::Stopped(message),
            Some("terminated") => return Stepped::Ended,
            _ => {}
        }
    }
}

/// One row of a scope: (name, value, type).
type Row = (String, String, String);

/// Every scope of the innermost frame with its rows, in order.
fn scopes(client: &mut Client) -> Vec<(String, Vec<Row>)> {
    let body = client.ok("scopes", json!({ "frameId": 1 }));
    let scopes = body["scopes"].as_array().unwrap().clone();
    scopes
        .iter()
        .map(|scope| {
            let rows = client
                .children(scope["variablesReference"].as_i64().unwrap())
                .iter()
                .map(|v| {
                    let text = |key: &str| v[key].as_str().unwrap_or_default().to_string();
                    (text("name"), text("value"), text("type"))
                })
                .collect();
            (scope["name"].as_str().unwrap().to_string(), rows)
        })
        .collect()
}

/// What the user sees at a stop: the stack and every scope of the innermost frame.
type Snapshot = (Vec<(String, u64)>, Vec<(String, Vec<Row>)>);

fn snapshot(client: &mut Client) -> Snapshot {
    (client.stack(), scopes(client))
}

fn scope<'a>(scopes: &'a [(String, Vec<Row>)], name: &str) -> Option<&'a Vec<Row>> {
    scopes.iter().find(|(n, _)| n == name).map(|(_, rows)| rows)
}

/// The checks every predicted stop must pass.
fn check_predicted_stop(client: &mut Client, stopped: &Value) {
    let scopes = scopes(client);
    assert_eq!(
        scopes[0].0, "Locals",
        "the first scope stays Locals: {scopes:?}"
    );
    let prediction = scope(&scopes, "Prediction")
        .unwrap_or_else(|| panic!("a predicted stop has a Prediction scope: {scopes:?}"));
    let row = |name: &str| {
        prediction
            .iter()
            .find(|r| r.0 == name)
            .unwrap_or_else(|| panic!("no {name} in the Prediction scope: {prediction:?}"))
            .1
            .clone()
    };
    let p: f64 = row("probability")
        .parse()
        .unwrap_or_else(|e| panic!("the probability is a number: {e}"));
    assert!((0.0..=1.0).contains(&p), "probability {p}");
    assert_eq!(row("engine"), "neural");
    let description = stopped["body"]["description"].as_str().unwrap_or_default();
    if stopped["body"]["reason"] != "exception" {
        assert!(
            description.starts_with("predicted with probability"),
            "{stopped}"
        );
    }
    for (name, _, type_name) in &scopes[0].1 {
        assert!(
            type_name.contains("p="),
            "{name}: the type carries the model's confidence, got {type_name:?}"
        );
        let p: f64 = type_name
            .rsplit("p=")
            .next()
            .unwrap()
            .parse()
            .unwrap_or_else(|e| panic!("{name}: {type_name:?}: {e}"));
        assert!((0.0..=1.0).contains(&p), "{name}: {type_name}");
    }
}

#[test]
fn steps_stop_or_are_refused_clearly_and_predicted_stops_show_the_prediction() {
    let mut predicted = 0;
    let mut refused = Vec::new(); // and steps that came back to the entry
    for path in [
        program("nested.py"),
        program("recursion.py"),
        node_program("calls.py"),
    ] {
        let mut client = launch(&path, json!({}));
        let entry = snapshot(&mut client);
        assert!(
            scope(&entry.1, "Prediction").is_none(),
            "the entry is worked out from the source, not predicted: {entry:?}"
        );
        for command in ["next", "stepIn", "next", "stepIn", "next", "next"] {
            match try_step(&mut client, command) {
                // A prediction equal to the entry state is the entry stop, shown as it was.
                Stepped::Stopped(_) if snapshot(&mut client) == entry => {
                    refused.push(format!("{path} {command}: back at the entry"))
                }
                Stepped::Stopped(stopped) => {
                    predicted += 1;
                    check_predicted_stop(&mut client, &stopped);
                }
                Stepped::Refused(message) => refused.push(format!("{path} {command}: {message}")),
                Stepped::Ended => break,
            }
        }
        client.finish();
    }
    eprintln!("{predicted} predicted stops; refused: {refused:?}");
    assert!(
        predicted > 0,
        "no step was predicted on the programs the test model was trained on: {refused:?}"
    );
}

#[test]
fn a_launch_with_search_steps_in_over_and_out() {
    // Each step also tries other decodes; Step Out walks with Step Over predictions.
    let mut client = launch(&program("nested.py"), json!({ "search": 2 }));
    let mut predicted = 0;
    for command in ["stepIn", "next", "stepIn", "stepOut"] {
        match try_step(&mut client, command) {
            Stepped::Stopped(stopped) => {
                predicted += 1;
                check_predicted_stop(&mut client, &stopped);
            }
            Stepped::Refused(_) => {}
            Stepped::Ended => break,
        }
    }
    client.finish();
    assert!(predicted > 0, "no step was predicted with search on");
}

#[test]
fn step_back_returns_to_exactly_the_earlier_stop_and_prints_nothing_again() {
    // A next between two statements of one frame is remembered both ways: stepBack
    // and next again are answered from history, whatever the model says.
    let mut client = launch(&node_program("calls.py"), json!({}));
    let mut before = snapshot(&mut client);
    let mut seen = Vec::new();
    for _ in 0..10 {
        let from_ends_frame = before
            .1
            .iter()
            .any(|(name, _)| name == "Return value" || name == "Exception");
        let stepped = try_step(&mut client, "next");
        let Stepped::Stopped(_) = stepped else {
            seen.push(format!("{stepped:?}"));
            if matches!(stepped, Stepped::Ended) {
                break;
            }
            continue;
        };
        let after = snapshot(&mut client);
        if after.0.len() != before.0.len() || from_ends_frame {
            seen.push(format!("{:?} -> {:?}", before.0, after.0));
            before = after;
            continue;
        }
        let printed = client.stdout();
        let back = try_step(&mut client, "stepBack");
        assert!(matches!(back, Stepped::Stopped(_)), "stepBack: {back:?}");
        assert_eq!(
            snapshot(&mut client),
            before,
            "stepBack shows the earlier stop"
        );
        let again = try_step(&mut client, "next");
        assert!(matches!(again, Stepped::Stopped(_)), "next: {again:?}");
        assert_eq!(
            snapshot(&mut client),
            after,
            "next again shows the same stop"
        );
        assert_eq!(client.stdout(), printed, "no stdout printed twice");
        client.finish();
        return;
    }
    panic!("no next between two statements of one frame in 10 steps to step back over: {seen:?}");
}

#[test]
fn verify_mode_shows_the_check_in_the_prediction_scope_and_on_the_console() {
    let mut client = launch(&program("nested.py"), json!({ "verify": true }));
    let mut refused = Vec::new();
    for command in ["next", "stepIn", "next", "next"] {
        match try_step(&mut client, command) {
            Stepped::Stopped(stopped) => {
                check_predicted_stop(&mut client, &stopped);
                let body = client.ok("scopes", json!({ "frameId": 1 }));
                let reference = body["scopes"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|s| s["name"] == "Prediction")
                    .unwrap()["variablesReference"]
                    .as_i64()
                    .unwrap();
                let rows = client.children(reference);
                let verify = rows
                    .iter()
                    .find(|r| r["name"] == "verify")
                    .unwrap_or_else(|| panic!("verify mode adds a verify row: {rows:?}"));
                let value = verify["value"].as_str().unwrap();
                if value == "matches real Python" {
                    assert_eq!(verify["variablesReference"], 0);
                } else {
                    let n: usize = value
                        .split(' ')
                        .next()
                        .and_then(|n| n.parse().ok())
                        .unwrap_or_else(|| panic!("verify says how many differences: {value}"));
                    let children = client.children(verify["variablesReference"].as_i64().unwrap());
                    assert_eq!(children.len(), n, "one row per difference: {children:?}");
                    let console = client.received.iter().any(|m| {
                        m["event"] == "output"
                            && m["body"]["output"]
                                .as_str()
                                .unwrap_or("")
                                .starts_with("verify:")
                    });
                    assert!(console, "a difference is also said on the console");
                }
                client.finish();
                return;
            }
            Stepped::Refused(message) => refused.push(message),
            Stepped::Ended => break,
        }
    }
    panic!("no predicted stop to check in verify mode: {refused:?}");
}

#[test]
fn the_neural_engine_stops_at_predicted_exceptions() {
    let mut client = launch(&program("exceptions.py"), json!({}));
    let body = client.ok(
        "setExceptionBreakpoints",
        json!({ "filters": ["raised", "uncaught"] }),
    );
    for breakpoint in body["breakpoints"].as_array().unwrap() {
        assert_eq!(breakpoint["verified"], true, "{body}");
    }
    // The test model learned this program: Continue walks its predictions to an
    // exception Python raises there (parse's ValueError, caught in safe, or the
    // KeyError on line 16 that ends the run), and exceptionInfo reads its value. Where
    // on the way it stops is the tiny model's guess (it has stopped at parse's line 2
    // and at safe's `except` line), so the line is not asserted.
    let stopped = client.step("continue").expect("a stop before the end");
    assert_eq!(stopped["body"]["reason"], "exception", "{stopped}");
    let info = client.ok("exceptionInfo", json!({ "threadId": 1 }));
    let raised = info["exceptionId"].as_str().unwrap().to_string();
    let description = info["description"].as_str().unwrap_or("");
    assert!(
        (raised == "ValueError" && description.contains("invalid literal for int()"))
            || (raised == "KeyError" && description.contains("nope")),
        "{raised} at line {}: {info}",
        client.top().1
    );
    let ignored = client.received.iter().any(|m| {
        m["event"] == "output"
            && m["body"]["output"]
                .as_str()
                .unwrap_or("")
                .contains("exception breakpoints are ignored")
    });
    assert!(
        !ignored,
        "no warning that exception breakpoints are ignored"
    );
    client.finish();
}

#[test]
fn a_program_python_would_not_compile_is_refused_at_launch_with_its_line() {
    // The neural engine runs no Python, so it finds the syntax error itself.
    let dir = std::env::temp_dir().join(format!("neural-syntax-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let broken = dir.join("broken.py");
    std::fs::write(&broken, "def f(n):\n    return [n,\n\nprint(f(2))\n").unwrap();
    let mut client = Client::stdio();
    client.ok(
        "initialize",
        json!({ "adapterID": "neural", "linesStartAt1": true }),
    );
    client.event("initialized");
    let message = client.fails(
        "launch",
        json!({ "program": broken.display().to_string(), "engine": "neural", "model": checkpoint() }),
    );
    assert!(
        message.contains("SyntaxError") && message.contains("'[' was never closed"),
        "{message}"
    );
    assert!(
        message.contains("line 2") && message.contains("fix"),
        "{message}"
    );
    // The same adapter still launches a program that compiles.
    let fixed = dir.join("fixed.py");
    std::fs::write(&fixed, "def f(n):\n    return [n]\n\nprint(f(2))\n").unwrap();
    let launch = client.send(
        "launch",
        json!({ "program": fixed.display().to_string(), "engine": "neural", "model": checkpoint() }),
    );
    client.ok("configurationDone", json!({}));
    assert_eq!(client.response_to(launch)["success"], json!(true));
    assert_eq!(client.event("stopped")["body"]["reason"], "entry");
    client.finish();
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn deeply_nested_input_is_refused_clearly_and_the_adapter_goes_on() {
    // Each of these overflowed the adapter's stack (SIGABRT) before the parsers had a
    // depth limit.
    let dir = std::env::temp_dir().join(format!("neural-deep-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let nested = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    let deep = dir.join("deep.py");
    std::fs::write(&deep, format!("x = {}\n", nested(20_000))).unwrap();
    let mut client = Client::stdio();
    client.ok("initialize", json!({ "adapterID": "neural" }));
    client.event("initialized");
    let launch = |program: &Path, extra: Value| {
        let mut args = json!({ "program": program.display().to_string(), "engine": "neural", "model": checkpoint() });
        for (k, v) in extra.as_object().into_iter().flatten() {
            args[k] = v.clone();
        }
        args
    };
    let message = client.fails("launch", launch(&deep, json!({})));
    assert!(message.contains("nested too deeply"), "{message}");
    let program = PathBuf::from(program("nested.py"));
    let call = format!("outer({})", nested(5_000));
    let message = client.fails("launch", launch(&program, json!({ "call": call })));
    assert!(message.contains("more than 200 deep"), "{message}");
    // The same adapter still launches, and refuses a deep value for setVariable.
    let started = client.send("launch", launch(&program, json!({ "call": "outer(2)" })));
    client.ok("configurationDone", json!({}));
    assert_eq!(client.response_to(started)["success"], json!(true));
    client.event("stopped");
    let locals = client.locals_reference();
    let message = client.fails(
        "setVariable",
        json!({ "variablesReference": locals, "name": "n", "value": nested(5_000) }),
    );
    assert!(message.contains("more than 200 deep"), "{message}");
    assert_eq!(client.top(), ("outer".into(), 1));
    client.finish();
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn names_that_are_not_ascii_are_stepped_through() {
    // Python 3 names are Unicode. A byte-level token may end inside a name's
    // character; the decoding grammar once refused every state after `{"` then.
    let dir = std::env::temp_dir().join(format!("neural-unicode-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("fläche.py");
    std::fs::write(
        &path,
        "π = 3\ngröße = 2\n\n\ndef fläche(r):\n    ergebnis = π * r * r\n    return ergebnis\n\n\nσ = fläche(größe)\nprint(σ)\n",
    )
    .unwrap();
    let mut client = launch(&path.display().to_string(), json!({}));
    let mut stops = 0;
    for _ in 0..6 {
        match try_step(&mut client, "stepIn") {
            Stepped::Stopped(_) => stops += 1,
            Stepped::Ended => break,
            Stepped::Refused(message) => panic!("a stepIn was refused: {message}"),
        }
    }
    assert!(stops > 0, "no stop before the end");
    client.finish();
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_checkpoint_asking_for_absurd_sizes_is_refused_before_anything_is_allocated() {
    // max_position_embeddings 10^12 once asked for 256 TB of rotary tables, and the
    // allocation aborted the adapter with every session on it.
    let dir = std::env::temp_dir().join(format!("neural-absurd-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let real = PathBuf::from(checkpoint());
    let mut config: Value =
        serde_json::from_str(&std::fs::read_to_string(real.join("config.json")).unwrap()).unwrap();
    config["max_position_embeddings"] = json!(1_000_000_000_000u64);
    std::fs::write(dir.join("config.json"), config.to_string()).unwrap();
    for file in ["model.safetensors", "tokenizer.json"] {
        std::fs::copy(real.join(file), dir.join(file)).unwrap();
    }
    let mut client = Client::stdio();
    client.ok("initialize", json!({ "adapterID": "neural" }));
    client.event("initialized");
    let args = |model: &Path| json!({ "program": program("nested.py"), "engine": "neural", "model": model.display().to_string() });
    let message = client.fails("launch", args(&dir));
    assert!(message.contains("max_position_embeddings"), "{message}");
    // The same adapter launches the real checkpoint and steps.
    let started = client.send("launch", args(&real));
    client.ok("configurationDone", json!({}));
    assert_eq!(client.response_to(started)["success"], json!(true));
    client.event("stopped");
    assert!(!matches!(
        try_step(&mut client, "next"),
        Stepped::Refused(_)
    ));
    client.finish();
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn inverse_call_offers_inputs_with_their_probabilities() {
    // "Which inputs give this?": from a stop inside outer's call, the candidates for
    // the call that began the frame, each checked under Python.
    let mut client = launch(&program("nested.py"), json!({ "call": "outer(2)" }));
    // At the call itself the answer is what the stop shows, certain.
    let body = client.ok("inverseCall", json!({}));
    assert_eq!(body["candidates"][0]["call"], "outer(2)", "{body}");
    assert_eq!(body["candidates"][0]["probability"], json!(null), "{body}");
    assert!(matches!(try_step(&mut client, "next"), Stepped::Stopped(_)));
    assert_eq!(client.top().0, "outer", "the test model steps inside outer");
    let body = client.ok("inverseCall", json!({ "count": 3 }));
    let candidates = body["candidates"].as_array().expect("candidates");
    assert!(!candidates.is_empty() && candidates.len() <= 3, "{body}");
    let mut last = f64::INFINITY;
    for candidate in candidates {
        assert_eq!(candidate["function"], "outer", "{candidate}");
        assert_eq!(candidate["arguments"][0]["name"], "n", "{candidate}");
        let p = candidate["probability"].as_f64().expect("a probability");
        assert!(p > 0.0 && p <= last, "likeliest first: {body}");
        last = p;
        let call = candidate["call"]
            .as_str()
            .expect("outer is callable by name");
        assert!(call.starts_with("outer("), "{candidate}");
        // Checked: it reproduces the stop, or a note says what happened.
        assert!(
            candidate["reproduces"] == json!(true) || candidate["note"].is_string(),
            "{candidate}"
        );
    }
    // The same from the Debug Console, as text.
    let shown = client.ok(
        "evaluate",
        json!({ "expression": ":inputs 2", "context": "repl", "frameId": 1 }),
    );
    assert!(
        shown["result"].as_str().unwrap().starts_with("1. outer("),
        "{shown}"
    );
    // Bad counts are refused by name, and the session goes on.
    assert!(client
        .fails("inverseCall", json!({ "count": 0 }))
        .contains("count must be 1 to 10"));
    assert!(client
        .fails(
            "evaluate",
            json!({ "expression": ":inputs many", "context": "repl" })
        )
        .contains("number of candidates"));
    assert!(!matches!(
        try_step(&mut client, "stepIn"),
        Stepped::Refused(_)
    ));
    client.finish();
}

#[test]
fn a_cwm_checkpoint_is_served_in_its_own_dialect_and_its_failures_are_clear() {
    // The tiny random CWM of the model's parity tests: it speaks the dialect (its
    // tokenizer has CWM's trace tokens) but writes no sensible frame.
    let tiny_cwm = Path::new(env!("CARGO_MANIFEST_DIR")).join("../model/tests/fixtures/tiny-cwm");
    let tiny_cwm = std::fs::canonicalize(tiny_cwm)
        .unwrap()
        .display()
        .to_string();
    let dir = std::env::temp_dir().join(format!("neural-cwm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("add.py");
    std::fs::write(&path, "def add(x):\n    return x + 1\n").unwrap();
    let program = path.display().to_string();
    let mut client = Client::stdio();
    let stopped = client.start(
        &program,
        &[],
        json!({ "engine": "neural", "model": tiny_cwm, "call": "add(2)" }),
    );
    assert_eq!(stopped["body"]["reason"], "entry", "{stopped}");
    let events = client.take_events();
    let said = |event: &str| {
        events
            .iter()
            .filter(|e| e["event"] == event)
            .collect::<Vec<_>>()
    };
    let layers: Vec<&Value> = said("progressUpdate");
    assert_eq!(layers.len(), 3, "one update a layer: {events:?}");
    assert_eq!(layers[2]["body"]["percentage"], json!(100));
    let console: String = said("output")
        .iter()
        .map(|e| e["body"]["output"].as_str().unwrap_or_default())
        .collect();
    assert!(
        console.contains("CWM's trace dialect") && console.contains("CPU"),
        "{console}"
    );
    assert_eq!(client.locals(), vec![("x".to_string(), "2".to_string())]);
    match try_step(&mut client, "stepIn") {
        Stepped::Refused(message) => {
            assert!(message.contains("without ending the frame"), "{message}")
        }
        other => panic!("the random model wrote a frame: {other:?}"),
    }
    // A what-if edit is taken, and the session goes on.
    let reference = client.locals_reference();
    client.ok(
        "setVariable",
        json!({ "variablesReference": reference, "name": "x", "value": "5" }),
    );
    assert_eq!(client.locals(), vec![("x".to_string(), "5".to_string())]);
    client.finish();
    std::fs::remove_dir_all(&dir).ok();
}
