//! Helpers shared by the protocol suites: build and locate the real `neural-dap`
//! binary, drive it as a DAP client over stdio or TCP, and check every message it
//! sends against the DAP JSON schema.
//!
//! The schema is `debugProtocol.json` from the PyPI `debugpy` package (not committed):
//! `$DAP_SCHEMA`, else found through `python3 -c 'import debugpy'`. Without it the
//! suites fail and say how to install it.

use serde_json::{json, Value};
use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// A failsafe against a hung adapter, not a timing assumption: every wait is for a
/// message the adapter must send.
const FAILSAFE: Duration = Duration::from_secs(120);

/// Path of the adapter binary, built once per test process with the same cargo,
/// profile and target directory as the tests (`NEURAL_DAP_BIN` overrides).
pub fn adapter_binary() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Ok(bin) = std::env::var("NEURAL_DAP_BIN") {
            return PathBuf::from(bin);
        }
        let exe = std::env::current_exe().expect("the test binary knows its path");
        // target/<profile>/deps/<test binary>
        let profile_dir = exe
            .parent()
            .and_then(Path::parent)
            .expect("tests run from target/<profile>/deps");
        let target_dir = profile_dir.parent().expect("target/<profile> has a parent");
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../adapter/Cargo.toml");
        let mut build = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
        build
            .args(["build", "--quiet", "--bin", "neural-dap", "--manifest-path"])
            .arg(&manifest);
        build.env("CARGO_TARGET_DIR", target_dir);
        if profile_dir.file_name().is_some_and(|n| n == "release") {
            build.arg("--release");
        }
        let status = build.status().expect("cargo runs");
        assert!(status.success(), "building neural-dap failed");
        let bin = profile_dir.join(format!("neural-dap{}", std::env::consts::EXE_SUFFIX));
        assert!(
            bin.exists(),
            "built neural-dap but it is not at {}",
            bin.display()
        );
        bin
    })
    .clone()
}

/// A Python program kept in `protocol-tests/programs/`.
pub fn program(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("programs")
        .join(name);
    std::fs::canonicalize(&path)
        .unwrap_or_else(|e| panic!("missing test program {}: {e}", path.display()))
        .display()
        .to_string()
}

/// The DAP schema and one compiled validator per definition.
pub struct Schema {
    document: Value,
    validators: Mutex<HashMap<String, Arc<jsonschema::Validator>>>,
}

impl Schema {
    /// Load the schema once per process; panics with install instructions if missing.
    pub fn get() -> Arc<Schema> {
        static SCHEMA: OnceLock<Arc<Schema>> = OnceLock::new();
        SCHEMA
            .get_or_init(|| {
                let path = schema_path().unwrap_or_else(|why| {
                    panic!("the DAP schema is missing ({why}). Install it with `pip install debugpy` or set DAP_SCHEMA to debugProtocol.json")
                });
                let text = std::fs::read_to_string(&path)
                    .unwrap_or_else(|e| panic!("cannot read the DAP schema {}: {e}", path.display()));
                let mut document: Value = serde_json::from_str(&text).expect("debugProtocol.json is JSON");
                // Our own requests, defined in the same style, checked the same way.
                let ours: Value = serde_json::from_str(include_str!("../schema/neural-extensions.json"))
                    .expect("neural-extensions.json is JSON");
                for (name, definition) in ours["definitions"].as_object().expect("definitions") {
                    document["definitions"][name] = definition.clone();
                }
                Arc::new(Schema { document, validators: Mutex::new(HashMap::new()) })
            })
            .clone()
    }

    /// The definition a message must satisfy: `StoppedEvent`, `StackTraceResponse`,
    /// `ErrorResponse` for any failed response.
    pub fn definition_for(message: &Value) -> String {
        let capital = |s: &str| {
            let mut chars = s.chars();
            chars
                .next()
                .map(|c| c.to_uppercase().collect::<String>() + chars.as_str())
                .unwrap_or_default()
        };
        match message["type"].as_str() {
            Some("event") => format!("{}Event", capital(message["event"].as_str().unwrap_or("?"))),
            Some("response") if message["success"] == json!(false) => "ErrorResponse".into(),
            Some("response") => format!(
                "{}Response",
                capital(message["command"].as_str().unwrap_or("?"))
            ),
            _ => "ProtocolMessage".into(),
        }
    }

    /// Check one message against its definition; the error lists every violation.
    pub fn check(&self, message: &Value) -> Result<(), String> {
        let name = Self::definition_for(message);
        let validator = {
            let mut validators = self.validators.lock().unwrap();
            if !validators.contains_key(&name) {
                if self.document["definitions"].get(&name).is_none() {
                    return Err(format!(
                        "the DAP schema has no definition {name} for {message}"
                    ));
                }
                let mut schema = self.document.clone();
                let root = schema.as_object_mut().unwrap();
                root.remove("type");
                root.insert("$ref".into(), json!(format!("#/definitions/{name}")));
                let validator = jsonschema::draft4::new(&schema)
                    .map_err(|e| format!("schema for {name}: {e}"))?;
                validators.insert(name.clone(), Arc::new(validator));
            }
            validators[&name].clone()
        };
        let errors: Vec<String> = validator
            .iter_errors(message)
            .map(|e| format!("{} at {}", e, e.instance_path))
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "{name} violated by {message}:\n  {}",
                errors.join("\n  ")
            ))
        }
    }
}

fn schema_path() -> Result<PathBuf, String> {
    if let Ok(path) = std::env::var("DAP_SCHEMA") {
        return Ok(PathBuf::from(path));
    }
    let python = std::env::var("NEURAL_PYTHON").unwrap_or_else(|_| "python3".into());
    let out = Command::new(&python)
        .args([
            "-c",
            "import debugpy, os; print(os.path.dirname(debugpy.__file__))",
        ])
        .output()
        .map_err(|e| format!("cannot run {python}: {e}"))?;
    if !out.status.success() {
        return Err("python3 cannot import debugpy".into());
    }
    let dir = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let path =
        Path::new(&dir).join("_vendored/pydevd/_pydevd_bundle/_debug_adapter/debugProtocol.json");
    if path.exists() {
        Ok(path)
    } else {
        Err(format!("{} does not exist", path.display()))
    }
}

/// Frame a message the way DAP does.
pub fn frame(message: &Value) -> Vec<u8> {
    let body = message.to_string();
    let mut bytes = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    bytes.extend_from_slice(body.as_bytes());
    bytes
}

/// Read one framed message (`None` at the end of the stream).
fn read_message(reader: &mut impl BufRead) -> Result<Option<Value>, String> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).map_err(|e| e.to_string())? == 0 {
            return Ok(None);
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(value) = line.strip_prefix("Content-Length:") {
            length = Some(
                value
                    .trim()
                    .parse::<usize>()
                    .map_err(|e| format!("bad Content-Length from the adapter: {e}"))?,
            );
        }
    }
    let length = length.ok_or("the adapter sent a header without Content-Length")?;
    let mut body = vec![0; length];
    reader.read_exact(&mut body).map_err(|e| e.to_string())?;
    serde_json::from_slice(&body)
        .map(Some)
        .map_err(|e| format!("the adapter sent invalid JSON: {e}"))
}

/// A DAP client driving one adapter session. Every message received is checked
/// against the schema and kept in [`Client::received`].
pub struct Client {
    writer: Box<dyn Write + Send>,
    incoming: Receiver<Result<Value, String>>,
    seq: i64,
    /// Events received and not yet taken, in order.
    events: VecDeque<Value>,
    /// Responses that arrived while another was awaited, by request seq.
    responses: HashMap<i64, Value>,
    /// Every message received, in order.
    pub received: Vec<Value>,
    schema: Arc<Schema>,
    child: Option<Child>,
    expected_seq: i64,
}

impl Client {
    /// Spawn the adapter over stdio.
    pub fn stdio() -> Client {
        let schema = Schema::get();
        let mut child = Command::new(adapter_binary())
            .args(["--log-level", "debug"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("neural-dap starts");
        let stdout = child.stdout.take().unwrap();
        let stdin = child.stdin.take().unwrap();
        let mut client = Client::over(Box::new(stdin), stdout, schema);
        client.child = Some(child);
        client
    }

    /// Connect to an adapter serving TCP.
    pub fn tcp(address: &str) -> Client {
        let stream =
            std::net::TcpStream::connect(address).expect("the adapter accepts connections");
        let reader = stream.try_clone().unwrap();
        Client::over(Box::new(stream), reader, Schema::get())
    }

    fn over(
        writer: Box<dyn Write + Send>,
        reader: impl Read + Send + 'static,
        schema: Arc<Schema>,
    ) -> Client {
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(reader);
            loop {
                let message = read_message(&mut reader);
                let done = !matches!(message, Ok(Some(_)));
                let sent = match message {
                    Ok(Some(m)) => tx.send(Ok(m)),
                    Ok(None) => break,
                    Err(e) => tx.send(Err(e)),
                };
                if done || sent.is_err() {
                    break;
                }
            }
        });
        Client {
            writer,
            incoming: rx,
            seq: 0,
            events: VecDeque::new(),
            responses: HashMap::new(),
            received: Vec::new(),
            schema,
            child: None,
            expected_seq: 1,
        }
    }

    /// Send raw bytes (for malformed-framing tests).
    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.writer
            .write_all(bytes)
            .expect("the adapter reads its input");
        self.writer.flush().unwrap();
    }

    /// Close the adapter's input (stdio: its stdin).
    pub fn close_input(&mut self) {
        self.writer = Box::new(std::io::sink());
    }

    /// Send a request; its seq.
    pub fn send(&mut self, command: &str, arguments: Value) -> i64 {
        self.seq += 1;
        let message = json!({ "seq": self.seq, "type": "request", "command": command, "arguments": arguments });
        self.send_raw(&frame(&message));
        self.seq
    }

    /// The next message, checked against the schema; `None` once the adapter closed.
    pub fn next_message(&mut self) -> Option<Value> {
        let message = match self.incoming.recv_timeout(FAILSAFE) {
            Ok(Ok(m)) => m,
            Ok(Err(e)) => panic!("bad framing from the adapter: {e}"),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return None,
            Err(e) => panic!("no message from the adapter within {FAILSAFE:?}: {e}"),
        };
        if let Err(e) = self.schema.check(&message) {
            panic!("the adapter sent a message that breaks the DAP schema: {e}");
        }
        assert_eq!(
            message["seq"],
            json!(self.expected_seq),
            "adapter seq numbers go up by one: {message}"
        );
        self.expected_seq += 1;
        self.received.push(message.clone());
        Some(message)
    }

    /// Send a request and wait for its response (events on the way are queued).
    pub fn request(&mut self, command: &str, arguments: Value) -> Value {
        let seq = self.send(command, arguments);
        self.response_to(seq)
    }

    pub fn response_to(&mut self, seq: i64) -> Value {
        if let Some(response) = self.responses.remove(&seq) {
            return response;
        }
        loop {
            let message = self
                .next_message()
                .unwrap_or_else(|| panic!("the adapter closed before answering request {seq}"));
            if message["type"] == "response" && message["request_seq"] == json!(seq) {
                return message;
            }
            match (message["type"].as_str(), message["request_seq"].as_i64()) {
                (Some("event"), _) => self.events.push_back(message),
                (Some("response"), Some(other))
                    if other < seq && !self.responses.contains_key(&other) =>
                {
                    self.responses.insert(other, message);
                }
                _ => panic!("unexpected message while waiting for response {seq}: {message}"),
            }
        }
    }

    /// A request that must succeed: its body (`null` when none).
    pub fn ok(&mut self, command: &str, arguments: Value) -> Value {
        let response = self.request(command, arguments);
        assert_eq!(
            response["success"],
            json!(true),
            "{command} failed: {response}"
        );
        response.get("body").cloned().unwrap_or(Value::Null)
    }

    /// A request that must fail: its message.
    pub fn fails(&mut self, command: &str, arguments: Value) -> String {
        let response = self.request(command, arguments);
        assert_eq!(
            response["success"],
            json!(false),
            "{command} should have failed: {response}"
        );
        let message = response["message"]
            .as_str()
            .expect("a failed response has a message")
            .to_string();
        assert!(!message.is_empty());
        message
    }

    /// Wait for an event by name; events before it stay queued.
    pub fn event(&mut self, name: &str) -> Value {
        if let Some(at) = self.events.iter().position(|e| e["event"] == name) {
            return self.events.remove(at).unwrap();
        }
        loop {
            let message = self
                .next_message()
                .unwrap_or_else(|| panic!("the adapter closed before sending {name}"));
            if message["type"] == "event" && message["event"] == name {
                return message;
            }
            if message["type"] == "event" {
                self.events.push_back(message);
            } else {
                panic!("unexpected response while waiting for the {name} event: {message}");
            }
        }
    }

    /// Take the queued events.
    pub fn take_events(&mut self) -> Vec<Value> {
        self.events.drain(..).collect()
    }

    /// initialize, then launch `program` with `extra` launch arguments, breakpoints
    /// on `lines`, and configurationDone; returns the first `stopped` event.
    pub fn start(&mut self, program: &str, lines: &[u32], extra: Value) -> Value {
        let caps = self.ok("initialize", json!({ "clientID": "protocol-tests", "adapterID": "neural", "linesStartAt1": true, "columnsStartAt1": true, "supportsProgressReporting": true, "supportsVariableType": true, "supportsVariablePaging": true }));
        assert_eq!(caps["supportsStepBack"], json!(true));
        self.event("initialized");
        let mut args = json!({ "program": program, "engine": "trace" });
        for (k, v) in extra.as_object().into_iter().flatten() {
            args[k] = v.clone();
        }
        let launch = self.send("launch", args);
        let breakpoints: Vec<Value> = lines.iter().map(|l| json!({ "line": l })).collect();
        self.ok(
            "setBreakpoints",
            json!({ "source": { "path": program }, "breakpoints": breakpoints }),
        );
        self.ok("configurationDone", json!({}));
        let launched = self.response_to(launch);
        assert_eq!(
            launched["success"],
            json!(true),
            "launch failed: {launched}"
        );
        self.event("stopped")
    }

    /// Send a stepping request and wait for the stop (or `None` if the program ended).
    pub fn step(&mut self, command: &str) -> Option<Value> {
        self.ok(command, json!({ "threadId": 1 }));
        loop {
            let message = self
                .next_message()
                .expect("the adapter answers a step with stopped or terminated");
            match message["event"].as_str() {
                Some("stopped") => return Some(message),
                Some("terminated") => return None,
                _ => self.events.push_back(message),
            }
        }
    }

    /// The current location: (function, line) of every frame, innermost first.
    pub fn stack(&mut self) -> Vec<(String, u64)> {
        let body = self.ok("stackTrace", json!({ "threadId": 1 }));
        body["stackFrames"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["name"].as_str().unwrap().to_string(),
                    f["line"].as_u64().unwrap(),
                )
            })
            .collect()
    }

    /// The innermost (function, line).
    pub fn top(&mut self) -> (String, u64) {
        self.stack().remove(0)
    }

    /// The reference of the innermost frame's first scope (Locals).
    pub fn locals_reference(&mut self) -> i64 {
        let scopes = self.ok("scopes", json!({ "frameId": 1 }));
        scopes["scopes"][0]["variablesReference"].as_i64().unwrap()
    }

    /// The variables of the innermost frame's first scope (Locals): name -> value.
    pub fn locals(&mut self) -> Vec<(String, String)> {
        let reference = self.locals_reference();
        self.children(reference)
            .into_iter()
            .map(|v| {
                (
                    v["name"].as_str().unwrap().to_string(),
                    v["value"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    }

    pub fn children(&mut self, reference: i64) -> Vec<Value> {
        let body = self.ok("variables", json!({ "variablesReference": reference }));
        body["variables"].as_array().unwrap().clone()
    }

    /// The stdout `output` events received so far, joined.
    pub fn stdout(&self) -> String {
        self.received
            .iter()
            .filter(|m| m["event"] == "output" && m["body"]["category"] == "stdout")
            .map(|m| m["body"]["output"].as_str().unwrap())
            .collect()
    }

    /// Wait for a stdio adapter to exit (after its input was closed).
    pub fn wait(&mut self) -> std::process::ExitStatus {
        self.child
            .take()
            .expect("wait is for stdio clients")
            .wait()
            .unwrap()
    }

    /// Disconnect and, for stdio, wait for the adapter to exit.
    pub fn finish(mut self) -> std::process::ExitStatus {
        self.ok("disconnect", json!({}));
        while self.next_message().is_some() {}
        let mut child = self.child.take().expect("finish is for stdio clients");
        drop(self);
        child.wait().unwrap()
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_check_rejects_what_dap_forbids() {
        let schema = Schema::get();
        let good = json!({ "seq": 1, "type": "event", "event": "stopped", "body": { "reason": "step", "threadId": 1 } });
        assert_eq!(schema.check(&good), Ok(()));
        let no_reason =
            json!({ "seq": 1, "type": "event", "event": "stopped", "body": { "threadId": 1 } });
        assert!(schema.check(&no_reason).unwrap_err().contains("reason"));
        let bad_error = json!({ "seq": 2, "type": "response", "request_seq": 1, "success": false, "command": "next" });
        assert!(
            schema.check(&bad_error).is_err(),
            "ErrorResponse needs a body"
        );
        let unknown = json!({ "seq": 3, "type": "event", "event": "madeUp" });
        assert!(schema
            .check(&unknown)
            .unwrap_err()
            .contains("no definition MadeUpEvent"));
        assert_eq!(
            Schema::definition_for(
                &json!({ "type": "response", "success": true, "command": "stackTrace" })
            ),
            "StackTraceResponse"
        );
    }
}
