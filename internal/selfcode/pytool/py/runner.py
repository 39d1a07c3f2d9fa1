"""The runner for a shelldon Python tool (see the pytool package doc).

argv: mode ("test" or "call"), the tool's name, the per-test limit in seconds, "1" if the
http capability is granted, and the allowed modules, comma-separated (the checker's
allowlist). The working directory holds <name>.py and test_<name>.py.

Before the tool (or its test) is imported, the runner arms a second layer behind the
checker (see Guard): an audit hook, an import guard and a meta-path finder that refuse,
with "shelldon: ... is not allowed in a tool", what a tool that got past the checker would
reach for: imports outside the allowlist, files, processes, sockets, native code, code
built at run time, frames and the garbage collector. They are not the boundary, the
sandbox is: they turn a checker miss into a clear error.

Results go to fd 3 as JSON lines, never to stdout, so what the tool prints cannot forge
them:
  test: {"event": "collected", "names": [...]}, then per test {"event": "start", "name"}
        and {"event": "result", "name", "ok", "message"}, then {"event": "done"};
        or {"event": "import_error", "message"}; or {"event": "abort", "message"}.
  call: {"event": "return", "value"} or {"event": "error", "message"}.
A call's arguments arrive on stdin as a JSON object.
"""


def runner(module_code):
    """The whole runner, in this function's scope. Its tables, its guard and its own
    references (emit's encoder, os.write) are local names of this call, held in closures,
    not a module's globals: a tool that writes into a module's namespace (the way
    enum.global_enum writes an enum's members into the module the enum names) cannot
    rebind what the runner reads. Its globals and builtins are private copies too (see
    the end of this file). module_code is the script's own top level."""
    # Only built-in modules, and importlib, os and types: json (through re), signal (through
    # enum) and traceback would import re, enum, functools, collections and more into every
    # run, a third of a gate's time. json and traceback are imported where they are needed,
    # on paths that are not the usual one (see json_decoder, json_encoder, describe_frames).
    import _signal as signal
    import _thread
    import importlib
    import os
    import sys
    import types

    MAX_MESSAGE = 2000
    MAX_RESULT = 16 << 10
    MAX_TESTS = 1000
    RESULTS, HTTP_REQUESTS, HTTP_RESPONSES = 3, 4, 5

    # Kept before the tool is imported, whatever it does to the modules afterwards. os.write
    # and os._exit are C functions, which read no module's globals when called; _loads
    # (json_decoder) is the C scanner taken now, which reads only what the host and the
    # caller send (json.loads does read json's globals).
    _write, _exit = os.write, os._exit
    getframe, get_ident, builtins_module = sys._getframe, _thread.get_ident, sys.modules["builtins"]

    def json_decoder():
        """A function reading a JSON object, as json.loads does, by the C scanner itself
        (json.loads's own, with its defaults): what the Go side sends (a call's arguments,
        http answers) is an object, in UTF-8. Anything else, or anything the scanner
        refuses, goes to json.loads, for its answer or its error."""
        try:
            import _json

            class Context:
                strict = True
                object_hook = object_pairs_hook = None
                parse_float, parse_int = float, int
                parse_constant = {"-Infinity": float("-inf"), "Infinity": float("inf"),
                                  "NaN": float("nan")}.__getitem__

            scan = _json.make_scanner(Context())
        except (ImportError, AttributeError, TypeError):
            scan = None

        def loads(data):
            # json.loads reads bytes as UTF-8 unless they start with a BOM or a zero byte
            # in the first two; an object starting "{" then a byte other than zero is UTF-8.
            if scan is not None and data[:1] == b"{" and data[1:2] != b"\0":
                try:
                    text = data.decode("utf-8", "surrogatepass")
                    value, end = scan(text, 0)
                    if not text[end:].strip(" \t\n\r"):
                        return value
                except Exception:
                    pass
            import json
            return json.loads(data)

        return loads

    _loads = json_decoder()

    def json_encoder(ascii, default=None):
        """A function writing a value as JSON text, as json.dumps(value, ensure_ascii=ascii,
        default=default) does, by the C encoder itself: json.dumps reads json.JSONEncoder and
        json.encoder's functions from those modules at each call, which a tool writing into
        them would change."""
        try:
            import _json
            strings = _json.encode_basestring_ascii if ascii else _json.encode_basestring
            make = _json.make_encoder
            sample = {"a": ["\u00e9", 1, 2.5, True, None]}
            want = '{"a": ["%s", 1, 2.5, true, null]}' % ("\\u00e9" if ascii else "\u00e9")
            if "".join(make({}, default, strings, None, ": ", ", ", False, False, True)(sample, 0)) == want:
                # a new encoder for each value: its markers (to catch a cycle) start empty
                return lambda value: "".join(make({}, default, strings, None, ": ", ", ", False, False, True)(value, 0))
        except (ImportError, TypeError, ValueError):
            pass
        import json
        return json.JSONEncoder(ensure_ascii=ascii, default=default).encode  # no C accelerator

    to_json = json_encoder(True)
    result_json = json_encoder(False, str)

    def emit(event):
        data = (to_json(event) + "\n").encode()
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
            data = (to_json({"url": url}) + "\n").encode()
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

    # ---- the second layer ---------------------------------------------------------------
    # Its tables are frozen: nothing the tool reaches can add to them or empty them.

    TOOL, STDLIB, IMPORTLIB, RUNNER, OTHER = "tool", "stdlib", "importlib", "runner", "other"

    # Modules the C parts of allowed modules import on their own, through __import__, from
    # the frame that called them: datetime.strftime imports time, datetime.strptime _strptime,
    # a warning raised in C warnings, object.__reduce_ex__ copyreg.
    IMPLICIT_IMPORTS = frozenset({"time", "_strptime", "warnings", "copyreg", "encodings"})

    # Standard-library functions that run code they generate from checked names:
    # namedtuple's __new__ and a dataclass's methods (field names must be identifiers).
    EXEC_CALLERS = frozenset({
        ("collections/__init__.py", "namedtuple"),
        ("dataclasses.py", "_create_fn"),
        ("dataclasses.py", "add_fns_to_class"),
    })

    REFLECTIVE_EVENTS = frozenset({"object.__getattr__", "object.__setattr__", "object.__delattr__",
                                   "sys._getframe", "sys._getframemodulename"})
    # Audited attributes a class or function may have set by the standard library on the
    # tool's behalf (from a class body or a wrapper): names, not behaviour.
    HARMLESS_SETS = frozenset({"__name__", "__qualname__", "__module__", "__doc__"})
    PROCESS_EVENTS = frozenset({"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn",
                                "os.fork", "os.forkpty", "os.kill", "os.killpg", "pty.spawn",
                                "signal.pthread_kill", "os.startfile"})
    INTERNAL_EVENTS = frozenset({"sys._current_frames", "sys._current_exceptions", "sys.settrace",
                       "sys.setprofile", "sys.addaudithook", "sys.set_asyncgen_hooks_firstiter",
                       "sys.set_asyncgen_hooks_finalizer", "setopencode", "code.__new__",
                       "function.__new__", "marshal.loads", "marshal.load", "marshal.dumps",
                       "marshal.dump", "pickle.find_class", "builtins.input", "builtins.input/result",
                       "builtins.breakpoint", "cpython.run_command", "cpython.run_file",
                       "cpython.run_module", "cpython.run_stdin", "cpython.run_startup",
                       "cpython.run_interactivehook", "sys.monitoring.register_callback"})
    # Event families refused whatever raises them (after the exceptions handled in Guard.check).
    REFUSED_FAMILIES = types.MappingProxyType({
        "os": "tools cannot touch files, processes or the environment",
        "subprocess": "tools cannot start processes",
        "pty": "tools cannot start processes",
        "signal": "tools cannot signal processes",
        "socket": "tools have no network; declare the http capability and call shelldon_host.http_get",
        "urllib": "tools have no network; declare the http capability and call shelldon_host.http_get",
        "http": "tools have no network; declare the http capability and call shelldon_host.http_get",
        "ftplib": "tools have no network", "smtplib": "tools have no network",
        "imaplib": "tools have no network", "poplib": "tools have no network",
        "nntplib": "tools have no network", "telnetlib": "tools have no network",
        "webbrowser": "tools have no network",
        "ctypes": "tools cannot call native code", "_winapi": "tools cannot call native code",
        "mmap": "tools cannot map memory or files",
        "gc": "it reaches every object in the interpreter",
        "shutil": "tools cannot touch files", "glob": "tools cannot list files",
        "tempfile": "tools cannot create files", "pathlib": "tools cannot list files",
        "fcntl": "tools cannot touch files", "resource": "tools cannot change limits",
        "sqlite3": "tools cannot open databases", "syslog": "tools cannot write logs",
        "pdb": "tools cannot start a debugger", "ensurepip": "tools cannot install packages",
        "msvcrt": "tools cannot touch the console", "winreg": "tools cannot touch the registry",
    })

    class Guard:
        """The runner's second layer: sys.addaudithook(self.hook), builtins.__import__ =
        self.guarded_import, and self (a finder) first on sys.meta_path.

        Each decision looks at who is asking: the frame that raised the event (or called
        __import__), classified by its code's file as the tool's own files, the standard
        library, the import machinery, the runner, or other (code with no file, like
        "<string>"). Tool and other frames get only the allowlist; standard-library frames
        may import what they need and read what they name in their own code (types.py reads
        __code__ by that name; functools.update_wrapper, asked for a name by the tool, does
        not); the import machinery may read, compile and run standard-library and tool
        sources. Imports of modules already loaded raise no audit event, hence the import
        guard; imports through importlib.import_module raise none for the module itself, hence
        the finder."""

        def __init__(self, name, allowed, roots):
            self.name = name
            self.allowed = frozenset(allowed) | {"shelldon_host", name, "test_" + name}
            self.packages = tuple(a + "." for a in allowed)
            self.submodules = {}      # package -> its allowed submodules (collections -> collections.abc)
            for a in sorted(allowed):
                if "." in a:
                    self.submodules.setdefault(a.partition(".")[0], []).append(a)
            self.allowlist = ", ".join(allowed)
            cwd = os.getcwd()
            self.cwd = cwd
            files = [os.path.join(cwd, f) for f in (name + ".py", "test_" + name + ".py")]
            self.tool_files = frozenset(files + [os.path.realpath(f) for f in files])
            self.pycache = os.path.join(os.path.realpath(cwd), "__pycache__") + os.sep
            self.roots = tuple(r + os.sep for r in roots)
            self.importlib_dir = os.path.dirname(os.path.realpath(importlib.__file__)) + os.sep
            self.kinds = {}           # co_filename -> kind
            self.busy = set()         # threads inside the hook: its own events pass
            self.runner_codes = frozenset()  # id() of the runner's code objects, which stay alive
            self.transparent = frozenset()  # the guards' own frames, skipped when finding an importer
            self.guard_code = None    # id() of guarded_import's code
            self.original_import = None

        # ---- arming -------------------------------------------------------------------

        def arm(self, module_code):
            """module_code is the script's top level: every code object of the runner is a
            constant of it, or of one of those."""
            codes, found = [module_code], set()
            while codes:
                c = codes.pop()
                found.add(id(c))
                codes += [k for k in c.co_consts if isinstance(k, types.CodeType)]
            self.runner_codes = frozenset(found)
            self.transparent = frozenset(id(f.__code__) for f in (Guard.hook, Guard.check, Guard.find_spec,
                                                                  Guard.importer))
            self.guard_code = id(Guard.guarded_import.__code__)
            self.original_import = builtins_module.__import__
            builtins_module.__import__ = self.guarded_import
            sys.meta_path.insert(0, self)
            sys.addaudithook(self.hook)

        # ---- who is asking --------------------------------------------------------------

        def kind(self, code):
            if id(code) in self.runner_codes:
                return RUNNER
            fn = code.co_filename
            k = self.kinds.get(fn)
            if k is None:
                k = self.kinds[fn] = self.classify(fn)
            return k

        def classify(self, fn):
            if fn in self.tool_files:
                return TOOL
            if fn.startswith("<frozen "):
                return IMPORTLIB if fn.startswith(("<frozen importlib.", "<frozen zipimport")) else STDLIB
            if not os.path.isabs(fn):
                return OTHER
            real = os.path.realpath(fn)
            if real in self.tool_files:
                return TOOL
            if real.startswith(self.importlib_dir):
                return IMPORTLIB
            if real.startswith(self.roots):
                return STDLIB
            return OTHER

        def importer(self, frame):
            """Who asked for the import under way at frame: the caller of the import guard (the
            frame running the import statement or __import__ call, which may be the import
            machinery importing for itself), or else the first frame out of the machinery
            (importlib.import_module's caller, or a frame whose C call imports, like
            datetime.strptime)."""
            while frame is not None:
                code = frame.f_code
                if id(code) == self.guard_code:
                    caller = frame.f_back
                    return self.kind(caller.f_code) if caller is not None else RUNNER
                if id(code) not in self.transparent and self.kind(code) != IMPORTLIB:
                    return self.kind(code)
                frame = frame.f_back
            return RUNNER

        def module_allowed(self, mod, implicit=True):
            if mod in self.allowed or implicit and mod in IMPLICIT_IMPORTS:
                return True
            return mod.startswith(self.packages) and not any(
                p.startswith("_") for p in mod.split(".")[1:])

        def refused_import(self, mod):
            return "import of %s is not allowed in a tool; tools may import only %s" % (mod, self.allowlist)

        # ---- the hook -----------------------------------------------------------------

        def hook(self, event, args):
            me = get_ident()
            if me in self.busy:
                return
            self.busy.add(me)
            try:
                why = self.check(event, args, getframe(1))
            except Exception as e:  # a bug here must not pass as "allowed"
                why = "%s could not be checked (%s: %s)" % (event, type(e).__name__, e)
            finally:
                self.busy.discard(me)
            if why:
                exc = ImportError if event == "import" else PermissionError
                raise exc("shelldon: " + why)

        def check(self, event, args, frame):
            """Why event may not happen, or None."""
            top = self.kind(frame.f_code) if frame is not None else RUNNER
            if top == RUNNER and event in REFLECTIVE_EVENTS:
                return None  # the runner's own frames: its guard walking the stack, describe()
            if event == "import":
                mod = args[0] if args and isinstance(args[0], str) else "?"
                if self.importer(frame) in (TOOL, OTHER) and not self.module_allowed(mod):
                    return self.refused_import(mod)
                return None
            if event == "open":
                return self.open_problem(args)
            if event in ("exec", "compile"):
                return self.code_problem(event, args, frame, top)
            if event in ("object.__getattr__", "object.__setattr__", "object.__delattr__"):
                name = args[1] if len(args) > 1 and isinstance(args[1], str) else "?"
                if event != "object.__getattr__" and name in HARMLESS_SETS:
                    return None  # typing.NamedTuple sets __qualname__ from the class body
                if top in (STDLIB, IMPORTLIB) and names(frame, name):
                    return None
                verb = {"object.__getattr__": "reading", "object.__setattr__": "setting"}.get(event, "deleting")
                return "%s .%s is not allowed in a tool: it reaches interpreter internals" % (verb, name)
            if event in ("sys._getframe", "sys._getframemodulename"):
                if top == STDLIB and names(frame, event[4:]):
                    return None
                return "%s is not allowed in a tool: it reaches the interpreter's frames" % event
            if event in ("os.listdir", "os.scandir", "marshal.loads"):
                if top == IMPORTLIB:
                    return None  # the import machinery lists directories and reads bytecode
            elif event in ("code.__new__", "function.__new__") and top in (STDLIB, IMPORTLIB):
                return None  # Python 3.8's marshal.loads raises code.__new__ for each code object
            if event in PROCESS_EVENTS:
                return "%s is not allowed in a tool: tools cannot start or signal processes" % event
            if event in INTERNAL_EVENTS:
                return "%s is not allowed in a tool: it reaches interpreter internals" % event
            family = event.split(".")[0]
            if family in REFUSED_FAMILIES:
                return "%s is not allowed in a tool: %s" % (event, REFUSED_FAMILIES[family])
            return None

        def open_problem(self, args):
            path = args[0] if args else None
            mode = args[1] if len(args) > 1 else None
            flags = args[2] if len(args) > 2 else None
            if isinstance(path, bytes):
                path = os.fsdecode(path)
            if not isinstance(path, str):
                return "open(%r) is not allowed in a tool: tools cannot read or write files" % (path,)
            writes = isinstance(mode, str) and any(c in mode for c in "wax+")
            if isinstance(flags, int):
                writes = writes or flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND)
            if not writes:
                real = os.path.realpath(os.path.join(self.cwd, path))
                if real in self.tool_files or real.startswith(self.roots + (self.pycache,)) or real == "/dev/urandom":
                    return None  # the standard library's and the tool's own sources; os.urandom
            return "open(%r) is not allowed in a tool: tools cannot read or write files" % short(path, 200)

        def code_problem(self, event, args, frame, top):
            code = args[0] if args else None
            if top == IMPORTLIB:
                fn = args[1] if event == "compile" and len(args) > 1 else getattr(code, "co_filename", None)
                if isinstance(fn, bytes):
                    fn = os.fsdecode(fn)
                if fn == "<fstring>":
                    return None  # Python 3.8 compiles each f-string expression of a source apart
                mod = self.module_of(fn) if isinstance(fn, str) else None
                if mod is None:
                    return "%s of %r is not allowed in a tool: tools cannot run code built at run time" % (event, fn)
                if event == "exec" and self.importer(frame) in (TOOL, OTHER) and not self.module_allowed(mod):
                    return self.refused_import(mod)
                return None
            if top == STDLIB:
                if event == "compile":
                    return None  # typing.ForwardRef compiles; only running code matters
                rel = os.path.realpath(frame.f_code.co_filename)
                for root in self.roots:
                    if rel.startswith(root):
                        rel = rel[len(root):].replace(os.sep, "/")
                if (rel, frame.f_code.co_name) in EXEC_CALLERS:
                    return None
            return "%s is not allowed in a tool: tools cannot run code built at run time" % event

        def module_of(self, fn):
            """The module a source or code file holds, if it is the standard library's or the
            tool's: "<frozen os>" is os, .../json/decoder.py is json.decoder."""
            if fn.startswith("<frozen ") and fn.endswith(">"):
                return fn[len("<frozen "):-1]
            real = os.path.realpath(fn) if os.path.isabs(fn) else None
            if real is None:
                return None
            if real in self.tool_files:
                return os.path.basename(real)[:-3]
            for root in self.roots:
                if real.startswith(root) and real.endswith(".py"):
                    parts = real[len(root):-3].split(os.sep)
                    if parts[-1] == "__init__":
                        parts.pop()
                    return ".".join(parts)
            return None

        # ---- imports --------------------------------------------------------------------

        def guarded_import(self, name, globals=None, locals=None, fromlist=(), level=0):
            k = self.kind(getframe(1).f_code)
            if k in (TOOL, OTHER):
                if level:
                    raise ImportError("shelldon: relative imports are not allowed in a tool")
                # C code importing for itself (PyImport_Import) passes an empty list; an import
                # statement passes None or a tuple
                implicit = fromlist == [] and globals is locals
                if not self.module_allowed(name, implicit):
                    raise ImportError("shelldon: " + self.refused_import(name))
            mod = self.original_import(name, globals, locals, fromlist, level)
            if k in (TOOL, OTHER) and name in self.allowed:
                # A package comes with every allowed submodule of it, as the checker resolves
                # it (Modules in check_source.py): import collections gives collections.abc,
                # import html html.parser, whatever else was imported before.
                for sub in self.submodules.get(name.partition(".")[0], ()):
                    self.original_import(sub)
            if k in (TOOL, OTHER) and fromlist:
                for item in fromlist:
                    v = mod.__dict__.get(item) if isinstance(item, str) else None
                    if isinstance(v, types.ModuleType) and not self.module_allowed(v.__name__):
                        raise ImportError("shelldon: %s.%s is the module %s; %s" % (
                            name, item, v.__name__, self.refused_import(v.__name__)))
            return mod

        def find_spec(self, fullname, path=None, target=None):
            if self.importer(getframe(1)) in (TOOL, OTHER) and not self.module_allowed(fullname):
                raise ImportError("shelldon: " + self.refused_import(fullname))
            return None  # the other finders find it

        def invalidate_caches(self):
            pass

    def names(frame, name):
        """Whether the code of frame names name itself (as an attribute or a constant)."""
        code = frame.f_code
        return name in code.co_names or name in code.co_consts

    def short(text, limit=MAX_MESSAGE):
        return text if len(text) <= limit else text[:limit] + " ... [truncated]"

    def describe(exc):
        """An exception for the model: type, message, and where in the tool's own files."""
        try:
            return describe_frames(exc)
        except BaseException:  # the guard refused something the traceback needed
            try:
                return short("%s: %s" % (type(exc).__name__, exc))
            except BaseException:
                return type(exc).__name__

    def describe_frames(exc):
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
        import traceback  # only for a failure: it imports linecache, tokenize, re, collections...
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
        if not isinstance(result, str):
            try:
                result = result_json(result)
            except BaseException:
                result = str(result)
        return str.__str__(result)  # a plain str: no method of a str subclass runs past here

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

    def fail(mode, message):
        emit({"event": "import_error" if mode == "test" else "error", "message": message})
        flush_and_exit()

    def main(module_code):
        mode, name, limit, http = sys.argv[1:5]
        allowed = [m for m in (sys.argv[5] if len(sys.argv) > 5 else "").split(",") if m]
        for fd in (RESULTS, HTTP_REQUESTS, HTTP_RESPONSES):
            try:
                os.set_inheritable(fd, False)  # a child process the tool starts gets none of them
            except OSError:
                pass
        roots = [os.path.realpath(p) for p in sys.path if p and os.path.isabs(p)]  # -I -S: the stdlib
        sys.argv = [name]
        sys.path.insert(0, os.getcwd())
        sys.modules["shelldon_host"] = host_module(http == "1")
        if not hasattr(sys, "addaudithook"):
            fail(mode, "shelldon: Python %s has no audit hooks; tools need Python 3.8 or later" % sys.version.split()[0])
        try:
            Guard(name, allowed, roots).arm(module_code)
        except Exception as e:
            fail(mode, "shelldon: the runner could not arm its guard: %s: %s" % (type(e).__name__, e))
        if mode == "test":
            main_test(name, float(limit))
        else:
            main_call(name)
        flush_and_exit()

    main(module_code)


# Run the runner with globals of its own and a copy of the builtins taken now, before any
# tool code: writing into __main__ or builtins cannot change what it calls.
import builtins  # noqa: E402
import sys  # noqa: E402
import types  # noqa: E402

types.FunctionType(runner.__code__, {"__builtins__": dict(vars(builtins)), "__name__": "shelldon_runner"})(
    sys._getframe().f_code)
