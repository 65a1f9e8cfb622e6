//! Whole-number arithmetic over literals and names whose values the state shows:
//! `a + b`, `n // 2`, `3 * (i - 1) % k`, `2 ** k`, `len(xs) - 1`, `abs(d)`. What Python
//! gives there is certain, so the grammar can hold a prediction to it. Anything else
//! (another call, an attribute, a float, a string, a division by zero) is not worked
//! out.

use super::known::Scope;

/// The value of `expr` if it is whole-number arithmetic (see [`Arithmetic::of`]) of
/// names the scope gives an integer repr.
pub fn whole_number(expr: &str, scope: &Scope) -> Option<i128> {
    Arithmetic::of(expr)?.value(scope)
}

/// A parsed whole-number expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Arithmetic {
    Number(i128),
    Float(f64),
    Name(String),
    Negative(Box<Arithmetic>),
    Apply(Op, Box<Arithmetic>, Box<Arithmetic>),
    /// `len(X)` (X's text).
    Len(String),
    /// `abs(X)`.
    Abs(Box<Arithmetic>),
    /// An operand that [`super::known::repr_of`] works out: an item (`xs[i]`), a call
    /// of a builtin (`max(a, b)`), a method of a string (`w.find('e')`).
    Operand(String),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Add,
    Subtract,
    Multiply,
    FloorDivide,
    Modulo,
    Power,
    /// `/`, Python's true division (always a float).
    Divide,
}

impl Arithmetic {
    /// `expr` if it is `+ - * // % **`, unary minus and parentheses over decimal
    /// integer literals, plain names, `len(...)` and `abs(...)`.
    pub fn of(expr: &str) -> Option<Arithmetic> {
        let mut parser = Parser {
            text: expr.as_bytes(),
            at: 0,
        };
        let parsed = parser.sum()?;
        parser.space();
        // A lone operand is no arithmetic (and working it out here would come back).
        let lone = matches!(parsed, Arithmetic::Operand(_));
        (parser.at == parser.text.len() && !lone).then_some(parsed)
    }

    /// Its value as Python gives it, where the scope gives each name an integer repr
    /// (and `len` and `abs` are the builtins); `None` for a float, on a division by
    /// zero, or past 128 bits.
    pub fn value(&self, scope: &Scope) -> Option<i128> {
        match self.number(scope)? {
            Number::Int(n) => Some(n),
            Number::Float(_) => None,
        }
    }

    /// Its value, a whole number or a float, as Python gives it; `None` where Python
    /// would raise or the reprs do not settle it (a float's `//`, `%` or `**`, whose
    /// corner cases are Python's own, are not worked out).
    pub fn number(&self, scope: &Scope) -> Option<Number> {
        match self {
            Arithmetic::Number(n) => Some(Number::Int(*n)),
            Arithmetic::Float(x) => Some(Number::Float(*x)),
            Arithmetic::Name(name) => Number::of_repr(&(scope.value_of)(name)?),
            Arithmetic::Negative(inner) => match inner.number(scope)? {
                Number::Int(n) => n.checked_neg().map(Number::Int),
                Number::Float(x) => Some(Number::Float(-x)),
            },
            Arithmetic::Len(arg) if (scope.builtin)("len") => {
                let repr = super::known::repr_of(arg, scope)?;
                let len = match repr.as_str() {
                    "set()" => 0,
                    _ => crate::entry::elements(&repr)?.len(),
                };
                Some(Number::Int(len as i128))
            }
            Arithmetic::Operand(text) => Number::of_repr(&super::known::repr_of(text, scope)?),
            Arithmetic::Abs(inner) if (scope.builtin)("abs") => match inner.number(scope)? {
                Number::Int(n) => n.checked_abs().map(Number::Int),
                Number::Float(x) => Some(Number::Float(x.abs())),
            },
            Arithmetic::Len(_) | Arithmetic::Abs(_) => None,
            Arithmetic::Apply(op, a, b) => match (a.number(scope)?, b.number(scope)?) {
                (Number::Int(a), Number::Int(b)) => match op {
                    Op::Add => a.checked_add(b),
                    Op::Subtract => a.checked_sub(b),
                    Op::Multiply => a.checked_mul(b),
                    Op::FloorDivide => floor_div(a, b),
                    Op::Modulo => floor_mod(a, b),
                    Op::Power => a.checked_pow(u32::try_from(b).ok()?),
                    Op::Divide => {
                        let (a, b) = (Number::Int(a).float()?, Number::Int(b).float()?);
                        return (b != 0.0)
                            .then(|| Number::Float(a / b))
                            .filter(Number::finite);
                    }
                }
                .map(Number::Int),
                (a, b) => {
                    let (a, b) = (a.float()?, b.float()?);
                    let x = match op {
                        Op::Add => a + b,
                        Op::Subtract => a - b,
                        Op::Multiply => a * b,
                        Op::Divide if b != 0.0 => a / b,
                        _ => return None,
                    };
                    Some(Number::Float(x)).filter(Number::finite)
                }
            },
        }
    }
}

/// A value of Python's `int` or `float`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Number {
    Int(i128),
    Float(f64),
}

impl Number {
    /// The number a repr shows: a decimal integer, or a float as Python writes one.
    pub fn of_repr(repr: &str) -> Option<Number> {
        if let Some(n) = integer(repr) {
            return Some(Number::Int(n));
        }
        let float_like = repr.contains(['.', 'e'])
            && repr
                .bytes()
                .all(|c| c.is_ascii_digit() || b".e+-".contains(&c));
        float_like
            .then(|| repr.parse().ok().map(Number::Float))?
            .filter(Number::finite)
    }

    /// As a float, where that is exact for a whole number (within 2^53) as Python's
    /// mixed arithmetic needs.
    pub fn float(self) -> Option<f64> {
        match self {
            Number::Float(x) => Some(x),
            Number::Int(n) if n.unsigned_abs() <= 1 << 53 => Some(n as f64),
            Number::Int(_) => None,
        }
    }

    fn finite(&self) -> bool {
        !matches!(self, Number::Float(x) if !x.is_finite())
    }

    /// Python's repr; `None` for a float Python writes with an exponent.
    pub fn repr(self) -> Option<String> {
        match self {
            Number::Int(n) => Some(n.to_string()),
            Number::Float(x) => float_repr(x),
        }
    }
}

/// Python's repr of a float, where it has no exponent (1e-4 <= |x| < 1e16, or zero):
/// there the shortest round-trip digits, which Rust's `Debug` writes too, read the
/// same.
pub fn float_repr(x: f64) -> Option<String> {
    let plain = x == 0.0 || (1e-4..1e16).contains(&x.abs());
    (x.is_finite() && plain).then(|| format!("{x:?}"))
}

struct Parser<'a> {
    text: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn space(&mut self) {
        while self.text.get(self.at).is_some_and(|c| *c == b' ') {
            self.at += 1;
        }
    }

    /// Takes `op` if the text goes on with it (and not with a longer operator).
    fn eat(&mut self, op: &str) -> bool {
        self.space();
        let rest = &self.text[self.at..];
        let longer = rest.get(op.len()).is_some_and(|c| b"=*/".contains(c));
        if rest.starts_with(op.as_bytes()) && !longer {
            self.at += op.len();
            return true;
        }
        false
    }

    /// The first of `ops` the text goes on with.
    fn operator(&mut self, ops: &[(&str, Op)]) -> Option<Op> {
        ops.iter()
            .find(|(text, _)| self.eat(text))
            .map(|(_, op)| *op)
    }

    fn sum(&mut self) -> Option<Arithmetic> {
        let mut left = self.product()?;
        while let Some(op) = self.operator(&[("+", Op::Add), ("-", Op::Subtract)]) {
            left = Arithmetic::Apply(op, Box::new(left), Box::new(self.product()?));
        }
        Some(left)
    }

    fn product(&mut self) -> Option<Arithmetic> {
        let ops = [
            ("*", Op::Multiply),
            ("//", Op::FloorDivide),
            ("%", Op::Modulo),
            ("/", Op::Divide),
        ];
        let mut left = self.unary()?;
        while let Some(op) = self.operator(&ops) {
            left = Arithmetic::Apply(op, Box::new(left), Box::new(self.unary()?));
        }
        Some(left)
    }

    fn unary(&mut self) -> Option<Arithmetic> {
        if self.eat("-") {
            return Some(Arithmetic::Negative(Box::new(self.unary()?)));
        }
        if self.eat("+") {
            return self.unary();
        }
        self.power()
    }

    /// `**` binds tighter than a unary minus on its left (`-2 ** 2` is -4), looser
    /// on its right (`2 ** -1`).
    fn power(&mut self) -> Option<Arithmetic> {
        let base = self.atom()?;
        if self.eat("**") {
            let exponent = self.unary()?;
            return Some(Arithmetic::Apply(
                Op::Power,
                Box::new(base),
                Box::new(exponent),
            ));
        }
        Some(base)
    }

    fn atom(&mut self) -> Option<Arithmetic> {
        if self.eat("(") {
            let inner = self.sum()?;
            return self.eat(")").then_some(inner);
        }
        self.space();
        let start = self.at;
        let rest = std::str::from_utf8(&self.text[start..]).ok()?;
        match rest.as_bytes().first()? {
            // A string literal or a display begins an operand too: `'ab'.find(c)`.
            b'\'' | b'"' => {
                let end = super::lexer::chars(rest)
                    .find(|ch| ch.kind == super::lexer::Kind::Code)
                    .map_or(rest.len(), |ch| ch.at);
                self.at += end;
            }
            b'[' | b'{' => self.at += super::lexer::closing_bracket(&rest[1..])? + 2,
            _ => {
                let word = |c: &u8| c.is_ascii_alphanumeric() || *c == b'_';
                while self.text.get(self.at).is_some_and(word) {
                    self.at += 1;
                }
            }
        }
        let token = std::str::from_utf8(&self.text[start..self.at]).ok()?;
        self.space();
        if ["len", "abs"].contains(&token) && self.text.get(self.at) == Some(&b'(') {
            return self.call(token);
        }
        // Calls, items and attributes after it: `xs[i]`, `max(a, b)`, `w.count('a')`.
        let mut trailed = false;
        loop {
            let rest = std::str::from_utf8(&self.text[self.at..]).ok()?;
            let attribute = rest
                .strip_prefix('.')
                .filter(|name| name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'));
            match rest.as_bytes().first() {
                Some(b'(' | b'[') => self.at += super::lexer::closing_bracket(&rest[1..])? + 2,
                _ if attribute.is_some() => {
                    let name = attribute?;
                    let len = name
                        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                        .unwrap_or(name.len());
                    self.at += 1 + len;
                }
                _ => break,
            }
            trailed = true;
        }
        let text = std::str::from_utf8(&self.text[start..self.at]).ok()?;
        match token.as_bytes().first()? {
            _ if trailed || text.starts_with(['\'', '"', '[', '{']) => {
                Some(Arithmetic::Operand(text.trim_end().to_string()))
            }
            b'0'..=b'9' => self.number_literal(start, token),
            _ if crate::program::layout::is_name(token) => {
                Some(Arithmetic::Name(token.to_string()))
            }
            _ => None,
        }
    }
}

impl Parser<'_> {
    /// A decimal integer literal, or a float literal (`2.5`, `1e3`, `.5` is not one
    /// here) whose fraction and exponent follow `token`.
    fn number_literal(&mut self, start: usize, token: &str) -> Option<Arithmetic> {
        let rest = std::str::from_utf8(&self.text[self.at..]).ok()?;
        let exponent = token.contains(['e', 'E']);
        if rest.starts_with('.') || exponent {
            let digits = |c: char| c.is_ascii_digit() || "eE_".contains(c);
            let mut end = self.at;
            if let Some(fraction) = rest.strip_prefix('.') {
                end += 1 + fraction
                    .find(|c: char| !digits(c))
                    .unwrap_or(fraction.len());
            }
            // An exponent's sign: `1e-5`.
            let mut literal = std::str::from_utf8(&self.text[start..end])
                .ok()?
                .to_string();
            let after = std::str::from_utf8(&self.text[end..]).ok()?;
            if literal.ends_with(['e', 'E']) && after.starts_with(['+', '-']) {
                let more = after[1..]
                    .find(|c: char| !c.is_ascii_digit())
                    .unwrap_or(after.len() - 1);
                literal.push_str(&after[..1 + more]);
                end += 1 + more;
            }
            self.at = end;
            self.space();
            let x: f64 = literal.replace('_', "").parse().ok()?;
            return Some(Arithmetic::Float(x)).filter(|_| x.is_finite());
        }
        integer(token).map(Arithmetic::Number)
    }

    /// `len(...)` or `abs(...)`, the opening bracket next; no other call.
    fn call(&mut self, function: &str) -> Option<Arithmetic> {
        self.at += 1;
        match function {
            "abs" => {
                let inner = self.sum()?;
                self.eat(")").then(|| Arithmetic::Abs(Box::new(inner)))
            }
            "len" => {
                let rest = std::str::from_utf8(&self.text[self.at..]).ok()?;
                let close = super::lexer::closing_bracket(rest)?;
                self.at += close + 1;
                Some(Arithmetic::Len(rest[..close].trim().to_string()))
            }
            _ => None,
        }
    }
}

/// A decimal integer literal or repr (`12`, `1_000`, `-3`); not `True` or `0x1f`.
fn integer(text: &str) -> Option<i128> {
    let digits = text.trim().replace('_', "");
    let unsigned = digits.strip_prefix('-').unwrap_or(&digits);
    let leading_zero = unsigned.len() > 1 && unsigned.starts_with('0');
    if unsigned.is_empty() || leading_zero || !unsigned.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Python's `a // b`: rounds towards minus infinity.
pub(super) fn floor_div(a: i128, b: i128) -> Option<i128> {
    let q = a.checked_div(b)?;
    let inexact = a % b != 0;
    Some(if inexact && (a < 0) != (b < 0) {
        q - 1
    } else {
        q
    })
}

/// Python's `a % b`: takes the sign of `b`.
pub(super) fn floor_mod(a: i128, b: i128) -> Option<i128> {
    let r = a.checked_rem(b)?;
    Some(if r != 0 && (r < 0) != (b < 0) {
        r + b
    } else {
        r
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(expr: &str) -> Option<i128> {
        let shown = |name: &str| match name {
            "a" => Some("0".to_string()),
            "b" => Some("1".to_string()),
            "n" => Some("-7".to_string()),
            "s" => Some("'x'".to_string()),
            "t" => Some("True".to_string()),
            "xs" => Some("[1, [2, 3], 'a, b']".to_string()),
            _ => None,
        };
        let scope = Scope {
            value_of: &shown,
            builtin: &|name| name != "abs",
        };
        whole_number(expr, &scope)
    }

    #[test]
    fn powers_and_lengths() {
        assert_eq!(eval("2 ** 10"), Some(1024));
        assert_eq!(eval("-2 ** 2"), Some(-4));
        assert_eq!(eval("2 ** 3 ** 2"), Some(512));
        assert_eq!(eval("len(xs) - 1"), Some(2));
        assert_eq!(eval("len('abc') * len(s)"), Some(3));
        assert_eq!(eval("2 ** -1"), None, "a float");
        assert_eq!(eval("abs(n)"), None, "the program's own abs");
        assert_eq!(eval("len(ys)"), None);
        assert_eq!(eval("max(a, b)"), None);
    }

    #[test]
    fn sums_products_and_precedence() {
        assert_eq!(eval("a + b"), Some(1));
        assert_eq!(eval("3 * (b + 2) - 1"), Some(8));
        assert_eq!(eval("2 + 3 * 4"), Some(14));
        assert_eq!(eval("-n"), Some(7));
        assert_eq!(eval("1_000 - 1"), Some(999));
    }

    #[test]
    fn floor_division_and_modulo_as_python() {
        assert_eq!(eval("n // 2"), Some(-4));
        assert_eq!(eval("n % 3"), Some(2));
        assert_eq!(eval("7 // -2"), Some(-4));
        assert_eq!(eval("7 % -2"), Some(-1));
        assert_eq!(eval("6 // 3"), Some(2));
    }

    #[test]
    fn parsed_before_it_is_worked_out() {
        assert!(Arithmetic::of("b % a").is_some(), "the text is arithmetic");
        assert!(
            Arithmetic::of("True + 1").is_some(),
            "True is a name to the parser"
        );
        assert!(Arithmetic::of("a and b").is_none());
    }

    #[test]
    fn nothing_but_whole_numbers() {
        for expr in [
            "b / 2",
            "s + s",
            "t + 1",
            "c + 1",
            "len(a)",
            "a.real",
            "b // 0",
            "b % a",
            "0x1f",
            "1.5 + b",
            "a +",
            "(a",
            "a == b",
            "a += 1",
            "a if b else 1",
        ] {
            assert_eq!(eval(expr), None, "{expr}");
        }
    }
}
