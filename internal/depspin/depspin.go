// Package depspin keeps the project's chosen modules in go.mod while the
// packages that use them are being written. Delete it once each is imported.
package depspin

import (
	_ "github.com/peterh/liner"
	_ "github.com/spf13/cobra"
	_ "go.starlark.net/starlark"
	_ "go.yaml.in/yaml/v3"
	_ "golang.org/x/sys/unix"
	_ "modernc.org/sqlite"
)
