"""The gate's prelude (see Gate in the pytool package): the static checks and the test run
in one interpreter. The Go side runs this file followed by runner.py as one script, with
argv "gate", the tool's name, the per-test limit, "0" and the allowlist, through load.py,
which leaves the checker's code (compiled ahead, or by load.py) and the checker's request
in shelldon_gate_input.

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
    import json
    import os
    import sys
    import time

    if sys.argv[1:2] != ["gate"]:
        return
    start = time.monotonic()
    code, raw = globals().pop("shelldon_gate_input")
    req = json.loads(raw)
    checker = {"__name__": "shelldon_check"}
    exec(code, checker)
    del code
    out = checker["check_request"](req)
    del checker
    line = json.dumps({"event": "check", "result": out, "seconds": time.monotonic() - start},
                      ensure_ascii=True) + "\n"
    data = line.encode("ascii")
    while data:
        data = data[os.write(3, data):]
    if out["problems"] or out["meta"] is None:
        os._exit(0)
    gc.enable()  # load.py turned it off for the checks; the test runs as in mode "test"
    sys.argv[1] = "test"


shelldon_gate()
del shelldon_gate
