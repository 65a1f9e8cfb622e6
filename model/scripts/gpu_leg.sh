#!/usr/bin/env bash
# One training leg on a lent GPU machine, for the device tool's `run`: it runs in the
# repository root there and sends back what it writes under $OUT. Prepare here first:
#   cargo build --release -p neural-model --features cuda
#   neural-model dataset --out data/dataset --generated 4000 --generated-scripts 1500 --corpus ../shared/corpus
#   mkdir -p runs/gpu && cp model/weights/default/tokenizer.json runs/gpu/
# then run `bash model/scripts/gpu_leg.sh 480` there with carry = target/release/neural-model,
# data/dataset, runs/gpu. Training stops after LIMIT seconds (a checkpoint every 100
# steps); the checkpoint and curves come back in $OUT/gpu, to be copied to runs/gpu/ and
# resumed or measured here.
set -uo pipefail
limit=${1:-480}
out=${OUT:-/tmp/gpu-leg}
nvidia-smi -L || echo "nvidia-smi: no GPU listed"
timeout "$limit" target/release/neural-model train --config model/configs/gpu.toml --cuda
echo "train exited with $? (124: stopped at the time limit)"
mkdir -p "$out/gpu"
cp -r runs/gpu/checkpoint runs/gpu/train.csv runs/gpu/valid.csv runs/gpu/loss.png "$out/gpu/" 2>/dev/null
tail -3 runs/gpu/train.csv runs/gpu/valid.csv 2>/dev/null
