"""PyTorch eager's decode speed on a checkpoint, in the pattern `neural-model bench`
times: read a prefix once, then per step read the action's tokens and decode the state's
tokens one at a time with the key/value cache. Prints ms per token (p50) to set beside
the bench's rows for the same weights.

    python3 model/trainer/decode_bench.py --model model/weights/default --steps 10
"""

import argparse
import statistics
import time

import torch
from transformers import DynamicCache, LlamaForCausalLM


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="model/weights/default")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--prefix-tokens", type=int, default=256)
    parser.add_argument("--action-tokens", type=int, default=8)
    parser.add_argument("--state-tokens", type=int, default=40)
    parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"])
    args = parser.parse_args()

    torch.set_num_threads(torch.get_num_threads())
    model = LlamaForCausalLM.from_pretrained(args.model, dtype=getattr(torch, args.dtype)).eval()
    vocab = model.config.vocab_size
    ids = lambda n, seed: torch.tensor([[(i * 7919 + seed * 104_729) % vocab for i in range(n)]])

    token_ms, step_ms = [], []
    with torch.inference_mode():
        cache = DynamicCache()
        out = model(ids(args.prefix_tokens, 1), cache=cache, use_cache=True)
        for step in range(args.steps):
            started = time.perf_counter()
            out = model(ids(args.action_tokens, step + 2), cache=cache, use_cache=True)
            for _ in range(args.state_tokens):
                t0 = time.perf_counter()
                token = out.logits[:, -1:].argmax(-1)
                out = model(token, cache=cache, use_cache=True)
                token_ms.append((time.perf_counter() - t0) * 1e3)
            step_ms.append((time.perf_counter() - started) * 1e3)
    print(
        f"| {args.model} | torch eager {args.dtype} | step ms p50 {statistics.median(step_ms):.1f} "
        f"| ms/token p50 {statistics.median(token_ms):.3f} | {torch.get_num_threads()} threads, torch {torch.__version__} |"
    )


if __name__ == "__main__":
    main()
