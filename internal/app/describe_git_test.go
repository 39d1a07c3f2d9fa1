package app

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shelldon/shelldon/internal/config"
	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/gitguard"
)

// TestDescribeGitNet: the card of a git fetch or pull is the daemon's,
// from the parsed command and the owner's remotes: the remote, its host,
// what moves and where, the mirror; a URL, an unknown remote or a refused
// option is shown as refused, and nothing is contacted.
func TestDescribeGitNet(t *testing.T) {
	t.Parallel()
	d := describer{workspace: "/w", home: "/h", remotes: func() []gitguard.Remote {
		return []gitguard.Remote{{Name: "origin", Scheme: "https", Host: "xn--bcher-kva.example:8443"}}
	}}
	card := func(args string) string {
		raw, _ := json.Marshal(map[string]string{"args": args})
		return strings.Join(d.describe(context.Background(), contracts.ToolCall{Name: contracts.ToolGit, Arguments: string(raw)}), "\n")
	}
	got := card("pull origin main")
	for _, w := range []string{"Runs exactly: git pull origin main", "Remote: origin (https://xn--bcher-kva.example:8443)",
		"reads as 'bücher.example'", "Downloads: main into refs/remotes/origin/", "fast-forward only", "/h/cache/git-remotes/origin.git", "/w"} {
		if !strings.Contains(got, w) {
			t.Errorf("the card lacks %q:\n%s", w, got)
		}
	}
	if got := card("fetch --tags origin"); !strings.Contains(got, "every tag") {
		t.Errorf("fetch --tags:\n%s", got)
	}
	for _, args := range []string{"fetch https://attacker.example/x.git", "fetch evil", "pull origin", "fetch --upload-pack=sh origin",
		"push --force origin main", "push origin :main", "push --mirror origin", "fetch origin 'ma\u202ein'"} {
		if got := card(args); !strings.HasPrefix(got, "Would be refused: ") {
			t.Errorf("%s: %s", args, got)
		}
	}
	// A push's card is built from the commits it is bound to; with none,
	// it says it would be refused.
	if got := card("push origin main"); !strings.Contains(got, "Uploads: main:main") || !strings.Contains(got, "Would be refused: the push is not bound to commits") {
		t.Errorf("unbound push:\n%s", got)
	}
	// With no remote configured, every fetch is refused.
	if got := (describer{}).describe(context.Background(), contracts.ToolCall{Name: contracts.ToolGit, Arguments: `{"args":"fetch origin"}`}); len(got) != 1 || !strings.Contains(got[0], "git.remotes") {
		t.Errorf("no remotes: %q", got)
	}
}

// TestGitMirrorsNeverInTheWorkspace: the mirrors are a cache of the home,
// and a workspace that would hold them (the home itself) gets none.
func TestGitMirrorsNeverInTheWorkspace(t *testing.T) {
	t.Parallel()
	h := t.TempDir()
	dir, err := ensureGitMirrors(&config.Config{Home: h, Workspace: filepath.Join(h, "workspace")})
	if err != nil || dir != filepath.Join(h, "cache", "git-remotes") {
		t.Fatalf("mirrors %q, %v", dir, err)
	}
	for _, ws := range []string{h, filepath.Join(h, "cache"), filepath.Join(h, "cache", "git-remotes")} {
		if _, err := ensureGitMirrors(&config.Config{Home: h, Workspace: ws}); err == nil {
			t.Errorf("workspace %s: the mirrors would be inside it", ws)
		}
	}
	// The same through symbolic links: a workspace that is a link to the
	// home, and a home reached through a link while the workspace is named
	// by its real path.
	other := t.TempDir()
	link := filepath.Join(other, "ws")
	if err := os.Symlink(h, link); err != nil {
		t.Fatal(err)
	}
	homeLink := filepath.Join(other, "home")
	if err := os.Symlink(h, homeLink); err != nil {
		t.Fatal(err)
	}
	for _, c := range []config.Config{{Home: h, Workspace: link}, {Home: homeLink, Workspace: h}, {Home: homeLink, Workspace: filepath.Join(h, "cache")}} {
		if _, err := ensureGitMirrors(&c); err == nil {
			t.Errorf("home %s, workspace %s: the mirrors would be inside it", c.Home, c.Workspace)
		}
	}
}
