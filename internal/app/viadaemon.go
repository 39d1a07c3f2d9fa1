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
	"os"
	"strings"
	"time"

	"github.com/shelldon/shelldon/internal/config"
	"github.com/shelldon/shelldon/internal/core"
)

// The owner's decisions at the terminal go through a running daemon: the
// daemon then carries them out and holds their lease, so a restart of
// either side never leaves a call run twice or reported as interrupted
// while it ran. With no daemon answering, the command decides and carries
// out itself (its process holds the lease).

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
	token := readAPIToken(cfg)
	if token == "" {
		return core.Outcome{}, errNoDaemon
	}
	addr := daemonAddr(cfg)
	conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return core.Outcome{}, errNoDaemon
	}
	conn.Close()
	body, _ := json.Marshal(map[string]bool{"approve": approve})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/api/approvals/"+id, bytes.NewReader(body))
	if err != nil {
		return core.Outcome{}, fmt.Errorf("ask the daemon at %s: %w", addr, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return core.Outcome{}, fmt.Errorf("ask the daemon at %s: %w", addr, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return core.Outcome{}, fmt.Errorf("ask the daemon at %s: %w", addr, err)
	}
	if resp.StatusCode == http.StatusUnauthorized {
		// Something answers, but not with this home's token: not our
		// daemon, or one started with another SHELLDON_API_TOKEN.
		return core.Outcome{}, errNoDaemon
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error struct{ Code, Message string }
		}
		if json.Unmarshal(raw, &e) != nil || e.Error.Message == "" {
			return core.Outcome{}, fmt.Errorf("the daemon at %s answered %s", addr, resp.Status)
		}
		err := errors.New(e.Error.Message)
		if resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusConflict {
			return core.Outcome{}, exitError{code: exitFail, msg: "shelldon: " + e.Error.Message}
		}
		return core.Outcome{}, fmt.Errorf("the daemon at %s: %w", addr, err)
	}
	var out core.Outcome
	if err := json.Unmarshal(raw, &out); err != nil {
		return core.Outcome{}, fmt.Errorf("the daemon at %s answered something else: %w", addr, err)
	}
	return out, nil
}
