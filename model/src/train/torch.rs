//! `trainer = "torch"`: hand a run to the PyTorch trainer (`model/trainer/train.py`).
//!
//! Rust keeps what must not drift between the two trainers: the tokenizer, the episode
//! encoding and loss mask, and the batch plan. [`prepare`] writes them into the run
//! folder as flat arrays (`encoded/`), with the model's `config.json` and a copy of the
//! trainer script; [`run`] then starts that script with the Python that has PyTorch, and
//! redraws `loss.png` while it trains. The same folder serves `torchrun` for clusters.

use super::batches::{epoch_plan, Example};
use super::{encode_run, plot, Encoded, TrainConfig, CHECKPOINT_DIR};
use crate::action::Action;
use crate::net::LlamaConfig;
use anyhow::{bail, Context, Result};
use serde_json::json;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

/// The trainer script, carried by the binary so that any build can prepare a run.
const TRAINER: &str = include_str!("../../trainer/train.py");
/// What the trainer imports; the requirements file pins their versions.
const IMPORTS: &str = "import torch, transformers, numpy, safetensors, tqdm";
pub const REQUIREMENTS: &str = "model/trainer/requirements.txt";

/// The Python the trainer runs on: `NEURAL_PYTHON` if set, else `python3`.
pub fn python() -> PathBuf {
    std::env::var_os("NEURAL_PYTHON").map_or_else(|| "python3".into(), PathBuf::from)
}

/// Fails with the install command when `python` lacks the trainer's packages.
pub fn check_python(python: &Path) -> Result<()> {
    let probe = Command::new(python).args(["-c", IMPORTS]).output();
    let why = match probe {
        Ok(out) if out.status.success() => return Ok(()),
        Ok(out) => String::from_utf8_lossy(&out.stderr)
            .lines()
            .last()
            .unwrap_or("")
            .to_string(),
        Err(e) => e.to_string(),
    };
    bail!(
        "the PyTorch trainer needs PyTorch and transformers, which `{py}` cannot import ({why}). \
         Install them with\n    {py} -m pip install -r {REQUIREMENTS}\n\
         or set NEURAL_PYTHON to a Python that has them, or set trainer = \"burn\" in the config",
        py = python.display()
    )
}

/// The model's shape for `vocab_size`, as both trainers build it.
pub fn llama_config(config: &TrainConfig, vocab_size: usize) -> LlamaConfig {
    let m = &config.model;
    LlamaConfig {
        max_position_embeddings: m.max_positions,
        trained_positions: Some(config.max_len.min(m.max_positions)),
        trace_locals: config.trace_locals,
        tie_word_embeddings: m.tie_embeddings,
        rope_theta: m.rope_theta,
        rms_norm_eps: m.rms_norm_eps,
        ..LlamaConfig::new(
            vocab_size,
            m.hidden_size,
            m.intermediate_size,
            m.layers,
            m.heads,
            m.kv_heads,
        )
    }
}

/// The batches of steps `0..steps`: the burn trainer's epochs, one after another.
pub fn step_plan(examples: &[Example], config: &TrainConfig) -> Vec<Vec<usize>> {
    let mut plan = Vec::with_capacity(config.steps as usize);
    for epoch in 0.. {
        if plan.len() as u64 >= config.steps {
            break;
        }
        let batches = epoch_plan(examples, config.batch_tokens, config.seed, epoch);
        if batches.is_empty() {
            break;
        }
        plan.extend(batches);
    }
    plan.truncate(config.steps as usize);
    plan
}

/// Write one split's token ids (u32 LE) and loss mask (one byte a token); return its index.
fn write_split(folder: &Path, name: &str, examples: &[Example]) -> Result<serde_json::Value> {
    let mut ids =
        std::io::BufWriter::new(std::fs::File::create(folder.join(format!("{name}.ids")))?);
    let mut mask =
        std::io::BufWriter::new(std::fs::File::create(folder.join(format!("{name}.mask")))?);
    for example in examples {
        for id in &example.ids {
            ids.write_all(&id.to_le_bytes())?;
        }
        mask.write_all(&example.mask.iter().map(|&m| m as u8).collect::<Vec<u8>>())?;
    }
    ids.flush()?;
    mask.flush()?;
    let action_index = |name: &str| Action::NAMES.iter().position(|a| *a == name);
    let targets: Vec<Vec<[usize; 3]>> = examples
        .iter()
        .map(|e| {
            e.targets
                .iter()
                .filter_map(|(a, r)| Some([action_index(a)?, r.start, r.end]))
                .collect()
        })
        .collect();
    Ok(json!({
        "lengths": examples.iter().map(|e| e.ids.len()).collect::<Vec<_>>(),
        "targets": targets,
    }))
}

/// Lay out the run folder for the PyTorch trainer: `config.toml`, `tokenizer.json`,
/// `train.py` and `encoded/` (the splits, the plan, the model's `config.json`).
pub fn prepare(config: &TrainConfig) -> Result<()> {
    let Encoded {
        tokenizer,
        examples,
        valid,
    } = encode_run(config)?;
    let folder = config.out.join("encoded");
    std::fs::create_dir_all(&folder)?;
    let index = json!({
        "train": write_split(&folder, "train", &examples)?,
        "valid": write_split(&folder, "valid", &valid)?,
        "plan": step_plan(&examples, config),
        "actions": Action::NAMES,
    });
    std::fs::write(folder.join("index.json"), serde_json::to_string(&index)?)?;
    llama_config(config, tokenizer.vocab_size())
        .save(&folder.join("config.json"))
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    std::fs::write(config.out.join("train.py"), TRAINER)?;
    eprintln!(
        "{} training episodes ({} tokens), {} validation episodes encoded in {}",
        examples.len(),
        examples.iter().map(|e| e.ids.len()).sum::<usize>(),
        valid.len(),
        folder.display()
    );
    Ok(())
}

/// The command that trains a prepared run folder in one process.
pub fn command(python: &Path, out: &Path) -> Command {
    let mut command = Command::new(python);
    command.arg(out.join("train.py")).arg(out);
    command
}

/// Prepare the run, then train it with PyTorch, redrawing `loss.png` as it goes.
pub fn run(config: &TrainConfig) -> Result<()> {
    let python = python();
    check_python(&python)?;
    prepare(config)?;
    if config.out.join(CHECKPOINT_DIR).join("state.json").exists() {
        eprintln!(
            "resuming from {}",
            config.out.join(CHECKPOINT_DIR).display()
        );
    }
    let mut child = command(&python, &config.out)
        .spawn()
        .with_context(|| format!("cannot start {}", python.display()))?;
    let valid_csv = config.out.join("valid.csv");
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let mut drawn: Option<SystemTime> = None;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        std::thread::sleep(Duration::from_secs(2));
        let now = modified(&valid_csv);
        if now.is_some() && now != drawn {
            drawn = now;
            let _ = plot::loss_curve(&config.out);
        }
    };
    let _ = plot::loss_curve(&config.out);
    if !status.success() {
        bail!("the PyTorch trainer stopped with {status}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example(len: usize) -> Example {
        Example {
            ids: vec![1; len],
            mask: vec![true; len],
            targets: vec![("step_over", 1..len)],
        }
    }

    #[test]
    fn the_plan_follows_the_burn_trainers_epochs_for_every_step() {
        let mut config: TrainConfig =
            toml::from_str(include_str!("../../configs/test-fixture.toml")).unwrap();
        let examples: Vec<Example> = (0..10).map(|i| example(50 + i * 40)).collect();
        config.batch_tokens = 600;
        let one_epoch = epoch_plan(&examples, config.batch_tokens, config.seed, 0);
        config.steps = one_epoch.len() as u64 * 2 + 1;
        let plan = step_plan(&examples, &config);
        assert_eq!(plan.len() as u64, config.steps);
        assert_eq!(plan[..one_epoch.len()], one_epoch[..]);
        let second = epoch_plan(&examples, config.batch_tokens, config.seed, 1);
        assert_eq!(plan[one_epoch.len()..2 * one_epoch.len()], second[..]);
    }

    #[test]
    fn a_split_is_written_as_flat_ids_and_masks_with_its_targets() {
        let dir = tempfile::tempdir().unwrap();
        let mut second = example(3);
        second.ids = vec![7, 8, 9];
        second.mask = vec![false, true, true];
        let index = write_split(dir.path(), "valid", &[example(2), second]).unwrap();
        let ids = std::fs::read(dir.path().join("valid.ids")).unwrap();
        assert_eq!(ids.len(), 5 * 4);
        assert_eq!(&ids[8..12], &7u32.to_le_bytes());
        let mask = std::fs::read(dir.path().join("valid.mask")).unwrap();
        assert_eq!(mask, vec![1, 1, 0, 1, 1]);
        assert_eq!(index["lengths"], json!([2, 3]));
        let over = Action::NAMES
            .iter()
            .position(|a| *a == "step_over")
            .unwrap();
        assert_eq!(index["targets"][1], json!([[over, 1, 3]]));
    }

    #[test]
    fn a_python_without_torch_gets_the_install_command() {
        let error = check_python(Path::new("/nonexistent/python3")).unwrap_err();
        let text = format!("{error:#}");
        assert!(
            text.contains("pip install -r model/trainer/requirements.txt"),
            "{text}"
        );
        assert!(text.contains("NEURAL_PYTHON"), "{text}");
    }
}
