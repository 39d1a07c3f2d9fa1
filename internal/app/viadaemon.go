package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/shelldon/shelldon/internal/config"
	"github.com/shelldon/shelldon/internal/core"
)

// The owner's commands that change state go through a running daemon: it
// carries out a decision and holds its lease, so a restart of either side
// never leaves a call run twice or reported as interrupted while it ran; it
// changes a tool, a skill, the config or a secret and applies the change at
// once, serialized with its own changes of them. With no daemon answering,
// the command does the work itself (for a decision, its process holds the
// lease). They are: approvals approve|deny, skills approve|deny (through
// /api/approvals), tools quarantine|restore|rollback|remove, skills
// rollback|remove, config set and config set-secret (through
// /api/settings).

// config loads the home's config, as a command that needs only it does.
func (e cmdEnv) config() (*config.Config, error) {
	home, err := e.home()
	if err != nil {
		return nil, err
	}
	return config.Load(home, e.environ)
}

// errNoDaemon says no daemon answered on the home's API address.
var errNoDaemon = errors.New("no daemon is running")

// daemonAddr is where this home's daemon listens, as a client dials it: an
// unspecified host (all interfaces) is dialed on loopback.
func daemonAddr(cfg *config.Config) string {
	host, port, err := net.SplitHostPort(cfg.Server.Listen)
	if err != nil {
		return cfg.Server.Listen
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// readAPIToken is the API token a daemon of this home uses, without making
// one: SHELLDON_API_TOKEN, else the token file; "" when there is none (no
// daemon has run here).
func readAPIToken(cfg *config.Config) string {
	if t := cfg.Secret(config.EnvAPIToken); t != "" {
		return t
	}
	data, err := os.ReadFile(cfg.Path(tokenFile))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}

// decideViaDaemon asks the home's running daemon to decide request id and
// carry it out, and returns what it answered. errNoDaemon means none
// answered (the caller decides itself); a refusal (unknown, already
// decided, expired, no longer possible) is the daemon's message.
func decideViaDaemon(ctx context.Context, cfg *config.Config, id string, approve bool) (core.Outcome, error) {
	var out core.Outcome
	err := callDaemon(ctx, cfg, http.MethodPost, "/api/approvals/"+url.PathEscape(id), map[string]bool{"approve": approve}, &out)
	return out, err
}

// callDaemon sends one request to the home's running daemon and decodes its
// answer into out. errNoDaemon means none answered with this home's token;
// a 4xx is the daemon's refusal, as the owner's failure (exitError).
func callDaemon(ctx context.Context, cfg *config.Config, method, path string, body, out any) error {
	token := readAPIToken(cfg)
	if token == "" {
		return errNoDaemon
	}
	addr := daemonAddr(cfg)
	conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return errNoDaemon
	}
	conn.Close()
	raw, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, method, "http://"+addr+path, bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("ask the daemon at %s: %w", addr, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("ask the daemon at %s: %w", addr, err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return fmt.Errorf("ask the daemon at %s: %w", addr, err)
	}
	if resp.StatusCode == http.StatusUnauthorized {
		// Something answers, but not with this home's token: not our
		// daemon, or one started with another SHELLDON_API_TOKEN.
		return errNoDaemon
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error struct{ Code, Message string }
		}
		if json.Unmarshal(answer, &e) != nil || e.Error.Message == "" {
			return fmt.Errorf("the daemon at %s answered %s", addr, resp.Status)
		}
		if resp.StatusCode >= 400 && resp.StatusCode < 500 {
			return exitError{code: exitFail, msg: "shelldon: " + e.Error.Message}
		}
		return fmt.Errorf("the daemon at %s: %s", addr, e.Error.Message)
	}
	if err := json.Unmarshal(answer, out); err != nil {
		return fmt.Errorf("the daemon at %s answered something else: %w", addr, err)
	}
	return nil
}
