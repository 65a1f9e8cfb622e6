//! A plain greedy continuation of any text by any checkpoint, with no trace language
//! and no constraints: what `neural-model complete` prints, so that our engine can be
//! compared with `transformers` token for token on a user's own checkpoint.

use std::path::Path;

use serde::Serialize;

use super::{greedy, load_checkpoint, Allowed, Cpu, Error, KvCache};

/// A prompt's tokens and the likeliest continuation after them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Completion {
    pub prompt_tokens: Vec<u32>,
    pub tokens: Vec<u32>,
    /// The continuation's text, special tokens written out.
    pub text: String,
}

/// Continues `prompt` by `max_tokens` greedy tokens with the checkpoint in `dir`
/// (`config.json`, its safetensors, `tokenizer.json`), on the CPU in f32: the burn
/// model, which computes what `transformers` does, not the quantised decode path.
/// The prompt is encoded as written (special tokens in it are read as such; no
/// beginning-of-text token is added).
pub fn complete(dir: &Path, prompt: &str, max_tokens: usize) -> Result<Completion, Error> {
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
    let (_, model) = load_checkpoint::<Cpu>(dir, &Default::default())?;
    let mut cache = KvCache::new();
    let decoded = greedy(&model, &mut cache, &prompt_tokens, max_tokens, &[], |_| {
        Allowed::Any
    })?;
    let text = tokenizer
        .decode(&decoded.tokens, false)
        .map_err(|e| Error::Tokenizer(e.to_string()))?;
    Ok(Completion {
        prompt_tokens,
        tokens: decoded.tokens,
        text,
    })
}
