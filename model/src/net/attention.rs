//! Rotary position embeddings and grouped-query causal self-attention.
//!
//! Attention takes the keys and values of earlier positions from the caller (the
//! [`KvCache`](super::KvCache)), so a decode step computes one query against the cached
//! keys instead of re-running the whole sequence.

use burn::module::Module;
use burn::nn::{Initializer, Linear, LinearConfig};
use burn::tensor::activation::softmax;
use burn::tensor::backend::Backend;
use burn::tensor::{s, Tensor, TensorData};

use super::cache::KeyValue;
use super::config::LlamaConfig;

/// Rotary embedding tables, as HF Llama computes them: for position `p` and inverse
/// frequency `f_i` (see [`LlamaConfig::inv_freq`]), `cos(p f_i)` and `sin(p f_i)`
/// repeated over both halves of the head (the "rotate half" layout, not interleaved
/// pairs).
#[derive(Module, Debug)]
pub struct Rope<B: Backend> {
    /// [max_positions, head_dim]
    pub cos: Tensor<B, 2>,
    /// [max_positions, head_dim]
    pub sin: Tensor<B, 2>,
}

impl<B: Backend> Rope<B> {
    /// The tables for `inv_freq` (one per pair of a head's dimensions, in f32 as HF
    /// computes them) at positions `0..max_positions`.
    pub fn new(inv_freq: &[f32], max_positions: usize, device: &B::Device) -> Self {
        let head_dim = 2 * inv_freq.len();
        let mut cos = Vec::with_capacity(max_positions * head_dim);
        let mut sin = Vec::with_capacity(max_positions * head_dim);
        for p in 0..max_positions {
            for i in 0..head_dim {
                let angle = p as f32 * inv_freq[i % inv_freq.len()];
                cos.push(angle.cos());
                sin.push(angle.sin());
            }
        }
        let shape = [max_positions, head_dim];
        Self {
            cos: Tensor::from_data(TensorData::new(cos, shape), device),
            sin: Tensor::from_data(TensorData::new(sin, shape), device),
        }
    }

    pub fn max_positions(&self) -> usize {
        self.cos.dims()[0]
    }

    /// Rotates `x` [batch, heads, seq, head_dim] whose positions are `start..start + seq`.
    pub fn apply(&self, x: Tensor<B, 4>, start: usize) -> Tensor<B, 4> {
        let [_, _, seq, head_dim] = x.dims();
        let half = head_dim / 2;
        let cos = self
            .cos
            .clone()
            .slice(s![start..start + seq])
            .reshape([1, 1, seq, head_dim]);
        let sin = self
            .sin
            .clone()
            .slice(s![start..start + seq])
            .reshape([1, 1, seq, head_dim]);
        // rotate_half(x) = [-x2, x1]
        let x1 = x.clone().slice(s![.., .., .., 0..half]);
        let x2 = x.clone().slice(s![.., .., .., half..]);
        let rotated = Tensor::cat(vec![x2.neg(), x1], 3);
        x * cos + rotated * sin
    }
}

/// Multi-head attention where groups of query heads share one key/value head.
#[derive(Module, Debug)]
pub struct Attention<B: Backend> {
    pub q_proj: Linear<B>,
    pub k_proj: Linear<B>,
    pub v_proj: Linear<B>,
    pub o_proj: Linear<B>,
    pub n_heads: usize,
    pub n_kv_heads: usize,
    pub head_dim: usize,
}

/// A bias-free linear layer with HF's initialisation (normal, std 0.02).
pub(crate) fn linear<B: Backend>(d_in: usize, d_out: usize, device: &B::Device) -> Linear<B> {
    LinearConfig::new(d_in, d_out)
        .with_bias(false)
        .with_initializer(Initializer::Normal {
            mean: 0.0,
            std: 0.02,
        })
        .init(device)
}

impl<B: Backend> Attention<B> {
    pub fn init(config: &LlamaConfig, device: &B::Device) -> Self {
        let d = config.hidden_size;
        let hd = config.head_dim();
        Self {
            q_proj: linear(d, config.num_attention_heads * hd, device),
            k_proj: linear(d, config.num_key_value_heads * hd, device),
            v_proj: linear(d, config.num_key_value_heads * hd, device),
            o_proj: linear(config.num_attention_heads * hd, d, device),
            n_heads: config.num_attention_heads,
            n_kv_heads: config.num_key_value_heads,
            head_dim: hd,
        }
    }

    /// `x` [batch, seq, hidden] holds positions `start..start + seq`; `past` holds the
    /// keys and values of positions `0..start` ([batch, kv_heads, start, head_dim]).
    /// `mask` [1, 1, seq, start + seq] is 0 where a query may look and -inf where not;
    /// none is needed for a single new token, which may look at everything before it.
    ///
    /// Returns the output [batch, seq, hidden] and the keys and values of all
    /// `start + seq` positions, for the cache.
    pub fn forward(
        &self,
        x: Tensor<B, 3>,
        rope: &Rope<B>,
        start: usize,
        mask: Option<&Tensor<B, 4>>,
        past: Option<KeyValue<B>>,
    ) -> (Tensor<B, 3>, KeyValue<B>) {
        let [batch, seq, _] = x.dims();
        let (h, kv, hd) = (self.n_heads, self.n_kv_heads, self.head_dim);

        let split = |t: Tensor<B, 3>, heads| t.reshape([batch, seq, heads, hd]).swap_dims(1, 2);
        let q = rope.apply(split(self.q_proj.forward(x.clone()), h), start); // [b, h, s, hd]
        let k = rope.apply(split(self.k_proj.forward(x.clone()), kv), start); // [b, kv, s, hd]
        let v = split(self.v_proj.forward(x), kv); // [b, kv, s, hd]

        let (k, v) = match past {
            Some(p) => (Tensor::cat(vec![p.k, k], 2), Tensor::cat(vec![p.v, v], 2)),
            None => (k, v),
        };
        let total = start + seq;

        // Query head j uses key head j / group. Folding each group of query heads into
        // the row axis lets one matmul serve the group without copying keys per head.
        let group = h / kv;
        let q = q.reshape([batch, kv, group * seq, hd]);
        let scores = q.matmul(k.clone().swap_dims(2, 3)) / (hd as f64).sqrt(); // [b, kv, g*s, total]
        let mut scores = scores.reshape([batch, h, seq, total]);
        if let Some(mask) = mask {
            scores = scores + mask.clone();
        }
        let weights = softmax(scores, 3).reshape([batch, kv, group * seq, total]);
        let out = weights.matmul(v.clone()); // [b, kv, g*s, hd]
        let out = out
            .reshape([batch, h, seq, hd])
            .swap_dims(1, 2)
            .reshape([batch, seq, h * hd]);
        (self.o_proj.forward(out), KeyValue { k, v })
    }
}

/// The additive causal mask [1, 1, seq, start + seq] for queries at `start..start + seq`:
/// query `i` may see keys `0..=start + i`, or only the last `window` of them (`None`:
/// all).
pub fn causal_mask<B: Backend>(
    seq: usize,
    start: usize,
    window: Option<usize>,
    device: &B::Device,
) -> Tensor<B, 4> {
    let total = start + seq;
    let mut data = vec![0.0f32; seq * total];
    for i in 0..seq {
        let seen = start + i + 1;
        let first = window.map_or(0, |w| seen.saturating_sub(w));
        for j in (0..first).chain(seen..total) {
            data[i * total + j] = f32::NEG_INFINITY;
        }
    }
    Tensor::from_data(TensorData::new(data, [1, 1, seq, total]), device)
}
