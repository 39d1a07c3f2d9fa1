//go:build unix

package pytool

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestGatePasses: Gate gives the Meta Check gives and the report RunTests gives, in one
// process.
func TestGatePasses(t *testing.T) {
	needPython(t)
	t.Parallel()
	for _, name := range []string{"word_count", "usd_inr"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			code, test := readTestdata(t, name+".py"), readTestdata(t, "test_"+name+".py")
			want, err := Check(context.Background(), python, name, []byte(code), []byte(test))
			if err != nil {
				t.Fatalf("Check: %v", err)
			}
			wantRep, err := RunTests(context.Background(), python, stage(t, name, code, test), name, 10*time.Second, Host{})
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			meta, rep, err := Gate(context.Background(), python, "", dir, name, []byte(code), []byte(test), 10*time.Second)
			if err != nil {
				t.Fatalf("Gate: %v", err)
			}
			if meta.Description != want.Description || !jsonEqual(t, meta.ParamsSchema, want.ParamsSchema) ||
				!cmp.Equal(meta.Capabilities, want.Capabilities) {
				t.Errorf("Gate's meta = %+v, Check's = %+v", meta, want)
			}
			if !rep.Passed || rep.Error != "" || !cmp.Equal(rep.Tests, wantRep.Tests) || rep.Output != wantRep.Output {
				t.Errorf("Gate's report = %+v, RunTests' = %+v", rep, wantRep)
			}
			if rep.Duration <= 0 || rep.Duration > 10*time.Second {
				t.Errorf("Duration = %v", rep.Duration)
			}
			for _, f := range []string{name + ".py", "test_" + name + ".py"} {
				if b, err := os.ReadFile(filepath.Join(dir, f)); err != nil || !strings.Contains(code+test, string(b)) {
					t.Errorf("%s not written as given: %v", f, err)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "__pycache__")); !os.IsNotExist(err) {
				t.Errorf("the gate wrote bytecode into the tool's directory: %v", err)
			}
		})
	}
}

// TestGateRefusesAsCheck: what Check refuses, Gate refuses with the same problems and no
// report (the checker's refusals stop the process before the test).
func TestGateRefusesAsCheck(t *testing.T) {
	needPython(t)
	t.Parallel()
	// A test that would leave a trace if it ran: it prints.
	loud := "from word_count import run\n\n\ndef test_counts():\n    print(\"RAN\")\n    assert run(\"a b\") == \"2\"\n"
	for _, tc := range []struct{ name, tool, code, test string }{
		{name: "import os", tool: "word_count", code: header + "import os\n", test: loud},
		{name: "exec", tool: "word_count", code: helper("exec('import os')"), test: loud},
		{name: "test refused", tool: "word_count", code: header, test: loud + "\n\ndef test_open():\n    open('x')\n"},
		{name: "schema invalid JSON Schema", tool: "word_count", code: strings.Replace(header, `{"type": "string"}`, `{"type": "string", "pattern": "("}`, 1), test: loud},
		{name: "too large", tool: "word_count", code: header + "# " + strings.Repeat("x", MaxSource) + "\n", test: loud},
		{name: "bad name", tool: "Word", code: header, test: loud},
		{name: "no tests", tool: "word_count", code: header, test: "from word_count import run\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, want := Check(context.Background(), python, tc.tool, []byte(tc.code), []byte(tc.test))
			if want == nil {
				t.Fatal("Check accepted it")
			}
			_, rep, err := Gate(context.Background(), python, "", t.TempDir(), tc.tool, []byte(tc.code), []byte(tc.test), 10*time.Second)
			if err == nil || err.Error() != want.Error() {
				t.Fatalf("Gate = %v\nCheck = %v", err, want)
			}
			if !IsCheckFailure(err) {
				t.Errorf("IsCheckFailure(%v) = false", err)
			}
			if !cmp.Equal(rep, TestReport{}) {
				t.Errorf("a test ran: %+v", rep)
			}
		})
	}
}

// TestGateFailingTest: a tool the checks pass whose test fails has its Meta and a failed
// report, not an error.
func TestGateFailingTest(t *testing.T) {
	needPython(t)
	t.Parallel()
	test := "from word_count import run\n\n\ndef test_ok():\n    assert run(\"a b\") == \"2\"\n\n\ndef test_wrong():\n    print(\"hello\")\n    assert run(\"a b\") == \"3\"\n"
	meta, rep, err := Gate(context.Background(), python, "", t.TempDir(), "word_count", []byte(header), []byte(test), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if meta.Description != "Count the words in a text." {
		t.Errorf("meta = %+v", meta)
	}
	got := []result{}
	for _, tr := range rep.Tests {
		got = append(got, result{tr.Name, tr.OK})
	}
	if want := []result{{"test_ok", true}, {"test_wrong", false}}; rep.Passed || !cmp.Equal(got, want) || !strings.Contains(rep.Output, "hello") {
		t.Errorf("report = %+v", rep)
	}
}

func TestGateCheckerFailure(t *testing.T) {
	t.Parallel()
	for _, py := range []string{"/nonexistent/python3", "/bin/echo"} {
		_, _, err := Gate(context.Background(), py, "", t.TempDir(), "word_count", []byte(header), []byte(goodTest), 10*time.Second)
		if !errors.Is(err, ErrChecker) || !IsCheckFailure(err) {
			t.Errorf("Gate with %s = %v, want ErrChecker", py, err)
		}
	}
}
