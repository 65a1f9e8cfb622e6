//! Our burn Llama against PyTorch's `LlamaForCausalLM` on the committed tiny checkpoints
//! (regenerate them with `scripts/make_parity_fixture.py`).
#![cfg(feature = "neural")]

use std::path::PathBuf;

use neural_model::net::{load_checkpoint, Cpu, KvCache, Llama};

const TOLERANCE: f32 = 1e-4;

struct Fixture {
    model: Llama<Cpu>,
    tokens: Vec<u32>,
    /// [seq][vocab]
    logits: Vec<Vec<f32>>,
}

fn fixture(name: &str) -> Fixture {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    let (_, model) = load_checkpoint::<Cpu>(&dir, &Default::default()).expect("fixture loads");
    let text = std::fs::read_to_string(dir.join("expected.json")).expect("expected.json");
    let expected: serde_json::Value = serde_json::from_str(&text).unwrap();
    let tokens = expected["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_u64().unwrap() as u32)
        .collect();
    let logits = expected["logits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            row.as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap() as f32)
                .collect()
        })
        .collect();
    Fixture {
        model,
        tokens,
        logits,
    }
}

fn max_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

fn assert_full_forward_matches(name: &str) {
    let f = fixture(name);
    let ids = f.model.token_tensor(&f.tokens).unwrap();
    let ours: Vec<f32> = f.model.forward(ids).into_data().into_vec().unwrap();
    let vocab = f.logits[0].len();
    let mut worst = 0.0f32;
    for (pos, row) in f.logits.iter().enumerate() {
        let diff = max_diff(&ours[pos * vocab..(pos + 1) * vocab], row);
        assert!(diff < TOLERANCE, "{name}: position {pos} differs by {diff}");
        worst = worst.max(diff);
    }
    println!("{name}: largest logit difference from PyTorch {worst:e}");
    // The logits are large enough that a wrong rotation or norm would show.
    let spread = f
        .logits
        .iter()
        .flatten()
        .fold(0.0f32, |m, x| m.max(x.abs()));
    assert!(
        spread > 1.0,
        "{name}: fixture logits too small to test anything ({spread})"
    );
}

/// The cached path (a prefill, then one token at a time) gives the same logits.
fn assert_cached_forward_matches(name: &str) {
    let f = fixture(name);
    let split = f.tokens.len() / 2;
    let mut cache = KvCache::new();
    let mut rows = vec![f.model.extend(&f.tokens[..split], &mut cache).unwrap()];
    for &t in &f.tokens[split..f.tokens.len() - 1] {
        rows.push(f.model.decode_step(t, &mut cache).unwrap());
    }
    assert_eq!(cache.len(), f.tokens.len() - 1);
    for (i, row) in rows.into_iter().enumerate() {
        let ours: Vec<f32> = row.into_data().into_vec().unwrap();
        let pos = split - 1 + i;
        let diff = max_diff(&ours, &f.logits[pos]);
        assert!(
            diff < TOLERANCE,
            "{name}: cached position {pos} differs by {diff}"
        );
    }
}

#[test]
fn grouped_query_attention_matches_pytorch() {
    assert_full_forward_matches("tiny-llama-gqa");
    assert_cached_forward_matches("tiny-llama-gqa");
}

/// Llama 3's rotary scaling (as Llama 3.1 and CWM use it): the logits differ from
/// PyTorch's by up to 5.8 where the scaling is left out.
#[test]
fn llama3_rope_scaling_matches_pytorch() {
    assert_full_forward_matches("tiny-llama3-rope");
    assert_cached_forward_matches("tiny-llama3-rope");
}

/// Meta's CWM architecture (`CwmForCausalLM`): Llama 3's rotary scaling, untied
/// embeddings, and two of three layers looking back 5 positions, fewer than the 12
/// tokens (ignoring the windows would move positions 5 and on by up to 4.2).
#[test]
fn cwm_with_sliding_windows_matches_pytorch() {
    assert_full_forward_matches("tiny-cwm");
    assert_cached_forward_matches("tiny-cwm");
}

/// `neural-model complete`: the tiny CWM's tokenizer (Llama 3's pre-tokenizer, CWM's
/// trace tokens) reads a CWM-format prompt as `tokenizers` does in Python, and the
/// greedy continuation agrees with PyTorch's token for token.
#[test]
fn cwm_greedy_continuation_matches_pytorch_token_for_token() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tiny-cwm");
    let text = std::fs::read_to_string(dir.join("continuation.json")).unwrap();
    let expected: serde_json::Value = serde_json::from_str(&text).unwrap();
    let ids = |key: &str| -> Vec<u32> {
        let ids = expected[key].as_array().unwrap();
        ids.iter().map(|t| t.as_u64().unwrap() as u32).collect()
    };
    let want = ids("continuation");
    let prompt = expected["prompt"].as_str().unwrap();
    let got = neural_model::net::complete(&dir, prompt, want.len()).unwrap();
    assert_eq!(got.prompt_tokens, ids("prompt_tokens"));
    assert_eq!(got.tokens, want);
    assert_eq!(got.text, expected["text"].as_str().unwrap());
}

#[test]
fn tied_bf16_checkpoint_matches_pytorch() {
    assert_full_forward_matches("tiny-llama-tied-bf16");
    assert_cached_forward_matches("tiny-llama-tied-bf16");
}
