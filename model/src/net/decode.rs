//! What decoding needs of a model: read tokens after a cache of earlier positions and
//! give the next token's logits. The burn model ([`Llama`], any backend) and the CPU
//! decode path ([`super::fast::FastLlama`]) both provide it, so greedy decoding, the
//! predictor and the bench run on either.

use burn::tensor::backend::Backend;

use super::cache::KvCache;
use super::decoder::Llama;
use super::fast::WeightFormat;
use super::Error;

/// The weights the fast CPU path packs when `NEURAL_DECODER` is unset: int8. With the
/// shipped weights on 1,763 held-out generated predictions (`neural-model eval --split
/// test --origin generated --limit 2000`), int8 scored 896 exact, bf16 894 and burn's
/// f32 895; int8 made the same prediction as burn in 97.0% of them (bf16 in 99.3%), at
/// 45 ms a prediction against 49 (bf16) and 95 (burn).
pub const DEFAULT_FORMAT: WeightFormat = WeightFormat::Int8;

/// The positions a model has read, which a session can roll back.
pub trait DecodeCache: Clone {
    /// Number of positions read: the position of the next token.
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Forgets every position from `len` on; a no-op if the cache is already shorter.
    fn truncate(&mut self, len: usize);
}

/// A causal language model read incrementally.
pub trait Decoder {
    type Cache: DecodeCache;
    /// A cache with no positions read.
    fn new_cache(&self) -> Self::Cache;
    fn vocab_size(&self) -> usize;
    /// The context length the model can hold.
    fn max_positions(&self) -> usize;
    /// Reads `tokens` after the positions in `cache` and returns the logits [vocab] for
    /// the token that follows them.
    fn extend(&self, tokens: &[u32], cache: &mut Self::Cache) -> Result<Vec<f32>, Error>;
    /// Like [`extend`](Self::extend) but returns the logits after every token read,
    /// [len, vocab] row-major: row `i` scores the token that follows `tokens[i]`.
    fn extend_all(&self, tokens: &[u32], cache: &mut Self::Cache) -> Result<Vec<f32>, Error>;
}

impl<B: Backend> DecodeCache for KvCache<B> {
    fn len(&self) -> usize {
        KvCache::len(self)
    }

    fn truncate(&mut self, len: usize) {
        KvCache::truncate(self, len)
    }
}

impl<B: Backend> Decoder for Llama<B> {
    type Cache = KvCache<B>;

    fn new_cache(&self) -> KvCache<B> {
        KvCache::new()
    }

    fn vocab_size(&self) -> usize {
        self.vocab_size
    }

    fn max_positions(&self) -> usize {
        Llama::max_positions(self)
    }

    fn extend(&self, tokens: &[u32], cache: &mut KvCache<B>) -> Result<Vec<f32>, Error> {
        to_vec(Llama::extend(self, tokens, cache)?)
    }

    fn extend_all(&self, tokens: &[u32], cache: &mut KvCache<B>) -> Result<Vec<f32>, Error> {
        to_vec(Llama::extend_all(self, tokens, cache)?)
    }
}

fn to_vec<B: Backend, const D: usize>(t: burn::tensor::Tensor<B, D>) -> Result<Vec<f32>, Error> {
    t.into_data()
        .into_vec()
        .map_err(|e| Error::Config(format!("reading logits: {e:?}")))
}

/// The model a CPU session decodes with: the packed fast path (`NEURAL_DECODER` unset,
/// `int8` or `bf16`), or the burn model it is checked against (`NEURAL_DECODER=burn`).
/// [`DEFAULT_FORMAT`] says which the fast path uses by default, and why.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)] // one per session
pub enum CpuModel {
    Fast(super::FastLlama),
    Burn(Llama<super::Cpu>),
}

/// The cache of a [`CpuModel`], of the same kind as the model.
#[derive(Debug, Clone)]
pub enum CpuCache {
    // Boxed: the fast cache carries its scratch buffers' headers inline.
    Fast(Box<super::fast::FastCache>),
    Burn(KvCache<super::Cpu>),
}

impl CpuModel {
    /// Loads a checkpoint directory for the decoder `NEURAL_DECODER` names.
    pub fn load(dir: &std::path::Path) -> Result<(super::LlamaConfig, Self), Error> {
        let (config, model) = super::load_checkpoint::<super::Cpu>(dir, &Default::default())?;
        let choice = std::env::var("NEURAL_DECODER").unwrap_or_default();
        let fast = |format| super::FastLlama::from_burn(&model, &config, format);
        let model = match choice.as_str() {
            "" => CpuModel::Fast(fast(DEFAULT_FORMAT)?),
            "bf16" => CpuModel::Fast(fast(WeightFormat::Bf16)?),
            "int8" => CpuModel::Fast(fast(WeightFormat::Int8)?),
            "burn" => CpuModel::Burn(model),
            other => {
                return Err(Error::Config(format!(
                    "NEURAL_DECODER={other:?}: use `int8` or `bf16` (the fast CPU path) or `burn` (the reference)"
                )))
            }
        };
        Ok((config, model))
    }

    /// The decoder's name, for tables.
    pub fn name(&self) -> &'static str {
        match self {
            CpuModel::Fast(m) => m.format().name(),
            CpuModel::Burn(_) => "burn",
        }
    }
}

impl DecodeCache for CpuCache {
    fn len(&self) -> usize {
        match self {
            CpuCache::Fast(c) => c.len(),
            CpuCache::Burn(c) => c.len(),
        }
    }

    fn truncate(&mut self, len: usize) {
        match self {
            CpuCache::Fast(c) => c.truncate(len),
            CpuCache::Burn(c) => c.truncate(len),
        }
    }
}

impl Decoder for CpuModel {
    type Cache = CpuCache;

    fn new_cache(&self) -> CpuCache {
        match self {
            CpuModel::Fast(m) => CpuCache::Fast(Box::new(m.new_cache())),
            CpuModel::Burn(_) => CpuCache::Burn(KvCache::new()),
        }
    }

    fn vocab_size(&self) -> usize {
        match self {
            CpuModel::Fast(m) => m.vocab_size(),
            CpuModel::Burn(m) => m.vocab_size,
        }
    }

    fn max_positions(&self) -> usize {
        match self {
            CpuModel::Fast(m) => Decoder::max_positions(m),
            CpuModel::Burn(m) => Llama::max_positions(m),
        }
    }

    fn extend(&self, tokens: &[u32], cache: &mut CpuCache) -> Result<Vec<f32>, Error> {
        match (self, cache) {
            (CpuModel::Fast(m), CpuCache::Fast(c)) => m.extend(tokens, c),
            (CpuModel::Burn(m), CpuCache::Burn(c)) => Decoder::extend(m, tokens, c),
            _ => Err(mismatch()),
        }
    }

    fn extend_all(&self, tokens: &[u32], cache: &mut CpuCache) -> Result<Vec<f32>, Error> {
        match (self, cache) {
            (CpuModel::Fast(m), CpuCache::Fast(c)) => m.extend_all(tokens, c),
            (CpuModel::Burn(m), CpuCache::Burn(c)) => Decoder::extend_all(m, tokens, c),
            _ => Err(mismatch()),
        }
    }
}

fn mismatch() -> Error {
    Error::Config("a cache of one decoder was given to the other".into())
}
