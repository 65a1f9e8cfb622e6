//! The transformer that predicts the next state: a Llama-shaped decoder written with
//! burn, generic over the backend, loading and saving Hugging Face checkpoints.
//!
//! Read in this order: [`config`] (the shape), [`attention`] (rotary embeddings and
//! grouped-query attention), [`block`] (RMSNorm, SwiGLU, the residual block), [`cache`]
//! (keys and values kept between calls), [`decoder`] (the whole model), [`generate`]
//! (greedy decoding with an optional constraint), [`decode`] (what decoding needs of a
//! model), [`fast`] (the CPU decode path), [`checkpoint`] (`model.safetensors`),
//! [`train_step`] (one optimiser step), [`bench`] (speed on this machine).
//!
//! The backend is a type parameter everywhere; only the program's edge picks one of the
//! aliases below.

pub mod attention;
pub mod bench;
pub mod block;
pub mod cache;
pub mod checkpoint;
pub mod complete;
pub mod config;
pub mod decode;
pub mod decoder;
pub mod fast;
pub mod generate;
pub mod train_step;

use std::path::{Path, PathBuf};

pub use bench::{bench, BenchModel, BenchOptions, BenchRow, BenchTable, MachineLimits};
pub use cache::KvCache;
pub use checkpoint::{load_checkpoint, save_checkpoint, SaveDtype};
pub use complete::{complete, complete_on, Completion};
pub use config::LlamaConfig;
pub use decode::{CpuCache, CpuModel, DecodeCache, Decoder};
pub use decoder::Llama;
pub use fast::{FastLlama, WeightFormat};
pub use generate::{greedy, greedy_above, Allowed, Decoded};
pub use train_step::{StepStats, TrainBatch, Trainer, TrainerConfig};

/// The CPU backend (burn-flex: SIMD kernels, `gemm` matmul, rayon threads).
pub type Cpu = burn::backend::Flex;
/// The CPU backend with automatic differentiation, for training.
pub type CpuAutodiff = burn::backend::Autodiff<Cpu>;
/// The NVIDIA backend; the CUDA libraries are loaded at run time, not at build time.
#[cfg(feature = "cuda")]
pub type Cuda = burn::backend::Cuda;
/// The NVIDIA backend with automatic differentiation, for training.
#[cfg(feature = "cuda")]
pub type CudaAutodiff = burn::backend::Autodiff<Cuda>;
/// The NVIDIA backend in bf16: large checkpoints keep their weights' precision.
#[cfg(feature = "cuda")]
pub type CudaBf16 = burn::backend::Cuda<half::bf16>;

/// The first NVIDIA GPU, if the CUDA libraries load and one answers.
#[cfg(feature = "cuda")]
pub fn cuda_device() -> Option<burn::backend::cuda::CudaDevice> {
    // burn panics where the driver or the device is missing: that is "no GPU" here.
    std::panic::catch_unwind(|| {
        let device = Default::default();
        let probe = burn::tensor::Tensor::<Cuda, 1>::zeros([1], &device);
        let _ = probe.into_data();
        device
    })
    .ok()
}

/// What can go wrong loading, saving or running a model.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("invalid JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("unsupported model config: {0}")]
    Config(String),
    #[error("model.safetensors: {0}; re-save the checkpoint with safetensors")]
    Safetensors(String),
    #[error("model.safetensors has no tensor `{0}`; is this a Llama checkpoint for this config?")]
    MissingTensor(String),
    #[error("tensor `{name}` has shape {found:?}, but config.json implies {expected:?}")]
    Shape {
        name: String,
        expected: Vec<usize>,
        found: Vec<usize>,
    },
    #[error("tensor `{name}` has dtype {dtype}; only F32, F16 and BF16 are supported")]
    Dtype { name: String, dtype: String },
    #[error("the context would reach {needed} tokens, over the model's {max} positions; start a new session or truncate the history")]
    ContextFull { needed: usize, max: usize },
    #[error("token id {id} is outside the vocabulary of {vocab} tokens")]
    TokenOutOfRange { id: u32, vocab: usize },
    #[error("the decoding constraint allows no token after {after} generated tokens")]
    NoAllowedToken { after: usize },
    #[error("batch has {got} values where {batch} x {seq} = {} were expected", batch * seq)]
    BatchShape {
        batch: usize,
        seq: usize,
        got: usize,
    },
    #[error("the batch has no target tokens (its loss mask is all false)")]
    NoTargets,
    #[error("nothing to read: the token sequence is empty")]
    EmptyInput,
    #[error("tokenizer: {0}")]
    Tokenizer(String),
}

impl Error {
    fn io(path: &Path, source: std::io::Error) -> Self {
        Error::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}
