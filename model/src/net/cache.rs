//! Keys and values of the positions a model has already read.
//!
//! A debugging session reads the program's source once, then for each step appends the
//! action and decodes the next state. The cache makes each of those steps cost only the
//! new tokens. Cloning is cheap (tensors are shared until written), so a session can keep
//! the cache after the source and return to it, or [`truncate`](KvCache::truncate) to any
//! earlier position to rewrite the history (a step back, an edited variable).

use burn::tensor::backend::Backend;
use burn::tensor::{s, Tensor};

/// One layer's keys and values, each [batch, kv_heads, positions, head_dim].
#[derive(Debug, Clone)]
pub struct KeyValue<B: Backend> {
    pub k: Tensor<B, 4>,
    pub v: Tensor<B, 4>,
}

/// Every layer's keys and values for positions `0..len()`.
#[derive(Debug, Clone)]
pub struct KvCache<B: Backend> {
    /// Empty until the first tokens are read; then one entry per layer.
    layers: Vec<KeyValue<B>>,
    len: usize,
}

impl<B: Backend> Default for KvCache<B> {
    fn default() -> Self {
        Self::new()
    }
}

impl<B: Backend> KvCache<B> {
    pub fn new() -> Self {
        Self {
            layers: Vec::new(),
            len: 0,
        }
    }

    /// Number of positions read so far: the position of the next token.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Forgets every position from `len` on; a no-op if the cache is already shorter.
    pub fn truncate(&mut self, len: usize) {
        if len >= self.len {
            return;
        }
        if len == 0 {
            self.layers.clear();
        } else {
            for kv in &mut self.layers {
                kv.k = kv.k.clone().slice(s![.., .., 0..len, ..]);
                kv.v = kv.v.clone().slice(s![.., .., 0..len, ..]);
            }
        }
        self.len = len;
    }

    /// The keys and values of `layer`, if any position has been read.
    pub(crate) fn layer(&self, layer: usize) -> Option<KeyValue<B>> {
        self.layers.get(layer).cloned()
    }

    /// Stores the layers' keys and values after `added` more positions were read.
    pub(crate) fn update(&mut self, layers: Vec<KeyValue<B>>, added: usize) {
        self.layers = layers;
        self.len += added;
    }
}
