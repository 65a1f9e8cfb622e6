//! Whole-number arithmetic over literals and names whose values the state shows:
//! `a + b`, `n // 2`, `3 * (i - 1) % k`. What Python gives there is certain, so the
//! grammar can hold a prediction to it. Anything else (a call, an attribute, a float,
//! a string, a division by zero) is not worked out.

/// The value of `expr` if it is whole-number arithmetic (see [`Arithmetic::of`]) of
/// names that `value_of` gives an integer repr.
pub fn whole_number(expr: &str, value_of: &dyn Fn(&str) -> Option<String>) -> Option<i128> {
    Arithmetic::of(expr)?.value(value_of)
}

/// A parsed whole-number expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Arithmetic {
    Number(i128),
    Name(String),
    Negative(Box<Arithmetic>),
    Apply(Op, Box<Arithmetic>, Box<Arithmetic>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Add,
    Subtract,
    Multiply,
    FloorDivide,
    Modulo,
}

impl Arithmetic {
    /// `expr` if it is `+ - * // %`, unary minus and parentheses over decimal
    /// integer literals and plain names.
    pub fn of(expr: &str) -> Option<Arithmetic> {
        let mut parser = Parser {
            text: expr.as_bytes(),
            at: 0,
        };
        let parsed = parser.sum()?;
        parser.space();
        (parser.at == parser.text.len()).then_some(parsed)
    }

    /// Its value as Python gives it, where `value_of` gives each name an integer
    /// repr; `None` on a division by zero or past 128 bits.
    pub fn value(&self, value_of: &dyn Fn(&str) -> Option<String>) -> Option<i128> {
        match self {
            Arithmetic::Number(n) => Some(*n),
            Arithmetic::Name(name) => integer(&value_of(name)?),
            Arithmetic::Negative(inner) => inner.value(value_of)?.checked_neg(),
            Arithmetic::Apply(op, a, b) => {
                let (a, b) = (a.value(value_of)?, b.value(value_of)?);
                match op {
                    Op::Add => a.checked_add(b),
                    Op::Subtract => a.checked_sub(b),
                    Op::Multiply => a.checked_mul(b),
                    Op::FloorDivide => floor_div(a, b),
                    Op::Modulo => floor_mod(a, b),
                }
            }
        }
    }
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
        self.atom()
    }

    fn atom(&mut self) -> Option<Arithmetic> {
        if self.eat("(") {
            let inner = self.sum()?;
            return self.eat(")").then_some(inner);
        }
        self.space();
        let start = self.at;
        let word = |c: &u8| c.is_ascii_alphanumeric() || *c == b'_';
        while self.text.get(self.at).is_some_and(word) {
            self.at += 1;
        }
        let token = std::str::from_utf8(&self.text[start..self.at]).ok()?;
        // A call, attribute or subscript of the word is not arithmetic.
        self.space();
        if self.text.get(self.at).is_some_and(|c| b"([.".contains(c)) {
            return None;
        }
        match token.as_bytes().first()? {
            b'0'..=b'9' => integer(token).map(Arithmetic::Number),
            _ if crate::program::layout::is_name(token) => {
                Some(Arithmetic::Name(token.to_string()))
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
fn floor_div(a: i128, b: i128) -> Option<i128> {
    let q = a.checked_div(b)?;
    let inexact = a % b != 0;
    Some(if inexact && (a < 0) != (b < 0) {
        q - 1
    } else {
        q
    })
}

/// Python's `a % b`: takes the sign of `b`.
fn floor_mod(a: i128, b: i128) -> Option<i128> {
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
            _ => None,
        };
        whole_number(expr, &shown)
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
            "b ** 2",
            "s + s",
            "t + 1",
            "c + 1",
            "len(a)",
            "a.real",
            "xs[0]",
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
