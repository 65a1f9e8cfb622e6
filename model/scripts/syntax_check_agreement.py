"""How often `neural-model check-syntax` agrees with this machine's python3.

Breaks programs at random (drops a closing bracket, a header's colon, a quote;
indents or dedents a line; doubles an `=`), asks python3's compile() and the checker
about each, and prints the agreement. Programs come from the .py files under the
folders given (for example ../shared/corpus). Run from the repository root:

    python3 model/scripts/syntax_check_agreement.py ../shared/corpus
"""

import json
import os
import random
import re
import subprocess
import sys
import tempfile

CHECKER = "target/release/neural-model"


def mutate(text, rng):
    lines = text.split("\n")
    for _ in range(20):
        j = rng.randrange(len(lines))
        line, kind = lines[j], rng.choice(["paren", "colon", "indent", "dedent", "quote", "op"])
        if kind == "paren" and ")" in line:
            k = line.rfind(")")
            line = line[:k] + line[k + 1 :]
        elif kind == "colon" and line.rstrip().endswith(":"):
            line = line.rstrip()[:-1]
        elif kind == "indent" and line.strip():
            line = "  " + line
        elif kind == "dedent" and line.startswith("    "):
            line = line[2:]
        elif kind == "quote" and "'" in line:
            k = line.find("'")
            line = line[:k] + line[k + 1 :]
        elif kind == "op" and " = " in line:
            line = line.replace(" = ", " = = ", 1)
        else:
            continue
        lines[j] = line
        return "\n".join(lines)
    return None


def python_error(text):
    try:
        compile(text, "program.py", "exec")
        return None
    except (SyntaxError, ValueError) as error:
        return getattr(error, "lineno", None) or 0


def main(folders, count=1500, seed=1):
    rng = random.Random(seed)
    sources = []
    for folder in folders:
        for root, _, names in os.walk(folder):
            for name in sorted(names):
                if name.endswith(".py"):
                    try:
                        with open(os.path.join(root, name), encoding="utf-8") as f:
                            text = f.read()
                    except (OSError, UnicodeDecodeError):
                        continue
                    if text.strip() and python_error(text) is None:
                        sources.append(text)
    rng.shuffle(sources)
    with tempfile.TemporaryDirectory() as tmp:
        cases = []
        for i, text in enumerate(sources[:count]):
            broken = mutate(text, rng)
            if broken is None:
                continue
            path = os.path.join(tmp, "case%05d.py" % i)
            with open(path, "w", encoding="utf-8") as f:
                f.write(broken)
            cases.append((path, python_error(broken)))
        flagged = {}
        for start in range(0, len(cases), 200):
            paths = [p for p, _ in cases[start : start + 200]]
            out = subprocess.run([CHECKER, "check-syntax", *paths], capture_output=True, text=True)
            for line in out.stdout.splitlines():
                path, _, problem = line.partition(": ")
                found = re.search(r"\(line (\d+)\)$", problem)
                flagged[path] = int(found.group(1)) if found else None
        rejected = [(p, line) for p, line in cases if line is not None]
        accepted = [p for p, line in cases if line is None]
        caught = [p for p, _ in rejected if p in flagged]
        same_line = [p for p, line in rejected if flagged.get(p) == line]
        print(json.dumps({
            "python": sys.version.split()[0],
            "programs": len(sources),
            "broken_cases": len(cases),
            "python_rejects": len(rejected),
            "checker_flags_of_those": len(caught),
            "same_line_as_python": len(same_line),
            "python_accepts": len(accepted),
            "checker_flags_of_those_wrongly": sum(p in flagged for p in accepted),
        }, indent=1))


if __name__ == "__main__":
    main(sys.argv[1:] or ["../shared/corpus"])
