package app

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/shelldon/shelldon/internal/config"
	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/core/store"
	"github.com/shelldon/shelldon/internal/core/toolbox"
	"github.com/shelldon/shelldon/internal/sandbox"
	"github.com/shelldon/shelldon/internal/selfcode/pytool"
	"github.com/shelldon/shelldon/internal/transport/telegram"
)

func (e cmdEnv) doctorCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Check the config, the home's permissions and that the provider answers",
		Long: "Check the config, the home's permissions and that each provider answers: with its models\n" +
			"endpoint, or, for a server without one (many OpenAI-compatible servers), with one short model\n" +
			"request. Exits 0 only when all is well.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			home, err := e.home()
			if err != nil {
				return err
			}
			d := &doctor{w: e.stdout, sh: shelldonFor(home, e.environ)}
			cfg, err := config.Load(home, e.environ)
			if err != nil {
				d.fail("config", err.Error())
				return exitError{code: exitConfig}
			}
			d.ok("config", fmt.Sprintf("%s (provider %s, model %s, %d fallback)", home, cfg.Provider.Kind, cfg.Provider.Model, len(cfg.Fallback)))
			d.checkPerms(cfg)
			d.checkStore(cmd.Context(), cfg)
			d.checkTools(cmd.Context(), cfg)
			d.checkProviders(cmd.Context(), cfg)
			d.checkSandbox(cmd.Context(), cfg)
			d.checkMemoryController("/")
			d.checkDisk(cfg)
			d.checkPython(cmd.Context())
			d.checkTelegram(cmd.Context(), cfg)
			d.checkGitRemotes(cmd.Context(), cfg) // doctorgit.go
			d.checkLANHosts(cfg)                  // doctorlan.go
			d.checkServer(cfg)
			if d.failed > 0 {
				return exitError{code: exitFail, msg: fmt.Sprintf("%d check(s) failed", d.failed)}
			}
			fmt.Fprintln(e.stdout, "All checks passed.")
			return nil
		},
	}
}

type doctor struct {
	w      io.Writer
	sh     string // the command line that runs shelldon on this home, for a fix
	failed int
}

func (d *doctor) ok(what, msg string)   { fmt.Fprintf(d.w, "✓ %-10s %s\n", what, msg) }
func (d *doctor) warn(what, msg string) { fmt.Fprintf(d.w, "! %-10s %s\n", what, msg) }
func (d *doctor) fail(what, msg string) {
	d.failed++
	fmt.Fprintf(d.w, "✗ %-10s %s\n", what, msg)
}

// checkPerms wants the home and every secret-bearing file closed to others.
func (d *doctor) checkPerms(cfg *config.Config) {
	checks := []struct {
		name string
		path string
		want fs.FileMode
		dir  bool
	}{
		{"home", cfg.Home, 0o700, true},
		{".env", cfg.Path(".env"), 0o600, false},
		{"database", cfg.Path(dbFile), 0o600, false},
		{"api token", cfg.Path(tokenFile), 0o600, false},
	}
	for _, c := range checks {
		fi, err := os.Stat(c.path)
		if os.IsNotExist(err) && !c.dir {
			continue
		}
		if err != nil {
			d.fail(c.name, err.Error())
			continue
		}
		if perm := fi.Mode().Perm(); perm&0o077 != 0 {
			d.fail(c.name, fmt.Sprintf("%s is mode %04o; others can read it: chmod %04o %s", c.path, perm, c.want, c.path))
			continue
		}
		d.ok(c.name, fmt.Sprintf("%s (mode %04o)", c.path, fi.Mode().Perm()))
	}
	d.checkWorkspace(cfg)
	for _, dir := range []struct{ name, what string }{
		{"tools", "the self-coded tools"},
		{"skills", "the skills"},
	} {
		path := cfg.Path(dir.name)
		fi, err := os.Lstat(path)
		switch {
		case os.IsNotExist(err):
			d.ok(dir.name, path+" (created on first start)")
		case err != nil:
			d.fail(dir.name, err.Error())
		case !fi.IsDir():
			d.fail(dir.name, fmt.Sprintf("%s is %s, not a directory: shelldon keeps %s there; move it away (mv %s %s.old) and start shelldon again", path, fileKind(fi), dir.what, path, path))
		default:
			d.ok(dir.name, path)
		}
	}
	if t := cfg.Secret(config.EnvAPIToken); t != "" && len(t) < config.MinAPIToken {
		d.fail("api token", fmt.Sprintf("%s is %d characters; the HTTP API refuses one shorter than %d: shelldon config set-secret %s", config.EnvAPIToken, len(t), config.MinAPIToken, config.EnvAPIToken))
	}
}

// checkWorkspace wants the workspace a directory of its own: the file
// tools may read and write everything under it, so it must not be the
// root, the shelldon home (the database, .env) or a directory holding the
// home, whether it is named so or is a symlink to one.
func (d *doctor) checkWorkspace(cfg *config.Config) {
	ws := cfg.Workspace
	fi, err := os.Lstat(ws)
	if os.IsNotExist(err) {
		d.ok("workspace", ws+" (created on first start)")
		return
	}
	if err != nil {
		d.fail("workspace", err.Error())
		return
	}
	real, err := filepath.EvalSymlinks(ws)
	if err != nil {
		d.fail("workspace", fmt.Sprintf("%s is a symlink that does not resolve: %v", ws, err))
		return
	}
	shown := ws
	if fi.Mode()&fs.ModeSymlink != 0 {
		shown = ws + " -> " + real
	}
	rfi, err := os.Stat(real)
	switch {
	case err != nil:
		d.fail("workspace", err.Error())
	case !rfi.IsDir():
		d.fail("workspace", fmt.Sprintf("%s is %s, not a directory: move it away and start shelldon again (it creates the workspace)", shown, fileKind(rfi)))
	default:
		if problem := workspaceReach(cfg, real); problem != "" {
			d.fail("workspace", shown+" "+problem)
		} else {
			d.ok("workspace", shown)
		}
	}
}

// workspaceReach says what the file tools would reach through the
// workspace resolved to real that they must not ("" when nothing): the
// whole file system, or shelldon's home.
func workspaceReach(cfg *config.Config, real string) string {
	home, err := filepath.EvalSymlinks(cfg.Home)
	if err != nil {
		home = cfg.Home
	}
	switch {
	case real == "/" || real == filepath.Dir(real):
		return "is the root of the file system: the agent's file tools would reach every file this user can; point workspace (or the symlink) at a directory of its own"
	case within(home, real):
		return fmt.Sprintf("holds shelldon's home %s (the database, .env, the tools): the agent's file tools would reach them; point workspace (or the symlink) at a directory of its own", cfg.Home)
	}
	return ""
}

// checkWorkspaceReach refuses to run turns over a workspace that reaches
// the whole file system or shelldon's home (doctor says the same).
func checkWorkspaceReach(cfg *config.Config) error {
	real, err := filepath.EvalSymlinks(cfg.Workspace)
	if err != nil {
		return fmt.Errorf("workspace %s: %w", cfg.Workspace, err)
	}
	if problem := workspaceReach(cfg, real); problem != "" {
		return fmt.Errorf("workspace %s (%s) %s", cfg.Workspace, real, problem)
	}
	return nil
}

// within reports whether path is dir or inside it (both cleaned and
// absolute).
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// fileKind names what fi is, for a message.
func fileKind(fi fs.FileInfo) string {
	switch m := fi.Mode(); {
	case m.IsRegular():
		return "a file"
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	case m.IsDir():
		return "a directory"
	default:
		return "a special file"
	}
}

func (d *doctor) checkStore(ctx context.Context, cfg *config.Config) {
	st, err := store.Open(ctx, cfg.Path(dbFile))
	if err != nil {
		d.fail("database", err.Error())
		return
	}
	st.Close()
	d.ok("database", "opens and is migrated")
}

// checkProviders checks that each provider answers: with its models
// endpoint, or with a test request when it has none, and says which. A
// failure says what to do about it.
func (d *doctor) checkProviders(ctx context.Context, cfg *config.Config) {
	providers, err := buildProviders(cfg)
	if err != nil {
		d.fail("provider", err.Error())
		return
	}
	for i, p := range providers {
		pc := cfg.Providers()[i]
		label := fmt.Sprintf("%s (%s at %s)", pc.Name, pc.Model, pc.BaseURL)
		c := checkProvider(ctx, p, turnTimeout(pc))
		how := "checked with the " + c.how
		if c.how == checkTurn {
			how = "checked with " + c.how
			if c.why != "" {
				how += " because " + c.why
			}
		}
		if c.err != nil {
			msg := fmt.Sprintf("%s: %v (%s)", label, c.err, how)
			if fix := providerFix(ctx, cfg, pc, c.err, d.sh); fix != "" {
				msg += "\n" + strings.Repeat(" ", 13) + fix
			}
			d.fail("provider", msg)
			continue
		}
		d.ok("provider", fmt.Sprintf("%s answers, %s (%s)", label, how, c.elapsed.Round(time.Millisecond)))
	}
}

// checkSandbox prints each containment layer this kernel gives the sandbox.
// A missing required layer fails, unless the owner allowed a degraded
// sandbox, which is then said loudly.
func (d *doctor) checkSandbox(ctx context.Context, cfg *config.Config) {
	exe, err := core.Executable()
	if err != nil {
		d.fail("sandbox", err.Error())
		return
	}
	runner, err := sandbox.NewRunner(exe)
	if err != nil {
		d.fail("sandbox", err.Error())
		return
	}
	d.reportTier(runner.Probe(ctx), cfg.Sandbox.AllowDegraded)
}

// reportTier prints each layer of tier, then the tier: a warning that
// names what is missing and what that costs when a required layer is, and
// a line on what the absent optional layers cost.
func (d *doctor) reportTier(tier sandbox.Tier, allowDegraded bool) {
	var missing, optional []string
	for _, l := range tier.Layers {
		label := "sandbox: " + l.Name
		switch {
		case l.OK:
			d.ok(label, strings.TrimSpace("in place "+l.Detail))
		case !l.Required:
			optional = append(optional, l.Name+" ("+layerLoss[l.Name]+")")
			fmt.Fprintf(d.w, "- %-10s %s (optional)\n", label, l.Detail)
		case allowDegraded:
			missing = append(missing, l.Name+" ("+layerLoss[l.Name]+")")
			fmt.Fprintf(d.w, "! %-10s MISSING: %s\n", label, l.Detail)
		default:
			missing = append(missing, l.Name+" ("+layerLoss[l.Name]+")")
			d.fail(label, "MISSING: "+l.Detail)
		}
	}
	switch {
	case tier.Full():
		d.ok("sandbox", "full tier: "+tier.String())
	case allowDegraded:
		d.warn("sandbox", "DEGRADED tier, allowed by sandbox.allow_degraded: code the model chooses runs without "+
			strings.Join(missing, "; "))
	default:
		d.warn("sandbox", "DEGRADED tier: missing "+strings.Join(missing, "; "))
		fmt.Fprintf(d.w, "  %-10s run_shell, git, the gate and self-coded tools will refuse to run; set sandbox.allow_degraded: true to allow them\n", "")
	}
	if len(optional) > 0 && len(tier.Layers) > 0 {
		fmt.Fprintf(d.w, "- %-10s without %s\n", "sandbox", strings.Join(optional, "; "))
	}
}

// checkDisk reports the free space of the workspace's file system against
// sandbox.min_free_disk: below it, run_shell and git refuse to start.
func (d *doctor) checkDisk(cfg *config.Config) {
	floor := uint64(cfg.Sandbox.MinFreeDisk)
	if floor == 0 {
		fmt.Fprintf(d.w, "- %-10s no floor (sandbox.min_free_disk is 0): a command may fill the workspace's file system\n", "disk")
		return
	}
	// The workspace may not exist yet (serve creates it): its file system
	// is then the nearest existing parent's.
	dir := cfg.Workspace
	for {
		if _, err := os.Stat(dir); err == nil || filepath.Dir(dir) == dir {
			break
		}
		dir = filepath.Dir(dir)
	}
	free, err := sandbox.FreeSpace(dir)
	switch {
	case err != nil:
		d.fail("disk", fmt.Sprintf("free space of %s: %v", cfg.Workspace, err))
	case free < floor:
		d.fail("disk", fmt.Sprintf("%s has %s free, below sandbox.min_free_disk (%s): run_shell and git will refuse to start",
			cfg.Workspace, roughly(free), cfg.Sandbox.MinFreeDisk))
	default:
		d.ok("disk", fmt.Sprintf("%s has %s free; commands are stopped below %s (sandbox.min_free_disk)",
			cfg.Workspace, roughly(free), cfg.Sandbox.MinFreeDisk))
	}
	ifree, ifloor, itotal, err := sandbox.FreeInodes(dir)
	switch {
	case err != nil || itotal == 0:
		// Counted above, or a file system without an inode count (btrfs).
	case ifree < ifloor:
		d.fail("disk", fmt.Sprintf("%d of %d inodes free, below the floor of %d (2%%): run_shell and git will refuse to start", ifree, itotal, ifloor))
	default:
		d.ok("disk", fmt.Sprintf("%d of %d inodes free; commands are stopped below %d (2%%)", ifree, itotal, ifloor))
	}
}

// checkPython reports whether self-coded tools may be written in Python, and
// with which guards: the static checker, and the run-time audit hook inside
// the sandboxed process.
func (d *doctor) checkPython(ctx context.Context) {
	// The python3 of the sandbox's PATH, which is what a tool runs with.
	python, err := "", exec.ErrNotFound
	for _, kv := range sandbox.Env() {
		if path, ok := strings.CutPrefix(kv, "PATH="); ok {
			for _, dir := range filepath.SplitList(path) {
				if fi, serr := os.Stat(filepath.Join(dir, "python3")); serr == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
					python, err = filepath.Join(dir, "python3"), nil
					break
				}
			}
		}
	}
	if err != nil {
		fmt.Fprintf(d.w, "- %-10s python3 is not installed: self-coded tools are written in Starlark only\n", "python")
		return
	}
	version, err := pytool.Probe(ctx, python)
	if err != nil {
		d.fail("python", err.Error())
		return
	}
	d.ok("python", fmt.Sprintf("%s %s: tools are checked before the gate and guarded at run time (audit hook), inside the sandbox", python, version))
}

// roughly is n bytes in whole GiB, or whole MiB below 1 GiB.
func roughly(n uint64) config.ByteSize {
	if n >= 1<<30 {
		return config.ByteSize(n &^ (1<<30 - 1))
	}
	return config.ByteSize(n &^ (1<<20 - 1))
}

// checkTelegram reports the Telegram transport: off, or answering, and who
// it serves.
func (d *doctor) checkTelegram(ctx context.Context, cfg *config.Config) {
	token := cfg.Secret(cfg.Telegram.TokenEnv)
	if token == "" {
		fmt.Fprintf(d.w, "- %-10s off (%s is not set)\n", "telegram", cfg.Telegram.TokenEnv)
		return
	}
	bot, err := telegram.New(telegram.Options{Token: token, APIBase: cfg.Telegram.APIBase, Core: noCore{}})
	if err != nil {
		d.fail("telegram", err.Error())
		return
	}
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	name, err := bot.Check(cctx)
	if err != nil {
		d.fail("telegram", err.Error())
		return
	}
	if len(cfg.Telegram.AllowedUsers) == 0 {
		d.fail("telegram", name+" answers, but telegram.allowed_users is empty: it serves nobody")
		return
	}
	d.ok("telegram", fmt.Sprintf("%s answers; serves user ids %v", name, cfg.Telegram.AllowedUsers))
}

// checkTools reports a self-coded tool a crash left inconsistent: an
// unfinished change, no live version while archived ones remain, a version
// that does not load, a staged version no open request can approve.
func (d *doctor) checkTools(ctx context.Context, cfg *config.Config) {
	st, err := store.Open(ctx, cfg.Path(dbFile))
	if err != nil {
		return // checkStore said why
	}
	defer st.Close()
	ps, err := toolbox.Check(ctx, cfg.Path("tools"), st)
	if err != nil {
		d.fail("tools", err.Error())
		return
	}
	for _, p := range ps {
		d.fail("tools", p.String())
	}
	if len(ps) == 0 {
		d.ok("tools", "every self-coded tool is consistent")
	}
}

// checkServer says how the API is reached: a warning when it listens
// beyond loopback over plain HTTP, and a failure when the TLS files do
// not load.
func (d *doctor) checkServer(cfg *config.Config) {
	srv := cfg.Server
	switch {
	case srv.TLSCert != "":
		if _, err := tls.LoadX509KeyPair(srv.TLSCert, srv.TLSKey); err != nil {
			d.fail("server", fmt.Sprintf("%s over HTTPS, but the certificate does not load: %v", srv.Listen, err))
			return
		}
		d.ok("server", fmt.Sprintf("%s over HTTPS (%s)", srv.Listen, srv.TLSCert))
	case loopbackListen(srv.Listen):
		d.ok("server", fmt.Sprintf("%s, this machine only", srv.Listen))
	default:
		d.warn("server", fmt.Sprintf("%s is reachable beyond this machine over plain HTTP: the API token and a browser's "+
			"session cross the network readable; set server.tls_cert and server.tls_key, or keep listen on 127.0.0.1 "+
			"behind a TLS proxy", srv.Listen))
	}
}
