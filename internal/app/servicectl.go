package app

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/shelldon/shelldon/internal/config"
)

// systemctl runs systemctl (found on the PATH of the environment) with
// args, and fails with what it said.
func (h serviceHost) systemctl(ctx context.Context, user bool, args ...string) error {
	out, err := h.systemctlOutput(ctx, user, args...)
	if err != nil {
		return fmt.Errorf("service: systemctl%s %s: %w: %s", userFlag(user), strings.Join(args, " "), err, strings.TrimSpace(out))
	}
	return nil
}

func (h serviceHost) systemctlOutput(ctx context.Context, user bool, args ...string) (string, error) {
	bin, err := lookPathIn(h.environ, "systemctl")
	if err != nil {
		return "", err
	}
	if user {
		args = append([]string{"--user"}, args...)
	}
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = h.environ
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	return out.String(), err
}

// lookPathIn finds an executable named name on environ's PATH.
func lookPathIn(environ []string, name string) (string, error) {
	for _, dir := range filepath.SplitList(lookupEnv(environ, "PATH")) {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s is not on PATH", name)
}

// uninstallService stops and disables the service and removes its unit:
// the system unit as root, else the invoking user's.
func uninstallService(ctx context.Context, h serviceHost, force bool) error {
	place := unitPlace{path: h.systemPlace()}
	if h.uid != 0 {
		path, err := h.userPlace()
		if err != nil {
			return err
		}
		place = unitPlace{path: path, user: true}
	}
	w := h.stdout
	data, err := os.ReadFile(place.path)
	if errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(w, "No unit at %s: nothing to uninstall.\n", place.path)
		if h.uid != 0 {
			if _, err := os.Stat(h.systemPlace()); err == nil {
				fmt.Fprintf(w, "There is a system unit at %s: sudo shelldon service uninstall\n", h.systemPlace())
			}
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("service: read %s: %w", place.path, err)
	}
	if !strings.HasPrefix(string(data), unitMarker) && !force {
		return exitError{code: exitFail, msg: fmt.Sprintf("shelldon: %s was not written by `shelldon service install`; "+
			"remove it yourself, or run with --force", place.path)}
	}
	sc := "systemctl" + userFlag(place.user)
	running := h.systemdRunning()
	if running {
		if err := h.systemctl(ctx, place.user, "disable", "--now", unitName); err != nil {
			return err
		}
		fmt.Fprintf(w, "Ran %s disable --now %s: the service is stopped and will not start at boot.\n", sc, unitName)
	}
	if err := os.Remove(place.path); err != nil {
		return fmt.Errorf("service: remove %s: %w", place.path, err)
	}
	fmt.Fprintf(w, "Removed %s.\n", place.path)
	if running {
		if err := h.systemctl(ctx, place.user, "daemon-reload"); err != nil {
			return err
		}
		fmt.Fprintf(w, "Ran %s daemon-reload.\n", sc)
	}
	fmt.Fprintln(w, "The home and its data are untouched.")
	return nil
}

// serviceStatus says which units are installed, whether systemd has them
// active, and whether the home's daemon answers /healthz.
func serviceStatus(ctx context.Context, h serviceHost, homeOf func() (string, error)) error {
	w := h.stdout
	places := []unitPlace{{path: h.systemPlace()}}
	if h.uid != 0 {
		if path, err := h.userPlace(); err == nil {
			places = append(places, unitPlace{path: path, user: true})
		}
	}
	found, unitHome := false, ""
	for _, p := range places {
		kind := "system"
		if p.user {
			kind = "user"
		}
		if _, err := os.Stat(p.path); err != nil {
			fmt.Fprintf(w, "%-8s not installed (%s)\n", kind+":", p.path)
			continue
		}
		found = true
		if unitHome == "" {
			unitHome = homeInUnit(p.path)
		}
		state := "unknown: systemd is not running here"
		if h.systemdRunning() {
			out, _ := h.systemctlOutput(ctx, p.user, "is-active", unitName)
			state = strings.TrimSpace(out)
			if state == "" {
				state = "unknown"
			}
		}
		fmt.Fprintf(w, "%-8s installed at %s; %s\n", kind+":", p.path, state)
	}
	if !found {
		fmt.Fprintln(w, "Install it with: shelldon service install (or sudo shelldon service install)")
	}
	// The home the unit names, else this command's.
	home := unitHome
	if home == "" || h.explicit {
		var err error
		if home, err = homeOf(); err != nil {
			return err
		}
	}
	cfg, err := config.Load(home, h.environ)
	if err != nil {
		fmt.Fprintf(w, "daemon:  the home %s does not load: %v\n", home, err)
		return nil
	}
	fmt.Fprintf(w, "daemon:  %s\n", healthz(ctx, cfg))
	return nil
}

// homeInUnit is the home a unit renderUnit wrote names, or "".
func homeInUnit(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, `Environment="`+config.EnvHome+"="); ok && strings.HasSuffix(v, `"`) {
			return strings.ReplaceAll(strings.TrimSuffix(v, `"`), "%%", "%")
		}
	}
	return ""
}

// healthz asks the home's daemon whether it is up, in a few words.
func healthz(ctx context.Context, cfg *config.Config) string {
	scheme := "http"
	// No secret is sent: this only asks whether something answers there.
	client := &http.Client{Timeout: 3 * time.Second}
	if cfg.Server.TLSCert != "" {
		scheme = "https"
		client.Transport = &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	}
	url := scheme + "://" + daemonAddr(cfg) + "/healthz"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err.Error()
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Sprintf("does not answer at %s", url)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Sprintf("%s answered %s", url, resp.Status)
	}
	return fmt.Sprintf("answers at %s", url)
}
