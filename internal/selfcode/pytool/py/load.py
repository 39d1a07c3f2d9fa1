"""The gate's loader (see Gate and BuildGateCache in the pytool package): the only script
python3 compiles on a gate. It reads from stdin three sections, each an 8-byte big-endian
length and its bytes: the compiled code of the gate's scripts as BuildGateCache made it
(or nothing), the gate's script (gate.py and runner.py) and the checker's; then the
checker's request, up to the end.

The compiled code is used only if its first line names this very interpreter (bytecode
magic, version, cache tag): marshal data of another Python may load as broken code. With
the code comes the cache's table of analyses of the allowed modules' sources
(check_reflect.py's ANALYSES), which gate.py hands to the checker; there is no table
when the code is compiled here. Any
doubt, or any error loading it, and the sources are compiled here instead, as before there
was a cache: a bad cache costs time, never a different answer. The Go side has already
checked that the cache was made from these sources and is whole (a digest).

The garbage collector is off until the checks are done (gate.py turns it on again).
The gate's script then runs as this script's top level would (in __main__), finding the
checker's code, the cache's analyses and the request in shelldon_gate_input; the checker's
code objects are not constants of it, so the runner's guard never counts them as its own.
"""


def shelldon_load():
    import gc
    import marshal
    import sys

    # No cyclic garbage collection while the checker's modules are imported and the
    # checks run (a few ms of collections over what lives to the end anyway); gate.py
    # turns it back on before the runner imports the tool.
    gc.disable()

    # Sections as views of what was read, not copies: the compiled code and the sources are
    # a few hundred KiB.
    data = memoryview(sys.stdin.buffer.read())
    parts = []
    for _ in range(3):
        n = int.from_bytes(data[:8], "big")
        parts.append(data[8:8 + n])
        data = data[8 + n:]
    cache, main_src, check_src = parts
    codes = None
    ext = sys.modules.get("_frozen_importlib_external")
    magic = getattr(ext, "MAGIC_NUMBER", None)
    if cache and isinstance(magic, bytes):
        head = ("%s %x %s\n" % (magic.hex(), sys.hexversion, sys.implementation.cache_tag)).encode()
        if cache[:len(head)] == head:
            try:
                loaded = marshal.loads(cache[len(head):])
                if (type(loaded) is tuple and len(loaded) == 3
                        and all(type(c) is type(shelldon_load.__code__) for c in loaded[:2])):
                    codes = loaded
            except Exception:
                codes = None
    if codes is None:
        codes = (compile(bytes(main_src).decode("utf-8"), "<string>", "exec"),
                 compile(bytes(check_src).decode("utf-8"), "<shelldon-check>", "exec"), None)
    analyses = codes[2] if type(codes[2]) is dict else None
    return codes[0], (codes[1], analyses, bytes(data))


shelldon_main, shelldon_gate_input = shelldon_load()
del shelldon_load
exec(globals().pop("shelldon_main"), globals())
