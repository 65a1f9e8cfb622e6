//! Predicting the next state with the transformer: the program is read once into a
//! key/value cache, then each step appends the current state and the action and
//! decodes the outcome greedily, constrained to the trace language.
//!
//! The prompt of a step is the program, the current state in full, and the action:
//! the Markov view (a state and an action determine the next state). Episodes that
//! start at a random state in full teach the model exactly this shape.

use crate::action::Action;
use crate::language::{self, parse_outcome, render_action, render_outcome, ParseError};
use crate::net::{greedy, load_checkpoint, Allowed, KvCache, Llama, LlamaConfig};
use crate::state::State;
use crate::tokenizer::Tokenizer;
use crate::tree::Outcome;
use burn::tensor::backend::Backend;
use indexmap::IndexMap;
use std::path::{Path, PathBuf};

/// The shipped model: `$NEURAL_MODEL` if set, else `model/weights/default/` of this
/// source tree.
pub fn default_model_dir() -> PathBuf {
    std::env::var_os("NEURAL_MODEL")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("weights/default"))
}

/// Longest JSON string the grammar lets a prediction write (reprs are cut at 200).
const MAX_STRING_CHARS: usize = 240;

/// Most tokens one predicted state may take.
const MAX_STATE_TOKENS: usize = 512;

#[derive(Debug, thiserror::Error)]
pub enum PredictError {
    #[error("no model checkpoint at {dir}: {reason}. Train one (`neural-model train`) or pass the directory of one (config.json, model.safetensors, tokenizer.json)")]
    Checkpoint { dir: PathBuf, reason: String },
    #[error("the model: {0}")]
    Model(#[from] crate::net::Error),
    #[error("the model's prediction is malformed ({error}); it wrote: {text:?}")]
    Malformed { text: String, error: ParseError },
    #[error("the model's prediction did not end within {tokens} tokens; it wrote: {start:?}")]
    TooLong { tokens: usize, start: String },
    #[error(
        "the program and its state do not fit in the model's {max} positions ({needed} tokens)"
    )]
    TooLongContext { needed: usize, max: usize },
    #[error("tokenizer: {0}")]
    Tokenizer(String),
}

/// A prediction and how sure the model is of it.
#[derive(Clone, Debug)]
pub struct Prediction {
    pub outcome: Outcome,
    /// Probability of the whole predicted text.
    pub probability: f64,
    /// Per variable of the predicted state: the probability of the tokens that wrote its
    /// value (a variable carried over by `"..": ".."` gets that marker's probability).
    pub confidence: IndexMap<String, f64>,
    /// The text the model wrote.
    pub text: String,
}

/// A loaded model, ready to predict for any program.
pub struct Predictor<B: Backend> {
    model: Llama<B>,
    pub config: LlamaConfig,
    tokenizer: Tokenizer,
    /// The text of each token id, and whether it is a special token.
    token_text: Vec<(String, bool)>,
    stop: u32,
    /// Ids of the special tokens, by text.
    special: IndexMap<String, u32>,
    /// Tokens that are exactly a newline.
    newlines: Vec<u32>,
    /// The token `"` alone: it closes a JSON string and opens nothing.
    quote_closers: Vec<u32>,
    /// `NEURAL_NO_GRAMMAR` set: decode unconstrained (to measure what the grammar adds).
    unconstrained: bool,
}

/// A program read into the model's cache: the fixed prefix of every step's prompt.
pub struct ProgramContext<B: Backend> {
    cache: KvCache<B>,
    prefix_len: usize,
    /// The program's lines, and the names a frame can have (functions, classes,
    /// `<module>`): what the grammar lets a state's header and source line be.
    lines: Vec<String>,
    names: Vec<String>,
}

impl<B: Backend> Predictor<B> {
    /// Load `dir/config.json`, `dir/model.safetensors` and `dir/tokenizer.json`.
    pub fn load(dir: &Path, device: &B::Device) -> Result<Self, PredictError> {
        let missing = |reason: String| PredictError::Checkpoint {
            dir: dir.to_path_buf(),
            reason,
        };
        for file in ["config.json", "model.safetensors", "tokenizer.json"] {
            if !dir.join(file).is_file() {
                return Err(missing(format!("{file} is missing")));
            }
        }
        let tokenizer =
            Tokenizer::load(&dir.join("tokenizer.json")).map_err(|e| missing(e.to_string()))?;
        let (config, model) =
            load_checkpoint::<B>(dir, device).map_err(|e| missing(e.to_string()))?;
        Self::new(model, config, tokenizer)
    }

    pub fn new(
        model: Llama<B>,
        config: LlamaConfig,
        tokenizer: Tokenizer,
    ) -> Result<Self, PredictError> {
        let mut special = IndexMap::new();
        for token in language::SPECIAL_TOKENS {
            let id = tokenizer.token_id(token).ok_or_else(|| {
                PredictError::Tokenizer(format!("the tokenizer has no {token} token"))
            })?;
            special.insert(token.to_string(), id);
        }
        let token_text: Vec<(String, bool)> = (0..tokenizer.vocab_size() as u32)
            .map(|id| {
                let text = tokenizer.decode(&[id]).unwrap_or_default();
                let is_special = special.values().any(|&s| s == id);
                (text, is_special)
            })
            .collect();
        let stop = special[language::ACTION_SEP];
        let newlines = token_text
            .iter()
            .enumerate()
            .filter(|(_, (text, is_special))| text == "\n" && !is_special)
            .map(|(id, _)| id as u32)
            .collect();
        let quote_closers = token_text
            .iter()
            .enumerate()
            .filter(|(_, (text, is_special))| !is_special && text == "\"")
            .map(|(id, _)| id as u32)
            .collect();
        Ok(Predictor {
            model,
            config,
            tokenizer,
            token_text,
            stop,
            special,
            newlines,
            quote_closers,
            unconstrained: std::env::var_os("NEURAL_NO_GRAMMAR").is_some(),
        })
    }

    fn encode(&self, text: &str) -> Result<Vec<u32>, PredictError> {
        self.tokenizer
            .encode(text)
            .map_err(|e| PredictError::Tokenizer(e.to_string()))
    }

    /// Read the program into a fresh cache (done once per debug session).
    pub fn prepare(
        &self,
        source: &str,
        call: Option<&str>,
    ) -> Result<ProgramContext<B>, PredictError> {
        let prompt = self.encode(&language::render_context(source, call))?;
        let max = self.model.max_positions();
        if prompt.len() + 64 > max {
            return Err(PredictError::TooLongContext {
                needed: prompt.len(),
                max,
            });
        }
        let mut cache = KvCache::new();
        self.model.extend(&prompt, &mut cache)?;
        let lines: Vec<String> = source.lines().map(|l| l.trim_end().to_string()).collect();
        let mut names: Vec<String> = lines
            .iter()
            .filter_map(|l| {
                let l = l.trim_start();
                let rest = l
                    .strip_prefix("def ")
                    .or_else(|| l.strip_prefix("class "))?;
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                (!name.is_empty()).then_some(name)
            })
            .collect();
        names.push("<module>".into());
        Ok(ProgramContext {
            prefix_len: cache.len(),
            cache,
            lines,
            names,
        })
    }

    /// Predict what `action` at `current` leads to.
    pub fn predict(
        &self,
        context: &mut ProgramContext<B>,
        current: &State,
        action: &Action,
    ) -> Result<Prediction, PredictError> {
        context.cache.truncate(context.prefix_len);
        let given = Outcome::State {
            state: current.clone(),
        };
        let prompt_text = format!(
            "{}{}{}{}",
            language::FRAME_SEP,
            render_outcome(None, None, &given),
            render_action(action),
            language::FRAME_SEP
        );
        let prompt = self.encode(&prompt_text)?;
        let max = self.model.max_positions();
        let room = max.saturating_sub(context.prefix_len + prompt.len());
        if room < 16 {
            return Err(PredictError::TooLongContext {
                needed: context.prefix_len + prompt.len(),
                max,
            });
        }
        let grammar = Grammar {
            predictor: self,
            prev: current,
            inverse: action.is_inverse(),
            breakpoints: action.breakpoint_lines(),
            lines: &context.lines,
            names: &context.names,
        };
        let decoded = greedy(
            &self.model,
            &mut context.cache,
            &prompt,
            room.min(MAX_STATE_TOKENS),
            &[self.stop],
            |so_far| grammar.allowed(so_far),
        )?;
        if !decoded.stopped {
            let text = self.tokenizer.decode(&decoded.tokens).unwrap_or_default();
            let chars: Vec<char> = text.chars().collect();
            let start: String = if chars.len() > 200 {
                let head: String = chars[..100].iter().collect();
                let tail: String = chars[chars.len() - 100..].iter().collect();
                format!("{head} … {tail}")
            } else {
                text.clone()
            };
            return Err(PredictError::TooLong {
                tokens: decoded.tokens.len(),
                start,
            });
        }
        let text = self
            .tokenizer
            .decode(&decoded.tokens)
            .map_err(|e| PredictError::Tokenizer(e.to_string()))?;
        let outcome =
            parse_outcome(&text, Some(current)).map_err(|error| PredictError::Malformed {
                text: text.clone(),
                error,
            })?;
        let confidence = self.confidence(&decoded.tokens, &decoded.logprobs, &text, &outcome);
        Ok(Prediction {
            outcome,
            probability: (decoded.logprob() as f64).exp(),
            confidence,
            text,
        })
    }

    /// Probability of each variable's written value (see [`Prediction::confidence`]).
    fn confidence(
        &self,
        tokens: &[u32],
        logprobs: &[f32],
        text: &str,
        outcome: &Outcome,
    ) -> IndexMap<String, f64> {
        let Some(state) = outcome.state() else {
            return IndexMap::new();
        };
        // End offset of each token in `text`.
        let mut ends = Vec::with_capacity(tokens.len());
        let mut at = 0;
        for &t in tokens {
            at += self.token_text[t as usize].0.len();
            ends.push(at.min(text.len()));
        }
        let span_probability = |span: std::ops::Range<usize>| -> f64 {
            let mut logprob = 0.0f64;
            let mut start = 0;
            for (i, &end) in ends.iter().enumerate() {
                if end > span.start && start < span.end {
                    logprob += logprobs[i] as f64;
                }
                start = end;
            }
            logprob.exp()
        };
        let written = json_object_spans(text);
        let rest = written.get("..").cloned().map(&span_probability);
        state
            .locals
            .keys()
            .map(|name| {
                let p = written
                    .get(name)
                    .cloned()
                    .map(&span_probability)
                    .or(rest)
                    .unwrap_or(1.0);
                (name.clone(), p)
            })
            .collect()
    }
}

/// What the trace language lets come next, token by token.
struct Grammar<'a, B: Backend> {
    predictor: &'a Predictor<B>,
    prev: &'a State,
    inverse: bool,
    /// A breakpoint action lands on a `line` state on one of these lines (or ends).
    breakpoints: Option<&'a std::collections::BTreeSet<u32>>,
    lines: &'a [String],
    names: &'a [String],
}

impl<B: Backend> Grammar<'_, B> {
    fn allowed(&self, so_far: &[u32]) -> Allowed {
        let p = self.predictor;
        if p.unconstrained {
            return Allowed::Any;
        }
        let text: String = so_far
            .iter()
            .map(|&t| p.token_text[t as usize].0.as_str())
            .collect();
        let special = |name: &str| p.special[name];
        let events = ["<|call|>", "<|line|>", "<|return|>", "<|exception|>"].map(special);
        if text.is_empty() {
            let mut first = match self.breakpoints {
                Some(_) => vec![special("<|line|>")],
                None => events.to_vec(),
            };
            first.extend(
                [
                    language::EXIT_NORMAL,
                    language::EXIT_ERROR,
                    language::EXIT_NEVER,
                ]
                .map(special),
            );
            if self.inverse {
                first.push(special(language::AT_START));
            }
            return Allowed::Only(first);
        }
        if text == language::AT_START {
            return Allowed::Only(events.to_vec());
        }
        // Sections come at most once each, in order; only returns and exceptions have
        // a value. After the last possible one, nothing but the end.
        let sections = [language::GLOBALS, language::VALUE, language::STDOUT];
        let used = sections
            .iter()
            .rposition(|t| text.contains(t))
            .map_or(0, |i| i + 1);
        let valued = ["<|return|>", "<|exception|>"]
            .iter()
            .any(|t| text.contains(t));
        let next_sections: Vec<u32> = (used..3)
            .filter(|&i| i != 1 || valued)
            .map(|i| special(sections[i]))
            .collect();
        let newlines = if next_sections.is_empty() {
            Vec::new()
        } else {
            p.newlines.clone()
        };
        // A complete outcome may only end, or open one more section on a new line:
        // a small model would otherwise ramble on past a finished state.
        if parse_outcome(&text, Some(self.prev)).is_ok() {
            let mut next = vec![p.stop];
            next.extend(newlines);
            return Allowed::Only(next);
        }
        // After a complete JSON value (the locals, or a section's value) comes a new
        // line, then a section token.
        match json_tail(&text) {
            Some(Tail::Complete) => return Allowed::Only(newlines),
            Some(Tail::NewLine) => return Allowed::Only(next_sections),
            // A string longer than any the tracer writes (reprs are cut at 200
            // characters) must close now.
            Some(Tail::Open(Some(len))) if len > MAX_STRING_CHARS => {
                return Allowed::Only(p.quote_closers.clone());
            }
            _ => {}
        }
        let open_json = json_segment(&text);
        // Inside a JSON string most pieces are plain text: no parse needed for those.
        let in_string = open_json.and_then(open_string_len).is_some();
        let allowed = (0..p.token_text.len() as u32)
            .filter(|&id| {
                let (piece, is_special) = &p.token_text[id as usize];
                if *is_special {
                    return false;
                }
                match open_json {
                    // Inside JSON: the text must stay a prefix of one JSON value.
                    Some(_) if in_string && !piece.contains(['"', '\\']) => {
                        !piece.chars().any(char::is_control)
                    }
                    Some(segment) => json_prefix_ok(segment, piece),
                    None => self.header_ok(&text, piece),
                }
            })
            .collect();
        Allowed::Only(allowed)
    }

    /// A state's header is `LINE DEPTH FUNCTION` with a line of the program and a
    /// function it defines; the next line is that line's text, exactly.
    fn header_ok(&self, text: &str, piece: &str) -> bool {
        let body = text.strip_prefix(language::AT_START).unwrap_or(text);
        let Some(after) = body.find("|>").map(|i| &body[i + 2..]) else {
            return true;
        };
        if body.starts_with("<|exit_") {
            return true;
        }
        let candidate = format!("{after}{piece}");
        let (header, rest) = match candidate.split_once('\n') {
            Some((header, rest)) => (header, Some(rest)),
            None => (candidate.as_str(), None),
        };
        let fields: Vec<&str> = header.split(' ').collect();
        let digits =
            |f: &str| f.bytes().all(|b| b.is_ascii_digit()) && !(f.len() > 1 && f.starts_with('0'));
        // A state is never on a blank or comment line.
        let at_start = text.starts_with(language::AT_START);
        let hit = |n: usize| at_start || self.breakpoints.is_none_or(|b| b.contains(&(n as u32)));
        let code_line = |n: usize| {
            self.lines
                .get(n.wrapping_sub(1))
                .is_some_and(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        };
        let line_ok = digits(fields[0])
            && if fields.len() > 1 {
                fields[0]
                    .parse::<usize>()
                    .is_ok_and(|n| code_line(n) && hit(n))
            } else {
                (1..=self.lines.len())
                    .any(|n| code_line(n) && hit(n) && n.to_string().starts_with(fields[0]))
            };
        let depth_ok = fields.get(1).is_none_or(|f| digits(f) && f.len() <= 4);
        let name_ok = fields.get(2).is_none_or(|f| {
            if rest.is_some() {
                self.names.iter().any(|n| n == f)
            } else {
                self.names.iter().any(|n| n.starts_with(f))
            }
        });
        let filled = fields
            .iter()
            .enumerate()
            .all(|(i, f)| !f.is_empty() || i + 1 == fields.len() && rest.is_none());
        if fields.len() > 3 || !(line_ok && depth_ok && name_ok && filled) {
            return false;
        }
        let Some(rest) = rest else { return true };
        if fields.len() < 3 {
            return false;
        }
        let number: usize = fields[0].parse().unwrap_or(1);
        let expected = format!("{}\n", self.lines[number - 1]);
        if rest.len() <= expected.len() {
            expected.starts_with(rest)
        } else {
            // Then the locals, a JSON object.
            rest.starts_with(&expected) && rest[expected.len()..].starts_with('{')
        }
    }
}

enum Tail {
    /// Inside a JSON value; inside a string of this many characters so far, if so.
    Open(Option<usize>),
    /// A JSON value has just closed.
    Complete,
    /// A JSON value closed, then a newline.
    NewLine,
}

/// Where a state's text stands with respect to its JSON parts (`None`: before them,
/// or an exit).
fn json_tail(text: &str) -> Option<Tail> {
    // A newline right after a JSON value: look at the value before it.
    let (segment, newline) = match text.strip_suffix('\n').and_then(json_segment) {
        Some(segment) => (segment, true),
        None => (json_segment(text)?, false),
    };
    if segment.is_empty() {
        return Some(Tail::Open(None));
    }
    let mut values = serde_json::Deserializer::from_str(segment).into_iter::<serde_json::Value>();
    let complete = matches!(values.next(), Some(Ok(_))) && values.byte_offset() == segment.len();
    Some(match (complete, newline) {
        (true, true) => Tail::NewLine,
        (true, false) => Tail::Complete,
        _ => Tail::Open(open_string_len(segment)),
    })
}

/// The JSON value being written at the end of `text` (`None` before the locals).
fn json_segment(text: &str) -> Option<&str> {
    let body = text.strip_prefix(language::AT_START).unwrap_or(text);
    if body.starts_with("<|exit_") {
        return None;
    }
    let header_end = body.find('\n')?;
    let locals_start = header_end + 1 + body[header_end + 1..].find('\n')? + 1;
    let section = [language::GLOBALS, language::VALUE, language::STDOUT]
        .iter()
        .filter_map(|t| body.rfind(t).map(|i| i + t.len()))
        .max()
        .unwrap_or(locals_start)
        .max(locals_start);
    Some(&body[section..])
}

/// Whether `json + piece` can still begin one JSON value (or is one, exactly).
fn json_prefix_ok(json: &str, piece: &str) -> bool {
    let candidate = format!("{json}{piece}");
    if candidate.trim_start().is_empty() {
        return false;
    }
    match serde_json::from_str::<serde_json::Value>(&candidate) {
        Ok(_) => true,
        Err(e) => e.is_eof(),
    }
}

/// Characters of the JSON string still open at the end of `json`, if one is.
fn open_string_len(json: &str) -> Option<usize> {
    let (mut open, mut escaped, mut len) = (false, false, 0);
    for c in json.chars() {
        if !open {
            if c == '"' {
                (open, len) = (true, 0);
            }
        } else if escaped {
            escaped = false;
            len += 1;
        } else if c == '\\' {
            escaped = true;
        } else if c == '"' {
            open = false;
        } else {
            len += 1;
        }
    }
    open.then_some(len)
}

/// Keys of the first JSON object of strings in `text` (the locals), with the byte
/// range of each value.
fn json_object_spans(text: &str) -> IndexMap<String, std::ops::Range<usize>> {
    let mut spans = IndexMap::new();
    let Some(start) = text.find("\n{").map(|i| i + 1) else {
        return spans;
    };
    let bytes = text.as_bytes();
    let string_end = |from: usize| -> Option<usize> {
        let mut i = from + 1;
        while i < bytes.len() {
            match bytes[i] {
                b'\\' => i += 2,
                b'"' => return Some(i + 1),
                _ => i += 1,
            }
        }
        None
    };
    let mut i = start + 1;
    while i < bytes.len() && bytes[i] == b'"' {
        let Some(key_end) = string_end(i) else { break };
        let key: String = serde_json::from_str(&text[i..key_end]).unwrap_or_default();
        let value_start = key_end + 1; // past ':'
        let Some(value_end) = bytes
            .get(value_start)
            .filter(|&&b| b == b'"')
            .and_then(|_| string_end(value_start))
        else {
            break;
        };
        spans.insert(key, value_start..value_end);
        i = value_end + 1; // past ',' or '}'
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_spans_are_found_in_the_locals_object() {
        let text =
            "<|line|>3 0 f\n    x = 1\n{\"x\":\"[1, \\\"a\\\"]\",\"..\":\"..\"}\n<|value|>\"2\"";
        let spans = json_object_spans(text);
        assert_eq!(&text[spans["x"].clone()], "\"[1, \\\"a\\\"]\"");
        assert_eq!(&text[spans[".."].clone()], "\"..\"");
        assert_eq!(spans.len(), 2);
    }
}
