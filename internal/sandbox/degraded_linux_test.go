//go:build linux

package sandbox

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/testbin"
)

// missingUserNS is the tier of a kernel without user namespaces.
func missingUserNS() Tier {
	var t Tier
	for _, name := range required {
		t.Layers = append(t.Layers, Layer{Name: name, Required: true, OK: name == LayerRlimits || name == LayerSeccomp})
	}
	return t
}

// TestDegradedTierRefuses: without a required layer, model-chosen code does
// not run unless the owner allowed a degraded sandbox.
func TestDegradedTierRefuses(t *testing.T) {
	t.Parallel()
	r := &Runner{helper: testbin.Shelldon(t)}
	r.once.Do(func() { r.tier = missingUserNS() })
	_, err := r.Run(context.Background(), Policy{Argv: []string{"true"}})
	if !errors.Is(err, ErrDegraded) || !strings.Contains(err.Error(), "allow_degraded") {
		t.Fatalf("err = %v, want ErrDegraded naming the setting", err)
	}
	if !strings.Contains(r.tier.String(), "DEGRADED") {
		t.Errorf("tier = %s", r.tier)
	}
}

// TestDegradedRunKeepsOtherLayers: allowed to degrade on a kernel without
// namespaces, the helper still applies rlimits, seccomp and Landlock, and
// reports what it skipped.
func TestDegradedRunKeepsOtherLayers(t *testing.T) {
	t.Parallel()
	r := &Runner{helper: testbin.Shelldon(t)}
	r.once.Do(func() { r.tier = missingUserNS() })
	ws := t.TempDir()
	home := t.TempDir()
	os.WriteFile(home+"/secret", []byte("sk-secret"), 0o644)
	p := Policy{
		Argv: []string{"/bin/sh", "-c", "unshare -U true || echo seccomp-denied; cat /proc/self/environ || echo proc-denied; " +
			"cat " + home + "/secret; echo ok > " + ws + "/out; echo x > /tmp/degraded-$$ || echo tmp-denied"},
		Workspace:     ws,
		AllowDegraded: true,
		Timeout:       10 * time.Second,
	}
	sp, err := r.prepare(context.Background(), &p)
	if err != nil {
		t.Fatal(err)
	}
	if sp.Namespaces {
		t.Fatal("a tier without user namespaces still asked for them")
	}
	var stdout, stderr strings.Builder
	pr, err := r.start(context.Background(), sp, p, nil, &stdout, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	res, err := pr.Wait()
	if err != nil {
		t.Fatal(err)
	}
	out := stdout.String()
	for _, want := range []string{"seccomp-denied", "proc-denied", "tmp-denied"} {
		if !strings.Contains(out, want) {
			t.Errorf("a degraded run lacks %q: %q %s", want, out, stderr.String())
		}
	}
	if strings.Contains(out, "sk-secret") {
		t.Error("Landlock did not keep a degraded run out of another directory")
	}
	if data, _ := os.ReadFile(ws + "/out"); string(data) != "ok\n" {
		t.Errorf("the workspace was not writable: %q (exit %d, %s)", data, res.ExitCode, stderr.String())
	}
	skipped := strings.Join(pr.st.Skip, "; ")
	if !strings.Contains(skipped, "no namespaces") {
		t.Errorf("the helper did not report what it skipped: %q", skipped)
	}
}

// TestDegradedWorkerKeepsTheHomeOut: on a kernel without namespaces the
// worker (a nested-sandbox builder) still gets Landlock, so shelldon's home
// stays out of its reach.
func TestDegradedWorkerKeepsTheHomeOut(t *testing.T) {
	t.Parallel()
	r := &Runner{helper: testbin.Shelldon(t)}
	r.once.Do(func() { r.tier = missingUserNS() })
	ws := t.TempDir()
	home, err := os.MkdirTemp("/var/tmp", "shelldon-home-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(home)
	os.WriteFile(home+"/.env", []byte("KEY=sk-secret"), 0o644)
	p := Policy{
		Argv:      []string{"/bin/sh", "-c", "cat " + home + "/.env || echo home-denied; echo ok > " + ws + "/w"},
		Workspace: ws, Nested: true, AllowDegraded: true, Timeout: 10 * time.Second,
	}
	sp, err := r.prepare(context.Background(), &p)
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr strings.Builder
	pr, err := r.start(context.Background(), sp, p, nil, &stdout, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pr.Wait(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stdout.String(), "sk-secret") || !strings.Contains(stdout.String(), "home-denied") {
		t.Fatalf("a degraded worker read shelldon's home: %q %s", stdout.String(), stderr.String())
	}
	if data, _ := os.ReadFile(ws + "/w"); string(data) != "ok\n" {
		t.Errorf("the workspace was not writable: %q", data)
	}
}
