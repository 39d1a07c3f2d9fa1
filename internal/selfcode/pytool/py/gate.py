"""The gate's prelude (see Gate in the pytool package): the static checks and the test run
in one interpreter. The Go side runs this file followed by runner.py as one script, with
argv "gate", the tool's name, the per-test limit, "0" and the allowlist, through load.py,
which leaves the checker's code (compiled ahead, or by load.py), the cache's analyses of the
allowed modules (or None) and the checker's request in shelldon_gate_input.

The checker runs first, in a namespace of its own (so none of its code is the runner's:
the runner's guard trusts only the code objects of this script's top level),
before the runner arms its guard and before the tool or its test is imported; the checker
never imports them either. Its answer goes to fd 3 as the first event,
{"event": "check", "result": {"problems", "meta"}, "seconds"}. If it refused the tool the
process ends there; otherwise runner.py, which follows, runs the test as in mode "test".
Nothing of the checker is a boundary: the test runs inside the same kernel sandbox either
way.
"""


def shelldon_gate():
    import gc
    import os
    import sys
    import time

    if sys.argv[1:2] != ["gate"]:
        return
    start = time.monotonic()
    code, analyses, raw = globals().pop("shelldon_gate_input")
    req = shelldon_json_loads(raw)
    checker = {"__name__": "shelldon_check"}
    exec(code, checker)
    del code
    if analyses is not None:
        checker["ANALYSES"] = analyses  # the cache's analyses of the allowed modules
    del analyses
    out = checker["check_request"](req)
    del checker
    line = shelldon_json_dumps({"event": "check", "result": out, "seconds": time.monotonic() - start}) + "\n"
    data = line.encode("ascii")
    while data:
        data = data[os.write(3, data):]
    if out["problems"] or out["meta"] is None:
        os._exit(0)
    # What lives now (the modules imported for the checks, the checker's leftovers) goes
    # to the collector's permanent generation: with collection off since load.py, all of it
    # is young, and the first collections would walk it all (10 ms and more once the checks
    # have imported typing or re). Then the collector is on again; the test runs as in mode
    # "test".
    freeze = getattr(gc, "freeze", None)  # Python 3.7+
    if freeze is not None:
        freeze()
    gc.enable()
    sys.argv[1] = "test"


# JSON through the C accelerator alone: the json package imports re, and re enum,
# functools and collections, a third of a gate's imports, for one request and one answer.
# Without the accelerator (or for anything it cannot take) json itself is used, with the
# same result.

class ShelldonScanContext:
    """What _json.make_scanner reads from json.JSONDecoder: json.loads's defaults."""
    strict = True
    object_hook = object_pairs_hook = None
    parse_float, parse_int = float, int
    parse_constant = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}.__getitem__


def shelldon_json_loads(raw):
    """json.loads(raw) for the Go side's request: one JSON value, no surrounding space."""
    try:
        import _json
        text = raw.decode("utf-8")
        value, end = _json.make_scanner(ShelldonScanContext())(text, 0)
        if end == len(text):
            return value
    except Exception:
        pass
    import json
    return json.loads(raw)


def shelldon_json_dumps(value):
    """json.dumps(value, ensure_ascii=True), as json.dumps does it with the accelerator."""
    try:
        import _json
        return "".join(_json.make_encoder({}, None, _json.encode_basestring_ascii, None, ": ", ", ",
                                          False, False, True)(value, 0))
    except (ImportError, AttributeError):
        import json
        return json.dumps(value, ensure_ascii=True)


shelldon_gate()
del shelldon_gate, shelldon_json_loads, shelldon_json_dumps, ShelldonScanContext
