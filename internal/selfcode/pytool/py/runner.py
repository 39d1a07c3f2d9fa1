"""The runner for a shelldon Python tool (see the pytool package doc).

argv: mode ("test" or "call"), the tool's name, the per-test limit in seconds, and "1" if
the http capability is granted. The working directory holds <name>.py and test_<name>.py.

Results go to fd 3 as JSON lines, never to stdout, so what the tool prints cannot forge
them:
  test: {"event": "collected", "names": [...]}, then per test {"event": "start", "name"}
        and {"event": "result", "name", "ok", "message"}, then {"event": "done"};
        or {"event": "import_error", "message"}; or {"event": "abort", "message"}.
  call: {"event": "return", "value"} or {"event": "error", "message"}.
A call's arguments arrive on stdin as a JSON object.
"""

import importlib
import json
import os
import signal
import sys
import traceback
import types

MAX_MESSAGE = 2000
MAX_RESULT = 16 << 10
MAX_TESTS = 1000
RESULTS, HTTP_REQUESTS, HTTP_RESPONSES = 3, 4, 5

# Kept before the tool is imported, whatever it does to the modules afterwards.
_dumps, _loads, _write, _exit = json.dumps, json.loads, os.write, os._exit


def emit(event):
    data = (_dumps(event, ensure_ascii=True) + "\n").encode()
    while data:
        data = data[_write(RESULTS, data):]


def flush():
    for f in (sys.stdout, sys.stderr):
        try:
            f.flush()
        except BaseException:
            pass


def flush_and_exit():
    flush()
    _exit(0)  # no interpreter shutdown: no __del__ or atexit code of the tool runs after this


def host_module(granted):
    """shelldon_host: the host functions a tool may call. Each fails closed unless the Go
    side granted its capability. HOOK: http is the first; add others here and in Go."""
    mod = types.ModuleType("shelldon_host")
    responses = os.fdopen(HTTP_RESPONSES, "rb") if granted else None

    def http_get(url):
        """GET url through the host (granted hosts only). Returns (status, body)."""
        if not granted:
            raise PermissionError("http is not granted to this tool")
        if not isinstance(url, str):
            raise TypeError("http_get: url must be a string")
        data = (_dumps({"url": url}) + "\n").encode()
        while data:
            data = data[_write(HTTP_REQUESTS, data):]
        line = responses.readline()
        if not line:
            raise RuntimeError("http_get: the host closed the channel")
        answer = _loads(line)
        if answer.get("error"):
            raise RuntimeError("http_get %s: %s" % (url, answer["error"]))
        return answer["status"], answer["body"]

    mod.http_get = http_get
    return mod


def short(text, limit=MAX_MESSAGE):
    return text if len(text) <= limit else text[:limit] + " ... [truncated]"


def describe(exc):
    """An exception for the model: type, message, and where in the tool's own files."""
    try:
        msg = str(exc)
    except BaseException:
        msg = "(unprintable message)"
    if isinstance(exc, SyntaxError):
        where = "%s:%s:%s" % (os.path.basename(exc.filename or "?"), exc.lineno, exc.offset)
        return short("%s: SyntaxError: %s\n  %s" % (where, exc.msg, (exc.text or "").strip()))
    head = type(exc).__name__ + (": " + msg if msg else "")
    if isinstance(exc, AssertionError) and not msg:
        head = "AssertionError: assertion failed"
    here = os.getcwd()
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if os.path.isabs(f.filename) and os.path.dirname(f.filename) == here]
    lines = ["  at %s:%d in %s: %s" % (os.path.basename(f.filename), f.lineno, f.name, (f.line or "").strip())
             for f in frames[-5:]]
    return short("\n".join([head] + lines))


class Timeout(BaseException):
    """Raised into a test at its time limit; a BaseException so except Exception misses it."""


class Clock:
    """The per-test limit, with SIGALRM. If a test catches the Timeout and carries on, a
    second alarm after a grace period reports it and ends the run."""

    def __init__(self, limit):
        self.limit, self.grace = limit, min(max(limit / 4, 0.05), 1.0)
        self.current, self.fired = None, 0
        signal.signal(signal.SIGALRM, self.alarm)

    def start(self, name):
        self.current, self.fired = name, 0
        signal.setitimer(signal.ITIMER_REAL, self.limit)

    def stop(self):
        signal.setitimer(signal.ITIMER_REAL, 0)
        self.current = None

    def alarm(self, signum, frame):
        if self.current is None:
            return
        self.fired += 1
        if self.fired == 1:
            signal.setitimer(signal.ITIMER_REAL, self.grace)
            raise Timeout()
        emit({"event": "abort", "name": self.current, "message": "%s did not stop at its %gs "
              "time limit; the rest was not run" % (self.current, self.limit)})
        flush_and_exit()


def run_test(clock, name, fn):
    try:
        clock.start(name)
        try:
            result = fn()
            if isinstance(result, (types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType)):
                return False, "test functions must not be generators or async"
            if clock.fired:
                return False, "timed out after %gs (the test caught the timeout)" % clock.limit
            return True, ""
        except Timeout:
            return False, "timed out after %gs" % clock.limit
        except BaseException as e:  # SystemExit and KeyboardInterrupt too: the run goes on
            if clock.fired:
                return False, "timed out after %gs" % clock.limit
            return False, describe(e)
        finally:
            clock.stop()
    except Timeout:  # the alarm landed in the bookkeeping above
        clock.stop()
        return False, "timed out after %gs" % clock.limit


def main_test(name, limit):
    clock = Clock(limit)
    modname = "test_" + name
    try:
        clock.start(modname)
        try:
            mod = importlib.import_module(modname)
        finally:
            clock.stop()
    except Timeout:
        return emit({"event": "import_error", "message": "importing %s.py timed out after %gs" % (modname, limit)})
    except BaseException as e:
        return emit({"event": "import_error", "message": describe(e)})
    tests = [(k, v) for k, v in list(vars(mod).items())
             if k.startswith("test_") and isinstance(v, types.FunctionType) and v.__module__ == modname]
    tests = tests[:MAX_TESTS]
    emit({"event": "collected", "names": [k for k, _ in tests]})
    for k, fn in tests:
        emit({"event": "start", "name": k})
        ok, message = run_test(clock, k, fn)
        emit({"event": "result", "name": k, "ok": ok, "message": message})
        flush()
    emit({"event": "done"})


def as_text(result):
    if isinstance(result, str):
        return result
    try:
        return json.dumps(result, default=str, ensure_ascii=False)
    except BaseException:
        return str(result)


def main_call(name):
    try:
        args = _loads(sys.stdin.buffer.read() or b"{}")
        if not isinstance(args, dict):
            raise TypeError("the arguments must be a JSON object")
        run = getattr(importlib.import_module(name), "run", None)
        if not callable(run):
            raise TypeError("%s.py defines no run function" % name)
        text = as_text(run(**args))
    except BaseException as e:
        return emit({"event": "error", "message": describe(e)})
    truncated = len(text) > MAX_RESULT
    emit({"event": "return", "value": text[:MAX_RESULT], "truncated": truncated})


def main():
    mode, name, limit, http = sys.argv[1:5]
    for fd in (RESULTS, HTTP_REQUESTS, HTTP_RESPONSES):
        try:
            os.set_inheritable(fd, False)  # a child process the tool starts gets none of them
        except OSError:
            pass
    sys.argv = [name]
    sys.path.insert(0, os.getcwd())
    sys.modules["shelldon_host"] = host_module(http == "1")
    if mode == "test":
        main_test(name, float(limit))
    else:
        main_call(name)
    flush_and_exit()


main()
