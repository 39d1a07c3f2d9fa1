package app

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shelldon/shelldon/internal/skill"
	"github.com/shelldon/shelldon/internal/transport/web"
)

// TestSkillDetail: a skill's page data holds its text, its files (a small
// text one with its text), its kept versions and its draft; a skill only
// drafted has just the draft; an unknown or invalid name is ErrNoSkill.
func TestSkillDetail(t *testing.T) {
	home, environ := testHome(t)
	ownerSkills(t, home)
	if err := os.WriteFile(filepath.Join(home, "skills", "water-plants", "schedule.md"), []byte("Mondays.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	lib, err := skill.Open(filepath.Join(home, "skills"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lib.Stage(false, "water-plants", "Water the plants thrice.", "1. Water thrice."); err != nil {
		t.Fatal(err)
	}
	if _, err := lib.Stage(true, "feed-cat", "Feed the cat.", "1. Feed."); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a, err := OpenFor(ctx, ForReading, home, environ, io.Discard, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()

	d, err := a.Skill(ctx, "water-plants")
	if err != nil {
		t.Fatal(err)
	}
	if !d.InUse || d.Version != 2 || d.Source != skill.SourceOwner || !strings.Contains(d.Text, "1. Water twice.") {
		t.Errorf("in use: %+v", d)
	}
	if len(d.Files) != 1 || d.Files[0].Path != "schedule.md" || d.Files[0].Size != 9 || d.Files[0].Text != "Mondays.\n" {
		t.Errorf("files: %+v", d.Files)
	}
	if len(d.Versions) != 1 || d.Versions[0].Version != 1 || !strings.Contains(d.Versions[0].Text, "1. Water.") {
		t.Errorf("versions: %+v", d.Versions)
	}
	if !strings.Contains(d.Draft, "1. Water thrice.") {
		t.Errorf("draft: %q", d.Draft)
	}

	d, err = a.Skill(ctx, "feed-cat")
	if err != nil || d.InUse || d.Name != "feed-cat" || !strings.Contains(d.Draft, "1. Feed.") || d.Text != "" {
		t.Errorf("draft only: %+v %v", d, err)
	}
	for _, name := range []string{"no-such", "../escape"} {
		if _, err := a.Skill(ctx, name); !errors.Is(err, web.ErrNoSkill) {
			t.Errorf("%s: %v, want ErrNoSkill", name, err)
		}
	}
}
