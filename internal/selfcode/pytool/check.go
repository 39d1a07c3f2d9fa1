package pytool

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

// The checker is four parts run as one script: sources (with, at its head, what the
// checker uses of ast and symtable, check_ast.py), reflective callables, tree rules,
// conventions.
var (
	//go:embed py/check_ast.py
	checkAst string
	//go:embed py/check_source.py
	checkSourceFile string
	// checkSource is part 1, with at its head what the checker uses of ast and symtable
	// (check_ast.py), which every part needs.
	checkSource = checkAst + "\n" + checkSourceFile
	//go:embed py/check_reflect.py
	checkReflect string
	//go:embed py/check_tree.py
	checkTree string
	//go:embed py/check_meta.py
	checkMeta string
)

// checkTimeout bounds one Check: parsing 128 KiB takes well under a second.
const checkTimeout = 20 * time.Second

// Meta is what a checked tool declares about itself.
type Meta struct {
	Description  string
	ParamsSchema json.RawMessage     // a JSON object, "type": "object", in the tool's key order
	Capabilities map[string][]string // e.g. {"http": ["api.example.com"]}; never nil
}

// Problem is one reason Check refused a tool.
type Problem struct {
	File    string `json:"file"` // "<name>.py" or "test_<name>.py"
	Line    int    `json:"line"` // 1-based
	Col     int    `json:"col"`  // 1-based, in characters
	Message string `json:"message"`
}

func (p Problem) String() string {
	return fmt.Sprintf("%s:%d:%d: %s", p.File, p.Line, p.Col, p.Message)
}

// CheckError is Check's refusal: the tool breaks the rules. Its message, one problem per
// line, is meant for the model that wrote the tool.
type CheckError struct{ Problems []Problem }

func (e *CheckError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Check runs the static gate on a tool's source and its test, with python (a path to
// python3). It returns the tool's Meta, or a *CheckError listing every problem found, or
// an error wrapping ErrChecker if the checker itself failed. Nothing from code or test is
// imported or run. See the package doc for the rules.
func Check(ctx context.Context, python string, name string, code, test []byte) (Meta, error) {
	if err := checkName(name); err != nil {
		return Meta{}, err
	}
	if err := sizeProblems(name, code, test); err != nil {
		return Meta{}, err
	}
	out, err := runChecker(ctx, python, name, code, test)
	if err != nil {
		return Meta{}, err
	}
	return checkResult(name, out)
}

// sizeProblems refuses a tool or test larger than MaxSource before any checker runs.
func sizeProblems(name string, code, test []byte) error {
	var refused []Problem
	for _, f := range []struct {
		file string
		src  []byte
	}{{name + ".py", code}, {"test_" + name + ".py", test}} {
		if len(f.src) > MaxSource {
			refused = append(refused, Problem{f.file, 1, 1, fmt.Sprintf("the file is %d bytes; the limit is %d", len(f.src), MaxSource)})
		}
	}
	if refused != nil {
		return &CheckError{refused}
	}
	return nil
}

// checkResult turns the checker's answer into Check's: the Meta, a *CheckError, or an
// error wrapping ErrChecker.
func checkResult(name string, out checkerOutput) (Meta, error) {
	if len(out.Problems) > 0 {
		return Meta{}, &CheckError{out.Problems}
	}
	if out.Meta == nil {
		return Meta{}, fmt.Errorf("%w: no problems and no metadata", ErrChecker)
	}
	m := out.Meta
	if err := validSchema(m.ParamsSchema); err != nil {
		return Meta{}, &CheckError{[]Problem{{name + ".py", m.SchemaLine, 1, "PARAMS_SCHEMA is not a valid JSON Schema: " + err.Error()}}}
	}
	if m.Capabilities == nil {
		m.Capabilities = map[string][]string{}
	}
	return Meta{Description: m.Description, ParamsSchema: m.ParamsSchema, Capabilities: m.Capabilities}, nil
}

// checkerOutput is the checker's JSON on stdout.
type checkerOutput struct {
	Problems []Problem `json:"problems"`
	Meta     *struct {
		Description  string              `json:"description"`
		ParamsSchema json.RawMessage     `json:"params_schema"`
		SchemaLine   int                 `json:"schema_line"`
		Capabilities map[string][]string `json:"capabilities"`
	} `json:"meta"`
}

// checkerScript is the checker's four parts as one script.
func checkerScript() string {
	return checkSource + "\n" + checkReflect + "\n" + checkTree + "\n" + checkMeta
}

// checkerRequest is the checker's request.
type checkerRequest struct {
	Name    string   `json:"name"`
	Code    string   `json:"code"` // base64
	Test    string   `json:"test"` // base64
	Allowed []string `json:"allowed"`
}

func newCheckerRequest(name string, code, test []byte) checkerRequest {
	return checkerRequest{Name: name, Code: base64.StdEncoding.EncodeToString(code),
		Test: base64.StdEncoding.EncodeToString(test), Allowed: allowedModules}
}

func runChecker(ctx context.Context, python, name string, code, test []byte) (checkerOutput, error) {
	var out checkerOutput
	req, err := json.Marshal(newCheckerRequest(name, code, test))
	if err != nil {
		return out, fmt.Errorf("%w: %v", ErrChecker, err)
	}
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	script := checkerScript()
	cmd := command(ctx, python, "", append(pythonFlags, "-c", script)...)
	stdout := &capWriter{max: 4 << 20}
	stderr := &capWriter{max: MaxResult}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(req), stdout, stderr
	err = cmd.Run() // the checker runs no tool code, so it leaves no processes behind
	if ctx.Err() != nil {
		return out, fmt.Errorf("%w: %v (%v)", ErrChecker, ctx.Err(), err)
	}
	if err != nil {
		return out, fmt.Errorf("%w: %v: %s", ErrChecker, err, strings.TrimSpace(stderr.String()))
	}
	dec := json.NewDecoder(strings.NewReader(stdout.String()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil || stdout.dropped > 0 {
		return out, fmt.Errorf("%w: its output is not its JSON: %v: %s", ErrChecker, err, capString(stdout.String(), 200))
	}
	if _, err := dec.Token(); err != io.EOF {
		return out, fmt.Errorf("%w: more than one JSON value on its output", ErrChecker)
	}
	return out, nil
}

// validSchema reports whether raw is a JSON Schema that resolves (types, patterns and
// keywords well-formed) and describes an object.
func validSchema(raw json.RawMessage) error {
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return err
	}
	if s.Type != "object" {
		return errors.New(`"type" must be "object"`)
	}
	_, err := s.Resolve(nil)
	return err
}

// Probe reports the Python the tools would run with and whether the run-time guard
// (an audit hook, Python 3.8 and later) is available there, for `shelldon doctor`. An
// error means python cannot be used for tools.
func Probe(ctx context.Context, python string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := command(ctx, python, "", append(slices.Clone(pythonFlags), "-c",
		"import sys; print('%d.%d.%d' % sys.version_info[:3], hasattr(sys, 'addaudithook'))")...)
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("pytool: run %s: %w", python, err)
	}
	version, hook, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	if hook != "True" {
		return "", fmt.Errorf("pytool: Python %s has no audit hooks (3.8 or later is needed)", version)
	}
	return version, nil
}
