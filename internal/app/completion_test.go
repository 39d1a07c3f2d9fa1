package app

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// completionMain runs the command line with args in an empty home.
func completionMain(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Main(args, strings.NewReader(""), &out, &errOut, []string{"HOME=" + t.TempDir()})
	return out.String(), errOut.String(), code
}

// TestCompletionScripts: each shell gets its script, which asks the
// binary (shelldon __complete) for the choices; bash parses it; a shell
// it does not know is a usage error; the help says where to install.
func TestCompletionScripts(t *testing.T) {
	t.Parallel()
	marks := map[string][]string{
		"bash": {"__start_shelldon", "__complete", "complete -o default -F __start_shelldon shelldon"},
		"zsh":  {"#compdef shelldon", "__complete", "compdef _shelldon shelldon"},
		"fish": {"complete -c shelldon", "__complete"},
	}
	for _, shell := range completionShells {
		for _, flags := range [][]string{nil, {"--no-descriptions"}} {
			out, errOut, code := completionMain(t, append([]string{"completion", shell}, flags...)...)
			if code != 0 || errOut != "" || len(out) < 1000 {
				t.Fatalf("completion %s %v: exit %d, %d bytes, stderr %q", shell, flags, code, len(out), errOut)
			}
			for _, m := range marks[shell] {
				if !strings.Contains(out, m) {
					t.Errorf("the %s script lacks %q", shell, m)
				}
			}
			if shell == "bash" {
				if _, err := exec.LookPath("bash"); err != nil {
					t.Log("bash is not installed: the bash script is not parsed")
					continue
				}
				path := filepath.Join(t.TempDir(), "shelldon.bash")
				if err := os.WriteFile(path, []byte(out), 0o600); err != nil {
					t.Fatal(err)
				}
				if b, err := exec.Command("bash", "-n", path).CombinedOutput(); err != nil {
					t.Errorf("bash -n: %v\n%s", err, b)
				}
			}
		}
	}

	for _, args := range [][]string{{"completion"}, {"completion", "powershell"}, {"completion", "bash", "zsh"}, {"completion", "../bash"}} {
		out, errOut, code := completionMain(t, args...)
		if code != exitConfig || out != "" || !strings.Contains(errOut, "Run 'shelldon --help'") {
			t.Errorf("%q: exit %d, stdout %d bytes, stderr %q; want a usage error", args, code, len(out), errOut)
		}
	}

	help, _, code := completionMain(t, "completion", "--help")
	for _, want := range []string{"~/.local/share/bash-completion/completions/shelldon", "/etc/bash_completion.d/shelldon",
		"fpath=(~/.zfunc $fpath)", "~/.config/fish/completions/shelldon.fish", "--no-descriptions"} {
		if code != 0 || !strings.Contains(help, want) {
			t.Errorf("completion --help (exit %d) lacks %q:\n%s", code, want, help)
		}
	}
}

// TestCompletionChoices: what the scripts ask for: every command at the
// top, a command's subcommands, and the shells for completion.
func TestCompletionChoices(t *testing.T) {
	t.Parallel()
	choices := func(args ...string) []string {
		out, _, code := completionMain(t, append([]string{"__complete"}, args...)...)
		if code != 0 {
			t.Fatalf("__complete %q: exit %d", args, code)
		}
		var names []string
		for _, l := range strings.Split(out, "\n") {
			if l == "" || strings.HasPrefix(l, ":") {
				continue // the directive
			}
			name, _, _ := strings.Cut(l, "\t")
			names = append(names, name)
		}
		return names
	}
	has := func(got []string, want ...string) {
		t.Helper()
		for _, w := range want {
			found := false
			for _, g := range got {
				found = found || g == w
			}
			if !found {
				t.Errorf("choices %q lack %q", got, w)
			}
		}
	}
	has(choices(""), "chat", "serve", "init", "doctor", "tools", "config", "version", "completion", "help")
	has(choices("se"), "serve")
	has(choices("completion", ""), completionShells...)
	has(choices("serve", "--"), "--home")
}
