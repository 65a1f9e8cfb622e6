//! Read back the `repr()` strings the tracer recorded (or a model predicted), so that
//! containers and objects can be expanded into children in the variables view, and
//! the items a loop over a value yields can be known.
//!
//! Handles what the tracer writes: literals, lists, tuples, dicts, sets, frozensets,
//! objects as `Name(field=value, ...)` and `<...>` placeholders. A repr cut at the
//! tracer's length limit (ending in `…`) is shown whole but not expanded: its parts
//! cannot all be known. Anything else is an atom: shown, never expanded. So is a
//! value nested deeper than Python's 200 brackets: the parser recurses, and a
//! hostile repr must not overflow the stack.

use crate::entry::MAX_NESTING;

/// A parsed repr: its text and, for containers and objects, its parts.
#[derive(Clone, Debug, PartialEq)]
pub struct Repr {
    pub text: String,
    pub kind: Kind,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    Atom,
    List(Vec<Repr>),
    Tuple(Vec<Repr>),
    /// A set or a frozenset.
    Set(Vec<Repr>),
    Dict(Vec<(Repr, Repr)>),
    /// An object shown with keyword fields, `Point(x=1, y=2)`.
    Object(Vec<(String, Repr)>),
}

/// How to reach a child from its parent in an expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Access {
    Index(usize),
    Key(String),
    Field(String),
    /// Set members cannot be named in Python.
    None,
}

/// One child of an expanded value.
#[derive(Clone, Debug, PartialEq)]
pub struct Child {
    /// The name shown: `0`, `'key'`, `field`.
    pub name: String,
    pub access: Access,
    pub value: Repr,
}

impl Repr {
    /// Parse `text` (never fails: what cannot be read is an atom).
    pub fn parse(text: &str) -> Repr {
        let mut parser = Parser {
            s: text.as_bytes(),
            text,
            i: 0,
            depth: 0,
        };
        match parser.value() {
            Some(repr) if parser.rest_is_blank() => repr,
            _ => Repr {
                text: text.to_string(),
                kind: Kind::Atom,
            },
        }
    }

    /// The children of a container or object (empty for atoms).
    pub fn children(&self) -> Vec<Child> {
        let indexed = |items: &Vec<Repr>, access: fn(usize) -> Access| {
            items
                .iter()
                .enumerate()
                .map(|(i, v)| Child {
                    name: i.to_string(),
                    access: access(i),
                    value: v.clone(),
                })
                .collect()
        };
        match &self.kind {
            Kind::Atom => Vec::new(),
            Kind::List(items) | Kind::Tuple(items) => indexed(items, Access::Index),
            Kind::Set(items) => indexed(items, |_| Access::None),
            Kind::Dict(entries) => entries
                .iter()
                .map(|(k, v)| Child {
                    name: k.text.clone(),
                    access: Access::Key(k.text.clone()),
                    value: v.clone(),
                })
                .collect(),
            Kind::Object(fields) => fields
                .iter()
                .map(|(k, v)| Child {
                    name: k.clone(),
                    access: Access::Field(k.clone()),
                    value: v.clone(),
                })
                .collect(),
        }
    }

    pub fn is_expandable(&self) -> bool {
        !self.children().is_empty()
    }
}

/// The Python type name a repr shows, where it can be told (`None` otherwise).
pub fn type_name(text: &str) -> Option<String> {
    let t = text.trim();
    let name = match t.as_bytes().first()? {
        b'[' => "list",
        b'\'' | b'"' => "str",
        b'{' => match Repr::parse(t).kind {
            Kind::Set(_) => "set",
            _ => "dict",
        },
        b'(' => match Repr::parse(t).kind {
            Kind::Tuple(_) => "tuple",
            _ if t.ends_with("j)") => "complex",
            _ => return None,
        },
        b'<' => {
            let inner = t.trim_start_matches('<');
            let mut words = inner.split([' ', '>']);
            let first = words.next()?;
            return match first {
                "function" | "class" | "module" | "generator" => {
                    Some(if first == "class" { "type" } else { first }.to_string())
                }
                _ if words.next() == Some("object") => Some(first.to_string()),
                _ => None,
            };
        }
        _ if t == "True" || t == "False" => "bool",
        _ if t == "None" => "NoneType",
        _ if t.starts_with("b'") || t.starts_with("b\"") => "bytes",
        _ if t.starts_with("frozenset(") => "frozenset",
        _ if t == "set()" => "set",
        _ if t.parse::<i128>().is_ok() || is_int(t) => "int",
        _ if t.parse::<f64>().is_ok() => "float",
        _ if t.ends_with('j') && t.trim_end_matches('j').parse::<f64>().is_ok() => "complex",
        _ => {
            let head = t.split('(').next()?;
            let head = head.rsplit('.').next()?;
            if t.contains('(')
                && !head.is_empty()
                && head.chars().all(|c| c.is_alphanumeric() || c == '_')
            {
                return Some(head.to_string());
            }
            return None;
        }
    };
    Some(name.to_string())
}

fn is_int(t: &str) -> bool {
    let digits = t.strip_prefix('-').unwrap_or(t);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

struct Parser<'a> {
    s: &'a [u8],
    text: &'a str,
    i: usize,
    /// How many values are being read at once (one per open container).
    depth: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\n' | b'\t')) {
            self.i += 1;
        }
    }

    fn rest_is_blank(&mut self) -> bool {
        self.skip_ws();
        self.i >= self.s.len()
    }

    fn eat(&mut self, byte: u8) -> bool {
        self.skip_ws();
        if self.peek() == Some(byte) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn repr(&self, start: usize, kind: Kind) -> Repr {
        Repr {
            text: self.text[start..self.i].trim().to_string(),
            kind,
        }
    }

    fn value(&mut self) -> Option<Repr> {
        if self.depth > MAX_NESTING {
            return None;
        }
        self.depth += 1;
        let value = self.one_value();
        self.depth -= 1;
        value
    }

    fn one_value(&mut self) -> Option<Repr> {
        self.skip_ws();
        let start = self.i;
        match self.peek()? {
            b'[' => {
                self.i += 1;
                let items = self.items(b']')?;
                Some(self.repr(start, Kind::List(items)))
            }
            b'(' => {
                self.i += 1;
                let (items, trailing_comma) = self.items_with_comma(b')')?;
                if items.len() == 1 && !trailing_comma {
                    return Some(self.repr(start, Kind::Atom)); // parenthesised, e.g. (1+2j)
                }
                Some(self.repr(start, Kind::Tuple(items)))
            }
            b'{' => {
                self.i += 1;
                self.brace(start)
            }
            b'\'' | b'"' => {
                self.string()?;
                Some(self.repr(start, Kind::Atom))
            }
            b'<' => {
                let mut depth = 0;
                while let Some(b) = self.peek() {
                    self.i += 1;
                    match b {
                        b'<' => depth += 1,
                        b'>' => {
                            depth -= 1;
                            if depth == 0 {
                                return Some(self.repr(start, Kind::Atom));
                            }
                        }
                        _ => {}
                    }
                }
                None
            }
            _ => self.word(start),
        }
    }

    /// `{}` dict, `{k: v, ...}` dict or `{a, b}` set (the `{` is eaten).
    fn brace(&mut self, start: usize) -> Option<Repr> {
        if self.eat(b'}') {
            return Some(self.repr(start, Kind::Dict(Vec::new())));
        }
        let first = self.value()?;
        if self.eat(b':') {
            let mut entries = vec![(first, self.value()?)];
            loop {
                if self.eat(b'}') {
                    return Some(self.repr(start, Kind::Dict(entries)));
                }
                if !self.eat(b',') {
                    return None;
                }
                let key = self.value()?;
                if !self.eat(b':') {
                    return None;
                }
                entries.push((key, self.value()?));
            }
        }
        let mut items = vec![first];
        loop {
            if self.eat(b'}') {
                return Some(self.repr(start, Kind::Set(items)));
            }
            if !self.eat(b',') {
                return None;
            }
            items.push(self.value()?);
        }
    }

    fn items(&mut self, close: u8) -> Option<Vec<Repr>> {
        self.items_with_comma(close).map(|(items, _)| items)
    }

    /// Comma-separated values up to `close`; whether a comma came last.
    fn items_with_comma(&mut self, close: u8) -> Option<(Vec<Repr>, bool)> {
        let mut items = Vec::new();
        let mut trailing = false;
        loop {
            if self.eat(close) {
                return Some((items, trailing));
            }
            if !items.is_empty() && !trailing {
                return None;
            }
            items.push(self.value()?);
            trailing = self.eat(b',');
        }
    }

    fn string(&mut self) -> Option<()> {
        let quote = self.peek()?;
        self.i += 1;
        while let Some(b) = self.peek() {
            self.i += 1;
            if b == b'\\' {
                self.i += 1;
            } else if b == quote {
                return Some(());
            }
        }
        None
    }

    /// A bare word: a number, a name, `b'..'`, or a call-shaped `Name(...)`.
    fn word(&mut self, start: usize) -> Option<Repr> {
        while let Some(b) = self.peek() {
            match b {
                b',' | b':' | b')' | b']' | b'}' | b' ' | b'=' => break,
                b'\'' | b'"' => {
                    self.string()?; // b'..'
                    break;
                }
                b'(' => return self.call(start),
                _ => self.i += 1,
            }
        }
        if self.i == start {
            return None;
        }
        Some(self.repr(start, Kind::Atom))
    }

    /// `Name(...)` (the name is read): keyword fields make an object, anything else
    /// (`ValueError('x')`, `frozenset({1})`) an atom or a set.
    fn call(&mut self, start: usize) -> Option<Repr> {
        let name = &self.text[start..self.i];
        self.i += 1; // (
        if name == "frozenset" {
            let inner = self.value()?;
            if !self.eat(b')') {
                return None;
            }
            let items = match inner.kind {
                Kind::Set(items) => items,
                _ => Vec::new(),
            };
            return Some(self.repr(start, Kind::Set(items)));
        }
        let mut fields = Vec::new();
        let mut keyword_only = true;
        loop {
            if self.eat(b')') {
                let kind = if keyword_only && !fields.is_empty() {
                    Kind::Object(fields)
                } else {
                    Kind::Atom
                };
                return Some(self.repr(start, kind));
            }
            if !fields.is_empty() && !self.eat(b',') {
                return None;
            }
            self.skip_ws();
            let key_start = self.i;
            while matches!(self.peek(), Some(b) if b.is_ascii_alphanumeric() || b == b'_') {
                self.i += 1;
            }
            let key = self.text[key_start..self.i].to_string();
            if key.is_empty() || !self.eat(b'=') {
                self.i = key_start;
                keyword_only = false;
                fields.push((String::new(), self.value()?));
            } else {
                fields.push((key, self.value()?));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> Vec<(String, String)> {
        Repr::parse(text)
            .children()
            .into_iter()
            .map(|c| (c.name, c.value.text))
            .collect()
    }

    fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
        items
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn containers_expand_into_children() {
        assert_eq!(
            names("[1, 'a, b', [2, 3]]"),
            pairs(&[("0", "1"), ("1", "'a, b'"), ("2", "[2, 3]")])
        );
        assert_eq!(names("(1,)"), pairs(&[("0", "1")]));
        assert_eq!(
            names("{'k': (1, 2), 3: None}"),
            pairs(&[("'k'", "(1, 2)"), ("3", "None")])
        );
        assert_eq!(names("{1, 2}"), pairs(&[("0", "1"), ("1", "2")]));
        assert_eq!(names("frozenset({'x'})"), pairs(&[("0", "'x'")]));
        assert_eq!(
            names("Point(x=1, y=[2])"),
            pairs(&[("x", "1"), ("y", "[2]")])
        );
        assert_eq!(
            names("Node(val=1, next=Node(val=2, next=None))")[1].1,
            "Node(val=2, next=None)"
        );
    }

    #[test]
    fn atoms_do_not_expand() {
        for text in [
            "1",
            "'[1, 2]'",
            "ValueError('bad')",
            "<function f>",
            "(1+2j)",
            "[]",
            "{}",
            "set()",
            "'it\\'s'",
        ] {
            assert!(Repr::parse(text).children().is_empty(), "{text}");
        }
    }

    #[test]
    fn a_deep_repr_is_an_atom_not_a_stack_overflow() {
        let nested = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert_eq!(Repr::parse(&nested(MAX_NESTING)).children().len(), 1);
        let deep = nested(100_000);
        let repr = Repr::parse(&deep);
        assert_eq!((repr.kind, repr.text.len()), (Kind::Atom, deep.len()));
        let objects = format!("{}1{}", "P(x=".repeat(100_000), ")".repeat(100_000));
        assert_eq!(Repr::parse(&objects).kind, Kind::Atom);
        assert_eq!(type_name(&format!("{{{deep}}}")).as_deref(), Some("dict"));
    }

    #[test]
    fn a_cut_repr_is_an_atom_not_an_error() {
        assert!(Repr::parse("[1, 2, 3…").children().is_empty());
        assert!(Repr::parse("[1, 2, 3…").text == "[1, 2, 3…");
    }

    #[test]
    fn type_names_follow_python() {
        let cases = [
            ("[1]", "list"),
            ("(1, 2)", "tuple"),
            ("{1: 2}", "dict"),
            ("{}", "dict"),
            ("{1}", "set"),
            ("set()", "set"),
            ("'s'", "str"),
            ("b'x'", "bytes"),
            ("-3", "int"),
            ("2.5", "float"),
            ("True", "bool"),
            ("None", "NoneType"),
            ("Point(x=1)", "Point"),
            ("ValueError('x')", "ValueError"),
            ("<function f>", "function"),
            ("<Foo object>", "Foo"),
            ("frozenset({1})", "frozenset"),
        ];
        for (text, name) in cases {
            assert_eq!(type_name(text).as_deref(), Some(name), "{text}");
        }
    }
}
