package app

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServiceWithoutSystemd: where systemd does not run, install writes the
// unit, runs nothing and says what to run; a dry run writes nothing and
// prints the unit; a failing systemctl fails the install with its words;
// uninstall keeps a unit it did not write unless --force.
func TestServiceWithoutSystemd(t *testing.T) {
	ctx := context.Background()
	h := newFakeHost(t, 0, false, "SUDO_USER=pi")
	path := filepath.Join(h.root, "etc/systemd/system", unitName)

	o := defaultInstall()
	o.dryRun = true
	if err := installService(ctx, h.serviceHost, h.homeOf, o); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a dry run wrote the unit: %v", err)
	}
	if out := h.out.String(); !strings.HasPrefix(out, "# "+path+" (dry run: nothing written)\n") || !strings.Contains(out, "\n"+unitMarker+"\n") || !strings.Contains(out, "\nUser=pi\n") {
		t.Errorf("dry run output:\n%s", out)
	}

	h.out.Reset()
	if err := installService(ctx, h.serviceHost, h.homeOf, defaultInstall()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h.out.String(), "systemd is not running here") || !strings.Contains(h.out.String(), "systemctl daemon-reload && systemctl enable --now shelldon.service") {
		t.Errorf("install without systemd:\n%s", h.out)
	}
	if calls := h.calls(t); calls != "" {
		t.Errorf("systemctl ran without systemd: %s", calls)
	}

	// A failing systemctl.
	h2 := newFakeHost(t, 1000, true, "SYSTEMCTL_FAIL=enable")
	err := installService(ctx, h2.serviceHost, h2.homeOf, defaultInstall())
	if err == nil || !strings.Contains(err.Error(), "enable --now") || !strings.Contains(err.Error(), "Failed: no bus") {
		t.Errorf("install with a failing systemctl: %v", err)
	}

	// A unit shelldon did not write.
	if err := os.WriteFile(path, []byte("[Service]\nExecStart=/usr/bin/other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := uninstallService(ctx, h.serviceHost, false); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("uninstall of a foreign unit: %v", err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the foreign unit was removed: %v", err)
	}
	if err := uninstallService(ctx, h.serviceHost, true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("--force did not remove it")
	}
}

// TestServiceStatus: status says where the unit is, what systemctl says of
// it, and whether the daemon of the home the unit names answers /healthz,
// against a real HTTP server.
func TestServiceStatus(t *testing.T) {
	ctx := context.Background()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" {
			w.Write([]byte(`{"status":"ok"}`))
			return
		}
		http.NotFound(w, r)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	h := newFakeHost(t, 1000, true)
	writeServiceHome(t, h.home, "server:\n  listen: "+ln.Addr().String()+"\n")
	if err := serviceStatus(ctx, h.serviceHost, h.homeOf); err != nil {
		t.Fatal(err)
	}
	if out := h.out.String(); !strings.Contains(out, "user:    not installed") || !strings.Contains(out, "Install it with") ||
		!strings.Contains(out, "daemon:  answers at http://"+ln.Addr().String()+"/healthz") {
		t.Errorf("status before install:\n%s", out)
	}
	if err := installService(ctx, h.serviceHost, h.homeOf, defaultInstall()); err != nil {
		t.Fatal(err)
	}
	// The unit's home wins over this command's (here: none that loads).
	h.environ = append(h.environ, "SHELLDON_HOME="+filepath.Join(h.userDir, "elsewhere"))
	h.out.Reset()
	if err := serviceStatus(ctx, h.serviceHost, h.homeOf); err != nil {
		t.Fatal(err)
	}
	out := h.out.String()
	if !strings.Contains(out, "user:    installed at "+filepath.Join(h.userDir, ".config/systemd/user", unitName)+"; active") ||
		!strings.Contains(out, "daemon:  answers") {
		t.Errorf("status after install:\n%s", out)
	}
	srv.Close()
	h.out.Reset()
	if err := serviceStatus(ctx, h.serviceHost, h.homeOf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h.out.String(), "daemon:  does not answer") {
		t.Errorf("status with the daemon down:\n%s", h.out)
	}
}
