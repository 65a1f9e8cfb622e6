//! Sets as CPython 3.11 builds them, so that a set's order (its repr, its iteration)
//! is worked out as Python shows it: the hash table with its probing, growth and
//! copies (`Objects/setobject.c`), and the hashes of whole numbers and of strings
//! under `PYTHONHASHSEED=0`, which the tracer sets (SipHash-1-3 with a zero key).
//!
//! A set the state shows is taken as built by adding its items in the order shown,
//! which gives the same table for a set built without removals.

use super::conditions::split_at_word;
use super::known::Scope;
use super::lexer;
use crate::repr::{Kind, Repr};

/// One slot of the table.
#[derive(Clone, Debug, PartialEq)]
enum Slot {
    Empty,
    /// Where an item was removed: probing goes on past it.
    Dummy,
    Active {
        key: String,
        hash: i64,
    },
}

/// A set's hash table.
#[derive(Clone, Debug)]
pub struct Table {
    slots: Vec<Slot>,
    /// Active and dummy slots.
    fill: usize,
    /// Active slots: the set's length.
    used: usize,
}

const MIN_SIZE: usize = 8;
const LINEAR_PROBES: usize = 9;
const PERTURB_SHIFT: u32 = 5;

impl Table {
    pub fn new() -> Self {
        Table {
            slots: vec![Slot::Empty; MIN_SIZE],
            fill: 0,
            used: 0,
        }
    }

    /// A fresh set with `items` (reprs) added in order; `None` if one is not hashed
    /// here (see [`hash`]).
    pub fn of_items(items: &[String]) -> Option<Self> {
        let mut table = Table::new();
        for item in items {
            table.add(item)?;
        }
        Some(table)
    }

    /// The set whose repr is `repr` (`{1, 2}`, `set()`), built as the module says.
    pub fn of_repr(repr: &str) -> Option<Self> {
        match repr {
            "set()" => Some(Table::new()),
            _ => match Repr::parse(repr).kind {
                Kind::Set(items) => {
                    let items: Vec<String> = items.into_iter().map(|i| i.text).collect();
                    Table::of_items(&items)
                }
                _ => None,
            },
        }
    }

    fn mask(&self) -> usize {
        self.slots.len() - 1
    }

    pub fn len(&self) -> usize {
        self.used
    }

    pub fn is_empty(&self) -> bool {
        self.used == 0
    }

    /// The items in the order Python iterates them.
    pub fn items(&self) -> impl Iterator<Item = (&str, i64)> {
        self.slots.iter().filter_map(|slot| match slot {
            Slot::Active { key, hash } => Some((key.as_str(), *hash)),
            _ => None,
        })
    }

    pub fn repr(&self) -> String {
        let items: Vec<&str> = self.items().map(|(key, _)| key).collect();
        match items.is_empty() {
            true => "set()".to_string(),
            false => format!("{{{}}}", items.join(", ")),
        }
    }

    /// `set.add`; `None` where the item is not hashed here.
    pub fn add(&mut self, key: &str) -> Option<()> {
        let hash = hash(key)?;
        self.add_entry(key, hash);
        Some(())
    }

    /// The slots a lookup of `hash` visits, in order: from each perturbed jump, a run
    /// of linear probes where the table has room (as `setobject.c` probes). Endless:
    /// a table always has an empty slot.
    fn probes(&self, hash: i64) -> impl Iterator<Item = usize> {
        let mask = self.mask();
        let linear = move |i: usize| {
            if i + LINEAR_PROBES <= mask {
                LINEAR_PROBES
            } else {
                0
            }
        };
        let mut perturb = hash as u64;
        let mut i = (hash as u64 as usize) & mask;
        let mut next = 0;
        std::iter::from_fn(move || {
            if next > linear(i) {
                perturb >>= PERTURB_SHIFT;
                i = (i
                    .wrapping_mul(5)
                    .wrapping_add(1)
                    .wrapping_add(perturb as usize))
                    & mask;
                next = 0;
            }
            next += 1;
            Some(i + next - 1)
        })
    }

    fn add_entry(&mut self, key: &str, hash: i64) {
        let mut free: Option<usize> = None;
        let mut empty = None;
        for entry in self.probes(hash) {
            match &self.slots[entry] {
                Slot::Empty => {
                    empty = Some(entry);
                    break;
                }
                Slot::Active { key: k, hash: h } if *h == hash && k == key => return,
                Slot::Dummy => free = Some(entry),
                Slot::Active { .. } => {}
            }
        }
        let active = Slot::Active {
            key: key.to_string(),
            hash,
        };
        if let Some(free) = free {
            self.slots[free] = active;
            self.used += 1;
            return;
        }
        let Some(at) = empty else { return };
        self.slots[at] = active;
        self.fill += 1;
        self.used += 1;
        if self.fill * 5 >= self.mask() * 3 {
            let minused = if self.used > 50_000 {
                self.used * 2
            } else {
                self.used * 4
            };
            self.resize(minused);
        }
    }

    /// Where `key` is, if it is there.
    fn find(&self, key: &str, hash: i64) -> Option<usize> {
        for entry in self.probes(hash) {
            match &self.slots[entry] {
                Slot::Empty => return None,
                Slot::Active { key: k, hash: h } if *h == hash && k == key => return Some(entry),
                _ => {}
            }
        }
        None
    }

    /// Marks the item at `at` removed.
    fn remove_at(&mut self, at: usize) {
        self.slots[at] = Slot::Dummy;
        self.used -= 1;
    }

    /// A fresh set of the items of `from`, in its order, that `other` holds (`keep`)
    /// or not.
    fn filtered(from: &Table, other: &Table, keep: bool) -> Table {
        let mut result = Table::new();
        for (key, hash) in from.items() {
            if other.find(key, hash).is_some() == keep {
                result.add_entry(key, hash);
            }
        }
        result
    }

    pub fn contains(&self, key: &str) -> Option<bool> {
        Some(self.find(key, hash(key)?).is_some())
    }

    /// `set.discard`: whether the item was there.
    pub fn discard(&mut self, key: &str) -> Option<bool> {
        let at = self.find(key, hash(key)?);
        if let Some(at) = at {
            self.remove_at(at);
        }
        Some(at.is_some())
    }

    fn resize(&mut self, minused: usize) {
        let mut size = MIN_SIZE;
        while size <= minused {
            size <<= 1;
        }
        if size == MIN_SIZE && self.slots.len() == MIN_SIZE && self.fill == self.used {
            return;
        }
        let old = std::mem::replace(&mut self.slots, vec![Slot::Empty; size]);
        self.fill = self.used;
        for slot in old {
            if let Slot::Active { key, hash } = slot {
                self.insert_clean(key, hash);
            }
        }
    }

    /// Puts an item known to be absent into a table without dummies.
    fn insert_clean(&mut self, key: String, hash: i64) {
        let at = self.probes(hash).find(|&e| self.slots[e] == Slot::Empty);
        if let Some(at) = at {
            self.slots[at] = Slot::Active { key, hash };
        }
    }

    /// `set_merge`: adds every item of `other`, in its order.
    fn merge(&mut self, other: &Table) {
        if other.used == 0 {
            return;
        }
        if (self.fill + other.used) * 5 >= self.mask() * 3 {
            self.resize((self.used + other.used) * 2);
        }
        if self.fill == 0 && self.mask() == other.mask() && other.fill == other.used {
            self.slots.clone_from(&other.slots);
            self.fill = other.fill;
            self.used = other.used;
            return;
        }
        if self.fill == 0 {
            self.fill = other.used;
            self.used = other.used;
            for (key, hash) in other.items() {
                self.insert_clean(key.to_string(), hash);
            }
            return;
        }
        for (key, hash) in other.items() {
            self.add_entry(key, hash);
        }
    }

    /// `set(other)`, `other.copy()`.
    pub fn copy(&self) -> Table {
        let mut copy = Table::new();
        copy.merge(self);
        copy
    }

    /// `self | other`.
    pub fn union(&self, other: &Table) -> Table {
        let mut result = self.copy();
        result.merge(other);
        result
    }

    /// `self & other`: the items of the smaller set (the right one where they are as
    /// long) that the other holds, in its order.
    pub fn intersection(&self, other: &Table) -> Table {
        let (small, large) = match other.used > self.used {
            true => (self, other),
            false => (other, self),
        };
        Table::filtered(small, large, true)
    }

    /// `self - other`.
    pub fn difference(&self, other: &Table) -> Table {
        if self.used >> 2 > other.used {
            let mut result = self.copy();
            for (key, hash) in other.items() {
                if let Some(at) = result.find(key, hash) {
                    result.remove_at(at);
                }
            }
            return result;
        }
        Table::filtered(self, other, false)
    }

    /// `self ^ other`: a copy of `other`, then each item of `self` removed if there,
    /// else added.
    pub fn symmetric_difference(&self, other: &Table) -> Table {
        let mut result = other.copy();
        for (key, hash) in self.items() {
            match result.find(key, hash) {
                Some(at) => result.remove_at(at),
                None => result.add_entry(key, hash),
            }
        }
        result
    }
}

impl Default for Table {
    fn default() -> Self {
        Table::new()
    }
}

/// The repr of the set `text` makes, where its order is settled: a display
/// (`{4, 3}`), `set(...)` of an iterable, and `|`, `&`, `-`, `^` of sets (see
/// [`value`]).
pub fn repr_of(text: &str, scope: &Scope) -> Option<String> {
    let (table, exact) = value(text, scope)?;
    exact.then(|| table.repr())
}

/// The set `text` makes, and whether its table is Python's: a set built here by
/// adding items is; one the state shows is taken as built by adding its items in the
/// order shown, which a history of removals may belie, so only what depends on its
/// order alone (not its table) is exact of it.
fn value(text: &str, scope: &Scope) -> Option<(Table, bool)> {
    let text = text.trim();
    if let Some(inner) = text.strip_prefix('(').filter(|i| lexer::closes_at_end(i)) {
        return value(&inner[..inner.len() - 1], scope);
    }
    // Loosest first: `|`, then `^`, then `&`, then `-`; each joins left to right.
    for op in [" | ", " ^ ", " & ", " - "] {
        let parts = split_at_word(text, op);
        if parts.len() < 2 {
            continue;
        }
        let left_len = text.len() - parts.last()?.len() - op.len();
        let (a, a_exact) = value(&text[..left_len], scope)?;
        let (b, b_exact) = value(parts.last()?, scope)?;
        return Some(match op {
            " | " => (a.union(&b), a_exact && (!a.is_empty() || b_exact)),
            " ^ " => (a.symmetric_difference(&b), b_exact),
            " & " => (a.intersection(&b), true),
            _ => {
                let copies = a.len() >> 2 > b.len();
                (a.difference(&b), a_exact || !copies)
            }
        });
    }
    if text == "set()" {
        return Some((Table::new(), true));
    }
    if let Some(arg) = text
        .strip_prefix("set(")
        .filter(|rest| lexer::closes_at_end(rest))
    {
        if !(scope.builtin)("set") {
            return None;
        }
        let arg = &arg[..arg.len() - 1];
        if let Some((set, exact)) = value(arg, scope) {
            return Some((set.copy(), exact));
        }
        // A dict is added with its table presized: not followed.
        if super::known::repr_of(arg, scope).is_some_and(|r| r.starts_with('{')) {
            return None;
        }
        let items = super::iteration::items(arg, scope)?;
        return Some((Table::of_items(&items)?, true));
    }
    if let Some(inner) = text.strip_prefix('{').filter(|i| lexer::closes_at_end(i)) {
        let inner = &inner[..inner.len() - 1];
        let parts = lexer::split_top(inner);
        let display = !parts.is_empty()
            && !lexer::code_chars(inner).any(|(_, c, depth)| depth == 0 && c == ':')
            && !parts.iter().any(|p| p.starts_with('*'))
            && split_at_word(inner, " for ").len() == 1;
        if !display {
            return None;
        }
        let items: Vec<String> = parts
            .iter()
            .map(|p| super::known::repr_of(p, scope))
            .collect::<Option<_>>()?;
        return Some((Table::of_items(&items)?, true));
    }
    if super::layout::is_name(text) {
        let shown = (scope.value_of)(text)?;
        return Some((Table::of_repr(&shown)?, false));
    }
    None
}

/// Python's `hash()` of the value whose repr is `repr`, where it is a whole number or
/// a string of characters below U+0100 without escapes; `None` for anything else
/// (`True` equals `1`, a float's hash is not worked out here).
pub fn hash(repr: &str) -> Option<i64> {
    if let Ok(n) = repr.parse::<i128>() {
        return Some(int_hash(n));
    }
    let text = super::known::unescaped(repr)?;
    if text.is_empty() {
        return Some(0);
    }
    let bytes: Vec<u8> = text
        .chars()
        .map(|c| u8::try_from(u32::from(c)).ok())
        .collect::<Option<_>>()?;
    let h = siphash13(&bytes) as i64;
    Some(if h == -1 { -2 } else { h })
}

/// `hash(n)`: `n` modulo the Mersenne prime 2**61 - 1, with its sign; -1 is -2.
fn int_hash(n: i128) -> i64 {
    const MODULUS: i128 = (1 << 61) - 1;
    let h = (n.abs() % MODULUS) as i64;
    let h = if n < 0 { -h } else { h };
    if h == -1 {
        -2
    } else {
        h
    }
}

/// SipHash-1-3 with a zero key, as CPython 3.11 hashes bytes under
/// `PYTHONHASHSEED=0`.
fn siphash13(data: &[u8]) -> u64 {
    let (k0, k1) = (0u64, 0u64);
    let mut v = [
        k0 ^ 0x736f_6d65_7073_6575,
        k1 ^ 0x646f_7261_6e64_6f6d,
        k0 ^ 0x6c79_6765_6e65_7261,
        k1 ^ 0x7465_6462_7974_6573,
    ];
    let round = |v: &mut [u64; 4]| {
        v[0] = v[0].wrapping_add(v[1]);
        v[1] = v[1].rotate_left(13) ^ v[0];
        v[0] = v[0].rotate_left(32);
        v[2] = v[2].wrapping_add(v[3]);
        v[3] = v[3].rotate_left(16) ^ v[2];
        v[0] = v[0].wrapping_add(v[3]);
        v[3] = v[3].rotate_left(21) ^ v[0];
        v[2] = v[2].wrapping_add(v[1]);
        v[1] = v[1].rotate_left(17) ^ v[2];
        v[2] = v[2].rotate_left(32);
    };
    let chunks = data.chunks_exact(8);
    let tail = chunks.remainder();
    for chunk in chunks {
        let m = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        v[3] ^= m;
        round(&mut v);
        v[0] ^= m;
    }
    let mut last = (data.len() as u64) << 56;
    for (k, &byte) in tail.iter().enumerate() {
        last |= u64::from(byte) << (8 * k);
    }
    v[3] ^= last;
    round(&mut v);
    v[0] ^= last;
    v[2] ^= 0xff;
    for _ in 0..3 {
        round(&mut v);
    }
    v[0] ^ v[1] ^ v[2] ^ v[3]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_as_python_3_11_with_hash_seed_0() {
        // `PYTHONHASHSEED=0 python3.11 -c "print(hash('a'), ...)"`
        assert_eq!(hash("-1"), Some(-2));
        assert_eq!(hash("12"), Some(12));
        assert_eq!(hash(&(1i128 << 61).to_string()), Some(1));
        assert_eq!(hash("''"), Some(0));
        assert_eq!(hash("'a'"), Some(4644417185603328019));
        assert_eq!(hash("'hello'"), Some(-2096571579003691106));
        assert_eq!(hash("'abcdefgh'"), Some(4574395652268504554));
        assert_eq!(hash("1.5"), None);
    }

    fn known(text: &str) -> Option<String> {
        let shown = |name: &str| match name {
            "s" => Some("{'pear', 'kiwi', 'apple', 'fig'}".to_string()),
            "e" => Some("set()".to_string()),
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
    fn set_orders_as_python_3_11_shows_them() {
        // Each as `PYTHONHASHSEED=0 python3.11 -c "print(repr(...))"` prints it.
        assert_eq!(known("{-1, -2}").as_deref(), Some("{-1, -2}"));
        assert_eq!(known("set([-1, -2])").as_deref(), Some("{-1, -2}"));
        assert_eq!(
            known("({4, 3, 3, 0} - {7}) & ({1, 8, 5} - {2, 5, 3})").as_deref(),
            Some("set()")
        );
        assert_eq!(known("{8, 6} & {3, 1, 8}").as_deref(), Some("{8}"));
        assert_eq!(
            known("{'pear', 'fig', 'apple', 'kiwi'}").as_deref(),
            Some("{'pear', 'kiwi', 'apple', 'fig'}")
        );
        assert_eq!(
            known("set('hello')").as_deref(),
            Some("{'e', 'h', 'l', 'o'}")
        );
        assert_eq!(
            known("{40, 8, 16} | {3, 24}").as_deref(),
            Some("{16, 3, 40, 8, 24}")
        );
        assert_eq!(
            known("{33, 1, 17} ^ {9, 1}").as_deref(),
            Some("{9, 17, 33}")
        );
        // A shown set's order is Python's, but not its table: only what its order
        // alone settles is worked out.
        assert_eq!(
            known("s - {'x'}").as_deref(),
            Some("{'pear', 'kiwi', 'apple', 'fig'}")
        );
        assert_eq!(
            known("s & {'fig', 'kiwi'}").as_deref(),
            Some("{'kiwi', 'fig'}")
        );
        assert_eq!(known("s | {'x'}"), None);
        assert_eq!(known("e | s"), None);
        assert_eq!(known("{1.5, 2}"), None);
    }

    #[test]
    fn tables_grow_and_probe_as_python_3_11s() {
        let items: Vec<String> = (0..40).map(|k| (k * 37 % 101 - 50).to_string()).collect();
        let table = Table::of_items(&items).unwrap();
        assert_eq!(table.len(), 40);
        assert_eq!(table.slots.len(), 128);
    }
}
