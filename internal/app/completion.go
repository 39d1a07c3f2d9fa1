package app

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// completionShells are the shells `shelldon completion` writes a script for.
var completionShells = []string{"bash", "zsh", "fish"}

// completionCmd prints a shell's completion script. It stands in for
// cobra's default one (which it names the same, so cobra adds none) to
// say how to install the script for each shell in one place.
func completionCmd(stdout io.Writer) *cobra.Command {
	var noDesc bool
	cmd := &cobra.Command{
		Use:   "completion bash|zsh|fish",
		Short: "Print the shell completion script for bash, zsh or fish",
		Long: "Print the script that completes shelldon's commands, flags and arguments in bash, zsh\n" +
			"or fish. Install it once; a new shell picks it up.\n\n" +
			"bash (needs the bash-completion package):\n" +
			"  mkdir -p ~/.local/share/bash-completion/completions\n" +
			"  shelldon completion bash > ~/.local/share/bash-completion/completions/shelldon\n" +
			"  # or for every user:\n" +
			"  shelldon completion bash | sudo tee /etc/bash_completion.d/shelldon >/dev/null\n\n" +
			"zsh (a directory in $fpath, and compinit run in ~/.zshrc):\n" +
			"  mkdir -p ~/.zfunc && shelldon completion zsh > ~/.zfunc/_shelldon\n" +
			"  # and in ~/.zshrc, before compinit:  fpath=(~/.zfunc $fpath)\n\n" +
			"fish:\n" +
			"  mkdir -p ~/.config/fish/completions\n" +
			"  shelldon completion fish > ~/.config/fish/completions/shelldon.fish\n\n" +
			"To try it in the running shell only: source <(shelldon completion bash) (or zsh);\n" +
			"shelldon completion fish | source.",
		Example: "  shelldon completion bash > ~/.local/share/bash-completion/completions/shelldon\n" +
			"  shelldon completion zsh --no-descriptions > ~/.zfunc/_shelldon",
		Args:                  cobra.MatchAll(cobra.ExactArgs(1), cobra.OnlyValidArgs),
		ValidArgs:             completionShells,
		DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			root := cmd.Root()
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(stdout, !noDesc)
			case "zsh":
				if noDesc {
					return root.GenZshCompletionNoDesc(stdout)
				}
				return root.GenZshCompletion(stdout)
			case "fish":
				return root.GenFishCompletion(stdout, !noDesc)
			}
			return fmt.Errorf("invalid argument %q: the shells are bash, zsh and fish", args[0])
		},
	}
	cmd.Flags().BoolVar(&noDesc, "no-descriptions", false, "complete without each choice's description")
	return cmd
}
