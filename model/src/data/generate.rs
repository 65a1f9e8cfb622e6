//! Generated training programs: small, valid, terminating Python modules, each with the
//! call to trace, reproducible from a seed.
//!
//! A program is a few helper functions (random bodies, or templates of common algorithms,
//! recursive ones among them), sometimes a class, and an entry function whose body is
//! random typed statements; the call passes literal arguments to the entry function.
//!
//! Why they terminate, and rarely fail:
//! - Expressions are typed ([`Ty`]): every variable has one type for as long as it is
//!   in scope, so operations and methods fit their operands.
//! - Loops are bounded: `range` of a small literal, iteration over a collection that
//!   the loop body may not change (it is *frozen*), `while` on a counter decremented
//!   first thing in the body, or `while xs: xs.pop()`. The product of nested loop trip
//!   counts is capped, so traces stay short.
//! - Recursion only comes from templates whose argument decreases toward a base case,
//!   and call sites bound that argument (`n % 6`).
//! - Growth is linear: no `x * x`, no `s * s`, no `xs + xs` of two variables.
//! - Risky operations (`int(s)`, `d[k]`, `xs[i]`, a raising helper) sit inside
//!   `try`/`except` or behind a guard; a rare `raise` is left uncaught on purpose,
//!   because real runs end in errors too.
//! - Mutable parameters of helpers are read-only (a helper must not grow a list its
//!   caller is iterating over).

use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// How hard the generated programs are.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GenConfig {
    /// Statements in the entry function's body (compound statements count once;
    /// helpers get about half as many).
    pub statements: usize,
    /// Deepest nesting of blocks (if, for, while, try) within a function.
    pub nesting: usize,
    /// Most frames of the program's own functions on the stack at once (1: the entry
    /// function calls none of its own).
    pub call_depth: usize,
    /// Longest program, in lines: a longer draw is replaced by another from the same
    /// seed (the shortest of a few draws is kept).
    pub max_lines: usize,
}

impl GenConfig {
    /// Preset difficulty levels 1 (easy) to 3 (hard); others clamp.
    pub fn level(level: u32) -> Self {
        match level {
            0 | 1 => GenConfig {
                statements: 3,
                nesting: 1,
                call_depth: 2,
                max_lines: 30,
            },
            2 => GenConfig {
                statements: 5,
                nesting: 2,
                call_depth: 2,
                max_lines: 40,
            },
            _ => GenConfig {
                statements: 6,
                nesting: 3,
                call_depth: 3,
                max_lines: 40,
            },
        }
    }
}

impl Default for GenConfig {
    fn default() -> Self {
        GenConfig::level(2)
    }
}

/// A generated module and the call expression to trace in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GeneratedProgram {
    pub source: String,
    pub call: String,
}

/// The program for `seed` at `config`: the same seed and config give the same text.
pub fn generate(seed: u64, config: &GenConfig) -> GeneratedProgram {
    shortest(seed, config, |mut gen| gen.program())
}

/// The program for `seed` as a script a user would run: the same kind of module, then
/// module-level code that calls the entry function (its call is empty: the whole
/// script is traced). Debugging sessions step through scripts, so the model must
/// learn the module's own frame too.
pub fn generate_script(seed: u64, config: &GenConfig) -> GeneratedProgram {
    shortest(seed, config, |mut gen| {
        let program = gen.program();
        let driver = gen.driver();
        GeneratedProgram {
            source: format!("{}\n\n{driver}", program.source),
            call: String::new(),
        }
    })
}

/// The first of a few draws within `config.max_lines`, else the shortest.
fn shortest(
    seed: u64,
    config: &GenConfig,
    draw: impl Fn(Gen) -> GeneratedProgram,
) -> GeneratedProgram {
    let mut best: Option<GeneratedProgram> = None;
    for attempt in 0..8u64 {
        let program = draw(Gen::new(seed.wrapping_add(attempt << 48), config));
        let lines = program.source.lines().count();
        if lines <= config.max_lines {
            return program;
        }
        if best
            .as_ref()
            .is_none_or(|b| lines < b.source.lines().count())
        {
            best = Some(program);
        }
    }
    best.expect("at least one draw")
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ty {
    Int,
    Float,
    Str,
    Bool,
    /// list of int
    Ints,
    /// list of str
    Strs,
    /// dict of str to int
    Dict,
    /// set of int
    Set,
    /// tuple of two ints
    Pair,
    Obj(Class),
}

const VALUE_TYPES: [Ty; 9] = [
    Ty::Int,
    Ty::Float,
    Ty::Str,
    Ty::Bool,
    Ty::Ints,
    Ty::Strs,
    Ty::Dict,
    Ty::Set,
    Ty::Pair,
];
/// Types a function may return or take (weighted toward the common ones).
const PARAM_TYPES: [Ty; 8] = [
    Ty::Int,
    Ty::Int,
    Ty::Str,
    Ty::Ints,
    Ty::Ints,
    Ty::Strs,
    Ty::Dict,
    Ty::Float,
];

impl Ty {
    fn mutable(self) -> bool {
        matches!(self, Ty::Ints | Ty::Strs | Ty::Dict | Ty::Set | Ty::Obj(_))
    }

    fn names(self) -> &'static [&'static str] {
        match self {
            Ty::Int => &[
                "n", "k", "total", "count", "acc", "x", "y", "idx", "step", "m", "limit", "best",
                "value", "score", "size", "low", "high", "num", "delta", "q", "r", "t",
            ],
            Ty::Float => &[
                "ratio", "avg", "mean", "rate", "scale", "weight", "frac", "share",
            ],
            Ty::Str => &[
                "s", "text", "word", "name", "msg", "out", "line", "prefix", "label", "tag",
                "code", "buf", "title",
            ],
            Ty::Bool => &[
                "found", "ok", "done", "flag", "is_even", "seen_big", "valid", "hit",
            ],
            Ty::Ints => &[
                "xs", "nums", "items", "values", "data", "arr", "seq", "sizes", "evens", "odds",
                "picked", "queue",
            ],
            Ty::Strs => &[
                "words", "names", "parts", "tokens", "letters", "lines", "labels", "chunks",
            ],
            Ty::Dict => &[
                "d", "freq", "table", "index", "lookup", "scores", "ages", "mapping",
            ],
            Ty::Set => &["seen", "uniq", "pool", "marks", "visited", "group"],
            Ty::Pair => &["pair", "bounds", "span", "qr", "point", "coords"],
            Ty::Obj(class) => class.var_names(),
        }
    }
}

/// The class templates a program may define and use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    Tally,
    Stack,
    Account,
    Point,
    Rect,
}

const CLASSES: [Class; 5] = [
    Class::Tally,
    Class::Stack,
    Class::Account,
    Class::Point,
    Class::Rect,
];

impl Class {
    fn class_names(self) -> &'static [&'static str] {
        match self {
            Class::Tally => &["Tally", "Counter", "Accumulator", "Meter"],
            Class::Stack => &["Stack", "Pile", "History"],
            Class::Account => &["Account", "Wallet", "Budget"],
            Class::Point => &["Point", "Vec2", "Cell"],
            Class::Rect => &["Rect", "Box", "Panel"],
        }
    }

    fn var_names(self) -> &'static [&'static str] {
        match self {
            Class::Tally => &["tally", "meter", "tracker"],
            Class::Stack => &["st", "pile", "hist"],
            Class::Account => &["acct", "wallet", "bank"],
            Class::Point => &["pt", "cell", "origin"],
            Class::Rect => &["rect", "box", "panel"],
        }
    }

    /// The class's definition; `{C}` is its name.
    fn definition(self) -> &'static str {
        match self {
            Class::Tally => {
                "class {C}:\n    def __init__(self, start):\n        self.total = start\n        self.seen = []\n\n    def add(self, value):\n        self.total += value\n        self.seen.append(value)\n        return self.total\n\n    def mean(self):\n        if not self.seen:\n            return 0.0\n        return self.total / len(self.seen)\n"
            }
            Class::Stack => {
                "class {C}:\n    def __init__(self):\n        self.items = []\n\n    def push(self, item):\n        self.items.append(item)\n\n    def pop(self):\n        if not self.items:\n            raise IndexError(\"pop from empty {C}\")\n        return self.items.pop()\n\n    def size(self):\n        return len(self.items)\n"
            }
            Class::Account => {
                "class {C}:\n    def __init__(self, owner, balance):\n        self.owner = owner\n        self.balance = balance\n\n    def deposit(self, amount):\n        self.balance += amount\n        return self.balance\n\n    def withdraw(self, amount):\n        if amount > self.balance:\n            raise ValueError(f\"{self.owner} cannot take {amount}\")\n        self.balance -= amount\n        return self.balance\n"
            }
            Class::Point => {
                "class {C}:\n    def __init__(self, x, y):\n        self.x = x\n        self.y = y\n\n    def move(self, dx, dy):\n        self.x += dx\n        self.y += dy\n\n    def dist(self):\n        return abs(self.x) + abs(self.y)\n\n    def __repr__(self):\n        return f\"{C}({self.x}, {self.y})\"\n"
            }
            Class::Rect => {
                "class Shape:\n    def __init__(self, kind):\n        self.kind = kind\n\n    def area(self):\n        return 0\n\n\nclass {C}(Shape):\n    def __init__(self, w, h):\n        super().__init__(\"rect\")\n        self.w = w\n        self.h = h\n\n    def area(self):\n        return self.w * self.h\n"
            }
        }
    }
}

/// How a template's call site bounds an argument.
#[derive(Clone, Copy, Debug)]
enum Arg {
    Any(Ty),
    /// An int in `0..n`.
    Nat(u32),
    /// An int in `1..=n`.
    Pos(u32),
    /// A str or list cut to at most `n` items.
    Short(Ty, u32),
}

/// A helper written from a fixed shape: `{f}` is its name, `{g}` an inner function, and
/// each `{slot}` of `slots` is a local name drawn from its pool.
struct Template {
    text: &'static str,
    args: &'static [Arg],
    ret: Ty,
    slots: &'static [(&'static str, &'static [&'static str])],
}

const N: (&str, &[&str]) = ("n", &["n", "m", "num", "k"]);
const XS: (&str, &[&str]) = ("xs", &["xs", "nums", "values", "items"]);
const S: (&str, &[&str]) = ("s", &["s", "text", "word"]);

const TEMPLATES: &[Template] = &[
    Template {
        text: "def {f}({n}):\n    if {n} <= 1:\n        return 1\n    return {n} * {f}({n} - 1)\n",
        args: &[Arg::Nat(7)],
        ret: Ty::Int,
        slots: &[N],
    },
    Template {
        text: "def {f}({n}):\n    if {n} < 10:\n        return {n}\n    return {n} % 10 + {f}({n} // 10)\n",
        args: &[Arg::Nat(5000)],
        ret: Ty::Int,
        slots: &[N],
    },
    Template {
        text: "def {f}({n}):\n    if {n} < 2:\n        return {n}\n    return {f}({n} - 1) + {f}({n} - 2)\n",
        args: &[Arg::Nat(6)],
        ret: Ty::Int,
        slots: &[N],
    },
    Template {
        text: "def {f}({xs}):\n    if not {xs}:\n        return 0\n    return {xs}[0] + {f}({xs}[1:])\n",
        args: &[Arg::Short(Ty::Ints, 6)],
        ret: Ty::Int,
        slots: &[XS],
    },
    Template {
        text: "def {f}({s}):\n    if len({s}) <= 1:\n        return {s}\n    return {f}({s}[1:]) + {s}[0]\n",
        args: &[Arg::Short(Ty::Str, 6)],
        ret: Ty::Str,
        slots: &[S],
    },
    Template {
        text: "def {f}({a}, {b}):\n    if {b} == 0:\n        return {a}\n    return {f}({b}, {a} % {b})\n",
        args: &[Arg::Nat(60), Arg::Nat(60)],
        ret: Ty::Int,
        slots: &[("a", &["a", "x", "p"]), ("b", &["b", "y", "q"])],
    },
    Template {
        text: "def {f}({base}, {e}):\n    if {e} == 0:\n        return 1\n    {half} = {f}({base}, {e} // 2)\n    if {e} % 2 == 0:\n        return {half} * {half}\n    return {half} * {half} * {base}\n",
        args: &[Arg::Any(Ty::Int), Arg::Nat(6)],
        ret: Ty::Int,
        slots: &[("base", &["base", "b", "x"]), ("e", &["e", "exp", "power"]), ("half", &["half", "h", "sub"])],
    },
    Template {
        text: "def {f}({n}, {acc}):\n    if {n} == 0:\n        return {acc}\n    return {f}({n} - 1, {acc} + [{n} * {n}])\n",
        args: &[Arg::Nat(5), Arg::Short(Ty::Ints, 3)],
        ret: Ty::Ints,
        slots: &[N, ("acc", &["acc", "out", "res"])],
    },
    Template {
        text: "def {f}({xs}, {t}):\n    {ys} = sorted({xs})\n\n    def {g}(lo, hi):\n        if lo > hi:\n            return -1\n        mid = (lo + hi) // 2\n        if {ys}[mid] == {t}:\n            return mid\n        if {ys}[mid] < {t}:\n            return {g}(mid + 1, hi)\n        return {g}(lo, mid - 1)\n\n    return {g}(0, len({ys}) - 1)\n",
        args: &[Arg::Any(Ty::Ints), Arg::Any(Ty::Int)],
        ret: Ty::Int,
        slots: &[XS, ("t", &["target", "t", "want"]), ("ys", &["ys", "ordered", "srt"])],
    },
    Template {
        text: "def {f}({xs}, {k}):\n    def {g}({v}):\n        return {v} * {k} + 1\n\n    return [{g}({v}) for {v} in {xs}]\n",
        args: &[Arg::Short(Ty::Ints, 4), Arg::Any(Ty::Int)],
        ret: Ty::Ints,
        slots: &[XS, ("k", &["k", "factor", "w"]), ("v", &["v", "item", "e"])],
    },
    Template {
        text: "def {f}({ws}):\n    {count} = 0\n\n    def {g}({w}):\n        nonlocal {count}\n        {count} += 1\n        return {w}.upper()\n\n    {out} = [{g}({w}) for {w} in {ws}]\n    return {count} + len({out})\n",
        args: &[Arg::Short(Ty::Strs, 3)],
        ret: Ty::Int,
        slots: &[("ws", &["words", "names", "ws"]), ("count", &["count", "calls", "used"]), ("w", &["w", "word", "item"]), ("out", &["out", "upper", "res"])],
    },
    Template {
        text: "def {f}({xs}):\n    {ys} = list({xs})\n    for {i} in range(len({ys})):\n        for {j} in range(len({ys}) - 1 - {i}):\n            if {ys}[{j}] > {ys}[{j} + 1]:\n                {ys}[{j}], {ys}[{j} + 1] = {ys}[{j} + 1], {ys}[{j}]\n    return {ys}\n",
        args: &[Arg::Short(Ty::Ints, 4)],
        ret: Ty::Ints,
        slots: &[XS, ("ys", &["ys", "arr", "out"]), ("i", &["i", "a", "p"]), ("j", &["j", "b", "q"])],
    },
    Template {
        text: "def {f}({s}):\n    {freq} = {}\n    for {w} in {s}.split():\n        {freq}[{w}] = {freq}.get({w}, 0) + 1\n    return {freq}\n",
        args: &[Arg::Any(Ty::Str)],
        ret: Ty::Dict,
        slots: &[S, ("freq", &["freq", "counts", "seen"]), ("w", &["w", "word", "tok"])],
    },
    Template {
        text: "def {f}({s}):\n    {lo}, {hi} = 0, len({s}) - 1\n    while {lo} < {hi}:\n        if {s}[{lo}] != {s}[{hi}]:\n            return False\n        {lo} += 1\n        {hi} -= 1\n    return True\n",
        args: &[Arg::Short(Ty::Str, 7)],
        ret: Ty::Bool,
        slots: &[S, ("lo", &["lo", "i", "left"]), ("hi", &["hi", "j", "right"])],
    },
    Template {
        text: "def {f}({n}):\n    {out} = []\n    for {i} in range(1, {n} + 1):\n        if {i} % 15 == 0:\n            {out}.append(\"FizzBuzz\")\n        elif {i} % 3 == 0:\n            {out}.append(\"Fizz\")\n        elif {i} % 5 == 0:\n            {out}.append(\"Buzz\")\n        else:\n            {out}.append(str({i}))\n    return {out}\n",
        args: &[Arg::Nat(8)],
        ret: Ty::Strs,
        slots: &[N, ("out", &["out", "res", "words"]), ("i", &["i", "k", "v"])],
    },
    Template {
        text: "def {f}({n}):\n    for {step} in range(30):\n        if {n} == 1:\n            return {step}\n        {n} = {n} // 2 if {n} % 2 == 0 else 3 * {n} + 1\n    return -1\n",
        args: &[Arg::Pos(12)],
        ret: Ty::Int,
        slots: &[N, ("step", &["step", "i", "steps"])],
    },
    Template {
        text: "def {f}({xs}):\n    {out} = []\n    {run} = 0\n    for {v} in {xs}:\n        {run} += {v}\n        {out}.append({run})\n    return {out}\n",
        args: &[Arg::Short(Ty::Ints, 5)],
        ret: Ty::Ints,
        slots: &[XS, ("out", &["out", "sums", "prefix"]), ("run", &["run", "total", "acc"]), ("v", &["v", "x", "item"])],
    },
    Template {
        text: "def {f}({ws}):\n    {groups} = {}\n    for {w} in {ws}:\n        {key} = {w}[:1]\n        {groups}.setdefault({key}, []).append({w})\n    return {{key}: len({v}) for {key}, {v} in {groups}.items()}\n",
        args: &[Arg::Short(Ty::Strs, 4)],
        ret: Ty::Dict,
        slots: &[("ws", &["words", "names", "ws"]), ("groups", &["groups", "by_first", "buckets"]), ("w", &["w", "word", "name"]), ("key", &["key", "first", "head"]), ("v", &["v", "members", "group"])],
    },
    Template {
        text: "def {f}({xs}):\n    {best} = None\n    for {i}, {v} in enumerate({xs}):\n        if {best} is None or {v} > {xs}[{best}]:\n            {best} = {i}\n    if {best} is None:\n        return -1\n    return {best}\n",
        args: &[Arg::Short(Ty::Ints, 5)],
        ret: Ty::Int,
        slots: &[XS, ("best", &["best", "where", "top"]), ("i", &["i", "pos", "idx"]), ("v", &["v", "x", "item"])],
    },
    Template {
        text: "def {f}({s}, {k}):\n    {out} = \"\"\n    for {c} in {s}:\n        if {c}.islower():\n            {out} += chr((ord({c}) - 97 + {k}) % 26 + 97)\n        else:\n            {out} += {c}\n    return {out}\n",
        args: &[Arg::Short(Ty::Str, 6), Arg::Nat(26)],
        ret: Ty::Str,
        slots: &[S, ("k", &["k", "shift", "key"]), ("out", &["out", "res", "enc"]), ("c", &["c", "ch", "letter"])],
    },
    Template {
        text: "def {f}({n}):\n    if {n} % 3 == 0:\n        raise ValueError(\"bad value \" + str({n}))\n    return {n} * 2\n",
        args: &[Arg::Any(Ty::Int)],
        ret: Ty::Int,
        slots: &[N],
    },
];

/// Index of the template that raises: its calls are wrapped in try/except.
const RAISING_TEMPLATE: usize = TEMPLATES.len() - 1;

const WORDS: &[&str] = &[
    "apple",
    "banana",
    "cherry",
    "kiwi",
    "hello",
    "world",
    "abc",
    "level",
    "radar",
    "python",
    "data",
    "tree",
    "a b c",
    "hi there",
    "x1y2",
    "42",
    "7",
    "Mixed Case",
    " padded ",
    "a-b-c",
    "zzz",
    "banana split",
    "racecar",
    "one two three",
    "",
    "to be or not",
];
const SINGLE_WORDS: &[&str] = &[
    "apple", "pear", "fig", "kiwi", "sun", "moon", "cat", "dog", "red", "blue", "go", "x", "tea",
];
const KEYS: &[&str] = &["a", "b", "c", "x", "y", "red", "blue", "apple", "key", "z"];
const CHARS: &[&str] = &["a", "e", "o", "x", " ", ",", "-", "1"];
const HELPER_NAMES: &[&str] = &[
    "helper",
    "combine",
    "scale_up",
    "clean",
    "tally_up",
    "pick",
    "merge",
    "rank",
    "normalize",
    "count_matches",
    "bump",
    "shift",
    "fold",
    "mix",
    "measure",
    "check",
    "summarize",
    "transform",
    "filter_items",
    "pad",
    "total_of",
    "collect",
    "walk",
    "build",
];
const ENTRY_NAMES: &[&str] = &[
    "f",
    "solve",
    "process",
    "compute",
    "run",
    "main_func",
    "analyze",
    "handle",
];

#[derive(Clone, Debug)]
struct Var {
    name: String,
    ty: Ty,
    /// Read-only here: a loop iterates over it, or it is a helper's mutable parameter.
    frozen: bool,
}

/// A function the code being written may call.
#[derive(Clone, Debug)]
struct Helper {
    name: String,
    args: Vec<Arg>,
    ret: Ty,
    /// Frames on the stack when it runs, counting itself (recursion counted once).
    depth: usize,
    raises: bool,
}

struct Gen<'c> {
    rng: ChaCha8Rng,
    config: &'c GenConfig,
    /// Lines of the function being written.
    lines: Vec<String>,
    indent: usize,
    scope: Vec<Var>,
    helpers: Vec<Helper>,
    class: Option<(Class, String)>,
    /// Module-level int constants, read by functions.
    constants: Vec<String>,
    /// Helpers the function being written may call.
    callable: Vec<usize>,
    /// Block nesting within the function being written.
    nesting: usize,
    /// Loops enclosing the current point.
    loops: usize,
    /// Estimated product of the trip counts of enclosing loops.
    trips: usize,
    ret: Ty,
    used_names: Vec<String>,
    /// Objects are made and used in the entry function only (keeps the call depth).
    in_entry: bool,
    /// The entry function, once written.
    entry: Option<Entry>,
}

/// The entry function's signature, for the module-level code of a script.
struct Entry {
    name: String,
    params: Vec<(String, Ty)>,
    ret: Ty,
}

/// Most loop iterations (product over nesting) at any point of a function.
const MAX_TRIPS: usize = 16;

impl<'c> Gen<'c> {
    fn new(seed: u64, config: &'c GenConfig) -> Self {
        Gen {
            rng: ChaCha8Rng::seed_from_u64(seed),
            config,
            lines: Vec::new(),
            indent: 1,
            scope: Vec::new(),
            helpers: Vec::new(),
            class: None,
            constants: Vec::new(),
            callable: Vec::new(),
            nesting: 0,
            loops: 0,
            trips: 1,
            ret: Ty::Int,
            used_names: Vec::new(),
            in_entry: false,
            entry: None,
        }
    }

    fn chance(&mut self, p: f64) -> bool {
        self.rng.random_bool(p)
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        *items.choose(&mut self.rng).expect("pools are never empty")
    }

    fn small(&mut self, lo: i64, hi: i64) -> i64 {
        self.rng.random_range(lo..=hi)
    }

    /// A module-level name (function, class, script variable) not used yet.
    fn fresh_global(&mut self, pool: &[&str]) -> String {
        for _ in 0..8 {
            let name = self.pick(pool).to_string();
            if !self.used_names.contains(&name) {
                self.used_names.push(name.clone());
                return name;
            }
        }
        let name = format!("{}_{}", self.pick(pool), self.used_names.len());
        self.used_names.push(name.clone());
        name
    }

    fn program(&mut self) -> GeneratedProgram {
        let mut parts: Vec<String> = Vec::new();
        if self.chance(0.25) {
            let name = self.pick(&["LIMIT", "BASE", "STEP", "OFFSET"]).to_string();
            let value = self.small(2, 9);
            parts.push(format!("{name} = {value}\n"));
            self.constants.push(name);
        }
        if self.config.call_depth >= 2 && self.chance(0.25) {
            let class = self.pick(&CLASSES);
            let name = self.fresh_global(class.class_names());
            parts.push(class.definition().replace("{C}", &name));
            self.class = Some((class, name));
        }
        let helpers = if self.config.call_depth >= 2 {
            self.rng
                .random_range(1..=(self.config.call_depth - 1).min(2))
        } else {
            0
        };
        for _ in 0..helpers {
            let text = if self.chance(0.55) {
                self.template_helper()
            } else {
                self.random_helper()
            };
            parts.push(text);
        }
        let (entry, call) = self.entry();
        parts.push(entry);
        GeneratedProgram {
            source: parts.join("\n"),
            call,
        }
    }

    fn template_helper(&mut self) -> String {
        let index = self.rng.random_range(0..TEMPLATES.len());
        let template = &TEMPLATES[index];
        let name = self.fresh_global(HELPER_NAMES);
        let mut text = template.text.replace("{f}", &name);
        if text.contains("{g}") {
            let inner = self.pick(&["go", "step", "inner", "visit", "apply"]);
            text = text.replace("{g}", inner);
        }
        for (slot, pool) in template.slots {
            let chosen = self.pick(pool);
            text = text.replace(&format!("{{{slot}}}"), chosen);
        }
        self.helpers.push(Helper {
            name,
            args: template.args.to_vec(),
            ret: template.ret,
            depth: 1,
            raises: index == RAISING_TEMPLATE,
        });
        text
    }

    /// Start a function: its parameters become the scope.
    fn begin_function(&mut self, params: &[(String, Ty)], read_only: bool, ret: Ty) {
        self.lines.clear();
        self.indent = 1;
        self.nesting = 0;
        self.loops = 0;
        self.trips = 1;
        self.ret = ret;
        self.scope = params
            .iter()
            .map(|(name, ty)| Var {
                name: name.clone(),
                ty: *ty,
                frozen: read_only && ty.mutable(),
            })
            .collect();
        for name in self.constants.clone() {
            self.scope.push(Var {
                name,
                ty: Ty::Int,
                frozen: true,
            });
        }
    }

    fn params(&mut self, count: usize) -> Vec<(String, Ty)> {
        let mut params: Vec<(String, Ty)> = Vec::new();
        for _ in 0..count {
            let ty = self.pick(&PARAM_TYPES);
            let name = self.fresh_local(ty, &params);
            params.push((name, ty));
        }
        params
    }

    fn random_helper(&mut self) -> String {
        let name = self.fresh_global(HELPER_NAMES);
        let count = self.rng.random_range(1..=2);
        let params = self.params(count);
        let ret = self.pick(&PARAM_TYPES);
        // A helper may call helpers already written, within the call depth.
        let depth_left = self.config.call_depth.saturating_sub(1);
        self.callable = (0..self.helpers.len())
            .filter(|&h| self.helpers[h].depth < depth_left)
            .collect();
        self.begin_function(&params, true, ret);
        let statements = (self.config.statements / 2).max(1);
        self.block(statements);
        let value = self.expr(ret, 2);
        self.emit(format!("return {value}"));
        let depth = 1 + self
            .callable
            .iter()
            .map(|&h| self.helpers[h].depth)
            .max()
            .unwrap_or(0);
        let header = format!("def {name}({}):", join_names(&params));
        self.helpers.push(Helper {
            name,
            args: params.iter().map(|(_, ty)| Arg::Any(*ty)).collect(),
            ret,
            depth,
            raises: false,
        });
        format!("{header}\n{}\n", self.lines.join("\n"))
    }

    fn entry(&mut self) -> (String, String) {
        let name = self.fresh_global(ENTRY_NAMES);
        let count = self.rng.random_range(1..=3);
        let params = self.params(count);
        let ret = self.pick(&PARAM_TYPES);
        let depth_left = self.config.call_depth.saturating_sub(1);
        self.callable = (0..self.helpers.len())
            .filter(|&h| self.helpers[h].depth <= depth_left)
            .collect();
        self.begin_function(&params, false, ret);
        self.in_entry = true;
        // Use the class and each helper at least once, then random statements.
        if self.class.is_some() {
            self.object_statement();
        }
        for h in self.callable.clone() {
            self.call_statement(h);
        }
        self.block(self.config.statements);
        if self.chance(0.04) {
            // An uncaught error now and then: real runs end in errors too.
            let cond = self.expr(Ty::Bool, 1);
            self.emit(format!("if {cond}:"));
            self.emit("    raise RuntimeError(\"gave up\")".to_string());
        }
        let value = self.expr(ret, 2);
        self.emit(format!("return {value}"));
        let args: Vec<String> = params.iter().map(|(_, ty)| self.literal(*ty)).collect();
        self.entry = Some(Entry {
            name: name.clone(),
            params: params.clone(),
            ret,
        });
        let def = format!(
            "def {name}({}):\n{}\n",
            join_names(&params),
            self.lines.join("\n")
        );
        (def, format!("{name}({})", args.join(", ")))
    }

    /// Module-level code calling the entry function, as scripts end: its arguments
    /// as module variables, then one call printed, a loop of calls accumulated, or
    /// two calls compared; sometimes under `if __name__ == "__main__":`.
    fn driver(&mut self) -> String {
        let Entry { name, params, ret } = self.entry.take().expect("the entry is written first");
        // Module variables must not take an argument's name.
        self.used_names
            .extend(params.iter().map(|(n, _)| n.clone()));
        let mut lines: Vec<String> = Vec::new();
        let call = |params: &[(String, Ty)]| {
            let names: Vec<&str> = params.iter().map(|(n, _)| n.as_str()).collect();
            format!("{name}({})", names.join(", "))
        };
        let form = self.rng.random_range(0..3);
        if form == 1 {
            // A loop over a few values of one argument, the others fixed.
            let looped = self.rng.random_range(0..params.len());
            for (i, (p, ty)) in params.iter().enumerate() {
                if i != looped {
                    lines.push(format!("{p} = {}", self.literal(*ty)));
                }
            }
            let (p, ty) = &params[looped];
            let count = self.rng.random_range(2..=3);
            let values: Vec<String> = (0..count).map(|_| self.literal(*ty)).collect();
            let out = self.fresh_global(&["results", "outputs", "seen", "answers"]);
            let (start, add) = if ret == Ty::Int && self.chance(0.5) {
                ("0", format!("{out} = {out} + {}", call(&params)))
            } else {
                ("[]", format!("{out}.append({})", call(&params)))
            };
            lines.push(format!("{out} = {start}"));
            lines.push(format!("for {p} in [{}]:", values.join(", ")));
            lines.push(format!("    {add}"));
            lines.push(format!("print(\"{out}\", {out})"));
        } else {
            for (p, ty) in &params {
                lines.push(format!("{p} = {}", self.literal(*ty)));
            }
            let out = self.fresh_global(&["result", "answer", "value", "out"]);
            lines.push(format!("{out} = {}", call(&params)));
            if form == 2 {
                // A second call with one argument changed.
                let (p, ty) = params[self.rng.random_range(0..params.len())].clone();
                lines.push(format!("{p} = {}", self.literal(ty)));
                let other = self.fresh_global(&["again", "second", "other", "later"]);
                lines.push(format!("{other} = {}", call(&params)));
                lines.push(format!("print({out}, {other}, {out} == {other})"));
            } else {
                lines.push(format!("print({out})"));
            }
        }
        if self.chance(0.3) {
            let body: Vec<String> = lines.iter().map(|l| format!("    {l}")).collect();
            format!("if __name__ == \"__main__\":\n{}\n", body.join("\n"))
        } else {
            format!("{}\n", lines.join("\n"))
        }
    }

    fn emit(&mut self, line: String) {
        let pad = "    ".repeat(self.indent);
        for part in line.split('\n') {
            self.lines.push(format!("{pad}{part}"));
        }
    }

    // ---- names and scope ---------------------------------------------------------

    fn vars_of(&self, ty: Ty, writable: bool) -> Vec<String> {
        self.scope
            .iter()
            .filter(|v| v.ty == ty && !(writable && v.frozen))
            .map(|v| v.name.clone())
            .collect()
    }

    fn var(&mut self, ty: Ty) -> Option<String> {
        let vars = self.vars_of(ty, false);
        vars.choose(&mut self.rng).cloned()
    }

    fn writable_var(&mut self, ty: Ty) -> Option<String> {
        let vars = self.vars_of(ty, true);
        vars.choose(&mut self.rng).cloned()
    }

    fn taken(&self, name: &str) -> bool {
        self.scope.iter().any(|v| v.name == name) || self.used_names.iter().any(|n| n == name)
    }

    /// A local name for a new variable of `ty`, not bound in scope (nor in `also`).
    fn fresh_local(&mut self, ty: Ty, also: &[(String, Ty)]) -> String {
        let pool = ty.names();
        for _ in 0..10 {
            let name = self.pick(pool);
            if !self.taken(name) && !also.iter().any(|(n, _)| n == name) {
                return name.to_string();
            }
        }
        let mut n = 2;
        loop {
            let name = format!("{}{n}", pool[0]);
            if !self.taken(&name) && !also.iter().any(|(o, _)| *o == name) {
                return name;
            }
            n += 1;
        }
    }

    fn bind(&mut self, name: &str, ty: Ty) {
        self.scope.push(Var {
            name: name.to_string(),
            ty,
            frozen: false,
        });
    }

    fn set_frozen(&mut self, name: &str, frozen: bool) -> bool {
        let mut was = false;
        for v in self.scope.iter_mut().filter(|v| v.name == name) {
            was = v.frozen;
            v.frozen = frozen;
        }
        was
    }

    // ---- literals and expressions -------------------------------------------------

    fn str_lit(&mut self) -> String {
        let word = self.pick(WORDS);
        format!("'{word}'")
    }

    fn literal(&mut self, ty: Ty) -> String {
        match ty {
            Ty::Int => {
                if self.chance(0.1) {
                    self.small(-20, 100).to_string()
                } else {
                    self.small(-3, 12).to_string()
                }
            }
            Ty::Float => format!(
                "{}.{}",
                self.small(0, 9),
                self.pick(&["0", "5", "25", "75", "1"])
            ),
            Ty::Str => self.str_lit(),
            Ty::Bool => self.pick(&["True", "False"]).to_string(),
            Ty::Ints => {
                let n = self.rng.random_range(0..=5);
                let items: Vec<String> = (0..n).map(|_| self.small(-5, 15).to_string()).collect();
                format!("[{}]", items.join(", "))
            }
            Ty::Strs => {
                let n = self.rng.random_range(0..=4);
                let items: Vec<String> = (0..n)
                    .map(|_| format!("'{}'", self.pick(SINGLE_WORDS)))
                    .collect();
                format!("[{}]", items.join(", "))
            }
            Ty::Dict => {
                let n = self.rng.random_range(0..=3);
                let mut keys: Vec<&str> = Vec::new();
                for _ in 0..n {
                    let key = self.pick(KEYS);
                    if !keys.contains(&key) {
                        keys.push(key);
                    }
                }
                let items: Vec<String> = keys
                    .iter()
                    .map(|k| format!("'{k}': {}", self.small(0, 9)))
                    .collect();
                format!("{{{}}}", items.join(", "))
            }
            Ty::Set => {
                let n = self.rng.random_range(0..=4);
                if n == 0 {
                    return "set()".into();
                }
                let items: Vec<String> = (0..n).map(|_| self.small(0, 9).to_string()).collect();
                format!("{{{}}}", items.join(", "))
            }
            Ty::Pair => format!("({}, {})", self.small(-3, 9), self.small(-3, 9)),
            Ty::Obj(class) => self.constructor(class),
        }
    }

    fn constructor(&mut self, class: Class) -> String {
        let name = self
            .class
            .as_ref()
            .map(|(_, n)| n.clone())
            .unwrap_or_default();
        match class {
            Class::Tally => format!("{name}({})", self.atom(Ty::Int)),
            Class::Stack => format!("{name}()"),
            Class::Account => format!("{name}({}, {})", self.str_lit(), self.small(10, 100)),
            Class::Point | Class::Rect => {
                format!("{name}({}, {})", self.atom(Ty::Int), self.atom(Ty::Int))
            }
        }
    }

    /// A variable (mostly, where one exists) or a literal.
    fn atom(&mut self, ty: Ty) -> String {
        match self.var(ty) {
            Some(v) if self.chance(0.85) => v,
            None if ty == Ty::Bool => {
                // A condition reads better as a comparison than as `True`, and better
                // still when it reads a variable.
                let x = match self.int_of_any_var() {
                    Some(x) if self.chance(0.8) => x,
                    _ => self.atom(Ty::Int),
                };
                format!("{x} > {}", self.small(0, 5))
            }
            None if ty == Ty::Int && self.chance(0.6) => {
                self.int_of_any_var().unwrap_or_else(|| self.literal(ty))
            }
            _ => self.literal(ty),
        }
    }

    /// An int read off some variable in scope, whatever its type (`len(xs)`,
    /// `round(rate)`), so that code uses its inputs.
    fn int_of_any_var(&mut self) -> Option<String> {
        let vars: Vec<Var> = self
            .scope
            .iter()
            .filter(|v| !matches!(v.ty, Ty::Obj(_)))
            .cloned()
            .collect();
        let var = vars.choose(&mut self.rng)?;
        let name = &var.name;
        Some(match var.ty {
            Ty::Int => name.clone(),
            Ty::Float => format!("round({name})"),
            Ty::Bool => format!("int({name})"),
            Ty::Pair => format!("{name}[{}]", self.small(0, 1)),
            _ => format!("len({name})"),
        })
    }

    fn sub(&mut self, ty: Ty, depth: u32) -> String {
        wrap(self.expr(ty, depth))
    }

    /// An expression of type `ty`, nested at most `depth` deep.
    fn expr(&mut self, ty: Ty, depth: u32) -> String {
        if depth == 0 || self.chance(0.3) {
            return self.atom(ty);
        }
        let d = depth - 1;
        match ty {
            Ty::Int => self.int_expr(d),
            Ty::Float => match self.rng.random_range(0..5) {
                0 => format!("{} / {}", self.sub(Ty::Int, d), self.small(2, 5)),
                1 => format!(
                    "{} * {}",
                    self.sub(Ty::Float, d),
                    self.pick(&["0.5", "1.5", "2.0"])
                ),
                2 => format!("round({}, 2)", self.expr(Ty::Float, d)),
                3 => format!("float({})", self.expr(Ty::Int, d)),
                _ => {
                    let xs = self.sub(Ty::Ints, 0);
                    format!("sum({xs}) / max(len({xs}), 1)")
                }
            },
            Ty::Str => self.str_expr(d),
            Ty::Bool => self.bool_expr(d),
            Ty::Ints => self.ints_expr(d),
            Ty::Strs => match self.rng.random_range(0..8) {
                0 => format!("{}.split()", self.sub(Ty::Str, d)),
                1 => format!(
                    "{}.split('{}')",
                    self.sub(Ty::Str, d),
                    self.pick(&[",", "-", " "])
                ),
                2 => format!("sorted({})", self.expr(Ty::Strs, d)),
                3 => format!("sorted({}, key=len)", self.expr(Ty::Strs, d)),
                4 => format!("[w.upper() for w in {}]", self.sub(Ty::Strs, d)),
                5 => format!("list({}[:4])", self.sub(Ty::Str, d)),
                6 => format!("sorted({})", self.sub(Ty::Dict, d)),
                _ => format!(
                    "[w for w in {} if len(w) > {}]",
                    self.sub(Ty::Strs, d),
                    self.small(1, 4)
                ),
            },
            Ty::Dict => match self.rng.random_range(0..4) {
                0 => format!("{{w: len(w) for w in {}}}", self.sub(Ty::Strs, d)),
                1 => format!(
                    "dict(zip({}, {}))",
                    self.expr(Ty::Strs, d),
                    self.expr(Ty::Ints, d)
                ),
                2 => match self.var(Ty::Dict) {
                    Some(v) => format!("dict({v})"),
                    None => self.literal(Ty::Dict),
                },
                _ => format!(
                    "{{k: v for k, v in {}.items() if v > {}}}",
                    self.sub(Ty::Dict, d),
                    self.small(0, 4)
                ),
            },
            Ty::Set => match self.rng.random_range(0..5) {
                0 => format!("set({})", self.expr(Ty::Ints, d)),
                1 => format!(
                    "{{v % {} for v in {}}}",
                    self.small(2, 5),
                    self.sub(Ty::Ints, d)
                ),
                2 => format!("{} | {}", self.sub(Ty::Set, d), self.literal(Ty::Set)),
                3 => format!("{} & {}", self.sub(Ty::Set, d), self.sub(Ty::Set, d)),
                _ => format!("{} - {}", self.sub(Ty::Set, d), self.literal(Ty::Set)),
            },
            Ty::Pair => match self.rng.random_range(0..3) {
                0 => format!("({}, {})", self.expr(Ty::Int, d), self.expr(Ty::Int, d)),
                1 => format!("divmod({}, {})", self.expr(Ty::Int, d), self.small(2, 7)),
                _ => {
                    let xs = self.sub(Ty::Ints, 0);
                    format!("(min({xs}, default=0), max({xs}, default=0))")
                }
            },
            Ty::Obj(class) => self.var(ty).unwrap_or_else(|| self.constructor(class)),
        }
    }

    fn int_expr(&mut self, d: u32) -> String {
        if let Some(obj) = self.object_var() {
            if self.chance(0.15) {
                if let Some(e) = self.object_int(&obj) {
                    return e;
                }
            }
        }
        if !self.callable.is_empty() && self.trips <= 4 && self.chance(0.1) {
            let h = self.pick(&self.callable.clone());
            if self.helpers[h].ret == Ty::Int && !self.helpers[h].raises {
                return self.call_text(h);
            }
        }
        match self.rng.random_range(0..18) {
            0 => format!("{} + {}", self.sub(Ty::Int, d), self.sub(Ty::Int, d)),
            1 => format!("{} - {}", self.sub(Ty::Int, d), self.sub(Ty::Int, d)),
            2 => format!("{} * {}", self.sub(Ty::Int, d), self.small(2, 4)),
            3 => format!("{} // {}", self.sub(Ty::Int, d), self.small(2, 5)),
            4 => format!("{} % {}", self.sub(Ty::Int, d), self.small(2, 7)),
            5 => format!("abs({})", self.expr(Ty::Int, d)),
            6 => format!("max({}, {})", self.expr(Ty::Int, d), self.expr(Ty::Int, d)),
            7 => format!("min({}, {})", self.expr(Ty::Int, d), self.expr(Ty::Int, d)),
            8 => {
                let ty = self.pick(&[Ty::Ints, Ty::Strs, Ty::Str, Ty::Dict, Ty::Set]);
                format!("len({})", self.expr(ty, d))
            }
            9 => format!("sum({})", self.expr(Ty::Ints, d)),
            10 => format!("{}.count({})", self.sub(Ty::Ints, d), self.atom(Ty::Int)),
            11 => format!("{}.count('{}')", self.sub(Ty::Str, d), self.pick(CHARS)),
            12 => format!("{}.find('{}')", self.sub(Ty::Str, d), self.pick(CHARS)),
            13 => format!("{}.get('{}', 0)", self.sub(Ty::Dict, d), self.pick(KEYS)),
            14 => format!("round({})", self.expr(Ty::Float, d)),
            15 => format!("{}[{}]", self.sub(Ty::Pair, d), self.small(0, 1)),
            16 => match self.var(Ty::Ints) {
                Some(xs) => format!("{xs}[{} % len({xs})] if {xs} else 0", self.sub(Ty::Int, d)),
                None => format!("len({})", self.atom(Ty::Ints)),
            },
            _ => format!("max({}, default=0)", self.expr(Ty::Ints, d)),
        }
    }

    fn str_expr(&mut self, d: u32) -> String {
        match self.rng.random_range(0..15) {
            0 => format!("{} + {}", self.sub(Ty::Str, d), self.str_lit()),
            1 => format!("{}.upper()", self.sub(Ty::Str, d)),
            2 => format!("{}.lower()", self.sub(Ty::Str, d)),
            3 => format!("{}.strip()", self.sub(Ty::Str, d)),
            4 => format!("{}.title()", self.sub(Ty::Str, d)),
            5 => format!("{}[:{}]", self.sub(Ty::Str, d), self.small(1, 4)),
            6 => format!("{}[{}:]", self.sub(Ty::Str, d), self.small(1, 3)),
            7 => format!("{}[::-1]", self.sub(Ty::Str, d)),
            8 => format!("str({})", self.expr(Ty::Int, d)),
            9 => format!(
                "'{}'.join({})",
                self.pick(&["", " ", ", ", "-"]),
                self.expr(Ty::Strs, d)
            ),
            10 => format!(
                "{}.replace('{}', '{}')",
                self.sub(Ty::Str, d),
                self.pick(CHARS),
                self.pick(CHARS)
            ),
            11 => {
                let a = self.atom(Ty::Str);
                let b = self.atom(Ty::Int);
                format!("f\"{{{a}}}:{{{b}}}\"")
            }
            12 => format!("{} * {}", self.str_lit(), self.small(2, 3)),
            13 => format!(
                "'{}'.join(str(v) for v in {})",
                self.pick(&[",", " ", "+"]),
                self.sub(Ty::Ints, d)
            ),
            _ => format!("{}.capitalize()", self.sub(Ty::Str, d)),
        }
    }

    fn bool_expr(&mut self, d: u32) -> String {
        let op = self.pick(&["<", "<=", ">", ">=", "==", "!="]);
        match self.rng.random_range(0..12) {
            0..=2 => format!("{} {op} {}", self.sub(Ty::Int, d), self.sub(Ty::Int, d)),
            3 => format!("{} in {}", self.sub(Ty::Int, d), self.sub(Ty::Ints, d)),
            4 => format!("'{}' in {}", self.pick(CHARS), self.sub(Ty::Str, d)),
            5 => format!(
                "{}.startswith('{}')",
                self.sub(Ty::Str, d),
                self.pick(CHARS)
            ),
            6 => format!("not {}", self.sub(Ty::Bool, d)),
            7 => format!("{} and {}", self.sub(Ty::Bool, d), self.sub(Ty::Bool, d)),
            8 => format!("{} % 2 == 0", self.sub(Ty::Int, d)),
            9 => format!("'{}' in {}", self.pick(KEYS), self.sub(Ty::Dict, d)),
            10 => format!("{}.isdigit()", self.sub(Ty::Str, d)),
            _ => format!(
                "{}(v > {} for v in {})",
                self.pick(&["all", "any"]),
                self.small(0, 5),
                self.sub(Ty::Ints, d)
            ),
        }
    }

    fn ints_expr(&mut self, d: u32) -> String {
        match self.rng.random_range(0..15) {
            0 => format!("sorted({})", self.expr(Ty::Ints, d)),
            1 => format!("sorted({}, reverse=True)", self.expr(Ty::Ints, d)),
            2 => format!(
                "{}[{}:{}]",
                self.sub(Ty::Ints, d),
                self.small(0, 1),
                self.small(2, 4)
            ),
            3 => format!("{}[::-1]", self.sub(Ty::Ints, d)),
            4 => format!("{}[::2]", self.sub(Ty::Ints, d)),
            5 => format!(
                "[v * {} for v in {}]",
                self.small(2, 3),
                self.sub(Ty::Ints, d)
            ),
            6 => format!(
                "[v for v in {} if v % 2 == {}]",
                self.sub(Ty::Ints, d),
                self.small(0, 1)
            ),
            7 => format!("list(range({}))", self.small(0, 5)),
            8 => format!("{} + {}", self.sub(Ty::Ints, d), self.literal(Ty::Ints)),
            9 => format!(
                "sorted({}, key=lambda v: (v % 3, v))",
                self.expr(Ty::Ints, d)
            ),
            10 => format!("[len(w) for w in {}]", self.sub(Ty::Strs, d)),
            11 => format!("list({}.values())", self.sub(Ty::Dict, d)),
            12 => format!("sorted({})", self.expr(Ty::Set, d)),
            13 => format!("list({})", self.sub(Ty::Pair, d)),
            _ => format!("sorted({}, key=abs)", self.expr(Ty::Ints, d)),
        }
    }

    // ---- objects ------------------------------------------------------------------

    fn object_var(&mut self) -> Option<String> {
        let (class, _) = self.class.clone()?;
        self.var(Ty::Obj(class))
    }

    fn object_int(&mut self, obj: &str) -> Option<String> {
        let (class, _) = self.class.clone()?;
        Some(match class {
            Class::Tally => match self.chance(0.5) {
                true => format!("{obj}.add({})", self.atom(Ty::Int)),
                false => format!("{obj}.total"),
            },
            Class::Stack => format!("{obj}.size()"),
            Class::Account => format!("{obj}.balance"),
            Class::Point => format!("{obj}.dist()"),
            Class::Rect => format!("{obj}.area()"),
        })
    }

    /// Create an object, or use one: a method call as a statement.
    fn object_statement(&mut self) {
        let Some((class, _)) = self.class.clone() else {
            return;
        };
        let obj = match self.object_var() {
            Some(obj) if self.chance(0.7) => obj,
            _ => {
                let name = self.fresh_local(Ty::Obj(class), &[]);
                let ctor = self.constructor(class);
                self.emit(format!("{name} = {ctor}"));
                self.bind(&name, Ty::Obj(class));
                name
            }
        };
        let int = self.atom(Ty::Int);
        let text = match class {
            Class::Tally => format!("{obj}.add({int})"),
            Class::Stack => {
                if self.chance(0.5) {
                    format!("{obj}.push({int})")
                } else {
                    format!("if {obj}.size() > 0:\n    print({obj}.pop())\nelse:\n    {obj}.push({int})")
                }
            }
            Class::Account => {
                if self.chance(0.6) {
                    format!("try:\n    {obj}.withdraw({int})\nexcept ValueError as err:\n    print(err)")
                } else {
                    format!("{obj}.deposit({int})")
                }
            }
            Class::Point => format!("{obj}.move({int}, {})", self.atom(Ty::Int)),
            Class::Rect => format!("print({obj}.kind, {obj}.area())"),
        };
        self.emit(text);
    }

    // ---- statements ---------------------------------------------------------------

    fn call_text(&mut self, h: usize) -> String {
        let helper = self.helpers[h].clone();
        let args: Vec<String> = helper
            .args
            .iter()
            .map(|arg| match *arg {
                Arg::Any(ty) => self.expr(ty, 1),
                Arg::Nat(n) => format!("{} % {n}", self.sub(Ty::Int, 0)),
                Arg::Pos(n) => format!("{} % {n} + 1", self.sub(Ty::Int, 0)),
                Arg::Short(ty, n) => format!("{}[:{n}]", self.sub(ty, 0)),
            })
            .collect();
        format!("{}({})", helper.name, args.join(", "))
    }

    /// Call helper `h`, keep or print its result.
    fn call_statement(&mut self, h: usize) {
        let call = self.call_text(h);
        let ret = self.helpers[h].ret;
        let name = self.fresh_local(ret, &[]);
        if self.helpers[h].raises {
            let fallback = self.literal(ret);
            let mut text = format!("try:\n    {name} = {call}\nexcept ValueError as err:\n    print(\"error:\", err)\n    {name} = {fallback}");
            if self.chance(0.3) {
                text.push_str(&format!(
                    "\nfinally:\n    print(\"checked\", {})",
                    self.atom(Ty::Int)
                ));
            }
            self.emit(text);
        } else if self.chance(0.15) {
            self.emit(format!("print({call})"));
            return;
        } else {
            self.emit(format!("{name} = {call}"));
        }
        self.bind(&name, ret);
    }

    /// `count` statements at the current indentation; new names bound in a nested
    /// block are forgotten when it ends.
    fn block(&mut self, count: usize) {
        for _ in 0..count {
            self.statement();
        }
    }

    fn nested(&mut self, header: String, count: usize) {
        self.emit(header);
        let saved = self.scope.len();
        self.indent += 1;
        self.nesting += 1;
        self.block(count.max(1));
        self.nesting -= 1;
        self.indent -= 1;
        self.scope.truncate(saved);
    }

    fn inner_count(&mut self) -> usize {
        self.rng.random_range(1..=2)
    }

    fn statement(&mut self) {
        let can_nest = self.nesting < self.config.nesting;
        let can_loop = can_nest && self.trips * 3 <= MAX_TRIPS;
        let has_mutable = VALUE_TYPES
            .iter()
            .any(|&t| t.mutable() && !self.vars_of(t, true).is_empty());
        let options: [(u32, bool); 14] = [
            (8, true),                                         // 0 assign
            (5, true),                                         // 1 update
            (5, has_mutable),                                  // 2 mutate
            (3, true),                                         // 3 print
            (4, can_nest),                                     // 4 if
            (4, can_loop),                                     // 5 for
            (1, can_loop),                                     // 6 while
            (3, can_nest),                                     // 7 try
            (3, !self.callable.is_empty() && self.trips <= 4), // 8 call
            (3, self.class.is_some() && self.in_entry),        // 9 object
            (1, true),                                         // 10 unpack
            (1, self.nesting > 0),                             // 11 early return
            (3, self.loops > 0),                               // 12 break / continue
            (1, true),                                         // 13 sort with key
        ];
        let total: u32 = options.iter().filter(|(_, ok)| *ok).map(|(w, _)| w).sum();
        let mut roll = self.rng.random_range(0..total);
        let mut kind = 0;
        for (i, (weight, ok)) in options.iter().enumerate() {
            if !ok {
                continue;
            }
            if roll < *weight {
                kind = i;
                break;
            }
            roll -= weight;
        }
        match kind {
            0 => self.assign(),
            1 => self.update(),
            2 => self.mutate(),
            3 => self.print(),
            4 => self.if_statement(),
            5 => self.for_statement(),
            6 => self.while_statement(),
            7 => self.try_statement(),
            8 => {
                let h = self.pick(&self.callable.clone());
                self.call_statement(h);
            }
            9 => self.object_statement(),
            10 => self.unpack(),
            11 => {
                let cond = self.expr(Ty::Bool, 1);
                let value = self.expr(self.ret, 1);
                self.emit(format!("if {cond}:\n    return {value}"));
            }
            12 => {
                let cond = self.expr(Ty::Bool, 1);
                let word = self.pick(&["break", "continue"]);
                self.emit(format!("if {cond}:\n    {word}"));
            }
            _ => self.sort_with_key(),
        }
    }

    fn assign(&mut self) {
        // Half the time a value of a type already in scope, so that it can build on it.
        let in_scope: Vec<Ty> = self
            .scope
            .iter()
            .map(|v| v.ty)
            .filter(|ty| VALUE_TYPES.contains(ty))
            .collect();
        let ty = match in_scope.choose(&mut self.rng) {
            Some(&ty) if self.chance(0.5) => ty,
            _ => self.pick(&VALUE_TYPES),
        };
        let mut value = self.expr(ty, 2);
        // A bare mutable variable would alias it; copy instead.
        if ty.mutable() && self.scope.iter().any(|v| v.name == value) {
            value = match ty {
                Ty::Ints | Ty::Strs => format!("list({value})"),
                Ty::Dict => format!("dict({value})"),
                _ => format!("set({value})"),
            };
        }
        match self.writable_var(ty) {
            Some(name) if name != value && self.chance(0.3) => {
                self.emit(format!("{name} = {value}"))
            }
            _ => {
                let name = self.fresh_local(ty, &[]);
                self.emit(format!("{name} = {value}"));
                self.bind(&name, ty);
            }
        }
    }

    fn update(&mut self) {
        let ty = self.pick(&[Ty::Int, Ty::Int, Ty::Str, Ty::Float]);
        let Some(name) = self.writable_var(ty) else {
            return self.assign();
        };
        let text = match ty {
            Ty::Int => {
                let op = self.pick(&["+=", "-=", "+=", "*=", "//=", "%="]);
                let rhs = match op {
                    "*=" | "//=" | "%=" => self.small(2, 5).to_string(),
                    _ => self.expr(Ty::Int, 1),
                };
                format!("{name} {op} {rhs}")
            }
            Ty::Str => {
                let rhs = match self.chance(0.5) {
                    true => self.str_lit(),
                    false => format!("str({})", self.atom(Ty::Int)),
                };
                format!("{name} += {rhs}")
            }
            _ => format!(
                "{name} = round({name} * {}, 3)",
                self.pick(&["0.5", "1.5", "2.0"])
            ),
        };
        self.emit(text);
    }

    fn mutate(&mut self) {
        let ty = self.pick(&[Ty::Ints, Ty::Ints, Ty::Strs, Ty::Dict, Ty::Set]);
        let Some(name) = self.writable_var(ty) else {
            return self.assign();
        };
        let text = match ty {
            Ty::Ints => match self.rng.random_range(0..7) {
                0 | 1 => format!("{name}.append({})", self.expr(Ty::Int, 1)),
                2 => format!("{name}.insert(0, {})", self.atom(Ty::Int)),
                3 => format!("{name}.sort()"),
                4 => format!("{name}.reverse()"),
                5 => format!("if {name}:\n    {name}.pop()"),
                _ => {
                    let v = self.atom(Ty::Int);
                    format!("if {v} in {name}:\n    {name}.remove({v})")
                }
            },
            Ty::Strs => match self.rng.random_range(0..3) {
                0 => format!("{name}.append({})", self.expr(Ty::Str, 1)),
                1 => format!("{name}.extend({}.split())", self.sub(Ty::Str, 0)),
                _ => format!("{name}.sort(key=len)"),
            },
            Ty::Dict => {
                let key = self.pick(KEYS);
                match self.rng.random_range(0..3) {
                    0 => format!("{name}['{key}'] = {}", self.expr(Ty::Int, 1)),
                    1 => format!("{name}['{key}'] = {name}.get('{key}', 0) + 1"),
                    _ => format!("{name}.pop('{key}', None)"),
                }
            }
            _ => match self.chance(0.6) {
                true => format!("{name}.add({})", self.expr(Ty::Int, 1)),
                false => format!("{name}.discard({})", self.atom(Ty::Int)),
            },
        };
        self.emit(text);
    }

    fn print(&mut self) {
        let text = match self.rng.random_range(0..4) {
            0 => {
                let ty = self.pick(&VALUE_TYPES);
                format!("print({})", self.expr(ty, 1))
            }
            1 => {
                let a = self.atom(Ty::Str);
                let b = self.atom(Ty::Int);
                format!("print(f\"{{{a}}} -> {{{b}}}\")")
            }
            2 => {
                let label = self.pick(&["total", "step", "value", "result"]);
                format!("print('{label}:', {}, sep=' ')", self.expr(Ty::Int, 1))
            }
            _ => format!("print({}, end=' ')", self.atom(Ty::Str)),
        };
        self.emit(text);
    }

    fn if_statement(&mut self) {
        let cond = self.expr(Ty::Bool, 2);
        let n = self.inner_count();
        self.nested(format!("if {cond}:"), n);
        if self.chance(0.3) {
            let cond = self.expr(Ty::Bool, 1);
            self.nested(format!("elif {cond}:"), 1);
        }
        if self.chance(0.5) {
            self.nested("else:".into(), 1);
        }
    }

    fn for_statement(&mut self) {
        // (header, loop names with types, collection frozen in the body, trip estimate)
        let mut frozen: Option<String> = None;
        let (header, bound, trips) = match self.rng.random_range(0..7) {
            0 => {
                let i = self.fresh_local(Ty::Int, &[]);
                let n = self.small(2, 5) as usize;
                (format!("for {i} in range({n}):"), vec![(i, Ty::Int)], n)
            }
            1 => match self.var(Ty::Ints) {
                Some(xs) => {
                    let v = self.fresh_local(Ty::Int, &[]);
                    frozen = Some(xs.clone());
                    (format!("for {v} in {xs}:"), vec![(v, Ty::Int)], 4)
                }
                None => {
                    let v = self.fresh_local(Ty::Int, &[]);
                    let lit = self.literal(Ty::Ints);
                    (format!("for {v} in {lit}:"), vec![(v, Ty::Int)], 4)
                }
            },
            2 => {
                let xs = self.atom(Ty::Ints);
                if self.scope.iter().any(|v| v.name == xs) {
                    frozen = Some(xs.clone());
                }
                let i = self.fresh_local(Ty::Int, &[]);
                let v = self.fresh_local(Ty::Int, &[(i.clone(), Ty::Int)]);
                (
                    format!("for {i}, {v} in enumerate({xs}):"),
                    vec![(i, Ty::Int), (v, Ty::Int)],
                    4,
                )
            }
            3 => {
                let s = self.atom(Ty::Str);
                let c = self.pick(&["c", "ch", "letter"]).to_string();
                let c = if self.taken(&c) {
                    self.fresh_local(Ty::Str, &[])
                } else {
                    c
                };
                (format!("for {c} in {s}[:5]:"), vec![(c, Ty::Str)], 5)
            }
            4 => {
                let ws = self.atom(Ty::Strs);
                if self.scope.iter().any(|v| v.name == ws) {
                    frozen = Some(ws.clone());
                }
                let w = self.fresh_local(Ty::Str, &[]);
                (format!("for {w} in {ws}:"), vec![(w, Ty::Str)], 4)
            }
            5 => {
                let d = self.atom(Ty::Dict);
                if self.scope.iter().any(|v| v.name == d) {
                    frozen = Some(d.clone());
                }
                let k = self.fresh_local(Ty::Str, &[]);
                let v = self.fresh_local(Ty::Int, &[(k.clone(), Ty::Str)]);
                let order = match self.chance(0.3) {
                    true => format!("sorted({d}.items(), key=lambda kv: kv[1])"),
                    false => format!("{d}.items()"),
                };
                (
                    format!("for {k}, {v} in {order}:"),
                    vec![(k, Ty::Str), (v, Ty::Int)],
                    3,
                )
            }
            _ => {
                let ws = self.atom(Ty::Strs);
                let xs = self.atom(Ty::Ints);
                let w = self.fresh_local(Ty::Str, &[]);
                let v = self.fresh_local(Ty::Int, &[(w.clone(), Ty::Str)]);
                (
                    format!("for {w}, {v} in zip({ws}, {xs}):"),
                    vec![(w, Ty::Str), (v, Ty::Int)],
                    4,
                )
            }
        };
        let was = frozen.as_ref().map(|name| self.set_frozen(name, true));
        let saved = self.scope.len();
        for (name, ty) in &bound {
            self.bind(name, *ty);
            self.set_frozen(name, true);
        }
        let count = self.inner_count();
        self.loop_body(header, count, trips);
        self.scope.truncate(saved);
        if self.chance(0.15) {
            let line = format!("print('no break', {})", self.atom(Ty::Int));
            self.nested_text("else:", &line);
        }
        if let (Some(name), Some(was)) = (frozen, was) {
            self.set_frozen(&name, was);
        }
    }

    fn nested_text(&mut self, header: &str, line: &str) {
        self.emit(format!("{header}\n    {line}"));
    }

    fn loop_body(&mut self, header: String, count: usize, trips: usize) {
        self.loops += 1;
        self.trips *= trips.max(1);
        self.nested(header, count);
        self.trips /= trips.max(1);
        self.loops -= 1;
    }

    fn while_statement(&mut self) {
        match self.writable_var(Ty::Ints) {
            Some(xs) if self.chance(0.5) => {
                // Drain a list: the body may not grow it.
                let v = self.fresh_local(Ty::Int, &[]);
                let was = self.set_frozen(&xs, true);
                self.emit(format!("while {xs}:"));
                self.indent += 1;
                self.emit(format!("{v} = {xs}.pop()"));
                self.indent -= 1;
                let saved = self.scope.len();
                self.bind(&v, Ty::Int);
                self.loops += 1;
                self.trips *= 4;
                self.indent += 1;
                self.nesting += 1;
                self.statement();
                self.nesting -= 1;
                self.indent -= 1;
                self.trips /= 4;
                self.loops -= 1;
                self.scope.truncate(saved);
                self.set_frozen(&xs, was);
            }
            _ => {
                // A counter decremented first thing, so `continue` cannot skip it.
                let c = self.fresh_local(Ty::Int, &[]);
                let n = self.small(2, 4);
                self.emit(format!("{c} = {n}"));
                self.emit(format!("while {c} > 0:"));
                self.indent += 1;
                self.emit(format!("{c} -= 1"));
                self.indent -= 1;
                self.bind(&c, Ty::Int);
                self.set_frozen(&c, true);
                let saved = self.scope.len();
                self.loops += 1;
                self.trips *= n as usize;
                self.indent += 1;
                self.nesting += 1;
                let count = self.inner_count();
                self.block(count);
                self.nesting -= 1;
                self.indent -= 1;
                self.trips /= n as usize;
                self.loops -= 1;
                self.scope.truncate(saved);
                self.set_frozen(&c, false);
            }
        }
    }

    fn try_statement(&mut self) {
        let v = self.fresh_local(Ty::Int, &[]);
        let text = match self.rng.random_range(0..5) {
            0 => {
                let s = self
                    .pick(&["'12'", "'x7'", "'0'", "'3.5'", "' 8 '", "''"])
                    .to_string();
                let s = match self.var(Ty::Str) {
                    Some(var) if self.chance(0.5) => var,
                    _ => s,
                };
                format!("try:\n    {v} = int({s})\nexcept ValueError:\n    {v} = -1")
            }
            1 => {
                let xs = self.atom(Ty::Ints);
                let i = self.expr(Ty::Int, 1);
                format!("try:\n    {v} = {xs}[{i}]\nexcept IndexError:\n    print('no index', {i})\n    {v} = 0")
            }
            2 => {
                let a = self.atom(Ty::Int);
                let b = self.atom(Ty::Int);
                format!("try:\n    {v} = {a} // ({b} % 3)\nexcept ZeroDivisionError as e:\n    print('oops:', e)\n    {v} = 0\nelse:\n    print('fine')")
            }
            3 => {
                let d = self.atom(Ty::Dict);
                let key = self.pick(KEYS);
                format!(
                    "try:\n    {v} = {d}['{key}']\nexcept KeyError as e:\n    {v} = len(str(e))"
                )
            }
            _ => {
                let cond = self.expr(Ty::Bool, 1);
                let n = self.atom(Ty::Int);
                format!("try:\n    if {cond}:\n        raise ValueError(\"stop at \" + str({n}))\n    {v} = 1\nexcept ValueError as e:\n    print(e)\n    {v} = 2\nfinally:\n    print('done')")
            }
        };
        self.emit(text);
        self.bind(&v, Ty::Int);
    }

    fn unpack(&mut self) {
        let ints = self.vars_of(Ty::Int, true);
        if ints.len() >= 2 && self.chance(0.5) {
            let (a, b) = (ints[0].clone(), ints[1].clone());
            self.emit(format!("{a}, {b} = {b}, {a}"));
            return;
        }
        let q = self.fresh_local(Ty::Int, &[]);
        let r = self.fresh_local(Ty::Int, &[(q.clone(), Ty::Int)]);
        let pair = self.expr(Ty::Pair, 1);
        self.emit(format!("{q}, {r} = {pair}"));
        self.bind(&q, Ty::Int);
        self.bind(&r, Ty::Int);
    }

    fn sort_with_key(&mut self) {
        let name = self.fresh_local(Ty::Strs, &[]);
        let text = match self.rng.random_range(0..3) {
            0 => format!(
                "{name} = sorted({}, key=lambda w: (len(w), w), reverse=True)",
                self.expr(Ty::Strs, 1)
            ),
            1 => format!("{name} = sorted({}, key=str.lower)", self.expr(Ty::Strs, 1)),
            _ => {
                let d = self.atom(Ty::Dict);
                format!("{name} = sorted({d}, key={d}.get)")
            }
        };
        self.emit(text);
        self.bind(&name, Ty::Strs);
    }
}

fn join_names(params: &[(String, Ty)]) -> String {
    params
        .iter()
        .map(|(n, _)| n.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Parenthesise an expression unless it is one operand already (a name, a literal, a
/// call, a subscript): anything with a space or a leading minus outside brackets.
fn wrap(expr: String) -> String {
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut atomic = !expr.starts_with('-');
    for c in expr.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '(' | '[' | '{') => depth += 1,
            (None, ')' | ']' | '}') => depth -= 1,
            (None, ' ') if depth == 0 => atomic = false,
            _ => {}
        }
    }
    if atomic {
        expr
    } else {
        format!("({expr})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_program() {
        let config = GenConfig::level(3);
        for seed in 0..50 {
            assert_eq!(generate(seed, &config), generate(seed, &config));
        }
        let distinct: std::collections::HashSet<String> =
            (0..50).map(|seed| generate(seed, &config).source).collect();
        assert!(
            distinct.len() >= 48,
            "only {} distinct programs of 50",
            distinct.len()
        );
    }

    /// Every construct the generator promises shows up in a few hundred programs.
    #[test]
    fn programs_cover_what_real_code_does() {
        let sources: Vec<String> = (0..300)
            .map(|seed| generate(seed, &GenConfig::level(1 + (seed % 3) as u32)).source)
            .collect();
        let features: &[(&str, &[&str])] = &[
            ("for loop", &["for "]),
            ("while loop", &["while "]),
            ("break", &["break"]),
            ("continue", &["continue"]),
            ("for/else", &["print('no break'"]),
            ("if/elif/else", &["elif "]),
            ("comprehension", &[" for v in ", " for w in "]),
            ("slicing", &["[::-1]", "[::2]", ":4]"]),
            ("class", &["class "]),
            ("inheritance", &["super().__init__"]),
            ("nested function", &["    def "]),
            ("nonlocal", &["nonlocal "]),
            (
                "caught exception",
                &["except ValueError", "except IndexError", "except KeyError"],
            ),
            ("raise", &["raise "]),
            ("finally", &["finally:"]),
            (
                "sort with key",
                &["key=len", "key=lambda", "key=str.lower", ".get)"],
            ),
            ("string method", &[".upper()", ".split()", ".replace("]),
            ("dict method", &[".items()", ".get("]),
            ("set", &["set(", ".add("]),
            ("tuple unpacking", &[", r = ", " = divmod(", "lo, hi"]),
            ("f-string", &["f\""]),
            ("print", &["print("]),
            ("early return", &["        return "]),
            (
                "module constant",
                &["LIMIT = ", "BASE = ", "STEP = ", "OFFSET = "],
            ),
        ];
        for (feature, marks) in features {
            let count = sources
                .iter()
                .filter(|s| marks.iter().any(|m| s.contains(m)))
                .count();
            assert!(count >= 3, "{feature}: in {count} programs of 300");
        }
        let recursive = sources
            .iter()
            .filter(|s| {
                s.lines().filter_map(|l| l.strip_prefix("def ")).any(|def| {
                    let name = def.split('(').next().unwrap();
                    let body: String = s
                        .split(&format!("def {name}("))
                        .nth(1)
                        .unwrap()
                        .lines()
                        .skip(1)
                        .take_while(|l| l.starts_with(' ') || l.is_empty())
                        .collect();
                    body.contains(&format!("{name}("))
                })
            })
            .count();
        assert!(recursive >= 10, "recursion in {recursive} programs of 300");
    }

    #[test]
    fn a_script_is_the_module_then_code_that_calls_its_entry() {
        let config = GenConfig::level(2);
        let forms: Vec<String> = (0..60)
            .map(|seed| {
                let script = generate_script(seed, &config);
                assert!(script.call.is_empty());
                assert_eq!(script, generate_script(seed, &config));
                script.source
            })
            .collect();
        let has = |mark: &str| forms.iter().filter(|s| s.contains(mark)).count();
        assert!(has("\nfor ") >= 5, "module-level loops: {}", has("\nfor "));
        assert!(has("if __name__ == \"__main__\":") >= 5);
        // A script ends by printing what it computed.
        for source in &forms {
            let last = source.trim_end().lines().last().unwrap();
            assert!(last.contains("print("), "{source}");
        }
    }

    #[test]
    fn harder_levels_write_longer_programs() {
        let mean_lines = |level| {
            let config = GenConfig::level(level);
            (0..200)
                .map(|s| generate(s, &config).source.lines().count())
                .sum::<usize>() as f64
                / 200.0
        };
        let (easy, hard) = (mean_lines(1), mean_lines(3));
        assert!(easy < hard, "level 1: {easy} lines, level 3: {hard}");
        assert!(
            (10.0..=40.0).contains(&hard),
            "level 3 averages {hard} lines"
        );
    }

    /// Trace programs of every level with real Python, one in four a script: none may
    /// fail to compile or run away, few may end in an uncaught error, and traces must
    /// stay short; a script runs in the module's frame and calls into its functions.
    #[test]
    fn generated_programs_trace_and_terminate() {
        use crate::tracer::{trace, Limits, Program};
        use rayon::prelude::*;
        let dir = tempfile::tempdir().unwrap();
        let limits = Limits {
            max_events: 5_000,
            max_seconds: 5.0,
            ..Limits::default()
        };
        let results: Vec<(String, usize, String)> = (0..320u64)
            .into_par_iter()
            .map(|seed| {
                let config = GenConfig::level(1 + (seed % 3) as u32);
                let script = seed % 4 == 3;
                let program = if script {
                    generate_script(seed, &config)
                } else {
                    generate(seed, &config)
                };
                let path = dir.path().join(format!("p{seed}.py"));
                std::fs::write(&path, &program.source).unwrap();
                let call = (!script).then(|| program.call.clone());
                let loaded = Program::load(&path, call).unwrap();
                match trace(&loaded, &limits) {
                    Ok(t) => {
                        if script {
                            let states = t.tree.states();
                            assert_eq!(states[0].function, "<module>", "{}", program.source);
                            assert!(
                                states.iter().any(|s| s.depth >= 1),
                                "a script that calls nothing: {}",
                                program.source
                            );
                        }
                        (
                            t.tree.exit().kind().to_string(),
                            t.tree.len(),
                            format!("{}", t.tree.exit()),
                        )
                    }
                    Err(e) => (
                        "failed".to_string(),
                        0,
                        format!("{e}\n{}\n{}", program.source, program.call),
                    ),
                }
            })
            .collect();
        let count = |kind: &str| results.iter().filter(|r| r.0 == kind).count();
        let failed: Vec<&String> = results
            .iter()
            .filter(|r| r.0 == "failed")
            .map(|r| &r.2)
            .collect();
        assert!(failed.is_empty(), "programs that did not run: {failed:#?}");
        assert_eq!(count("never"), 0, "programs that ran away");
        let errors: Vec<&String> = results
            .iter()
            .filter(|r| r.0 == "error")
            .map(|r| &r.2)
            .collect();
        assert!(
            errors.len() * 10 <= results.len(),
            "too many uncaught errors: {errors:#?}"
        );
        let mean = results.iter().map(|r| r.1).sum::<usize>() as f64 / results.len() as f64;
        assert!((15.0..=200.0).contains(&mean), "mean trace length {mean}");
    }

    #[test]
    fn wrap_parenthesises_only_compound_expressions() {
        assert_eq!(wrap("xs".into()), "xs");
        assert_eq!(wrap("max(a, b)".into()), "max(a, b)");
        assert_eq!(wrap("'a b'".into()), "'a b'");
        assert_eq!(wrap("a + b".into()), "(a + b)");
        assert_eq!(wrap("-3".into()), "(-3)");
    }
}
