//! The first state of a run, worked out from the source without running Python, so
//! that the neural engine needs no interpreter: for a script, its first line with no
//! locals; for a call such as `f([3, 1], k=2)`, the `call` state of `f` with its
//! arguments bound. Arguments (and module-level constants, shown as globals) must be
//! Python literals; their reprs are written as Python writes them.

use crate::program::lexer::{closing_bracket, split_top, without_comment};
use crate::repr::{Kind, Repr};
use crate::state::{Event, State, Vars};

/// The state a run of `source` (or of `call` on it) starts at.
pub fn entry_state(source: &str, call: Option<&str>) -> Result<State, String> {
    let lines: Vec<&str> = source.lines().collect();
    let Some(call) = call else {
        let first = lines
            .iter()
            .position(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
            .ok_or("the program has no code")?;
        return Ok(state(
            Event::Line,
            first + 1,
            lines[first],
            "<module>",
            Vars::new(),
            Vars::new(),
        ));
    };
    let call = call.trim();
    let open = call
        .find('(')
        .ok_or_else(|| format!("{call:?} is not a call like f(1, 2)"))?;
    let name = call[..open].trim();
    if !call.ends_with(')')
        || name.is_empty()
        || !name.chars().all(|c| c.is_alphanumeric() || c == '_')
    {
        return Err(format!(
            "{call:?} is not a call of a function by name, like f(1, 2)"
        ));
    }
    let def = format!("def {name}(");
    let (def_line, _) = lines
        .iter()
        .enumerate()
        .find(|(_, l)| l.starts_with(&def))
        .ok_or_else(|| format!("the program defines no top-level function {name}"))?;
    let signature = signature_text(&lines[def_line..], def.len())
        .ok_or("cannot read the def line's parameters")?;
    let locals = bind(
        &signature,
        &call[open + 1..call.len() - 1],
        None,
        &literal_repr,
    )?;
    Ok(state(
        Event::Call,
        def_line + 1,
        lines[def_line],
        name,
        locals,
        module_constants(&lines),
    ))
}

/// One parameter of a `def`, as a call passes it.
enum Parameter {
    /// Before any `*`: by position.
    Positional(String),
    /// After `*` or `*args`: by name.
    KeywordOnly(String),
    /// `*args`.
    Star(String),
    /// `**kwargs`.
    DoubleStar(String),
}

/// The parameters of the `def` on `line` (1-based), in the order written; `None` if
/// that line starts no `def`.
fn parameters(source: &str, line: u32) -> Option<Vec<Parameter>> {
    let mut keyword_only = false;
    let mut found = Vec::new();
    for param in split_top(&signature_at(source, line)?) {
        let name = param.split([':', '=']).next().unwrap_or("").trim();
        if let Some(kwargs) = name.strip_prefix("**") {
            found.push(Parameter::DoubleStar(kwargs.trim().to_string()));
        } else if let Some(args) = name.strip_prefix('*') {
            keyword_only = true;
            if !args.trim().is_empty() {
                found.push(Parameter::Star(args.trim().to_string()));
            }
        } else if !name.is_empty() && name != "/" {
            found.push(match keyword_only {
                true => Parameter::KeywordOnly(name.to_string()),
                false => Parameter::Positional(name.to_string()),
            });
        }
    }
    Some(found)
}

/// The parameter names of the function whose `def` is on `line` (1-based), in the
/// order its frame holds them: positional ones, keyword-only ones, then `*args` and
/// `**kwargs` by their names. `None` if that line starts no `def`.
pub fn parameter_names(source: &str, line: u32) -> Option<Vec<String>> {
    let (mut plain, mut star, mut double) = (Vec::new(), None, None);
    for param in parameters(source, line)? {
        match param {
            Parameter::Positional(name) | Parameter::KeywordOnly(name) => plain.push(name),
            Parameter::Star(name) => star = Some(name),
            Parameter::DoubleStar(name) => double = Some(name),
        }
    }
    plain.extend(star);
    plain.extend(double);
    Some(plain)
}

/// The line of the `def` whose call stands on `line`: that line, or the first below
/// it that is not a decorator (a decorated function's call stands on its first
/// decorator).
pub fn def_line(lines: &[&str], line: u32) -> Option<u32> {
    (line..line + 20).find(|&l| {
        lines
            .get((l as usize).wrapping_sub(1))
            .is_some_and(|t| !t.trim_start().starts_with('@'))
    })
}

/// The call of `function`, whose call state stands on `line`, that binds its
/// parameters to the reprs in `locals` (a call state's locals): `f(1, [2], *(3,),
/// key=4, **{})`. `None` where a parameter has no value there, or the function is not
/// defined at the module's top level (a method or a nested function cannot be called
/// by its name).
pub fn call_expression(
    source: &str,
    line: u32,
    function: &str,
    locals: &crate::state::Vars,
) -> Option<String> {
    let lines: Vec<&str> = source.lines().collect();
    let def = def_line(&lines, line)?;
    if lines[def as usize - 1].starts_with(char::is_whitespace) {
        return None;
    }
    let arguments = parameters(source, def)?
        .into_iter()
        .map(|param| {
            Some(match param {
                Parameter::Positional(name) => locals.get(&name)?.clone(),
                Parameter::KeywordOnly(name) => format!("{name}={}", locals.get(&name)?),
                Parameter::Star(name) => format!("*{}", locals.get(&name)?),
                Parameter::DoubleStar(name) => format!("**{}", locals.get(&name)?),
            })
        })
        .collect::<Option<Vec<String>>>()?;
    Some(format!("{function}({})", arguments.join(", ")))
}

/// The text between the parentheses of the `def` on `line` (1-based).
fn signature_at(source: &str, line: u32) -> Option<String> {
    let lines: Vec<&str> = source.lines().collect();
    let index = (line as usize).checked_sub(1)?;
    let text = lines.get(index)?;
    let indent = text.len() - text.trim_start().len();
    let rest = text.trim_start();
    let rest = rest.strip_prefix("async ").unwrap_or(rest);
    let after_def = rest.strip_prefix("def ")?;
    let open = after_def.find('(')?;
    let start = indent + (text.trim_start().len() - rest.len()) + 4 + open + 1;
    signature_text(&lines[index..], start)
}

/// The locals of a call of the function whose `def` is on `line`, from the call's
/// argument text: each argument a literal or a name `value` knows the repr of; a
/// method's receiver first. `None` where an argument is neither, or a default is not
/// a literal that nothing can have changed since the definition (`def f(acc=[])`).
pub fn bind_call(
    source: &str,
    line: u32,
    receiver: Option<&str>,
    args: &str,
    value: &dyn Fn(&str) -> Option<String>,
) -> Option<Vars> {
    let signature = signature_at(source, line)?;
    let mutable_default = split_top(&signature).iter().any(|param| {
        param.split_once('=').is_some_and(|(_, default)| {
            default.trim().starts_with(['[', '{']) || literal_repr(default.trim()).is_err()
        })
    });
    if mutable_default {
        return None;
    }
    let resolve = |arg: &str| {
        let literal = exact_literal_repr(arg).ok_or_else(|| format!("{arg} has no exact repr"));
        literal.or_else(|e| value(arg.trim()).ok_or(e))
    };
    bind(&signature, args, receiver, &resolve).ok()
}

fn state(
    event: Event,
    line: usize,
    text: &str,
    function: &str,
    locals: Vars,
    globals: Vars,
) -> State {
    State {
        event,
        line: line as u32,
        source: text.trim_end().to_string(),
        function: function.to_string(),
        depth: 0,
        stack: Vec::new(),
        locals,
        globals,
        value: None,
        stdout: String::new(),
    }
}

/// The text between `def f(` and its closing `)`, over several lines if need be.
fn signature_text(lines: &[&str], start: usize) -> Option<String> {
    // Without comments: a signature over several lines may explain each parameter.
    let uncommented = |line: &&str| without_comment(line).to_string();
    let text = lines
        .iter()
        .take(20)
        .map(uncommented)
        .collect::<Vec<_>>()
        .join("\n");
    let length = closing_bracket(text.get(start..)?)?;
    Some(text[start..start + length].to_string())
}

/// Bind call arguments to the parameters as Python does (positional, keyword,
/// defaults, `*args`, `**kwargs`), giving each parameter's repr; a method's receiver
/// (its repr) comes first.
fn bind(
    signature: &str,
    args: &str,
    receiver: Option<&str>,
    value: &dyn Fn(&str) -> Result<String, String>,
) -> Result<Vars, String> {
    let mut positional: Vec<String> = receiver.map(str::to_string).into_iter().collect();
    let mut keywords = Vec::new();
    for arg in split_top(args) {
        match keyword_split(&arg) {
            Some((k, v)) => keywords.push((k.to_string(), value(v)?)),
            None => positional.push(value(&arg)?),
        }
    }
    let mut locals = Vars::new();
    let mut star_args = None;
    let mut star_kwargs = None;
    let mut keyword_only = false;
    let mut positional = positional.into_iter();
    for param in split_top(signature) {
        let param = param.split(':').next().unwrap_or("").trim().to_string();
        if param == "/" {
            continue;
        }
        if param == "*" {
            keyword_only = true;
            continue;
        }
        let (name, default) = match param.split_once('=') {
            Some((n, d)) => (n.trim().to_string(), Some(d.trim().to_string())),
            None => (param.clone(), None),
        };
        if let Some(rest) = name.strip_prefix("**") {
            star_kwargs = Some(rest.to_string());
        } else if let Some(rest) = name.strip_prefix('*') {
            star_args = Some(rest.to_string());
            keyword_only = true;
            locals.insert(rest.to_string(), String::new()); // filled below, kept in order
        } else if let Some(value) = (!keyword_only).then(|| positional.next()).flatten() {
            locals.insert(name, value);
        } else if let Some(at) = keywords.iter().position(|(k, _)| *k == name) {
            locals.insert(name, keywords.remove(at).1);
        } else if let Some(default) = default {
            locals.insert(name, literal_repr(&default)?);
        } else {
            return Err(format!("the call gives no value for the parameter {name}"));
        }
    }
    let extra: Vec<String> = positional.collect();
    match star_args {
        Some(name) => {
            let tuple = match extra.len() {
                1 => format!("({},)", extra[0]),
                _ => format!("({})", extra.join(", ")),
            };
            locals.insert(name, tuple);
        }
        None if !extra.is_empty() => {
            return Err("the call gives more arguments than the function takes".into())
        }
        None => {}
    }
    match star_kwargs {
        Some(name) => {
            let items: Vec<String> = keywords
                .iter()
                .map(|(k, v)| format!("'{k}': {v}"))
                .collect();
            locals.insert(name, format!("{{{}}}", items.join(", ")));
        }
        None if !keywords.is_empty() => {
            return Err(format!("the function has no parameter {}", keywords[0].0))
        }
        None => {}
    }
    Ok(locals)
}

/// `name=value` at the top level of an argument (not `==`, not inside brackets).
fn keyword_split(arg: &str) -> Option<(&str, &str)> {
    let at = arg.find('=')?;
    let name = arg[..at].trim();
    let is_name = !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_');
    (is_name && !arg[at + 1..].starts_with('=')).then(|| (name, arg[at + 1..].trim()))
}

/// Module-level `NAME = literal` lines, as the tracer shows globals.
fn module_constants(lines: &[&str]) -> Vars {
    lines
        .iter()
        .filter(|l| !l.starts_with([' ', '\t', '#']))
        .filter_map(|l| {
            let (name, value) = keyword_split(l)?;
            if name.starts_with("__") {
                return None;
            }
            Some((name.to_string(), literal_repr(value).ok()?))
        })
        .collect()
}

/// The reprs of what a `for` loop over the value with this repr yields, in order:
/// a list's, tuple's or set's items, a dict's keys, a string's characters, a
/// `range(...)`'s numbers (up to 10,000). `None` for anything else, or a repr cut
/// short.
pub fn elements(repr: &str) -> Option<Vec<String>> {
    let repr = repr.trim();
    if repr.contains('…') {
        return None;
    }
    if let Some(args) = repr
        .strip_prefix("range(")
        .and_then(|r| r.strip_suffix(')'))
    {
        let numbers: Vec<i64> = split_top(args)
            .iter()
            .map(|a| a.parse().ok())
            .collect::<Option<_>>()?;
        let (start, stop, step) = match numbers[..] {
            [stop] => (0, stop, 1),
            [start, stop] => (start, stop, 1),
            [start, stop, step] if step != 0 => (start, stop, step),
            _ => return None,
        };
        // i128: the span of two i64 bounds does not fit an i64.
        let (start, stop, step) = (start as i128, stop as i128, step as i128);
        let count = match step {
            step if step > 0 && stop > start => (stop - start + step - 1) / step,
            step if step < 0 && start > stop => (start - stop - step - 1) / -step,
            _ => 0,
        };
        return (count <= 10_000)
            .then(|| (0..count).map(|k| (start + k * step).to_string()).collect());
    }
    match Repr::parse(repr).kind {
        Kind::List(items) | Kind::Tuple(items) | Kind::Set(items) => {
            return Some(items.into_iter().map(|item| item.text).collect())
        }
        Kind::Dict(entries) => return Some(entries.into_iter().map(|(key, _)| key.text).collect()),
        Kind::Object(_) | Kind::Atom => {}
    }
    let quote = repr.chars().next().filter(|c| matches!(c, '\'' | '"'))?;
    if !repr.contains('\\') {
        let text = repr.strip_prefix(quote)?.strip_suffix(quote)?;
        return Some(
            text.chars()
                .map(|c| python_str_repr(&c.to_string()))
                .collect(),
        );
    }
    None
}

/// A dict's `(key, value)` reprs, in order, from its repr (`None` for anything else,
/// or a repr cut short).
pub fn dict_items(repr: &str) -> Option<Vec<(String, String)>> {
    if repr.contains('…') {
        return None;
    }
    match Repr::parse(repr).kind {
        Kind::Dict(entries) => Some(entries.into_iter().map(|(k, v)| (k.text, v.text)).collect()),
        _ => None,
    }
}

/// The deepest nesting of brackets a literal may have: CPython's own limit (its
/// tokenizer refuses a 201st open bracket). It also bounds the parser's recursion, so
/// that a hostile literal gets an error instead of overflowing the thread's stack.
pub const MAX_NESTING: usize = 200;

/// The repr Python prints for the value of a literal expression (a set's items in the
/// written order where the text cannot say Python's; see [`exact_literal_repr`]).
pub fn literal_repr(expr: &str) -> Result<String, String> {
    parse_literal(expr).map(|(repr, _)| repr)
}

/// The repr of a literal when its text alone fixes it: `None` for what is not a
/// literal, and for a set whose order Python takes from hashes (only small
/// non-negative ints are known to come out sorted). What the decoding rules rely on.
pub fn exact_literal_repr(expr: &str) -> Option<String> {
    match parse_literal(expr) {
        Ok((repr, false)) => Some(repr),
        _ => None,
    }
}

/// The repr, and whether a set in it may iterate in another order than written.
fn parse_literal(expr: &str) -> Result<(String, bool), String> {
    let mut parser = Literal {
        text: expr.trim(),
        at: 0,
        depth: 0,
        unordered: false,
    };
    let value = parser.value()?;
    parser.space();
    if parser.at != parser.text.len() {
        return Err(format!("{expr:?} is not a Python literal (numbers, strings, lists, tuples, dicts, sets, True, False, None)"));
    }
    Ok((value, parser.unordered))
}

struct Literal<'a> {
    text: &'a str,
    at: usize,
    /// How many brackets are open where the parser reads.
    depth: usize,
    /// A set was read whose order Python takes from hashes, or a dict whose keys may
    /// be equal under different reprs: the text alone does not fix the repr.
    unordered: bool,
}

impl Literal<'_> {
    fn rest(&self) -> &str {
        &self.text[self.at..]
    }

    fn space(&mut self) {
        self.at += self.rest().len() - self.rest().trim_start().len();
    }

    fn fail<T>(&self) -> Result<T, String> {
        Err(format!("{:?} is not a Python literal (numbers, strings, lists, tuples, dicts, sets, True, False, None)", self.text))
    }

    fn eat(&mut self, s: &str) -> bool {
        self.space();
        if self.rest().starts_with(s) {
            self.at += s.len();
            true
        } else {
            false
        }
    }

    fn value(&mut self) -> Result<String, String> {
        self.space();
        let c = self
            .rest()
            .chars()
            .next()
            .ok_or_else(|| "an empty expression".to_string())?;
        match c {
            '\'' | '"' => return self.string(),
            '[' | '(' | '{' => {}
            _ => return self.atom(),
        }
        if self.depth == MAX_NESTING {
            return Err(format!(
                "the literal nests brackets more than {MAX_NESTING} deep (Python's limit)"
            ));
        }
        self.depth += 1;
        let value = match c {
            '[' => self
                .sequence('[', ']')
                .map(|items| format!("[{}]", items.join(", "))),
            '(' => self.sequence('(', ')').map(|items| match items.len() {
                1 if self.text[..self.at].trim_end().ends_with(",)") => format!("({},)", items[0]),
                1 => items[0].clone(),
                _ => format!("({})", items.join(", ")),
            }),
            _ => self.braces(),
        };
        self.depth -= 1;
        value
    }

    fn sequence(&mut self, open: char, close: char) -> Result<Vec<String>, String> {
        self.eat(&open.to_string());
        let mut items = Vec::new();
        loop {
            if self.eat(&close.to_string()) {
                return Ok(items);
            }
            items.push(self.value()?);
            if !self.eat(",") {
                return if self.eat(&close.to_string()) {
                    Ok(items)
                } else {
                    self.fail()
                };
            }
        }
    }

    fn braces(&mut self) -> Result<String, String> {
        self.eat("{");
        if self.eat("}") {
            return Ok("{}".into());
        }
        let first = self.value()?;
        if self.eat(":") {
            let mut pairs = vec![(first, self.value()?)];
            while self.eat(",") {
                if self.rest().trim_start().starts_with('}') {
                    break;
                }
                let key = self.value()?;
                if !self.eat(":") {
                    return self.fail();
                }
                let value = self.value()?;
                // A repeated key keeps its first place and takes the last value.
                match pairs.iter_mut().find(|(k, _)| *k == key) {
                    Some(pair) => pair.1 = value,
                    None => pairs.push((key, value)),
                }
            }
            // Keys of other kinds than str and int may be equal under other reprs
            // (`1`, `1.0`, `True`): which one Python keeps the text cannot say.
            let plain = |k: &String| k.starts_with(['\'', '"']) || k.parse::<i128>().is_ok();
            if pairs.len() > 1 && !pairs.iter().all(|(k, _)| plain(k)) {
                self.unordered = true;
            }
            let pairs: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}: {v}")).collect();
            return if self.eat("}") {
                Ok(format!("{{{}}}", pairs.join(", ")))
            } else {
                self.fail()
            };
        }
        let mut items = vec![first];
        while self.eat(",") {
            if self.rest().trim_start().starts_with('}') {
                break;
            }
            items.push(self.value()?);
        }
        if !self.eat("}") {
            return self.fail();
        }
        // Small non-negative ints iterate in order; other sets keep the written order,
        // which Python's may not be (`{1, 8, 9}` prints `{8, 1, 9}`).
        if items.iter().all(|i| i.parse::<u32>().is_ok_and(|n| n < 8)) {
            items.sort_by_key(|i| i.parse::<u32>().unwrap_or(0));
        } else if items.len() > 1 {
            self.unordered = true;
        }
        items.dedup();
        Ok(format!("{{{}}}", items.join(", ")))
    }

    fn string(&mut self) -> Result<String, String> {
        let quote = self.rest().chars().next().unwrap_or('"');
        let mut value = String::new();
        let mut chars = self.rest()[1..].char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => match chars.next().map(|(_, e)| e) {
                    Some('n') => value.push('\n'),
                    Some('t') => value.push('\t'),
                    Some('r') => value.push('\r'),
                    Some('0') => value.push('\0'),
                    Some(e @ ('\\' | '\'' | '"')) => value.push(e),
                    _ => return self.fail(),
                },
                c if c == quote => {
                    self.at += 1 + i + 1;
                    return Ok(python_str_repr(&value));
                }
                c => value.push(c),
            }
        }
        self.fail()
    }

    fn atom(&mut self) -> Result<String, String> {
        let len = self
            .rest()
            .find(|c: char| !(c.is_alphanumeric() || matches!(c, '.' | '_' | '-' | '+')))
            .unwrap_or(self.rest().len());
        let word = self.rest()[..len].to_string();
        self.at += len;
        match word.as_str() {
            "True" | "False" | "None" => return Ok(word),
            _ => {}
        }
        let digits = word.replace('_', "");
        if let Ok(n) = digits.parse::<i128>() {
            return Ok(n.to_string());
        }
        match digits.parse::<f64>() {
            Ok(x) if x.is_finite() && digits.chars().any(|c| c.is_ascii_digit()) => {
                Ok(python_float_repr(x))
            }
            _ => self.fail(),
        }
    }
}

/// Python's `repr` of a str: single quotes unless the text has one and no double.
pub fn python_str_repr(value: &str) -> String {
    let quote = if value.contains('\'') && !value.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::from(quote);
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// Python's `repr` of a float (shortest round-trip digits; exponent outside 1e-4..1e16).
fn python_float_repr(x: f64) -> String {
    if x == 0.0 {
        return if x.is_sign_negative() {
            "-0.0".into()
        } else {
            "0.0".into()
        };
    }
    let exponent = x.abs().log10().floor() as i32;
    if (-4..16).contains(&exponent) {
        let text = format!("{x}");
        if text.contains('.') {
            text
        } else {
            format!("{text}.0")
        }
    } else {
        let text = format!("{x:e}"); // 1e20, 1.5e-7
        let (mantissa, exp) = text.split_once('e').unwrap_or((&text, "0"));
        let exp: i32 = exp.parse().unwrap_or(0);
        format!(
            "{mantissa}e{}{:02}",
            if exp < 0 { '-' } else { '+' },
            exp.abs()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_state_is_called_again_with_its_own_arguments() {
        let source = "def f(a, b=2, *rest, key, **more):\n    pass\nclass C:\n    def m(self):\n        pass\n";
        let locals: crate::state::Vars = [
            ("a", "[1]"),
            ("b", "'x'"),
            ("rest", "(3,)"),
            ("key", "None"),
            ("more", "{}"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        assert_eq!(
            call_expression(source, 1, "f", &locals).as_deref(),
            Some("f([1], 'x', *(3,), key=None, **{})")
        );
        let mut short = locals.clone();
        short.shift_remove("key");
        assert_eq!(
            call_expression(source, 1, "f", &short),
            None,
            "a parameter without a value"
        );
        assert_eq!(call_expression(source, 4, "m", &locals), None, "a method");
        let keyword = "def g(x, *, y):\n    pass\n";
        let bound = [("x", "1"), ("y", "2")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        assert_eq!(
            call_expression(keyword, 1, "g", &bound).as_deref(),
            Some("g(1, y=2)")
        );
    }

    #[test]
    fn a_loop_yields_items_keys_characters_and_numbers() {
        let of = |repr: &str| elements(repr).map(|e| e.join(" "));
        assert_eq!(
            of("[1, 'a, b', [2, 3]]").as_deref(),
            Some("1 'a, b' [2, 3]")
        );
        assert_eq!(of("{'k': 1, 'v': [2]}").as_deref(), Some("'k' 'v'"));
        assert_eq!(of("\"it's\"").as_deref(), Some("'i' 't' \"'\" 's'"));
        assert_eq!(of("range(1, 7, 2)").as_deref(), Some("1 3 5"));
        assert_eq!(of("range(3, 0, -1)").as_deref(), Some("3 2 1"));
        assert_eq!(of("range(0)").as_deref(), Some(""));
        assert_eq!(of("[1, 2, …"), None);
        assert_eq!(of("Point(1, 2)"), None);
        assert_eq!(of("'é'").as_deref(), Some("'é'"));
        // Garbage (a prediction, a fuzzer's input) gets no elements, not a panic.
        for garbage in [
            "'",
            "'é",
            "\"'",
            "range(-9223372036854775808, 9223372036854775807)",
        ] {
            assert_eq!(of(garbage), None, "{garbage}");
        }
    }

    #[test]
    fn literals_print_as_python_prints_them() {
        let cases = [
            ("[1,2, 3]", "[1, 2, 3]"),
            ("(1,)", "(1,)"),
            ("(1)", "1"),
            ("()", "()"),
            ("{'a':1, \"b\": [2]}", "{'a': 1, 'b': [2]}"),
            ("{3, 1, 2}", "{1, 2, 3}"),
            ("\"it's\"", "\"it's\""),
            ("'a\\nb'", "'a\\nb'"),
            ("-4", "-4"),
            ("1_000", "1000"),
            ("2.50", "2.5"),
            ("1e3", "1000.0"),
            ("1e20", "1e+20"),
            ("True", "True"),
            ("None", "None"),
            ("[[], {}, ('x', -1.5)]", "[[], {}, ('x', -1.5)]"),
        ];
        for (expr, repr) in cases {
            assert_eq!(literal_repr(expr).as_deref(), Ok(repr), "{expr}");
        }
        assert!(literal_repr("x + 1").is_err());
        // Sets: small ints sorted as Python iterates them; others kept as written but
        // not exact.
        assert_eq!(
            exact_literal_repr("{3, 1, 2}").as_deref(),
            Some("{1, 2, 3}")
        );
        assert_eq!(literal_repr("{1, 8, 9}").as_deref(), Ok("{1, 8, 9}"));
        assert_eq!(exact_literal_repr("{1, 8, 9}"), None);
        assert_eq!(exact_literal_repr("[{'a', 'b'}]"), None);
        assert_eq!(exact_literal_repr("{'a'}").as_deref(), Some("{'a'}"));
        assert!(literal_repr("f(2)").is_err());
        // Dicts: a repeated key keeps its place and takes the last value; keys that
        // may be equal under other reprs make the text inexact.
        assert_eq!(
            exact_literal_repr("{'x': 7, 'z': 2, 'x': 1}").as_deref(),
            Some("{'x': 1, 'z': 2}")
        );
        assert_eq!(
            exact_literal_repr("{1: 'a', 2: 'b'}").as_deref(),
            Some("{1: 'a', 2: 'b'}")
        );
        assert_eq!(exact_literal_repr("{1: 'a', 1.0: 'b'}"), None);
        assert_eq!(
            exact_literal_repr("{(1, 2): 0}").as_deref(),
            Some("{(1, 2): 0}")
        );
    }

    #[test]
    fn deep_literals_are_refused_not_a_stack_overflow() {
        let nested = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(
            literal_repr(&nested(MAX_NESTING)).is_ok(),
            "Python reads 200 levels"
        );
        assert!(literal_repr(&format!("[{}]", nested(MAX_NESTING))).is_err());
        let deep = nested(5_000);
        let refused = literal_repr(&deep).unwrap_err();
        assert!(refused.contains("more than 200 deep"), "{refused}");
        let source = "def f(a):\n    return a\n";
        let refused = entry_state(source, Some(&format!("f({deep})"))).unwrap_err();
        assert!(refused.contains("more than 200 deep"), "{refused}");
    }

    #[test]
    fn parameter_names_come_from_the_def_line() {
        let source =
            "x = 1\n    async def f(a, b: int = 2, *args,\n        c=(1, 2), **kw) -> int:\n";
        assert_eq!(
            parameter_names(source, 2).unwrap(),
            vec!["a", "b", "c", "args", "kw"]
        );
        assert_eq!(parameter_names(source, 1), None);
        assert_eq!(
            parameter_names("def g():\n", 1).unwrap(),
            Vec::<String>::new()
        );
        assert_eq!(
            parameter_names("def h(a, /, b, *, c):\n", 1).unwrap(),
            vec!["a", "b", "c"]
        );
        let commented = "def k(\n    volts: float,  # in volts, say\n    ohms=(1, 2),  # )\n):\n";
        assert_eq!(
            parameter_names(commented, 1).unwrap(),
            vec!["volts", "ohms"]
        );
    }

    #[test]
    fn arguments_bind_like_python() {
        let source = "LIMIT = 3\n\ndef f(a, b=2, *rest, key=None, **more):\n    return a\n";
        let state = entry_state(source, Some("f(1, 5, 6, key='k', z=0)")).unwrap();
        let locals: Vec<(&str, &str)> = state
            .locals
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            locals,
            vec![
                ("a", "1"),
                ("b", "5"),
                ("rest", "(6,)"),
                ("key", "'k'"),
                ("more", "{'z': 0}")
            ]
        );
        assert_eq!(
            (state.event, state.line, state.function.as_str()),
            (Event::Call, 3, "f")
        );
        assert_eq!(state.globals.get("LIMIT").map(String::as_str), Some("3"));
        assert!(entry_state(source, Some("g(1)"))
            .unwrap_err()
            .contains("no top-level function g"));
        assert!(entry_state(source, Some("f()"))
            .unwrap_err()
            .contains("parameter a"));
        assert!(entry_state(source, Some("f(x)"))
            .unwrap_err()
            .contains("literal"));
    }

    #[test]
    fn a_script_starts_at_its_first_line_of_code() {
        let state = entry_state("# comment\n\nx = 1\n", None).unwrap();
        assert_eq!(
            (state.event, state.line, state.function.as_str()),
            (Event::Line, 3, "<module>")
        );
    }
}
