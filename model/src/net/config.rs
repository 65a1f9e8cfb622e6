//! The model's shape, read from and written to a Hugging Face Llama `config.json`.
//!
//! Only the fields that decide the math are kept; other keys in a file we load are
//! ignored, and the file we write carries the few keys PyTorch needs to load it as a
//! `LlamaForCausalLM`.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::Error;

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

    pub fn head_dim(&self) -> usize {
        self.hidden_size / self.num_attention_heads
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
        // transformers 5 writes `rope_parameters` (theta and type) instead of `rope_theta`.
        let plain_rope = |v: &Value| {
            v.is_null()
                || v.get("rope_type")
                    .or_else(|| v.get("type"))
                    .is_some_and(|t| t == "default")
        };
        unsupported("rope_scaling", &plain_rope, obj)?;
        unsupported("rope_parameters", &plain_rope, obj)?;
        if let Some(theta) = obj
            .get("rope_parameters")
            .and_then(|p| p.get("rope_theta"))
            .cloned()
        {
            obj.entry("rope_theta").or_insert(theta);
        }
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
        obj.insert("architectures".into(), json!(["LlamaForCausalLM"]));
        obj.insert("model_type".into(), json!("llama"));
        obj.insert("hidden_act".into(), json!("silu"));
        obj.insert("attention_bias".into(), json!(false));
        obj.insert("mlp_bias".into(), json!(false));
        obj.insert("head_dim".into(), json!(self.head_dim()));
        obj.insert("torch_dtype".into(), json!("float32"));
        // transformers 5 reads the rotary settings from here; 4.x reads `rope_theta`.
        obj.insert(
            "rope_parameters".into(),
            json!({"rope_type": "default", "rope_theta": self.rope_theta}),
        );
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
        let odd = LlamaConfig::new(10, 8, 16, 1, 2, 3);
        assert!(odd.validate().is_err());
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
