//! CWM's dialect against CWM's own code: the prompts `neural_model::cwm` builds are
//! the demo debugger's, piece for piece, and its replies read into the same frames
//! (fixtures made from github.com/facebookresearch/cwm's `demos/cwmdbg.py` by
//! `scripts/make_cwm_fixtures.py`).

use neural_model::cwm::{self, Frame, Piece, Reply};
use neural_model::Event;
use serde_json::Value;

fn event(name: &str) -> Event {
    match name {
        "CALL" => Event::Call,
        "LINE" => Event::Line,
        "RETURN" => Event::Return,
        "EXCEPTION" => Event::Exception,
        other => panic!("no event {other}"),
    }
}

fn pieces(list: &Value) -> Vec<Piece> {
    let special = |name: &str| -> &'static str {
        let all = [
            cwm::BEGIN_OF_TEXT,
            cwm::END_OF_TEXT,
            cwm::TRACE_CONTEXT_START,
            cwm::FRAME_SEP,
            cwm::ACTION_SEP,
            cwm::ARG_SEP,
        ];
        let events = Event::ALL.map(cwm::event_token);
        all.into_iter()
            .chain(events)
            .find(|s| *s == name)
            .unwrap_or_else(|| panic!("no special token {name}"))
    };
    let list = list.as_array().unwrap();
    list.iter()
        .map(|p| match (p.get("special"), p.get("text")) {
            (Some(s), _) => Piece::Special(special(s.as_str().unwrap())),
            (_, Some(t)) => Piece::Text(t.as_str().unwrap().to_string()),
            _ => panic!("a piece is special or text: {p}"),
        })
        .collect()
}

fn cases() -> Vec<Value> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/cwm-dialect/cases.json"
    );
    let text = std::fs::read_to_string(path).unwrap();
    serde_json::from_str::<Value>(&text)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn prompts_are_cwms_own_piece_for_piece() {
    for case in cases() {
        let frames: Vec<Frame> = case["frames"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| Frame {
                event: event(f["event"].as_str().unwrap()),
                locals: serde_json::from_value(f["local_vars"].clone()).unwrap(),
                source: f["source_line"].as_str().unwrap().to_string(),
                value: f["arg"].as_str().map(str::to_owned),
            })
            .collect();
        let forced = case["forced"].as_str().map(event);
        let context = case["context"].as_str().unwrap();
        assert_eq!(
            cwm::prompt(context, &frames, forced),
            pieces(&case["prompt"]),
            "{}",
            case["name"]
        );
    }
}

#[test]
fn replies_read_as_cwms_own_code_reads_them() {
    for case in cases() {
        let lines: Vec<String> = case["context"]
            .as_str()
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect();
        let forced = case["forced"].as_str().map(event);
        let read = cwm::read_reply(&pieces(&case["reply"]), forced, &lines).unwrap();
        let want = &case["read"];
        match read {
            Reply::End => assert_eq!(want["final"], true, "{}", case["name"]),
            Reply::Frame(frame, line) => {
                assert_eq!(frame.event, event(want["event"].as_str().unwrap()));
                assert_eq!(frame.source, want["source_line"].as_str().unwrap());
                let locals: neural_model::Vars =
                    serde_json::from_value(want["local_vars"].clone()).unwrap();
                assert_eq!(frame.locals, locals, "{}", case["name"]);
                assert_eq!(frame.value.as_deref(), want["arg"].as_str());
                assert_eq!(line, want["line_no"].as_u64().map(|n| n as u32));
            }
        }
    }
}
