"""Both trainers on the same shape, the same start and the same batches, in one run.

Each trainer resumes from one shared initial checkpoint (Hugging Face's init, seed 0)
and trains N steps of the batch plan both compute from the config's seed. Prints a
table: tokens/s (the median of train.csv's windows after the first), the ratio, the
fraction of this machine's matmul peak in the precision the PyTorch trainer uses
(bf16 where the CPU has AMX or AVX512-BF16, else fp32; measured here with a large matmul), and
each trainer's validation loss after N steps with their difference.

    python3 model/trainer/bench.py --steps 300                       # shipped shape, both trainers
    python3 model/trainer/bench.py --steps 60 --shape 20m --trainers torch

Model FLOPs per token are counted as training's usual 6 x the matmul parameters of
the layers, plus the output projection where the loss falls, plus attention's score
and value products: 2 x hidden x context each forward, three times that to train, so
12 x layers x hidden x context, where context is the keys a query sees on average
(causal: half the episode's length, averaged over tokens).
"""

import argparse
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import tomllib

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHAPES = {
    "shipped": None,  # the [model] of model/configs/default.toml
    "20m": dict(hidden_size=512, intermediate_size=1408, layers=6, heads=8, kv_heads=4),
    # The same parameters in half as many heads of twice the width: on a CPU, attention
    # costs by the score (heads x context^2), as much as by its FLOPs.
    "20m-h128": dict(hidden_size=512, intermediate_size=1408, layers=6, heads=4, kv_heads=2),
    # Two heads of 256: the CPU flash-attention backward does more FLOPs per score.
    "20m-h256": dict(hidden_size=512, intermediate_size=1408, layers=6, heads=2, kv_heads=1),
    "50m": dict(hidden_size=768, intermediate_size=2048, layers=8, heads=12, kv_heads=4),
}


def toml_value(v):
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    return repr(v)


def write_toml(path, c):
    lines = [f"{k} = {toml_value(v)}" for k, v in c.items() if not isinstance(v, dict)]
    for table, values in c.items():
        if isinstance(values, dict):
            lines += ["", f"[{table}]"] + [f"{k} = {toml_value(v)}" for k, v in values.items()]
    path.write_text("\n".join(lines) + "\n")


def csv_rows(path):
    lines = [l for l in path.read_text().split("\n") if l]
    header = lines[0].split(",")
    return [dict(zip(header, l.split(","))) for l in lines[1:]]


def flops_per_token(m, vocab, context, masked_fraction):
    d, f, layers = m["hidden_size"], m["intermediate_size"], m["layers"]
    kv = d // m["heads"] * m["kv_heads"]
    matmul = layers * (2 * d * d + 2 * d * kv + 3 * d * f)
    return 6 * (matmul + vocab * d * masked_fraction) + 12 * layers * d * context


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--shape", choices=SHAPES, default="shipped")
    parser.add_argument("--trainers", default="burn,torch")
    parser.add_argument("--config", default=str(ROOT / "model/configs/default.toml"))
    parser.add_argument("--bin", default=str(ROOT / "target/release/neural-model"))
    parser.add_argument("--batch-tokens", type=int, help="tokens a batch (default: the config's)")
    parser.add_argument("--compile", action="store_true", help="torch.compile the PyTorch trainer")
    parser.add_argument("--precision", default="auto", choices=["auto", "bf16", "fp32"])
    parser.add_argument("--keep", help="keep the run folders here")
    args = parser.parse_args()
    trainers = args.trainers.split(",")

    base = tomllib.loads(pathlib.Path(args.config).read_text())
    base["dataset"] = str((ROOT / base["dataset"]).resolve())
    if SHAPES[args.shape]:
        base["model"].update(SHAPES[args.shape])
    if args.batch_tokens:
        base["batch_tokens"] = args.batch_tokens
    base.setdefault("torch", {}).update(compile=args.compile, precision=args.precision)
    base.update(steps=args.steps, warmup_steps=min(base["warmup_steps"], args.steps // 3),
                eval_every=10**9, checkpoint_every=10**9, log_every=10)
    tokenizer = ROOT / "model/weights/default/tokenizer.json"

    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    env = {**os.environ, "NEURAL_PYTHON": sys.executable}
    work = pathlib.Path(args.keep or tempfile.mkdtemp(prefix="train-bench-"))
    init = work / "init"
    results = {}
    for trainer in trainers:
        out = work / trainer
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        shutil.copy(tokenizer, out / "tokenizer.json")
        config = dict(base, out=str(out), trainer=trainer)
        write_toml(out / "bench.toml", config)
        if not init.exists():
            # The shared start: the shape as Rust writes it, initialised by transformers.
            prep = work / "prepare"
            prep.mkdir(exist_ok=True)
            shutil.copy(tokenizer, prep / "tokenizer.json")
            write_toml(prep / "bench.toml", dict(config, out=str(prep), trainer="torch"))
            subprocess.run([args.bin, "train", "--config", prep / "bench.toml", "--prepare"],
                           check=True, env=env)
            torch.manual_seed(0)
            model = LlamaForCausalLM(LlamaConfig.from_pretrained(prep / "encoded"))
            model.save_pretrained(init)
            (init / "generation_config.json").unlink(missing_ok=True)
            shutil.copy(tokenizer, init / "tokenizer.json")
            (init / "state.json").write_text(json.dumps({"step": 0, "tokens_seen": 0, "seconds": 0.0}))
            n_params = sum(p.numel() for p in model.parameters())
            del model
        shutil.copytree(init, out / "checkpoint", dirs_exist_ok=True)
        print(f"training {args.steps} steps with {trainer} ...", file=sys.stderr, flush=True)
        done = subprocess.run([args.bin, "train", "--config", out / "bench.toml"], check=True,
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        said = [l for l in done.stderr.split("\n") if "process(es) on" in l]
        rows = csv_rows(out / "train.csv")
        rates = [float(r["tokens_per_second"]) for r in rows[1:]] or [float(rows[0]["tokens_per_second"])]
        valid = csv_rows(out / "valid.csv")[-1]
        precision = said[0].rsplit(", ", 1)[-1] if said else "fp32"
        results[trainer] = dict(rate=statistics.median(rates), loss=float(valid["loss"]),
                                precision=precision)

    peak = json.loads(subprocess.run([sys.executable, ROOT / "model/trainer/train.py", "--peak"],
                                     check=True, capture_output=True, text=True).stdout)
    index = json.loads((work / "prepare" / "encoded/index.json").read_text())
    lengths = index["train"]["lengths"]
    mask = (work / "prepare" / "encoded/train.mask").read_bytes()
    fraction = sum(mask) / len(mask)
    context = sum(n * n for n in lengths) / sum(lengths) / 2  # a token's keys, on average
    vocab = json.loads((init / "config.json").read_text())["vocab_size"]
    flops = flops_per_token(base["model"], vocab, context, fraction)

    m = base["model"]
    print(f"\nshape {args.shape}: {n_params / 1e6:.1f}M parameters (d {m['hidden_size']}, "
          f"{m['layers']} layers, vocab {vocab}), {base['batch_tokens']} tokens a batch, "
          f"{args.steps} steps, {torch.get_num_threads()} threads, torch {torch.__version__}"
          + (", torch.compile" if args.compile else ""))
    # The peak the PyTorch trainer can reach: bf16 where it is native, else fp32.
    name = "bf16" if peak["bf16_native"] else "fp32"
    top = peak[f"{name}_gflops"]
    bf16 = f"bf16 {peak['bf16_gflops']:.0f}" if peak["bf16_native"] else "bf16 not native on this CPU"
    print(f"matmul peak: fp32 {peak['fp32_gflops']:.0f} GFLOP/s, {bf16}; "
          f"{flops / 1e6:.1f} MFLOP per token\n")
    print(f"| trainer | precision | tokens/s | vs burn | of the {name} peak | valid loss |")
    print("|---|---|---|---|---|---|")
    for trainer, r in results.items():
        ratio = f"{r['rate'] / results['burn']['rate']:.1f}x" if "burn" in results else "-"
        share = 100 * r["rate"] * flops / (top * 1e9)
        precision = "fp32" if trainer == "burn" else r["precision"]
        print(f"| {trainer} | {precision} | {r['rate']:,.0f} | {ratio} | {share:.1f}% | {r['loss']:.4f} |")
    if {"burn", "torch"} <= results.keys():
        a, b = results["burn"]["loss"], results["torch"]["loss"]
        print(f"\nvalidation losses differ by {100 * abs(a - b) / a:.2f}% after {args.steps} steps")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
