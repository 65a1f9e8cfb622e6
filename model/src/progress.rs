//! Progress bars for long work: drawn on a terminal, silent otherwise (CI logs, pipes).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

/// A bar of `len` steps labelled `what`; hidden when stderr is not a terminal.
pub fn bar(len: u64, what: &str) -> ProgressBar {
    let bar = ProgressBar::new(len);
    if !std::io::stderr().is_terminal() {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    bar.set_style(
        ProgressStyle::with_template(
            "{prefix} [{elapsed_precise}] {wide_bar} {pos}/{len} (eta {eta}) {msg}",
        )
        .expect("the template is valid"),
    );
    bar.set_prefix(what.to_string());
    bar
}

/// A ticking spinner labelled `what`, for work of unknown length; hidden off a terminal.
pub fn spinner(what: &str) -> ProgressBar {
    let spinner = ProgressBar::new_spinner();
    if !std::io::stderr().is_terminal() {
        spinner.set_draw_target(ProgressDrawTarget::hidden());
    }
    spinner.set_message(what.to_string());
    spinner.enable_steady_tick(std::time::Duration::from_millis(120));
    spinner
}
