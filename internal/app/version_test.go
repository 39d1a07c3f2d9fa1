package app

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// TestVersionText: the version says what was built: the module's version
// from `go install module@version`, the revision (and whether the checkout
// had uncommitted changes) from a build in a git checkout, an -ldflags
// override when there is one, and "dev" only when nothing is known.
func TestVersionText(t *testing.T) {
	t.Parallel()
	const rev = "56e7cb999920387ea34e2df5f9cadfde7237df28"
	vcs := []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev},
		{Key: "vcs.time", Value: "2026-12-01T14:42:32Z"}, {Key: "vcs.modified", Value: "true"}}
	platform := " (" + runtime.Version() + ", " + runtime.GOOS + "/" + runtime.GOARCH + ")\n"
	cases := []struct {
		name     string
		bi       *debug.BuildInfo
		override string
		want     string
		short    string
	}{
		{"go install module@version", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, "dev",
			"shelldon v1.2.3" + platform, "v1.2.3"},
		{"go build in a checkout with changes",
			&debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261201144232-56e7cb999920+dirty"}, Settings: vcs}, "dev",
			"shelldon v0.0.0-20261201144232-56e7cb999920+dirty" + platform +
				"revision " + rev + " with uncommitted changes, committed 2026-12-01T14:42:32Z\n",
			"v0.0.0-20261201144232-56e7cb999920+dirty"},
		{"a clean checkout, an older go that records no version",
			&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "false"}}}, "dev",
			"shelldon dev-56e7cb999920" + platform + "revision " + rev + "\n", "dev-56e7cb999920"},
		{"an -ldflags override", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs}, "v2.0.0",
			"shelldon v2.0.0" + platform + "revision " + rev + " with uncommitted changes, committed 2026-12-01T14:42:32Z\n", "v2.0.0"},
		{"-buildvcs=false", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "dev", "shelldon dev" + platform, "dev"},
		{"no build info", nil, "dev", "shelldon dev" + platform, "dev"},
	}
	for _, tc := range cases {
		b := buildOf(tc.bi, tc.override)
		if got := b.text(); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
		if got := b.short(); got != tc.short || strings.ContainsAny(got, " \n") {
			t.Errorf("%s: short %q, want %q", tc.name, got, tc.short)
		}
	}
}

// TestVersionPlatform: a 32-bit ARM build says which ARM it was built for,
// as the release files are named (linux/armv6 for the Pi 1 and Zero).
func TestVersionPlatform(t *testing.T) {
	t.Parallel()
	cases := []struct {
		goarch string
		goarm  string // the GOARM build setting
		want   string
	}{
		{"arm", "6", "linux/armv6"},
		{"arm", "7", "linux/armv7"},
		{"arm", "7,softfloat", "linux/armv7"},
		{"arm", "", "linux/arm"},
		{"amd64", "", "linux/amd64"},
		{"amd64", "7", "linux/amd64"}, // GOARM means nothing off arm
	}
	for _, tc := range cases {
		bi := &debug.BuildInfo{Main: debug.Module{Version: "v1.0.0"}}
		if tc.goarm != "" {
			bi.Settings = []debug.BuildSetting{{Key: "GOARM", Value: tc.goarm}}
		}
		b := buildOf(bi, "dev")
		b.goos, b.goarch = "linux", tc.goarch
		if got := b.platform(); got != tc.want {
			t.Errorf("GOARCH=%s GOARM=%q: %q, want %q", tc.goarch, tc.goarm, got, tc.want)
		}
		if got := b.text(); !strings.Contains(got, ", "+tc.want+")\n") {
			t.Errorf("GOARCH=%s GOARM=%q: text %q lacks %s", tc.goarch, tc.goarm, got, tc.want)
		}
	}
}
