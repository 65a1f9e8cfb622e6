//! The value of an expression where the values it reads settle it: a literal, a name
//! or an object's field, arithmetic ([`super::arithmetic`]), a comparison
//! ([`super::conditions`]), a conditional expression, `str()`, `list()`, an item or
//! a slice of a list, tuple, string or dict, a method of a plain string, lists or
//! strings joined with `+` or repeated with `*`, a display or comprehension
//! ([`super::iteration`]) or a builtin's call ([`super::builtins`]), of those. What
//! Python gives there is certain, so the grammar can hold a prediction to it.
//!
//! Values are reprs, worked out whole; a state shows a long one cut ([`as_shown`]).

use super::{arithmetic, conditions};
use crate::repr::{Kind, Repr};

/// The builtins an expression may call here: `len`, `abs`, `str`, `list`.
pub const BUILTINS: [&str; 4] = ["len", "abs", "str", "list"];

/// Every builtin name that working out a value may read (here, in
/// [`super::builtins`] and in [`super::iteration`]).
pub fn builtin_names() -> impl Iterator<Item = &'static str> {
    BUILTINS
        .into_iter()
        .chain(super::builtins::BUILTINS)
        .chain(super::builtins::TYPES)
        .chain(super::iteration::BUILTINS)
}

/// What an expression's names stand for where it runs.
pub struct Scope<'a> {
    /// The repr of a name's value, where the state shows it.
    pub value_of: &'a dyn Fn(&str) -> Option<String>,
    /// Whether a name is Python's builtin of that name there (nothing of the
    /// program's hides it).
    pub builtin: &'a dyn Fn(&str) -> bool,
}

/// The repr of `text`'s value in `scope`, where it is settled.
pub fn repr_of(text: &str, scope: &Scope) -> Option<String> {
    let text = text.trim();
    // What these begin is not the value of the expression that follows them.
    let first_word = text.split([' ', ':', '(']).next().unwrap_or("");
    if ["lambda", "yield", "await"].contains(&first_word) {
        return None;
    }
    crate::entry::exact_literal_repr(text)
        .or_else(|| (scope.value_of)(dotted_name(text).then_some(text)?))
        .or_else(|| arithmetic::Arithmetic::of(text)?.number(scope)?.repr())
        .or_else(|| conditions::boolean(text, scope).map(python_bool))
        .or_else(|| conditional(text, scope))
        .or_else(|| str_call(text, scope))
        .or_else(|| list_call(text, scope))
        .or_else(|| item(text, scope))
        .or_else(|| str_method(text, scope))
        .or_else(|| concatenation(text, scope))
        .or_else(|| super::iteration::display(text, scope))
        .or_else(|| super::builtins::call(text, scope))
        .or_else(|| super::builtins::sequence_method(text, scope))
        .or_else(|| repetition(text, scope))
        .or_else(|| f_string(text, scope))
        .or_else(|| super::sets::repr_of(text, scope))
}

/// `f'...'` whose fields are settled expressions, each written as `str()` writes it
/// (as `repr()` with `!r`). Not followed: escapes, format specs, `=` fields.
fn f_string(text: &str, scope: &Scope) -> Option<String> {
    let template = text.strip_prefix(['f', 'F'])?;
    let quote = template
        .chars()
        .next()
        .filter(|q| matches!(q, '\'' | '"'))?;
    let body = template.strip_prefix(quote)?.strip_suffix(quote)?;
    if body.contains(['\\', quote]) {
        return None;
    }
    let mut out = String::new();
    let mut rest = body;
    while let Some(at) = rest.find(['{', '}']) {
        out.push_str(&rest[..at]);
        let brace = &rest[at..at + 1];
        if rest[at + 1..].starts_with(brace) {
            out.push_str(brace); // `{{` or `}}`
            rest = &rest[at + 2..];
            continue;
        }
        if brace == "}" {
            return None;
        }
        let field_len = super::lexer::closing_bracket(&rest[at + 1..])?;
        let field = &rest[at + 1..at + 1 + field_len];
        // A top-level `:` begins a format spec, a trailing `=` asks for the text too.
        let spec = super::lexer::code_chars(field).any(|(_, c, depth)| c == ':' && depth == 0);
        if spec || field.trim_end().ends_with('=') {
            return None;
        }
        // A conversion: `!r` is followed, `!s` and `!a` are not.
        let bang = super::lexer::code_chars(field)
            .any(|(at, c, depth)| c == '!' && depth == 0 && !field[at + 1..].starts_with('='));
        let (expr, as_repr) = match field.trim_end().strip_suffix("!r") {
            Some(expr) => (expr, true),
            None if bang => return None,
            None => (field, false),
        };
        let shown = match as_repr {
            true => repr_of(expr, scope)?,
            false => unescaped(&str_value(expr, scope)?)?.to_string(),
        };
        out.push_str(&shown);
        rest = &rest[at + 1 + field_len + 1..];
    }
    out.push_str(rest);
    bounded(crate::entry::python_str_repr(&out))
}

/// `str()` of `expr`'s value, as a string's repr, where it is settled.
fn str_value(expr: &str, scope: &Scope) -> Option<String> {
    let repr = repr_of(expr, scope)?;
    if repr.starts_with(['\'', '"']) {
        return Some(repr);
    }
    // Formatting calls `str()` itself, whatever the program names `str`.
    let formatting = Scope {
        value_of: &|_| None,
        builtin: &|name| name == "str",
    };
    let call = format!("str({repr})");
    str_call(&call, &formatting).or_else(|| super::builtins::call(&call, &formatting))
}

/// `A * K` or `K * A` of a settled list, tuple or string without escapes and a whole
/// number, each one operand (`'a' + 'b' * 2` repeats `'b'` alone).
fn repetition(text: &str, scope: &Scope) -> Option<String> {
    let [a, b] = conditions::split_at_word(text, " * ")[..] else {
        return None;
    };
    if !primary(a) || !primary(b) {
        return None;
    }
    let (a, b) = (repr_of(a, scope)?, repr_of(b, scope)?);
    let (sequence, times) = match (a.parse::<i128>(), b.parse::<i128>()) {
        (Err(_), Ok(times)) => (a, times),
        (Ok(times), Err(_)) => (b, times),
        _ => return None,
    };
    // A negative count repeats nothing; a long result is not worked out.
    let times = usize::try_from(times.max(0)).ok()?;
    if sequence.len().saturating_mul(times) > MOST_CHARS {
        return None;
    }
    let repeated = |items: Vec<String>| {
        let count = items.len();
        items
            .into_iter()
            .cycle()
            .take(count * times)
            .collect::<Vec<_>>()
    };
    let repr = match Repr::parse(&sequence).kind {
        Kind::List(items) => list_repr(&repeated(texts(items))),
        Kind::Tuple(items) => tuple_repr(repeated(texts(items))),
        _ => crate::entry::python_str_repr(&unescaped(&sequence)?.repeat(times)),
    };
    bounded(repr)
}

/// Whether `text` is a name or names joined by dots (`self.total`), whose value a
/// scope may give: a field of an object is read from its shown fields (see
/// [`dotted_value`]).
fn dotted_name(text: &str) -> bool {
    text.split('.').all(super::layout::is_name)
}

/// The value of `name` (`n`, or `p.x.y`): a name's from `value_of`, a field's from its
/// object's repr, where `shows_fields` says the class of that name writes its fields
/// by name (the tracer's writing of an object with Python's default repr,
/// `Point(x=1, y=2)`, or a `NamedTuple`'s). A field the repr does not show (a class
/// attribute, a property) is not known.
pub fn dotted_value(
    name: &str,
    value_of: impl Fn(&str) -> Option<String>,
    shows_fields: impl Fn(&str) -> bool,
) -> Option<String> {
    let mut parts = name.split('.');
    let mut repr = value_of(parts.next()?)?;
    for field in parts {
        let (_, fields) = object_fields(&repr, &shows_fields)?;
        repr = fields.into_iter().find(|(f, _)| f == field)?.1;
    }
    Some(repr)
}

/// The class and the fields (names and reprs, in order) of an object's repr, where
/// `shows_fields` says its class writes them by name (`Point(x=1, y=2)`; a fresh
/// `Point()` has none) and the repr is whole.
pub fn object_fields(
    repr: &str,
    shows_fields: impl Fn(&str) -> bool,
) -> Option<(&str, Vec<(String, String)>)> {
    let class = repr.split_once('(')?.0;
    if !super::layout::is_name(class) || !shows_fields(class) || cut(repr) {
        return None;
    }
    match Repr::parse(repr).kind {
        Kind::Object(fields) => Some((
            class,
            fields.into_iter().map(|(f, v)| (f, v.text)).collect(),
        )),
        _ if repr == format!("{class}()") => Some((class, Vec::new())),
        _ => None,
    }
}

/// A method of a shown ASCII string without escapes (whose repr is its text in
/// quotes): `upper`, `lower`, `capitalize`, `strip`, `find`, `index`, `count`,
/// `startswith`, `endswith`, `split`, `replace`, `join`. Python's own results, for text
/// where Unicode's special cases cannot arise.
fn str_method(text: &str, scope: &Scope) -> Option<String> {
    const METHODS: [&str; 28] = [
        "upper",
        "lower",
        "capitalize",
        "title",
        "swapcase",
        "strip",
        "lstrip",
        "rstrip",
        "find",
        "rfind",
        "index",
        "count",
        "startswith",
        "endswith",
        "split",
        "replace",
        "join",
        "isalpha",
        "isdigit",
        "isalnum",
        "islower",
        "isupper",
        "isspace",
        "zfill",
        "ljust",
        "rjust",
        "removeprefix",
        "removesuffix",
    ];
    let inner = text.strip_suffix(')')?;
    let (base, method, args) = METHODS.iter().find_map(|m| {
        let (base, args) = inner.rsplit_once(&format!(".{m}("))?;
        let closes = super::lexer::closes_at_end(&text[base.len() + m.len() + 2..]);
        (closes && primary(base)).then_some((base, *m, args))
    })?;
    let plain = |repr: &str| unescaped(repr).filter(|t| t.is_ascii()).map(str::to_string);
    let this = plain(&repr_of(base, scope)?)?;
    let arg_texts = super::lexer::split_top(args);
    // `join` takes any iterable (a generator too); the other methods' arguments are
    // values.
    let args: Vec<String> = match method {
        "join" => arg_texts.clone(),
        _ => arg_texts
            .iter()
            .map(|a| repr_of(a, scope))
            .collect::<Option<_>>()?,
    };
    let arg = |k: usize| args.get(k).and_then(|a| plain(a));
    let string = |s: &str| bounded(crate::entry::python_str_repr(s));
    let strings = |parts: Vec<&str>| {
        let reprs: Vec<String> = parts
            .iter()
            .map(|p| crate::entry::python_str_repr(p))
            .collect();
        bounded(list_repr(&reprs))
    };
    match (method, args.len()) {
        ("upper", 0) => string(&this.to_ascii_uppercase()),
        ("lower", 0) => string(&this.to_ascii_lowercase()),
        ("capitalize", 0) => {
            let lower = this.to_ascii_lowercase();
            let mut chars = lower.chars();
            let first = chars.next().map(|c| c.to_ascii_uppercase());
            string(&first.into_iter().chain(chars).collect::<String>())
        }
        ("title", 0) => {
            // Each run of letters begins upper case, the rest lower (`they're` gives
            // `They'Re`, as Python's does).
            let mut after_letter = false;
            let titled: String = this
                .chars()
                .map(|c| {
                    let out = match after_letter {
                        true => c.to_ascii_lowercase(),
                        false => c.to_ascii_uppercase(),
                    };
                    after_letter = c.is_ascii_alphabetic();
                    out
                })
                .collect();
            string(&titled)
        }
        ("swapcase", 0) => string(
            &this
                .chars()
                .map(|c| match c.is_ascii_uppercase() {
                    true => c.to_ascii_lowercase(),
                    false => c.to_ascii_uppercase(),
                })
                .collect::<String>(),
        ),
        // Unescaped ASCII text holds no whitespace but spaces.
        ("strip", 0) => string(this.trim_matches(' ')),
        ("lstrip", 0) => string(this.trim_start_matches(' ')),
        ("rstrip", 0) => string(this.trim_end_matches(' ')),
        ("strip" | "lstrip" | "rstrip", 1) => {
            let chars: Vec<char> = arg(0)?.chars().collect();
            let stripped = match method {
                "strip" => this.trim_matches(chars.as_slice()),
                "lstrip" => this.trim_start_matches(chars.as_slice()),
                _ => this.trim_end_matches(chars.as_slice()),
            };
            string(stripped)
        }
        ("rfind", 1) => {
            let found = this.rfind(arg(0)?.as_str());
            Some(found.map_or(-1, |at| at as i64).to_string())
        }
        ("isalpha" | "isdigit" | "isalnum" | "isspace", 0) => {
            let each: fn(&char) -> bool = match method {
                "isalpha" => char::is_ascii_alphabetic,
                "isdigit" => char::is_ascii_digit,
                "isalnum" => char::is_ascii_alphanumeric,
                _ => |c| *c == ' ',
            };
            Some(python_bool(
                !this.is_empty() && this.chars().all(|c| each(&c)),
            ))
        }
        ("islower" | "isupper", 0) => {
            // At least one cased character, and none of the other case.
            let (lower, upper) = (
                this.chars().any(|c| c.is_ascii_lowercase()),
                this.chars().any(|c| c.is_ascii_uppercase()),
            );
            let holds = match method {
                "islower" => lower && !upper,
                _ => upper && !lower,
            };
            Some(python_bool(holds))
        }
        ("zfill", 1) => {
            let width = usize::try_from(arithmetic::whole_number(&args[0], scope)?).ok()?;
            let (sign, digits) = match this.strip_prefix(['-', '+']) {
                Some(rest) => (&this[..1], rest),
                None => ("", this.as_str()),
            };
            let pad = width.saturating_sub(this.len());
            string(&format!("{sign}{}{digits}", "0".repeat(pad)))
        }
        ("ljust" | "rjust", 1 | 2) => {
            let width = usize::try_from(arithmetic::whole_number(&args[0], scope)?).ok()?;
            let fill = match args.len() {
                2 => arg(1).filter(|f| f.chars().count() == 1)?,
                _ => " ".to_string(),
            };
            let pad = fill.repeat(width.saturating_sub(this.len()).min(1000));
            string(&match method {
                "ljust" => format!("{this}{pad}"),
                _ => format!("{pad}{this}"),
            })
        }
        ("removeprefix", 1) => string(this.strip_prefix(arg(0)?.as_str()).unwrap_or(&this)),
        ("removesuffix", 1) => string(this.strip_suffix(arg(0)?.as_str()).unwrap_or(&this)),
        ("find" | "index" | "count", 1) => {
            let sub = arg(0)?;
            match method {
                "count" if sub.is_empty() => Some((this.len() + 1).to_string()),
                "count" => Some(this.matches(sub.as_str()).count().to_string()),
                "find" => Some(
                    this.find(sub.as_str())
                        .map_or(-1, |at| at as i64)
                        .to_string(),
                ),
                _ => this.find(sub.as_str()).map(|at| at.to_string()),
            }
        }
        ("startswith", 1) => Some(python_bool(this.starts_with(arg(0)?.as_str()))),
        ("endswith", 1) => Some(python_bool(this.ends_with(arg(0)?.as_str()))),
        ("split", 0) => strings(this.split(' ').filter(|p| !p.is_empty()).collect()),
        ("split", 1) => {
            let sep = arg(0).filter(|sep| !sep.is_empty())?;
            strings(this.split(sep.as_str()).collect())
        }
        ("replace", 2) => {
            let (old, new) = (arg(0).filter(|old| !old.is_empty())?, arg(1)?);
            string(&this.replace(old.as_str(), &new))
        }
        ("join", 1) => {
            let parts: Vec<String> = super::iteration::items(&args[0], scope)?
                .iter()
                .map(|item| plain(item))
                .collect::<Option<_>>()?;
            string(&parts.join(&this))
        }
        _ => None,
    }
}

/// `BASE[INDEX]` of a list, tuple, string or dict, or `BASE.get(KEY)` /
/// `BASE.get(KEY, DEFAULT)` of a dict, BASE and INDEX settled in `scope`: reading an
/// item runs no code. `None` for a slice, an index out of range or a missing key
/// (Python raises there).
pub fn item(text: &str, scope: &Scope) -> Option<String> {
    let text = text.trim();
    if let Some(inner) = text.strip_suffix(')') {
        let (base, args) = inner.rsplit_once(".get(")?;
        if !primary(base) || !super::lexer::closes_at_end(&text[base.len() + ".get(".len()..]) {
            return None;
        }
        let args = super::lexer::split_top(args);
        let (key, default) = match &args[..] {
            [key] => (key, None),
            [key, default] => (key, Some(default)),
            _ => return None,
        };
        let Kind::Dict(entries) = Repr::parse(&repr_of(base, scope)?).kind else {
            return None;
        };
        return match dict_value(&entries, &repr_of(key, scope)?)? {
            Some(value) => Some(value),
            None => match default {
                Some(default) => repr_of(default, scope),
                None => Some("None".to_string()),
            },
        };
    }
    let inner = text.strip_suffix(']')?;
    let open = super::lexer::chars(inner)
        .filter(|ch| ch.kind == super::lexer::Kind::Code && ch.depth == 0 && ch.c == '[')
        .last()?
        .at;
    let (base, index) = (&inner[..open], &inner[open + 1..]);
    if base.trim().is_empty() || !primary(base) {
        return None;
    }
    let colons: Vec<usize> = super::lexer::chars(index)
        .filter(|ch| ch.kind == super::lexer::Kind::Code && ch.depth == 0 && ch.c == ':')
        .map(|ch| ch.at)
        .collect();
    if !colons.is_empty() {
        return slice(&repr_of(base, scope)?, index, &colons, scope);
    }
    let base = repr_of(base, scope)?;
    let index = repr_of(index, scope)?;
    let at = |len: usize| position(&index, len);
    match Repr::parse(&base).kind {
        Kind::List(items) | Kind::Tuple(items) => Some(items.get(at(items.len())?)?.text.clone()),
        Kind::Dict(entries) => dict_value(&entries, &index)?,
        _ if base.starts_with(['\'', '"']) => {
            let chars = crate::entry::elements(&base)?;
            Some(chars.get(at(chars.len())?)?.clone())
        }
        _ => None,
    }
}

/// Where the index whose repr is `index` points in `len` items, counting a negative
/// one from the end; `None` out of range (Python raises there) or for no whole number.
pub fn position(index: &str, len: usize) -> Option<usize> {
    let k: i128 = index.parse().ok()?;
    let k = if k < 0 { k + len as i128 } else { k };
    usize::try_from(k).ok().filter(|k| *k < len)
}

/// Whether `text` is one operand that a subscript or call after it applies to (a
/// name, a literal, an item of one): `a + b[1:]` slices `b` alone.
pub(super) fn primary(text: &str) -> bool {
    let text = text.trim();
    !text.is_empty()
        && super::lexer::chars(text).all(|ch| {
            ch.kind != super::lexer::Kind::Code
                || ch.depth > 0
                || ch.c.is_alphanumeric()
                || "_.[](){}".contains(ch.c)
        })
}

/// `BASE[START:STOP]` or `BASE[START:STOP:STEP]` of a list, tuple or string (without
/// escapes), each bound a settled whole number or left out.
fn slice(base: &str, index: &str, colons: &[usize], scope: &Scope) -> Option<String> {
    let mut bounds = Vec::new();
    let mut start = 0;
    for &at in colons.iter().chain(std::iter::once(&index.len())) {
        let text = index[start..at].trim();
        bounds.push(match text {
            "" => None,
            text => Some(arithmetic::whole_number(text, scope)?),
        });
        start = at + 1;
    }
    type Rebuild = fn(Vec<String>) -> String;
    let (items, rebuild): (Vec<String>, Rebuild) = match Repr::parse(base).kind {
        Kind::List(items) => (texts(items), |items| list_repr(&items)),
        Kind::Tuple(items) => (texts(items), tuple_repr),
        _ if unescaped(base).is_some() => (crate::entry::elements(base)?, str_repr),
        _ => return None,
    };
    let picked = slice_indices(items.len(), &bounds)?;
    bounded(rebuild(
        picked.into_iter().map(|k| items[k].clone()).collect(),
    ))
}

/// The indices `[start:stop:step]` picks of `len` items, as Python's `slice.indices`.
fn slice_indices(len: usize, bounds: &[Option<i128>]) -> Option<Vec<usize>> {
    let len = len as i128;
    let step = bounds.get(2).copied().flatten().unwrap_or(1);
    if step == 0 || bounds.len() > 3 {
        return None;
    }
    let clamp = |bound: Option<i128>, default: i128| match bound {
        None => default,
        Some(b) if b < 0 => (b + len).max(if step > 0 { 0 } else { -1 }),
        Some(b) => b.min(if step > 0 { len } else { len - 1 }),
    };
    let (start, stop) = match step > 0 {
        true => (
            clamp(bounds[0], 0),
            clamp(bounds.get(1).copied().flatten(), len),
        ),
        false => (
            clamp(bounds[0], len - 1),
            clamp(bounds.get(1).copied().flatten(), -1),
        ),
    };
    let mut picked = Vec::new();
    let mut k = start;
    while (step > 0 && k < stop) || (step < 0 && k > stop) {
        picked.push(usize::try_from(k).ok()?);
        k += step;
    }
    Some(picked)
}

fn texts(items: Vec<Repr>) -> Vec<String> {
    items.into_iter().map(|item| item.text).collect()
}

/// A tuple's repr from its items' (`(1,)` for one).
pub fn tuple_repr(items: Vec<String>) -> String {
    match items.len() {
        1 => format!("({},)", items[0]),
        _ => format!("({})", items.join(", ")),
    }
}

/// A string's repr from its characters' reprs (none with an escape).
fn str_repr(chars: Vec<String>) -> String {
    let text: String = chars.iter().filter_map(|c| unescaped(c)).collect();
    crate::entry::python_str_repr(&text)
}

/// A list's repr from its items' reprs.
pub fn list_repr(items: &[String]) -> String {
    format!("[{}]", items.join(", "))
}

/// Python's repr of a `bool`.
pub fn python_bool(b: bool) -> String {
    if b { "True" } else { "False" }.to_string()
}

/// The text of a string's repr, where it has no escapes.
pub fn unescaped(repr: &str) -> Option<&str> {
    let quote = repr.chars().next().filter(|q| matches!(q, '\'' | '"'))?;
    let inner = repr.strip_prefix(quote)?.strip_suffix(quote)?;
    (!inner.contains('\\')).then_some(inner)
}

/// `list(X)` of a settled list, tuple, set, dict (its keys), string or range.
fn list_call(text: &str, scope: &Scope) -> Option<String> {
    let inner = text.strip_prefix("list(")?.strip_suffix(')')?;
    if !(scope.builtin)("list") || !super::lexer::closes_at_end(&text[5..]) {
        return None;
    }
    bounded(list_repr(&super::iteration::items(inner, scope)?))
}

/// `A + B + ...` of settled lists, or of strings without escapes.
fn concatenation(text: &str, scope: &Scope) -> Option<String> {
    let parts = conditions::split_at_word(text, " + ");
    if parts.len() < 2 {
        return None;
    }
    let reprs: Vec<String> = parts
        .iter()
        .map(|p| repr_of(p, scope))
        .collect::<Option<_>>()?;
    let all_lists = reprs
        .iter()
        .all(|r| matches!(Repr::parse(r).kind, Kind::List(_)));
    if all_lists {
        let items: Vec<String> = reprs
            .iter()
            .flat_map(|r| crate::entry::elements(r).unwrap_or_default())
            .collect();
        return bounded(list_repr(&items));
    }
    let texts: Vec<&str> = reprs.iter().map(|r| unescaped(r)).collect::<Option<_>>()?;
    bounded(crate::entry::python_str_repr(&texts.concat()))
}

/// The value of the key whose repr is `key`, `Some(None)` where the dict has none;
/// `None` where reprs cannot tell (keys of mixed kinds: `1 == True == 1.0`).
pub fn dict_value(entries: &[(Repr, Repr)], key: &str) -> Option<Option<String>> {
    let kind = |repr: &str| match repr {
        r if r.starts_with(['\'', '"']) => Some("str"),
        r if r.parse::<i128>().is_ok() => Some("int"),
        _ => None,
    };
    let key_kind = kind(key)?;
    if entries.iter().any(|(k, _)| kind(&k.text) != Some(key_kind)) {
        return None;
    }
    let found = entries.iter().find(|(k, _)| k.text == key);
    Some(found.map(|(_, value)| value.text.clone()))
}

/// `.pop(ARGS)` of the list or dict whose repr is `repr`, the arguments settled: the
/// value it gives and the repr it leaves. `None` where it would raise (an empty list,
/// an index out of range, a missing key without a default) or reprs cannot tell.
pub fn pop(repr: &str, args: &[String]) -> Option<(String, String)> {
    match Repr::parse(repr).kind {
        Kind::List(items) => {
            let mut items: Vec<String> = items.into_iter().map(|i| i.text).collect();
            let at = match args {
                [] => items.len().checked_sub(1)?,
                [index] => position(index, items.len())?,
                _ => return None,
            };
            let popped = items.remove(at);
            Some((popped, list_repr(&items)))
        }
        Kind::Dict(entries) => {
            let (key, default) = match args {
                [key] => (key, None),
                [key, default] => (key, Some(default)),
                _ => return None,
            };
            match dict_value(&entries, key)? {
                Some(value) => {
                    let rest: Vec<(String, String)> = entries
                        .into_iter()
                        .filter(|(k, _)| k.text != *key)
                        .map(|(k, v)| (k.text, v.text))
                        .collect();
                    Some((value, super::builtins::dict_repr(rest)?))
                }
                None => Some((default?.clone(), repr.to_string())),
            }
        }
        _ => None,
    }
}

/// The repr of Python's exception `class` made with arguments whose reprs are `args`
/// (`ValueError('bad')`, `KeyError(3)`, `StopIteration()`), for the plain classes whose
/// repr is their name and arguments; `None` for any other name.
pub fn exception_repr(class: &str, args: &[String]) -> Option<String> {
    const PLAIN: [&str; 18] = [
        "Exception",
        "ValueError",
        "TypeError",
        "KeyError",
        "IndexError",
        "LookupError",
        "RuntimeError",
        "ZeroDivisionError",
        "ArithmeticError",
        "OverflowError",
        "AttributeError",
        "NotImplementedError",
        "AssertionError",
        "StopIteration",
        "NameError",
        "RecursionError",
        "UnboundLocalError",
        "MemoryError",
    ];
    PLAIN
        .contains(&class)
        .then(|| format!("{class}({})", args.join(", ")))
}

/// `repr`, if it is short enough to be worth working out here (a long value is
/// still shown as the tracer cuts it: see [`as_shown`]).
pub fn bounded(repr: String) -> Option<String> {
    (repr.chars().count() <= MOST_CHARS).then_some(repr)
}

/// The longest repr worked out.
const MOST_CHARS: usize = 4000;

/// `repr` as a state shows it: the tracer cuts a repr longer than its limit (200
/// characters) there and marks the cut with `…`.
pub fn as_shown(repr: String) -> String {
    let limit = crate::tracer::Limits::default().max_repr;
    match repr.char_indices().nth(limit) {
        Some((at, _)) => format!("{}…", &repr[..at]),
        None => repr,
    }
}

/// Whether a shown repr was cut (see [`as_shown`]): it is no value to work from.
pub fn cut(repr: &str) -> bool {
    repr.contains('…')
}

/// `A if C else B`: Python runs only the branch the condition picks.
fn conditional(text: &str, scope: &Scope) -> Option<String> {
    let (value, rest) = conditions::split_once_at_word(text, " if ")?;
    let (condition, otherwise) = conditions::split_once_at_word(rest, " else ")?;
    match conditions::truth(condition, scope)? {
        true => repr_of(value, scope),
        false => repr_of(otherwise, scope),
    }
}

/// `str(X)` of a number, a bool, `None` or a string.
fn str_call(text: &str, scope: &Scope) -> Option<String> {
    let inner = text.strip_prefix("str(")?.strip_suffix(')')?;
    if !(scope.builtin)("str") || !super::lexer::closes_at_end(&text[4..]) {
        return None;
    }
    let repr = repr_of(inner, scope)?;
    if repr.starts_with(['\'', '"']) {
        return Some(repr);
    }
    let plain = matches!(repr.as_str(), "True" | "False" | "None") || repr.parse::<f64>().is_ok();
    plain.then(|| crate::entry::python_str_repr(&repr))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known(text: &str) -> Option<String> {
        let shown = |name: &str| match name {
            "n" => Some("7".to_string()),
            "s" => Some("'it'".to_string()),
            "xs" => Some("[3, 'a', (1, 2)]".to_string()),
            "d" => Some("{'x': 1, 'y': [2]}".to_string()),
            "m" => Some("{1: 'a', True: 'b'}".to_string()),
            _ => None,
        };
        repr_of(
            text,
            &Scope {
                value_of: &shown,
                builtin: &|_| true,
            },
        )
    }

    #[test]
    fn lengths_of_sets() {
        assert_eq!(known("abs(4) + len(set())").as_deref(), Some("4"));
        assert_eq!(known("len({3, 3, 1})").as_deref(), Some("2"));
    }

    #[test]
    fn f_strings_of_settled_fields() {
        assert_eq!(
            known("f\"{'banana'}:{5}\" + 'x1y2'").as_deref(),
            Some("'banana:5x1y2'")
        );
        assert_eq!(known("f'{s}-{n + 1}{{}}'").as_deref(), Some("'it-8{}'"));
        assert_eq!(known("f'{s!r} {xs[0]}'").as_deref(), Some("\"'it' 3\""));
        assert_eq!(known("f'{d}'").as_deref(), Some("\"{'x': 1, 'y': [2]}\""));
        for unsettled in ["f'{n:03}'", "f'{n=}'", "f'{q}'", "f'\\n{n}'", "f'{n!s:>4}'"] {
            assert_eq!(known(unsettled), None, "{unsettled}");
        }
    }

    #[test]
    fn pops_of_lists_and_dicts() {
        let pop = |repr: &str, args: &[&str]| {
            let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
            pop(repr, &args)
        };
        let both = |v: &str, after: &str| Some((v.to_string(), after.to_string()));
        assert_eq!(pop("[1, 2, 3]", &[]), both("3", "[1, 2]"));
        assert_eq!(pop("[1, 2, 3]", &["0"]), both("1", "[2, 3]"));
        assert_eq!(pop("[1, 2, 3]", &["-2"]), both("2", "[1, 3]"));
        assert_eq!(pop("{'a': 1, 'b': 2}", &["'a'"]), both("1", "{'b': 2}"));
        assert_eq!(pop("{'a': 1}", &["'z'", "0"]), both("0", "{'a': 1}"));
        // Where Python raises, nothing is settled.
        assert_eq!(pop("[]", &[]), None);
        assert_eq!(pop("[1]", &["3"]), None);
        assert_eq!(pop("{'a': 1}", &["'z'"]), None);
    }

    #[test]
    fn literals_names_arithmetic_and_comparisons() {
        assert_eq!(known("'a'").as_deref(), Some("'a'"));
        assert_eq!(known("n").as_deref(), Some("7"));
        assert_eq!(known("n * 2 - 1").as_deref(), Some("13"));
        assert_eq!(known("n % 2 == 1").as_deref(), Some("True"));
        assert_eq!(known("n and 0"), None);
        assert_eq!(known("m + 1"), None);
    }

    #[test]
    fn conditional_expressions_run_one_branch() {
        assert_eq!(
            known("n // 2 if n % 2 == 0 else 3 * n + 1").as_deref(),
            Some("22")
        );
        assert_eq!(known("s if n > 1 else g(n)").as_deref(), Some("'it'"));
        assert_eq!(
            known("'a' if n < 0 else 'b' if n < 9 else 'c'").as_deref(),
            Some("'b'")
        );
        assert_eq!(known("1 if q else 2"), None);
        assert_eq!(known("lambda: 1 if n else 2"), None);
        assert_eq!(known("yield 1 if n else 2"), None);
    }

    #[test]
    fn items_of_lists_tuples_strings_and_dicts() {
        assert_eq!(known("xs[0]").as_deref(), Some("3"));
        assert_eq!(known("xs[-1][1]").as_deref(), Some("2"));
        assert_eq!(known("xs[n - 6]").as_deref(), Some("'a'"));
        assert_eq!(known("s[1]").as_deref(), Some("'t'"));
        assert_eq!(known("d['y']").as_deref(), Some("[2]"));
        assert_eq!(known("d.get('x', 0) + 1").as_deref(), Some("2"));
        assert_eq!(known("d.get('z', n)").as_deref(), Some("7"));
        assert_eq!(known("d.get('z')").as_deref(), Some("None"));
        assert_eq!(known("xs[0] * 2 if xs[0] > 1 else 0").as_deref(), Some("6"));
        for unsettled in ["xs[3]", "d['z']", "m[1]", "[1, 2][5]", "xs[s]", "q[0]"] {
            assert_eq!(known(unsettled), None, "{unsettled}");
        }
    }

    #[test]
    fn slices_lists_and_concatenation() {
        assert_eq!(known("xs[1:]").as_deref(), Some("['a', (1, 2)]"));
        assert_eq!(known("xs[::-1][0]").as_deref(), Some("(1, 2)"));
        assert_eq!(known("xs[-2:n]").as_deref(), Some("['a', (1, 2)]"));
        assert_eq!(known("(1, 2, 3)[1:2]").as_deref(), Some("(2,)"));
        assert_eq!(known("'python'[:4]").as_deref(), Some("'pyth'"));
        assert_eq!(known("'abc'[::-2]").as_deref(), Some("'ca'"));
        assert_eq!(known("list('ab'[:4])").as_deref(), Some("['a', 'b']"));
        assert_eq!(known("[4, 15] + [11] + []").as_deref(), Some("[4, 15, 11]"));
        assert_eq!(known("s + \"'s\"").as_deref(), Some("\"it's\""));
        assert_eq!(known("xs[0:1:0]"), None, "a zero step raises");
        // Found by check-grammar in a TheAlgorithms word ladder: the slice is of the
        // last operand alone.
        assert_eq!(known("s[:1] + 'x' + s[1 + 0:]").as_deref(), Some("'ixt'"));
        assert_eq!(known("n + d.get('x', 0)").as_deref(), Some("8"));
        assert_eq!(known("xs + s"), None);
        assert_eq!(known("d[1:]"), None);
    }

    #[test]
    fn long_values_are_worked_out_whole_and_shown_cut() {
        let long = format!("'{}'", "a".repeat(150));
        assert_eq!(known(&format!("{long}[:150]")).map(|r| r.len()), Some(152));
        let joined = known(&format!("{long} + {long}")).unwrap();
        assert_eq!(joined.len(), 302);
        assert_eq!(
            known(&format!("len({long} + {long})")).as_deref(),
            Some("300")
        );
        let shown = as_shown(joined);
        assert_eq!(shown.chars().count(), 201);
        assert!(shown.starts_with("'aaa") && shown.ends_with("a…") && cut(&shown));
        assert_eq!(as_shown("[1]".into()), "[1]");
        assert_eq!(
            known(&format!("{long} * 100")),
            None,
            "not worth working out"
        );
    }

    #[test]
    fn methods_of_plain_strings() {
        let text = |t: &str| known(t);
        assert_eq!(text("'hello'.find('e')").as_deref(), Some("1"));
        assert_eq!(text("''.find(',')").as_deref(), Some("-1"));
        assert_eq!(text("'python'.capitalize()").as_deref(), Some("'Python'"));
        assert_eq!(
            text("'hi there'.split()").as_deref(),
            Some("['hi', 'there']")
        );
        assert_eq!(text("'a,,b'.split(',')").as_deref(), Some("['a', '', 'b']"));
        assert_eq!(text("s.upper() + '!'").as_deref(), Some("'IT!'"));
        assert_eq!(text("'-'.join(['a', 'it'])").as_deref(), Some("'a-it'"));
        assert_eq!(text("s.startswith('i')").as_deref(), Some("True"));
        assert_eq!(text("'aaa'.count('aa')").as_deref(), Some("1"));
        assert_eq!(
            text("\"they're here\".title()").as_deref(),
            Some("\"They'Re Here\"")
        );
        assert_eq!(
            text("'Mixed Case'.title().isdigit()").as_deref(),
            Some("False")
        );
        assert_eq!(text("'ab1'.isalnum()").as_deref(), Some("True"));
        assert_eq!(text("not 'ab1'.isalpha()").as_deref(), Some("True"));
        assert_eq!(text("'a1'.islower()").as_deref(), Some("True"));
        assert_eq!(text("'12'.islower()").as_deref(), Some("False"));
        assert_eq!(text("'-42'.zfill(5)").as_deref(), Some("'-0042'"));
        assert_eq!(text("'ab'.rjust(4, '*')").as_deref(), Some("'**ab'"));
        assert_eq!(text("'xxhixx'.strip('x')").as_deref(), Some("'hi'"));
        assert_eq!(text("'a.b.c'.rfind('.')").as_deref(), Some("3"));
        assert_eq!(
            text("'test_x'.removeprefix('test_')").as_deref(),
            Some("'x'")
        );
        assert_eq!(text("len('a b'.split()) + 1").as_deref(), Some("3"));
        for unsettled in [
            "'x'.index('y')",
            "'ß'.upper()",
            "'a\\n'.split()",
            "xs.count(3)",
        ] {
            assert_eq!(text(unsettled), None, "{unsettled}");
        }
    }

    #[test]
    fn fields_of_objects_that_show_them() {
        let shown = |name: &str| match name {
            "p" => Some("Point(x=1, y=Point(x=2, y=3))".to_string()),
            "q" => Some("Custom(x=1)".to_string()),
            _ => None,
        };
        let plain = |class: &str| class == "Point";
        assert_eq!(dotted_value("p.y.x", shown, plain).as_deref(), Some("2"));
        assert_eq!(
            dotted_value("p", shown, plain).as_deref(),
            Some("Point(x=1, y=Point(x=2, y=3))")
        );
        assert_eq!(
            dotted_value("p.z", shown, plain),
            None,
            "a class attribute, perhaps"
        );
        assert_eq!(dotted_value("q.x", shown, plain), None, "a repr of its own");
    }

    #[test]
    fn floats_where_python_writes_them_plainly() {
        assert_eq!(known("(5.25 * 2.0) * 1.5").as_deref(), Some("15.75"));
        assert_eq!(known("n / 2").as_deref(), Some("3.5"));
        assert_eq!(known("1 / 3").as_deref(), Some("0.3333333333333333"));
        assert_eq!(known("0.1 + 0.2").as_deref(), Some("0.30000000000000004"));
        assert_eq!(known("-n * 1e-2").as_deref(), Some("-0.07"));
        assert_eq!(known("round(2.675, 2)").as_deref(), Some("2.67"));
        assert_eq!(known("round(n / 2)").as_deref(), Some("4"));
        assert_eq!(known("round(2.5) + round(3.5)").as_deref(), Some("6"));
        assert_eq!(known("float(n)").as_deref(), Some("7.0"));
        assert_eq!(known("float(' 1.5')").as_deref(), Some("1.5"));
        assert_eq!(known("int(-2.7)").as_deref(), Some("-2"));
        assert_eq!(known("str(n / 2)").as_deref(), Some("'3.5'"));
        assert_eq!(known("max(2.5, n)").as_deref(), Some("7"));
        for unsettled in [
            "1e20 * 10",
            "2.0 // 1",
            "n / 0",
            "1.5 % 1",
            "2.0 ** 2",
            "float('inf')",
        ] {
            assert_eq!(known(unsettled), None, "{unsettled}");
        }
    }

    #[test]
    fn str_of_numbers_and_strings() {
        assert_eq!(known("str(n + 1)").as_deref(), Some("'8'"));
        assert_eq!(known("str(s)").as_deref(), Some("'it'"));
        assert_eq!(known("str(n) + str(n)").as_deref(), Some("'77'"));
        assert_eq!(known("str(xs)").as_deref(), Some("\"[3, 'a', (1, 2)]\""));
        assert_eq!(known("str(q)"), None);
    }
}
