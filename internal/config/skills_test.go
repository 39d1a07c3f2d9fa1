package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/skill"
)

// TestSkillsLimits: skills.max_skill_bytes and skills.max_file_bytes
// default to the skill library's defaults, take sizes within their
// bounds, name the keys the library's errors name, and are the owner's:
// the agent's update_config cannot raise them.
func TestSkillsLimits(t *testing.T) {
	t.Parallel()
	if defaultMaxSkillBytes != skill.DefaultMaxSkillBytes || defaultMaxFileBytes != skill.DefaultMaxFileBytes {
		t.Errorf("defaults %d, %d; the skill library's %d, %d", defaultMaxSkillBytes, defaultMaxFileBytes,
			skill.DefaultMaxSkillBytes, skill.DefaultMaxFileBytes)
	}
	fields := yamlFields(reflect.TypeFor[SkillsConfig]())
	for _, key := range []string{skill.ConfigMaxSkillBytes, skill.ConfigMaxFileBytes} {
		name, ok := strings.CutPrefix(key, "skills.")
		if _, found := fields[name]; !ok || !found {
			t.Errorf("the skill library names %s, which the config lacks", key)
		}
	}

	env := []string{"ANTHROPIC_API_KEY=" + anthropicKey}
	for _, tt := range []struct {
		file       string
		skill, per ByteSize
	}{
		{"", 256 << 10, 1 << 20},
		{"skills:\n  max_skill_bytes: 1MiB\n  max_file_bytes: 8MiB\n", 1 << 20, 8 << 20},
		{"skills:\n  max_skill_bytes: 1KiB\n  max_file_bytes: 16MiB\n", 1 << 10, 16 << 20},
		{"skills: {max_skill_bytes: 300000}\n", 300000, 1 << 20},
	} {
		files := map[string]string{}
		if tt.file != "" {
			files[FileConfig] = tt.file
		}
		c, err := Load(newHome(t, files), env)
		if err != nil {
			t.Errorf("%q: %v", tt.file, err)
			continue
		}
		if c.Skills.MaxSkillBytes != tt.skill || c.Skills.MaxFileBytes != tt.per {
			t.Errorf("%q: %s, %s; want %s, %s", tt.file, c.Skills.MaxSkillBytes, c.Skills.MaxFileBytes, tt.skill, tt.per)
		}
	}
	for _, tt := range []struct{ file, key, msg string }{
		{"skills:\n  max_skill_bytes: 0\n", "skills.max_skill_bytes", "0 is out of range: must be from 1KiB to 4MiB"},
		{"skills:\n  max_skill_bytes: 5MiB\n", "skills.max_skill_bytes", "5MiB is out of range"},
		{"skills:\n  max_file_bytes: 1GiB\n", "skills.max_file_bytes", "1GiB is out of range: must be from 1KiB to 16MiB"},
		{"skills:\n  max_file_bytes: lots\n", "skills.max_file_bytes", `"lots" is not a size`},
	} {
		_, err := Load(newHome(t, map[string]string{FileConfig: tt.file}), env)
		var e *Error
		if !errors.As(err, &e) || e.Key != tt.key || !strings.Contains(e.Msg, tt.msg) {
			t.Errorf("%q: %v; want %s: %s", tt.file, err, tt.key, tt.msg)
		}
	}

	// The owner's alone: the agent's path refuses them, before the owner
	// is asked and again in the daemon, and writes nothing.
	h := newHome(t, map[string]string{FileConfig: "provider: {kind: anthropic}\n"})
	for _, changes := range []map[string]any{
		{"skills": map[string]any{"max_skill_bytes": "4MiB"}},
		{"skills": map[string]any{"max_file_bytes": "16MiB"}},
		{"skills.max_file_bytes": "16MiB"},
	} {
		err := contracts.CheckAgentConfig(changes)
		if err == nil || !strings.Contains(err.Error(), "not a key the agent may change") {
			t.Errorf("%v: the worker's check: %v", changes, err)
		}
		if _, err := PrepareAgentOverlay(h, env, changes); err == nil {
			t.Errorf("%v: the daemon's path let it through", changes)
		}
		if _, err := os.Stat(filepath.Join(h, FileOverlay)); err == nil {
			t.Fatal("something was written")
		}
	}
	// The owner sets them like any key.
	o, err := PrepareOverlay(h, env, map[string]any{"skills": map[string]any{"max_file_bytes": "2MiB"}})
	if err != nil || o.After.Skills.MaxFileBytes != 2<<20 {
		t.Errorf("the owner's change: %v", err)
	}
}
