"""Regenerates the PyTorch parity fixtures in model/tests/fixtures/.

Each fixture is a tiny random `transformers.LlamaForCausalLM` saved with
`save_pretrained` (config.json + model.safetensors) and `expected.json`: a token
sequence and the logits PyTorch computes for it. The Rust test `tests/parity.rs`
loads the checkpoint with our burn model and compares logits.

Weights are drawn larger than Llama's usual init (std 0.02) so that every part of the
computation (rotary embeddings, norms, grouped heads) moves the logits well above the
test tolerance.

    python3 -m venv /tmp/pyref && /tmp/pyref/bin/pip install torch transformers safetensors
    /tmp/pyref/bin/python model/scripts/make_parity_fixture.py [NAME ...]

With names, only those fixtures are made (each keeps its seed), so that the others
stay byte for byte as committed.
"""

import json
import pathlib
import sys

import torch
import transformers
from transformers import LlamaConfig, LlamaForCausalLM

FIXTURES = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures"

VARIANTS = {
    # Grouped-query attention (4 query heads over 2 key/value heads), separate lm_head, f32.
    "tiny-llama-gqa": dict(
        config=dict(
            vocab_size=64,
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            max_position_embeddings=64,
            rms_norm_eps=1e-5,
            rope_theta=500.0,
            tie_word_embeddings=False,
        ),
        dtype=torch.float32,
    ),
    # One key/value head, tied embeddings, stored as bfloat16.
    "tiny-llama-tied-bf16": dict(
        config=dict(
            vocab_size=64,
            hidden_size=16,
            intermediate_size=40,
            num_hidden_layers=1,
            num_attention_heads=2,
            num_key_value_heads=1,
            max_position_embeddings=64,
            rms_norm_eps=1e-6,
            rope_theta=10000.0,
            tie_word_embeddings=True,
        ),
        dtype=torch.bfloat16,
    ),
}

# Llama 3's rotary scaling (as Llama 3.1 and CWM use it), with the wavelengths placed so
# that a head of 8 has frequencies kept, blended and slowed (original context 32 tokens:
# low-frequency wavelength 32, high 8).
LLAMA3_ROPE = dict(
    rope_type="llama3",
    rope_theta=500.0,
    factor=8.0,
    low_freq_factor=1.0,
    high_freq_factor=4.0,
    original_max_position_embeddings=32,
)

VARIANTS["tiny-llama3-rope"] = dict(
    config=dict(
        VARIANTS["tiny-llama-gqa"]["config"],
        rope_parameters=LLAMA3_ROPE,
    ),
    dtype=torch.float32,
)
del VARIANTS["tiny-llama3-rope"]["config"]["rope_theta"]

# CWM's trace tokens (ids 128100-128107 in the real vocabulary; here after the BPE's).
CWM_SPECIAL = [
    "<|trace_context_start|>",
    "<|frame_sep|>",
    "<|call_sep|>",
    "<|line_sep|>",
    "<|return_sep|>",
    "<|exception_sep|>",
    "<|action_sep|>",
    "<|arg_sep|>",
]
CWM_VOCAB = 300
# A prompt in CWM's trace format, continued greedily by the reference for the test.
CWM_PROMPT = (
    "<|trace_context_start|>def f(x):\n    return x + 1  # << START_OF_TRACE\n"
    '<|frame_sep|><|call_sep|>{"x": "2"}<|action_sep|>'
)
CWM_CONTINUATION = 16

# Meta's Code World Model's architecture (transformers' CwmForCausalLM): Llama 3's
# rotary scaling, untied embeddings and sliding-window layers, here a window of 5
# positions, shorter than the 12 tokens, in two of three layers.
VARIANTS["tiny-cwm"] = dict(
    kind="cwm",
    config=dict(
        VARIANTS["tiny-llama-gqa"]["config"],
        vocab_size=CWM_VOCAB,
        num_hidden_layers=3,
        head_dim=8,
        sliding_window=5,
        layer_types=["full_attention", "sliding_attention", "sliding_attention"],
        rope_parameters=LLAMA3_ROPE,
    ),
    dtype=torch.float32,
)
del VARIANTS["tiny-cwm"]["config"]["rope_theta"]

TOKENS = [1, 17, 42, 5, 63, 0, 8, 8, 30, 12, 50, 3]


def llama3_tokenizer(vocab_size, special):
    """A byte-level BPE with Llama 3's pre-tokenizer (its split pattern, then bytes),
    trained on a little Python, with `special` added after it: the kind of
    tokenizer.json a Llama-3-family checkpoint ships, small enough to commit."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers

    split = (
        r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
        r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
    )
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(split), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size - len(special),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    text = [
        "def f(x):\n    return x + 1\n",
        'for i in range(10):\n    print(i, "x")\n',
        '{"x": "2", "y": "[1, 2, 3]"}\n' * 3,
    ]
    tokenizer.train_from_iterator(text, trainer)
    tokenizer.add_special_tokens(special)
    assert tokenizer.get_vocab_size() == vocab_size, tokenizer.get_vocab_size()
    return tokenizer


def greedy(model, ids, count):
    """`count` tokens after `ids`, each the likeliest (no sampling, no stop)."""
    ids = list(ids)
    with torch.no_grad():
        for _ in range(count):
            logits = model(torch.tensor([ids])).logits[0, -1]
            ids.append(int(logits.argmax()))
    return ids


def classes(spec):
    if spec.get("kind") == "cwm":
        return transformers.CwmConfig, transformers.CwmForCausalLM
    return LlamaConfig, LlamaForCausalLM


def build(name, spec, seed):
    torch.manual_seed(seed)
    config_class, model_class = classes(spec)
    config = config_class(**spec["config"], attn_implementation="eager")
    model = model_class(config).eval()
    with torch.no_grad():
        for pname, p in model.named_parameters():
            if pname.endswith("norm.weight"):
                p.copy_(1.0 + 0.2 * torch.randn_like(p))
            else:
                p.normal_(0.0, 0.3)

    out = FIXTURES / name
    out.mkdir(parents=True, exist_ok=True)
    model.to(spec["dtype"]).save_pretrained(out, safe_serialization=True)

    # The reference is what PyTorch computes from the checkpoint as stored, loaded in
    # float32 (for bf16 this also keeps the rotary frequencies in float32, as a fresh
    # load does, instead of the rounded copy `model.to(bfloat16)` would leave).
    reference = model_class.from_pretrained(out, dtype=torch.float32, attn_implementation="eager")
    with torch.no_grad():
        logits = reference.eval()(torch.tensor([TOKENS])).logits[0]
    (out / "expected.json").write_text(
        json.dumps(
            {
                "generated_by": f"transformers {transformers.__version__}, torch {torch.__version__}",
                "tokens": TOKENS,
                "logits": [[round(float(x), 7) for x in row] for row in logits],
            }
        )
    )
    if spec.get("kind") == "cwm":
        # Its tokenizer, and a greedy continuation of a CWM-format prompt.
        tokenizer = llama3_tokenizer(spec["config"]["vocab_size"], CWM_SPECIAL)
        tokenizer.save(str(out / "tokenizer.json"))
        prompt = tokenizer.encode(CWM_PROMPT, add_special_tokens=False).ids
        tokens = greedy(reference, prompt, CWM_CONTINUATION)
        (out / "continuation.json").write_text(
            json.dumps(
                {
                    "prompt": CWM_PROMPT,
                    "prompt_tokens": prompt,
                    "continuation": tokens[len(prompt) :],
                    "text": tokenizer.decode(tokens[len(prompt) :], skip_special_tokens=False),
                }
            )
        )
    # save_pretrained may write a generation_config.json we do not need.
    (out / "generation_config.json").unlink(missing_ok=True)
    print(name, "max |logit|", float(logits.abs().max()))


if __name__ == "__main__":
    wanted = sys.argv[1:]
    for i, (name, spec) in enumerate(VARIANTS.items()):
        if not wanted or name in wanted:
            build(name, spec, seed=i)
