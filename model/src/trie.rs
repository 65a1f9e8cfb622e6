//! The strings a part of a predicted state may be, as one byte automaton that a mask
//! walks once per candidate token. A constraint says "one of these strings, then
//! whatever the body's grammar allows" ([`Trie::then_anything`]); the decoder asks which
//! tokens keep the text written so far on the way to one of them ([`Cursor::admits`]).
//!
//! It works on bytes, not characters: a byte-level token may end inside a character,
//! and the automaton simply waits inside it for the next token. Branches may join (a
//! header's depth written with any number of digits leads to the same names), so it
//! is a small deterministic automaton rather than a tree, built by insertion.

use std::collections::BTreeMap;

/// An automaton over bytes: every path from the root spells a prefix of an allowed
/// string; a node marked open allows anything after it.
#[derive(Clone, Debug, Default)]
pub struct Trie {
    nodes: Vec<Node>,
}

#[derive(Clone, Debug, Default)]
struct Node {
    next: BTreeMap<u8, usize>,
    /// Whatever follows is allowed (the string ended; the rest is another rule's).
    open: bool,
}

/// A node of a [`Trie`], for building.
pub type NodeId = usize;

impl Trie {
    /// The automaton with only its root (which allows nothing yet).
    pub fn new() -> Self {
        Trie {
            nodes: vec![Node::default()],
        }
    }

    /// Each of `strings`, then anything.
    pub fn then_anything<S: AsRef<[u8]>>(strings: impl IntoIterator<Item = S>) -> Self {
        let mut trie = Trie::new();
        for s in strings {
            let end = trie.insert(Trie::ROOT, s.as_ref());
            trie.open(end);
        }
        trie
    }

    pub const ROOT: NodeId = 0;

    /// The node `bytes` lead to from `from`, made where missing.
    pub fn insert(&mut self, from: NodeId, bytes: &[u8]) -> NodeId {
        bytes.iter().fold(from, |at, &b| self.edge(at, b))
    }

    /// The node byte `b` leads to from `from`, made where missing.
    pub fn edge(&mut self, from: NodeId, b: u8) -> NodeId {
        if let Some(&to) = self.nodes[from].next.get(&b) {
            return to;
        }
        self.nodes.push(Node::default());
        let to = self.nodes.len() - 1;
        self.nodes[from].next.insert(b, to);
        to
    }

    /// A new node no edge leads to yet (to join branches at).
    pub fn node(&mut self) -> NodeId {
        self.nodes.push(Node::default());
        self.nodes.len() - 1
    }

    /// Joins `from` to an existing node `to` by byte `b`.
    pub fn join(&mut self, from: NodeId, b: u8, to: NodeId) {
        let old = self.nodes[from].next.insert(b, to);
        debug_assert!(
            old.is_none_or(|o| o == to),
            "a join would fork the automaton"
        );
    }

    /// Anything may follow `node`.
    pub fn open(&mut self, node: NodeId) {
        self.nodes[node].open = true;
    }

    /// Whether no string is allowed at all.
    pub fn is_empty(&self) -> bool {
        let root = &self.nodes[Trie::ROOT];
        root.next.is_empty() && !root.open
    }

    /// Where `written` leads from the root.
    pub fn walk(&self, written: &[u8]) -> Cursor<'_> {
        Cursor {
            trie: self,
            at: Some(Trie::ROOT),
        }
        .then(written)
    }
}

/// A place in a [`Trie`] after some text: a node, past an open node (anything goes),
/// or off every allowed string.
#[derive(Clone, Copy, Debug)]
pub struct Cursor<'t> {
    trie: &'t Trie,
    /// `None`: off every string.
    at: Option<NodeId>,
}

impl<'t> Cursor<'t> {
    /// Where `bytes` lead from here.
    pub fn then(self, bytes: &[u8]) -> Cursor<'t> {
        let mut at = self.at;
        for &b in bytes {
            let Some(node) = at.map(|n| &self.trie.nodes[n]) else {
                break;
            };
            if node.open {
                break; // anything goes from here on
            }
            at = node.next.get(&b).copied();
        }
        Cursor { at, ..self }
    }

    /// Whether the text so far is past the end of an allowed string (what follows is
    /// another rule's).
    pub fn is_past(&self) -> bool {
        self.at.is_some_and(|n| self.trie.nodes[n].open)
    }

    /// Whether the text so far, then `bytes`, is still on the way to (or past) an
    /// allowed string.
    pub fn admits(&self, bytes: &[u8]) -> bool {
        self.then(bytes).at.is_some()
    }

    /// Whether the text so far is on the way to (or past) an allowed string.
    pub fn is_on(&self) -> bool {
        self.at.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_of_a_string_and_anything_after_it_are_admitted() {
        let trie = Trie::then_anything(["3 1 f\n"]);
        let root = trie.walk(b"");
        assert!(root.admits(b"3 1"));
        assert!(root.admits(b"3 1 f\nx = 1"));
        assert!(!root.admits(b"3 2"));
        assert!(trie.walk(b"3 1 f\n").is_past());
        assert!(!trie.walk(b"3 1").is_past());
        assert!(!trie.walk(b"4").is_on());
    }

    #[test]
    fn a_token_may_end_inside_a_character() {
        let trie = Trie::then_anything(["größe"]);
        let at = trie.walk(&"grö".as_bytes()[..3]); // "gr" and the first byte of ö
        assert!(at.is_on());
        assert!(at.admits(&"ö".as_bytes()[1..]));
        assert!(!at.admits(b"o"));
    }

    #[test]
    fn joined_branches_share_what_follows() {
        // "1 " or "2 " then the same names.
        let mut trie = Trie::new();
        let names = trie.node();
        for digit in [b'1', b'2'] {
            let d = trie.edge(Trie::ROOT, digit);
            trie.join(d, b' ', names);
        }
        let end = trie.insert(names, b"f");
        trie.open(end);
        assert!(trie.walk(b"2 f").is_past());
        assert!(trie.walk(b"1 f").is_past());
        assert!(!trie.walk(b"3 ").is_on());
    }

    #[test]
    fn no_strings_admit_nothing() {
        let trie = Trie::then_anything(Vec::<String>::new());
        assert!(trie.is_empty());
        assert!(!trie.walk(b"").admits(b"a"));
        assert!(!Trie::then_anything([""]).is_empty());
    }
}
