//! The model's shape, read from and written to a Hugging Face Llama `config.json`.
//!
//! Only the fields that decide the math are kept; other keys in a file we load are
//! ignored, and the file we write carries the few keys PyTorch needs to load it as a
//! `LlamaForCausalLM`.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::Error;
use crate::language::Locals;

/// The most numbers (weights and rotary tables) a model may hold: 16 GiB of f32.
const MAX_WEIGHTS: usize = 1 << 32;

/// The hyper-parameters of a Llama-shaped decoder, named as in HF `config.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LlamaConfig {
    pub vocab_size: usize,
    pub hidden_size: usize,
    pub intermediate_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    /// Fewer than `num_attention_heads` means grouped-query attention.
    pub num_key_value_heads: usize,
    pub max_position_embeddings: usize,
    pub rms_norm_eps: f64,
    pub rope_theta: f64,
    /// When true the output projection reuses the embedding matrix (no `lm_head.weight`).
    pub tie_word_embeddings: bool,
    /// Llama 3's rescaled rotary frequencies (`rope_type` "llama3"); `None`: plain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rope_scaling: Option<Llama3Rope>,
    /// How far back a `sliding_attention` layer looks (CWM: 8,192 tokens).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sliding_window: Option<usize>,
    /// Each layer's attention, `full_attention` or `sliding_attention`; `None`: all full.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layer_types: Option<Vec<LayerType>>,
    /// Longest episode, in tokens, the model trained on (our key; HF configs lack it
    /// and `transformers` keeps it as is). Past it a model reads worse, so a session's
    /// history is cut back before it grows longer. `None`: all of
    /// `max_position_embeddings`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trained_positions: Option<usize>,
    /// How the model writes a state's locals after a single step (our key; absent:
    /// diffs, as every checkpoint before it).
    #[serde(default, skip_serializing_if = "Locals::is_diff")]
    pub trace_locals: Locals,
}

/// What a layer's queries see of the positions before them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LayerType {
    /// Every position before it.
    FullAttention,
    /// The last `sliding_window` positions, its own included.
    SlidingAttention,
}

/// Llama 3's rotary scaling: long wavelengths slowed by `factor`, short ones kept, and
/// those between blended smoothly (`transformers`' `_compute_llama3_parameters`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Llama3Rope {
    pub factor: f64,
    pub low_freq_factor: f64,
    pub high_freq_factor: f64,
    pub original_max_position_embeddings: f64,
}

impl Llama3Rope {
    /// One inverse frequency rescaled, in f32 in the order `transformers` computes it.
    fn scale(&self, inv_freq: f32) -> f32 {
        let old_context = self.original_max_position_embeddings;
        let low_freq_wavelen = (old_context / self.low_freq_factor) as f32;
        let high_freq_wavelen = (old_context / self.high_freq_factor) as f32;
        let factor = self.factor as f32;
        let wavelen = (2.0 * std::f64::consts::PI) as f32 / inv_freq;
        let scaled = if wavelen > low_freq_wavelen {
            inv_freq / factor
        } else {
            inv_freq
        };
        let smooth = (old_context as f32 / wavelen - self.low_freq_factor as f32)
            / (self.high_freq_factor - self.low_freq_factor) as f32;
        // (transformers writes `~(w < high) * ~(w > low)`; the same for a number.)
        let medium = wavelen >= high_freq_wavelen && wavelen <= low_freq_wavelen;
        if medium {
            (1.0 - smooth) * scaled / factor + smooth * scaled
        } else {
            scaled
        }
    }
}

impl LlamaConfig {
    /// A config with the HF defaults for the optional fields.
    pub fn new(
        vocab_size: usize,
        hidden_size: usize,
        intermediate_size: usize,
        num_hidden_layers: usize,
        num_attention_heads: usize,
        num_key_value_heads: usize,
    ) -> Self {
        Self {
            vocab_size,
            hidden_size,
            intermediate_size,
            num_hidden_layers,
            num_attention_heads,
            num_key_value_heads,
            max_position_embeddings: 2048,
            rms_norm_eps: 1e-6,
            rope_theta: 10_000.0,
            tie_word_embeddings: false,
            rope_scaling: None,
            sliding_window: None,
            layer_types: None,
            trained_positions: None,
            trace_locals: Locals::Diff,
        }
    }

    /// About 5M parameters with a 4096-token vocabulary: the size we can train on a CPU.
    pub fn small_5m(vocab_size: usize) -> Self {
        Self {
            tie_word_embeddings: true,
            ..Self::new(vocab_size, 256, 768, 5, 4, 2)
        }
    }

    /// About 20M parameters with a 4096-token vocabulary.
    pub fn medium_20m(vocab_size: usize) -> Self {
        Self {
            tie_word_embeddings: true,
            ..Self::new(vocab_size, 512, 1408, 6, 8, 4)
        }
    }

    /// The positions a session's episode may fill: what the model trained on, within
    /// what it can hold.
    pub fn history_positions(&self) -> usize {
        self.trained_positions
            .unwrap_or(self.max_position_embeddings)
            .min(self.max_position_embeddings)
    }

    pub fn head_dim(&self) -> usize {
        self.hidden_size / self.num_attention_heads
    }

    /// How many positions, its own included, a query of `layer` sees at most; `None`:
    /// all before it. A query at position `q` sees keys `k` with `q - k < window`, as
    /// `transformers`' sliding-window mask does.
    pub fn window(&self, layer: usize) -> Option<usize> {
        let kind = self.layer_types.as_ref().and_then(|types| types.get(layer));
        match kind {
            Some(LayerType::SlidingAttention) => self.sliding_window,
            _ => None,
        }
    }

    /// The rotary inverse frequencies, one per pair of a head's dimensions, in f32 as
    /// `transformers` computes them: `theta^(-2i / head_dim)`, rescaled for Llama 3.
    pub fn inv_freq(&self) -> Vec<f32> {
        let hd = self.head_dim();
        let theta = self.rope_theta as f32;
        (0..hd / 2)
            .map(|i| {
                let plain = 1.0f32 / theta.powf((2 * i) as f32 / hd as f32);
                self.rope_scaling.map_or(plain, |rope| rope.scale(plain))
            })
            .collect()
    }

    /// Number of weights, counting a tied embedding once.
    pub fn num_parameters(&self) -> usize {
        let d = self.hidden_size;
        let kv = self.num_key_value_heads * self.head_dim();
        let attention = 2 * d * d + 2 * d * kv;
        let mlp = 3 * d * self.intermediate_size;
        let layer = attention + mlp + 2 * d;
        let embed = self.vocab_size * d;
        let head = if self.tie_word_embeddings { 0 } else { embed };
        embed + head + self.num_hidden_layers * layer + d
    }

    /// Checks the shape is one this implementation computes exactly.
    pub fn validate(&self) -> Result<(), Error> {
        let bad = |why: String| Err(Error::Config(why));
        if self.num_attention_heads == 0
            || !self.hidden_size.is_multiple_of(self.num_attention_heads)
        {
            return bad(format!(
                "hidden_size {} is not a multiple of num_attention_heads {}",
                self.hidden_size, self.num_attention_heads
            ));
        }
        if self.num_key_value_heads == 0
            || !self
                .num_attention_heads
                .is_multiple_of(self.num_key_value_heads)
        {
            return bad(format!(
                "num_attention_heads {} is not a multiple of num_key_value_heads {}",
                self.num_attention_heads, self.num_key_value_heads
            ));
        }
        if !self.head_dim().is_multiple_of(2) {
            return bad(format!(
                "head dimension {} must be even for rotary embeddings",
                self.head_dim()
            ));
        }
        if let Some(types) = &self.layer_types {
            if types.len() != self.num_hidden_layers {
                return bad(format!(
                    "layer_types names {} layers, the model has {}",
                    types.len(),
                    self.num_hidden_layers
                ));
            }
        }
        if self.sliding_window == Some(0) {
            return bad("sliding_window must be positive".into());
        }
        if self.vocab_size == 0 || self.num_hidden_layers == 0 || self.intermediate_size == 0 {
            return bad(
                "vocab_size, num_hidden_layers and intermediate_size must be positive".into(),
            );
        }
        // The model is allocated from these numbers before any weight is read, so a
        // corrupt or hostile config.json (max_position_embeddings 10^12 asked for 256 TB
        // of rotary tables) must fail here, not abort the process on allocation.
        let limits = [
            ("vocab_size", self.vocab_size, 1 << 20),
            ("hidden_size", self.hidden_size, 1 << 16),
            ("intermediate_size", self.intermediate_size, 1 << 18),
            ("num_hidden_layers", self.num_hidden_layers, 1 << 10),
            (
                "max_position_embeddings",
                self.max_position_embeddings,
                1 << 20,
            ),
        ];
        for (name, value, limit) in limits {
            if value > limit {
                return bad(format!("{name} {value} is over {limit}"));
            }
        }
        let rope = 2 * self.max_position_embeddings * self.head_dim();
        if self.num_parameters() + rope > MAX_WEIGHTS {
            return bad(format!(
                "the model would hold {} numbers, over {MAX_WEIGHTS}",
                self.num_parameters() + rope
            ));
        }
        Ok(())
    }

    /// Parses an HF `config.json`, filling HF's defaults for missing optional keys and
    /// refusing variants we do not implement (biases, rope scaling, other activations).
    pub fn from_json(text: &str) -> Result<Self, Error> {
        let mut v: Value = serde_json::from_str(text)?;
        let obj = v
            .as_object_mut()
            .ok_or_else(|| Error::Config("config.json is not a JSON object".into()))?;
        let unsupported = |key: &str,
                           ok: &dyn Fn(&Value) -> bool,
                           obj: &serde_json::Map<String, Value>| {
            match obj.get(key) {
                Some(val) if !ok(val) => Err(Error::Config(format!(
                    "config.json has {key} = {val}, which this Llama implementation does not support"
                ))),
                _ => Ok(()),
            }
        };
        unsupported("hidden_act", &|v| v == "silu", obj)?;
        unsupported("attention_bias", &|v| v == false, obj)?;
        unsupported("mlp_bias", &|v| v == false, obj)?;
        // transformers 5 writes `rope_parameters` (theta, type and the scaling's
        // numbers) instead of 4.x's `rope_theta` and `rope_scaling`.
        let rope_type = |v: &Value| {
            v.get("rope_type")
                .or_else(|| v.get("type"))
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        let known_rope = |v: &Value| {
            v.is_null() || matches!(rope_type(v).as_deref(), Some("default" | "llama3"))
        };
        unsupported("rope_scaling", &known_rope, obj)?;
        unsupported("rope_parameters", &known_rope, obj)?;
        let rope = obj
            .get("rope_parameters")
            .filter(|v| !v.is_null())
            .or_else(|| obj.get("rope_scaling").filter(|v| !v.is_null()))
            .cloned();
        if let Some(theta) = rope.as_ref().and_then(|p| p.get("rope_theta")).cloned() {
            obj.entry("rope_theta").or_insert(theta);
        }
        let llama3 = rope.filter(|r| rope_type(r).as_deref() == Some("llama3"));
        obj.insert("rope_scaling".into(), llama3.unwrap_or(Value::Null));
        if let (Some(hd), Some(h), Some(n)) = (
            obj.get("head_dim").and_then(Value::as_u64),
            obj.get("hidden_size").and_then(Value::as_u64),
            obj.get("num_attention_heads").and_then(Value::as_u64),
        ) {
            if n == 0 || hd * n != h {
                return Err(Error::Config(format!(
                    "head_dim {hd} differs from hidden_size / num_attention_heads; not supported"
                )));
            }
        }
        if !obj.contains_key("num_key_value_heads") {
            let heads = obj
                .get("num_attention_heads")
                .cloned()
                .unwrap_or(Value::Null);
            obj.insert("num_key_value_heads".into(), heads);
        }
        // Meta's Code World Model is Llama 3 with sliding-window layers; transformers'
        // CwmConfig fills these when its config.json leaves them out.
        if obj.get("model_type").is_some_and(|t| t == "cwm") {
            let layers = obj
                .get("num_hidden_layers")
                .and_then(Value::as_u64)
                .unwrap_or(0);
            let every_fourth: Vec<&str> = (0..layers)
                .map(|i| match i % 4 {
                    0 => "full_attention",
                    _ => "sliding_attention",
                })
                .collect();
            obj.entry("layer_types").or_insert(json!(every_fourth));
            obj.entry("sliding_window").or_insert(json!(8192));
            if obj.get("rope_scaling").is_none_or(Value::is_null) {
                obj.insert(
                    "rope_scaling".into(),
                    json!({"rope_type": "llama3", "factor": 16.0, "low_freq_factor": 1.0,
                        "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}),
                );
                obj.entry("rope_theta").or_insert(json!(1_000_000.0));
            }
        }
        let defaults = [
            ("max_position_embeddings", json!(2048)),
            ("rms_norm_eps", json!(1e-6)),
            ("rope_theta", json!(10_000.0)),
            ("tie_word_embeddings", json!(false)),
        ];
        for (key, value) in defaults {
            obj.entry(key).or_insert(value);
        }
        let config: Self = serde_json::from_value(v)?;
        config.validate()?;
        Ok(config)
    }

    /// The `config.json` text, loadable by `transformers.LlamaForCausalLM`.
    pub fn to_json(&self) -> String {
        let mut v = serde_json::to_value(self).expect("config serialises");
        let obj = v.as_object_mut().expect("config is an object");
        // Sliding-window layers are CWM's (transformers' Llama has none).
        let (architecture, model_type) = match self.layer_types {
            Some(_) => ("CwmForCausalLM", "cwm"),
            None => ("LlamaForCausalLM", "llama"),
        };
        obj.insert("architectures".into(), json!([architecture]));
        obj.insert("model_type".into(), json!(model_type));
        obj.insert("hidden_act".into(), json!("silu"));
        obj.insert("attention_bias".into(), json!(false));
        obj.insert("mlp_bias".into(), json!(false));
        obj.insert("head_dim".into(), json!(self.head_dim()));
        obj.insert("torch_dtype".into(), json!("float32"));
        // transformers 5 reads the rotary settings from here; 4.x reads `rope_theta`
        // and `rope_scaling`.
        let mut rope = json!({"rope_type": "default", "rope_theta": self.rope_theta});
        if let Some(scaling) = self.rope_scaling {
            let numbers = serde_json::to_value(scaling).expect("numbers serialise");
            rope = json!({"rope_type": "llama3", "rope_theta": self.rope_theta});
            rope.as_object_mut()
                .expect("an object")
                .extend(numbers.as_object().expect("an object").clone());
            obj.insert("rope_scaling".into(), rope.clone());
        }
        obj.insert("rope_parameters".into(), rope);
        serde_json::to_string_pretty(&v).expect("config serialises")
    }

    pub fn load(path: &Path) -> Result<Self, Error> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        Self::from_json(&text)
    }

    pub fn save(&self, path: &Path) -> Result<(), Error> {
        std::fs::write(path, self.to_json()).map_err(|e| Error::io(path, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_round_trip_and_defaults() {
        let c = LlamaConfig::small_5m(4096);
        assert_eq!(LlamaConfig::from_json(&c.to_json()).unwrap(), c);

        let minimal = r#"{"vocab_size": 10, "hidden_size": 8, "intermediate_size": 16,
            "num_hidden_layers": 1, "num_attention_heads": 2}"#;
        let m = LlamaConfig::from_json(minimal).unwrap();
        assert_eq!(m.num_key_value_heads, 2);
        assert_eq!(m.rope_theta, 10_000.0);
        assert!(!m.tie_word_embeddings);
        assert_eq!(
            m.trace_locals,
            Locals::Diff,
            "every checkpoint before the key"
        );
        assert_eq!(
            m.history_positions(),
            2048,
            "a foreign checkpoint: all it holds"
        );
    }

    #[test]
    fn the_trained_length_is_kept_and_bounds_a_sessions_history() {
        let c = LlamaConfig {
            trained_positions: Some(768),
            max_position_embeddings: 1024,
            ..LlamaConfig::small_5m(4096)
        };
        let back = LlamaConfig::from_json(&c.to_json()).unwrap();
        assert_eq!(back.trained_positions, Some(768));
        assert!(
            !c.to_json().contains("trace_locals"),
            "diffs leave the file as it was"
        );
        let full = LlamaConfig {
            trace_locals: Locals::Full,
            ..c.clone()
        };
        assert!(full.to_json().contains(r#""trace_locals": "full""#));
        assert_eq!(LlamaConfig::from_json(&full.to_json()).unwrap(), full);
        assert_eq!(back.history_positions(), 768);
        let past_the_table = LlamaConfig {
            trained_positions: Some(4096),
            ..c
        };
        assert_eq!(past_the_table.history_positions(), 1024);
    }

    #[test]
    fn rejects_what_we_do_not_compute() {
        let scaled = r#"{"vocab_size": 10, "hidden_size": 8, "intermediate_size": 16,
            "num_hidden_layers": 1, "num_attention_heads": 2, "rope_scaling": {"type": "linear"}}"#;
        assert!(LlamaConfig::from_json(scaled).is_err());
        let v5 = r#"{"vocab_size": 10, "hidden_size": 8, "intermediate_size": 16,
            "num_hidden_layers": 1, "num_attention_heads": 2,
            "rope_parameters": {"rope_type": "default", "rope_theta": 500.0}}"#;
        assert_eq!(LlamaConfig::from_json(v5).unwrap().rope_theta, 500.0);
        let yarn = r#"{"vocab_size": 10, "hidden_size": 8, "intermediate_size": 16,
            "num_hidden_layers": 1, "num_attention_heads": 2,
            "rope_parameters": {"rope_type": "yarn", "rope_theta": 500.0, "factor": 4.0}}"#;
        let refused = LlamaConfig::from_json(yarn).unwrap_err().to_string();
        assert!(refused.contains("yarn"), "{refused}");
        let odd = LlamaConfig::new(10, 8, 16, 1, 2, 3);
        assert!(odd.validate().is_err());
    }

    /// Llama 3.1's and CWM's rotary settings, as transformers 5 writes them.
    const LLAMA3_ROPE: &str = r#"{"vocab_size": 10, "hidden_size": 256, "intermediate_size": 16,
        "num_hidden_layers": 1, "num_attention_heads": 2, "rope_parameters": {
        "rope_type": "llama3", "rope_theta": 1000000.0, "factor": 16.0, "low_freq_factor": 1.0,
        "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}}"#;

    #[test]
    fn llama3_rope_is_read_in_either_format_and_written_back() {
        let c = LlamaConfig::from_json(LLAMA3_ROPE).unwrap();
        assert_eq!(c.rope_theta, 1e6);
        let rope = c.rope_scaling.expect("llama3 scaling");
        assert_eq!(
            (rope.factor, rope.original_max_position_embeddings),
            (16.0, 8192.0)
        );
        assert_eq!(LlamaConfig::from_json(&c.to_json()).unwrap(), c);
        // transformers 4.x: `rope_theta` and `rope_scaling` apart.
        let v4 = r#"{"vocab_size": 10, "hidden_size": 256, "intermediate_size": 16,
            "num_hidden_layers": 1, "num_attention_heads": 2, "rope_theta": 1000000.0,
            "rope_scaling": {"rope_type": "llama3", "factor": 16.0, "low_freq_factor": 1.0,
            "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}}"#;
        assert_eq!(LlamaConfig::from_json(v4).unwrap(), c);
    }

    /// (index, inverse frequency) from transformers 5.24's `_compute_llama3_parameters`
    /// for [`LLAMA3_ROPE`]: kept (1, 20, 26), blended (27, 30, 33), slowed (34, 63).
    const LLAMA3_REFERENCE: [(usize, f32); 8] = [
        (1, 0.805_842_2),
        (20, 0.013_335_215),
        (26, 0.003_651_741_4),
        (27, 0.002_792_574_2),
        (30, 0.000_581_202_9),
        (33, 6.312_134e-5),
        (34, 4.058_635_4e-5),
        (63, 7.755_861e-8),
    ];

    #[test]
    fn llama3_rope_keeps_short_wavelengths_slows_long_ones_and_blends_between() {
        let c = LlamaConfig::from_json(LLAMA3_ROPE).unwrap();
        let scaled = c.inv_freq();
        let plain = LlamaConfig {
            rope_scaling: None,
            ..c.clone()
        }
        .inv_freq();
        assert_eq!(scaled.len(), 64);
        assert_eq!(scaled[0], plain[0]); // wavelength 2 pi: kept
        assert_eq!(scaled[63], plain[63] / 16.0); // far beyond 8,192: slowed
        for (i, expected) in LLAMA3_REFERENCE {
            let relative = (scaled[i] - expected).abs() / expected;
            assert!(relative < 1e-6, "{i}: {} vs {expected}", scaled[i]);
        }
    }

    #[test]
    fn cwm_configs_get_transformers_defaults_and_windows_per_layer() {
        let cwm = r#"{"model_type": "cwm", "vocab_size": 10, "hidden_size": 256,
            "intermediate_size": 16, "num_hidden_layers": 5, "num_attention_heads": 2}"#;
        let c = LlamaConfig::from_json(cwm).unwrap();
        let windows: Vec<Option<usize>> = (0..5).map(|l| c.window(l)).collect();
        assert_eq!(windows, [None, Some(8192), Some(8192), Some(8192), None]);
        assert_eq!(c.rope_theta, 1e6);
        assert_eq!(c.rope_scaling.map(|r| r.factor), Some(16.0));
        assert_eq!(LlamaConfig::from_json(&c.to_json()).unwrap(), c);
        assert!(c.to_json().contains("CwmForCausalLM"));
        // A plain Llama has no windows.
        assert_eq!(LlamaConfig::small_5m(64).window(0), None);
        let mismatched = r#"{"vocab_size": 10, "hidden_size": 8, "intermediate_size": 16,
            "num_hidden_layers": 2, "num_attention_heads": 2,
            "layer_types": ["full_attention"], "sliding_window": 4}"#;
        let refused = LlamaConfig::from_json(mismatched).unwrap_err().to_string();
        assert!(refused.contains("layer_types names 1 layers"), "{refused}");
    }

    #[test]
    fn sizes_that_cannot_be_allocated_are_refused_before_allocating() {
        let with = |key: &str, value: u64| {
            let mut v: Value =
                serde_json::from_str(&LlamaConfig::small_5m(4096).to_json()).unwrap();
            v[key] = value.into();
            LlamaConfig::from_json(&v.to_string())
                .map(|_| ())
                .map_err(|e| e.to_string())
        };
        assert_eq!(with("max_position_embeddings", 1 << 20), Ok(()));
        let refused = with("max_position_embeddings", 1_000_000_000_000).unwrap_err();
        assert!(
            refused.contains("max_position_embeddings 1000000000000 is over 1048576"),
            "{refused}"
        );
        assert!(with("vocab_size", 1 << 40)
            .unwrap_err()
            .contains("vocab_size"));
        assert!(with("num_hidden_layers", 1 << 40)
            .unwrap_err()
            .contains("num_hidden_layers"));
        // Each size sane, the whole too big: 1,000 layers of 65,536 wide.
        let big = LlamaConfig::new(1 << 16, 1 << 16, 1 << 16, 1000, 1 << 9, 1 << 9);
        assert!(big
            .validate()
            .unwrap_err()
            .to_string()
            .contains("numbers, over"));
    }

    #[test]
    fn parameter_counts_are_the_advertised_sizes() {
        let small = LlamaConfig::small_5m(4096).num_parameters();
        let medium = LlamaConfig::medium_20m(4096).num_parameters();
        assert!((4_500_000..6_000_000).contains(&small), "{small}");
        assert!((18_000_000..23_000_000).contains(&medium), "{medium}");
    }
}
