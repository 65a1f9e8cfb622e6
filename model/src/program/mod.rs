//! The program model: what a program's source alone says about its runs, with no
//! Python and no network weights. Decoding narrows the model's predictions with it;
//! the adapter places breakpoints and checks syntax with it.
//!
//! - [`lexer`]: the one scanner of Python text (code, strings, comments, brackets,
//!   logical lines).
//! - [`ProgramModel`]: all of the below read once, and what it implies (the names a
//!   line binds, what a statement may call, where callers stand).
//! - [`layout`]: which frame runs each line, the names a statement may bind, the
//!   functions a line may call without naming them.
//! - [`flow`]: which line can follow which inside a frame, and where frames start and
//!   end; also the lines a breakpoint can stop on.
//! - [`effects`]: which statements can change no object (pure builtins and methods).
//! - [`kinds`]: how an expression's repr can begin, from its text (a list, a string).
//! - [`known`]: the value of an expression that the values shown settle, with
//!   [`arithmetic`], [`conditions`], [`builtins`] and [`iteration`] (displays,
//!   comprehensions, what an iterable yields).
//! - [`printed`]: what a `print(...)` statement writes.
//! - [`syntax`]: syntax errors and the lines no run stands on (tree-sitter).

pub mod arithmetic;
pub mod builtins;
pub mod conditions;
pub mod effects;
pub mod flow;
pub mod iteration;
pub mod kinds;
pub mod known;
pub mod layout;
pub mod lexer;
mod model;
pub mod printed;
pub mod raises;
pub mod sets;
pub mod syntax;

pub use model::ProgramModel;

/// 1-based numbers of the lines a breakpoint can stop on: the first line of each
/// statement that a `line` event can stand on, in order.
pub fn executable_lines(source: &str) -> Vec<u32> {
    flow::Flow::of(source).statement_lines()
}

/// Where a breakpoint asked for at `line` lands: that line if it is executable, else
/// the next executable line, else nowhere.
pub fn place_breakpoint(executable: &[u32], line: u32) -> Option<u32> {
    executable.iter().copied().find(|&l| l >= line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn executable_lines_match_cpython_line_table_on_a_sample() {
        // Expected lines are those CPython 3.11's co_lines() reports as statement
        // starts for this program.
        let source = "\"\"\"doc\"\"\"\nimport sys\n\ndef f(x):\n    \"\"\"doc\"\"\"\n    try:\n        y = x + 1\n    except ValueError:\n        pass\n    else:\n        y = 2\n    finally:\n        z = 3\n    total = (1 +\n             2)\n    s = '''a\n    b'''\n    return y  # done\n";
        assert_eq!(
            executable_lines(source),
            vec![1, 2, 4, 6, 7, 8, 9, 11, 13, 14, 16, 18]
        );
    }

    #[test]
    fn declarations_and_a_functions_docstring_hold_no_breakpoint_but_a_classs_does() {
        let source = "class A:\n    \"\"\"doc\"\"\"\n    n = 1\ndef f():\n    \"\"\"doc\"\"\"\n    global g\n    k: int\n    g = 2\n";
        assert_eq!(executable_lines(source), vec![1, 2, 3, 4, 8]);
    }

    #[test]
    fn unicode_names_and_strings_are_read_not_a_panic() {
        let source =
            "π = 3\nnom_é = ('ü',\n         \"日本\")\ns = '''ß\n'''\nprint(π, nom_é)  # ✓\n";
        assert_eq!(executable_lines(source), vec![1, 2, 4, 6]);
    }

    #[test]
    fn breakpoints_move_to_the_next_executable_line() {
        let lines = [2, 5, 9];
        assert_eq!(place_breakpoint(&lines, 5), Some(5));
        assert_eq!(place_breakpoint(&lines, 3), Some(5));
        assert_eq!(place_breakpoint(&lines, 10), None);
    }
}
