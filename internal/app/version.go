package app

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// Version, when set at build time with
// -ldflags "-X github.com/shelldon/shelldon/internal/app.Version=v1.2.3",
// is the version shown instead of the one the build info holds.
var Version = "dev"

func versionCmd(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version and the revision it was built from",
		Long: "Print the version and, for a build from a git checkout, the revision it was built from\n" +
			"(with \"uncommitted changes\" when the checkout had some) and the time of that commit.",
		Args: cobra.NoArgs,
		Run: func(*cobra.Command, []string) {
			fmt.Fprint(stdout, readBuild().text())
		},
	}
}

// versionString is the version in one word, for logs and status lines.
func versionString() string { return readBuild().short() }

// build is what the binary knows of how it was built.
type build struct {
	version   string // the module's version, or "dev"
	revision  string // the VCS revision; "" when not built from a checkout
	committed string // the time of that commit (Go records no build time)
	modified  bool   // the checkout had uncommitted changes
	goos      string // runtime.GOOS
	goarch    string // runtime.GOARCH
	goarm     string // GOARM's version (6, 7) for GOARCH=arm; "" when not recorded
}

func readBuild() build {
	bi, _ := debug.ReadBuildInfo()
	return buildOf(bi, Version)
}

// buildOf reads the build info (nil: none) and the -ldflags override
// ("dev": none). `go install module@version` records the module's version;
// `go build` in a git checkout records a pseudo-version (+dirty with
// uncommitted changes) and the vcs.* settings; with neither
// (-buildvcs=false) the version is "dev".
func buildOf(bi *debug.BuildInfo, override string) build {
	b := build{version: "dev", goos: runtime.GOOS, goarch: runtime.GOARCH}
	if bi != nil {
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			b.version = v
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				b.revision = s.Value
			case "vcs.time":
				b.committed = s.Value
			case "vcs.modified":
				b.modified = s.Value == "true"
			case "GOARM": // "6", or "7,softfloat"
				b.goarm, _, _ = strings.Cut(s.Value, ",")
			}
		}
	}
	if override != "" && override != "dev" {
		b.version = override
	}
	return b
}

// short is the version, with the revision's first 12 digits when the
// version alone would not tell the build apart.
func (b build) short() string {
	if b.version == "dev" && len(b.revision) >= 12 {
		return "dev-" + b.revision[:12]
	}
	return b.version
}

// platform is GOOS/GOARCH, with the ARM version that tells a binary for
// the Raspberry Pi 1 and Zero (linux/armv6) from one for later models
// (linux/armv7), as the release files are named.
func (b build) platform() string {
	arch := b.goarch
	if arch == "arm" && b.goarm != "" {
		arch += "v" + b.goarm
	}
	return b.goos + "/" + arch
}

// text is what `shelldon version` prints.
func (b build) text() string {
	var s strings.Builder
	fmt.Fprintf(&s, "shelldon %s (%s, %s)\n", b.short(), runtime.Version(), b.platform())
	if b.revision != "" {
		s.WriteString("revision " + b.revision)
		if b.modified {
			s.WriteString(" with uncommitted changes")
		}
		if b.committed != "" {
			s.WriteString(", committed " + b.committed)
		}
		s.WriteString("\n")
	}
	return s.String()
}
