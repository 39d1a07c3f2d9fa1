// Package starlarktool checks and runs self-coded tools written in Starlark
// (DESIGN.md §4). It never touches the file system or the network itself.
//
// A tool is one Starlark file that defines DESCRIPTION, PARAMS_SCHEMA,
// optionally CAPABILITIES, and a top-level def run; its test is a second
// file whose top-level test_* functions see the tool's globals and an
// assert module.
//
// # Static checks: Inspect and CheckTest execute nothing
//
// Inspect and CheckTest only scan, parse (go.starlark.net/syntax) and
// resolve (go.starlark.net/resolve) the source; no Starlark thread exists
// while they run, so they are safe on untrusted code outside any sandbox
// (discovery reads live tools' metadata in the worker). They refuse:
//   - sources over MaxSource bytes, invalid UTF-8, control characters other
//     than \n, \t and \r, and hidden characters anywhere, comments and
//     strings included: every format (Cf) character (zero-width, bidirectional
//     controls, the byte-order mark, the soft hyphen...), line and paragraph
//     separators, private-use characters, invisible fillers that Starlark
//     would take for letters (U+3164 and the like), and variation selectors
//     except one U+FE0E or U+FE0F right after a non-ASCII character (how
//     emoji are written; runs of selectors can smuggle text);
//   - load statements: host modules are predeclared, not loaded;
//   - any top-level statement that would run code when the module loads.
//     The top level may hold only def statements, docstrings, and
//     assignments of literal values: strings (joined with + if need be),
//     numbers, True, False, None, and lists, tuples and dicts of those.
//     A tool's other top-level names must be UPPERCASE constants (a leading
//     underscore is fine: _RATE); a test may name its constants freely.
//     Defaults of top-level defs are literals too, since they are
//     evaluated at load;
//   - while loops, if/for at top level, reassigned globals and
//     undefined names (the resolver's checks), and a top-level def that
//     calls itself (mutual recursion is refused when it happens, at run
//     time); a def may share a built-in's name, except True, False and None.
//
// A refusal lists up to ten problems, in source order, each as
// "line L:C: what is wrong; what to do", written for the model that wrote
// the code.
//
// For a tool, Inspect also checks DESCRIPTION (a string, 1 to 1024
// characters), PARAMS_SCHEMA (a literal dict that is a valid JSON Schema
// of "type": "object" whose properties are exactly run's parameters, every
// parameter without a default being required), CAPABILITIES (absent means
// {}; the only key is "http", a list of at most 20 lowercase DNS names
// without scheme, port, wildcard or IP address) and run (a top-level def
// without *args or **kwargs). CheckTest wants at least one top-level
// def test_* taking no parameters.
//
// # Execution: RunTests and Call
//
// RunTests and Call check the code as above, then execute it with
// go.starlark.net: no while loops, no recursion, set() allowed. The tool
// sees the universe plus json (go.starlark.net/lib/json, with a nesting
// limit on decode), math and http. http.get(url) returns
// struct(status, body) when the host granted it (Host.HTTPGet is set and
// CAPABILITIES declares http), only for http(s) URLs of the declared hosts
// without a port; otherwise http is a stub that fails closed, with a
// message, on any use (and is falsy). A test sees the tool's globals,
// json, math and assert, but not http.
//
// Limits: a step budget per thread (the tool's load plus one call share a
// thread; in a test run, the tool's load, the test's load and each test get
// one each), a wall-clock timeout (per call, or for a whole test run), and
// caps on the result, its nesting and print output. Memory is NOT
// bounded: Starlark cannot account for allocations, so callers run
// RunTests and Call in a child process under RLIMIT_DATA (shelldon
// be-child). The child also
// contains what this package cannot stop: a timed-out thread stuck inside
// a long built-in (the call returns at the deadline; the goroutine lives on
// until the child exits), and a Go stack overflow from a pathologically
// deep value that the tool's own code prints or compares.
package starlarktool
