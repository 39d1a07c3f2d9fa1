package skill

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseValid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		doc  string
		want Skill
	}{
		{
			name: "minimal",
			doc:  "---\nname: weekly-report\ndescription: Write the weekly report from the notes folder.\n---\n\nRead notes/*.md and summarize.\n",
			want: Skill{Name: "weekly-report", Description: "Write the weekly report from the notes folder.", Body: "Read notes/*.md and summarize."},
		},
		{
			name: "metadata, license, compatibility, allowed-tools",
			doc: "---\nname: pdf\ndescription: \"Fill PDF forms: when the owner sends a form.\"\nlicense: Apache-2.0\n" +
				"compatibility: needs python3\nallowed-tools: [read_file, list_dir]\nmetadata:\n  author: me\n  version: 1.0\n---\n# PDF\n\nSteps.\n",
			want: Skill{
				Name: "pdf", Description: "Fill PDF forms: when the owner sends a form.", License: "Apache-2.0",
				Compatibility: "needs python3", AllowedTools: "read_file list_dir",
				Metadata: map[string]string{"author": "me", "version": "1.0"}, Body: "# PDF\n\nSteps.",
			},
		},
		{
			name: "multi-line body keeps its shape",
			doc:  "---\nname: a1\ndescription: d\n---\n\n\n  indented first line\n\n- one\n\t- two\n\n```\ncode\n```\n\n\n",
			want: Skill{Name: "a1", Description: "d", Body: "  indented first line\n\n- one\n\t- two\n\n```\ncode\n```"},
		},
		{
			name: "CRLF line endings",
			doc:  "---\r\nname: crlf\r\ndescription: Windows file\r\n---\r\nline one\r\nline two\r\n",
			want: Skill{Name: "crlf", Description: "Windows file", Body: "line one\nline two"},
		},
		{
			name: "folded description and quoted name",
			doc:  "---\nname: \"x-2\"\ndescription: >\n  Long text\n  over two lines.\n---\nbody\n",
			want: Skill{Name: "x-2", Description: "Long text over two lines.", Body: "body"},
		},
		{
			name: "emoji with a presentation selector, non-ASCII text",
			doc:  "---\nname: fr\ndescription: Café ☕️ à emporter\n---\nÇa marche 👍\n",
			want: Skill{Name: "fr", Description: "Café ☕️ à emporter", Body: "Ça marche 👍"},
		},
		{
			name: "a body with --- lines",
			doc:  "---\nname: hr\ndescription: d\n---\n---\nabove\n---\n",
			want: Skill{Name: "hr", Description: "d", Body: "---\nabove\n---"},
		},
		{
			name: "frontmatter only, no body (the specification's minimal example)",
			doc:  "---\nname: bare\ndescription: Only a name and a description.\n---\n",
			want: Skill{Name: "bare", Description: "Only a name and a description."},
		},
		{
			name: "closing line without a line end",
			doc:  "---\nname: bare\ndescription: d\n---",
			want: Skill{Name: "bare", Description: "d"},
		},
		{
			name: "literal description keeps its lines",
			doc:  "---\nname: lit\ndescription: |\n  First line.\n  Second line.\n---\nb\n",
			want: Skill{Name: "lit", Description: "First line.\nSecond line.", Body: "b"},
		},
		{
			name: "folded description without the final line end",
			doc:  "---\nname: fold\ndescription: >-\n  One\n  sentence.\n\n  Two.\n---\nb\n",
			want: Skill{Name: "fold", Description: "One sentence.\nTwo.", Body: "b"},
		},
		{
			name: "escaped line break in a quoted description",
			doc:  "---\nname: esc\ndescription: \"one\\ntwo\"\n---\nb\n",
			want: Skill{Name: "esc", Description: "one\ntwo", Body: "b"},
		},
		{
			name: "byte-order mark",
			doc:  "\ufeff---\nname: bom\ndescription: d\n---\nb\n",
			want: Skill{Name: "bom", Description: "d", Body: "b"},
		},
		{
			name: "description of 1,024 characters, body over 16 KiB",
			doc:  "---\nname: long\ndescription: " + strings.Repeat("é", MaxDescription) + "\n---\n" + strings.Repeat("x\n", 20000),
			want: Skill{Name: "long", Description: strings.Repeat("é", MaxDescription), Body: strings.TrimSuffix(strings.Repeat("x\n", 20000), "\n")},
		},
		{
			name: "keys the specification does not define are kept",
			doc: "---\nname: extra\ndescription: d\nuser-invocable: false\n# a comment\nhooks: {pre: [a, 'b'], n: 1}\n" +
				"argument-hint: \"[file]\"\n---\nb\n",
			want: Skill{Name: "extra", Description: "d", Body: "b",
				Extra: "user-invocable: false\nhooks:\n  pre:\n    - a\n    - b\n  n: 1\nargument-hint: '[file]'\n"},
		},
		{
			name: "allowed-tools as a list, compatibility of 500",
			doc:  "---\nname: at\ndescription: d\ncompatibility: " + strings.Repeat("c", 500) + "\nallowed-tools:\n  - Bash(git:*)\n  - Read\n---\nb\n",
			want: Skill{Name: "at", Description: "d", Compatibility: strings.Repeat("c", 500), AllowedTools: "Bash(git:*) Read", Body: "b"},
		},
		{
			name: "number as name, empty metadata",
			doc:  "---\nname: 42\ndescription: yes\nmetadata: {}\n---\nb\n",
			want: Skill{Name: "42", Description: "yes", Body: "b"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Parse([]byte(tt.doc))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Fatalf("Parse (-want +got):\n%s", diff)
			}
			again, err := Parse(Format(got))
			if err != nil {
				t.Fatalf("Parse(Format): %v\n%s", err, Format(got))
			}
			if diff := cmp.Diff(got, again); diff != "" {
				t.Fatalf("round trip (-first +second):\n%s", diff)
			}
		})
	}
}

func TestParseInvalid(t *testing.T) {
	t.Parallel()
	doc := func(front, body string) string { return "---\n" + front + "---\n" + body }
	ok := "description: fine\n"
	tests := []struct {
		name string
		doc  string
		want string // substring of the error
	}{
		{"empty file", "", "line 1: SKILL.md must start with a \"---\""},
		{"missing frontmatter", "# Title\n\nbody\n", "line 1: SKILL.md must start"},
		{"unclosed frontmatter", "---\nname: a\ndescription: b\nbody\n", "never closed"},
		{"empty frontmatter", "---\n---\nbody\n", "frontmatter is empty"},
		{"missing name", doc(ok, "b\n"), "has no name"},
		{"missing description", doc("name: a\n", "b\n"), "has no description"},
		{"empty description", doc("name: a\ndescription: \"  \"\n", "b\n"), "line 3: the description is empty"},
		{"null description", doc("name: a\ndescription:\n", "b\n"), "description is empty"},
		{"uppercase name", doc("name: Weekly\n"+ok, "b\n"), "line 2: name \"Weekly\""},
		{"double hyphen", doc("name: a--b\n"+ok, "b\n"), "name \"a--b\""},
		{"leading hyphen", doc("name: -a\n"+ok, "b\n"), "name \"-a\""},
		{"trailing hyphen", doc("name: a-\n"+ok, "b\n"), "name \"a-\""},
		{"65 characters", doc("name: "+strings.Repeat("a", 65)+"\n"+ok, "b\n"), "is 65 characters; the Agent Skills specification allows at most 64"},
		{"dot dot slash", doc("name: ../x\n"+ok, "b\n"), "name \"../x\""},
		{"slash", doc("name: a/b\n"+ok, "b\n"), "name \"a/b\""},
		{"unicode name", doc("name: café\n"+ok, "b\n"), "name \"café\""},
		{"name as a list", doc("name: [a]\n"+ok, "b\n"), "line 2: name must be text"},
		{"duplicate key", doc("name: a\nname: b\n"+ok, "b\n"), "line 3: \"name\" is given twice"},
		{"description too long", doc("name: a\ndescription: "+strings.Repeat("é", 1025)+"\n", "b\n"),
			"line 3: the description is 1,025 characters; the Agent Skills specification allows at most 1,024"},
		{"compatibility too long", doc("name: a\n"+ok+"compatibility: "+strings.Repeat("x", 501)+"\n", "b\n"),
			"line 4: compatibility is 501 characters; the Agent Skills specification allows at most 500"},
		{"oversize document", doc("name: a\n"+ok, strings.Repeat("x\n", DefaultMaxSkillBytes)),
			"SKILL.md is 512 KiB; the limit (skills.max_skill_bytes) is 256 KiB"},
		{"oversize frontmatter", doc("name: a\n"+ok+"notes: "+strings.Repeat("x", MaxFrontmatter)+"\n", "b\n"),
			"line 2: the frontmatter is 65,570 bytes; shelldon reads at most 65,536 bytes of it"},
		{"bidi override in the body", doc("name: a\n"+ok, "ok\nsafe \u202eevil\n"), "line 6:6: the bidirectional control RIGHT-TO-LEFT OVERRIDE U+202E"},
		{"zero-width in the name", doc("name: a\u200bb\n"+ok, "b\n"), "line 2:8: the zero-width character ZERO WIDTH SPACE U+200B"},
		{"escaped bidi in a quoted value", doc("name: a\ndescription: \"x\\u202Ey\"\n", "b\n"), "line 3: description: the bidirectional control"},
		{"escaped NUL in a quoted value", doc("name: a\ndescription: \"x\\0y\"\n", "b\n"), "the control character U+0000"},
		{"control character", doc("name: a\n"+ok, "bell\a\n"), "line 5:5: the control character U+0007"},
		{"lone carriage return", doc("name: a\n"+ok, "a\rb\n"), "the control character U+000D"},
		{"byte-order mark twice", "\ufeff\ufeff" + doc("name: a\n"+ok, "b\n"), "line 1:1: the zero-width character ZERO WIDTH NO-BREAK SPACE"},
		{"byte-order mark in the body", doc("name: a\n"+ok, "b\ufeff\n"), "line 5:2: the zero-width character ZERO WIDTH NO-BREAK SPACE"},
		{"NUL byte", doc("name: a\n"+ok, "b\x00c\n"), "line 5:2: the control character U+0000"},
		{"invalid UTF-8", doc("name: a\n"+ok, "b\xff\n"), "line 5:2: invalid UTF-8"},
		{"run of variation selectors", doc("name: a\n"+ok, "☕\ufe0f\ufe0f\n"), "the variation selector"},
		{"tag on a value", doc("name: a\n"+ok+"license: !!python/object:os.system [ls]\n", "b\n"), "line 4: license: YAML tags (!!python/object:os.system)"},
		{"str tag", doc("name: !!str a\n"+ok, "b\n"), "YAML tags"},
		{"anchor", doc("name: &n a\n"+ok, "b\n"), "line 2: name: YAML anchors (&n)"},
		{"alias", doc("name: a\n"+ok+"license: *n\n", "b\n"), "not valid YAML"},
		{"alias bomb", doc("name: a\n"+ok+"metadata:\n  a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"+
			"  b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n  c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n  d: [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n", "b\n"), "line 5: metadata.a: YAML anchors (&a)"},
		{"merge key", doc("name: a\n"+ok+"metadata:\n  <<: {x: y}\n", "b\n"), "line 5: YAML merge keys"},
		{"top-level merge key", doc("name: a\n"+ok+"<<: {license: x}\n", "b\n"), "line 4: YAML merge keys"},
		{"nested metadata", doc("name: a\n"+ok+"metadata:\n  x:\n    y: z\n", "b\n"), "line 6: metadata.x must be text"},
		{"metadata as a list", doc("name: a\n"+ok+"metadata: [x]\n", "b\n"), "line 4: metadata must be a map"},
		{"a second YAML document", doc("name: a\n"+ok+"...\n--- {x: 1}\n", "b\n"), "second YAML document"},
		{"frontmatter is a list", doc("- name\n", "b\n"), "line 2: the frontmatter must be a map"},
		{"YAML syntax error", doc("name: a\n"+ok+"license: [\n", "b\n"), "line 4: the frontmatter is not valid YAML"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse([]byte(tt.doc))
			if err == nil {
				t.Fatalf("Parse accepted:\n%s", tt.doc)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse error %q; want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestFormatCanonical(t *testing.T) {
	t.Parallel()
	s := Skill{
		Name: "yes", Description: "a: b # c 'd' \"e\"\tf", License: "MIT", AllowedTools: "read_file",
		Metadata: map[string]string{"b": "null", "a": "123", "---": "...", "k: v": ""},
		Body:     "---\nline\n\n# head",
		Extra:    "user-invocable: false\nhooks:\n  pre:\n    - a\n    - null\n  \"1\": '---'\n",
	}
	data := Format(s)
	want := "---\nname: \"yes\"\n"
	if !strings.HasPrefix(string(data), want) {
		t.Fatalf("Format starts %q; want %q", data, want)
	}
	got, err := Parse(data)
	if err != nil {
		t.Fatalf("Parse(Format): %v\n%s", err, data)
	}
	if diff := cmp.Diff(s, got); diff != "" {
		t.Fatalf("round trip (-want +got):\n%s\n%s", diff, data)
	}
	if again := Format(got); string(again) != string(data) {
		t.Fatalf("Format is not stable:\n%s\n%s", data, again)
	}
}

// TestFormatQuotes round-trips values YAML would read as something else
// unless Format quotes them.
func TestFormatQuotes(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"<<", "? x", "- a", "*a", "&a", "!t", "#c", "%YAML", "@", "`", "|", ">", "---", "...",
		"a: b", "[x]", "{x}", "'", "\"", "\\", "0x10", "1e3", ".inf", "2001-12-14", "=", "y", "off", "true", "1"} {
		s := Skill{Name: "a", Description: v, License: v, Compatibility: v, AllowedTools: v, Metadata: map[string]string{v: v}, Body: "b"}
		data := Format(s)
		got, err := Parse(data)
		if err != nil {
			t.Errorf("%q: %v\n%s", v, err, data)
			continue
		}
		if diff := cmp.Diff(s, got); diff != "" {
			t.Errorf("%q (-want +got):\n%s\n%s", v, diff, data)
		}
	}
}

func TestValidName(t *testing.T) {
	t.Parallel()
	for _, n := range []string{"a", "a-b", "0", "a1-b2-c3", strings.Repeat("x", 64)} {
		if err := ValidName(n); err != nil {
			t.Errorf("ValidName(%q) = %v", n, err)
		}
	}
	for _, n := range []string{"", "A", "a_b", "a.b", ".a", "..", "a/b", "a\\b", "a b", "-", "a--b", strings.Repeat("x", 65), "ａ"} {
		if ValidName(n) == nil {
			t.Errorf("ValidName(%q) accepted", n)
		}
	}
	// Each rule of the specification is named.
	for name, want := range map[string]string{
		"":                       "the name is empty; the Agent Skills specification requires 1 to 64 characters",
		strings.Repeat("é", 65):  "is 65 characters; the Agent Skills specification allows at most 64",
		"My_Skill":               `name "My_Skill" may contain only lowercase letters, digits and hyphens (the Agent Skills specification: a-z, 0-9, -); 'M' is not one`,
		"café":                   `'é' is not one`,
		"-pdf":                   `name "-pdf" must not start or end with a hyphen (the Agent Skills specification)`,
		"pdf-":                   `name "pdf-" must not start or end with a hyphen`,
		"pdf--processing":        `name "pdf--processing" must not contain consecutive hyphens "--" (the Agent Skills specification)`,
		strings.Repeat("x", 100): `name "` + strings.Repeat("x", 80) + `"... is 100 characters`,
	} {
		if err := ValidName(name); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ValidName(%q) = %v; want it to contain %q", name, err, want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"---\nname: a\ndescription: b\n---\nbody\n",
		"---\r\nname: a-b\r\ndescription: \"x: y\"\r\nmetadata:\n  k: v\n---\r\n\r\nbody\r\n",
		"---\nname: a\ndescription: >\n  folded\n  text\nallowed-tools: [x, y]\nlicense: MIT\n---\n# h\n\n- l\n",
		"---\nname: a\ndescription: b\nmetadata: {a: &x 1, b: *x}\n---\nb\n",
		"---\nname: a\ndescription: b\n...\n--- c\n---\nb\n",
		"---\n{name: a, description: '1'}\n---\n\tb\n",
		"---\nname: '0'\ndescription: \"a\\tb \\u00e9\"\ncompatibility: ~\nmetadata:\n  '<<': '---'\n  \"? x\": \"...\"\n---\n---\nb\n",
		"---\nname: a\ndescription: !!str b\n---\nb\n",
		"no frontmatter",
		"\ufeff---\nname: a\ndescription: |\n  one\n  two\n---\n",
		"---\nname: a\ndescription: >-\n  x\n\n  y\nother: {k: [1, 'two', {m: ~}], t: true}\nz: |\n  lit\n---",
		"---\r\nname: a\r\ndescription: d\r\nhooks:\r\n  - \"0x10\"\r\n  - '2001-12-14'\r\n---\r\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data)
		if err != nil {
			return
		}
		out := Format(s)
		again, err := Parse(out)
		if err != nil {
			t.Fatalf("Parse(Format(s)) failed: %v\ninput: %q\nformatted: %q", err, data, out)
		}
		if diff := cmp.Diff(s, again); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s\ninput: %q\nformatted: %q", diff, data, out)
		}
		if string(Format(again)) != string(out) {
			t.Fatalf("Format is not stable for %q", out)
		}
	})
}
