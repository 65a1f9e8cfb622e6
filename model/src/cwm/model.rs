//! A CWM checkpoint writing frames: the prompt built as CWM's demo builds it (each
//! piece encoded on its own), read after the positions its key/value cache already
//! holds (the program and the frames before are read once), then greedy decoding to
//! the frame's end.

use std::collections::HashMap;
use std::path::Path;

use burn::tensor::backend::Backend;

use super::run::{CwmError, FrameSource};
use super::{
    after_head, context, frames, head, read_reply, Piece, Reply, ACTION_SEP, ARG_SEP,
    BEGIN_OF_TEXT, END_OF_TEXT, FRAME_SEP, TRACE_CONTEXT_START,
};
use crate::net::checkpoint::load_checkpoint_with;
use crate::net::{greedy, Allowed, KvCache, Llama};
use crate::state::{Event, State};

/// The tokens CWM's format is written with, besides the four events.
const FORMAT: [&str; 5] = [
    TRACE_CONTEXT_START,
    FRAME_SEP,
    ACTION_SEP,
    ARG_SEP,
    END_OF_TEXT,
];

/// Most tokens one frame may take (CWM's demo asks for at most 2,048).
pub const MAX_FRAME_TOKENS: usize = 2048;

/// Whether the checkpoint in `dir` speaks CWM's dialect: its tokenizer has CWM's
/// trace tokens (ours has `<|line|>` and the like instead).
pub fn speaks_cwm(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join("tokenizer.json"))
        .is_ok_and(|text| text.contains(&format!("\"{TRACE_CONTEXT_START}\"")))
}

/// A CWM checkpoint reading one program.
pub struct CwmModel<B: Backend> {
    net: Llama<B>,
    tokenizer: tokenizers::Tokenizer,
    /// CWM's special tokens by text, and by id.
    ids: HashMap<&'static str, u32>,
    names: HashMap<u32, &'static str>,
    /// What ends a frame: `<|frame_sep|>`, and the run's end.
    stops: Vec<u32>,
    /// How every prompt begins (the program, its entry line marked), encoded once.
    head: Vec<u32>,
    lines: Vec<String>,
    cache: KvCache<B>,
    /// The tokens the cache holds.
    cached: Vec<u32>,
}

impl<B: Backend> CwmModel<B> {
    /// Loads the checkpoint in `dir` on `device` for `source`, whose run starts at
    /// line `entry`. `loaded` hears of each part of the weights read (done, of).
    pub fn load(
        dir: &Path,
        device: &B::Device,
        source: &str,
        entry: u32,
        loaded: &mut dyn FnMut(usize, usize),
    ) -> Result<Self, CwmError> {
        let path = dir.join("tokenizer.json");
        let tokenizer = tokenizers::Tokenizer::from_file(&path)
            .map_err(|e| CwmError::Model(format!("{}: {e}", path.display())))?;
        let mut ids = HashMap::new();
        let events = Event::ALL.map(super::event_token);
        for name in FORMAT.into_iter().chain(events).chain([BEGIN_OF_TEXT]) {
            if let Some(id) = tokenizer.token_to_id(name) {
                ids.insert(name, id);
            }
        }
        if let Some(missing) = FORMAT[..4]
            .iter()
            .chain(&events)
            .find(|n| !ids.contains_key(*n))
        {
            return Err(CwmError::Model(format!(
                "{} has no {missing} token: it does not speak CWM's trace format",
                path.display()
            )));
        }
        let (config, net) = load_checkpoint_with(dir, device, loaded)
            .map_err(|e| CwmError::Model(format!("{}: {e}", dir.display())))?;
        let mut names: HashMap<u32, &'static str> = ids.iter().map(|(&n, &id)| (id, n)).collect();
        // Llama 3's other end-of-text tokens (`<|eot_id|>`, ...) end the run too.
        for id in eos_token_ids(dir)
            .into_iter()
            .filter(|&id| (id as usize) < config.vocab_size)
        {
            names.entry(id).or_insert(END_OF_TEXT);
        }
        let stops = names
            .iter()
            .filter(|(_, &n)| n == FRAME_SEP || n == END_OF_TEXT)
            .map(|(&id, _)| id)
            .collect();
        let mut model = CwmModel {
            net,
            tokenizer,
            ids,
            names,
            stops,
            head: Vec::new(),
            lines: source.lines().map(str::to_owned).collect(),
            cache: KvCache::new(),
            cached: Vec::new(),
        };
        model.head = model.encode(&head(&context(source, entry)))?;
        Ok(model)
    }

    /// The prompt for the frame after `path` (see [`FrameSource::next_frame`]).
    pub fn prompt_tokens(
        &self,
        path: &[State],
        forced: Option<Event>,
    ) -> Result<Vec<u32>, CwmError> {
        let mut tokens = self.head.clone();
        tokens.extend(self.encode(&after_head(&frames(path), forced))?);
        Ok(tokens)
    }

    /// The positions the key/value cache holds (the prompt read before, and the
    /// frame written after it but its last token).
    pub fn cached(&self) -> usize {
        self.cached.len()
    }

    /// The prompt's tokens: each text encoded on its own, as the demo does. A
    /// tokenizer without `<|begin_of_text|>` (a test's) starts without it.
    fn encode(&self, pieces: &[Piece]) -> Result<Vec<u32>, CwmError> {
        let mut tokens = Vec::new();
        for piece in pieces {
            match piece {
                Piece::Special(name) => tokens.extend(self.ids.get(name)),
                Piece::Text(text) => {
                    let encoding = self
                        .tokenizer
                        .encode(text.as_str(), false)
                        .map_err(|e| CwmError::Model(e.to_string()))?;
                    tokens.extend_from_slice(encoding.get_ids());
                }
            }
        }
        Ok(tokens)
    }

    /// The tokens the model wrote, as pieces: its special tokens, and the text between.
    fn pieces(&self, tokens: &[u32]) -> Result<Vec<Piece>, CwmError> {
        let mut pieces = Vec::new();
        let mut text = Vec::new();
        let flush = |text: &mut Vec<u32>, pieces: &mut Vec<Piece>| -> Result<(), CwmError> {
            if !text.is_empty() {
                let decoded = self
                    .tokenizer
                    .decode(text, false)
                    .map_err(|e| CwmError::Model(e.to_string()))?;
                pieces.push(Piece::Text(decoded));
                text.clear();
            }
            Ok(())
        };
        for &token in tokens {
            match self.names.get(&token) {
                Some(name) => {
                    flush(&mut text, &mut pieces)?;
                    pieces.push(Piece::Special(name));
                }
                None => text.push(token),
            }
        }
        flush(&mut text, &mut pieces)?;
        Ok(pieces)
    }
}

impl<B: Backend> FrameSource for CwmModel<B> {
    fn next_frame(
        &mut self,
        path: &[State],
        forced: Option<Event>,
    ) -> Result<(Reply, f64), CwmError> {
        let tokens = self.prompt_tokens(path, forced)?;
        let max = self.net.max_positions();
        if tokens.len() >= max {
            return Err(CwmError::TooLong {
                tokens: tokens.len(),
                max,
            });
        }
        // Read only what the cache does not hold (at least one token, for its logits).
        let same = self
            .cached
            .iter()
            .zip(&tokens)
            .take_while(|(a, b)| a == b)
            .count();
        let keep = same.min(tokens.len() - 1);
        self.cache.truncate(keep);
        self.cached.truncate(keep);
        let room = MAX_FRAME_TOKENS.min(max - tokens.len());
        let decoded = greedy(
            &self.net,
            &mut self.cache,
            &tokens[keep..],
            room,
            &self.stops,
            |_| Allowed::Any,
        )
        .map_err(|e| CwmError::Model(e.to_string()));
        let decoded = match decoded {
            Ok(decoded) => decoded,
            Err(e) => {
                // The cache may hold part of a read: start it again next time.
                self.cache = KvCache::new();
                self.cached.clear();
                return Err(e);
            }
        };
        self.cached = tokens;
        self.cached
            .extend(&decoded.tokens[..decoded.tokens.len().saturating_sub(1)]);
        if !decoded.stopped {
            return Err(CwmError::Malformed(format!(
                "the model wrote {} tokens without ending the frame",
                decoded.tokens.len()
            )));
        }
        let reply = read_reply(&self.pieces(&decoded.tokens)?, forced, &self.lines)
            .map_err(|e| CwmError::Malformed(e.to_string()))?;
        Ok((reply, decoded.probability() as f64))
    }
}

/// `eos_token_id` of the checkpoint's `config.json`: one id or a list (none if absent).
fn eos_token_ids(dir: &Path) -> Vec<u32> {
    let config: Option<serde_json::Value> = std::fs::read_to_string(dir.join("config.json"))
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok());
    match config.as_ref().and_then(|c| c.get("eos_token_id")) {
        Some(serde_json::Value::Array(ids)) => ids
            .iter()
            .filter_map(|id| id.as_u64())
            .map(|id| id as u32)
            .collect(),
        Some(id) => id.as_u64().map(|id| id as u32).into_iter().collect(),
        None => Vec::new(),
    }
}
