//! `neural-model train --config FILE`: train the transformer on a dataset of episodes.
//!
//! The loop: AdamW with linear warm-up and cosine decay, gradient clipping, batches of
//! similar-length episodes, a validation pass every `eval_every` steps (loss, and exact
//! match per action, which under teacher forcing is exactly greedy decoding's exact
//! match: greedy reproduces a target iff every target token is the argmax given the
//! true prefix; the source line of a state is neither trained nor scored, since the
//! decoding grammar writes it), a checkpoint every `checkpoint_every` steps, resumed from on restart,
//! and the curves as `train.csv`, `valid.csv` and `loss.png`.

pub mod batches;
mod plot;
pub mod torch;

use crate::data::{Episode, Manifest};
use crate::language::{Locals, SPECIAL_TOKENS};
use crate::net::train_step::masked_loss;
use crate::net::{
    load_checkpoint, save_checkpoint, Llama, LlamaConfig, SaveDtype, Trainer, TrainerConfig,
};
use crate::tokenizer::{train_tokenizer, Tokenizer};
use anyhow::{bail, Context, Result};
use batches::{encode, epoch_plan, pack, Example};
use burn::tensor::backend::{AutodiffBackend, Backend};
use burn::tensor::{ElementConversion, Int, Tensor, TensorData};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// A training run, as written in its config file (TOML).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrainConfig {
    /// Folder of a dataset built by `neural-model dataset`.
    pub dataset: PathBuf,
    /// More datasets whose train splits join `dataset`'s (say, one built with another
    /// `--seed`). Validation stays on `dataset`'s split, so runs stay comparable. The
    /// splits are by program text, so a program held out in one is held out in all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub more_train: Vec<PathBuf>,
    /// Folder for checkpoints, logs and the loss curve.
    pub out: PathBuf,
    pub seed: u64,
    pub steps: u64,
    /// Tokens in one batch, padding included.
    pub batch_tokens: usize,
    /// Longest episode in tokens (longer ones are cut after the last whole outcome).
    pub max_len: usize,
    pub lr: f64,
    pub min_lr: f64,
    pub warmup_steps: u64,
    pub weight_decay: f32,
    pub max_grad_norm: f32,
    pub eval_every: u64,
    /// Validation episodes scored at each evaluation.
    pub eval_episodes: usize,
    pub checkpoint_every: u64,
    pub log_every: u64,
    /// Train only on episodes of these origins (`generated`, `exercism`, ...); empty
    /// for all. Long corpus files mostly overflow `max_len`, so a CPU run spends its
    /// few tokens better on the short programs.
    #[serde(default)]
    pub origins: Vec<String>,
    /// Which trainer runs the config: PyTorch (fast: bf16 on AMX or CUDA) or burn.
    #[serde(default)]
    pub trainer: TrainerKind,
    /// How states after a single step write their locals: `diff` (what changed, the
    /// paper's form) or `full`. The checkpoint's config.json carries it
    /// (`trace_locals`), so the debugger writes and reads states the same way.
    #[serde(default, skip_serializing_if = "Locals::is_diff")]
    pub trace_locals: Locals,
    /// Settings only the PyTorch trainer reads.
    #[serde(default)]
    pub torch: TorchOptions,
    pub tokenizer: TokenizerConfig,
    pub model: ModelConfig,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TrainerKind {
    /// `model/trainer/train.py`: Hugging Face Llama on PyTorch.
    Torch,
    /// The burn trainer in this crate: no Python needed.
    #[default]
    Burn,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TorchOptions {
    /// `bf16` (autocast over fp32 master weights), `fp32`, or `auto`: bf16 where the
    /// hardware runs it natively (AMX or AVX512-BF16, CUDA), else fp32.
    pub precision: String,
    /// `torch.compile` the forward and loss.
    pub compile: bool,
    /// Under torchrun: `ddp`, or `fsdp` for a model that does not fit one device.
    pub parallel: String,
    /// A fresh run starts from this checkpoint (and its tokenizer) instead of a random
    /// init. A deeper `[model]` than the checkpoint's is grown from it: its layers
    /// spread evenly, the new ones in between with zero output projections, so the
    /// grown model starts out computing exactly what the checkpoint does.
    pub init_from: Option<PathBuf>,
}

impl Default for TorchOptions {
    fn default() -> Self {
        Self {
            precision: "auto".into(),
            compile: false,
            parallel: "ddp".into(),
            init_from: None,
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenizerConfig {
    pub vocab_size: usize,
    /// Training episodes whose text the tokenizer learns from.
    pub sample_episodes: usize,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelConfig {
    pub hidden_size: usize,
    pub intermediate_size: usize,
    pub layers: usize,
    pub heads: usize,
    pub kv_heads: usize,
    pub max_positions: usize,
    pub tie_embeddings: bool,
    /// The rotary base and the RMSNorm epsilon: set only to start from a pretrained
    /// model that has its own (SmolLM2: 100,000 and 1e-5).
    #[serde(default = "default_rope_theta")]
    pub rope_theta: f64,
    #[serde(default = "default_rms_norm_eps")]
    pub rms_norm_eps: f64,
}

fn default_rope_theta() -> f64 {
    LlamaConfig::new(0, 0, 0, 0, 0, 0).rope_theta
}

fn default_rms_norm_eps() -> f64 {
    LlamaConfig::new(0, 0, 0, 0, 0, 0).rms_norm_eps
}

impl TrainConfig {
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        toml::from_str(&text)
            .with_context(|| format!("{} is not a valid training config", path.display()))
    }

    /// Learning rate at `step`: linear warm-up, then cosine decay to `min_lr`.
    pub fn lr_at(&self, step: u64) -> f64 {
        if step < self.warmup_steps {
            return self.lr * (step + 1) as f64 / self.warmup_steps as f64;
        }
        let span = self.steps.saturating_sub(self.warmup_steps).max(1) as f64;
        let progress = ((step - self.warmup_steps) as f64 / span).min(1.0);
        self.min_lr
            + 0.5 * (self.lr - self.min_lr) * (1.0 + (std::f64::consts::PI * progress).cos())
    }
}

/// Where the run stands, saved beside each checkpoint.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct RunState {
    step: u64,
    tokens_seen: u64,
    seconds: f64,
}

pub const CHECKPOINT_DIR: &str = "checkpoint";

/// Episodes of one split, read from the dataset's shards.
pub fn load_split(dataset: &Path, split: &str) -> Result<Vec<Episode>> {
    let manifest = Manifest::load(dataset)?;
    let mut episodes = Vec::new();
    for file in manifest.shard_files(dataset, split) {
        episodes.extend(crate::data::read_shard(&file)?);
    }
    if episodes.is_empty() {
        bail!(
            "the dataset at {} has no {split} episodes",
            dataset.display()
        );
    }
    Ok(episodes)
}

/// The tokenizer of a run: the one in `out` if there is one, else the one of the
/// checkpoint it starts from, else trained now.
fn tokenizer_for(config: &TrainConfig, train: &[Episode]) -> Result<Tokenizer> {
    let path = config.out.join("tokenizer.json");
    if let (false, Some(start)) = (path.exists(), &config.torch.init_from) {
        let theirs = start.join("tokenizer.json");
        std::fs::create_dir_all(&config.out)?;
        std::fs::copy(&theirs, &path).with_context(|| {
            format!(
                "[torch] init_from: cannot read {} (a checkpoint folder holds it)",
                theirs.display()
            )
        })?;
    }
    if path.exists() {
        return Tokenizer::load(&path).map_err(|e| anyhow::anyhow!("{e}"));
    }
    eprintln!(
        "training a {}-token tokenizer on {} episodes",
        config.tokenizer.vocab_size, config.tokenizer.sample_episodes
    );
    let texts: Vec<String> = train
        .iter()
        .take(config.tokenizer.sample_episodes)
        .map(|e| e.render().0)
        .collect();
    let tokenizer = train_tokenizer(
        texts.into_iter(),
        config.tokenizer.vocab_size,
        &SPECIAL_TOKENS,
    )
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    std::fs::create_dir_all(&config.out)?;
    tokenizer.save(&path).map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(tokenizer)
}

fn encode_all(
    episodes: &[Episode],
    tokenizer: &Tokenizer,
    max_len: usize,
    locals: Locals,
) -> Vec<Example> {
    use rayon::prelude::*;
    episodes
        .par_iter()
        .filter_map(|e| encode(e, tokenizer, max_len, locals))
        .collect()
}

/// Exact match and loss of a model on examples, per action (teacher forced).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Scores {
    pub loss: f64,
    pub targets: usize,
    /// Action name -> (exactly right, total).
    pub per_action: BTreeMap<String, (usize, usize)>,
}

impl Scores {
    pub fn exact_match(&self, action: &str) -> Option<f64> {
        self.per_action
            .get(action)
            .filter(|(_, n)| *n > 0)
            .map(|(k, n)| *k as f64 / *n as f64)
    }
}

/// Teacher-forced loss and per-action exact match over `examples`.
pub fn score<B: Backend>(
    model: &Llama<B>,
    examples: &[Example],
    batch_tokens: usize,
) -> Result<Scores> {
    let mut scores = Scores::default();
    let mut loss_sum = 0.0;
    for rows in epoch_plan(examples, batch_tokens, 0, 0) {
        let packed = pack(examples, &rows);
        let (loss, targets) = masked_loss(model, &packed.batch)?;
        let loss: f64 = loss.into_scalar().elem::<f32>() as f64;
        loss_sum += loss * targets as f64;
        scores.targets += targets;
        let (b, s) = (packed.batch.batch, packed.batch.seq);
        let ids: Vec<i64> = packed.batch.tokens.iter().map(|&t| t as i64).collect();
        let tokens = Tensor::<B, 2, Int>::from_data(TensorData::new(ids, [b, s]), &model.device());
        let predicted: Vec<i64> = model
            .forward(tokens)
            .argmax(2)
            .into_data()
            .convert::<i64>()
            .to_vec()
            .unwrap();
        for (row, &example) in rows.iter().enumerate() {
            let example = &examples[example];
            for (action, range) in &example.targets {
                // Position t - 1 predicts token t; tokens the grammar writes (the
                // source line) are not the model's to get right.
                let right = range
                    .clone()
                    .filter(|&t| example.mask[t])
                    .all(|t| predicted[row * s + t - 1] == example.ids[t] as i64);
                let entry = scores.per_action.entry(action.to_string()).or_default();
                entry.0 += right as usize;
                entry.1 += 1;
            }
        }
    }
    scores.loss = loss_sum / scores.targets.max(1) as f64;
    Ok(scores)
}

fn append_line(path: &Path, header: &str, line: &str) -> Result<()> {
    let new = !path.exists();
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    if new {
        writeln!(file, "{header}")?;
    }
    writeln!(file, "{line}")?;
    Ok(())
}

/// Save model, config, tokenizer and run state atomically (a reader never sees half).
fn save<B: Backend>(
    model: &Llama<B>,
    llama: &LlamaConfig,
    tokenizer: &Tokenizer,
    state: &RunState,
    out: &Path,
) -> Result<()> {
    let tmp = out.join("checkpoint.tmp");
    let _ = std::fs::remove_dir_all(&tmp);
    save_checkpoint(model, llama, &tmp, SaveDtype::F32)?;
    tokenizer
        .save(&tmp.join("tokenizer.json"))
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    std::fs::write(tmp.join("state.json"), serde_json::to_string_pretty(state)?)?;
    let dir = out.join(CHECKPOINT_DIR);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::rename(&tmp, &dir)?;
    Ok(())
}

/// A run's data as both trainers see it.
pub(crate) struct Encoded {
    pub tokenizer: Tokenizer,
    pub examples: Vec<Example>,
    /// At most `eval_episodes` validation examples (training ones if there are none).
    pub valid: Vec<Example>,
}

/// Write the resolved config into `out`, then tokenise the episodes of the config's
/// origins (training the run's tokenizer first if `out` has none).
pub(crate) fn encode_run(config: &TrainConfig) -> Result<Encoded> {
    std::fs::create_dir_all(&config.out)
        .with_context(|| format!("cannot create {}", config.out.display()))?;
    std::fs::write(
        config.out.join("config.toml"),
        toml::to_string_pretty(config)?,
    )?;
    let wanted = |e: &Episode| config.origins.is_empty() || config.origins.contains(&e.origin);
    let mut train_episodes = load_split(&config.dataset, "train")?;
    for more in &config.more_train {
        train_episodes.extend(load_split(more, "train")?);
    }
    train_episodes.retain(wanted);
    if train_episodes.is_empty() {
        bail!(
            "no training episodes of origins {:?} in {}",
            config.origins,
            config.dataset.display()
        );
    }
    // A dataset of a few scripts (the test fixture model) may have no validation split.
    let mut valid_episodes = load_split(&config.dataset, "valid").unwrap_or_default();
    valid_episodes.retain(wanted);
    let tokenizer = tokenizer_for(config, &train_episodes)?;
    let progress = crate::progress::spinner("encoding episodes");
    let locals = config.trace_locals;
    let examples = encode_all(&train_episodes, &tokenizer, config.max_len, locals);
    let mut valid = encode_all(&valid_episodes, &tokenizer, config.max_len, locals);
    progress.finish_and_clear();
    if valid.is_empty() {
        eprintln!("the dataset has no validation split: scoring on training episodes");
        valid = examples.clone();
    }
    valid.truncate(config.eval_episodes);
    Ok(Encoded {
        tokenizer,
        examples,
        valid,
    })
}

/// Train as `config` says on `device`, resuming from `out/checkpoint` if it exists.
pub fn train<B: AutodiffBackend>(config: &TrainConfig, device: &B::Device) -> Result<()> {
    let Encoded {
        tokenizer,
        examples,
        valid,
    } = encode_run(config)?;
    let train_tokens: usize = examples.iter().map(|e| e.ids.len()).sum();
    eprintln!(
        "{} training episodes ({} tokens, {} predicted outcomes), {} validation episodes",
        examples.len(),
        train_tokens,
        examples.iter().map(|e| e.targets.len()).sum::<usize>(),
        valid.len()
    );

    let m = &config.model;
    let llama = torch::llama_config(config, tokenizer.vocab_size());
    let checkpoint = config.out.join(CHECKPOINT_DIR);
    let (mut model, mut state) = if checkpoint.join("state.json").exists() {
        let (_, model) = load_checkpoint::<B>(&checkpoint, device)?;
        let state: RunState =
            serde_json::from_str(&std::fs::read_to_string(checkpoint.join("state.json"))?)?;
        eprintln!(
            "resuming at step {} (optimizer moments restart; the learning rate keeps its schedule)",
            state.step
        );
        (model, state)
    } else {
        (Llama::<B>::init(&llama, device)?, RunState::default())
    };
    eprintln!("model: {} parameters, {:?}", llama.num_parameters(), m);

    let mut trainer = Trainer::<B>::new(TrainerConfig {
        weight_decay: config.weight_decay,
        max_grad_norm: Some(config.max_grad_norm),
        ..TrainerConfig::default()
    });
    let progress = crate::progress::bar(config.steps, "training");
    progress.set_position(state.step);
    // The batch order is a pure function of (seed, step), so a resumed run sees the
    // batches it would have seen: walk the epochs already done once, then keep going.
    let mut epoch = 0u64;
    let mut epoch_start = 0u64;
    let mut plan = epoch_plan(&examples, config.batch_tokens, config.seed, epoch);
    let (mut window_tokens, mut window_start) = (0usize, Instant::now());
    let session_start = Instant::now() - std::time::Duration::from_secs_f64(state.seconds);
    while state.step < config.steps {
        while state.step - epoch_start >= plan.len() as u64 {
            epoch_start += plan.len() as u64;
            epoch += 1;
            plan = epoch_plan(&examples, config.batch_tokens, config.seed, epoch);
        }
        let index = (state.step - epoch_start) as usize;
        let packed = pack(&examples, &plan[index]);
        let lr = config.lr_at(state.step);
        let (next, stats) = trainer.step(model, &packed.batch, lr)?;
        model = next;
        state.step += 1;
        state.tokens_seen += (packed.batch.batch * packed.batch.seq) as u64;
        window_tokens += packed.batch.batch * packed.batch.seq;
        progress.set_position(state.step);
        progress.set_message(format!("loss {:.3}", stats.loss));
        if state.step % config.log_every == 0 {
            let rate = window_tokens as f64 / window_start.elapsed().as_secs_f64();
            append_line(
                &config.out.join("train.csv"),
                "step,lr,loss,grad_norm,tokens_per_second,tokens_seen",
                &format!(
                    "{},{lr:.6},{:.5},{:.4},{rate:.0},{}",
                    state.step, stats.loss, stats.grad_norm, state.tokens_seen
                ),
            )?;
            (window_tokens, window_start) = (0, Instant::now());
        }
        let last = state.step == config.steps;
        if state.step % config.eval_every == 0 || last {
            let scores = score(
                &crate::net::train_step::inference_model(&model),
                &valid,
                config.batch_tokens,
            )?;
            let ems: Vec<String> = crate::action::Action::NAMES
                .iter()
                .map(|a| {
                    scores
                        .exact_match(a)
                        .map_or(String::new(), |v| format!("{v:.4}"))
                })
                .collect();
            append_line(
                &config.out.join("valid.csv"),
                &format!(
                    "step,loss,{}",
                    crate::action::Action::NAMES
                        .map(|a| format!("em_{a}"))
                        .join(",")
                ),
                &format!("{},{:.5},{}", state.step, scores.loss, ems.join(",")),
            )?;
            progress.println(format!(
                "step {}: valid loss {:.4}, exact match step_into {}, step_over {}",
                state.step,
                scores.loss,
                scores
                    .exact_match("step_into")
                    .map_or("-".into(), |v| format!("{:.1}%", v * 100.0)),
                scores
                    .exact_match("step_over")
                    .map_or("-".into(), |v| format!("{:.1}%", v * 100.0)),
            ));
            if let Err(e) = plot::loss_curve(&config.out) {
                progress.println(format!("no loss.png: {e}"));
            }
        }
        if state.step % config.checkpoint_every == 0 || last {
            state.seconds = session_start.elapsed().as_secs_f64();
            save(
                &crate::net::train_step::inference_model(&model),
                &llama,
                &tokenizer,
                &state,
                &config.out,
            )?;
        }
    }
    progress.finish_with_message("done");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> TrainConfig {
        toml::from_str(include_str!("../../configs/default.toml"))
            .expect("the shipped config parses")
    }

    #[test]
    fn every_committed_config_parses_and_keeps_the_shipped_shape() {
        let shipped = config();
        let [gpu, fixture, deep8, deep8_more, deep8_s2, deep8_s3, deep8_s5, deep12, deep12_s12, wide8, wide8_long, smollm2, smollm2_more, smol6, smol6_long, deep8_long, deep8_s6, deep8_full]: [TrainConfig;
            18] = [
            include_str!("../../configs/gpu.toml"),
            include_str!("../../configs/test-fixture.toml"),
            include_str!("../../configs/deep8.toml"),
            include_str!("../../configs/deep8-more.toml"),
            include_str!("../../configs/deep8-s2.toml"),
            include_str!("../../configs/deep8-s3.toml"),
            include_str!("../../configs/deep8-s5.toml"),
            include_str!("../../configs/deep12.toml"),
            include_str!("../../configs/deep12-s12.toml"),
            include_str!("../../configs/wide8.toml"),
            include_str!("../../configs/wide8-long.toml"),
            include_str!("../../configs/smollm2.toml"),
            include_str!("../../configs/smollm2-more.toml"),
            include_str!("../../configs/smol6.toml"),
            include_str!("../../configs/smol6-long.toml"),
            include_str!("../../configs/deep8-long.toml"),
            include_str!("../../configs/deep8-s6.toml"),
            include_str!("../../configs/deep8-full.toml"),
        ]
        .map(|text| toml::from_str(text).expect("a committed config parses"));
        for other in [
            &gpu,
            &fixture,
            &deep8,
            &deep8_more,
            &deep8_s2,
            &deep8_s3,
            &deep8_s5,
            &deep12,
            &deep12_s12,
            &wide8,
            &wide8_long,
            &smollm2,
            &smollm2_more,
            &smol6,
            &smol6_long,
            &deep8_long,
            &deep8_s6,
            &deep8_full,
        ] {
            assert!(other.steps > other.warmup_steps);
            assert!(other.min_lr <= other.lr);
        }
        // The GPU leg's checkpoint must be a drop-in replacement for the shipped one.
        assert_eq!(format!("{:?}", gpu.model), format!("{:?}", shipped.model));
        assert_eq!(gpu.tokenizer.vocab_size, shipped.tokenizer.vocab_size);
        // The 8-layer legs continue one another on the same shape.
        assert_eq!(
            format!("{:?}", deep8_more.model),
            format!("{:?}", deep8.model)
        );
        for leg in [&deep8_s2, &deep8_s3, &deep8_s5] {
            assert_eq!(format!("{:?}", leg.model), format!("{:?}", deep8.model));
        }
        assert_eq!(deep8_s2.more_train.len(), 2);
        // The 12-layer candidate differs from the 8-layer legs in depth alone.
        assert_eq!(deep12.model.layers, 12);
        let as_deep8 = ModelConfig {
            layers: deep8.model.layers,
            ..deep12.model.clone()
        };
        assert_eq!(format!("{as_deep8:?}"), format!("{:?}", deep8.model));
        // The width candidate differs from deep8-s5 in its feed-forward width alone, and
        // trains on the same batches.
        let as_s5 = ModelConfig {
            intermediate_size: deep8_s5.model.intermediate_size,
            ..wide8.model.clone()
        };
        assert_eq!(format!("{as_s5:?}"), format!("{:?}", deep8_s5.model));
        assert_eq!(
            wide8.model.intermediate_size,
            2 * deep8_s5.model.intermediate_size
        );
        assert_eq!(
            (wide8.seed, wide8.steps, &wide8.more_train),
            (deep8_s5.seed, deep8_s5.steps, &deep8_s5.more_train)
        );
        // Its second leg continues it on the same shape.
        assert_eq!(
            format!("{:?}", deep12_s12.model),
            format!("{:?}", deep12.model)
        );
        assert_eq!(
            format!("{:?}", wide8_long.model),
            format!("{:?}", wide8.model)
        );
        // Our shapes keep the default rotary base and norm epsilon; the SmolLM2 warm
        // start says its own, which its checkpoint must match.
        let llama = torch::llama_config(&shipped, 2048);
        assert_eq!((llama.rope_theta, llama.rms_norm_eps), (10_000.0, 1e-6));
        let smol = torch::llama_config(&smollm2, 49_176);
        assert_eq!((smol.rope_theta, smol.rms_norm_eps), (100_000.0, 1e-5));
        assert_eq!(
            format!("{:?}", smollm2_more.model),
            format!("{:?}", smollm2.model)
        );
        // The cut SmolLM2 differs from it in depth alone.
        let as_smollm2 = ModelConfig {
            layers: smollm2.model.layers,
            ..smol6.model.clone()
        };
        assert_eq!(format!("{as_smollm2:?}"), format!("{:?}", smollm2.model));
        // Its long leg differs in the positions alone, and trains as long as it holds.
        let as_smol6 = ModelConfig {
            max_positions: smol6.model.max_positions,
            ..smol6_long.model.clone()
        };
        assert_eq!(format!("{as_smol6:?}"), format!("{:?}", smol6.model));
        let long = torch::llama_config(&smol6_long, 4268);
        assert_eq!(long.trained_positions, Some(3584));
        assert!(smol6_long.batch_tokens >= smol6_long.max_len);
        // The shipped shape's long leg differs from it in the positions alone.
        let as_shipped = ModelConfig {
            max_positions: shipped.model.max_positions,
            ..deep8_long.model.clone()
        };
        assert_eq!(format!("{as_shipped:?}"), format!("{:?}", deep8_s2.model));
        assert_eq!(
            (deep8_long.max_len, &deep8_long.more_train),
            (smol6_long.max_len, &smol6_long.more_train)
        );
        // The full-locals leg: the shipped shape, writing its states whole.
        assert_eq!(
            format!("{:?}", deep8_full.model),
            format!("{:?}", deep8_long.model)
        );
        assert_eq!(deep8_full.trace_locals, Locals::Full);
        assert_eq!(
            torch::llama_config(&deep8_full, 2048).trace_locals,
            Locals::Full
        );
        assert_eq!(deep8_s6.trace_locals, Locals::Diff);
    }

    #[test]
    fn the_learning_rate_warms_up_then_decays_to_the_floor() {
        let c = config();
        assert!(c.lr_at(0) < c.lr_at(c.warmup_steps - 1));
        assert!((c.lr_at(c.warmup_steps) - c.lr).abs() < 1e-12);
        assert!((c.lr_at(c.steps) - c.min_lr).abs() < 1e-12);
        assert!(c.lr_at(c.steps / 2) < c.lr && c.lr_at(c.steps / 2) > c.min_lr);
    }
}
