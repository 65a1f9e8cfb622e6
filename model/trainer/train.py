"""The PyTorch trainer behind `neural-model train` when a config says trainer = "torch".

`neural-model train --config FILE` prepares the run folder first: `config.toml` (the
config as resolved), `encoded/` (the episodes tokenised and masked by the same Rust code
the burn trainer uses, the model's `config.json`, and the rows of every step's batch)
and a copy of this file. This file trains a Hugging Face `LlamaForCausalLM` on them:
AdamW, linear warm-up and cosine decay, global-norm clipping, bf16 autocast over fp32
master weights (AMX through oneDNN on the CPU, tensor cores on CUDA), DDP or FSDP under
torchrun. It writes `train.csv` and `valid.csv` with the burn trainer's columns and
checkpoints (`checkpoint/`: config.json, model.safetensors, tokenizer.json, state.json,
optimizer.pt) that neural-dap and `neural-model eval` load unchanged.

    python3 RUN/train.py RUN                                  # one process
    torchrun --nproc_per_node 8 RUN/train.py RUN              # DDP, one node
    torchrun --nnodes 4 --nproc_per_node 8 --rdzv-endpoint HOST:29500 RUN/train.py RUN
    python3 RUN/train.py --peak                               # matmul peaks (fp32; bf16 where native), GFLOP/s
"""

import argparse
import contextlib
import json
import math
import os
import pathlib
import shutil
import sys
import time
import tomllib

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
import transformers
from transformers import LlamaConfig, LlamaForCausalLM

transformers.utils.logging.disable_progress_bar()  # our own bar is the one to watch


# ---- the schedule and the data -------------------------------------------------------


def lr_at(c, step):
    """Linear warm-up, then cosine decay to min_lr (as TrainConfig::lr_at)."""
    if step < c["warmup_steps"]:
        return c["lr"] * (step + 1) / c["warmup_steps"]
    span = max(c["steps"] - c["warmup_steps"], 1)
    progress = min((step - c["warmup_steps"]) / span, 1.0)
    return c["min_lr"] + 0.5 * (c["lr"] - c["min_lr"]) * (1 + math.cos(math.pi * progress))


class Split:
    """The examples of one split as `neural-model train` encoded them."""

    def __init__(self, folder, name, index):
        self.ids = np.fromfile(folder / f"{name}.ids", dtype="<u4").astype(np.int64)
        self.mask = np.fromfile(folder / f"{name}.mask", dtype=np.uint8).astype(bool)
        self.lengths = np.asarray(index["lengths"], dtype=np.int64)
        self.starts = np.concatenate([[0], np.cumsum(self.lengths)[:-1]]).astype(np.int64)
        self.targets = index.get("targets")  # per example: [action, start, end] triples

    def __len__(self):
        return len(self.lengths)

    def batch(self, rows, pad_to=None):
        """Rows padded to the longest (pad id 0, never scored): tokens and loss mask."""
        seq = max(2, pad_to or 0, *(int(self.lengths[r]) for r in rows))
        tokens = np.zeros((len(rows), seq), np.int64)
        mask = np.zeros((len(rows), seq), bool)
        for i, r in enumerate(rows):
            start, n = self.starts[r], self.lengths[r]
            tokens[i, :n] = self.ids[start : start + n]
            mask[i, :n] = self.mask[start : start + n]
        return torch.from_numpy(tokens), torch.from_numpy(mask)


def eval_batches(split, batch_tokens):
    """Validation rows in batches of similar length within the token budget."""
    order = sorted(range(len(split)), key=lambda r: split.lengths[r])
    batches, current = [], []
    for r in order:
        if current and (len(current) + 1) * split.lengths[r] > batch_tokens:
            batches.append(current)
            current = []
        current.append(r)
    return batches + ([current] if current else [])


# ---- the loss -------------------------------------------------------------------------


class MaskedLoss(torch.nn.Module):
    """Sum of next-token cross-entropy over the masked targets, and their count.

    Position t - 1 predicts token t; the loss falls only where the mask says the model
    must choose (never on the program, the actions, padding, or a state's source line).
    The output projection runs only on those positions: the rest would be thrown away.
    """

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, tokens, mask):
        hidden = self.model.model(input_ids=tokens[:, :-1]).last_hidden_state
        targets = tokens[:, 1:]
        where = mask[:, 1:]
        logits = self.model.lm_head(hidden[where]).float()
        return F.cross_entropy(logits, targets[where], reduction="sum"), where.sum()


# ---- the run ---------------------------------------------------------------------------


def bf16_is_native(device):
    """Whether bf16 matmuls run on matrix units here: a CPU without AMX or AVX512-BF16
    (an AMD Zen 3, say) emulates them about 400x slower than fp32."""
    if device.type == "cuda":
        return torch.cuda.is_bf16_supported()
    return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())


def resolve_precision(wanted, device):
    """`auto`: bf16 where the hardware has it, else fp32; `bf16` and `fp32` as said."""
    if wanted not in ("auto", "bf16", "fp32"):
        raise SystemExit(f'[torch] precision = "{wanted}": use "auto", "bf16" or "fp32"')
    if wanted == "auto":
        return "bf16" if bf16_is_native(device) else "fp32"
    return wanted


class Run:
    """Distributed set-up, device and precision, from torchrun's environment."""

    def __init__(self, args, c):
        self.world = int(os.environ.get("WORLD_SIZE", "1"))
        self.rank = int(os.environ.get("RANK", "0"))
        local = int(os.environ.get("LOCAL_RANK", "0"))
        cuda = torch.cuda.is_available() and args.device != "cpu"
        self.device = torch.device(f"cuda:{local}" if cuda else "cpu")
        if cuda:
            torch.cuda.set_device(self.device)
        if self.world > 1:
            dist.init_process_group("nccl" if cuda else "gloo")
        if not cuda and self.world > 1:
            # Share the cores between the processes instead of oversubscribing them.
            torch.set_num_threads(max(1, (os.cpu_count() or 1) // self.world))
        self.precision = resolve_precision(c.get("torch", {}).get("precision", "auto"), self.device)
        precision = self.precision
        self.autocast = (
            torch.autocast(self.device.type, dtype=torch.bfloat16)
            if precision == "bf16"
            else contextlib.nullcontext()
        )
        self.main = self.rank == 0

    def all_sum(self, value):
        if self.world > 1:
            dist.all_reduce(value)
        return value

    def barrier(self):
        if self.world > 1:
            dist.barrier()

    def say(self, text):
        if self.main:
            print(text, file=sys.stderr, flush=True)


def append_line(path, header, line):
    new = not path.exists()
    with open(path, "a") as f:
        if new:
            f.write(header + "\n")
        f.write(line + "\n")


def load_model(out, encoded, run, c):
    """The checkpoint to resume from (with its optimizer state if this trainer wrote
    it), else a fresh model initialised as HF does (normal, std 0.02), or grown from the
    checkpoint `[torch] init_from` names."""
    checkpoint = out / "checkpoint"
    wanted = LlamaConfig.from_pretrained(encoded)
    state = {"step": 0, "tokens_seen": 0, "seconds": 0.0}
    if (checkpoint / "state.json").exists():
        model = LlamaForCausalLM.from_pretrained(checkpoint, dtype=torch.float32)
        state.update(json.loads((checkpoint / "state.json").read_text()))
        for key in ("hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
                    "num_key_value_heads", "vocab_size", "tie_word_embeddings"):
            if getattr(model.config, key) != getattr(wanted, key):
                raise SystemExit(
                    f"{checkpoint} has {key} = {getattr(model.config, key)} but the config asks "
                    f"for {getattr(wanted, key)}: train into another `out` folder, or remove the checkpoint"
                )
        # Lengths are the run's, not the checkpoint's: a leg may train longer episodes.
        model.config.max_position_embeddings = wanted.max_position_embeddings
        model.config.trained_positions = getattr(wanted, "trained_positions", None)
        optimizer = checkpoint / "optimizer.pt"
        opt_state = torch.load(optimizer, map_location="cpu") if optimizer.exists() else None
        run.say(
            f"resuming at step {state['step']}"
            + ("" if opt_state else " (no optimizer state in the checkpoint: the moments start "
                                    "fresh, and the learning rate warms up again)")
        )
    else:
        torch.manual_seed(0)
        model = LlamaForCausalLM(wanted)
        opt_state = None
        start = c.get("torch", {}).get("init_from")
        if start:
            grow_from(model, pathlib.Path(start), run)
    return model.to(run.device), state, opt_state


def grow_from(model, start, run):
    """Start `model` from the checkpoint in `start`, computing what it computes. A deeper
    model gets the checkpoint's layers spread evenly; each layer between them has zero
    output projections, so it adds nothing to the residual stream until training moves
    it. A wider feed-forward layer keeps the checkpoint's neurons and adds new ones
    (initialised as usual) whose down-projection columns start at zero. Every other
    shape must match the checkpoint's."""
    source = LlamaForCausalLM.from_pretrained(start, dtype=torch.float32)
    for key in ("hidden_size", "num_attention_heads", "num_key_value_heads",
                "vocab_size", "tie_word_embeddings"):
        if getattr(source.config, key) != getattr(model.config, key):
            raise SystemExit(
                f"[torch] init_from: {start} has {key} = {getattr(source.config, key)} but the "
                f"config asks for {getattr(model.config, key)}; only the depth and the "
                "feed-forward width may grow"
            )
    theirs, ours = rotary_and_norm(source.config), rotary_and_norm(model.config)
    if theirs != ours:
        raise SystemExit(
            f"[torch] init_from: {start} has rope_theta, rms_norm_eps = {theirs} but the config "
            f"asks for {ours}: set rope_theta and rms_norm_eps in [model] to the checkpoint's"
        )
    old, new = source.config.num_hidden_layers, model.config.num_hidden_layers
    if new < old:
        raise SystemExit(f"[torch] init_from: {start} has {old} layers, more than the config's {new}")
    narrow, wide = source.config.intermediate_size, model.config.intermediate_size
    if wide < narrow:
        raise SystemExit(f"[torch] init_from: {start} has intermediate_size {narrow}, more than the config's {wide}")
    # Source layer i lands at round(i * new / old): 4 into 8 gives 0, 2, 4, 6.
    placed = {round(i * new / old): i for i in range(old)}
    with torch.no_grad():
        model.model.embed_tokens.weight.copy_(source.model.embed_tokens.weight)
        model.model.norm.weight.copy_(source.model.norm.weight)
        if not model.config.tie_word_embeddings:
            model.lm_head.weight.copy_(source.lm_head.weight)
        for j, layer in enumerate(model.model.layers):
            layer.mlp.down_proj.weight.zero_()
            if j not in placed:
                layer.self_attn.o_proj.weight.zero_()
                continue
            given = source.model.layers[placed[j]]
            for name, value in given.state_dict().items():
                target = layer.get_parameter(name)
                # A feed-forward matrix's first `narrow` rows (gate, up) or columns (down).
                target[tuple(slice(0, n) for n in value.shape)].copy_(value)
    grown = [f"{old} layers"] + ([f"grown to {new}"] if new > old else [])
    if wide > narrow:
        grown.append(f"feed-forward {narrow} widened to {wide}")
    run.say(f"starting from {start} ({', '.join(grown)})")


def rotary_and_norm(config):
    """What a checkpoint's positions and norms compute with, beside its shape."""
    rope = getattr(config, "rope_parameters", None) or {}
    theta = rope.get("rope_theta", getattr(config, "rope_theta", None))
    return float(theta), float(config.rms_norm_eps)


def save(model, optimizer, state, out, run):
    """Model, tokenizer, run state and optimizer state, renamed into place whole."""
    tmp, final = out / "checkpoint.tmp", out / "checkpoint"
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp, safe_serialization=True)
    (tmp / "generation_config.json").unlink(missing_ok=True)
    shutil.copy(out / "tokenizer.json", tmp / "tokenizer.json")
    (tmp / "state.json").write_text(json.dumps({**state, "trainer": "torch"}, indent=2))
    torch.save(optimizer.state_dict(), tmp / "optimizer.pt")
    shutil.rmtree(final, ignore_errors=True)
    os.rename(tmp, final)


@torch.no_grad()
def score(model, valid, c, run, actions):
    """Teacher-forced loss and exact match per action: greedy decoding reproduces a
    target iff every masked token of it is the argmax given the true prefix."""
    model.eval()
    loss_sum, count = 0.0, 0
    right = {a: [0, 0] for a in actions}
    for rows in eval_batches(valid, c["batch_tokens"]):
        tokens, mask = valid.batch(rows)
        tokens, mask = tokens.to(run.device), mask.to(run.device)
        with run.autocast:
            logits = model(input_ids=tokens[:, :-1]).logits.float()
        where = mask[:, 1:]
        loss_sum += float(F.cross_entropy(logits[where], tokens[:, 1:][where], reduction="sum"))
        count += int(where.sum())
        hit = (logits.argmax(-1) == tokens[:, 1:]) | ~where
        hit = hit.cpu().numpy()
        for i, r in enumerate(rows):
            for action, start, end in valid.targets[r]:
                name = actions[action]
                right[name][0] += bool(hit[i, start - 1 : end - 1].all())
                right[name][1] += 1
    model.train()
    return loss_sum / max(count, 1), right


def train(args):
    out = pathlib.Path(args.run)
    c = tomllib.loads((out / "config.toml").read_text())
    encoded = out / "encoded"
    index = json.loads((encoded / "index.json").read_text())
    train_split = Split(encoded, "train", index["train"])
    valid = Split(encoded, "valid", index["valid"])
    plan, actions = index["plan"], index["actions"]
    run = Run(args, c)

    model, state, opt_state = load_model(out, encoded, run, c)
    options = c.get("torch", {})
    parallel = options.get("parallel", "ddp")
    trained = MaskedLoss(model)
    if options.get("compile", False):
        trained = torch.compile(trained, dynamic=True)
    if run.world > 1 and parallel == "fsdp":
        from torch.distributed.fsdp import fully_shard

        for layer in model.model.layers:
            fully_shard(layer)
        fully_shard(model)
    elif run.world > 1:
        trained = torch.nn.parallel.DistributedDataParallel(trained)
    fused = {"fused": True} if run.device.type in ("cpu", "cuda") and parallel != "fsdp" else {}
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=c["lr"], betas=(0.9, 0.95), eps=1e-5,
        weight_decay=c["weight_decay"], **fused,
    )
    if opt_state:
        optimizer.load_state_dict(opt_state)
    # Fresh moments on trained weights (a burn checkpoint, say) make Adam's first steps
    # full-size in every direction: warm the rate up again over warmup_steps. Measured
    # without it, a leg resumed from the shipped weights went from validation loss 0.474
    # to 0.515 in its first 100 steps.
    rewarm_from = state["step"] if opt_state is None and state["step"] > 0 else None
    steps = min(c["steps"], len(plan))
    if steps < c["steps"]:
        run.say(f"the encoded plan covers {len(plan)} steps of {c['steps']}: run `neural-model train` again")
    run.say(
        f"{len(train_split)} training episodes, {len(valid)} validation episodes; model "
        f"{sum(p.numel() for p in model.parameters()):,} parameters; {run.world} process(es) on "
        f"{run.device.type}, {run.precision}"
    )

    progress = None
    if run.main and not args.quiet and sys.stderr.isatty():
        from tqdm import tqdm

        progress = tqdm(total=steps, initial=state["step"], desc="training", dynamic_ncols=True)
    started = time.time() - state["seconds"]
    window_tokens, window_start = 0, time.time()
    while state["step"] < steps:
        step = state["step"]
        rows = plan[step]
        mine = rows[run.rank :: run.world]
        padded = max(int(train_split.lengths[r]) for r in rows)  # the whole batch's row length
        tokens, mask = train_split.batch(mine or rows[:1])
        if not mine:  # more processes than rows: take part with nothing to score
            mask[:] = False
        tokens, mask = tokens.to(run.device), mask.to(run.device)
        lr = lr_at(c, step)
        if rewarm_from is not None:
            lr *= min(1.0, (step - rewarm_from + 1) / max(c["warmup_steps"], 1))
        for group in optimizer.param_groups:
            group["lr"] = lr
        with run.autocast:
            loss_sum, count = trained(tokens, mask)
        total = run.all_sum(count.detach().clone().float())
        # DDP averages gradients over processes: scale so the sum is the global mean.
        (loss_sum * run.world / total.clamp(min=1)).backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), c["max_grad_norm"])
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        loss = float(run.all_sum(loss_sum.detach().float()) / total.clamp(min=1))

        state["step"] += 1
        batch_tokens = len(rows) * padded
        state["tokens_seen"] += batch_tokens
        window_tokens += batch_tokens
        if progress:
            progress.update(1)
            progress.set_postfix_str(f"loss {loss:.3f}")
        last = state["step"] == steps
        if run.main and state["step"] % c["log_every"] == 0:
            rate = window_tokens / (time.time() - window_start)
            append_line(
                out / "train.csv", "step,lr,loss,grad_norm,tokens_per_second,tokens_seen",
                f"{state['step']},{lr:.6f},{loss:.5f},{float(grad_norm):.4f},{rate:.0f},{state['tokens_seen']}",
            )
        if state["step"] % c["log_every"] == 0:
            window_tokens, window_start = 0, time.time()
        if state["step"] % c["eval_every"] == 0 or last:
            if run.main:
                vloss, right = score(model, valid, c, run, actions)
                ems = [f"{right[a][0] / right[a][1]:.4f}" if right[a][1] else "" for a in actions]
                append_line(
                    out / "valid.csv", "step," + ",".join(["loss"] + [f"em_{a}" for a in actions]),
                    f"{state['step']},{vloss:.5f}," + ",".join(ems),
                )
                em = lambda a: f"{100 * right[a][0] / right[a][1]:.1f}%" if right[a][1] else "-"
                message = (f"step {state['step']}: valid loss {vloss:.4f}, exact match "
                           f"step_into {em('step_into')}, step_over {em('step_over')}")
                (progress.write(message) if progress else run.say(message))
            run.barrier()
            window_start = time.time()
        if state["step"] % c["checkpoint_every"] == 0 or last:
            state["seconds"] = time.time() - started
            if run.main:
                save(model, optimizer, state, out, run)
            run.barrier()
    if progress:
        progress.close()
    if run.world > 1:
        dist.destroy_process_group()


def peak(args):
    """GFLOP/s of a large matmul in fp32, and in bf16 where the hardware runs it natively
    (emulated bf16 would take minutes and measure nothing useful)."""
    device = torch.device("cuda" if torch.cuda.is_available() and args.device != "cpu" else "cpu")
    n = 4096 if device.type == "cuda" else 2048
    native = bf16_is_native(device)
    result = {"bf16_gflops": None}
    for name, dtype in (("bf16", torch.bfloat16), ("fp32", torch.float32)):
        if name == "bf16" and not native:
            continue
        a = torch.randn(n, n, dtype=dtype, device=device)
        b = torch.randn(n, n, dtype=dtype, device=device)
        a @ b  # warm up (oneDNN picks its kernel on the first call)
        best = float("inf")
        for _ in range(3 if name == "fp32" else 8):
            if device.type == "cuda":
                torch.cuda.synchronize()
            t = time.perf_counter()
            a @ b
            if device.type == "cuda":
                torch.cuda.synchronize()
            best = min(best, time.perf_counter() - t)
        result[f"{name}_gflops"] = 2 * n**3 / best / 1e9
    result["threads"] = torch.get_num_threads()
    result["bf16_native"] = native
    result["torch"] = torch.__version__
    print(json.dumps(result))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    # A positional folder: torchrun's own parser would take `--run` for its `--run-path`.
    parser.add_argument("run", nargs="?", help="the run folder `neural-model train` prepared")
    parser.add_argument("--device", default="auto", choices=["auto", "cpu"], help="cpu: ignore a GPU")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--peak", action="store_true", help="print the matmul peaks (GFLOP/s) and exit")
    args = parser.parse_args()
    if args.peak:
        peak(args)
    elif not args.run:
        parser.error("RUN, the prepared run folder, is needed (or --peak)")
    else:
        train(args)
