package selfcode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const bundleTest = "def test_a():\n    pass\n"

// twoVersions is a directory whose tool greet has had v1 and v2 approved
// (v2 live) and a v3 staged, never approved.
func twoVersions(t *testing.T) *Dir {
	t.Helper()
	d := newDir(t)
	for i, code := range []string{code1, strings.Replace(code1, "one", "two", 1)} {
		m, err := d.Stage("greet", Starlark, code, bundleTest, Meta{Description: fmt.Sprint("v", i+1)}, "passed")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.Promote("greet", m.Hash, "owner-a"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := d.Stage("greet", Starlark, code1+"# draft\n", bundleTest, Meta{}, "passed"); err != nil {
		t.Fatal(err)
	}
	return d
}

func exportGreet(t *testing.T) (Bundle, []byte) {
	t.Helper()
	b, data, omitted, err := twoVersions(t).Export("greet")
	if err != nil || omitted != 0 {
		t.Fatalf("export: %v (omitted %d)", err, omitted)
	}
	return b, data
}

// TestBundleRoundTrip: an export holds the approved versions (not the
// staged draft), is written atomically and not over an existing file
// without force, and reads back the same.
func TestBundleRoundTrip(t *testing.T) {
	t.Parallel()
	b, data := exportGreet(t)
	if b.Current != 2 || len(b.Versions) != 2 || b.Versions[0].ApprovedBy != "owner-a" || b.Versions[1].Meta.Description != "v2" {
		t.Fatalf("bundle: current %d, %+v", b.Current, b.Versions)
	}
	file := filepath.Join(t.TempDir(), "greet.json")
	if err := WriteBundle(file, data, false); err != nil {
		t.Fatal(err)
	}
	if err := WriteBundle(file, []byte("other"), false); !errors.Is(err, ErrBundleExists) {
		t.Fatalf("writing over it without force: %v", err)
	}
	if got, _ := os.ReadFile(file); !bytes.Equal(got, data) {
		t.Fatal("the refused write changed the file")
	}
	if err := WriteBundle(file, data, true); err != nil {
		t.Fatalf("with force: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(file), ".*tmp*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	f, _ := os.Open(file)
	defer f.Close()
	got, err := ReadBundle(f)
	if err != nil {
		t.Fatal(err)
	}
	if got.Hash != b.Hash || len(got.Versions) != 2 || got.Versions[1].Code != b.Versions[1].Code {
		t.Fatalf("read back: %+v", got)
	}
	if _, _, _, err := newDir(t).Export("greet"); !errors.Is(err, ErrNotFound) {
		t.Errorf("exporting a tool that is not there: %v", err)
	}
	d := twoVersions(t)
	if err := d.Quarantine("greet"); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := d.Export("greet"); !errors.Is(err, ErrNoLive) {
		t.Errorf("exporting a quarantined tool: %v", err)
	}
}

// TestImportedHistoryIsNeverRolledBackTo: an imported version keeps the
// bundle's history as a record in its manifest, but no version of it is
// archived here, so a rollback reaches only versions approved here.
func TestImportedHistoryIsNeverRolledBackTo(t *testing.T) {
	t.Parallel()
	b, _ := exportGreet(t)
	cur, _ := b.Version(b.Current)

	t.Run("fresh home", func(t *testing.T) {
		t.Parallel()
		d := newDir(t)
		m, err := d.StageImported(b.Name, cur.Language, cur.Code, cur.Test, cur.Meta, "passed here", b.Origin("greet.json"))
		if err != nil || m.Version != 1 || m.Imported == nil || m.Imported.SourceVersion != 2 {
			t.Fatalf("stage: %+v %v", m, err)
		}
		live, err := d.Promote("greet", m.Hash, "owner-b")
		if err != nil || live.Imported == nil || len(live.Imported.History) != 2 || live.ApprovedBy != "owner-b" {
			t.Fatalf("promote: %+v %v", live, err)
		}
		_, err = d.Rollback("greet")
		if !errors.Is(err, ErrNoVersion) || !strings.Contains(err.Error(), "another machine") {
			t.Fatalf("rollback to an imported version: %v", err)
		}
		if vs, _ := d.Versions("greet"); len(vs) != 1 || vs[0].Hash != cur.Hash {
			t.Fatalf("versions here: %+v", vs)
		}
		if got, _ := d.Load(StateLive, "greet"); got.Hash != cur.Hash {
			t.Fatal("the live version changed")
		}
	})
	t.Run("a local version before", func(t *testing.T) {
		t.Parallel()
		d := newDir(t)
		local := code1 + "# local\n"
		m, _ := d.Stage("greet", Starlark, local, bundleTest, Meta{}, "passed")
		if _, err := d.Promote("greet", m.Hash, "owner-b"); err != nil {
			t.Fatal(err)
		}
		im, err := d.StageImported(b.Name, cur.Language, cur.Code, cur.Test, cur.Meta, "passed here", b.Origin("greet.json"))
		if err != nil || im.Version != 2 {
			t.Fatalf("stage the import: %+v %v", im, err)
		}
		if _, err := d.Promote("greet", im.Hash, "owner-b"); err != nil {
			t.Fatal(err)
		}
		back, err := d.Rollback("greet")
		if err != nil || back.Version != 1 || back.Hash != Hash(Starlark, local, bundleTest) {
			t.Fatalf("rollback: %+v %v; want the local v1", back, err)
		}
		// The archive holds the versions approved here and nothing else.
		for _, v := range d.archived("greet") {
			a, err := loadDir(d.archiveDir("greet", v))
			if err != nil || a.ApprovedBy != "owner-b" {
				t.Errorf("archived v%d: %+v %v", v, a.Manifest, err)
			}
			for _, h := range b.Versions {
				if h.Hash == a.Hash && h.Version != b.Current {
					t.Errorf("an imported-only version (v%d there) is in the archive", h.Version)
				}
			}
		}
	})
}

// reseal recomputes every hash of b, as a forger who knows the format
// would, and encodes it.
func reseal(b Bundle) []byte {
	for i, v := range b.Versions {
		b.Versions[i].Hash = Hash(v.Language, v.Code, v.Test)
	}
	b.Hash = bundleHash(b)
	data, _ := json.Marshal(b)
	return data
}

func copyBundle(b Bundle) Bundle {
	b.Versions = append([]BundleVersion(nil), b.Versions...)
	return b
}

// TestReadBundleRefusesHostile: what ReadBundle refuses, and why.
func TestReadBundleRefusesHostile(t *testing.T) {
	t.Parallel()
	good, data := exportGreet(t)
	edit := func(f func(b *Bundle)) []byte {
		b := copyBundle(good)
		f(&b)
		return reseal(b)
	}
	replace := func(old, new string) []byte { return bytes.Replace(data, []byte(old), []byte(new), 1) }
	deep := strings.Repeat("[", 100) + strings.Repeat("]", 100)
	cases := []struct {
		name string
		data []byte
		want error
		msg  string
	}{
		{"code changed, hash kept", replace(`return \"two\"`, `return \"pwned\"`), ErrBundleTampered, "content hash"},
		{"code and its hash changed, bundle hash kept", func() []byte {
			b := copyBundle(good)
			b.Versions[1].Code += "# more\n"
			b.Versions[1].Hash = Hash(b.Versions[1].Language, b.Versions[1].Code, b.Versions[1].Test)
			out, _ := json.Marshal(b)
			return out
		}(), ErrBundleTampered, "hash"},
		{"approver changed", replace(`"approved_by": "owner-a"`, `"approved_by": "someone"`), ErrBundleTampered, ""},
		{"capabilities added, bundle hash kept", replace(`"description": "v2",`, `"description": "v2", "capabilities": {"http": ["evil.example"]},`), ErrBundleTampered, ""},
		{"too large a file", append(append([]byte{}, data...), bytes.Repeat([]byte(" "), MaxBundle)...), ErrBadBundle, "larger than"},
		{"too large a code", edit(func(b *Bundle) { b.Versions[1].Code = strings.Repeat("#", MaxSource+1) }), ErrTooLarge, ""},
		{"too large a test", edit(func(b *Bundle) { b.Versions[0].Test = strings.Repeat("#", MaxSource+1) }), ErrTooLarge, ""},
		{"too long a description", edit(func(b *Bundle) { b.Versions[0].Meta.Description = strings.Repeat("d", maxDescription+1) }), ErrTooLarge, ""},
		{"too many capabilities", edit(func(b *Bundle) {
			b.Versions[1].Meta.Capabilities = map[string][]string{}
			for i := range maxCapabilities + 1 {
				b.Versions[1].Meta.Capabilities[fmt.Sprint("c", i)] = nil
			}
		}), ErrBadBundle, "capabilities"},
		{"path name", edit(func(b *Bundle) { b.Name = "../../etc/passwd" }), ErrBadBundle, "name"},
		{"slash name", edit(func(b *Bundle) { b.Name = "a/b" }), ErrBadBundle, "name"},
		{"built-in name", edit(func(b *Bundle) { b.Name = "read_file" }), ErrBadBundle, "name"},
		{"keyword name", edit(func(b *Bundle) { b.Name = "eval" }), ErrBadBundle, "name"},
		{"unnormalized name", edit(func(b *Bundle) { b.Name = "Greet Me" }), ErrBadBundle, "name"},
		{"empty name", edit(func(b *Bundle) { b.Name = "" }), ErrBadBundle, "name"},
		{"dot name", edit(func(b *Bundle) { b.Name = ".journal" }), ErrBadBundle, "name"},
		{"not JSON", []byte("{"), ErrBadBundle, "JSON"},
		{"an array", []byte("[]"), ErrBadBundle, ""},
		{"null", []byte("null"), ErrBadBundle, ""},
		{"empty", nil, ErrBadBundle, ""},
		{"data after it", append(append([]byte{}, data...), []byte(`{"x":1}`)...), ErrBadBundle, "after"},
		{"unknown field", replace(`"name": "greet"`, `"name": "greet", "path": "../x"`), ErrBadBundle, "unknown field"},
		{"unknown format version", replace(`"format_version": 1`, `"format_version": 2`), ErrBadBundle, "format version 2"},
		{"no format version", replace(`"format_version": 1,`, ``), ErrBadBundle, "format version 0"},
		{"other format", replace(BundleFormat, "tarball"), ErrBadBundle, "format"},
		{"deep nesting", replace(`"params_schema": null`, `"params_schema": `+deep), ErrBadBundle, "nested"},
		{"unknown language", edit(func(b *Bundle) { b.Versions[1].Language = "bash" }), ErrBadBundle, "language"},
		{"version zero", edit(func(b *Bundle) { b.Versions[0].Version = 0 }), ErrBadBundle, "positive"},
		{"versions out of order", edit(func(b *Bundle) { b.Versions[0], b.Versions[1] = b.Versions[1], b.Versions[0] }), ErrBadBundle, "order"},
		{"duplicate versions", edit(func(b *Bundle) { b.Versions[0].Version = 2 }), ErrBadBundle, "order"},
		{"current not in it", edit(func(b *Bundle) { b.Current = 7 }), ErrBadBundle, "current"},
		{"no versions", edit(func(b *Bundle) { b.Versions = nil }), ErrBadBundle, "versions"},
		{"too many versions", edit(func(b *Bundle) {
			b.Versions = nil
			for i := range MaxBundleVersions + 1 {
				b.Versions = append(b.Versions, BundleVersion{Version: i + 1, Language: Starlark, Code: code1, Test: bundleTest})
			}
			b.Current = 1
		}), ErrBadBundle, "versions"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if bytes.Equal(tc.data, data) {
				t.Fatal("the case changed nothing")
			}
			_, err := ReadBundle(bytes.NewReader(tc.data))
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("ReadBundle = %v; want %v containing %q", err, tc.want, tc.msg)
			}
		})
	}
	// The unedited bundle, resealed, is read: the edits above are what
	// each case refuses.
	if _, err := ReadBundle(bytes.NewReader(reseal(copyBundle(good)))); err != nil {
		t.Fatalf("the good bundle, resealed: %v", err)
	}
}

// TestExportLeavesOutWhatDoesNotFit: a tool with more versions than a
// bundle holds is exported with the newest, and says how many it left out.
func TestExportLeavesOutWhatDoesNotFit(t *testing.T) {
	t.Parallel()
	d := newDir(t)
	for i := range MaxBundleVersions + 3 {
		m, err := d.Stage("many", Starlark, fmt.Sprintf("%s# %d\n", code1, i), bundleTest, Meta{}, "passed")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.Promote("many", m.Hash, "o"); err != nil {
			t.Fatal(err)
		}
	}
	b, data, omitted, err := d.Export("many")
	if err != nil || omitted != 3 || len(b.Versions) != MaxBundleVersions || b.Versions[0].Version != 4 || b.Current != MaxBundleVersions+3 {
		t.Fatalf("export: %d versions from v%d, omitted %d, %v", len(b.Versions), b.Versions[0].Version, omitted, err)
	}
	if _, err := ReadBundle(bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
}

// FuzzReadBundle: no input panics ReadBundle, and a bundle it accepts has
// a valid name and versions whose content matches their hashes.
func FuzzReadBundle(f *testing.F) {
	d, _ := Open(filepath.Join(f.TempDir(), "tools"), nil)
	m, _ := d.Stage("greet", Starlark, code1, bundleTest, Meta{}, "passed")
	d.Promote("greet", m.Hash, "o")
	_, data, _, _ := d.Export("greet")
	f.Add(data)
	f.Add([]byte(`{"format":"shelldon-tool-bundle","format_version":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := ReadBundle(bytes.NewReader(data))
		if err != nil {
			return
		}
		if n, err := Normalize(b.Name); err != nil || n != b.Name {
			t.Fatalf("accepted the name %q", b.Name)
		}
		for _, v := range b.Versions {
			if Hash(v.Language, v.Code, v.Test) != v.Hash {
				t.Fatal("accepted a version whose hash does not match")
			}
		}
	})
}
