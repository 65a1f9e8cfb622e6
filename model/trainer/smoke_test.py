"""Smoke test of the PyTorch trainer, end to end, as CI runs it (a few minutes on 2 cores).

A tiny dataset of generated programs, a tiny model trained a few dozen steps through
`neural-model train` with trainer = "torch", then six checks:
  1. the training loss falls;
  2. the checkpoint loads in neural-dap: a neural DAP session launches on it and stops;
  3. burn (`neural-model logits`) and PyTorch give the same logits for it;
  4. resuming continues from the checkpoint with its optimizer state;
  5. the same run under `torchrun --nproc_per_node 2` (gloo) follows the one-process loss;
  6. a deeper and wider run grown from the checkpoint (`[torch] init_from`) starts out computing
     what the checkpoint does, with its tokenizer, and trains on.
Prints "N passed, N failed" last; exits non-zero if any check failed.

    python3 model/trainer/smoke_test.py [--bin target/release]
"""

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]

CONFIG = """
dataset = "{data}"
out = "{out}"
trainer = "torch"
seed = 0
steps = {steps}
batch_tokens = 4096
max_len = 512
lr = 3e-3
min_lr = 3e-4
warmup_steps = 5
weight_decay = 0.0
max_grad_norm = 1.0
eval_every = 20
eval_episodes = 20
checkpoint_every = 20
log_every = 5

[tokenizer]
vocab_size = 300
sample_episodes = 200

[model]
hidden_size = 64
intermediate_size = 128
layers = 2
heads = 4
kv_heads = 2
max_positions = 1024
tie_embeddings = true
"""


def column(path, name):
    lines = path.read_text().split("\n")
    at = lines[0].split(",").index(name)
    return [float(line.split(",")[at]) for line in lines[1:] if line]


def dap_session(adapter, program, model):
    """initialize, launch (neural, stop on entry) and one stepIn over stdio; the messages."""
    requests = [
        {"command": "initialize", "arguments": {"adapterID": "neural", "linesStartAt1": True}},
        {"command": "launch", "arguments": {"program": str(program), "engine": "neural",
                                            "model": str(model), "stopOnEntry": True}},
        {"command": "configurationDone", "arguments": {}},
        {"command": "threads", "arguments": {}},
        {"command": "disconnect", "arguments": {}},
    ]
    wire = b""
    for seq, request in enumerate(requests, 1):
        body = json.dumps({"seq": seq, "type": "request", **request}).encode()
        wire += b"Content-Length: %d\r\n\r\n" % len(body) + body
    out = subprocess.run([adapter], input=wire, capture_output=True, timeout=120).stdout
    messages = []
    while out:
        header, _, rest = out.partition(b"\r\n\r\n")
        length = int(header.split(b":")[1])
        messages.append(json.loads(rest[:length]))
        out = rest[length:]
    return messages


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=str(ROOT / "target" / "release"))
    args = parser.parse_args()
    binaries = pathlib.Path(args.bin)
    neural_model, adapter = binaries / "neural-model", binaries / "neural-dap"
    env = {**os.environ, "NEURAL_PYTHON": os.environ.get("NEURAL_PYTHON", sys.executable)}
    results = []

    def check(name, ok, detail=""):
        results.append(ok)
        print(f"{'ok' if ok else 'FAILED'}: {name}{'' if ok else ' -- ' + detail}", flush=True)

    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        data, out = tmp / "data", tmp / "run"
        subprocess.run([neural_model, "dataset", "--out", data, "--generated", "60",
                        "--valid-percent", "10", "--test-percent", "0"], check=True, env=env,
                       stdout=subprocess.DEVNULL)
        config = tmp / "smoke.toml"
        config.write_text(CONFIG.format(data=data, out=out, steps=40))
        subprocess.run([neural_model, "train", "--config", config], check=True, env=env)

        losses = column(out / "train.csv", "loss")
        check("the training loss falls", losses[-1] < 0.8 * losses[0], f"losses {losses}")

        checkpoint = out / "checkpoint"
        messages = dap_session(adapter, ROOT / "examples" / "fib.py", checkpoint)
        launched = any(m.get("command") == "launch" and m.get("success") for m in messages)
        stopped = any(m.get("event") == "stopped" for m in messages)
        check("the checkpoint loads in neural-dap", launched and stopped,
              json.dumps([m for m in messages if m.get("type") == "response"])[:2000])

        import torch
        from transformers import LlamaForCausalLM

        tokens = [3, 17, 42, 5, 99, 250, 8, 8, 30, 12]
        rust = subprocess.run([neural_model, "logits", "--model", checkpoint, "--tokens",
                               ",".join(map(str, tokens))], check=True, capture_output=True)
        rust_logits = torch.tensor(json.loads(rust.stdout)["logits"])
        model = LlamaForCausalLM.from_pretrained(checkpoint, dtype=torch.float32).eval()
        with torch.no_grad():
            torch_logits = model(input_ids=torch.tensor([tokens])).logits[0]
        diff = float((rust_logits - torch_logits).abs().max())
        check("burn and PyTorch logits agree within 1e-4", diff < 1e-4, f"max difference {diff}")

        config.write_text(CONFIG.format(data=data, out=out, steps=50))
        resumed = subprocess.run([neural_model, "train", "--config", config], env=env,
                                 capture_output=True, text=True)
        state = json.loads((checkpoint / "state.json").read_text())
        check("a second leg resumes with the optimizer state",
              resumed.returncode == 0 and "resuming at step 40" in resumed.stderr
              and "moments start fresh" not in resumed.stderr and state["step"] == 50,
              resumed.stderr[-2000:])

        # The same 20 steps from the same fresh start in one process and in two.
        curves = {}
        for procs in (1, 2):
            run = tmp / f"procs-{procs}"
            config.write_text(CONFIG.format(data=data, out=run, steps=20))
            subprocess.run([neural_model, "train", "--config", config, "--prepare"], check=True,
                           env=env, capture_output=True)
            launcher = [sys.executable] if procs == 1 else [
                sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2",
                "--master_port", "29517"]
            subprocess.run(launcher + [run / "train.py", run, "--device", "cpu"],
                           check=True, env=env, capture_output=True)
            curves[procs] = column(run / "train.csv", "loss")
        gap = max(abs(a - b) / a for a, b in zip(curves[1], curves[2]))
        check("torchrun with 2 processes follows the 1-process loss within 2%",
              len(curves[1]) == len(curves[2]) > 0 and gap < 0.02, f"curves {curves}")

        # A 3-layer run with a wider feed-forward layer grown from the 2-layer checkpoint:
        # same tokenizer, same logits.
        grown = tmp / "grown"
        config.write_text(CONFIG.format(data=data, out=grown, steps=10).replace(
            "layers = 2", "layers = 3").replace("intermediate_size = 128", "intermediate_size = 192")
            + f'\n[torch]\ninit_from = "{checkpoint}"\n')
        subprocess.run([neural_model, "train", "--config", config], check=True, env=env,
                       capture_output=True)
        sys.path.insert(0, str(grown))
        import train as trainer  # the copy `neural-model train` wrote into the run

        from transformers import LlamaConfig

        fresh = LlamaForCausalLM(LlamaConfig.from_pretrained(grown / "encoded")).eval()
        trainer.grow_from(fresh, checkpoint, type("Quiet", (), {"say": print})())
        source = LlamaForCausalLM.from_pretrained(checkpoint, dtype=torch.float32).eval()
        with torch.no_grad():
            grown_logits = fresh(input_ids=torch.tensor([tokens])).logits[0]
            source_logits = source(input_ids=torch.tensor([tokens])).logits[0]
        diff = float((grown_logits - source_logits).abs().max())
        same_tokenizer = (grown / "tokenizer.json").read_bytes() == (checkpoint / "tokenizer.json").read_bytes()
        trained = json.loads((grown / "checkpoint" / "state.json").read_text())["step"] == 10
        check("a run grown from the checkpoint starts where it is and trains on",
              diff < 1e-5 and same_tokenizer and trained and fresh.config.num_hidden_layers == 3
              and fresh.config.intermediate_size == 192,
              f"max logit difference {diff}, same tokenizer {same_tokenizer}, trained {trained}")

    passed = sum(results)
    print(f"{passed} passed, {len(results) - passed} failed")
    return 0 if passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
