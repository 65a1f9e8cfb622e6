//! The CPU decode path: the whole network for a token (or the few tokens a step reads
//! at once) in plain loops over weights packed once at load, with no tensor library
//! in between.
//!
//! burn's CPU backend spends a decode step dispatching and allocating dozens of small
//! tensor operations; the arithmetic itself is a few million multiply-adds. Here each
//! layer is four matrix products ([`q8`]: int8 weights and activations summed in
//! integers; [`kernels`]: bf16 weights, f32 sums) and vectorised loops for RMSNorm, RoPE,
//! attention over the preallocated key/value cache and SwiGLU (`attend`). A second
//! thread takes half of each product and of each layer's attention (`team`). The burn
//! model ([`super::Llama`]) stays the reference: the two agree on logits (`tests` below)
//! and on greedy decodes.

mod attend;
pub mod kernels;
pub mod q8;
mod team;

use std::ops::Range;
use std::path::Path;
use std::sync::{Arc, Mutex};

use burn::tensor::backend::Backend;

use super::config::LlamaConfig;
use super::decode::{DecodeCache, Decoder};
use super::decoder::Llama;
use super::Error;
use attend::{rms_norm, swiglu, LayerCache, Query, POSITIONS};
use kernels::{matmul, to_bf16, Bf16};
use q8::{Q8Activations, Q8Weights};
use team::Team;

/// How the weight matrices are stored (norms and the embedding table stay f32).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WeightFormat {
    /// Rounded to bf16: 2 bytes a weight.
    Bf16,
    /// Quantised to int8 with an f32 scale per row: 1 byte a weight. Activations are
    /// quantised to int8 too, a scale per 32 of them, and multiplied in integers.
    Int8,
}

impl WeightFormat {
    pub fn name(self) -> &'static str {
        match self {
            WeightFormat::Bf16 => "bf16",
            WeightFormat::Int8 => "int8",
        }
    }

    pub fn bytes_per_weight(self) -> usize {
        match self {
            WeightFormat::Bf16 => 2,
            WeightFormat::Int8 => 1,
        }
    }
}

#[derive(Debug, Clone)]
enum Packed {
    Bf16(Vec<Bf16>),
    Int8(Q8Weights),
}

/// A weight matrix [rows, cols], row-major.
#[derive(Debug, Clone)]
struct Matrix {
    packed: Packed,
    rows: usize,
    cols: usize,
}

impl Matrix {
    /// Several f32 matrices [rows_i, cols], stacked by rows so that one product
    /// computes them all, packed in `format`.
    fn pack(parts: &[(&[f32], usize)], cols: usize, format: WeightFormat) -> Self {
        let values: Vec<f32> = parts.iter().flat_map(|(v, _)| v.iter().copied()).collect();
        let rows = parts.iter().map(|(_, r)| r).sum();
        assert_eq!(values.len(), rows * cols);
        let packed = match format {
            WeightFormat::Bf16 => Packed::Bf16(values.iter().map(|&v| to_bf16(v)).collect()),
            WeightFormat::Int8 => Packed::Int8(Q8Weights::quantize(&values, rows, cols)),
        };
        Self { packed, rows, cols }
    }

    /// `out [n, rows] = x [n, cols] @ selfᵀ`, shared by the team: one token's rows in
    /// two halves, or several tokens in two halves. Int8 weights quantise `x` into
    /// `quantized` first.
    #[inline(always)]
    fn apply(
        &self,
        team: &Team,
        x: &[f32],
        n: usize,
        quantized: &mut Q8Activations,
        out: &mut [f32],
    ) {
        if let Packed::Int8(_) = self.packed {
            quantized.quantize(x, n, self.cols);
        }
        let quantized = &*quantized;
        if n == 1 {
            let rows = (self.rows, q8::TILE, 1);
            team.split(out, rows, [(), ()], &|rows, piece, _| {
                self.product(x, quantized, 0..1, rows, piece)
            });
        } else {
            team.split(out, (n, 1, self.rows), [(), ()], &|tokens, piece, _| {
                self.product(x, quantized, tokens, 0..self.rows, piece)
            });
        }
    }

    /// Rows `rows` of the products with tokens `tokens` into `out` [tokens, rows].
    #[inline(always)]
    fn product(
        &self,
        x: &[f32],
        quantized: &Q8Activations,
        tokens: Range<usize>,
        rows: Range<usize>,
        out: &mut [f32],
    ) {
        if tokens.is_empty() || rows.is_empty() {
            return;
        }
        match &self.packed {
            Packed::Bf16(w) => matmul(
                &w[rows.start * self.cols..rows.end * self.cols],
                rows.len(),
                self.cols,
                &x[tokens.start * self.cols..tokens.end * self.cols],
                tokens.len(),
                out,
            ),
            Packed::Int8(w) => q8::matmul(w, quantized, tokens, rows, out),
        }
    }
}

#[derive(Debug, Clone)]
struct Layer {
    input_norm: Vec<f32>,
    /// q, k and v projections stacked: [(heads + 2 kv_heads) * head_dim, hidden].
    qkv: Matrix,
    o: Matrix,
    post_norm: Vec<f32>,
    /// gate and up projections stacked: [2 * intermediate, hidden].
    gate_up: Matrix,
    down: Matrix,
}

/// A Llama decoder packed for the CPU. Load it with [`FastLlama::load`] or pack a burn
/// model with [`FastLlama::from_burn`].
#[derive(Debug, Clone)]
pub struct FastLlama {
    config: LlamaConfig,
    format: WeightFormat,
    /// [vocab, hidden]: the embedding table, read a row per token.
    embed: Vec<f32>,
    layers: Vec<Layer>,
    norm: Vec<f32>,
    /// [vocab, hidden]: the output projection (the embedding, packed, when tied).
    head: Matrix,
    /// [max_positions, head_dim / 2] each: the rotary angles' cosines and sines.
    cos: Vec<f32>,
    sin: Vec<f32>,
    /// The threads a forward pass runs on; a second caller at the same time (another
    /// session on the same model) runs on its own thread alone.
    team: Arc<Mutex<Team>>,
}

/// Keys and values of the positions read, in space reserved for every position the
/// model can hold (so reading a token allocates nothing), and the scratch space of a
/// forward pass.
#[derive(Debug)]
pub struct FastCache {
    layers: Vec<LayerCache>,
    capacity: usize,
    len: usize,
    scratch: Scratch,
}

impl Clone for FastCache {
    /// Copies the positions read, into space for all of them (the scratch is not copied).
    fn clone(&self) -> Self {
        Self {
            layers: self.layers.clone(),
            capacity: self.capacity,
            len: self.len,
            scratch: Scratch::default(),
        }
    }
}

impl DecodeCache for FastCache {
    fn len(&self) -> usize {
        self.len
    }

    fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }
}

/// Buffers a forward pass writes, kept between calls so that decoding reuses them.
#[derive(Debug, Default)]
struct Scratch {
    x: Vec<f32>,
    normed: Vec<f32>,
    qkv: Vec<f32>,
    attended: Vec<f32>,
    projected: Vec<f32>,
    gate_up: Vec<f32>,
    scores: Vec<f32>,
    quantized: Q8Activations,
}

impl FastLlama {
    /// Loads a checkpoint directory (`config.json`, `model.safetensors`) and packs it.
    pub fn load(dir: &Path, format: WeightFormat) -> Result<Self, Error> {
        let (config, model) = super::load_checkpoint::<super::Cpu>(dir, &Default::default())?;
        Self::from_burn(&model, &config, format)
    }

    /// Packs the weights of a burn model.
    pub fn from_burn<B: Backend>(
        model: &Llama<B>,
        config: &LlamaConfig,
        format: WeightFormat,
    ) -> Result<Self, Error> {
        config.validate()?;
        let values = |t: burn::tensor::Tensor<B, 2>| -> Result<Vec<f32>, Error> {
            t.into_data()
                .convert::<f32>()
                .into_vec()
                .map_err(|e| Error::Config(format!("reading weights: {e:?}")))
        };
        let vector = |t: burn::tensor::Tensor<B, 1>| -> Result<Vec<f32>, Error> {
            t.into_data()
                .convert::<f32>()
                .into_vec()
                .map_err(|e| Error::Config(format!("reading weights: {e:?}")))
        };
        // burn keeps a linear layer's weight [in, out]; the kernels read rows of [out, in].
        let linears = |ls: &[&burn::nn::Linear<B>]| -> Result<Matrix, Error> {
            let rows: Vec<(Vec<f32>, usize)> = ls
                .iter()
                .map(|l| Ok((values(l.weight.val().transpose())?, l.weight.dims()[1])))
                .collect::<Result<_, Error>>()?;
            let parts: Vec<(&[f32], usize)> = rows.iter().map(|(v, r)| (&v[..], *r)).collect();
            Ok(Matrix::pack(&parts, ls[0].weight.dims()[0], format))
        };
        let (d, v) = (config.hidden_size, config.vocab_size);
        let embed = values(model.embed_tokens.weight.val())?;
        let mut layers = Vec::with_capacity(model.layers.len());
        for block in &model.layers {
            let attn = &block.self_attn;
            let mlp = &block.mlp;
            layers.push(Layer {
                input_norm: vector(block.input_layernorm.weight.val())?,
                qkv: linears(&[&attn.q_proj, &attn.k_proj, &attn.v_proj])?,
                o: linears(&[&attn.o_proj])?,
                post_norm: vector(block.post_attention_layernorm.weight.val())?,
                gate_up: linears(&[&mlp.gate_proj, &mlp.up_proj])?,
                down: linears(&[&mlp.down_proj])?,
            });
        }
        let head = match &model.lm_head {
            Some(head) => linears(&[head])?,
            None => Matrix::pack(&[(&embed, v)], d, format),
        };
        let (cos, sin) = rotary_tables(config);
        Ok(Self {
            config: config.clone(),
            format,
            embed,
            layers,
            norm: vector(model.norm.weight.val())?,
            head,
            cos,
            sin,
            team: Arc::new(Mutex::new(Team::new(decode_threads()))),
        })
    }

    /// The same model on `threads` threads (one or two) instead of the default's.
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.team = Arc::new(Mutex::new(Team::new(threads)));
        self
    }

    pub fn config(&self) -> &LlamaConfig {
        &self.config
    }

    pub fn format(&self) -> WeightFormat {
        self.format
    }

    /// Reads `tokens` after the cached positions; returns the logits after each of the
    /// last `scored` tokens ([scored, vocab]).
    fn forward(
        &self,
        tokens: &[u32],
        cache: &mut FastCache,
        scored: usize,
    ) -> Result<Vec<f32>, Error> {
        // The loops around the matrix products (norms, rotations, attention) are
        // compiled a second time for AVX-512 and picked where the CPU has it.
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F, checked just above.
            return unsafe { self.forward_avx512(tokens, cache, scored) };
        }
        self.forward_in(tokens, cache, scored)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    unsafe fn forward_avx512(
        &self,
        tokens: &[u32],
        cache: &mut FastCache,
        scored: usize,
    ) -> Result<Vec<f32>, Error> {
        self.forward_in(tokens, cache, scored)
    }

    #[inline(always)]
    fn forward_in(
        &self,
        tokens: &[u32],
        cache: &mut FastCache,
        scored: usize,
    ) -> Result<Vec<f32>, Error> {
        let c = &self.config;
        let n = tokens.len();
        if n == 0 {
            return Err(Error::EmptyInput);
        }
        if let Some(&id) = tokens.iter().find(|&&t| t as usize >= c.vocab_size) {
            return Err(Error::TokenOutOfRange {
                id,
                vocab: c.vocab_size,
            });
        }
        let start = cache.len;
        if start + n > cache.capacity {
            return Err(Error::ContextFull {
                needed: start + n,
                max: cache.capacity,
            });
        }
        let (d, hd) = (c.hidden_size, c.head_dim());
        let (heads, kv_heads) = (c.num_attention_heads, c.num_key_value_heads);
        let (q_dim, kv_dim) = (heads * hd, kv_heads * hd);
        let qkv_dim = q_dim + 2 * kv_dim;
        let f = c.intermediate_size;
        let eps = c.rms_norm_eps as f32;

        // Another caller holding the team (a second session on this model) leaves this
        // one on its own thread.
        let shared = self.team.try_lock().ok();
        let alone = Team::new(1);
        let team = shared.as_deref().unwrap_or(&alone);
        let s = &mut cache.scratch;
        s.x.clear();
        for &t in tokens {
            s.x.extend_from_slice(&self.embed[t as usize * d..(t as usize + 1) * d]);
        }
        resize(&mut s.normed, n * d);
        resize(&mut s.qkv, n * qkv_dim);
        resize(&mut s.attended, n * q_dim);
        resize(&mut s.projected, n * d);
        resize(&mut s.gate_up, n * 2 * f);
        let score_room = (start + n).div_ceil(POSITIONS) * POSITIONS;
        resize(&mut s.scores, 2 * score_room);

        for (li, layer) in self.layers.iter().enumerate() {
            rms_norm(&s.x, &layer.input_norm, eps, &mut s.normed);
            layer
                .qkv
                .apply(team, &s.normed, n, &mut s.quantized, &mut s.qkv);
            let kv = &mut cache.layers[li];
            for t in 0..n {
                let pos = start + t;
                let row = &mut s.qkv[t * qkv_dim..(t + 1) * qkv_dim];
                for head in row[..q_dim + kv_dim].chunks_exact_mut(hd) {
                    self.rotate(head, pos);
                }
                for kh in 0..kv_heads {
                    let k = &row[q_dim + kh * hd..q_dim + (kh + 1) * hd];
                    let v = &row[q_dim + kv_dim + kh * hd..q_dim + kv_dim + (kh + 1) * hd];
                    kv.write(kh, pos, k, v);
                }
            }
            let group = heads / kv_heads;
            let scale = 1.0 / (hd as f32).sqrt();
            // The team shares one token's heads, or several tokens, in two halves.
            let kv = &*kv;
            let qkv = &s.qkv;
            let window = c.window(li);
            let attend = |t: usize, heads: Range<usize>, out: &mut [f32], scores: &mut [f32]| {
                let seen = start + t + 1; // causal: positions 0..=start + t
                let from = window.map_or(0, |w| seen.saturating_sub(w));
                for (h, out) in heads.zip(out.chunks_exact_mut(hd)) {
                    let query = Query {
                        kv_head: h / group,
                        query: &qkv[t * qkv_dim + h * hd..t * qkv_dim + (h + 1) * hd],
                        from,
                        seen,
                        scale,
                    };
                    kv.attend(&query, scores, out);
                }
            };
            let (scores_a, scores_b) = s.scores.split_at_mut(score_room);
            let scores = [scores_a, scores_b];
            if n == 1 {
                team.split(
                    &mut s.attended,
                    (heads, 1, hd),
                    scores,
                    &|heads, out, scores| attend(0, heads, out, scores),
                );
            } else {
                let tokens = (n, 1, q_dim);
                team.split(&mut s.attended, tokens, scores, &|tokens, out, scores| {
                    for (t, out) in tokens.zip(out.chunks_exact_mut(q_dim)) {
                        attend(t, 0..heads, out, scores);
                    }
                });
            }
            layer
                .o
                .apply(team, &s.attended, n, &mut s.quantized, &mut s.projected);
            add(&mut s.x, &s.projected);

            rms_norm(&s.x, &layer.post_norm, eps, &mut s.normed);
            layer
                .gate_up
                .apply(team, &s.normed, n, &mut s.quantized, &mut s.gate_up);
            // SwiGLU in place: the first half of each row becomes silu(gate) * up.
            for row in s.gate_up.chunks_exact_mut(2 * f) {
                let (gate, up) = row.split_at_mut(f);
                swiglu(gate, up);
            }
            // The down projection reads rows of f: pack the products together.
            compact(&mut s.gate_up, n, 2 * f, f);
            layer
                .down
                .apply(team, &s.gate_up, n, &mut s.quantized, &mut s.projected);
            add(&mut s.x, &s.projected);
        }
        cache.len = start + n;

        let first = n - scored;
        rms_norm(
            &s.x[first * d..],
            &self.norm,
            eps,
            &mut s.normed[..scored * d],
        );
        let mut logits = vec![0.0; scored * c.vocab_size];
        self.head.apply(
            team,
            &s.normed[..scored * d],
            scored,
            &mut s.quantized,
            &mut logits,
        );
        Ok(logits)
    }

    /// HF's "rotate half" rotary embedding of one head at position `pos`.
    #[inline(always)]
    fn rotate(&self, head: &mut [f32], pos: usize) {
        let half = head.len() / 2;
        let cos = &self.cos[pos * half..(pos + 1) * half];
        let sin = &self.sin[pos * half..(pos + 1) * half];
        let (a, b) = head.split_at_mut(half);
        for i in 0..half {
            let (x1, x2) = (a[i], b[i]);
            a[i] = x1 * cos[i] - x2 * sin[i];
            b[i] = x2 * cos[i] + x1 * sin[i];
        }
    }
}

impl Decoder for FastLlama {
    type Cache = FastCache;

    fn new_cache(&self) -> FastCache {
        let c = &self.config;
        let capacity = c.max_position_embeddings;
        let layer = LayerCache::new(c.num_key_value_heads, capacity, c.head_dim());
        FastCache {
            layers: vec![layer; c.num_hidden_layers],
            capacity,
            len: 0,
            scratch: Scratch::default(),
        }
    }

    fn vocab_size(&self) -> usize {
        self.config.vocab_size
    }

    fn max_positions(&self) -> usize {
        self.config.max_position_embeddings
    }

    fn extend(&self, tokens: &[u32], cache: &mut FastCache) -> Result<Vec<f32>, Error> {
        self.forward(tokens, cache, 1)
    }

    fn extend_all(&self, tokens: &[u32], cache: &mut FastCache) -> Result<Vec<f32>, Error> {
        self.forward(tokens, cache, tokens.len())
    }
}

/// Threads a forward pass runs on: `NEURAL_THREADS` if set, else two where the machine
/// has them (a token's work is too small to share among more).
pub(crate) fn decode_threads() -> usize {
    std::env::var("NEURAL_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get().min(2)))
}

/// The rotary tables as [`super::attention::Rope`] computes them (in f32, as HF does),
/// keeping one half: the two halves of a head share their frequencies.
fn rotary_tables(c: &LlamaConfig) -> (Vec<f32>, Vec<f32>) {
    let half = c.head_dim() / 2;
    let mut cos = Vec::with_capacity(c.max_position_embeddings * half);
    let mut sin = Vec::with_capacity(c.max_position_embeddings * half);
    let inv_freq = c.inv_freq();
    for p in 0..c.max_position_embeddings {
        for &inv_freq in &inv_freq {
            let angle = p as f32 * inv_freq;
            cos.push(angle.cos());
            sin.push(angle.sin());
        }
    }
    (cos, sin)
}

#[inline(always)]
fn resize(buffer: &mut Vec<f32>, len: usize) {
    buffer.resize(len, 0.0);
}

/// Keeps the first `keep` of every `stride` values, packed: [n, stride] -> [n, keep].
#[inline(always)]
fn compact(values: &mut [f32], n: usize, stride: usize, keep: usize) {
    for t in 1..n {
        values.copy_within(t * stride..t * stride + keep, t * keep);
    }
}

#[inline(always)]
fn add(x: &mut [f32], y: &[f32]) {
    for (a, &b) in x.iter_mut().zip(y) {
        *a += b;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::checkpoint::{load_checkpoint, save_checkpoint, SaveDtype};
    use crate::net::generate::{greedy, Allowed};
    use crate::net::Cpu;

    /// A small random model saved in bf16, loaded both ways: the burn model then holds
    /// exactly the values the fast path packs, so the two differ only in the order of
    /// their sums.
    fn both_config(tie: bool) -> LlamaConfig {
        let mut config = LlamaConfig::new(96, 64, 160, 2, 4, 2);
        config.max_position_embeddings = 96;
        config.tie_word_embeddings = tie;
        config
    }

    fn both(tie: bool) -> (Llama<Cpu>, FastLlama) {
        both_of(&both_config(tie))
    }

    /// [`both_config`] with Llama 3's rotary scaling, its wavelengths placed so that
    /// the head's frequencies are kept, blended and slowed.
    fn llama3_config() -> LlamaConfig {
        LlamaConfig {
            rope_scaling: Some(crate::net::config::Llama3Rope {
                factor: 8.0,
                low_freq_factor: 1.0,
                high_freq_factor: 4.0,
                original_max_position_embeddings: 32.0,
            }),
            ..both_config(true)
        }
    }

    /// [`both_config`] with a sliding window of 4 positions in its second layer, shorter
    /// than the prompts: the two layers see differently far back.
    fn sliding_config() -> LlamaConfig {
        use crate::net::config::LayerType::{FullAttention, SlidingAttention};
        LlamaConfig {
            sliding_window: Some(4),
            layer_types: Some(vec![FullAttention, SlidingAttention]),
            ..both_config(false)
        }
    }

    fn both_of(config: &LlamaConfig) -> (Llama<Cpu>, FastLlama) {
        let device = Default::default();
        let config = config.clone();
        let mut model = Llama::<Cpu>::init(&config, &device).unwrap();
        // Larger weights than the init gives, so greedy choices are not near-ties.
        model.embed_tokens.weight = model.embed_tokens.weight.map(|w| w * 20.0);
        let dir = tempfile::tempdir().unwrap();
        save_checkpoint(&model, &config, dir.path(), SaveDtype::BF16).unwrap();
        let (_, burn) = load_checkpoint::<Cpu>(dir.path(), &device).unwrap();
        let fast = FastLlama::load(dir.path(), WeightFormat::Bf16).unwrap();
        (burn, fast)
    }

    fn close(a: &[f32], b: &[f32]) {
        assert_eq!(a.len(), b.len());
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            assert!((x - y).abs() <= 1e-4 * (1.0 + y.abs()), "[{i}] {x} vs {y}");
        }
    }

    #[test]
    fn logits_match_the_burn_model() {
        let configs = [
            both_config(true),
            both_config(false),
            llama3_config(),
            sliding_config(),
        ];
        for config in configs {
            let (burn, fast) = both_of(&config);
            let prompt = [3u32, 14, 15, 9, 26, 5, 35, 89];
            let mut slow_cache = Decoder::new_cache(&burn);
            let mut fast_cache = fast.new_cache();
            close(
                &fast.extend_all(&prompt, &mut fast_cache).unwrap(),
                &Decoder::extend_all(&burn, &prompt, &mut slow_cache).unwrap(),
            );
            // Then one token at a time, and a short batch, after the cached positions.
            for step in [&[7u32][..], &[41], &[2, 60, 11]] {
                close(
                    &fast.extend(step, &mut fast_cache).unwrap(),
                    &Decoder::extend(&burn, step, &mut slow_cache).unwrap(),
                );
            }
            assert_eq!(fast_cache.len(), DecodeCache::len(&slow_cache));
        }
    }

    #[test]
    fn greedy_decodes_match_the_burn_model_after_a_rollback() {
        let (burn, fast) = both(true);
        let mut slow_cache = Decoder::new_cache(&burn);
        let mut fast_cache = fast.new_cache();
        let prompt = [1u32, 2, 3, 4, 5, 6, 7, 8];
        fast.extend(&prompt, &mut fast_cache).unwrap();
        Decoder::extend(&burn, &prompt, &mut slow_cache).unwrap();
        let forced = |so_far: &[u32]| match so_far.len() % 4 {
            1 | 2 => Allowed::Only(vec![(so_far.len() as u32 * 13) % 96]),
            _ => Allowed::Any,
        };
        let a = greedy(&fast, &mut fast_cache, &[9, 10], 20, &[], forced).unwrap();
        let b = greedy(&burn, &mut slow_cache, &[9, 10], 20, &[], forced).unwrap();
        assert_eq!(a.tokens, b.tokens);
        close(&a.logprobs, &b.logprobs);
        assert!(a.tokens.iter().any(|&t| t != a.tokens[0]));

        // Back to the prefix and again: the cache's rollback forgets what followed it.
        fast_cache.truncate(prompt.len());
        let again = greedy(&fast, &mut fast_cache, &[9, 10], 20, &[], forced).unwrap();
        assert_eq!(again.tokens, a.tokens);
        let mut cloned = fast_cache.clone();
        cloned.truncate(prompt.len());
        let third = greedy(&fast, &mut cloned, &[9, 10], 20, &[], forced).unwrap();
        assert_eq!(third.tokens, a.tokens);
    }

    #[test]
    fn one_thread_or_two_give_the_same_logits_to_the_bit() {
        for format in [WeightFormat::Int8, WeightFormat::Bf16] {
            let (burn, _) = both(true);
            let config = both_config(true);
            let one = FastLlama::from_burn(&burn, &config, format)
                .unwrap()
                .with_threads(1);
            let two = one.clone().with_threads(2);
            let (mut a, mut b) = (one.new_cache(), two.new_cache());
            let prompt = [3u32, 14, 15, 9, 26, 5, 35, 89, 11, 4];
            let bits = |v: Vec<f32>| v.into_iter().map(f32::to_bits).collect::<Vec<_>>();
            assert_eq!(
                bits(one.extend_all(&prompt, &mut a).unwrap()),
                bits(two.extend_all(&prompt, &mut b).unwrap())
            );
            for step in [&[7u32][..], &[41], &[2, 60, 11]] {
                assert_eq!(
                    bits(one.extend(step, &mut a).unwrap()),
                    bits(two.extend(step, &mut b).unwrap())
                );
            }
        }
    }

    #[test]
    fn tokens_read_together_or_one_at_a_time_give_the_same_logits_to_the_bit() {
        for format in [WeightFormat::Int8, WeightFormat::Bf16] {
            let (burn, _) = both(true);
            let fast = FastLlama::from_burn(&burn, &both_config(true), format).unwrap();
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            // Past one block of 16 cached positions, in calls of 1 to 7 tokens.
            let prompt: Vec<u32> = (0..40).map(|i| (i * 37 + 5) % 96).collect();
            let (mut together, mut apart) = (fast.new_cache(), fast.new_cache());
            let mut rows = Vec::new();
            for (n, chunk) in (1..).zip(prompt.chunks(7)) {
                let (first, rest) = chunk.split_at(n.min(chunk.len()));
                rows.extend(fast.extend_all(first, &mut together).unwrap());
                if !rest.is_empty() {
                    rows.extend(fast.extend_all(rest, &mut together).unwrap());
                }
            }
            for (i, &token) in prompt.iter().enumerate() {
                let row = fast.extend(&[token], &mut apart).unwrap();
                let vocab = row.len();
                assert_eq!(
                    bits(&row),
                    bits(&rows[i * vocab..(i + 1) * vocab]),
                    "{format:?} {i}"
                );
            }
        }
    }

    #[test]
    fn errors_instead_of_panics() {
        let (_, fast) = both(true);
        let mut cache = fast.new_cache();
        assert!(matches!(
            fast.extend(&[], &mut cache),
            Err(Error::EmptyInput)
        ));
        assert!(matches!(
            fast.extend(&[96], &mut cache),
            Err(Error::TokenOutOfRange { id: 96, .. })
        ));
        assert!(matches!(
            fast.extend(&[1; 97], &mut cache),
            Err(Error::ContextFull { .. })
        ));
        assert_eq!(cache.len(), 0);
    }
}
