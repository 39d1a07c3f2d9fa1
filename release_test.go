package shelldon_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"debug/buildinfo"
	"debug/elf"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// releaseEnv turns TestRelease on; .ci/run sets it.
const releaseEnv = "SHELLDON_RELEASE"

// releaseTarget is one binary scripts/release.sh builds.
type releaseTarget struct {
	name    string // the file name's suffix
	goarch  string
	goarm   string
	machine elf.Machine
	class   elf.Class
}

var releaseTargets = []releaseTarget{
	{"amd64", "amd64", "", elf.EM_X86_64, elf.ELFCLASS64},
	{"arm64", "arm64", "", elf.EM_AARCH64, elf.ELFCLASS64},
	{"armv7", "arm", "7", elf.EM_ARM, elf.ELFCLASS32},
	{"armv6", "arm", "6", elf.EM_ARM, elf.ELFCLASS32},
}

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out))
}

// releaseEnviron is the environment without a VERSION that would stand in
// for the one a test gives.
func releaseEnviron() []string {
	return slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "VERSION=") })
}

// TestRelease runs scripts/release.sh and checks what it ships: four
// static, stripped ELF binaries for the right machines (GOARM recorded for
// the two arm ones), with the version given and the checkout's revision
// embedded, and a SHA256SUMS that matches them. The binary for this
// machine runs and prints that version and revision. Four links of the
// whole binary take a minute or two on a warm build cache (longer cold),
// so the everyday `go test ./...` skips it; CI runs it.
func TestRelease(t *testing.T) {
	if os.Getenv(releaseEnv) != "1" {
		t.Skip("building four release binaries takes minutes; run with " + releaseEnv + "=1 (.ci/run does)")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	t.Parallel()
	const version = "v9.8.7-rc.1+test"
	dir := t.TempDir()
	dirty := gitOut(t, ".", "status", "--porcelain") != ""
	args := []string{"-o", dir, version}
	if dirty { // a developer's tree; CI's is clean
		args = append([]string{"--allow-dirty"}, args...)
	}
	cmd := exec.Command("scripts/release.sh", args...)
	cmd.Env = releaseEnviron()
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("scripts/release.sh %s took %s", strings.Join(args, " "), time.Since(start).Round(time.Second))
	if err != nil {
		t.Fatalf("release.sh: %v\n%s", err, out)
	}
	head := gitOut(t, ".", "rev-parse", "HEAD")

	files := map[string]bool{}
	for _, tg := range releaseTargets {
		name := "shelldon-" + version + "-linux-" + tg.name
		files[name] = true
		if !bytes.Contains(out, []byte(name)) {
			t.Errorf("the summary does not list %s:\n%s", name, out)
		}
		t.Run(tg.name, func(t *testing.T) {
			path := filepath.Join(dir, name)
			checkStaticELF(t, path, tg)
			checkBuildInfo(t, path, tg, version, head, dirty)
		})
	}
	checkSums(t, dir, files)

	// The binary for this machine says what it is.
	if runtime.GOOS != "linux" || (runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64") {
		t.Logf("no release binary for %s/%s to run", runtime.GOOS, runtime.GOARCH)
		return
	}
	got, err := exec.Command(filepath.Join(dir, "shelldon-"+version+"-linux-"+runtime.GOARCH), "version").Output()
	if err != nil {
		t.Fatalf("version: %v", err)
	}
	want := "shelldon " + version + " (" + runtime.Version() + ", linux/" + runtime.GOARCH + ")\nrevision " + head
	if dirty {
		want += " with uncommitted changes"
	}
	want += ", committed "
	if !strings.HasPrefix(string(got), want) {
		t.Errorf("shelldon version:\n%s\nwant it to start with\n%s", got, want)
	}
}

// checkStaticELF: the right machine and class, statically linked (no
// interpreter, no dynamic section, no libraries) and stripped.
func checkStaticELF(t *testing.T, path string, tg releaseTarget) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Machine != tg.machine || f.Class != tg.class {
		t.Errorf("%s is %s %s, want %s %s", path, f.Class, f.Machine, tg.class, tg.machine)
	}
	if f.Type != elf.ET_EXEC {
		t.Errorf("%s is %s, want a static executable (ET_EXEC)", path, f.Type)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("%s has a %s program header: linked dynamically", path, p.Type)
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("%s needs %v", path, libs)
	}
	for _, s := range []string{".dynamic", ".interp", ".symtab", ".debug_info"} {
		if f.Section(s) != nil {
			t.Errorf("%s has a %s section (not static, or not stripped)", path, s)
		}
	}
}

// checkBuildInfo reads what `go version -m` shows: the target, GOARM for
// arm, CGO off, -trimpath, and the checkout's revision.
func checkBuildInfo(t *testing.T, path string, tg releaseTarget, version, head string, dirty bool) {
	t.Helper()
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range bi.Settings {
		got[s.Key] = s.Value
	}
	want := map[string]string{
		"CGO_ENABLED":  "0",
		"GOOS":         "linux",
		"GOARCH":       tg.goarch,
		"-trimpath":    "true",
		"-buildmode":   "exe",
		"vcs":          "git",
		"vcs.revision": head,
		"vcs.modified": map[bool]string{true: "true", false: "false"}[dirty],
	}
	if tg.goarm != "" {
		want["GOARM"] = tg.goarm
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s=%q, want %q", path, k, got[k], v)
		}
	}
	// Go leaves -ldflags out of the build info under -trimpath (it may
	// hold paths), so the version -X set is looked for in the binary.
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(version)) {
		t.Errorf("%s does not hold the version %s", path, version)
	}
}

// checkSums recomputes every checksum SHA256SUMS lists and checks it lists
// exactly the release's files.
func checkSums(t *testing.T, dir string, files map[string]bool) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`^([0-9a-f]{64})  (\S+)$`) // sha256sum's text mode
	listed := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		m := line.FindStringSubmatch(sc.Text())
		if m == nil {
			t.Errorf("SHA256SUMS line %q is not sha256sum's format", sc.Text())
			continue
		}
		listed[m[2]] = true
		if !files[m[2]] {
			t.Errorf("SHA256SUMS lists %s, not a release file", m[2])
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, m[2]))
		if err != nil {
			t.Fatal(err)
		}
		if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != m[1] {
			t.Errorf("SHA256SUMS: %s is %x, listed as %s", m[2], sum, m[1])
		}
	}
	for f := range files {
		if !listed[f] {
			t.Errorf("SHA256SUMS does not list %s", f)
		}
	}
}

// releaseClone clones this repository into a temporary directory, with
// this tree's scripts/release.sh (which may not be committed yet)
// committed, so the clone starts clean.
func releaseClone(t *testing.T) string {
	t.Helper()
	for _, tool := range []string{"git", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip(tool + " is not installed")
		}
	}
	if err := exec.Command("git", "rev-parse", "--is-inside-work-tree").Run(); err != nil {
		t.Skip("not a git checkout")
	}
	clone := filepath.Join(t.TempDir(), "clone")
	if out, err := exec.Command("git", "clone", "-q", "--shared", ".", clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	script, err := os.ReadFile("scripts/release.sh")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(clone, "scripts", "release.sh"), script, 0o755); err != nil {
		t.Fatal(err)
	}
	releaseGit(t, clone, "add", "scripts/release.sh")
	releaseGit(t, clone, "commit", "-q", "--allow-empty", "-m", "release.sh as in the tree")
	return clone
}

// releaseGit runs git in dir as a test author.
func releaseGit(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=test", "-c", "user.email=test@example.com",
		"-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// TestReleaseVersion: without a VERSION, a release is named for the
// latest tag (git describe), and a checkout with uncommitted changes, or
// only untracked files (which git describe does not count but go build
// does), gets -dirty. It runs the script's --dry-run in a clone, so it is
// quick and runs every time.
func TestReleaseVersion(t *testing.T) {
	t.Parallel()
	clone := releaseClone(t)
	releaseGit(t, clone, "tag", "-a", "v0.1.0", "-m", "v0.1.0")
	dryRun := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(filepath.Join(clone, "scripts", "release.sh"), append([]string{"--dry-run", "-o", "/out"}, args...)...)
		cmd.Env = releaseEnviron()
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("release.sh --dry-run %q: %v\n%s", args, err, out)
		}
		return string(out)
	}
	files := func(version string) string {
		var s strings.Builder
		for _, tg := range releaseTargets {
			s.WriteString("/out/shelldon-" + version + "-linux-" + tg.name + "\n")
		}
		return s.String() + "/out/SHA256SUMS\n"
	}
	check := func(what, got, want string) {
		t.Helper()
		if got != want {
			t.Errorf("%s:\n%s\nwant\n%s", what, got, want)
		}
	}

	check("at a tag", dryRun(), files("v0.1.0"))
	check("a VERSION argument", dryRun("v2.0.0"), files("v2.0.0"))
	cmd := exec.Command(filepath.Join(clone, "scripts", "release.sh"), "--dry-run", "-o", "/out")
	cmd.Env = append(releaseEnviron(), "VERSION=v3.0.0-env")
	if out, err := cmd.Output(); err != nil || string(out) != files("v3.0.0-env") {
		t.Errorf("VERSION in the environment: %v\n%s", err, out)
	}

	if err := os.WriteFile(filepath.Join(clone, "untracked.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	check("untracked files", dryRun("--allow-dirty"), files("v0.1.0-dirty"))
	os.Remove(filepath.Join(clone, "untracked.txt"))
	if err := os.WriteFile(filepath.Join(clone, "go.mod"), []byte("// changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	check("a changed file", dryRun("--allow-dirty"), files("v0.1.0-dirty"))
	releaseGit(t, clone, "commit", "-q", "-am", "after the tag")
	rev := gitOut(t, clone, "rev-parse", "--short", "HEAD")
	check("a commit after the tag", dryRun(), files("v0.1.0-1-g"+rev))
}

// TestReleaseRefuses: scripts/release.sh refuses, before building
// anything, a checkout with uncommitted changes (without --allow-dirty), a
// version that is not one word fit for a file name and -ldflags, and bad
// options. It runs in a clone of the repository with a stray file in it,
// so it neither depends on nor touches this checkout's state; it is quick,
// so it runs every time.
func TestReleaseRefuses(t *testing.T) {
	t.Parallel()
	clone := releaseClone(t)
	if err := os.WriteFile(filepath.Join(clone, "stray.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	outDir := filepath.Join(t.TempDir(), "dist")
	cases := []struct {
		name   string
		args   []string
		code   int
		stderr string // a part of what it prints
	}{
		{"dirty", []string{"-o", outDir, "v1.0.0"}, 1, "?? stray.txt"},
		{"dirty, version from git", []string{"-o", outDir}, 1, "pass --allow-dirty"},
		{"space in version", []string{"--allow-dirty", "-o", outDir, "v1 -X main.x=y"}, 2, "is not a version"},
		{"path in version", []string{"--allow-dirty", "-o", outDir, "../../etc/x"}, 2, "is not a version"},
		{"leading dot", []string{"--allow-dirty", "-o", outDir, ".hidden"}, 2, "is not a version"},
		{"quote in version", []string{"--allow-dirty", "-o", outDir, `v1"`}, 2, "is not a version"},
		{"newline in version", []string{"--allow-dirty", "-o", outDir, "v1\nv2"}, 2, "is not a version"},
		{"long version", []string{"--allow-dirty", "-o", outDir, "v" + strings.Repeat("1", 64)}, 2, "is not a version"},
		{"two versions", []string{"--allow-dirty", "-o", outDir, "v1", "v2"}, 2, "one VERSION at most"},
		{"unknown option", []string{"--force", "v1"}, 2, "unknown option --force"},
		{"-o without a directory", []string{"--allow-dirty", "-o"}, 2, "-o needs a directory"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(filepath.Join(clone, "scripts", "release.sh"), tc.args...)
			cmd.Env = releaseEnviron()
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.code || !strings.Contains(stderr.String(), tc.stderr) {
				t.Errorf("release.sh %q: exit %d, want %d; stderr:\n%s\nwant it to hold %q", tc.args, code, tc.code, stderr.String(), tc.stderr)
			}
			if strings.Contains(stderr.String(), "building") {
				t.Errorf("release.sh %q started building", tc.args)
			}
			entries, _ := os.ReadDir(outDir)
			for _, e := range entries {
				t.Errorf("release.sh %q left %s", tc.args, e.Name())
			}
		})
	}

	// The help says how to use it.
	out, err := exec.Command(filepath.Join(clone, "scripts", "release.sh"), "-h").Output()
	if err != nil || !strings.Contains(string(out), "Usage: scripts/release.sh") || !strings.Contains(string(out), "--allow-dirty") {
		t.Errorf("release.sh -h: %v\n%s", err, out)
	}
}
