package starlarktool

import (
	"encoding/json"
	"strings"
	"testing"

	"go.starlark.net/starlark"
)

// FuzzInspect checks that Inspect never panics and never executes: the
// corpus holds tools whose top level would loop forever if run, and code it
// accepts loads within a small step budget without printing, which only
// literals and defs can.
func FuzzInspect(f *testing.F) {
	for _, seed := range append([]string{wordCount, usdToINR, slugify, optionalParams, weather, echo, kinds}, neverRun...) {
		f.Add([]byte(seed))
	}
	f.Add([]byte(wordCount + "X = (" + strings.Repeat("[", 100) + "\n"))
	f.Add([]byte(wordCount + "X = \"a\" + \"b\" + \"c\"\nY = -(-1.5)\nZ = {(1, 2): [None, True]}\n"))
	f.Add([]byte(withCaps(`{"http": ["api.example.com", "x.y.example.org"]}`)))
	f.Fuzz(func(t *testing.T, code []byte) {
		meta, err := Inspect(code)
		if err != nil {
			if err.Error() == "" {
				t.Error("an empty refusal")
			}
			return
		}
		if strings.TrimSpace(meta.Description) == "" || !json.Valid(meta.ParamsSchema) || meta.Capabilities == nil {
			t.Errorf("accepted with bad metadata: %+v", meta)
		}
		printed := false
		th := &starlark.Thread{Print: func(*starlark.Thread, string) { printed = true }}
		th.SetMaxExecutionSteps(1_000_000)
		g, err := starlark.ExecFileOptions(fileOptions(), th, toolFile, code, toolEnv(Host{}, nil))
		if err != nil || printed {
			t.Fatalf("accepted code ran at load (printed %v): %v\n%s", printed, err, code)
		}
		if _, ok := g["run"].(*starlark.Function); !ok {
			t.Errorf("accepted code without a run function:\n%s", code)
		}
	})
}
