"""Regenerates model/tests/fixtures/cwm-dialect/cases.json from CWM's own code.

For a few programs and traces, it runs the prompt building and reply reading of
CWM's demo debugger (`demos/cwmdbg.py` of github.com/facebookresearch/cwm,
`CWMDebugger._step`) with its network call and its tokenizer stood in for: the
tokenizer gives each encoded text an id of its own, so the prompt comes back as the
demo's sequence of special tokens and separately encoded texts, and the stand-in
server answers with a canned CWM-style frame. The Rust test `cwm_dialect` builds the
same prompts with `neural_model::cwm` and reads the same replies.

    python3 model/scripts/make_cwm_fixtures.py PATH/TO/cwm
"""

import json
import pathlib
import sys
import types

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "cwm-dialect"

SPECIAL = {
    0: "<|begin_of_text|>",
    1: "<|trace_context_start|>",
    2: "<|frame_sep|>",
    3: "<|call_sep|>",
    4: "<|line_sep|>",
    5: "<|return_sep|>",
    6: "<|exception_sep|>",
    7: "<|action_sep|>",
    8: "<|arg_sep|>",
    9: "<|end_of_text|>",
}


class StandInTokenizer:
    """Each encoded text becomes one id of its own; special tokens keep theirs."""

    bos_id, trace_context_start_id, frame_sep_id = 0, 1, 2
    FRAME_SEP_ID = 2
    call_sep_id, line_sep_id, return_sep_id, exception_sep_id = 3, 4, 5, 6
    action_sep_id, arg_sep_id, eos_id = 7, 8, 9

    def __init__(self):
        self.texts = {}

    def encode(self, text):
        token = 1000 + len(self.texts)
        self.texts[token] = text
        return [token]

    def decode(self, tokens, cut_at_stop_tokens=True):
        return "".join(self.texts.get(t, SPECIAL.get(t, "")) for t in tokens)

    def pieces(self, tokens):
        return [
            {"special": SPECIAL[t]} if t in SPECIAL else {"text": self.texts[t]}
            for t in tokens
        ]


def load_demo(repo):
    """Imports demos/cwmdbg.py with its tokenizer module and `requests` stood in for."""
    requests = types.ModuleType("requests")
    tokenizers = types.ModuleType("cwm.text.tokenizers")
    tokenizers.CWMInstructTokenizer = StandInTokenizer
    tokenizers.build_tokenizer = lambda **_: StandInTokenizer()
    sys.modules["requests"] = requests
    for name in ["cwm", "cwm.text"]:
        sys.modules.setdefault(name, types.ModuleType(name))
    sys.modules["cwm.text.tokenizers"] = tokenizers
    sys.path.insert(0, str(pathlib.Path(repo) / "demos"))
    import cwmdbg

    return cwmdbg, requests


MARK = "  # << START_OF_TRACE"

CASES = [
    dict(
        name="a call, then its first line, forced to a line",
        source="def f(x):\n    y = x + 1\n    return y\n\nf(2)\n",
        entry=1,
        frames=[("CALL", {"x": "2"}, "def f(x):\n", None)],
        forced="LINE",
        # The forced event is the prompt's: the reply goes on after it.
        reply=[("text", '{"x": ".."}'), ("special", "<|action_sep|>"),
               ("text", "    y = x + 1\n"), ("special", "<|frame_sep|>")],
    ),
    dict(
        name="a line with changed and unchanged locals, the model picks a return",
        source="def f(x):\n    y = x + 1\n    return y\n\nf(2)\n",
        entry=1,
        frames=[
            ("CALL", {"x": "2"}, "def f(x):\n", None),
            ("LINE", {"x": ".."}, "    y = x + 1\n", None),
            ("LINE", {"x": "..", "y": "3"}, "    return y\n", None),
        ],
        forced=None,
        reply=[("special", "<|return_sep|>"), ("special", "<|action_sep|>"), ("text", "    return y\n"),
               ("special", "<|arg_sep|>"), ("text", '"3"'), ("special", "<|frame_sep|>")],
    ),
    dict(
        name="non-ASCII values and quotes, an exception frame",
        source="def g(s):\n    t = s + 'é'\n    raise ValueError(t)\n\ng('ü\"')\n",
        entry=1,
        frames=[
            ("CALL", {"s": "'ü\"'"}, "def g(s):\n", None),
            ("LINE", {"s": "..", "t": "'ü\"é'"}, "    raise ValueError(t)\n", None),
            ("EXCEPTION", {}, "    raise ValueError(t)\n", "ValueError('ü\"é')"),
        ],
        forced=None,
        reply=[("special", "<|end_of_text|>")],
    ),
]


def run(cwmdbg, requests, case):
    tokenizer = StandInTokenizer()
    source = case["source"].splitlines(keepends=True)
    source[case["entry"] - 1] = source[case["entry"] - 1].rstrip("\n") + MARK + "\n"
    context = "".join(source)
    debugger = cwmdbg.CWMDebugger(context, tokenizer, "stand-in", 0)
    for event, local_vars, line, arg in case["frames"]:
        debugger.frames.append(
            cwmdbg.CWMTraceFrame(
                event=cwmdbg.CWMTraceEvent[event],
                source_line=line,
                local_vars=local_vars,
                arg=arg,
                line_no=None,
                prev=debugger.frames[-1] if debugger.frames else None,
            )
        )
    ids = {v: k for k, v in SPECIAL.items()}
    reply = [ids[x] if kind == "special" else tokenizer.encode(x)[0] for kind, x in case["reply"]]
    sent = {}

    class Answer:
        def json(self):
            return {"choices": [{"tokens": reply}]}

    def post(url, json):
        sent["prompt"] = list(json["prompt"])
        return Answer()

    requests.post = post
    before = len(debugger.frames)
    forced = case["forced"] and cwmdbg.CWMTraceEvent[case["forced"]]
    debugger._step(forced)
    if len(debugger.frames) > before:
        frame = debugger.frames[-1]
        read = dict(
            event=frame.event.name,
            source_line=frame.source_line,
            local_vars=frame.local_vars,
            arg=frame.arg,
            line_no=frame.line_no,
        )
    else:
        read = dict(final=debugger.current_frame.final)
    return dict(
        name=case["name"],
        context=context,
        frames=[dict(event=e, local_vars=v, source_line=s, arg=a) for e, v, s, a in case["frames"]],
        forced=case["forced"],
        prompt=tokenizer.pieces(sent["prompt"]),
        reply=[{kind: x} for kind, x in case["reply"]],
        read=read,
    )


if __name__ == "__main__":
    cwmdbg, requests = load_demo(sys.argv[1])
    cases = [run(cwmdbg, requests, case) for case in CASES]
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "cases.json").write_text(json.dumps(cases, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {len(cases)} cases to {OUT / 'cases.json'}")
