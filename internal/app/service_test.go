package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/shelldon/shelldon/internal/config"
)

// fakeHost is a machine for `shelldon service`: root is a temporary tree
// (etc/systemd/system, run/systemd/system, var/lib/systemd/linger), HOME a
// temporary home, PATH holds a fake systemctl that logs its arguments to
// log, and the running binary is /bin/true (outside /tmp, which install
// refuses).
type fakeHost struct {
	serviceHost
	out     *bytes.Buffer
	log     string // what the fake systemctl was asked, one call a line
	userDir string // HOME
	home    string // the shelldon home
}

func newFakeHost(t *testing.T, uid int, systemd bool, environ ...string) *fakeHost {
	t.Helper()
	root, userDir, bin := t.TempDir(), t.TempDir(), t.TempDir()
	if systemd {
		if err := os.MkdirAll(filepath.Join(root, "run/systemd/system"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	log := filepath.Join(bin, "systemctl.log")
	script := fmt.Sprintf("#!/bin/sh\necho \"$*\" >> %s\ncase \"$*\" in *is-active*) echo active;; esac\n"+
		"[ -n \"$SYSTEMCTL_FAIL\" ] && case \"$*\" in *\"$SYSTEMCTL_FAIL\"*) echo 'Failed: no bus' >&2; exit 1;; esac\nexit 0\n", log)
	if err := os.WriteFile(filepath.Join(bin, "systemctl"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(userDir, ".shelldon")
	writeServiceHome(t, home, "")
	me := strconv.Itoa(os.Getuid())
	users := map[string]*user.User{
		"pi":   {Username: "pi", Uid: me, Gid: "1000", HomeDir: userDir},
		"root": {Username: "root", Uid: "0", Gid: "0", HomeDir: userDir},
	}
	out := &bytes.Buffer{}
	h := &fakeHost{out: out, log: log, userDir: userDir, home: home}
	h.serviceHost = serviceHost{
		uid:     uid,
		current: func() (*user.User, error) { return users["pi"], nil },
		lookup: func(name string) (*user.User, error) {
			if u, ok := users[name]; ok {
				return u, nil
			}
			return nil, user.UnknownUserError(name)
		},
		group:   func(gid string) (*user.Group, error) { return &user.Group{Gid: gid, Name: "grp" + gid}, nil },
		exe:     func() (string, error) { return "/bin/true", nil },
		root:    root,
		environ: append([]string{"PATH=" + bin + ":/usr/bin:/bin", "HOME=" + userDir}, environ...),
		stdout:  out,
	}
	return h
}

// writeServiceHome makes a shelldon home that loads, with extra config.
func writeServiceHome(t *testing.T, home, extra string) {
	t.Helper()
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := "provider:\n  kind: openai\n  base_url: http://127.0.0.1:9/v1\n  model: m\n  api_key_env: TEST_KEY\n" + extra
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".env"), []byte("TEST_KEY=sk-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

func (h *fakeHost) homeOf() (string, error) { return config.DefaultHome(h.environ) }

func (h *fakeHost) calls(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(h.log)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return string(data)
}

func defaultInstall() installOptions { return installOptions{memory: defaultMemoryMax} }

// directive reports whether unit sets key (as a directive, not in a comment).
func directive(unit, key string) (string, bool) {
	for _, l := range strings.Split(unit, "\n") {
		if v, ok := strings.CutPrefix(l, key+"="); ok {
			return v, true
		}
	}
	return "", false
}

// TestServiceUnitText: the unit for root under sudo (a system unit that
// runs as the sudo user), for a plain user (a user unit), with a custom
// memory cap and with a home whose path has spaces, $ and %: each sets
// what the sandbox needs and nothing that would break it.
func TestServiceUnitText(t *testing.T) {
	cases := []struct {
		name  string
		uid   int
		env   []string
		opts  installOptions
		home  string // a home of its own, under the user's directory
		want  map[string]string
		notes string
	}{
		{name: "root with SUDO_USER", uid: 0, env: []string{"SUDO_USER=pi"}, opts: defaultInstall(),
			want: map[string]string{"User": "pi", "Group": "grp1000", "WantedBy": "multi-user.target",
				"MemoryMax": "268435456", "ProtectClock": "yes", "After": "network-online.target"}},
		{name: "plain user", uid: 1000, opts: defaultInstall(),
			want: map[string]string{"WantedBy": "default.target", "MemoryMax": "268435456"}},
		{name: "custom memory max", uid: 1000, opts: installOptions{memory: 400 << 20},
			want: map[string]string{"MemoryMax": "419430400"}},
		{name: "home with spaces, $ and %", uid: 1000, opts: defaultInstall(), home: "my home $HOME 100%",
			env: nil, want: map[string]string{}},
		{name: "root with --user root", uid: 0, opts: installOptions{memory: defaultMemoryMax, user: "root"},
			want: map[string]string{"User": "root", "Group": "grp0"}, notes: "warning: the service runs as root"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newFakeHost(t, c.uid, true, c.env...)
			home := h.home
			if c.home != "" {
				home = filepath.Join(h.userDir, c.home)
				writeServiceHome(t, home, "")
				h.environ = append(h.environ, "SHELLDON_HOME="+home)
			}
			spec, place, notes, err := h.plan(h.homeOf, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			unit, err := renderUnit(spec)
			if err != nil {
				t.Fatal(err)
			}
			if c.notes != "" && !strings.Contains(strings.Join(notes, "\n"), c.notes) {
				t.Errorf("notes %q lack %q", notes, c.notes)
			}
			if wantUser := c.uid != 0; place.user != wantUser {
				t.Errorf("user unit = %v, want %v", place.user, wantUser)
			}
			wantPath := filepath.Join(h.root, "etc/systemd/system/shelldon.service")
			if c.uid != 0 {
				wantPath = filepath.Join(h.userDir, ".config/systemd/user/shelldon.service")
			}
			if place.path != wantPath {
				t.Errorf("unit path %s, want %s", place.path, wantPath)
			}
			want := map[string]string{
				"ExecStart": `"/usr/bin/true" serve`, "Environment": `"SHELLDON_HOME=` + strings.ReplaceAll(home, "%", "%%") + `"`,
				"ReadWritePaths":  `"` + strings.ReplaceAll(home, "%", "%%") + `"`,
				"NoNewPrivileges": "yes", "ProtectSystem": "strict", "ProtectHome": "read-only", "PrivateTmp": "yes",
				"Delegate": "yes", "Restart": "on-failure", "RestartSec": "5s",
			}
			for k, v := range c.want {
				want[k] = v
			}
			for k, v := range want {
				if got, ok := directive(unit, k); !ok || got != v {
					t.Errorf("%s=%q, want %q\n%s", k, got, v, unit)
				}
			}
			// What would break the sandbox, or is the daemon's own doing.
			for _, k := range []string{"RestrictNamespaces", "PrivateUsers", "ProtectKernelTunables", "ProtectKernelLogs",
				"ProtectControlGroups", "ProtectHostname", "ProtectProc", "ProcSubset", "SystemCallFilter",
				"CapabilityBoundingSet", "MemoryDenyWriteExecute", "SystemCallArchitectures", "Environment=GOMEMLIMIT"} {
				if v, ok := directive(unit, k); ok {
					t.Errorf("the unit sets %s=%s", k, v)
				}
			}
			if strings.Contains(unit, "GOMEMLIMIT=") {
				t.Errorf("the unit sets GOMEMLIMIT, which the daemon sets itself")
			}
			if c.uid != 0 {
				for _, k := range []string{"User", "Group", "ProtectClock", "After"} {
					if _, ok := directive(unit, k); ok {
						t.Errorf("a user unit sets %s", k)
					}
				}
			}
			if !strings.HasPrefix(unit, unitMarker+"\n") {
				t.Errorf("the unit does not start with the marker")
			}
		})
	}
}

// TestServiceWorkspaceOutsideHome: a workspace outside the home is made
// writable too; one that does not exist yet is refused (the service could
// not create it under ProtectSystem=strict).
func TestServiceWorkspaceOutsideHome(t *testing.T) {
	h := newFakeHost(t, 1000, true)
	ws := filepath.Join(h.userDir, "work space")
	writeServiceHome(t, h.home, "workspace: "+ws+"\n")
	if _, _, _, err := h.plan(h.homeOf, defaultInstall()); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("a missing workspace outside the home: %v", err)
	}
	if err := os.Mkdir(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	spec, _, _, err := h.plan(h.homeOf, defaultInstall())
	if err != nil {
		t.Fatal(err)
	}
	unit, err := renderUnit(spec)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := directive(unit, "ReadWritePaths"); got != fmt.Sprintf("%q %q", h.home, ws) {
		t.Errorf("ReadWritePaths=%s, want the home and the workspace", got)
	}
}

// TestUnitPathHostile: a path systemd would misread, or that would break a
// line of the unit, is refused; the rest is quoted so that it stays one
// word and % is not a specifier.
func TestUnitPathHostile(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"/a b", `"/a b"`},
		{"/100%/%h", `"/100%%/%%h"`},
		{"/$HOME/${x}", `"/$HOME/${x}"`},
		{"/semi;colon", `"/semi;colon"`},
		{"/ünï", `"/ünï"`},
		{`/a"b`, ""},
		{"/a'b", ""},
		{`/a\b`, ""},
		{"/a\nExecStartPre=/bin/evil", ""},
		{"/a\rb", ""},
		{"/a\tb", ""},
		{"/a\x00b", ""},
		{"/a\u2028b", ""},
		{"/a\xffb", ""},
	} {
		got, err := unitPath("the home", c.in)
		if c.want == "" {
			if !errors.Is(err, errUnitPath) {
				t.Errorf("unitPath(%q) = %q, %v; want refused", c.in, got, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("unitPath(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	// The refusal reaches the command: a hostile home is never written.
	h := newFakeHost(t, 1000, true)
	bad := filepath.Join(h.userDir, "bad\"home")
	writeServiceHome(t, bad, "")
	h.environ = append(h.environ, "SHELLDON_HOME="+bad)
	err := installService(context.Background(), h.serviceHost, h.homeOf, defaultInstall())
	if err == nil || !strings.Contains(err.Error(), "systemd cannot carry it") {
		t.Fatalf("install with a home holding a quote: %v", err)
	}
	if _, err := os.Stat(filepath.Join(h.userDir, ".config/systemd/user", unitName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a unit was written: %v", err)
	}
}

// TestServiceUnitVerify: the units pass `systemd-analyze verify`, with the
// test's own binary as ExecStart, once in a directory whose name has a
// space, $ and %, which proves systemd reads the quoted path back as it is
// (verify fails on an ExecStart that does not exist). Verified statically:
// no systemd runs here, so no unit is started. CI installs systemd's
// package when systemd-analyze is missing (.ci/run) and fails if it still
// is; elsewhere the test is skipped.
func TestServiceUnitVerify(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed (apt-get install systemd): the unit is not verified")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	odd := filepath.Join(t.TempDir(), "a dir $PATH 50%")
	if err := os.Mkdir(odd, 0o755); err != nil {
		t.Fatal(err)
	}
	oddExe := filepath.Join(odd, "shelldon")
	if err := os.WriteFile(oddExe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	g, err := user.LookupGroupId(me.Gid)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		spec unitSpec
	}{
		{"system", unitSpec{RunAs: me.Username, Group: g.Name, Exe: self, Home: "/home/pi/.shelldon", MemoryMax: defaultMemoryMax}},
		{"user", unitSpec{User: true, Exe: self, Home: "/home/pi/.shelldon", MemoryMax: 400 << 20}},
		{"odd paths", unitSpec{RunAs: me.Username, Group: g.Name, Exe: oddExe, Home: odd, Workspace: odd + "/ws", MemoryMax: defaultMemoryMax}},
	} {
		t.Run(c.name, func(t *testing.T) {
			unit, err := renderUnit(c.spec)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), unitName)
			if err := os.WriteFile(path, []byte(unit), 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{"verify", "--man=no", path}
			if c.spec.User {
				args = []string{"--user", "verify", "--man=no", path}
			}
			cmd := exec.Command(analyze, args...)
			cmd.Env = append(os.Environ(), "SYSTEMD_LOG_LEVEL=notice", "XDG_RUNTIME_DIR="+t.TempDir())
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("systemd-analyze %s: %v\n%s\n%s", strings.Join(args, " "), err, out, unit)
			}
			// Warnings (an unknown or ignored setting) do not fail verify.
			for _, l := range strings.Split(string(out), "\n") {
				if strings.Contains(l, unitName) {
					t.Errorf("systemd-analyze: %s", l)
				}
			}
		})
	}
}

// TestServiceInstallUninstall: install writes the unit atomically and asks
// systemctl to reload, enable and start it; again it finds it unchanged; a
// unit that differs is kept unless --force, with what differs shown;
// uninstall stops, disables and removes it. A fake systemctl records the
// calls; no systemd runs.
func TestServiceInstallUninstall(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name    string
		uid     int
		env     []string
		path    string // under root ("/") or the user directory
		prefix  string // of each systemctl call
		linger  bool
		wantOut []string
	}{
		{name: "user", uid: 1000, path: "~/.config/systemd/user/shelldon.service", prefix: "--user ",
			wantOut: []string{"sudo loginctl enable-linger pi", "journalctl --user -u shelldon"}},
		{name: "user with linger", uid: 1000, path: "~/.config/systemd/user/shelldon.service", prefix: "--user ", linger: true,
			wantOut: []string{"Lingering is on for pi"}},
		{name: "system under sudo", uid: 0, env: []string{"SUDO_USER=pi"}, path: "/etc/systemd/system/shelldon.service",
			wantOut: []string{"as pi, with the home", "journalctl -u shelldon"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newFakeHost(t, c.uid, true, c.env...)
			path := filepath.Join(h.root, c.path)
			if p, ok := strings.CutPrefix(c.path, "~/"); ok {
				path = filepath.Join(h.userDir, p)
			}
			if c.linger {
				os.MkdirAll(filepath.Join(h.root, "var/lib/systemd/linger"), 0o755)
				os.WriteFile(filepath.Join(h.root, "var/lib/systemd/linger/pi"), nil, 0o644)
			}
			if err := installService(ctx, h.serviceHost, h.homeOf, defaultInstall()); err != nil {
				t.Fatal(err)
			}
			unit, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("no unit at %s: %v\n%s", path, err, h.out)
			}
			if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
				t.Errorf("unit mode %v", fi.Mode())
			}
			if leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".shelldon.service-*")); len(leftovers) > 0 {
				t.Errorf("temporary files left: %v", leftovers)
			}
			wantCalls := c.prefix + "daemon-reload\n" + c.prefix + "enable --now shelldon.service\n"
			if got := h.calls(t); got != wantCalls {
				t.Errorf("systemctl calls:\n%s\nwant:\n%s", got, wantCalls)
			}
			for _, w := range append([]string{"Wrote " + path, "capped at 256MiB"}, c.wantOut...) {
				if !strings.Contains(h.out.String(), w) {
					t.Errorf("install output lacks %q:\n%s", w, h.out)
				}
			}

			// Again: unchanged, nothing rewritten.
			h.out.Reset()
			if err := installService(ctx, h.serviceHost, h.homeOf, defaultInstall()); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(h.out.String(), "already installed and unchanged") {
				t.Errorf("second install:\n%s", h.out)
			}

			// A different memory cap: refused without --force, with the diff.
			h.out.Reset()
			o := installOptions{memory: 400 << 20}
			err = installService(ctx, h.serviceHost, h.homeOf, o)
			var ee exitError
			if !errors.As(err, &ee) || !strings.Contains(ee.msg, "- MemoryMax=268435456") || !strings.Contains(ee.msg, "+ MemoryMax=419430400") ||
				!strings.Contains(ee.msg, "--force") {
				t.Fatalf("install over a different unit: %v", err)
			}
			if now, _ := os.ReadFile(path); !bytes.Equal(now, unit) {
				t.Fatalf("the unit changed without --force")
			}
			o.force = true
			if err := installService(ctx, h.serviceHost, h.homeOf, o); err != nil {
				t.Fatal(err)
			}
			if now, _ := os.ReadFile(path); !strings.Contains(string(now), "MemoryMax=419430400") {
				t.Fatalf("--force did not replace the unit:\n%s", now)
			}

			// Uninstall.
			os.Truncate(h.log, 0)
			h.out.Reset()
			if err := uninstallService(ctx, h.serviceHost, false); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the unit is still there: %v", err)
			}
			if got, want := h.calls(t), c.prefix+"disable --now shelldon.service\n"+c.prefix+"daemon-reload\n"; got != want {
				t.Errorf("uninstall systemctl calls:\n%s\nwant:\n%s", got, want)
			}
			if _, err := os.Stat(h.home); err != nil {
				t.Errorf("uninstall touched the home: %v", err)
			}
			h.out.Reset()
			if err := uninstallService(ctx, h.serviceHost, false); err != nil || !strings.Contains(h.out.String(), "nothing to uninstall") {
				t.Errorf("uninstall again: %v\n%s", err, h.out)
			}
		})
	}
}

// TestServiceInstallRefusals: what install and uninstall refuse, and that
// a refusal writes nothing and runs nothing.
func TestServiceInstallRefusals(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name  string
		uid   int
		env   []string
		opts  installOptions
		setup func(t *testing.T, h *fakeHost)
		want  string
	}{
		{name: "root without sudo or --user", uid: 0, opts: defaultInstall(), want: "--user NAME"},
		{name: "root via sudo from root", uid: 0, env: []string{"SUDO_USER=root"}, opts: defaultInstall(), want: "--user NAME"},
		{name: "unknown --user", uid: 0, opts: installOptions{memory: defaultMemoryMax, user: "nosuchuser"}, want: `no user "nosuchuser"`},
		{name: "a user for another", uid: 1000, opts: installOptions{memory: defaultMemoryMax, user: "root"}, want: "only root installs"},
		{name: "no home", uid: 1000, opts: defaultInstall(),
			setup: func(t *testing.T, h *fakeHost) { os.RemoveAll(h.home) }, want: "run `shelldon init`"},
		{name: "a home that does not load", uid: 1000, opts: defaultInstall(),
			setup: func(t *testing.T, h *fakeHost) { writeServiceHome(t, h.home, "nonsense: [\n") }, want: "does not load"},
		{name: "binary under /tmp", uid: 1000, opts: defaultInstall(),
			setup: func(t *testing.T, h *fakeHost) {
				exe := filepath.Join(h.root, "tmp/go-build1/exe/shelldon")
				os.MkdirAll(filepath.Dir(exe), 0o755)
				os.WriteFile(exe, nil, 0o755)
				h.exe = func() (string, error) { return exe, nil }
			}, want: "install it first"},
		{name: "home under /var/tmp", uid: 1000, opts: defaultInstall(),
			setup: func(t *testing.T, h *fakeHost) {
				home := filepath.Join(h.root, "var/tmp/sh")
				writeServiceHome(t, home, "")
				h.environ = append(h.environ, "SHELLDON_HOME="+home)
			}, want: "var/tmp, which the service does not see (PrivateTmp)"},
		{name: "workspace under /tmp", uid: 1000, opts: defaultInstall(),
			setup: func(t *testing.T, h *fakeHost) {
				ws := filepath.Join(h.root, "tmp/ws")
				os.MkdirAll(ws, 0o700)
				writeServiceHome(t, h.home, "workspace: "+ws+"\n")
			}, want: "which the service does not see (PrivateTmp)"},
		{name: "memory max too small", uid: 1000, opts: installOptions{memory: 1 << 20}, want: "below 16MiB"},
		{name: "a home of another user", uid: 0, env: []string{"SUDO_USER=pi"}, opts: defaultInstall(),
			setup: func(t *testing.T, h *fakeHost) {
				if os.Getuid() != 0 {
					t.Skip("needs root to chown")
				}
				if err := os.Chown(h.home, 4242, 4242); err != nil {
					t.Fatal(err)
				}
			}, want: "owned by uid 4242"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newFakeHost(t, c.uid, true, c.env...)
			if c.setup != nil {
				c.setup(t, h)
			}
			for _, dry := range []bool{true, false} {
				o := c.opts
				o.dryRun = dry
				err := installService(ctx, h.serviceHost, h.homeOf, o)
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("dry run %v: got %v, want %q", dry, err, c.want)
				}
			}
			if calls := h.calls(t); calls != "" {
				t.Errorf("systemctl ran: %s", calls)
			}
			for _, p := range []string{filepath.Join(h.root, "etc"), filepath.Join(h.userDir, ".config")} {
				if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s was created", p)
				}
			}
		})
	}
}
