#!/usr/bin/env bash
# The CUDA checks of the large-checkpoint work, in one run on a lent GPU machine (the
# device tool's `run`: it runs in the repository root there and sends back $OUT).
# Prepare here first (about 10 minutes on 2 cores):
#   cargo build --release -p neural-model --features cuda --target-dir target-cuda
# then run `bash model/scripts/gpu_check.sh [SIZE]` there with
# carry = target-cuda/release/neural-model. SIZE is 1b (default) or 8b: the shape of
# the random model timed (Llama 3.2 1B's or Llama 3.1 8B's layers, with the tiny
# CWM's 300-token vocabulary so that its tokenizer reads every id).
# What comes back in $OUT:
#   logits-<fixture>-<device>.json  next-token logits of each tiny parity fixture on
#       cpu, cuda (f32) and cuda-bf16, for the tokens of its expected.json (compare
#       with that file's logits: f32 within 1e-4, as on the CPU)
#   complete-tiny-cwm-<device>.json  the greedy continuation of the CWM fixture's
#       prompt (compare with continuation.json's tokens)
#   complete-<SIZE>-<device>.json  prefill ms and ms per token of the random model
set -uo pipefail
nm=${NM:-target-cuda/release/neural-model}
size=${1:-1b}
out=${OUT:-/tmp/gpu-check}
mkdir -p "$out"
nvidia-smi -L || echo "nvidia-smi: no GPU listed"
fixtures=model/tests/fixtures
for fixture in tiny-llama-gqa tiny-llama3-rope tiny-cwm; do
    tokens=$(grep -o '"tokens": \[[^]]*\]' "$fixtures/$fixture/expected.json" | head -1 | tr -dc '0-9,')
    for device in cpu cuda cuda-bf16; do
        "$nm" logits --model "$fixtures/$fixture" --tokens "$tokens" --device "$device" \
            > "$out/logits-$fixture-$device.json" 2> "$out/logits-$fixture-$device.err"
        echo "logits $fixture $device: exit $?"
    done
done
# The CWM fixture's prompt, as continuation.json holds it (JSON string -> text).
prompt=$(mktemp)
grep -o '"prompt": "[^"\\]*\(\\.[^"\\]*\)*"' "$fixtures/tiny-cwm/continuation.json" | head -1 \
    | sed -e 's/^"prompt": "//' -e 's/"$//' | sed -e 's/\\n/\n/g' -e 's/\\"/"/g' | head -c -1 > "$prompt"
for device in cpu cuda cuda-bf16; do
    "$nm" complete --model "$fixtures/tiny-cwm" --prompt-file "$prompt" --max-tokens 16 \
        --device "$device" --json > "$out/complete-tiny-cwm-$device.json" 2>&1
    echo "complete tiny-cwm $device: exit $?"
done
case "$size" in
    8b) shape='"hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8' ;;
    *) shape='"hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 16, "num_attention_heads": 32, "num_key_value_heads": 8' ;;
esac
work=$(mktemp -d)
cat > "$work/config.json" <<JSON
{"architectures": ["LlamaForCausalLM"], "model_type": "llama", $shape,
 "vocab_size": 300, "max_position_embeddings": 8192, "rms_norm_eps": 1e-05,
 "rope_parameters": {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 32.0,
   "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8192},
 "tie_word_embeddings": false, "hidden_act": "silu"}
JSON
"$nm" init-checkpoint --config "$work/config.json" --tokenizer "$fixtures/tiny-cwm/tokenizer.json" --out "$work/random"
echo "init-checkpoint $size: exit $?"
for device in cuda-bf16 cuda; do
    timeout 180 "$nm" complete --model "$work/random" --prompt-file "$prompt" --max-tokens 64 \
        --device "$device" --json > "$out/complete-$size-$device.json" 2>&1
    echo "complete $size $device: exit $?"
done
grep -h -o '"prefill_ms":[^}]*' "$out"/complete-*.json
