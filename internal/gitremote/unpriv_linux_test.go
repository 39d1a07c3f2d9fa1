package gitremote

import (
	"os"
	"testing"

	"github.com/shelldon/shelldon/internal/testbin"
)

// unprivEnv marks TestUnprivileged's re-run of the tests as nobody.
const unprivEnv = "SHELLDON_GITREMOTE_UNPRIVILEGED"

// TestUnprivileged runs the jail's tests again as nobody, the way a
// daemon under its own user runs them: the sandbox (user namespace, its
// own loopback), the relay's private directory and socket, git over HTTP
// and over SSH.
func TestUnprivileged(t *testing.T) {
	if os.Getenv(unprivEnv) != "" {
		t.Skip("already unprivileged")
	}
	if os.Getuid() != 0 {
		t.Skip("already running as an unprivileged user; the other tests cover it")
	}
	testbin.AsNobody(t, []string{"TestLsRemote", "TestFetchIntoMirror", "TestSSHThroughTheJail", "TestRelay"}, unprivEnv+"=1")
}
