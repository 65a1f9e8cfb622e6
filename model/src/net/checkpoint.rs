//! Hugging Face checkpoints: a directory with `config.json` and `model.safetensors`
//! (or the shards `model.safetensors.index.json` names), using Llama's tensor names. Linear weights are stored [out, in] as PyTorch keeps
//! them (burn keeps [in, out], so they are transposed here and nowhere else).

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::Path;

use burn::module::Param;
use burn::nn::Linear;
use burn::tensor::backend::Backend;
use burn::tensor::{Tensor, TensorData};
use safetensors::tensor::TensorView;
use safetensors::{Dtype, SafeTensors};

use super::config::LlamaConfig;
use super::decoder::Llama;
use super::Error;

pub const CONFIG_FILE: &str = "config.json";
pub const WEIGHTS_FILE: &str = "model.safetensors";
/// Where a checkpoint too large for one file lists the file of each tensor.
pub const WEIGHTS_INDEX: &str = "model.safetensors.index.json";

/// Whether `dir` holds a checkpoint's weights, in one file or in shards.
pub fn has_weights(dir: &Path) -> bool {
    dir.join(WEIGHTS_FILE).is_file() || dir.join(WEIGHTS_INDEX).is_file()
}

/// The precision of the weights written by [`save_checkpoint`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SaveDtype {
    F32,
    F16,
    BF16,
}

/// Loads `dir/config.json` and the weights, `dir/model.safetensors` or its shards
/// (F32, F16 or BF16).
pub fn load_checkpoint<B: Backend>(
    dir: &Path,
    device: &B::Device,
) -> Result<(LlamaConfig, Llama<B>), Error> {
    load_checkpoint_with(dir, device, &mut |_, _| {})
}

/// [`load_checkpoint`], telling `loaded` how many of the layers are read (done, of):
/// a large checkpoint takes minutes.
pub fn load_checkpoint_with<B: Backend>(
    dir: &Path,
    device: &B::Device,
    loaded: &mut dyn FnMut(usize, usize),
) -> Result<(LlamaConfig, Llama<B>), Error> {
    let config = LlamaConfig::load(&dir.join(CONFIG_FILE))?;
    let weights = Weights::open(dir, device)?;

    let mut model = Llama::init(&config, device)?;
    let (d, f, v) = (
        config.hidden_size,
        config.intermediate_size,
        config.vocab_size,
    );
    let q = config.num_attention_heads * config.head_dim();
    let kv = config.num_key_value_heads * config.head_dim();

    model.embed_tokens.weight =
        Param::from_tensor(weights.matrix("model.embed_tokens.weight", [v, d])?);
    for (i, layer) in model.layers.iter_mut().enumerate() {
        let name = |part: &str| format!("model.layers.{i}.{part}.weight");
        let attn = &mut layer.self_attn;
        weights.linear(&mut attn.q_proj, &name("self_attn.q_proj"), d, q)?;
        weights.linear(&mut attn.k_proj, &name("self_attn.k_proj"), d, kv)?;
        weights.linear(&mut attn.v_proj, &name("self_attn.v_proj"), d, kv)?;
        weights.linear(&mut attn.o_proj, &name("self_attn.o_proj"), q, d)?;
        weights.linear(&mut layer.mlp.gate_proj, &name("mlp.gate_proj"), d, f)?;
        weights.linear(&mut layer.mlp.up_proj, &name("mlp.up_proj"), d, f)?;
        weights.linear(&mut layer.mlp.down_proj, &name("mlp.down_proj"), f, d)?;
        layer.input_layernorm.weight =
            Param::from_tensor(weights.vector(&name("input_layernorm"), d)?);
        layer.post_attention_layernorm.weight =
            Param::from_tensor(weights.vector(&name("post_attention_layernorm"), d)?);
        loaded(i + 1, config.num_hidden_layers);
    }
    model.norm.weight = Param::from_tensor(weights.vector("model.norm.weight", d)?);
    if let Some(head) = &mut model.lm_head {
        weights.linear(head, "lm_head.weight", d, v)?;
    }
    Ok((config, model))
}

/// Writes `dir/config.json` and `dir/model.safetensors`, creating `dir` if needed.
pub fn save_checkpoint<B: Backend>(
    model: &Llama<B>,
    config: &LlamaConfig,
    dir: &Path,
    dtype: SaveDtype,
) -> Result<(), Error> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    config.save(&dir.join(CONFIG_FILE))?;

    let mut named: Vec<(String, TensorData)> = Vec::new();
    let linear = |l: &Linear<B>| l.weight.val().transpose().into_data(); // [out, in]
    named.push((
        "model.embed_tokens.weight".into(),
        model.embed_tokens.weight.val().into_data(),
    ));
    for (i, layer) in model.layers.iter().enumerate() {
        let name = |part: &str| format!("model.layers.{i}.{part}.weight");
        let attn = &layer.self_attn;
        named.push((name("self_attn.q_proj"), linear(&attn.q_proj)));
        named.push((name("self_attn.k_proj"), linear(&attn.k_proj)));
        named.push((name("self_attn.v_proj"), linear(&attn.v_proj)));
        named.push((name("self_attn.o_proj"), linear(&attn.o_proj)));
        named.push((name("mlp.gate_proj"), linear(&layer.mlp.gate_proj)));
        named.push((name("mlp.up_proj"), linear(&layer.mlp.up_proj)));
        named.push((name("mlp.down_proj"), linear(&layer.mlp.down_proj)));
        named.push((
            name("input_layernorm"),
            layer.input_layernorm.weight.val().into_data(),
        ));
        named.push((
            name("post_attention_layernorm"),
            layer.post_attention_layernorm.weight.val().into_data(),
        ));
    }
    named.push((
        "model.norm.weight".into(),
        model.norm.weight.val().into_data(),
    ));
    if let Some(head) = &model.lm_head {
        named.push(("lm_head.weight".into(), linear(head)));
    }

    let mut encoded = Vec::with_capacity(named.len());
    for (name, data) in named {
        let shape = data.shape.to_vec();
        let values: Vec<f32> = data
            .convert::<f32>()
            .into_vec()
            .map_err(|e| Error::Safetensors(format!("reading {name}: {e:?}")))?;
        encoded.push((name, shape, encode(&values, dtype)));
    }
    let views = encoded
        .iter()
        .map(|(name, shape, bytes)| {
            let view = TensorView::new(safetensors_dtype(dtype), shape.clone(), bytes)
                .map_err(|e| Error::Safetensors(e.to_string()))?;
            Ok((name.as_str(), view))
        })
        .collect::<Result<Vec<_>, Error>>()?;
    // PyTorch's loader wants to know the file holds plain PyTorch tensors.
    let metadata = HashMap::from([("format".to_string(), "pt".to_string())]);
    let path = dir.join(WEIGHTS_FILE);
    safetensors::serialize_to_file(views, Some(metadata), &path)
        .map_err(|e| Error::Safetensors(e.to_string()))
}

/// Reads named tensors out of a checkpoint's safetensors as f32 tensors on `device`.
/// Shards are read one at a time, as the model asks for their tensors (in layer
/// order, as `transformers` writes them), so at most one is in memory.
struct Weights<'a, B: Backend> {
    dir: &'a Path,
    /// The file of each tensor, from the shards' index; `None`: one file.
    shard_of: Option<HashMap<String, String>>,
    /// The file read last, and its bytes.
    loaded: RefCell<Option<(String, Vec<u8>)>>,
    device: &'a B::Device,
}

impl<'a, B: Backend> Weights<'a, B> {
    fn open(dir: &'a Path, device: &'a B::Device) -> Result<Self, Error> {
        let index = dir.join(WEIGHTS_INDEX);
        let shard_of = match (dir.join(WEIGHTS_FILE).is_file(), index.is_file()) {
            (false, true) => Some(read_index(&index)?),
            _ => None,
        };
        Ok(Weights {
            dir,
            shard_of,
            loaded: RefCell::new(None),
            device,
        })
    }

    /// The bytes of the file holding `name`, read if another was read last.
    fn file_of(&self, name: &str) -> Result<std::cell::Ref<'_, [u8]>, Error> {
        let file = match &self.shard_of {
            None => WEIGHTS_FILE,
            Some(map) => map
                .get(name)
                .ok_or_else(|| Error::MissingTensor(name.to_string()))?,
        };
        let stale = self.loaded.borrow().as_ref().is_none_or(|(f, _)| f != file);
        if stale {
            // Let go of the last file before reading the next.
            self.loaded.replace(None);
            let path = self.dir.join(file);
            let bytes = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
            self.loaded.replace(Some((file.to_string(), bytes)));
        }
        Ok(std::cell::Ref::map(self.loaded.borrow(), |loaded| {
            loaded
                .as_ref()
                .map_or(&[][..], |(_, bytes)| bytes.as_slice())
        }))
    }

    fn values(&self, name: &str, expected: &[usize]) -> Result<Vec<f32>, Error> {
        let bytes = self.file_of(name)?;
        let file =
            SafeTensors::deserialize(&bytes).map_err(|e| Error::Safetensors(e.to_string()))?;
        let view = file
            .tensor(name)
            .map_err(|_| Error::MissingTensor(name.to_string()))?;
        if view.shape() != expected {
            return Err(Error::Shape {
                name: name.to_string(),
                expected: expected.to_vec(),
                found: view.shape().to_vec(),
            });
        }
        decode(view.data(), view.dtype()).ok_or_else(|| Error::Dtype {
            name: name.to_string(),
            dtype: format!("{:?}", view.dtype()),
        })
    }

    fn matrix(&self, name: &str, shape: [usize; 2]) -> Result<Tensor<B, 2>, Error> {
        let values = self.values(name, &shape)?;
        Ok(Tensor::from_data(
            TensorData::new(values, shape),
            self.device,
        ))
    }

    fn vector(&self, name: &str, len: usize) -> Result<Tensor<B, 1>, Error> {
        let values = self.values(name, &[len])?;
        Ok(Tensor::from_data(
            TensorData::new(values, [len]),
            self.device,
        ))
    }

    /// Stored [d_out, d_in]; burn's `Linear` wants [d_in, d_out]. The transpose is
    /// done on the values, not as a view: the CPU backend would otherwise copy the
    /// transposed weight on every matmul (about 10x slower decoding).
    fn linear(
        &self,
        layer: &mut Linear<B>,
        name: &str,
        d_in: usize,
        d_out: usize,
    ) -> Result<(), Error> {
        let stored = self.values(name, &[d_out, d_in])?;
        let mut values = vec![0.0f32; stored.len()];
        for o in 0..d_out {
            for i in 0..d_in {
                values[i * d_out + o] = stored[o * d_in + i];
            }
        }
        let tensor = Tensor::from_data(TensorData::new(values, [d_in, d_out]), self.device);
        layer.weight = Param::from_tensor(tensor);
        Ok(())
    }
}

/// The shards' index: each tensor's file, a plain name in the checkpoint's directory.
fn read_index(path: &Path) -> Result<HashMap<String, String>, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let index: serde_json::Value = serde_json::from_str(&text)?;
    let map = index
        .get("weight_map")
        .and_then(serde_json::Value::as_object)
        .ok_or_else(|| Error::Safetensors(format!("{WEIGHTS_INDEX} has no weight_map")))?;
    map.iter()
        .map(|(name, file)| {
            let file = file.as_str().unwrap_or_default();
            let plain = !file.is_empty()
                && Path::new(file).file_name().is_some_and(|f| f == file)
                && file != "..";
            match plain {
                true => Ok((name.clone(), file.to_string())),
                false => Err(Error::Safetensors(format!(
                    "{WEIGHTS_INDEX} puts `{name}` in {file:?}, not a file of the checkpoint's directory"
                ))),
            }
        })
        .collect()
}

fn decode(bytes: &[u8], dtype: Dtype) -> Option<Vec<f32>> {
    let pairs = || bytes.chunks_exact(2).map(|b| [b[0], b[1]]);
    match dtype {
        Dtype::F32 => Some(
            bytes
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
        ),
        Dtype::F16 => Some(
            pairs()
                .map(|b| half::f16::from_le_bytes(b).to_f32())
                .collect(),
        ),
        Dtype::BF16 => Some(
            pairs()
                .map(|b| half::bf16::from_le_bytes(b).to_f32())
                .collect(),
        ),
        _ => None,
    }
}

fn encode(values: &[f32], dtype: SaveDtype) -> Vec<u8> {
    match dtype {
        SaveDtype::F32 => values.iter().flat_map(|v| v.to_le_bytes()).collect(),
        SaveDtype::F16 => values
            .iter()
            .flat_map(|&v| half::f16::from_f32(v).to_le_bytes())
            .collect(),
        SaveDtype::BF16 => values
            .iter()
            .flat_map(|&v| half::bf16::from_f32(v).to_le_bytes())
            .collect(),
    }
}

fn safetensors_dtype(dtype: SaveDtype) -> Dtype {
    match dtype {
        SaveDtype::F32 => Dtype::F32,
        SaveDtype::F16 => Dtype::F16,
        SaveDtype::BF16 => Dtype::BF16,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::Cpu;

    fn logits(model: &Llama<Cpu>) -> Vec<f32> {
        let ids = model.token_tensor(&[1, 5, 9, 2, 7]).unwrap();
        model.forward(ids).into_data().into_vec().unwrap()
    }

    fn round_trip(tied: bool, dtype: SaveDtype) -> (Vec<f32>, Vec<f32>) {
        let device = Default::default();
        let mut config = LlamaConfig::new(32, 16, 24, 2, 4, 2);
        config.tie_word_embeddings = tied;
        let model = Llama::<Cpu>::init(&config, &device).unwrap();
        let dir = std::env::temp_dir().join(format!(
            "nd-checkpoint-{}-{tied}-{dtype:?}",
            std::process::id()
        ));
        save_checkpoint(&model, &config, &dir, dtype).unwrap();
        let (loaded_config, loaded) = load_checkpoint::<Cpu>(&dir, &device).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(loaded_config, config);
        assert_eq!(loaded.lm_head.is_none(), tied);
        (logits(&model), logits(&loaded))
    }

    #[test]
    fn f32_round_trip_is_exact() {
        for tied in [false, true] {
            let (a, b) = round_trip(tied, SaveDtype::F32);
            assert_eq!(a, b);
        }
    }

    #[test]
    fn half_precision_round_trip_is_close() {
        for dtype in [SaveDtype::F16, SaveDtype::BF16] {
            let (a, b) = round_trip(false, dtype);
            let diff = a
                .iter()
                .zip(&b)
                .map(|(x, y)| (x - y).abs())
                .fold(0.0, f32::max);
            assert!(diff < 1e-2, "{dtype:?}: {diff}");
        }
    }

    #[test]
    fn a_missing_tensor_is_named() {
        let device = Default::default();
        let config = LlamaConfig::new(32, 16, 24, 1, 4, 2);
        let dir =
            std::env::temp_dir().join(format!("nd-checkpoint-missing-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        config.save(&dir.join(CONFIG_FILE)).unwrap();
        let empty: Vec<(&str, TensorView)> = Vec::new();
        safetensors::serialize_to_file(empty, None, &dir.join(WEIGHTS_FILE)).unwrap();
        let err = load_checkpoint::<Cpu>(&dir, &device).err().unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(
            err.to_string().contains("model.embed_tokens.weight"),
            "{err}"
        );
    }

    /// `dir`'s `model.safetensors` rewritten as two shards and their index, split
    /// between layers as `transformers` splits; `file_of` names each tensor's file.
    fn shard(dir: &Path, file_of: impl Fn(&str) -> String) {
        let bytes = std::fs::read(dir.join(WEIGHTS_FILE)).unwrap();
        let whole = SafeTensors::deserialize(&bytes).unwrap();
        let mut shards: HashMap<String, Vec<(String, TensorView)>> = HashMap::new();
        let mut map = serde_json::Map::new();
        for (name, view) in whole.tensors() {
            let file = file_of(&name);
            map.insert(name.clone(), file.clone().into());
            shards.entry(file).or_default().push((name, view));
        }
        for (file, views) in shards {
            safetensors::serialize_to_file(views, None, &dir.join(file)).unwrap();
        }
        let index = serde_json::json!({"metadata": {}, "weight_map": map});
        std::fs::write(dir.join(WEIGHTS_INDEX), index.to_string()).unwrap();
        std::fs::remove_file(dir.join(WEIGHTS_FILE)).unwrap();
    }

    /// A random two-layer model saved in a fresh directory.
    fn saved() -> (Llama<Cpu>, tempfile::TempDir) {
        let config = LlamaConfig::new(32, 16, 24, 2, 4, 2);
        let model = Llama::<Cpu>::init(&config, &Default::default()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        save_checkpoint(&model, &config, dir.path(), SaveDtype::F32).unwrap();
        (model, dir)
    }

    #[test]
    fn sharded_weights_load_as_one_file_does() {
        let (model, dir) = saved();
        shard(dir.path(), |name| {
            match name.starts_with("model.layers.1.") {
                true => "model-00002-of-00002.safetensors".into(),
                false => "model-00001-of-00002.safetensors".into(),
            }
        });
        assert!(has_weights(dir.path()));
        let (_, loaded) = load_checkpoint::<Cpu>(dir.path(), &Default::default()).unwrap();
        assert_eq!(logits(&model), logits(&loaded));
    }

    #[test]
    fn an_index_pointing_outside_the_checkpoint_is_refused() {
        let (_, dir) = saved();
        shard(dir.path(), |_| "../elsewhere.safetensors".into());
        let err = load_checkpoint::<Cpu>(dir.path(), &Default::default())
            .err()
            .unwrap();
        assert!(
            err.to_string().contains("not a file of the checkpoint"),
            "{err}"
        );
    }
}
