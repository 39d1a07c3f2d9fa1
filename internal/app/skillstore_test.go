package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/skill"
	"github.com/shelldon/shelldon/internal/worker"
)

// writeSkill puts files (slash paths to contents) in dir/name.
func writeSkill(t *testing.T, dir, name string, files map[string]string) {
	t.Helper()
	for p, data := range files {
		full := filepath.Join(dir, name, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// readOn finds where an answer says to read on: the offset of its last
// read_skill_file(...) call, or -1.
var readOn = regexp.MustCompile(`read_skill_file\(skill: "[a-z0-9-]+", path: "([^"]+)", offset: (\d+)\)`)

func nextOffset(t *testing.T, answer string) (string, int64) {
	t.Helper()
	m := readOn.FindAllStringSubmatch(answer, -1)
	if m == nil {
		return "", -1
	}
	n, err := strconv.ParseInt(m[len(m)-1][2], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return m[len(m)-1][1], n
}

// TestUseSkillFitsTheToolResultCap: a SKILL.md of up to the default
// limit (256 KiB) is never cut by the worker's cap on a tool's result:
// use_skill shows as much as fits and says where read_skill_file reads on,
// and reading on gives the body whole; each answer fits the cap.
func TestUseSkillFitsTheToolResultCap(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "skills")
	var body strings.Builder
	for i := 0; body.Len() < skill.DefaultMaxSkillBytes-1000; i++ {
		fmt.Fprintf(&body, "%d. Step %d: check the ledger, then the receipts — “carefully”.\n", i, i)
	}
	writeSkill(t, dir, "long-one", map[string]string{
		"SKILL.md":     "---\nname: long-one\ndescription: >\n  A long procedure,\n  on two lines.\n---\n\n" + body.String(),
		"reference.md": "# Reference\n",
	})
	lib, err := skill.Open(dir, bundled())
	if err != nil {
		t.Fatal(err)
	}
	st := skillStore{lib: lib}
	ctx := context.Background()
	do := func(req contracts.SkillRequest) string {
		t.Helper()
		req.Max = worker.MaxResultBytes
		out, err := st.Do(ctx, req)
		if err != nil {
			t.Fatalf("%+v: %v", req, err)
		}
		if len(out) > worker.MaxResultBytes {
			t.Fatalf("%s: %d bytes; the worker would cut it at %d", req.Op, len(out), worker.MaxResultBytes)
		}
		return out
	}

	first := do(contracts.SkillRequest{Op: contracts.SkillUse, Name: "long-one"})
	if !strings.HasPrefix(first, "Skill long-one: A long procedure, on two lines.\n\n0. Step 0") ||
		!strings.Contains(first, "The procedure goes on") ||
		!strings.Contains(first, "Files beside it (not loaded; read_skill_file reads them): reference.md") {
		t.Fatalf("use_skill:\n%.300s\n...\n%s", first, first[max(0, len(first)-400):])
	}
	shown, _, _ := strings.Cut(strings.TrimPrefix(first, "Skill long-one: A long procedure, on two lines.\n\n"), "\n\n[The procedure goes on")
	got := shown
	path, offset := nextOffset(t, first)
	pages := 1
	for offset >= 0 {
		if path != "SKILL.md" {
			t.Fatalf("reads on in %q", path)
		}
		page := do(contracts.SkillRequest{Op: contracts.SkillRead, Name: "long-one", Path: path, Offset: offset})
		_, text, ok := strings.Cut(page, ":\n\n")
		if !ok {
			t.Fatalf("page: %.200s", page)
		}
		text, _, _ = strings.Cut(text, "\n\n[")
		got += text
		path, offset = nextOffset(t, page)
		pages++
	}
	if got != body.String() {
		t.Fatalf("use_skill and the pages after it give %d bytes of the body's %d", len(got), body.Len())
	}
	if pages < 4 {
		t.Errorf("%d pages for 256 KiB", pages)
	}
	if n, _ := lib.Uses("long-one"); n != 1 {
		t.Errorf("the use was recorded %d times", n)
	}

	// A short skill comes whole, its files named, nothing about the rest.
	short := do(contracts.SkillRequest{Op: contracts.SkillUse, Name: "daily-note"})
	if strings.Contains(short, "goes on") || !strings.HasPrefix(short, "Skill daily-note: ") {
		t.Errorf("a short skill: %s", short)
	}
	// list_skills: every skill, its description on one line.
	list := do(contracts.SkillRequest{Op: contracts.SkillList})
	if !strings.Contains(list, "long-one (owner): A long procedure, on two lines.\n") || !strings.Contains(list, "daily-note (bundled): ") {
		t.Errorf("list_skills:\n%s", list)
	}
	// read_skill_file lists the files and reads a small one whole.
	if files := do(contracts.SkillRequest{Op: contracts.SkillRead, Name: "long-one", Path: "."}); !strings.Contains(files, "- SKILL.md (") ||
		!strings.Contains(files, "- reference.md (12 bytes)") {
		t.Errorf("the files:\n%s", files)
	}
	if ref := do(contracts.SkillRequest{Op: contracts.SkillRead, Name: "long-one", Path: "reference.md"}); ref != "long-one/reference.md (12 bytes):\n\n# Reference\n" {
		t.Errorf("reference.md: %q", ref)
	}
}

// TestListSkillsFitsTheCap: list_skills names every skill within the cap,
// shortening the descriptions first, then leaving them out.
func TestListSkillsFitsTheCap(t *testing.T) {
	t.Parallel()
	var list []skill.Skill
	for i := range 300 {
		list = append(list, skill.Skill{Name: fmt.Sprintf("skill-%03d", i), Source: skill.SourceOwner, Description: strings.Repeat("word ", 200)})
	}
	for _, limit := range []int{worker.MaxResultBytes, 16 << 10} {
		out := listAnswer(list, limit)
		if len(out) > limit {
			t.Errorf("%d bytes over a cap of %d", len(out), limit)
		}
		for _, s := range list {
			if !strings.Contains(out, s.Name+" (owner)") {
				t.Errorf("cap %d: %s left out", limit, s.Name)
			}
		}
		if !strings.Contains(out, "to fit") {
			t.Errorf("cap %d: no note of what was shortened", limit)
		}
	}
	if out := listAnswer(list, 2000); !strings.HasSuffix(out, "more skills not listed: too many for one answer)") || len(out) > 2000 {
		t.Errorf("a tiny cap: %s", out)
	}
}

// TestUseAnswerNeverOverTheCap: whatever the sizes of the description,
// the body and the list of files, use_skill's answer fits the cap, and a
// body it cuts says where the rest is.
func TestUseAnswerNeverOverTheCap(t *testing.T) {
	t.Parallel()
	var files []string
	for i := range skill.MaxFiles {
		files = append(files, fmt.Sprintf("%s/%02d.md", strings.Repeat("f", 200), i))
	}
	for _, limit := range []int{1 << 10, 4 << 10, worker.MaxResultBytes} {
		for _, bodyLen := range []int{0, 10, limit / 2, limit - 100, limit, 3 * limit} {
			for _, fs := range [][]string{nil, files[:1], files} {
				sk := skill.Skill{Name: "s", Description: strings.Repeat("d", 300), Body: strings.Repeat("é\n", bodyLen/3), Files: fs}
				_ = useAnswer(skill.Skill{Name: "s", Description: strings.Repeat("€", 1024), Body: sk.Body, Files: fs}, limit) // never panics
				out := useAnswer(sk, limit)
				if len(out) > limit {
					t.Errorf("limit %d, body %d, %d files: %d bytes", limit, len(sk.Body), len(fs), len(out))
				}
				if !strings.Contains(out, sk.Body) && !strings.Contains(out, "read_skill_file(skill: \"s\", path: \"SKILL.md\", offset: ") {
					t.Errorf("limit %d, body %d, %d files: the body is cut without a word", limit, len(sk.Body), len(fs))
				}
			}
		}
	}
}
