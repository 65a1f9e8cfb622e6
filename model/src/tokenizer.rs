//! The model's tokenizer: a byte-level BPE trained on trace-language text, with the
//! trace language's markers as single special tokens, stored as a standard
//! `tokenizer.json` that the Python `tokenizers`/`transformers` libraries also load.
//!
//! Digits are split one per token (as Llama does) so that the model reads and writes
//! numbers digit by digit instead of learning one token per frequent number; runs of
//! spaces stay whole, so indentation costs few tokens.

use std::collections::HashSet;
use std::path::Path;

use tokenizers::decoders::byte_level::ByteLevel as ByteLevelDecoder;
use tokenizers::models::bpe::{BpeTrainerBuilder, BPE};
use tokenizers::normalizers::NormalizerWrapper;
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::pre_tokenizers::digits::Digits;
use tokenizers::pre_tokenizers::sequence::Sequence;
use tokenizers::pre_tokenizers::PreTokenizerWrapper;
use tokenizers::processors::byte_level::ByteLevel as ByteLevelProcessor;
use tokenizers::{AddedToken, TokenizerBuilder};

/// A tokenizer problem, with the underlying library's message.
#[derive(Debug, thiserror::Error)]
#[error("tokenizer: {0}")]
pub struct TokenizerError(String);

fn err(e: impl std::fmt::Display) -> TokenizerError {
    TokenizerError(e.to_string())
}

/// The byte-level alphabet read backwards: GPT-2's printable stand-in for each byte.
fn unicode_to_byte() -> std::collections::HashMap<char, u8> {
    let printable = |b: u8| (33..=126).contains(&b) || (161..=172).contains(&b) || b >= 174;
    let mut table = std::collections::HashMap::new();
    let mut shifted = 0u32;
    for b in 0..=255u8 {
        let c = if printable(b) {
            char::from(b)
        } else {
            shifted += 1;
            char::from_u32(255 + shifted).expect("a valid char")
        };
        table.insert(c, b);
    }
    table
}

/// Text to token ids and back.
#[derive(Clone)]
pub struct Tokenizer {
    inner: tokenizers::Tokenizer,
}

/// Trains a byte-level BPE of at most `vocab_size` tokens (special tokens included) on
/// `texts`. Every string in `specials` becomes one token that is never split or merged.
pub fn train_tokenizer(
    texts: impl Iterator<Item = String> + Send,
    vocab_size: usize,
    specials: &[&str],
) -> Result<Tokenizer, TokenizerError> {
    let byte_level = ByteLevel::new(false, true, true);
    let pre_tokenizer = PreTokenizerWrapper::Sequence(Sequence::new(vec![
        Digits::new(true).into(),
        byte_level.into(),
    ]));
    let mut tokenizer = TokenizerBuilder::<BPE, NormalizerWrapper, _, _, _>::new()
        .with_model(BPE::default())
        .with_pre_tokenizer(Some(pre_tokenizer))
        .with_post_processor(Some(ByteLevelProcessor::new(false, true, true)))
        .with_decoder(Some(ByteLevelDecoder::default()))
        .build()
        .map_err(err)?;
    let mut trainer = BpeTrainerBuilder::new()
        .vocab_size(vocab_size)
        .min_frequency(2)
        .show_progress(false)
        .special_tokens(
            specials
                .iter()
                .map(|s| AddedToken::from(*s, true))
                .collect(),
        )
        // Every byte gets a token, so any text can be encoded.
        .initial_alphabet(ByteLevel::alphabet().into_iter().collect::<HashSet<char>>())
        .build();
    tokenizer.train(&mut trainer, texts).map_err(err)?;
    Ok(Tokenizer {
        inner: tokenizer.into(),
    })
}

impl Tokenizer {
    pub fn load(path: &Path) -> Result<Self, TokenizerError> {
        let inner = tokenizers::Tokenizer::from_file(path)
            .map_err(|e| TokenizerError(format!("{}: {e}", path.display())))?;
        Ok(Self { inner })
    }

    pub fn save(&self, path: &Path) -> Result<(), TokenizerError> {
        self.inner
            .save(path, true)
            .map_err(|e| TokenizerError(format!("{}: {e}", path.display())))
    }

    pub fn encode(&self, text: &str) -> Result<Vec<u32>, TokenizerError> {
        Ok(self
            .inner
            .encode(text, false)
            .map_err(err)?
            .get_ids()
            .to_vec())
    }

    /// The exact text of `ids`, special tokens included.
    pub fn decode(&self, ids: &[u32]) -> Result<String, TokenizerError> {
        self.inner.decode(ids, false).map_err(err)
    }

    /// The id of a token (e.g. a special token), if it is in the vocabulary.
    pub fn token_id(&self, token: &str) -> Option<u32> {
        self.inner.token_to_id(token)
    }

    /// The text of one token as stored (byte-level: a space shows as `Ġ`).
    pub fn id_to_token(&self, id: u32) -> Option<String> {
        self.inner.id_to_token(id)
    }

    /// The bytes one token stands for: a byte-level token may end inside a UTF-8
    /// character, so its text alone cannot say.
    pub fn token_bytes(&self, id: u32) -> Vec<u8> {
        let Some(stored) = self.inner.id_to_token(id) else {
            return Vec::new();
        };
        let table = unicode_to_byte();
        let bytes: Option<Vec<u8>> = stored.chars().map(|c| table.get(&c).copied()).collect();
        // Special tokens are stored as their text.
        bytes.unwrap_or_else(|| stored.into_bytes())
    }

    /// Number of ids, special tokens included: the model's `vocab_size` must be at least this.
    pub fn vocab_size(&self) -> usize {
        self.inner.get_vocab_size(true)
    }

    /// The underlying `tokenizers` object, for anything not wrapped here.
    pub fn inner(&self) -> &tokenizers::Tokenizer {
        &self.inner
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPECIALS: &[&str] = &["<|state|>", "<|line|>", "<|call|>", "<|return|>", "<|end|>"];

    fn sample() -> Vec<String> {
        (0..200)
            .map(|i| {
                format!(
                    "<|state|><|line|> {{\"x\": \"{i}\", \"total\": \"{}\"}}\n    total = total + x * {}\n<|end|>",
                    i * 37,
                    i % 7
                )
            })
            .collect()
    }

    #[test]
    fn specials_are_single_tokens_and_text_round_trips() {
        let tok = train_tokenizer(sample().into_iter(), 300, SPECIALS).unwrap();
        assert!(tok.vocab_size() <= 300);
        for s in SPECIALS {
            let id = tok.token_id(s).expect("special token in vocabulary");
            assert_eq!(tok.encode(s).unwrap(), vec![id], "{s}");
        }
        let text = "<|call|>def f(a):\n        return a  # naïve, 12345\n<|return|>\"ok\"<|end|>";
        let ids = tok.encode(text).unwrap();
        assert_eq!(tok.decode(&ids).unwrap(), text);
        let end = tok.token_id("<|end|>").unwrap();
        assert_eq!(*ids.last().unwrap(), end);
        // Markers inside the text are found, not spelled out in pieces.
        assert_eq!(ids.iter().filter(|&&t| t == end).count(), 1);
        // Token bytes put back together are the text, even where a token ends inside
        // a character (ï is two bytes).
        let bytes: Vec<u8> = ids.iter().flat_map(|&id| tok.token_bytes(id)).collect();
        assert_eq!(String::from_utf8(bytes).unwrap(), text);
    }

    #[test]
    fn digits_are_split_and_the_file_reloads() {
        let tok = train_tokenizer(sample().into_iter(), 300, SPECIALS).unwrap();
        let ids = tok.encode("12345").unwrap();
        assert_eq!(ids.len(), 5);

        let dir = std::env::temp_dir().join(format!("nd-tokenizer-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("tokenizer.json");
        tok.save(&path).unwrap();
        let back = Tokenizer::load(&path).unwrap();
        let text = sample()[42].clone();
        assert_eq!(back.encode(&text).unwrap(), tok.encode(&text).unwrap());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_missing_file_is_an_error_naming_it() {
        let e = Tokenizer::load(Path::new("/nonexistent/tokenizer.json"))
            .err()
            .unwrap();
        assert!(e.to_string().contains("/nonexistent/tokenizer.json"));
    }
}
