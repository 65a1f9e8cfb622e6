"""Run one Python program under sys.settrace and write its events as JSON lines.

Embedded in the neural-model binary and run as `python3 -I -S -c SOURCE ARGS_FILE`
(ARGS_FILE: a JSON object). Events go to the file ARGS["events"], one JSON object per
line; it is not inherited by programs the debuggee runs, and a forked child writes
nothing to it. The program's own stdout is captured and attached to the next event as
`stdout`. The last line is always an `exit` (normal / error / never; `os._exit` too)
or a `fatal` (the program could not be run at all).

Choices (mirrored in the Rust docs):
- Only frames of the program's own file are traced. Comprehensions, generator
  expressions and lambdas are not frames of their own: they run within the line that
  holds them (as comprehensions do since Python 3.12); functions they call are traced.
- A frame left by an exception ends with its `exception` event: Python's `return`
  event that follows it (always with value None) is not written.
- Locals and globals leave out dunder names, modules, and functions and classes held
  under their own name (what `def` and `class` bind): the source already shows those.
  A function held under another name (`add2 = make_adder(2)`) is data and is shown.
"""

import io
import json
import os
import sys
import threading
import time
import types

with open(sys.argv[1], encoding="utf-8") as args_file:
    ARGS = json.load(args_file)
PATH = ARGS["path"]
CALL = ARGS.get("call")
PROGRAM_ARGS = ARGS.get("args") or []
CWD = ARGS.get("cwd")
MAX_EVENTS = ARGS["max_events"]
MAX_SECONDS = ARGS["max_seconds"]
MAX_STDOUT = ARGS["max_stdout"]
MAX_DEPTH = ARGS["max_depth"]
MAX_REPR = ARGS["max_repr"]

CUT = "\u2026"  # marks a repr that was cut at MAX_REPR characters
HIDDEN_TYPES = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type)
INLINE_CODE = {"<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>", "<lambda>"}

# Line-buffered: a run killed in a C loop (where no event fires) keeps its events.
EVENTS = open(ARGS["events"], "w", encoding="utf-8", buffering=1)
EMIT_LOCK = threading.Lock()
REAL_EXIT = os._exit
IN_FORKED_CHILD = False  # a child of os.fork() runs on untraced and writes no events


def emit(record):
    if IN_FORKED_CHILD:
        return
    line = json.dumps(record, ensure_ascii=False) + "\n"
    with EMIT_LOCK:
        EVENTS.write(line)


def forked_child():
    global IN_FORKED_CHILD
    IN_FORKED_CHILD = True
    sys.settrace(None)


os.register_at_fork(after_in_child=forked_child)


class Captured(io.TextIOBase):
    """The program's stdout: kept until the next event, capped at MAX_STDOUT in all."""

    def __init__(self):
        self.parts = []
        self.total = 0
        self.cut = False

    def writable(self):
        return True

    def write(self, text):
        if not isinstance(text, str):
            raise TypeError("write() argument must be str, not " + type(text).__name__)
        room = MAX_STDOUT - self.total
        if len(text) > room:
            if not self.cut:
                self.parts.append(text[: max(room, 0)] + "\n[stdout cut at %d characters]\n" % MAX_STDOUT)
                self.cut = True
            self.total = MAX_STDOUT
        else:
            self.parts.append(text)
            self.total += len(text)
        return len(text)

    def take(self):
        text = "".join(self.parts)
        self.parts = []
        return text


class Budget(BaseException):
    """The run went over a limit: it counts as not terminating."""


# ---- stable reprs --------------------------------------------------------------


class Builder:
    """Builds a repr piece by piece and stops early once it is longer than MAX_REPR."""

    def __init__(self):
        self.parts = []
        self.size = 0

    def add(self, text):
        self.parts.append(text)
        self.size += len(text)
        return self.size <= MAX_REPR

    def text(self):
        text = "".join(self.parts)
        return text if len(text) <= MAX_REPR else text[:MAX_REPR] + CUT


def has_own_repr(value):
    return type(value).__repr__ is not object.__repr__


def write_repr(value, out, active):
    """Append a repr of value to out; False once out is full. `active` guards cycles."""
    kind = type(value)
    if kind in (int, float, bool, str, bytes, complex, type(None)):
        return out.add(repr(value))
    if kind in (list, tuple, set, frozenset, dict) or (
        isinstance(value, (list, tuple, dict, set, frozenset)) and not has_own_repr(value)
    ):
        if id(value) in active:
            return out.add({list: "[...]", dict: "{...}"}.get(kind, "..."))
        active.add(id(value))
        try:
            return write_container(value, kind, out, active)
        finally:
            active.discard(id(value))
    if isinstance(value, BaseException):
        return out.add(safe_repr(value))
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, types.MethodType)):
        return out.add("<function %s>" % getattr(value, "__qualname__", "?"))
    if isinstance(value, type):
        return out.add("<class %s>" % value.__qualname__)
    if isinstance(value, types.ModuleType):
        return out.add("<module %s>" % value.__name__)
    if isinstance(value, types.GeneratorType):
        return out.add("<generator %s>" % value.__qualname__)
    if has_own_repr(value):
        return out.add(safe_repr(value))
    return write_object(value, out, active)


def write_container(value, kind, out, active):
    if isinstance(value, dict):
        if not out.add("{"):
            return False
        for i, (k, v) in enumerate(value.items()):
            if (i and not out.add(", ")) or not write_repr(k, out, active):
                return False
            if not out.add(": ") or not write_repr(v, out, active):
                return False
        return out.add("}")
    if isinstance(value, (set, frozenset)):
        if not value:
            return out.add("set()" if isinstance(value, set) else "frozenset()")
        items = list(value)
        open_, close = ("{", "}") if isinstance(value, set) else ("frozenset({", "})")
    elif isinstance(value, tuple):
        items = value
        open_, close = "(", ",)" if len(value) == 1 else ")"
    else:
        items = value
        open_, close = "[", "]"
    if not out.add(open_):
        return False
    for i, item in enumerate(items):
        if (i and not out.add(", ")) or not write_repr(item, out, active):
            return False
    return out.add(close)


def write_object(value, out, active):
    """An object with Python's default repr (which shows an address): its fields."""
    name = type(value).__name__
    fields = getattr(value, "__dict__", None)
    if not isinstance(fields, dict):
        slots = [s for c in type(value).__mro__ for s in getattr(c, "__slots__", ())]
        fields = {s: getattr(value, s) for s in slots if isinstance(s, str) and hasattr(value, s)}
    if id(value) in active:
        return out.add(name + "(...)")
    active.add(id(value))
    try:
        if not out.add(name + "("):
            return False
        for i, (k, v) in enumerate(fields.items()):
            if (i and not out.add(", ")) or not out.add(str(k) + "="):
                return False
            if not write_repr(v, out, active):
                return False
        return out.add(")")
    finally:
        active.discard(id(value))


def safe_repr(value):
    try:
        text = repr(value)
    except Exception as error:  # a user __repr__ that fails must not stop the trace
        return "<%s object (repr failed: %s)>" % (type(value).__name__, type(error).__name__)
    if not isinstance(text, str):
        return "<%s object>" % type(value).__name__
    if " at 0x" in text:  # an address would make the trace differ between runs
        return "<%s object>" % type(value).__name__
    return text


def stable_repr(value):
    out = Builder()
    try:
        write_repr(value, out, set())
    except Exception as error:
        return "<%s object (repr failed: %s)>" % (type(value).__name__, type(error).__name__)
    return out.text()


def is_definition(name, value):
    """Names bound by def, class or import: the source already shows them."""
    if isinstance(value, types.ModuleType):
        return True
    return isinstance(value, HIDDEN_TYPES) and getattr(value, "__name__", None) == name


def shown(names):
    return {
        k: stable_repr(v)
        for k, v in names.items()
        if not (k.startswith("__") and k.endswith("__")) and not is_definition(k, v)
    }


# ---- the tracer ------------------------------------------------------------------


class Tracer:
    def __init__(self, code_filename, captured):
        self.filename = code_filename
        self.captured = captured
        self.events = 0
        self.deadline = time.monotonic() + MAX_SECONDS
        self.depth = {}  # id(frame) -> depth of a traced frame
        self.last = {}  # id(frame) -> last event written for it
        self.module_globals = None
        self.over = None  # the Budget reason once the run went over a limit

    def frame_depth(self, frame):
        """Depth of frame among traced frames (None if frame is not traced)."""
        parent = frame.f_back
        while parent is not None and id(parent) not in self.depth:
            parent = parent.f_back
        return 0 if parent is None else self.depth[id(parent)] + 1

    def traced(self, frame):
        code = frame.f_code
        return code.co_filename == self.filename and code.co_name not in INLINE_CODE

    def write(self, frame, event, value=None):
        self.events += 1
        now = time.monotonic()
        if self.events > MAX_EVENTS:
            self.over = "more than %d events" % MAX_EVENTS
        elif now > self.deadline:
            self.over = "ran longer than %g seconds" % MAX_SECONDS
        if self.over:
            raise Budget(self.over)
        record = {
            "event": event,
            "line": frame.f_lineno or frame.f_code.co_firstlineno or 1,
            "function": frame.f_code.co_name,
            "depth": self.depth[id(frame)],
            "locals": shown(frame.f_locals),
        }
        if frame.f_globals is not frame.f_locals and self.module_globals is not None:
            data = shown(frame.f_globals)
            if data:
                record["globals"] = data
        if event in ("return", "exception"):
            record["value"] = value
        text = self.captured.take()
        if text:
            record["stdout"] = text
        emit(record)
        self.last[id(frame)] = event

    def global_trace(self, frame, event, arg):
        if event != "call" or not self.traced(frame):
            return None
        depth = self.frame_depth(frame)
        if depth >= MAX_DEPTH:
            # Raising here turns tracing off; the profile hook turns it back on as
            # soon as the error leaves this frame, so the unwinding is traced.
            sys.setprofile(self.revive)
            raise RecursionError("maximum recursion depth exceeded")
        self.depth[id(frame)] = depth
        self.write(frame, "call")
        return self.local_trace

    def revive(self, frame, event, arg):
        sys.setprofile(None)
        sys.settrace(self.global_trace)

    def local_trace(self, frame, event, arg):
        if event == "line":
            self.write(frame, "line")
        elif event == "exception":
            self.write(frame, "exception", stable_repr(arg[1]))
        elif event == "return":
            if self.last.get(id(frame)) != "exception":
                self.write(frame, "return", stable_repr(arg))
            self.depth.pop(id(frame), None)
            self.last.pop(id(frame), None)
        return self.local_trace


def fatal(kind, message, line=None):
    record = {"event": "fatal", "type": kind, "message": message}
    if line is not None:
        record["line"] = line
    emit(record)


def run():
    try:
        with open(PATH, "rb") as f:
            source_bytes = f.read()
    except OSError as error:
        return fatal(type(error).__name__, "cannot read %s: %s" % (PATH, error.strerror))
    try:
        code = compile(source_bytes, PATH, "exec", dont_inherit=True)
        call_code = compile(CALL, "<call>", "eval", dont_inherit=True) if CALL else None
    except SyntaxError as error:
        where = "the call expression" if error.filename == "<call>" else PATH
        return fatal("SyntaxError", "%s (%s, line %s)" % (error.msg, where, error.lineno), error.lineno)
    except ValueError as error:  # e.g. null bytes
        return fatal("ValueError", str(error))

    global CAPTURED
    captured = CAPTURED = Captured()
    sys.stdout = captured
    os._exit = traced_exit
    sys.stdin = io.StringIO("")  # a traced program cannot wait for input
    tracer = Tracer(PATH, captured)
    module = types.ModuleType("__main__")
    module.__file__ = PATH
    module.__builtins__ = __builtins__
    sys.modules["__main__"] = module
    sys.path.insert(0, os.path.dirname(os.path.abspath(PATH)))
    sys.argv = [PATH] + list(PROGRAM_ARGS)
    if CWD:
        try:
            os.chdir(CWD)
        except OSError as error:
            return fatal(type(error).__name__, "cannot run in %s: %s" % (CWD, error.strerror))
    outcome = {}

    def body():
        try:
            if call_code is None:
                tracer.module_globals = module.__dict__
                sys.settrace(tracer.global_trace)
                exec(code, module.__dict__)
            else:
                exec(code, module.__dict__)  # definitions run untraced
                captured.take()  # and what they print is not part of the call
                tracer.module_globals = module.__dict__
                sys.settrace(tracer.global_trace)
                eval(call_code, module.__dict__)
            sys.settrace(None)
            outcome["exit"] = {"kind": "normal"}
            if tracer.over:  # the program caught the Budget exception itself
                outcome["exit"] = {"kind": "never", "reason": tracer.over}
        except Budget as reason:
            sys.settrace(None)
            outcome["exit"] = {"kind": "never", "reason": str(reason)}
        except SystemExit as error:
            sys.settrace(None)
            code_ = error.code
            if code_ is None or code_ == 0:
                outcome["exit"] = {"kind": "normal"}
            else:
                message = str(int(code_)) if isinstance(code_, int) else str(code_)
                outcome["exit"] = {"kind": "error", "type": "SystemExit", "message": message}
        except BaseException as error:
            sys.settrace(None)
            if tracer.over:
                outcome["exit"] = {"kind": "never", "reason": tracer.over}
            else:
                outcome["exit"] = {"kind": "error", "type": type(error).__name__, "message": message_of(error)}

    # Deep recursion needs a deep C stack: run the program on a thread that has one.
    sys.setrecursionlimit(MAX_DEPTH + 200)
    threading.stack_size(512 * 1024 * 1024)
    worker = threading.Thread(target=body, daemon=True)
    worker.start()
    # The tracer's clock only ticks at events; this one also ends a program that waits
    # where no event fires (a long sleep). A loop holding the GIL in C code is left to
    # the Rust side, which kills the process.
    worker.join(MAX_SECONDS + 0.5)
    if worker.is_alive():
        with EMIT_LOCK:  # held until exit: the worker writes nothing more
            record = {"event": "exit", "kind": "never", "reason": "ran longer than %g seconds" % MAX_SECONDS}
            EVENTS.write(json.dumps(record) + "\n")
            EVENTS.flush()
            REAL_EXIT(0)
    exit_record = {"event": "exit"}
    exit_record.update(outcome.get("exit", {"kind": "error", "type": "InternalError", "message": "the tracer stopped"}))
    text = captured.take()
    if text:
        exit_record["stdout"] = text
    emit(exit_record)


def traced_exit(status):
    """os._exit as the program sees it: the run ends here, with an exit record."""
    if not IN_FORKED_CHILD:
        sys.settrace(None)
        record = {"event": "exit", "kind": "normal"}
        if status != 0:
            record = {"event": "exit", "kind": "error", "type": "SystemExit", "message": str(status)}
        text = CAPTURED.take() if CAPTURED else ""
        if text:
            record["stdout"] = text
        emit(record)
        EVENTS.flush()
    REAL_EXIT(status)


def message_of(error):
    try:
        return str(error)
    except Exception:
        return ""


CAPTURED = None
run()
EVENTS.flush()
REAL_EXIT(0)
