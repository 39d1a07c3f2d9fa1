package app

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/shelldon/shelldon/internal/config"
	"github.com/shelldon/shelldon/internal/redact"
)

// secretValue is a LogValuer that resolves to a secret, as a type whose
// LogValue shows a credential would.
type secretValue struct{ s string }

func (v secretValue) LogValue() slog.Value { return slog.StringValue("token " + v.s) }

// TestLogFormatRedacts: the JSON log takes the secrets out as the text log
// does, wherever they are: the message, a string, a nested group, an
// error (wrapped too), a LogValuer, a struct, attributes and groups bound
// with With and WithGroup. The JSON log is one object a line with time,
// level and msg, and keeps its nesting.
func TestLogFormatRedacts(t *testing.T) {
	t.Parallel()
	const secret = "sk-live-9f8e7d6c5b4a39281706f5e4d3c2b1a0"
	red := &liveRedactor{}
	red.set(redact.New(secret))
	for _, format := range []string{config.LogText, config.LogJSON} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			log := slog.New(newLogHandler(&buf, format, slog.LevelDebug, red))
			err := fmt.Errorf("provider: %w", errors.New("401 for key "+secret))
			log.Info("calling with "+secret,
				"key", secret,
				"err", err,
				slog.Group("req", "auth", "Bearer "+secret, slog.Group("inner", "k", secret, "n", 3)),
				"valuer", secretValue{secret},
				"struct", struct{ Key string }{secret},
				"count", 7,
			)
			log.With("bound", secret).WithGroup("g").Warn("bound", "e", err, slog.Group("deep", "x", secret))
			log.Debug("plain")
			out := buf.String()
			if strings.Contains(out, secret) || strings.Contains(out, secret[8:20]) {
				t.Errorf("the %s log shows the secret:\n%s", format, out)
			}
			if n := strings.Count(out, redact.Marker); n != 10 {
				t.Errorf("the %s log has %d redaction markers, want 10:\n%s", format, n, out)
			}
			if format != config.LogJSON {
				return
			}
			var lines []map[string]any
			sc := bufio.NewScanner(&buf)
			for sc.Scan() {
				var m map[string]any
				if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
					t.Fatalf("line %q is not a JSON object: %v", sc.Text(), err)
				}
				for _, k := range []string{"time", "level", "msg"} {
					if _, ok := m[k]; !ok {
						t.Errorf("line %q has no %q", sc.Text(), k)
					}
				}
				lines = append(lines, m)
			}
			if len(lines) != 3 {
				t.Fatalf("%d lines, want 3:\n%s", len(lines), out)
			}
			req, _ := lines[0]["req"].(map[string]any)
			inner, _ := req["inner"].(map[string]any)
			if inner["n"] != float64(3) || inner["k"] != redact.Marker || lines[0]["count"] != float64(7) {
				t.Errorf("nesting or numbers lost: %v", lines[0])
			}
			if e, _ := lines[0]["err"].(string); e != "provider: 401 for key "+redact.Marker {
				t.Errorf("err = %q", e)
			}
			g, _ := lines[1]["g"].(map[string]any)
			if lines[1]["bound"] != redact.Marker || g["e"] == nil || lines[1]["level"] != "WARN" {
				t.Errorf("With and WithGroup lost: %v", lines[1])
			}
		})
	}
}

// TestLogFormatInert: a value holding a character that hides or reorders
// text, or a terminal control the JSON encoder leaves raw (the C1 CSI,
// DEL), reaches neither log raw (DEL: the JSON log; slog's text handler
// passes it, and terminals ignore it); a value without one is left as it
// is, so a JSON reader gets it back.
func TestLogFormatInert(t *testing.T) {
	t.Parallel()
	red := &liveRedactor{}
	red.set(redact.New())
	hostile := []string{
		"evil\u202Etxt.exe",  // right-to-left override
		"a\u200Bb",           // zero-width space
		"\u009B31mred",       // C1 CSI
		"del\x7F",            // DEL
		"clear\x1b[2J",       // ESC
		"hangul\u3164filler", // printable but invisible
		"bad\xffutf8",
		"line\nbreak",
	}
	for _, format := range []string{config.LogText, config.LogJSON} {
		for _, s := range hostile {
			var buf bytes.Buffer
			log := slog.New(newLogHandler(&buf, format, slog.LevelInfo, red))
			log.Info(s, "v", s, slog.Group("g", "v", s))
			out := strings.TrimSuffix(buf.String(), "\n")
			if strings.ContainsFunc(out, func(r rune) bool {
				return r < 0x20 || (r == 0x7F && format == config.LogJSON) || (r >= 0x80 && r <= 0x9F) || strings.ContainsRune("\u202E\u200B\u3164", r)
			}) || strings.Contains(out, "\xff") {
				t.Errorf("%s log of %q holds it raw: %q", format, s, out)
			}
		}
	}
	// Plain text, quotes and markup come back whole from the JSON log.
	for _, s := range []string{"plain", `say "hi" <b>&</b> \ path/x`, "café ünïcode 日本"} {
		var buf bytes.Buffer
		slog.New(newLogHandler(&buf, config.LogJSON, slog.LevelInfo, red)).Info(s, "v", s)
		var m map[string]any
		if err := json.Unmarshal(buf.Bytes(), &m); err != nil || m["msg"] != s || m["v"] != s {
			t.Errorf("JSON log of %q: %v %v", s, m, err)
		}
	}
}
