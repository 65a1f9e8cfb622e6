//! The CWM frame source on the tiny random CWM checkpoint (`tests/fixtures/tiny-cwm`):
//! its prompt's tokens are those `transformers`' tokenizer gives (the fixture's
//! continuation prompt), the cache keeps what an earlier prompt shares, and a model
//! that writes no frame, or runs out of context, fails with a message, not a panic.
#![cfg(feature = "neural")]

use neural_model::cwm::model::{speaks_cwm, CwmModel};
use neural_model::cwm::run::{CwmError, FrameSource};
use neural_model::net::Cpu;
use neural_model::{Event, State};
use std::path::PathBuf;

const SOURCE: &str = "def f(x):\n    return x + 1\n";

fn tiny() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tiny-cwm")
}

fn entry() -> State {
    neural_model::entry::entry_state(SOURCE, Some("f(2)")).unwrap()
}

fn load() -> CwmModel<Cpu> {
    CwmModel::load(&tiny(), &Default::default(), SOURCE, 1, &mut |_, _| {}).unwrap()
}

#[test]
fn the_dialect_is_told_by_the_tokenizer() {
    assert!(speaks_cwm(&tiny()));
    let ours = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("weights/default");
    assert!(!speaks_cwm(&ours));
}

#[test]
fn a_prompt_encodes_as_transformers_encodes_it() {
    let continuation: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(tiny().join("continuation.json")).unwrap())
            .unwrap();
    let expected: Vec<u32> = continuation["prompt_tokens"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_u64().unwrap() as u32)
        .collect();
    // The fixture's prompt marks line 2 as the trace's start, and ends inside the
    // first frame, at `<|action_sep|>`.
    let model =
        CwmModel::<Cpu>::load(&tiny(), &Default::default(), SOURCE, 2, &mut |_, _| {}).unwrap();
    let tokens = model.prompt_tokens(&[entry()], None).unwrap();
    assert_eq!(&tokens[..expected.len()], &expected[..]);
}

#[test]
fn layers_are_reported_as_they_load() {
    let mut seen = Vec::new();
    CwmModel::<Cpu>::load(&tiny(), &Default::default(), SOURCE, 1, &mut |done, of| {
        seen.push((done, of))
    })
    .unwrap();
    assert_eq!(seen, vec![(1, 3), (2, 3), (3, 3)]);
}

#[test]
fn a_model_that_writes_no_frame_fails_clearly_and_keeps_its_cache() {
    let mut model = load();
    let path = [entry()];
    let first = model.next_frame(&path, Some(Event::Line)).unwrap_err();
    // The random model never ends a frame: it fills the context the fixture allows (64).
    assert!(
        matches!(&first, CwmError::Malformed(why) if why.contains("without ending the frame")),
        "{first}"
    );
    let prompt = model.prompt_tokens(&path, Some(Event::Line)).unwrap().len();
    assert!(model.cached() >= prompt, "the prompt stays in the cache");
    // Asked again, it answers the same from what it holds.
    assert_eq!(
        model.next_frame(&path, Some(Event::Line)).unwrap_err(),
        first
    );
}

#[test]
fn a_run_longer_than_the_context_says_so() {
    let mut model = load();
    let mut long = entry();
    long.locals.insert("x".into(), "1".repeat(200));
    match model.next_frame(&[long], None) {
        Err(CwmError::TooLong { tokens, max }) => assert!(tokens >= max && max == 64),
        other => panic!("{other:?}"),
    }
}
