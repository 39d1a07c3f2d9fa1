package builtin

import (
	"context"
	_ "embed"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/worker"
	"github.com/shelldon/shelldon/internal/workspace"
)

//go:embed list_dir.md
var listDirDescription string

// listDirMax is the most entries list_dir shows.
const listDirMax = 500

type listDirArgs struct {
	Path string `json:"path,omitempty" jsonschema:"directory to list, relative to the workspace; omit it or use . for the workspace root"`
}

func listDirTool(env Env) (*worker.Tool, error) {
	ws := env.Workspace
	return worker.NewBuiltin(contracts.ToolListDir, listDirDescription,
		func(_ context.Context, in listDirArgs) (string, error) {
			dir := in.Path
			if dir == "" {
				dir = "."
			}
			entries, truncated, err := ws.ListDir(dir, listDirMax)
			if err != nil {
				return "", fmt.Errorf("list_dir: %w", err)
			}
			return formatEntries(entries, truncated), nil
		})
}

// formatEntries renders a listing, one entry a line: "name/" for a
// directory, "name  1.2 KiB" for a file.
func formatEntries(entries []workspace.Entry, truncated bool) string {
	if len(entries) == 0 && !truncated {
		return "(empty directory)"
	}
	var b strings.Builder
	for _, e := range entries {
		name := displayName(e.Name)
		switch e.Kind {
		case "dir":
			b.WriteString(name + "/")
		case "file":
			b.WriteString(name + "  " + formatSize(e.Size))
		case "symlink":
			b.WriteString(name + "  (symlink)")
		default:
			b.WriteString(name + "  (special file)")
		}
		b.WriteByte('\n')
	}
	if truncated {
		fmt.Fprintf(&b, "[truncated: showing the first %d entries by name]\n", len(entries))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// displayName quotes a name that holds control or invalid characters, so a
// crafted name cannot forge lines of the listing.
func displayName(name string) string {
	for _, r := range name {
		if r == unicode.ReplacementChar || !unicode.IsPrint(r) {
			return strconv.Quote(name)
		}
	}
	return name
}

// formatSize renders n bytes as "512 B", "1.2 KiB", "3.0 MiB" and so on.
func formatSize(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	f := float64(n)
	for _, unit := range []string{"KiB", "MiB", "GiB", "TiB"} {
		f /= 1024
		if f < 1024 || unit == "TiB" {
			return fmt.Sprintf("%.1f %s", f, unit)
		}
	}
	panic("unreachable")
}
