//! Its own test binary: it sets NEURAL_PYTHON, which every trace in the process reads.

use neural_model::{trace, Limits, Program};
use std::path::PathBuf;

#[test]
fn a_missing_python_is_reported_with_what_to_do() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/programs/recursion.py");
    let program = Program::load(&path, Some("fact(1)".into())).unwrap();
    std::env::set_var("NEURAL_PYTHON", "/nonexistent/python3");
    let error = trace(&program, &Limits::default()).unwrap_err();
    let text = error.to_string();
    assert!(
        text.contains("/nonexistent/python3") && text.contains("Install Python 3"),
        "{text}"
    );
}
