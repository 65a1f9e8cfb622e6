"""Shrink a pretrained checkpoint to start a model that fits the CPU's step budget.

Two cuts, each optional:
- `--layers N` keeps N of its layers, evenly spaced from the first to the last.
- `--vocab-from RUN/encoded` keeps only the tokens that a run's encoded episodes use
  (with every merge that builds them and the one-character alphabet, so that any text
  still tokenizes and the episodes tokenize exactly as before), and renumbers them.

SmolLM2-135M's 49,176-token vocabulary is 28M of its 135M parameters, but the trace
episodes use about 3,400 of its tokens; with 6 of its 30 layers it is about 24M
parameters, the size of the 20M bench model (see README, "Choosing the model").

    python model/scripts/shrink_checkpoint.py runs/smollm2-base --out runs/smol6-base \\
        --layers 6 --vocab-from runs/smollm2/encoded
"""

import argparse
import json
import pathlib

import numpy as np
import torch
from tokenizers import Tokenizer
from transformers import LlamaConfig, LlamaForCausalLM


def merge_pair(merge):
    return tuple(merge) if isinstance(merge, list) else tuple(merge.split(" ", 1))


def trimmed_tokenizer(tokenizer_json, used_ids):
    """The tokenizer with only the tokens in `used_ids` (plus what builds them), and
    the old id of each new id."""
    tj = json.loads(tokenizer_json)
    bpe = tj["model"]
    vocab, merges = bpe["vocab"], [merge_pair(m) for m in bpe["merges"]]
    by_id = {i: t for t, i in vocab.items()}
    keep = {by_id[i] for i in used_ids if i in by_id} | {t for t in vocab if len(t) == 1}
    built_by = {}
    for a, b in merges:
        built_by.setdefault(a + b, []).append((a, b))
    todo = list(keep)
    while todo:
        for pair in built_by.get(todo.pop(), []):
            for part in pair:
                if part not in keep:
                    keep.add(part)
                    todo.append(part)
    kept = sorted(keep, key=vocab.__getitem__)
    old_ids = [vocab[t] for t in kept]
    bpe["vocab"] = {t: i for i, t in enumerate(kept)}
    bpe["merges"] = [[a, b] for a, b in merges if a in keep and b in keep and a + b in keep]
    for added in sorted(tj["added_tokens"], key=lambda a: a["id"]):
        if added["content"] in bpe["vocab"]:
            added["id"] = bpe["vocab"][added["content"]]
        else:
            old_ids.append(added["id"])
            added["id"] = len(old_ids) - 1
    return Tokenizer.from_str(json.dumps(tj)), old_ids


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkpoint", type=pathlib.Path)
    ap.add_argument("--out", type=pathlib.Path, required=True)
    ap.add_argument("--layers", type=int)
    ap.add_argument("--vocab-from", type=pathlib.Path, nargs="*", default=[],
                    help="RUN/encoded folders whose train.ids and valid.ids name the tokens to keep")
    args = ap.parse_args()

    model = LlamaForCausalLM.from_pretrained(args.checkpoint, dtype=torch.float32)
    config = model.config
    tokenizer_json = (args.checkpoint / "tokenizer.json").read_text()
    full = Tokenizer.from_str(tokenizer_json)
    tokenizer, old_ids = full, list(range(config.vocab_size))
    if args.vocab_from:
        used = np.unique(np.concatenate([
            np.fromfile(folder / f"{split}.ids", dtype="<u4")
            for folder in args.vocab_from for split in ("train", "valid")
        ]))
        tokenizer, old_ids = trimmed_tokenizer(tokenizer_json, used.tolist())
        check_same_tokens(full, tokenizer, args.vocab_from[0])

    layers = list(range(config.num_hidden_layers))
    if args.layers:
        layers = sorted({round(i * (len(layers) - 1) / max(args.layers - 1, 1))
                         for i in range(args.layers)})
    shrunk = LlamaConfig(**{**config.to_dict(), "vocab_size": len(old_ids),
                            "num_hidden_layers": len(layers)})
    small = LlamaForCausalLM(shrunk)
    with torch.no_grad():
        small.model.embed_tokens.weight.copy_(model.model.embed_tokens.weight[old_ids])
        small.model.norm.weight.copy_(model.model.norm.weight)
        if not shrunk.tie_word_embeddings:
            small.lm_head.weight.copy_(model.lm_head.weight[old_ids])
        for new, old in enumerate(layers):
            small.model.layers[new].load_state_dict(model.model.layers[old].state_dict())
    small.tie_weights()

    args.out.mkdir(parents=True, exist_ok=True)
    small.save_pretrained(args.out)
    tokenizer.save(str(args.out / "tokenizer.json"))
    params = sum(p.numel() for p in small.parameters())
    print(f"{args.out}: {params:,} parameters; layers {layers} of {config.num_hidden_layers}; "
          f"vocabulary {len(old_ids)} of {config.vocab_size}")


def check_same_tokens(full, trimmed, encoded, episodes=300):
    """The kept tokens must tokenize the run's validation text exactly as before."""
    ids = np.fromfile(encoded / "valid.ids", dtype="<u4")
    text = full.decode(ids[: episodes * 400].tolist(), skip_special_tokens=False)
    before = full.encode(text, add_special_tokens=False).tokens
    after = trimmed.encode(text, add_special_tokens=False).tokens
    if before != after:
        at = next(i for i, (a, b) in enumerate(zip(before, after)) if a != b)
        raise SystemExit(f"the trimmed vocabulary tokenizes differently at token {at}: "
                         f"{before[at:at + 5]} vs {after[at:at + 5]}")
    print(f"the trimmed vocabulary tokenizes {len(before):,} validation tokens as before")


if __name__ == "__main__":
    main()
