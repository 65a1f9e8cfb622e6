"""Real Python with doctests, from PyPI packages and the standard library, cut into
programs that `neural-model dataset --corpus` traces.

A package module is rarely a program on its own: it imports its siblings and runs to
hundreds of lines. For every top-level function whose docstring holds a doctest call
(`>>> f(3)`), this writes the smallest module that still runs it: the function, the
top-level definitions, constants and standard-library imports it reaches by name,
transitively (following `from .sibling import name` to the definition), each in its
original text and order. A function that needs a name from outside the standard
library and its package, or that would bring two definitions of one name together, is
left out and counted. The dataset builder then traces each doctest call
under the tracer, as it does for the corpus, and drops what fails there.

    python3 model/scripts/registry_corpus.py --out data/registry
    neural-model dataset --out data/dataset-registry --generated 0 --corpus data/registry

Writes OUT/pypi/<package>/... and OUT/stdlib/...; the first folder is the episodes'
origin. Downloads go through pip (pinned versions below) into OUT-downloads, beside
OUT, since everything under OUT is read as programs.
"""

import argparse
import ast
import builtins
import collections
import doctest
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

# Pure-Python packages whose docstrings are full of doctests, pinned so that a build
# is reproducible.
PACKAGES = [
    "algorithms==1.0.1",
    "boltons==26.2.0",
    "more-itertools==11.2.1",
    "toolz==1.2.0",
    "pydash==8.1.0",
    "inflection==0.5.1",
    "python-string-utils==1.0.0",
    "humanize==4.17.0",
    "semver==3.1.2",
]

# Standard-library modules left out: their results depend on time, randomness, the
# machine or the network, or they are tests and tools rather than library code.
STDLIB_SKIP = {
    "random", "secrets", "uuid", "tempfile", "os", "subprocess", "socket", "threading",
    "multiprocessing", "asyncio", "shutil", "glob", "test", "idlelib", "tkinter",
    "turtledemo", "turtle", "ensurepip", "lib2to3", "site-packages", "venv", "pydoc",
    "pydoc_data", "doctest", "unittest", "time", "datetime", "_pydatetime", "locale",
    "getpass", "webbrowser", "http", "urllib", "smtplib", "ftplib", "imaplib", "poplib",
    "telnetlib", "xmlrpc", "sqlite3", "dbm", "concurrent", "distutils", "config-3",
    "encodings", "ctypes", "curses", "msilib", "platform", "sysconfig", "site",
}

BUILTINS = set(dir(builtins))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("data/registry"))
    parser.add_argument("--max-lines", type=int, default=120,
                        help="longest program written (its doctest calls' module)")
    parser.add_argument("--no-stdlib", action="store_true")
    parser.add_argument("--no-pypi", action="store_true")
    args = parser.parse_args()

    stdlib_names = set(sys.stdlib_module_names)
    counts = collections.Counter()
    if not args.no_pypi:
        for package, root in download(PACKAGES, args.out.with_name(args.out.name + "-downloads")):
            packages = {}  # a wheel may hold several top-level packages
            for path in sorted(root.rglob("*.py")):
                if any(part in ("tests", "test", "testing") for part in path.parts):
                    continue
                top = path.relative_to(root).parts[0].removesuffix(".py")
                if top not in packages:
                    packages[top] = Package(root, top, stdlib_names)
                module = packages[top].module(dotted_name(path, root))
                if module is None:
                    counts["modules unreadable"] += 1
                    continue
                cut_module(module, args.out / "pypi" / package, args.max_lines, counts)
    if not args.no_stdlib:
        root = Path(sysconfig.get_paths()["stdlib"])
        stdlib = Package(root, None, stdlib_names)
        for path in sorted(root.rglob("*.py")):
            top = path.relative_to(root).parts[0].removesuffix(".py")
            if top in STDLIB_SKIP or top.startswith(("test", "config-")):
                continue
            module = stdlib.module(dotted_name(path, root))
            if module is None:
                counts["modules unreadable"] += 1
                continue
            cut_module(module, args.out / "stdlib", args.max_lines, counts)
    for reason, n in sorted(counts.items()):
        print(f"{n:6} {reason}")


def dotted_name(path, root):
    """`a/b.py` -> `a.b`; `a/__init__.py` -> `a`."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def download(requirements, folder):
    """Each pinned package's wheel, unpacked: (name, folder) pairs."""
    folder.mkdir(parents=True, exist_ok=True)
    for requirement in requirements:
        name = requirement.split("==")[0]
        unpacked = folder / name
        if not unpacked.is_dir():
            wheels = folder / "wheels"
            subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                            "--only-binary", ":all:", "-d", str(wheels), requirement],
                           check=True)
            stem = name.replace("-", "_").lower()
            wheel = next(w for w in wheels.glob("*.whl") if w.name.lower().startswith(stem))
            zipfile.ZipFile(wheel).extractall(unpacked)
        yield name, unpacked


class Package:
    """The modules of one package (or of the standard library), parsed on demand, so
    that a cut can follow an import from a sibling module to the definition itself."""

    def __init__(self, root, top, stdlib_names):
        self.root, self.top, self.stdlib_names = root, top, stdlib_names
        self.modules = {}

    def module(self, dotted):
        """The parsed module `a.b` (root/a/b.py or root/a/b/__init__.py), or None."""
        if dotted not in self.modules:
            self.modules[dotted] = None
            base = self.root.joinpath(*dotted.split("."))
            for path in (base.with_suffix(".py"), base / "__init__.py"):
                if path.is_file():
                    try:
                        text = path.read_text(encoding="utf-8")
                        tree = ast.parse(text)
                    except (UnicodeDecodeError, SyntaxError, ValueError):
                        break
                    self.modules[dotted] = Module(dotted, path, text, tree, self)
                    break
        return self.modules[dotted]


class Module:
    """One source file: its text, its tree and what each top-level name is bound to."""

    def __init__(self, name, path, text, tree, package):
        self.name, self.path, self.tree, self.package = name, path, tree, package
        self.lines = text.splitlines()
        self.future_annotations = any(
            isinstance(n, ast.ImportFrom) and n.module == "__future__"
            and any(a.name == "annotations" for a in n.names) for n in tree.body)
        self.bindings = self.top_level_bindings()

    def top_level_bindings(self):
        """Name -> the top-level statement that binds it; (module, name) where it is
        imported by the same name from a sibling module; None where it comes from
        outside the standard library and the package (it cannot be cut out)."""
        bound = {}
        stdlib = self.package.stdlib_names
        for node in self.tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound[node.name] = node
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    for name in ast.walk(target):
                        if isinstance(name, ast.Name):
                            bound.setdefault(name.id, node)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    top = alias.name.split(".")[0]
                    bound[alias.asname or top] = node if top in stdlib else None
            elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
                source = self.imported_module(node)
                for alias in node.names:
                    local = alias.asname or alias.name
                    if node.level == 0 and (node.module or "").split(".")[0] in stdlib:
                        bound[local] = node
                    elif source and alias.asname in (None, alias.name) and alias.name != "*":
                        bound[local] = (source, alias.name)
                    else:
                        bound[local] = None
        return bound

    def imported_module(self, node):
        """The package-internal module that `from ... import` names, or None."""
        if node.level:
            parts = self.name.split(".")
            is_package = self.path.name == "__init__.py"
            base = parts[: len(parts) - node.level + (1 if is_package else 0)]
            return ".".join(base + ([node.module] if node.module else [])) or None
        if (node.module or "").split(".")[0] == self.package.top:
            return node.module
        return None

    def source_of(self, node):
        """The statement's text, decorators included."""
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        return "\n".join(self.lines[first - 1:node.end_lineno])


def cut_module(module, out, max_lines, counts):
    """Writes one program per top-level function of `module` that has doctest calls."""
    for node in module.tree.body:
        if not isinstance(node, ast.FunctionDef) or node.name.startswith("_"):
            continue
        calls = doctest_calls(node, module.bindings)
        if not calls:
            continue
        counts["functions with doctest calls"] += 1
        needed = closure(module, node, calls)
        if needed is None:
            counts["left out: needs a name from outside the standard library"] += 1
            continue
        program = assemble(needed)
        if program is None:
            counts["left out: two modules bind one name"] += 1
            continue
        if program.count("\n") > max_lines:
            counts[f"left out: over {max_lines} lines"] += 1
            continue
        try:
            compile(program, module.name, "exec")
        except SyntaxError:
            counts["left out: the cut does not compile"] += 1
            continue
        target = out / f"{module.name}.{node.name}.py"
        if target.exists():  # a wheel that ships one module twice (`m.py`, `m/__init__.py`)
            counts["left out: written already"] += 1
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(program, encoding="utf-8")
        counts["programs written"] += 1
        counts["doctest calls"] += len(calls)
        if len({m.name for m, _ in needed}) > 1:
            counts["programs that take definitions from sibling modules"] += 1


def doctest_calls(function, definitions):
    """The function's doctest examples that are one call of a top-level function whose
    arguments name only builtins and top-level definitions."""
    docstring = ast.get_docstring(function, clean=True)
    if not docstring or ">>>" not in docstring:
        return []
    try:
        examples = doctest.DocTestParser().get_examples(docstring)
    except ValueError:
        return []
    calls = []
    for example in examples:
        try:
            expr = ast.parse(example.source.strip(), mode="eval").body
        except SyntaxError:
            continue
        if not (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name)):
            continue
        if not isinstance(definitions.get(expr.func.id), ast.FunctionDef):
            continue
        names = {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)}
        if all(n in BUILTINS or definitions.get(n) is not None for n in names):
            calls.append(example.source.strip())
    return calls


def closure(module, function, calls):
    """The (module, top-level statement) pairs that `function` and its doctest calls
    reach by name, transitively across the package's modules, function included; None
    where one of them needs a name from outside the standard library and the package."""
    needed = [(module, function)]
    seen = {(module.name, id(function))}
    todo = [(module, function)] + [(module, ast.parse(c, mode="eval")) for c in calls]
    while todo:
        where, node = todo.pop()
        for name in ast.walk(node):
            if not isinstance(name, ast.Name) or name.id not in where.bindings:
                continue
            found = resolve(where, name.id)
            if found is None:
                return None
            if (found[0].name, id(found[1])) not in seen:
                seen.add((found[0].name, id(found[1])))
                needed.append(found)
                todo.append(found)
    return needed


def resolve(module, name, hops=8):
    """(module, statement) binding `name` in `module`, following sibling imports."""
    for _ in range(hops):
        binding = module.bindings.get(name)
        if not isinstance(binding, tuple):
            return None if binding is None else (module, binding)
        module = module.package.module(binding[0])
        if module is None or binding[1] not in module.bindings:
            return None
        name = binding[1]
    return None


def assemble(needed):
    """The program: each module's statements in file order, the modules a definition
    was taken from before the one that uses it; None where two modules' statements bind
    the same name (the cut would change what a name means)."""
    order = []
    for module, _ in reversed(needed):
        if module not in order:
            order.append(module)
    owner, parts, written = {}, [], set()
    if any(m.future_annotations for m in order):
        parts.append("from __future__ import annotations")
    for module in order:
        statements = {id(s) for m, s in needed if m is module}
        for node in module.tree.body:
            if id(node) not in statements:
                continue
            text = module.source_of(node)
            if text in written:
                continue  # the same import in two modules
            for name in bound_names(node):
                if owner.setdefault(name, module.name) != module.name:
                    return None
            written.add(text)
            parts.append(text)
    return "\n\n".join(parts) + "\n"


def bound_names(node):
    """The names a top-level statement binds."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [a.asname or a.name.split(".")[0] for a in node.names]
    return [n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]


if __name__ == "__main__":
    main()
