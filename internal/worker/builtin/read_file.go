package builtin

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/worker"
)

//go:embed read_file.md
var readFileDescription string

// readFileMax is the most read_file shows; sniffBinary is how much of the
// start is checked for a NUL byte.
const (
	readFileMax = 64 << 10
	sniffBinary = 8 << 10
)

type readFileArgs struct {
	Path string `json:"path" jsonschema:"path of the file, relative to the workspace (for example notes/todo.txt)"`
}

func readFileTool(env Env) (*worker.Tool, error) {
	ws := env.Workspace
	return worker.NewBuiltin(contracts.ToolReadFile, readFileDescription,
		func(_ context.Context, in readFileArgs) (string, error) {
			data, size, err := ws.ReadFile(in.Path, readFileMax)
			if err != nil {
				return "", fmt.Errorf("read_file: %w", err)
			}
			if bytes.IndexByte(data[:min(len(data), sniffBinary)], 0) >= 0 {
				return "", fmt.Errorf("read_file: %s looks binary (a NUL byte in the first 8 KiB); read_file shows text files only", strconv.Quote(in.Path))
			}
			if size == 0 {
				return "(empty file)", nil
			}
			truncated := size > int64(len(data))
			if truncated {
				data = trimPartialRune(data)
			}
			text := string(bytes.ToValidUTF8(data, []byte("\uFFFD")))
			if truncated {
				text += fmt.Sprintf("\n[truncated: file is %d bytes; showing the first %d]", size, len(data))
			}
			return text, nil
		})
}

// trimPartialRune drops an incomplete UTF-8 sequence that a cut left at the
// end of data, so it is not shown as a replacement character.
func trimPartialRune(data []byte) []byte {
	for i := 1; i < utf8.UTFMax && i <= len(data); i++ {
		if b := data[len(data)-i]; utf8.RuneStart(b) {
			if !utf8.FullRune(data[len(data)-i:]) {
				return data[:len(data)-i]
			}
			break
		}
	}
	return data
}
