// Package pytool is the Python half of self-coded tools: the static gate (Check), the
// test run (RunTests) and a call (Call), each a python3 child started from embedded
// scripts, and Gate, Check then RunTests in one python3 child, as a proposal's gate runs
// them. It never imports a tool into this process, and it does not sandbox: the
// caller runs it inside the kernel sandbox (no network, a temporary home, a memory cap).
// The gate's scripts may be compiled ahead by the daemon (BuildGateCache, see cache.go):
// a gate that finds that cache whole and made by its own python3 skips compiling them,
// and otherwise compiles them as before. The same cache holds the checker's analyses of
// the allowed modules' sources, each taken only for the very source the gate reads.
//
// # What Check refuses, and why this way
//
// A tool is <name>.py (DESCRIPTION, PARAMS_SCHEMA, CAPABILITIES, def run) and its test
// test_<name>.py (top-level test_* functions using assert). Check never imports or runs
// either: a checker script (py/check_*.py) reads each file's raw bytes and parses them
// with ast, exactly as Python would read them, so nothing can be hidden from it by an
// encoding or by normalisation:
//
//   - Bytes and characters: UTF-8 only, no BOM, no coding cookie other than utf-8 (a
//     utf-7 cookie turns "+AAo-import os" into a line of code), no control characters
//     but \t \n \r, no zero-width, bidirectional or other invisible format characters,
//     no line separators, private-use or unassigned characters.
//   - Identifiers: ASCII only, checked on the tokens as written. Python NFKC-normalises
//     identifiers, so the tree holds os where the file says ｏｓ; a reviewer must read
//     what runs.
//   - Nothing runs at import: the top level holds only a docstring, imports,
//     UPPERCASE = literal constants, def and class. No decorators; defaults of
//     module- and class-level defs are literals; annotations and bases are types (string
//     annotations are parsed and checked too, since typing can evaluate them); class
//     bodies hold only def, class and name = literal. A class made at import runs its
//     metaclass, so its bases must be resolved (built-ins, classes of the allowed modules,
//     classes defined earlier in the file) and their metaclass one that calls none of the
//     class's own methods (type, ABCMeta, NamedTuple's, TypedDict's...). Enum's metaclass
//     calls __init__, __eq__, __hash__, _missing_... for each member, so an Enum may hold
//     only members (NAME = literal) and methods whose names do not start with _, and mix in
//     no class of the file that is not an Enum.
//   - Imports: only the pure standard-library modules in [AllowedModules], plus
//     shelldon_host (the host functions; see [Host]) and, in the test file,
//     "from <name> import ..." of what the tool defines. No relative or star imports.
//     A name bound to a module is only ever used as module.attr, and each module.attr is
//     resolved against the real module, so typing.sys, enum.bltns or json.codecs (other
//     modules reachable from allowed ones) and private names (random._os) are refused.
//   - No dynamic code or reflection: exec, eval, compile, open, input, globals, locals,
//     vars, dir, getattr, setattr, delattr, hasattr and the like are refused as names;
//     every dunder name or attribute is refused (except a short list of protocol methods
//     a class may define, like __init__, and super().__init__(...) of those, called: the
//     zero-argument super() takes its class and instance from the method; super itself
//     may not be rebound); so are the attributes only the interpreter's
//     own objects have (f_globals, gi_frame, co_code, tb_next, mro..., read from the
//     running interpreter's types), and type() with other than one argument. No async.
//   - Nothing reached by a string: a callable of an allowed module that turns a string
//     its caller passes into an attribute access, code or a module is refused. Which ones
//     is found by reading the allowed modules' own sources (py/check_reflect.py: the
//     parameters that flow into getattr, setattr, eval, str.format, sys.modules[...] —
//     functools.update_wrapper, operator.attrgetter, string.Formatter, typing.ForwardRef),
//     with a hand list as the floor where sources are not installed. .format and
//     .format_map only on a string literal (or an UPPERCASE constant) whose fields read no
//     attribute or item ("{0.__globals__}"); no string literal holding "__" or naming an
//     interpreter attribute; a Python method of an allowed class is not called on the
//     class (it would take any object as self); a module is only ever module.attr, even
//     reached as typing.functools; and every name a scope reads must be defined in the
//     file or be a built-in, so values slipped into the module's globals at run time
//     cannot be named. A class's __module__ counts as a string its caller chose: the
//     keywords module= and qualname= (Enum's functional API, namedtuple, make_dataclass)
//     are refused, except for a function of the file declaring that parameter, and
//     sys.modules[cls.__module__] is a module reached by a name (enum.global_enum, which
//     writes an Enum's members into that module, is refused).
//   - Conventions: DESCRIPTION a non-empty string; PARAMS_SCHEMA a JSON-able dict
//     literal with "type": "object" whose properties are exactly run's parameters,
//     "required" exactly those without a default (no /, *args or **kwargs), and a valid
//     JSON Schema; CAPABILITIES a dict literal whose only key is "http", a list of at most
//     20 lowercase DNS hostnames (no IPs, ports or wildcards); at least one test_*
//     function, taking no parameters.
//
// The checker is defence in depth and a teacher: its errors (file:line:col: message) go
// back to the model. The sandbox is the containment.
//
// # Running
//
// RunTests and Call run py/runner.py with cwd = the tool's directory, first on sys.path.
// Results travel as JSON lines on a dedicated pipe (fd 3), never on stdout, so what a tool
// prints cannot forge them; stdout and stderr are kept, capped, as output. A test run
// uses a built-in runner, not pytest even where it is installed: the same collection and
// reporting everywhere, no plugins or conftest.py, and a per-test SIGALRM limit under
// the overall timeout. Each child gets a clean environment, its own process group, and
// the whole group is killed when it finishes or times out. Neither re-checks the source:
// callers must Check first.
//
// Before it imports the tool or its test, the runner arms a second layer (Guard in
// py/runner.py): an audit hook, a replaced __import__ and a meta-path finder, given the
// same allowlist as the checker. Whatever a tool that got past the checker reaches for
// is refused with "shelldon: <what> is not allowed in a tool": imports outside the
// allowlist (however asked for), open except reading the standard library's and the
// tool's own sources, processes (subprocess, os.system, exec, spawn, fork, kill),
// sockets, ctypes, the filesystem (listdir, remove, rename...), compile and exec except
// the import machinery's and namedtuple's or a dataclass's generated code, frames
// (sys._getframe, gi_frame, tb_frame, __code__ from the tool's own code, or from a
// standard-library function that does not name the attribute itself), the garbage
// collector, tracing, marshal and new audit hooks. It is not the boundary (a tool can
// switch it off): the sandbox is; it turns a checker miss into a clear error.
//
// The runner lives in one function's scope, run with private globals and a private copy
// of the builtins: its guard's tables (frozen), its encoder (the C JSON encoder itself,
// not json.dumps, which reads json's module globals at each call) and the rest are
// closure variables, so a tool that writes into a module's namespace (__main__, json,
// builtins) cannot change what the runner emits or what its guard refuses.
package pytool

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// MaxSource is the largest tool or test source, in bytes.
const MaxSource = 64 << 10

// MaxResult caps a call's result and a run's captured output, in bytes.
const MaxResult = 16 << 10

// AllowedModules returns the modules a tool or its test may import: pure standard
// library, without files, processes, network, threads or interpreter internals. Left out
// on purpose: zoneinfo (reads tz files), uuid (uuid1 and getnode may run ifconfig), time
// (sleeps; datetime covers clocks) and everything that does I/O. The checker gets this
// list with each request; it is the only copy.
func AllowedModules() []string { return slices.Clone(allowedModules) }

var allowedModules = []string{
	"base64", "binascii", "bisect", "calendar", "cmath", "collections", "collections.abc",
	"copy", "dataclasses", "datetime", "decimal", "difflib", "enum", "fractions",
	"functools", "hashlib", "heapq", "hmac", "html", "html.entities", "html.parser",
	"itertools", "json", "math", "numbers", "operator", "pprint", "random", "re",
	"statistics", "string", "struct", "textwrap", "typing", "unicodedata",
}

var (
	// ErrChecker means the checker itself failed (python3 missing or broken, or output
	// that is not its JSON): the system broke, not the tool.
	ErrChecker = errors.New("pytool: checker failed")
	// ErrTimeout is wrapped by a ToolError when a call ran out of time.
	ErrTimeout = errors.New("pytool: timed out")
	// ErrName means a tool name that is not a lowercase identifier.
	ErrName = errors.New("pytool: invalid tool name")
)

// ToolError is a failure of the tool itself (an exception, a timeout, a crash): a result
// for the model and a strike for the tool, not a broken system.
type ToolError struct {
	Message string // what the model reads
	Output  string // what the tool printed, capped
	Err     error  // ErrTimeout, or nil
}

func (e *ToolError) Error() string { return "pytool: tool failed: " + e.Message }
func (e *ToolError) Unwrap() error { return e.Err }

// validName is what a tool name must look like before it is used in a file name,
// ^[a-z][a-z0-9_]{0,63}$; the checker refuses keywords, built-ins and standard-library
// module names on top.
// It is checked by hand: a package-level regexp is compiled at every start of the binary,
// every sandbox helper's included.
func validName(name string) bool {
	if name == "" || len(name) > 64 || name[0] < 'a' || name[0] > 'z' {
		return false
	}
	for i := 1; i < len(name); i++ {
		if c := name[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

func checkName(name string) error {
	if !validName(name) {
		return fmt.Errorf("%w %q: use lowercase letters, digits and _, starting with a letter", ErrName, name)
	}
	return nil
}

// cleanEnv is the whole environment of every child: no PYTHONPATH or PYTHONHOME, no
// HOME, nothing of the daemon's. (-I already makes python3 ignore PYTHON* variables.)
var cleanEnv = []string{"PYTHONDONTWRITEBYTECODE=1", "PYTHONHASHSEED=0", "LANG=C.UTF-8"}

// pythonFlags: isolated (no user site, no PYTHON* variables, no script dir on sys.path),
// no site module, no .pyc files, unbuffered, UTF-8 whatever the locale.
var pythonFlags = []string{"-I", "-S", "-B", "-E", "-u", "-X", "utf8"}

// waitDelay bounds how long a finished child's pipes may stay open.
const waitDelay = 2 * time.Second

// capWriter keeps the first max bytes written to it and counts the rest, so a child
// printing without end is drained, never blocked, and costs bounded memory.
type capWriter struct {
	max     int
	buf     bytes.Buffer
	dropped int64
}

func (w *capWriter) Write(p []byte) (int, error) {
	if room := w.max - w.buf.Len(); room > 0 {
		w.buf.Write(p[:min(room, len(p))])
		w.dropped += int64(max(len(p)-room, 0))
	} else {
		w.dropped += int64(len(p))
	}
	return len(p), nil
}

func (w *capWriter) String() string {
	if w.dropped == 0 {
		return w.buf.String()
	}
	return fmt.Sprintf("%s\n[... %d more bytes]", validPrefix(w.buf.String()), w.dropped)
}

// capString cuts s to at most max bytes, at a rune boundary, saying so.
func capString(s string, max int) string {
	if len(s) <= max {
		return s
	}
	return fmt.Sprintf("%s\n[... truncated: %d bytes in all]", validPrefix(s[:max]), len(s))
}

// validPrefix drops a rune cut in half at the end of s.
func validPrefix(s string) string {
	for i := 0; i < utf8.UTFMax && len(s) > 0 && !utf8.ValidString(s); i++ {
		s = s[:len(s)-1]
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
