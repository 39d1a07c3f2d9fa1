package childproc

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/shelldon/shelldon/internal/testbin"
)

// TestMain lets the test binary serve as the eval child.
func TestMain(m *testing.M) {
	if IsChild(os.Args) {
		Main()
	}
	if len(os.Args) > 1 && os.Args[1] == "confine-probe" {
		confineProbe()
	}
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

// evalBinary is the binary whose eval child mode the test runs: this test
// binary, or, when it is race-instrumented (whose shadow memory does not fit
// under RLIMIT_DATA), a plain build of shelldon, so the memory limit is
// proven in CI too.
func evalBinary(t *testing.T) string {
	t.Helper()
	if raceEnabled {
		return testbin.Shelldon(t)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

func TestEvalInChild(t *testing.T) {
	t.Parallel()
	exe := evalBinary(t)
	cases := []struct {
		name, code, want string
		ok               bool
	}{
		{"arithmetic", "6 * 7", "42", true},
		{"comprehension", "[x * x for x in range(4)]", "[0, 1, 4, 9]", true},
		{"syntax error", "6 *", "", false},
		// One step, a gigabyte: the child dies, the caller gets a result.
		{"memory bomb", `[("x" * 100000000) + str(i) for i in range(20)]`, "ran out of memory", false},
		{"list bomb", `sorted(range(100000000))`, "", false},
		{"step bomb", `[x for x in range(100000000)]`, "steps", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := evalWith(context.Background(), exe, tc.code)
			if tc.ok {
				if err != nil || got != tc.want {
					t.Fatalf("eval(%q) = %q, %v; want %q", tc.code, got, err, tc.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("eval(%q) = %q, want an error", tc.code, got)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("eval(%q) error %q lacks %q", tc.code, err, tc.want)
			}
		})
	}
}

func TestDispatchUnknownMode(t *testing.T) {
	t.Parallel()
	var out, errw strings.Builder
	if code := Dispatch([]string{"nope"}, strings.NewReader(""), &out, &errw); code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
	if code := Dispatch(nil, strings.NewReader(""), &out, &errw); code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
}
