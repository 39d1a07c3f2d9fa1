package pytool

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

//go:embed py/gate.py
var gateScript string

// Gate is Check followed by RunTests, as the gate of a proposal runs them, in one python3
// process: the checker runs first (py/gate.py: in a namespace of its own, before the
// runner arms its guard and before the tool is imported) and reports on the result pipe;
// only a tool it passes goes on to its test, in that same interpreter. One interpreter
// start and one set of imports instead of two.
//
// cacheDir, if not "", is the directory of the gate's code cache (BuildGateCache): the
// scripts compiled ahead, used when the cache there is this binary's, whole, and made by
// this python; else they are compiled here, as they are without one.
//
// It writes <name>.py and test_<name>.py into dir. It returns what Check and RunTests
// would: the tool's Meta and the test report; a *CheckError when the checks refuse the
// tool, with the same problems Check gives, and no report (the checker's own refusals end
// the process before the test; the JSON Schema check of PARAMS_SCHEMA, made here in Go,
// kills it as soon as the check event arrives, so a test that would hang does not hold the
// answer up); an error wrapping ErrChecker when the checker itself
// failed; another error for a broken system (ctx done). The caller runs it inside the
// kernel sandbox, as it does Check and RunTests: the checks are not a boundary.
func Gate(ctx context.Context, python, cacheDir, dir, name string, code, test []byte, timeout time.Duration) (Meta, TestReport, error) {
	if err := checkName(name); err != nil {
		return Meta{}, TestReport{}, err
	}
	if err := sizeProblems(name, code, test); err != nil {
		return Meta{}, TestReport{}, err
	}
	req, err := json.Marshal(newCheckerRequest(name, code, test))
	if err != nil {
		return Meta{}, TestReport{}, fmt.Errorf("%w: %v", ErrChecker, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".py"), code, 0o600); err != nil {
		return Meta{}, TestReport{}, fmt.Errorf("pytool: gate %s: %w", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "test_"+name+".py"), test, 0o600); err != nil {
		return Meta{}, TestReport{}, fmt.Errorf("pytool: gate %s: %w", name, err)
	}
	// A tool the checks refuse, the checker's rules or the JSON Schema check here, is
	// stopped at its check event: no test runs for it.
	refused := func(ev event) bool {
		if ev.Event != "check" {
			return false
		}
		out, err := decodeCheck(ev.Result)
		if err == nil {
			_, err = checkResult(name, out)
		}
		return err != nil
	}
	s, err := run(ctx, python, dir, name, "gate", gateInput(cacheDir, req), timeout, Host{}, refused)
	if err != nil {
		if ctx.Err() != nil {
			return Meta{}, TestReport{}, err
		}
		return Meta{}, TestReport{}, fmt.Errorf("%w: %v", ErrChecker, err)
	}
	if len(s.events) == 0 || s.events[0].Event != "check" {
		return Meta{}, TestReport{}, fmt.Errorf("%w: %s: %s", ErrChecker, s.stopped(timeout), capString(strings.TrimSpace(s.output), MaxResult))
	}
	out, err := decodeCheck(s.events[0].Result)
	if err != nil {
		return Meta{}, TestReport{}, err
	}
	meta, err := checkResult(name, out)
	if err != nil {
		return Meta{}, TestReport{}, err
	}
	// The report's time is the test run's, as RunTests gives it, not the checks'.
	s.duration = max(s.duration-time.Duration(s.events[0].Seconds*float64(time.Second)), 0)
	return meta, testReport(s, name, timeout), nil
}

// IsCheckFailure reports whether err from Gate is the checks' (a refusal, a bad name, a
// checker that failed) rather than the test run's.
func IsCheckFailure(err error) bool {
	var ce *CheckError
	return errors.As(err, &ce) || errors.Is(err, ErrChecker) || errors.Is(err, ErrName)
}

// decodeCheck reads the checker's answer from the gate's check event.
func decodeCheck(raw json.RawMessage) (checkerOutput, error) {
	var out checkerOutput
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		return out, fmt.Errorf("%w: its output is not its JSON: %v: %s", ErrChecker, err, capString(string(raw), 200))
	}
	if _, err := dec.Token(); err != io.EOF {
		return out, fmt.Errorf("%w: more than one JSON value on its output", ErrChecker)
	}
	return out, nil
}
