// Repository-level tests: the dependency rules behind DESIGN.md's
// invariants 1 and 2, and a package doc for every package.
package shelldon_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/shelldon/shelldon"

type pkg struct {
	ImportPath string
	Doc        string
	Deps       []string // transitive
	Imports    []string // direct
	GoFiles    []string
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-json", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 15 {
		t.Fatalf("go list found only %d packages; the rules below would mean little", len(pkgs))
	}
	return pkgs
}

// modelSDKs are module prefixes of model provider SDKs and agent frameworks.
var modelSDKs = []string{
	"github.com/anthropics/", "github.com/openai/", "github.com/sashabaranov/go-openai",
	"github.com/tmc/langchaingo", "google.golang.org/genai", "github.com/ollama/ollama",
	"github.com/cloudwego/eino", "github.com/firebase/genkit",
}

func hasPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if s == strings.TrimSuffix(p, "/") || strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func TestDependencyRules(t *testing.T) {
	t.Parallel()
	rules := []struct {
		name      string
		applies   func(path string) bool
		forbidden []string
		direct    bool // only direct imports count (the package may reach them through another)
		exact     bool // forbidden names packages, not prefixes (core/store stays allowed)
	}{
		{
			// Invariant 1: core is LLM-free.
			name:      "core never imports the broker or a model SDK",
			applies:   func(p string) bool { return hasPrefix(p, module+"/internal/core") },
			forbidden: append([]string{module + "/internal/broker"}, modelSDKs...),
		},
		{
			// Invariant 2: the worker holds no credential. It never reads the
			// config or .env, never opens the database, never talks to a
			// provider itself (http_get uses net/http, through netguard).
			name: "worker and child modes never reach credentials, the store or the broker",
			applies: func(p string) bool {
				return hasPrefix(p, module+"/internal/worker", module+"/internal/childproc", module+"/internal/workspace")
			},
			forbidden: append([]string{
				module + "/internal/broker", module + "/internal/config", module + "/internal/core",
				module + "/internal/app", "modernc.org/sqlite",
			}, modelSDKs...),
		},
		{
			// Invariant 2: the broker executes nothing.
			name:      "broker executes nothing",
			applies:   func(p string) bool { return hasPrefix(p, module+"/internal/broker") },
			forbidden: []string{"os/exec", module + "/internal/worker", module + "/internal/core", module + "/internal/childproc"},
		},
		{
			// Transports talk to core only: the read models of the audit
			// trail, the tools and the approvals come from core.
			name:      "transports never import the store, the desk, the toolbox or the tools directory",
			applies:   func(p string) bool { return hasPrefix(p, module+"/internal/transport/") },
			forbidden: []string{module + "/internal/core/store", module + "/internal/core/toolbox", module + "/internal/core/approvals", module + "/internal/selfcode"},
			direct:    true,
		},
		{
			// Core in parts: the desk and the toolbox get the turn engine
			// (and each other) through small interfaces, never by import,
			// so each can be read and tested alone.
			name:      "the parts of core never import core or each other",
			applies:   func(p string) bool { return p == module+"/internal/core/approvals" },
			forbidden: []string{module + "/internal/core", module + "/internal/core/toolbox", module + "/internal/worker"},
			exact:     true,
		},
		{
			name:      "the toolbox never imports core or the desk",
			applies:   func(p string) bool { return p == module+"/internal/core/toolbox" },
			forbidden: []string{module + "/internal/core", module + "/internal/core/approvals", module + "/internal/worker"},
			exact:     true,
		},
		{
			// html/template cost the binary 3.5 MB and every process it
			// starts (the daemon, each worker and sandbox helper) 1.7 MiB
			// resident and 2 ms of init (issue 16); the web UI's pages are
			// written by Go code (transport/web/html.go). (text/template
			// itself comes with cobra, for its usage text.)
			name:      "the binary never links html/template",
			applies:   func(p string) bool { return p == module+"/cmd/shelldon" },
			forbidden: []string{"html/template"},
		},
		{
			name:      "contracts is standard library only",
			applies:   func(p string) bool { return p == module+"/internal/contracts" },
			forbidden: []string{"github.com/", "golang.org/", "go.", "modernc.org/", module + "/"},
		},
	}
	pkgs := listPackages(t)
	for _, r := range rules {
		matched := 0
		for _, p := range pkgs {
			if !r.applies(p.ImportPath) || strings.HasSuffix(p.ImportPath, "test") {
				continue
			}
			matched++
			deps, how := p.Deps, "transitively"
			if r.direct {
				deps, how = p.Imports, "directly"
			}
			for _, d := range deps {
				bad := hasPrefix(d, r.forbidden...)
				if r.exact {
					bad = slices.Contains(r.forbidden, d)
				}
				if d != p.ImportPath && bad && !strings.HasPrefix(d, "net/http/internal") {
					t.Errorf("%s: %s imports %s (%s)", r.name, p.ImportPath, d, how)
				}
			}
		}
		if matched == 0 {
			t.Errorf("rule %q matched no package: the rule is stale", r.name)
		}
	}
}

// TestOnlyAppSeesCoreAndBroker: the wiring of the core to the model is the
// app's alone (cmd/shelldon reaches both only through it).
func TestOnlyAppSeesCoreAndBroker(t *testing.T) {
	t.Parallel()
	core, broker := module+"/internal/core", module+"/internal/broker"
	seen := 0
	for _, p := range listPackages(t) {
		if p.ImportPath == module+"/internal/app" || p.ImportPath == module+"/cmd/shelldon" {
			seen++
			continue
		}
		var hasCore, hasBroker bool
		for _, d := range append([]string{p.ImportPath}, p.Deps...) {
			hasCore = hasCore || d == core || strings.HasPrefix(d, core+"/")
			hasBroker = hasBroker || d == broker || strings.HasPrefix(d, broker+"/")
		}
		if hasCore && hasBroker {
			t.Errorf("%s sees both the core and the broker; only internal/app may wire them", p.ImportPath)
		}
	}
	if seen != 2 {
		t.Errorf("found %d of internal/app and cmd/shelldon: the rule is stale", seen)
	}
}

// TestNoProductionPackageImportsTesting: nothing the binary is built from
// imports the testing package (test helpers such as brokertest and
// testbin are for tests only).
func TestNoProductionPackageImportsTesting(t *testing.T) {
	t.Parallel()
	for _, p := range listPackages(t) {
		if p.ImportPath != module+"/cmd/shelldon" {
			continue
		}
		if len(p.Deps) < 50 {
			t.Fatalf("cmd/shelldon has only %d dependencies: the rule would mean little", len(p.Deps))
		}
		for _, d := range p.Deps {
			if d == "testing" || strings.HasPrefix(d, "testing/") {
				t.Errorf("the binary imports %s", d)
			}
		}
		return
	}
	t.Fatal("cmd/shelldon not found")
}

func TestEveryPackageHasDoc(t *testing.T) {
	t.Parallel()
	for _, p := range listPackages(t) {
		if len(p.GoFiles) > 0 && strings.TrimSpace(p.Doc) == "" {
			t.Errorf("%s has no package doc", p.ImportPath)
		}
	}
}

// crossEnv turns TestCrossCompile on; .ci/run sets it.
const crossEnv = "SHELLDON_CROSS"

// TestCrossCompile builds the binary for every platform it is meant to build
// on: the Linux ones it runs on (its seccomp filter is per architecture) and
// targets without Linux namespaces, where it must compile and refuse
// sandboxed execution at run time (sandbox.ErrUnsupported) rather than fail
// to build. On a cold build cache that takes minutes (the standard library
// for each target), so the everyday `go test ./...` skips it; CI runs it.
func TestCrossCompile(t *testing.T) {
	if os.Getenv(crossEnv) != "1" {
		t.Skip("cross-compiling takes minutes on a cold cache; run with " + crossEnv + "=1 (.ci/run does)")
	}
	t.Parallel()
	for _, target := range []string{"linux/amd64", "linux/arm64", "linux/arm", "darwin/arm64", "windows/amd64"} {
		t.Run(strings.ReplaceAll(target, "/", "-"), func(t *testing.T) {
			t.Parallel()
			goos, goarch, _ := strings.Cut(target, "/")
			cmd := exec.Command("go", "build", "-o", os.DevNull, "./cmd/shelldon")
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch, "GOARM=7")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("build for %s: %v\n%s", target, err, out)
			}
		})
	}
}
