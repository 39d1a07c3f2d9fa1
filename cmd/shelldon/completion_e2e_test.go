package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// bashCompletion is the bash-completion package's library, which the
// script cobra writes for bash needs, as the install help says.
const bashCompletion = "/usr/share/bash-completion/bash_completion"

// TestBashCompletion loads `shelldon completion bash` into a real bash
// with the bash-completion package, as a user's shell does, and asks it to
// complete: the script calls the binary on PATH, which answers with its
// commands.
func TestBashCompletion(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	if _, err := os.Stat(bashCompletion); err != nil {
		t.Skip("the bash-completion package is not installed (apt-get install bash-completion)")
	}
	cases := []struct {
		line string // what is typed before Tab
		want []string
	}{
		{"shelldon ser", []string{"serve"}},
		{"shelldon completion ", []string{"bash", "fish", "zsh"}},
		{"shelldon ", []string{"chat", "completion", "serve", "version"}},
	}
	for _, tc := range cases {
		script := `source ` + bashCompletion + ` && source <(shelldon completion bash) || exit 1
COMP_LINE=$1; COMP_POINT=${#COMP_LINE}
read -ra COMP_WORDS <<<"$COMP_LINE"
[[ $COMP_LINE == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
__start_shelldon shelldon "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\n' "${COMPREPLY[@]}"`
		cmd := exec.Command("bash", "--norc", "--noprofile", "-c", script, "bash", tc.line)
		cmd.Env = env(t.TempDir())
		cmd.Env[0] = "PATH=" + filepath.Dir(binary) + ":" + strings.TrimPrefix(cmd.Env[0], "PATH=")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%q: %v\n%s", tc.line, err, out)
		}
		got := strings.Fields(string(out))
		for _, w := range tc.want {
			found := false
			for _, g := range got {
				found = found || g == w
			}
			if !found {
				t.Errorf("%q completes to %q, want %q among them", tc.line, got, w)
			}
		}
	}
}
