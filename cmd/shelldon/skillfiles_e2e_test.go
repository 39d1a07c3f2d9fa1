package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/shelldon/shelldon/internal/broker/brokertest"
	"github.com/shelldon/shelldon/internal/contracts"
)

// corpusSkill copies the corpus skill name (internal/skill/testdata) into
// the home's skills folder.
func corpusSkill(t *testing.T, h, name string) string {
	t.Helper()
	dst := filepath.Join(h, "skills", name)
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(dst, os.DirFS(filepath.Join("..", "..", "internal", "skill", "testdata", "corpus", "valid", name))); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestSkillFilesThroughTheModel: progressive disclosure through the real
// binary. The model loads a skill with files beside it (use_skill names
// them, to be read with read_skill_file), reads one, lists them; every
// path out of the skill's folder, a link to /etc/passwd, a credential in
// the folder and a draft waiting for the owner are refused as a tool
// result; the owner's `skills show` lists the files with their sizes.
func TestSkillFilesThroughTheModel(t *testing.T) {
	t.Parallel()
	call := func(id, name string, args map[string]string) brokertest.Reply {
		raw, _ := json.Marshal(args)
		return brokertest.Reply{ToolCalls: []contracts.ToolCall{{ID: id, Name: name, Arguments: string(raw)}}}
	}
	read := func(path string) brokertest.Reply {
		return call("r1", contracts.ToolReadSkill, map[string]string{"skill": "form-filler", "path": path})
	}
	script := func(r brokertest.Recorded) brokertest.Reply {
		last := r.Request.Messages[len(r.Request.Messages)-1]
		if last.Role == contracts.RoleUser {
			switch last.Text {
			case "fill in the intake form":
				return call("u1", contracts.ToolUseSkill, map[string]string{"name": "form-filler"})
			case "list the form filler's files":
				return call("r1", contracts.ToolReadSkill, map[string]string{"skill": "form-filler"})
			case "peek outside":
				return read("../other/SKILL.md")
			case "read the password file":
				return read("passwd")
			case "read the key":
				return read("keys/server.pem")
			case "read it absolutely":
				return read("/etc/passwd")
			case "draft a skill":
				return call("c1", contracts.ToolCreateSkill, map[string]string{"name": "drafty", "description": "A draft.", "body": "DRAFT-BODY"})
			case "read the draft":
				return call("r1", contracts.ToolReadSkill, map[string]string{"skill": "drafty", "path": "SKILL.md"})
			}
			return brokertest.Reply{Text: "CATALOG: " + r.Request.System}
		}
		res := last.ToolResults[0]
		if res.Name == contracts.ToolUseSkill && res.OK {
			return read("forms/intake.md")
		}
		// Every result so far, so the test sees the whole exchange.
		var b strings.Builder
		for _, m := range r.Request.Messages {
			for _, tr := range m.ToolResults {
				fmt.Fprintf(&b, "RESULT %s ok=%v %s\n", tr.Name, tr.OK, tr.Content)
			}
		}
		return brokertest.Reply{Text: b.String()}
	}
	srv := brokertest.NewServer(t, "openai", script)
	h := home(t, "openai", srv.BaseURL(), "")
	folder := corpusSkill(t, h, "form-filler")
	if err := os.Symlink("/etc/passwd", filepath.Join(folder, "passwd")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(folder, "keys"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(folder, "keys", "server.pem"), []byte("-----BEGIN PRIVATE KEY-----\nSECRET\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	intake, err := os.ReadFile(filepath.Join(folder, "forms", "intake.md"))
	if err != nil {
		t.Fatal(err)
	}
	chat := func(text string) string {
		t.Helper()
		stdout, stderr, code := run(t, h, "", "chat", "-m", text)
		if code != 0 {
			t.Fatalf("%q: exit %d %s %s", text, code, stdout, stderr)
		}
		return stdout
	}

	out := chat("fill in the intake form")
	for _, want := range []string{
		"RESULT use_skill ok=true Skill form-filler: Fill in PDF and paper-style forms",
		"Files beside it (not loaded; read_skill_file reads them): LICENSE.txt, forms/fields/schema.json, forms/intake.md, reference.md, scripts/fill_form.py",
		"RESULT read_skill_file ok=true form-filler/forms/intake.md (27 bytes):\n\n" + string(intake),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the exchange lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "keys/server.pem") || strings.Contains(out, "passwd") {
		t.Errorf("use_skill names a file it must not:\n%s", out)
	}

	out = chat("list the form filler's files")
	if !strings.Contains(out, "RESULT read_skill_file ok=true The files of the skill form-filler:\n- SKILL.md (") ||
		!strings.Contains(out, "- scripts/fill_form.py (70 bytes)") || strings.Contains(out, "server.pem") {
		t.Errorf("the files:\n%s", out)
	}

	for _, tt := range []struct{ ask, says string }{
		{"peek outside", `".." leads out of the folder`},
		{"read the password file", "a symbolic link; not listed"},
		{"read the key", "credential deny list"},
		{"read it absolutely", "an absolute path"},
	} {
		out := chat(tt.ask)
		if !strings.Contains(out, "RESULT read_skill_file ok=false") || !strings.Contains(out, tt.says) {
			t.Errorf("%s: want a refusal saying %q:\n%s", tt.ask, tt.says, out)
		}
		if strings.Contains(out, "root:") || strings.Contains(out, "SECRET") {
			t.Errorf("%s: read what it must not:\n%s", tt.ask, out)
		}
	}

	if out := chat("draft a skill"); !strings.Contains(out, "RESULT create_skill ok=true") {
		t.Fatalf("draft: %s", out)
	}
	if out := chat("read the draft"); !strings.Contains(out, "RESULT read_skill_file ok=false") || strings.Contains(out, "DRAFT-BODY") {
		t.Errorf("a draft was read:\n%s", out)
	}

	// The owner sees the files and their sizes, every name inert.
	stdout, stderr, code := run(t, h, "", "skills", "show", "form-filler")
	if code != 0 {
		t.Fatalf("skills show: %d %s %s", code, stdout, stderr)
	}
	if !regexp.MustCompile(`(?m)^  forms/intake\.md\s+27 bytes$`).MatchString(stdout) ||
		!regexp.MustCompile(`(?m)^  scripts/fill_form\.py\s+70 bytes$`).MatchString(stdout) ||
		!strings.Contains(stdout, "form-filler/passwd: a symbolic link; not listed") ||
		!strings.Contains(stdout, "Loaded by the agent once") {
		t.Errorf("skills show:\n%s", stdout)
	}
}

// TestSkillCatalogPrefersUsedSkills: with more skills than the catalog's
// budget holds, the system prompt says how many it left out and that
// list_skills lists them all; a skill the agent used comes into it even
// when its name sorts last.
func TestSkillCatalogPrefersUsedSkills(t *testing.T) {
	t.Parallel()
	script := func(r brokertest.Recorded) brokertest.Reply {
		last := r.Request.Messages[len(r.Request.Messages)-1]
		if last.Role == contracts.RoleUser && last.Text == "zap the zebras" {
			return brokertest.Reply{ToolCalls: []contracts.ToolCall{{ID: "u1", Name: contracts.ToolUseSkill, Arguments: `{"name":"zz-zebra"}`}}}
		}
		if last.Role == contracts.RoleTool {
			res := last.ToolResults[0]
			return brokertest.Reply{Text: fmt.Sprintf("RESULT %s ok=%v", res.Name, res.OK)}
		}
		return brokertest.Reply{Text: "CATALOG: " + r.Request.System}
	}
	srv := brokertest.NewServer(t, "openai", script)
	h := home(t, "openai", srv.BaseURL(), "")
	write := func(name, desc string) {
		dir := filepath.Join(h, "skills", name)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		doc := "---\nname: " + name + "\ndescription: " + desc + "\n---\nDo it.\n"
		if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 40 {
		write(fmt.Sprintf("chore-%02d", i), fmt.Sprintf("Chore number %d, described at enough length to take room in the catalog.", i))
	}
	write("zz-zebra", "Zap the zebras, a chore described at length enough to take room in the catalog.")
	chat := func(text string) string {
		t.Helper()
		stdout, stderr, code := run(t, h, "", "chat", "-m", text)
		if code != 0 {
			t.Fatalf("%q: exit %d %s %s", text, code, stdout, stderr)
		}
		return stdout
	}
	note := regexp.MustCompile(`\((\d+) more skills not shown; list_skills lists them all\)`)
	before := chat("what skills do you have?")
	if strings.Contains(before, "zz-zebra") || !note.MatchString(before) || !strings.Contains(before, "- chore-00: ") {
		t.Fatalf("the catalog before any use:\n%s", before)
	}
	if out := chat("zap the zebras"); !strings.Contains(out, "RESULT use_skill ok=true") {
		t.Fatalf("use: %s", out)
	}
	after := chat("what skills do you have?")
	if !strings.Contains(after, `- zz-zebra: "Zap the zebras, a chore`) {
		t.Fatalf("a used skill is not in the catalog:\n%s", after)
	}
	if m, n := note.FindStringSubmatch(before), note.FindStringSubmatch(after); m == nil || n == nil || m[1] == "0" {
		t.Fatalf("the catalog does not say how many it left out:\n%s", after)
	}
}

// TestSkillsListReportsOnlyRealProblems: `skills list` over a skills
// folder that is also a git checkout, with a README, a LICENSE, a folder
// of notes and the library's own bookkeeping, reports nothing; a SKILL.md
// that does not parse is reported once.
func TestSkillsListReportsOnlyRealProblems(t *testing.T) {
	t.Parallel()
	h := home(t, "openai", "http://127.0.0.1:9/v1", "")
	skills := filepath.Join(h, "skills")
	folder := corpusSkill(t, h, "form-filler")
	if err := os.Symlink("/etc", filepath.Join(folder, "etc")); err != nil {
		t.Fatal(err)
	}
	for p, data := range map[string]string{
		"README.md":                  "# My skills\n",
		"LICENSE":                    "MIT\n",
		".git/HEAD":                  "ref: refs/heads/main\n",
		".git/objects/ab/cd":         "x",
		".versions/form-filler/1/x":  "x",
		".removed/old-1700000000/x":  "x",
		"notes/ideas.md":             "not a skill\n",
		"node_modules/left-pad/x.js": "module.exports = 1\n",
	} {
		full := filepath.Join(skills, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	stdout, stderr, code := run(t, h, "", "skills", "list")
	if code != 0 || stderr != "" || !strings.Contains(stdout, "form-filler") || !strings.Contains(stdout, "daily-note") {
		t.Fatalf("skills list over junk: %d\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	if err := os.MkdirAll(filepath.Join(skills, "broken"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(skills, "broken", "SKILL.md"), []byte("---\nname: broken\n---\nNo description.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code = run(t, h, "", "skills", "list")
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if code != 0 || len(lines) != 1 || !strings.HasPrefix(lines[0], "skipped: broken/SKILL.md: line 1: the frontmatter has no description") {
		t.Fatalf("skills list with a broken skill: %d\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}
