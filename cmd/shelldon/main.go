// Command shelldon is a personal AI agent that grows its own toolbox.
// See README.md; the real entry is internal/app.Main.
package main

import (
	"os"

	"github.com/shelldon/shelldon/internal/app"
	"github.com/shelldon/shelldon/internal/childproc"
)

func main() {
	if childproc.IsChild(os.Args) {
		childproc.Main()
	}
	os.Exit(app.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Environ()))
}
