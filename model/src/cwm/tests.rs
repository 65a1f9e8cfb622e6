use super::*;
use crate::state::Frame as Caller;

fn state(event: Event, line: u32, source: &str, depth: u32, locals: &[(&str, &str)]) -> State {
    State {
        event,
        line,
        source: source.into(),
        function: if depth == 0 { "<module>" } else { "f" }.into(),
        depth,
        stack: (0..depth)
            .map(|_| Caller {
                function: "<module>".into(),
                line: 5,
            })
            .collect(),
        locals: locals
            .iter()
            .map(|&(n, v)| (n.to_string(), v.to_string()))
            .collect(),
        globals: Vars::new(),
        value: None,
        stdout: String::new(),
    }
}

#[test]
fn the_entry_line_is_marked_and_the_rest_kept() {
    let source = "def f(x):\n    return x\n\nf(2)\n";
    assert_eq!(
        context(source, 1),
        "def f(x):  # << START_OF_TRACE\n    return x\n\nf(2)\n"
    );
    assert_eq!(context("x = 1", 1), "x = 1  # << START_OF_TRACE");
}

#[test]
fn a_line_frame_writes_what_is_unchanged_in_its_scope_as_two_dots() {
    let states = [
        state(Event::Call, 1, "def f(x):", 1, &[("x", "2")]),
        state(Event::Line, 2, "    y = x + 1", 1, &[("x", "2")]),
        state(Event::Line, 3, "    return y", 1, &[("x", "2"), ("y", "3")]),
    ];
    let frames = frames(&states);
    let written = |k: usize| json_dumps_object(&frames[k].locals);
    assert_eq!(written(0), r#"{"x": "2"}"#);
    assert_eq!(written(1), r#"{"x": ".."}"#);
    assert_eq!(written(2), r#"{"x": "..", "y": "3"}"#);
    assert_eq!(frames[2].source, "    return y\n");
}

#[test]
fn back_from_a_call_every_local_is_written_again() {
    let mut back = state(Event::Return, 2, "    return x", 1, &[]);
    back.value = Some("2".into());
    let states = [
        state(Event::Line, 5, "y = f(2)", 0, &[("a", "1")]),
        back,
        state(Event::Line, 5, "y = f(2)", 0, &[("a", "1")]),
    ];
    let frames = frames(&states);
    assert_eq!(frames[1].locals, Vars::new());
    assert_eq!(frames[1].value.as_deref(), Some("2"));
    assert_eq!(json_dumps_object(&frames[2].locals), r#"{"a": "1"}"#);
}

#[test]
fn strings_are_dumped_as_pythons_json_dumps_does() {
    assert_eq!(json_dumps_str("a\"b\\c\n\t"), r#""a\"b\\c\n\t""#);
    assert_eq!(json_dumps_str("é"), r#""\u00e9""#);
    assert_eq!(json_dumps_str("𝄞"), r#""\ud834\udd1e""#);
    assert_eq!(json_dumps_str("\u{1}/"), r#""\u0001/""#);
}

#[test]
fn a_reply_that_is_no_frame_says_why() {
    let lines = vec!["x = 1".to_string()];
    let text = |t: &str| Piece::Text(t.into());
    assert_eq!(
        read_reply(&[text("oops")], None, &lines),
        Err(ReplyError::NoEvent("oops".into()))
    );
    assert_eq!(
        read_reply(&[Piece::Special("<|line_sep|>"), text("{}")], None, &lines),
        Err(ReplyError::Short("action"))
    );
    let bad_locals = [
        Piece::Special("<|line_sep|>"),
        text("{x"),
        Piece::Special(ACTION_SEP),
        text("x = 1\n"),
        Piece::Special(FRAME_SEP),
    ];
    assert_eq!(
        read_reply(&bad_locals, None, &lines),
        Err(ReplyError::Locals("{x".into()))
    );
    assert_eq!(
        read_reply(&[Piece::Special(END_OF_TEXT)], None, &lines),
        Ok(Reply::End)
    );
}
