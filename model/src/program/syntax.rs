//! A program's syntax, read without Python: its syntax errors, and the lines no run
//! ever stands on. The neural engine never runs the debuggee, yet a program Python
//! would refuse to compile must not be stepped as if it ran. The source is parsed with
//! tree-sitter's Python grammar; the checks CPython's compiler makes that the grammar
//! leaves out (indentation, an empty block, `return`, `yield`, `break` and `continue`
//! out of place, Python 2's `print x`) are made on the tree. Messages follow CPython's
//! wording where there is one.

use std::collections::BTreeSet;
use tree_sitter::{Node, Parser};

/// The first syntax error of a program, as Python would name it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxProblem {
    /// `SyntaxError` or `IndentationError`.
    pub kind: &'static str,
    pub message: String,
    /// 1-based.
    pub line: u32,
}

impl std::fmt::Display for SyntaxProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {} (line {})", self.kind, self.message, self.line)
    }
}

/// The deepest the walks below go into the syntax tree: they recurse, and a hostile
/// file (20,000 nested brackets) would overflow the thread's stack. Python compiles
/// nothing this deep (it refuses 201 nested brackets or 101 levels of indentation),
/// so a program that reaches the bound is refused as a syntax error.
pub const MAX_TREE_DEPTH: usize = 1000;

fn parse(source: &str) -> Option<tree_sitter::Tree> {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_python::LANGUAGE.into())
        .expect("the Python grammar matches the tree-sitter library");
    parser.parse(source, None) // `None` only on cancellation, never asked for
}

/// `Ok` if `source` is a program Python can compile, else its first syntax error.
pub fn check(source: &str) -> Result<(), SyntaxProblem> {
    let Some(tree) = parse(source) else {
        return Ok(());
    };
    let mut problems = Vec::new();
    visit(tree.root_node(), source, &mut problems, 0);
    match problems.into_iter().min_by_key(|p| p.line) {
        Some(problem) => Err(problem),
        None => Ok(()),
    }
}

/// The lines (1-based) that say nothing of what a run does and that no state stands
/// on: blank lines and comments outside strings, and every line of a docstring but its
/// first. A long program can be read without them.
pub fn idle_lines(source: &str) -> BTreeSet<u32> {
    let mut in_strings = BTreeSet::new();
    let mut idle = BTreeSet::new();
    if let Some(tree) = parse(source) {
        strings(tree.root_node(), &mut in_strings, &mut idle, 0);
    }
    for (index, text) in source.lines().enumerate() {
        let line = index as u32 + 1;
        let text = text.trim();
        if (text.is_empty() || text.starts_with('#')) && !in_strings.contains(&line) {
            idle.insert(line);
        }
    }
    idle
}

/// Lines inside multi-line strings (past their first), and those of docstrings.
/// Nodes deeper than [`MAX_TREE_DEPTH`] are not looked at (`check` refuses such a
/// program).
fn strings(node: Node, inside: &mut BTreeSet<u32>, docstring: &mut BTreeSet<u32>, depth: usize) {
    if depth == MAX_TREE_DEPTH {
        return;
    }
    if matches!(node.kind(), "string" | "concatenated_string") {
        let (first, last) = (line_of(node), node.end_position().row as u32 + 1);
        inside.extend(first + 1..=last);
        let statement = node.parent().filter(|p| p.kind() == "expression_statement");
        let first_statement = statement.and_then(|s| s.parent()).and_then(|body| {
            let mut cursor = body.walk();
            let first = body
                .named_children(&mut cursor)
                .find(|c| c.kind() != "comment");
            first
        });
        if statement.is_some() && first_statement == statement {
            docstring.extend(first + 1..=last);
        }
        return;
    }
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        strings(child, inside, docstring, depth + 1);
    }
}

fn visit(node: Node, source: &str, problems: &mut Vec<SyntaxProblem>, depth: usize) {
    if depth == MAX_TREE_DEPTH {
        problems.push(SyntaxProblem {
            kind: "SyntaxError",
            message: format!("nested too deeply (more than {MAX_TREE_DEPTH} levels of syntax)"),
            line: line_of(node),
        });
        return;
    }
    if let Some(problem) = problem_at(node, source) {
        problems.push(problem);
    }
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        visit(child, source, problems, depth + 1);
    }
}

fn line_of(node: Node) -> u32 {
    node.start_position().row as u32 + 1
}

fn problem(kind: &'static str, message: impl Into<String>, line: u32) -> Option<SyntaxProblem> {
    Some(SyntaxProblem {
        kind,
        message: message.into(),
        line,
    })
}

fn problem_at(node: Node, source: &str) -> Option<SyntaxProblem> {
    let syntax = "SyntaxError";
    if node.is_missing() {
        let message = match node.kind() {
            ")" => "'(' was never closed".to_string(),
            "]" => "'[' was never closed".to_string(),
            "}" => "'{' was never closed".to_string(),
            kind if kind.chars().all(|c| c.is_ascii_punctuation()) => format!("expected '{kind}'"),
            _ => "invalid syntax".to_string(),
        };
        return problem(syntax, message, line_of(node));
    }
    match node.kind() {
        "ERROR" if is_exception_list(node) => None,
        "ERROR" => match unclosed(node) {
            Some(open) => problem(
                syntax,
                format!("'{}' was never closed", open.kind()),
                line_of(open),
            ),
            None => problem(syntax, "invalid syntax", line_of(node)),
        },
        "print_statement" | "exec_statement" => {
            let name = &node.kind()[..node.kind().len() - "_statement".len()];
            problem(
                syntax,
                format!("Missing parentheses in call to '{name}'. Did you mean {name}(...)?"),
                line_of(node),
            )
        }
        "return_statement" if !in_function(node) => {
            problem(syntax, "'return' outside function", line_of(node))
        }
        "yield" if !in_function(node) => problem(syntax, "'yield' outside function", line_of(node)),
        "break_statement" if !in_loop(node) => {
            problem(syntax, "'break' outside loop", line_of(node))
        }
        "continue_statement" if !in_loop(node) => {
            problem(syntax, "'continue' not properly in loop", line_of(node))
        }
        "block" => empty_block(node).or_else(|| misaligned(node, source)),
        "module" => misaligned(node, source),
        "elif_clause"
        | "else_clause"
        | "except_clause"
        | "except_group_clause"
        | "finally_clause" => misplaced_clause(node, source),
        _ => None,
    }
}

/// `except A, B, C:` without parentheses, valid since Python 3.14 (PEP 758), which
/// the grammar reads as far as `except A, B` and calls the rest an error.
fn is_exception_list(error: Node) -> bool {
    let mut cursor = error.walk();
    let only_names = error
        .children(&mut cursor)
        .all(|c| matches!(c.kind(), "identifier" | "attribute" | "," | "."));
    error.parent().is_some_and(|p| p.kind() == "except_clause") && only_names
}

/// The first bracket an unparsable stretch opens and never closes.
fn unclosed(error: Node) -> Option<Node> {
    let mut open: Vec<Node> = Vec::new();
    let mut leaves = vec![error];
    while let Some(node) = leaves.pop() {
        if node.child_count() > 0 {
            let mut cursor = node.walk();
            let children: Vec<Node> = node.children(&mut cursor).collect();
            leaves.extend(children.into_iter().rev());
            continue;
        }
        match node.kind() {
            "(" | "[" | "{" => open.push(node),
            ")" | "]" | "}" => {
                open.pop();
            }
            _ => {}
        }
    }
    open.first().copied()
}

/// Whether `node` stands in a function's body (a class body between does not count).
fn in_function(node: Node) -> bool {
    let mut at = node.parent();
    while let Some(n) = at {
        match n.kind() {
            "function_definition" | "lambda" => return true,
            "class_definition" => return false,
            _ => at = n.parent(),
        }
    }
    false
}

/// Whether `node` stands in a loop's body (not its `else`), within the same function.
fn in_loop(node: Node) -> bool {
    let mut child = node;
    let mut at = node.parent();
    while let Some(n) = at {
        match n.kind() {
            "for_statement" | "while_statement" if child.kind() != "else_clause" => return true,
            "function_definition" | "class_definition" => return false,
            _ => {}
        }
        child = n;
        at = n.parent();
    }
    false
}

/// A block with no statement: Python wants an indented one after every `:`.
fn empty_block(block: Node) -> Option<SyntaxProblem> {
    let mut cursor = block.walk();
    let has_statement = block
        .named_children(&mut cursor)
        .any(|c| c.kind() != "comment");
    if has_statement {
        return None;
    }
    let header = block.parent()?;
    let what = match header.kind() {
        "function_definition" => "function definition".to_string(),
        "class_definition" => "class definition".to_string(),
        kind => match kind
            .strip_suffix("_statement")
            .or(kind.strip_suffix("_clause"))
        {
            Some(word) => format!("'{word}' statement"),
            None => "':'".to_string(),
        },
    };
    problem(
        "IndentationError",
        format!(
            "expected an indented block after {what} on line {}",
            line_of(header)
        ),
        line_of(header) + 1,
    )
}

/// The statements of a block (or the module) that begin their line must all begin
/// at one indentation; the module's at none.
fn misaligned(body: Node, source: &str) -> Option<SyntaxProblem> {
    let mut cursor = body.walk();
    let mut expected = (body.kind() == "module").then_some(0);
    for statement in body.named_children(&mut cursor) {
        if statement.kind() == "comment" || statement.is_error() {
            continue;
        }
        let Some(indent) = leading_indent(source, statement) else {
            continue; // after a `;` or a block's `:` on the same line
        };
        match expected {
            None => expected = Some(indent),
            Some(want) if indent > want => {
                return problem("IndentationError", "unexpected indent", line_of(statement))
            }
            Some(want) if indent < want => {
                return problem(
                    "IndentationError",
                    "unindent does not match any outer indentation level",
                    line_of(statement),
                )
            }
            Some(_) => {}
        }
    }
    None
}

/// A clause (`elif`, `else`, `except`, `finally`) that begins its line stands where
/// its statement does.
fn misplaced_clause(clause: Node, source: &str) -> Option<SyntaxProblem> {
    let statement = clause.parent()?;
    let want = leading_indent(source, statement)?;
    match leading_indent(source, clause)? {
        indent if indent > want => problem(
            "IndentationError",
            "unindent does not match any outer indentation level",
            line_of(clause),
        ),
        indent if indent < want => problem("SyntaxError", "invalid syntax", line_of(clause)),
        _ => None,
    }
}

/// The indentation (tabs to the next multiple of 8, as Python counts them) of the line
/// `node` begins, if nothing but whitespace stands before it there.
fn leading_indent(source: &str, node: Node) -> Option<usize> {
    let start = node.start_byte();
    let line_start = source[..start].rfind('\n').map_or(0, |i| i + 1);
    let before = &source[line_start..start];
    if !before.chars().all(|c| c == ' ' || c == '\t' || c == '\x0c') {
        return None;
    }
    Some(before.chars().fold(0, |width, c| match c {
        '\t' => (width / 8 + 1) * 8,
        '\x0c' => 0,
        _ => width + 1,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(source: &str) -> (String, u32) {
        let problem = check(source).expect_err(source);
        (
            format!("{}: {}", problem.kind, problem.message),
            problem.line,
        )
    }

    #[test]
    fn valid_programs_pass_new_syntax_included() {
        for source in [
            "",
            "# nothing\n",
            "x = 1\nprint(x)\n",
            "def f(a, /, b, *, c):\n    return a\n",
            "if (n := 10) > 5:\n    print(n)\n",
            "match x:\n    case [1, *rest]:\n        pass\n    case _:\n        pass\n",
            "try:\n    pass\nexcept* ValueError:\n    pass\n",
            "a = {'k': 1}\nprint(f\"{a['k']}\")\n",
            "for i in range(3):\n    if i:\n        continue\n    break\nelse:\n    pass\n",
            "def g():\n    yield 1\n    class A:\n        x = 1\n",
            "if x: pass\nwhile y: y -= 1; z = 2\n",
            "def f():\n\tx = 1\n\treturn x\n",
            "s = '''\n  text\n'''\nx = (1,\n       2)\n",
            "async def f():\n    async with g() as x:\n        await x\n",
            "try:\n    pass\nexcept A, B, errors.C:\n    pass\n",
        ] {
            assert_eq!(check(source), Ok(()), "{source}");
        }
    }

    #[test]
    fn deep_nesting_is_a_syntax_error_not_a_stack_overflow() {
        let nested = |n: usize| format!("x = {}{}\n", "[".repeat(n), "]".repeat(n));
        assert_eq!(check(&nested(200)), Ok(()), "Python compiles 200 levels");
        let deep = nested(20_000);
        assert!(
            error(&deep).0.contains("nested too deeply"),
            "{:?}",
            error(&deep)
        );
        assert!(idle_lines(&deep).is_empty());
    }

    #[test]
    fn idle_lines_are_blank_comments_and_docstring_tails_outside_strings() {
        let source = "\
\"\"\"Module.

More.
\"\"\"
# a comment

def f(x):
    '''One line.'''
    text = '''
# not a comment

'''
    return x  # trailing
";
        let idle: Vec<u32> = idle_lines(source).into_iter().collect();
        assert_eq!(idle, [2, 3, 4, 5, 6]);
    }

    #[test]
    fn grammar_errors_name_their_line() {
        assert_eq!(error("print(1)\nx = [1, 2\n").1, 2);
        assert_eq!(error("x = (\n").0, "SyntaxError: '(' was never closed");
        assert_eq!(
            error("x = 5\nx++\n"),
            ("SyntaxError: invalid syntax".into(), 2)
        );
        assert_eq!(error("if True\n    pass\n").1, 1);
        assert_eq!(error("s = \"abc\n").1, 1);
    }

    #[test]
    fn what_the_compiler_checks_beyond_the_grammar() {
        assert_eq!(
            error("x = 1\n  y = 2\n"),
            ("IndentationError: unexpected indent".into(), 2)
        );
        assert_eq!(
            error("def f():\nreturn 1\n"),
            (
                "IndentationError: expected an indented block after function definition on line 1"
                    .into(),
                2
            )
        );
        assert_eq!(
            error("if x:\n    a = 1\n      b = 2\n"),
            ("IndentationError: unexpected indent".into(), 3)
        );
        assert_eq!(
            error("print \"hello\"\n").0,
            "SyntaxError: Missing parentheses in call to 'print'. Did you mean print(...)?"
        );
        assert_eq!(
            error("return 5\n"),
            ("SyntaxError: 'return' outside function".into(), 1)
        );
        assert_eq!(
            error("class A:\n    return 1\n").0,
            "SyntaxError: 'return' outside function"
        );
        assert_eq!(
            error("for i in x:\n    pass\nelse:\n    break\n"),
            ("SyntaxError: 'break' outside loop".into(), 4)
        );
        assert_eq!(
            error("while x:\n    def f():\n        continue\n").0,
            "SyntaxError: 'continue' not properly in loop"
        );
        assert_eq!(
            error("def f():\n    try:\n        x = 1\n      except E:\n        pass\n"),
            (
                "IndentationError: unindent does not match any outer indentation level".into(),
                4
            )
        );
        assert_eq!(
            error("yield 3\n").0,
            "SyntaxError: 'yield' outside function"
        );
    }
}
