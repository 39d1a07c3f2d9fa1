package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/shelldon/shelldon/internal/config"
)

// serviceHost is what `shelldon service` reads of the machine; tests
// substitute every part.
type serviceHost struct {
	uid      int                                   // the invoking process's
	current  func() (*user.User, error)            // the invoking user
	lookup   func(name string) (*user.User, error) // a user by name
	group    func(gid string) (*user.Group, error)
	exe      func() (string, error) // the running binary
	root     string                 // "/" but in tests: where /etc, /run and /var are
	environ  []string
	stdout   io.Writer
	explicit bool // the home was given with --home
}

func realServiceHost(e cmdEnv, explicit bool) serviceHost {
	return serviceHost{
		uid: os.Getuid(), current: user.Current, lookup: user.Lookup, group: user.LookupGroupId,
		exe: os.Executable, root: "/", environ: e.environ, stdout: e.stdout, explicit: explicit,
	}
}

func (e cmdEnv) serviceCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "service",
		Short: "Run shelldon under systemd: install, uninstall or check its service",
		Long: "Run `shelldon serve` as a systemd service that starts at boot, restarts when it fails and\n" +
			"is capped in memory, with this home (so your `shelldon` commands share it).\n\n" +
			"Run as yourself, it installs a user service (~/.config/systemd/user/shelldon.service);\n" +
			"run with sudo, a system service (/etc/systemd/system/shelldon.service) that runs as the\n" +
			"user who ran sudo, or as --user NAME.",
		Example: "  shelldon service install --dry-run     # print the unit, write nothing\n" +
			"  shelldon service install               # a user service, for you\n" +
			"  sudo shelldon service install          # a system service that runs as you\n" +
			"  sudo shelldon service install --memory-max 400M\n" +
			"  shelldon service status\n" +
			"  shelldon service uninstall",
		Args: cobra.NoArgs,
	}
	explicit := func(c *cobra.Command) bool { f := c.Flag("home"); return f != nil && f.Changed }

	var o installOptions
	install := &cobra.Command{
		Use:   "install",
		Short: "Write the systemd unit, then enable and start it",
		Long: "Write a hardened systemd unit that runs `shelldon serve` with this home, then (where\n" +
			"systemd runs) reload systemd and enable and start the service. It says what it did.\n" +
			"An existing unit that differs is kept unless --force.",
		Example: "  shelldon service install --dry-run\n  sudo shelldon service install --user pi --memory-max 400M",
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			size, err := config.ParseByteSize(o.memoryMax)
			if err != nil {
				return exitError{code: exitConfig, msg: "shelldon: --memory-max: " + err.Error()}
			}
			o.memory = size
			return installService(c.Context(), realServiceHost(e, explicit(c)), e.home, o)
		},
	}
	install.Flags().BoolVar(&o.dryRun, "dry-run", false, "print the unit and where it would go; write nothing")
	install.Flags().BoolVar(&o.force, "force", false, "replace a unit that differs")
	install.Flags().StringVar(&o.user, "user", "", "as root: the user the service runs as (default: the user who ran sudo)")
	install.Flags().StringVar(&o.memoryMax, "memory-max", "256MiB", "the service's memory cap (systemd MemoryMax)")

	var force bool
	uninstall := &cobra.Command{
		Use:   "uninstall",
		Short: "Stop and disable the service, and remove its unit",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return uninstallService(c.Context(), realServiceHost(e, explicit(c)), force)
		},
	}
	uninstall.Flags().BoolVar(&force, "force", false, "remove the unit even if shelldon did not write it")

	status := &cobra.Command{
		Use:   "status",
		Short: "Say whether the service is installed and running, and whether the daemon answers",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return serviceStatus(c.Context(), realServiceHost(e, explicit(c)), e.home)
		},
	}
	cmd.AddCommand(install, uninstall, status)
	return cmd
}

type installOptions struct {
	dryRun, force bool
	user          string
	memoryMax     string
	memory        config.ByteSize
}

// unitPlace is where a unit lives and how systemctl reaches it.
type unitPlace struct {
	path  string
	user  bool   // a user unit: systemctl --user
	owner string // who it runs as
}

// systemPlace and userPlace are the system unit and the invoking user's.
func (h serviceHost) systemPlace() string {
	return filepath.Join(h.root, "etc/systemd/system", unitName)
}

func (h serviceHost) userPlace() (string, error) {
	if x := lookupEnv(h.environ, "XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "systemd/user", unitName), nil
	}
	home := lookupEnv(h.environ, "HOME")
	if home == "" {
		u, err := h.current()
		if err != nil {
			return "", fmt.Errorf("service: find your home directory: %w", err)
		}
		home = u.HomeDir
	}
	return filepath.Join(home, ".config/systemd/user", unitName), nil
}

// systemdRunning reports whether systemd is this machine's init (its
// documented test: /run/systemd/system exists).
func (h serviceHost) systemdRunning() bool {
	fi, err := os.Stat(filepath.Join(h.root, "run/systemd/system"))
	return err == nil && fi.IsDir()
}

// plan decides who the service runs as, with which home, and where its
// unit goes. As root, it is a system unit for --user, else for the user
// who ran sudo; plain root without --user is refused, since the point is
// that the owner's own CLI shares the home (--user root says it outright).
func (h serviceHost) plan(homeOf func() (string, error), o installOptions) (unitSpec, unitPlace, []string, error) {
	var notes []string
	fail := func(format string, args ...any) (unitSpec, unitPlace, []string, error) {
		return unitSpec{}, unitPlace{}, nil, exitError{code: exitConfig, msg: "shelldon: " + fmt.Sprintf(format, args...)}
	}
	var spec unitSpec
	var place unitPlace
	var owner *user.User
	if h.uid == 0 {
		name := o.user
		if name == "" {
			name = lookupEnv(h.environ, "SUDO_USER")
			if name == "root" {
				name = ""
			}
		}
		if name == "" {
			return fail("as root, say which user the service runs as: --user NAME (its shelldon home is used, and its " +
				"`shelldon` commands share it); --user root runs it as root, which is not advised")
		}
		u, err := h.lookup(name)
		if err != nil {
			return fail("no user %q: %v", name, err)
		}
		g, err := h.group(u.Gid)
		if err != nil {
			return fail("the group %s of %s: %v", u.Gid, name, err)
		}
		if u.Uid == "0" {
			notes = append(notes, "warning: the service runs as root: a bug in shelldon or its sandbox would have the whole machine; prefer --user NAME")
		}
		owner = u
		spec.RunAs, spec.Group = u.Username, g.Name
		place = unitPlace{path: h.systemPlace(), owner: u.Username}
	} else {
		u, err := h.current()
		if err != nil {
			return fail("who are you: %v", err)
		}
		if o.user != "" && o.user != u.Username {
			return fail("only root installs a service for another user: sudo shelldon service install --user %s", o.user)
		}
		owner = u
		path, err := h.userPlace()
		if err != nil {
			return fail("%v", err)
		}
		spec.User = true
		place = unitPlace{path: path, user: true, owner: u.Username}
	}

	// The home: as given (--home, SHELLDON_HOME), else the owner's default,
	// which under sudo is not root's.
	home, err := homeOf()
	if err != nil {
		return fail("%v", err)
	}
	if h.uid == 0 && !h.explicit && lookupEnv(h.environ, config.EnvHome) == "" {
		home = filepath.Join(owner.HomeDir, ".shelldon")
	}
	fi, err := os.Stat(home)
	if err != nil {
		return fail("the home %s: %v; run `shelldon init` as %s first", home, err, owner.Username)
	}
	if uid, ok := fileOwner(fi); ok && strconv.FormatUint(uint64(uid), 10) != owner.Uid {
		return fail("the home %s is owned by uid %d, not %s, who the service runs as: it could not write it (chown -R %s %s)",
			home, uid, owner.Username, owner.Username, shellQuote(home))
	}
	// Loaded with what the service's environment will hold: a key set only
	// in this shell is not the service's.
	cfg, err := config.Load(home, []string{"HOME=" + owner.HomeDir, config.EnvHome + "=" + home})
	if err != nil {
		return fail("the home %s does not load as the service would load it, with no environment but the home's .env "+
			"(%v): fix it first (`shelldon doctor`; a key goes in .env with `shelldon config set-secret NAME`)", home, err)
	}
	spec.Home = cfg.Home
	for _, p := range []struct{ what, path string }{{"home", resolved(cfg.Home)}, {"workspace", resolved(cfg.Workspace)}} {
		if tmp := h.underTmp(p.path); tmp != "" {
			return fail("the %s %s is under %s, which the service does not see (PrivateTmp) and which is cleared at boot: "+
				"move it to a directory of its own", p.what, p.path, tmp)
		}
	}
	if ws := resolved(cfg.Workspace); !within(ws, resolved(cfg.Home)) {
		if _, err := os.Stat(ws); err != nil {
			return fail("the workspace %s is outside the home and does not exist: the service could not create it "+
				"(the system is read-only to it); create it first, as %s", ws, owner.Username)
		}
		spec.Workspace = ws
	}

	exe, err := h.exe()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return fail("find the running shelldon binary: %v", err)
	}
	if tmp := h.underTmp(exe); tmp != "" {
		return fail("the shelldon binary is %s, under %s, which the service does not see (PrivateTmp) and which is "+
			"cleared at boot: install it first (e.g. sudo install -m 0755 %s /usr/local/bin/shelldon) and run that one",
			exe, tmp, shellQuote(exe))
	}
	spec.Exe = exe
	spec.MemoryMax = o.memory
	return spec, place, notes, nil
}

// underTmp is the temporary directory path is in (/tmp, /var/tmp), or "".
func (h serviceHost) underTmp(path string) string {
	for _, tmp := range []string{"tmp", "var/tmp"} {
		if dir := filepath.Join(h.root, tmp); within(path, dir) {
			return dir
		}
	}
	return ""
}

// resolved is path with its symlinks resolved, or path as it is.
func resolved(path string) string {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	return filepath.Clean(path)
}

// installService writes the unit (after a dry run, only prints it), then
// reloads systemd and enables and starts the service where systemd runs.
func installService(ctx context.Context, h serviceHost, homeOf func() (string, error), o installOptions) error {
	spec, place, notes, err := h.plan(homeOf, o)
	if err != nil {
		return err
	}
	unit, err := renderUnit(spec)
	if err != nil {
		return exitError{code: exitConfig, msg: "shelldon: " + err.Error()}
	}
	w := h.stdout
	if o.dryRun {
		fmt.Fprintf(w, "# %s (dry run: nothing written)\n", place.path)
		for _, n := range notes {
			fmt.Fprintf(w, "# %s\n", n)
		}
		fmt.Fprint(w, unit)
		return nil
	}
	for _, n := range notes {
		fmt.Fprintln(w, n)
	}
	old, err := os.ReadFile(place.path)
	switch {
	case err == nil && string(old) == unit:
		fmt.Fprintf(w, "%s is already installed and unchanged.\n", place.path)
	case err == nil && !o.force:
		return exitError{code: exitFail, msg: fmt.Sprintf("shelldon: %s exists and differs (- now, + new):\n%s"+
			"Run with --force to replace it.", place.path, lineDiff(string(old), unit))}
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("service: read %s: %w", place.path, err)
	default:
		if err := writeUnit(place.path, unit); err != nil {
			return err
		}
		fmt.Fprintf(w, "Wrote %s.\n", place.path)
	}
	fmt.Fprintf(w, "It runs %s serve as %s, with the home %s, capped at %s of memory.\n",
		spec.Exe, place.owner, spec.Home, spec.MemoryMax)
	sc := "systemctl" + userFlag(place.user)
	if !h.systemdRunning() {
		fmt.Fprintf(w, "systemd is not running here (no /run/systemd/system), so nothing was started.\n"+
			"On the machine that runs it: %s daemon-reload && %s enable --now %s\n", sc, sc, unitName)
		return nil
	}
	for _, args := range [][]string{{"daemon-reload"}, {"enable", "--now", unitName}} {
		if err := h.systemctl(ctx, place.user, args...); err != nil {
			return err
		}
		fmt.Fprintf(w, "Ran %s %s.\n", sc, strings.Join(args, " "))
	}
	fmt.Fprintf(w, "The service is enabled (it starts at boot) and started. Logs: journalctl%s -u shelldon -f\n", userFlag(place.user))
	if place.user {
		linger := filepath.Join(h.root, "var/lib/systemd/linger", place.owner)
		if _, err := os.Stat(linger); err == nil {
			fmt.Fprintf(w, "Lingering is on for %s: it runs from boot, logged in or not.\n", place.owner)
		} else {
			fmt.Fprintf(w, "A user service runs only while %s is logged in; to start it at boot and keep it running: sudo loginctl enable-linger %s\n",
				place.owner, place.owner)
		}
	}
	fmt.Fprintln(w, "`shelldon doctor` says whether this kernel enforces the memory cap.")
	return nil
}

// writeUnit writes the unit atomically: a temporary file in the same
// directory, synced, then renamed over the path.
func writeUnit(path, unit string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("service: create %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, ".shelldon.service-*")
	if err != nil {
		return fmt.Errorf("service: write %s: %w", path, err)
	}
	defer os.Remove(f.Name())
	if _, err := f.WriteString(unit); err == nil {
		err = f.Chmod(0o644)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("service: write %s: %w", path, err)
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// lineDiff lists the lines only in old (-) and only in new (+), in order.
func lineDiff(old, new string) string {
	count := func(s string) map[string]int {
		m := map[string]int{}
		for _, l := range strings.Split(s, "\n") {
			m[l]++
		}
		return m
	}
	inOld, inNew := count(old), count(new)
	var b strings.Builder
	for _, l := range strings.Split(old, "\n") {
		if inNew[l] > 0 {
			inNew[l]--
			continue
		}
		fmt.Fprintf(&b, "  - %s\n", l)
	}
	inNew = count(new)
	for _, l := range strings.Split(new, "\n") {
		if inOld[l] > 0 {
			inOld[l]--
			continue
		}
		fmt.Fprintf(&b, "  + %s\n", l)
	}
	return b.String()
}
