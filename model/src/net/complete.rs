//! A plain greedy continuation of any text by any checkpoint, with no trace language
//! and no constraints: what `neural-model complete` prints, so that our engine can be
//! compared with `transformers` token for token on a user's own checkpoint.

use std::path::Path;
use std::time::Instant;

use burn::tensor::backend::Backend;
use serde::Serialize;

use super::{greedy, load_checkpoint, Allowed, Cpu, Error, KvCache};

/// A prompt's tokens and the likeliest continuation after them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Completion {
    pub prompt_tokens: Vec<u32>,
    pub tokens: Vec<u32>,
    /// The continuation's text, special tokens written out.
    pub text: String,
    /// Milliseconds to read the prompt, and per generated token after it (this
    /// machine, this run: for comparing devices, not for tests).
    pub prefill_ms: f64,
    pub ms_per_token: f64,
}

/// Continues `prompt` by `max_tokens` greedy tokens with the checkpoint in `dir`
/// (`config.json`, its safetensors, `tokenizer.json`), on the CPU in f32: the burn
/// model, which computes what `transformers` does, not the quantised decode path.
/// The prompt is encoded as written (special tokens in it are read as such; no
/// beginning-of-text token is added).
pub fn complete(dir: &Path, prompt: &str, max_tokens: usize) -> Result<Completion, Error> {
    complete_on::<Cpu>(dir, &Default::default(), prompt, max_tokens)
}

/// [`complete`] with the burn model on any backend (a GPU's, in f32 or bf16).
pub fn complete_on<B: Backend>(
    dir: &Path,
    device: &B::Device,
    prompt: &str,
    max_tokens: usize,
) -> Result<Completion, Error> {
    let path = dir.join("tokenizer.json");
    let tokenizer = tokenizers::Tokenizer::from_file(&path)
        .map_err(|e| Error::Tokenizer(format!("{}: {e}", path.display())))?;
    let encoding = tokenizer
        .encode(prompt, false)
        .map_err(|e| Error::Tokenizer(e.to_string()))?;
    let prompt_tokens = encoding.get_ids().to_vec();
    if prompt_tokens.is_empty() {
        return Err(Error::EmptyInput);
    }
    let (_, model) = load_checkpoint::<B>(dir, device)?;
    let mut cache = KvCache::new();
    // The prompt is read twice: once to warm up (a GPU compiles its kernels on first
    // use), once timed. Then the tokens after the first are decoded, timed apart.
    let (mut first, mut prefill_ms) = (Vec::new(), 0.0);
    for _ in 0..2 {
        cache.truncate(0);
        let started = Instant::now();
        first = greedy(
            &model,
            &mut cache,
            &prompt_tokens,
            max_tokens.min(1),
            &[],
            |_| Allowed::Any,
        )?
        .tokens;
        prefill_ms = started.elapsed().as_secs_f64() * 1e3;
    }
    let started = Instant::now();
    let rest = match first.first() {
        Some(&token) => {
            greedy(&model, &mut cache, &[token], max_tokens - 1, &[], |_| {
                Allowed::Any
            })?
            .tokens
        }
        None => Vec::new(),
    };
    let ms_per_token = started.elapsed().as_secs_f64() * 1e3 / rest.len().max(1) as f64;
    let tokens: Vec<u32> = first.into_iter().chain(rest).collect();
    let text = tokenizer
        .decode(&tokens, false)
        .map_err(|e| Error::Tokenizer(e.to_string()))?;
    Ok(Completion {
        prompt_tokens,
        tokens,
        text,
        prefill_ms,
        ms_per_token,
    })
}
