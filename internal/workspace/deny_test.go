package workspace

import (
	"errors"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// denyCase is one name of the deny table: a slash-separated path relative
// to the workspace, the file it names, and whether it is denied.
type denyCase struct {
	name string
	deny bool
}

// denyCases are the credential names that must be refused and the
// look-alikes that must stay reachable. Every pattern of denyPatterns and
// denyPairs has a denied case here (TestDenyCasesCoverPatterns).
var denyCases = []denyCase{
	// Environment files.
	{".env", true},
	{".env.local", true},
	{".env.production", true},
	{".env.example.local", true},
	{"prod.env", true},
	{"app.env", true},
	{".envrc", true},
	// Keys, certificates, key stores.
	{"server.pem", true},
	{"server.key", true},
	{"server.crt", true},
	{"ca.cer", true},
	{"cert.p12", true},
	{"cert.pfx", true},
	{"release.jks", true},
	{"release.keystore", true},
	{"putty.ppk", true},
	{"passwords.kdbx", true},
	{"AuthKey_ABC123.p8", true},
	{"http.keytab", true},
	{"secring.gpg", true},
	{"backup.gpg", true},
	{"client.ovpn", true},
	// SSH private keys and their variants.
	{"id_rsa", true},
	{"id_rsa.pub", true},
	{"id_rsa-cert.pub", true},
	{"id_rsa_work", true},
	{"id_dsa", true},
	{"id_ecdsa", true},
	{"id_ecdsa_sk", true},
	{"id_ed25519", true},
	{"id_ed25519_sk", true},
	// Credential directories and logins.
	{".ssh/known_hosts", true},
	{".gnupg/pubring.kbx", true},
	{".aws/credentials", true},
	{".aws/config", true},
	{".azure/msal_token_cache.json", true},
	{".config/gcloud/access_tokens.db", true},
	{".kube/config", true},
	{".kube/cache/discovery.json", true},
	{".oci/config", true},
	{".oci/oci_api_key.pem", true},
	{".docker/config.json", true},
	{".dockercfg", true},
	{".config/gh/hosts.yml", true},
	{".netrc", true},
	{"_netrc", true},
	{".npmrc", true},
	{".yarnrc.yml", true},
	{".pypirc", true},
	{".my.cnf", true},
	{".mylogin.cnf", true},
	{".s3cfg", true},
	{".boto", true},
	{".vault-token", true},
	{".terraformrc", true},
	{"terraform.rc", true},
	{".databrickscfg", true},
	{"rclone.conf", true},
	{".config/rclone/rclone.conf", true},
	{".git-credentials", true},
	{".pgpass", true},
	{".htpasswd", true},
	{"site.htpasswd", true},
	// Application and cloud secrets.
	{"service-account.json", true},
	{"service-account-prod.json", true},
	{"service_account.json", true},
	{"client_secret.json", true},
	{"client_secret_1234-abc.apps.googleusercontent.com.json", true},
	{"secret.yaml", true},
	{"k8s/secret.yml", true},
	{"secret.json", true},
	{"terraform.tfstate", true},
	{"terraform.tfstate.backup", true},
	{"terraform.tfstate.1700000000.backup", true},
	{"errored.tfstate", true},
	{"prod.tfstate", true},
	{"prod.tfstate.backup", true},
	{"terraform.tfstate.d/prod/state.json", true},
	{"prod.tfvars", true},
	{"prod.auto.tfvars", true},
	{"prod.tfvars.json", true},
	{"vault/notes.txt", true},
	// fileRules: credentials, secrets and kubeconfig files, and what
	// directories of those names hold but source code; the shadow file.
	{"credentials", true},
	{"credentials.json", true},
	{"credentials.py", true},
	{"credentials.js", true},
	{"credentials.ts", true},
	{"credentials.go.bak", true},
	{"secrets.yaml", true},
	{"secrets.yml", true},
	{"secrets.json", true},
	{"secrets.py", true},
	{"secrets.h", true},
	{"Secrets.swift", true},
	{"kubeconfig", true},
	{"kubeconfig.yaml", true},
	{"kubeconfig-prod", true},
	{"secrets/db_password.txt", true},
	{"secrets/api_token", true},
	{"secrets/sub/tls.json", true},
	{"secrets/.env.example", true},
	{"secrets/.env.go", true},
	{"secrets/.env.d/app.go", true},
	{"config/credentials/production.yml.enc", true},
	{"internal/credentials/testdata/token.json", true},
	{"internal/credentials/credentials.py", true},
	{"deploy/kubeconfig/prod.yaml", true},
	{"shadow", true},
	{"gshadow", true},
	{".shelldon/config.yaml", true},
	{"shelldon.db", true},

	// Look-alikes that are not credentials.
	{"environment.md", false},
	{".environment", false},
	{"env", false},
	{"env.md", false},
	{"envoy.yaml", false},
	{"keyboard.txt", false},
	{"monkey", false},
	{"monkey.txt", false},
	{"key", false},
	{"keys.txt", false},
	{"pem.txt", false},
	{"server.crt.md", false},
	{"crt.md", false},
	{"certificate-notes.md", false},
	{"id_card.png", false},
	{"identity.md", false},
	{"vault.md", false},
	{"vaults/notes.txt", false},
	{"my-vault/notes.txt", false},
	{"config.json", false},
	{"docker/config.json", false},
	{"kube/config", false},
	{".config/other.txt", false},
	{"gh/notes.yml", false},
	{"hosts.yml", false},
	{"keytab.md", false},
	{"ovpn.txt", false},
	{"gpg.md", false},
	{"tfstate.md", false},
	{"secret.txt", false},
	{"client_secret.txt", false},
	{"oci/config", false},
	// Templates of .env, without values by convention.
	{".env.example", false},
	{".env.sample", false},
	{".env.template", false},
	{".env.dist", false},
	// Code named like credentials, and code in directories so named.
	{"credentials.go", false},
	{"credentials_test.go", false},
	{"CredentialsProvider.java", false},
	{"secrets.go", false},
	{"secrets.rs", false},
	{"kubeconfig.go", false},
	{"internal/credentials/store.go", false},
	{"internal/credentials/store_test.go", false},
	{"internal/credentials/sub/helper.go", false},
	{"src/secrets/manager.py", false},
	{"src/secrets/index.ts", false},
	{"pkg/kubeconfig/loader.go", false},
	{"web/shadow/notes.txt", false},
	{"gcloud/notes.txt", false},
	{"service-account.yaml", false},
	{"account.json", false},
	{"my-secrets.yaml", false},
	{"terraform.tf", false},
	{"tfvars.md", false},
	{"shadow.txt", false},
}

// mixedCase flips the case of every other letter: ".env" becomes ".EnV".
func mixedCase(s string) string {
	var b strings.Builder
	i := 0
	for _, r := range s {
		if unicode.IsLetter(r) {
			if i%2 == 0 {
				r = unicode.ToUpper(r)
			} else {
				r = unicode.ToLower(r)
			}
			i++
		}
		b.WriteRune(r)
	}
	return b.String()
}

// variants are spellings of a name that a case-insensitive or
// Unicode-ignoring file system may take for the name itself.
func variants(name string) map[string]string {
	base := path.Base(name)
	dir := strings.TrimSuffix(name, base)
	v := map[string]string{
		"upper":    strings.ToUpper(name),
		"mixed":    mixedCase(name),
		"dot":      name + ".",
		"space":    name + " ",
		"zwnj":     dir + base[:1] + "\u200c" + base[1:], // ignored by HFS+
		"nested":   "a/b/" + name,
		"dotted":   "./a/../" + name,
		"repeated": "a//b/./" + name,
	}
	if strings.ContainsAny(name, "kK") {
		v["kelvin"] = strings.NewReplacer("k", "\u212A", "K", "\u212A").Replace(name)
	}
	return v
}

// TestDenyCheckName checks every name of the table and its variants by
// their text.
func TestDenyCheckName(t *testing.T) {
	t.Parallel()
	for _, tt := range denyCases {
		names := map[string]string{"as is": tt.name}
		for k, v := range variants(tt.name) {
			names[k] = v
		}
		for kind, name := range names {
			err := CheckName(name)
			if tt.deny && !errors.Is(err, ErrDenied) {
				t.Errorf("CheckName(%q) (%s) = %v; want ErrDenied", name, kind, err)
			}
			if !tt.deny && err != nil {
				t.Errorf("CheckName(%q) (%s) = %v; want nil", name, kind, err)
			}
		}
	}
}

// TestDenyFiles puts each name of the table on disk, with mixed-case and
// nested copies and symlinks to it, and checks the file tools: denied
// names are refused by ReadFile, WriteFile and Resolve, on the name asked
// for and on what it resolves to, and left out of ListDir; the others are
// read, written and listed.
func TestDenyFiles(t *testing.T) {
	t.Parallel()
	for _, tt := range denyCases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			mk := func(name string) {
				t.Helper()
				p := filepath.Join(dir, filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte("SECRET=hunter2\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			link := func(target, name string) {
				t.Helper()
				if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
					t.Fatal(err)
				}
			}
			first, _, _ := strings.Cut(tt.name, "/")
			mixed := mixedCase(tt.name)
			nested := "n1/n2/" + tt.name
			kelvin := strings.NewReplacer("k", "\u212A", "K", "\u212A").Replace(tt.name)
			mk(tt.name)
			mk(mixed)
			mk(nested)
			mk(kelvin)
			link(tt.name, "alias")           // a file link, named innocently
			link(first, "dir-alias")         // the first component, linked
			link("n1/n2/"+first, "deep-lnk") // a nested first component
			aliasDir := "dir-alias" + strings.TrimPrefix(tt.name, first)
			deepDir := "deep-lnk" + strings.TrimPrefix(tt.name, first)

			r, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()

			// Reading: the name, its case variants, a nested copy, and
			// innocent names that resolve to it.
			for _, name := range []string{tt.name, mixed, nested, kelvin, "alias", aliasDir, deepDir, "./" + tt.name} {
				data, _, err := r.ReadFile(name, 1<<10)
				if tt.deny {
					if !errors.Is(err, ErrDenied) || len(data) != 0 {
						t.Errorf("ReadFile(%q) = %q, %v; want ErrDenied", name, data, err)
					}
					if _, err := r.Resolve(name); !errors.Is(err, ErrDenied) {
						t.Errorf("Resolve(%q) = %v; want ErrDenied", name, err)
					}
					continue
				}
				if err != nil || string(data) != "SECRET=hunter2\n" {
					t.Errorf("ReadFile(%q) = %q, %v; want the file", name, data, err)
				}
			}

			// Writing: the name, a nested copy and innocent names that
			// resolve to it. .envrc is protected too, which WriteFile
			// checks first.
			for _, name := range []string{tt.name, mixed, nested, "alias", aliasDir} {
				_, err := r.WriteFile(name, []byte("x\n"))
				if tt.deny {
					if !errors.Is(err, ErrDenied) && !errors.Is(err, ErrProtected) {
						t.Errorf("WriteFile(%q) = %v; want ErrDenied", name, err)
					}
					continue
				}
				if err != nil {
					t.Errorf("WriteFile(%q) = %v; want success", name, err)
				}
			}
			if tt.deny {
				got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(tt.name)))
				if err != nil || string(got) != "SECRET=hunter2\n" {
					t.Errorf("%s was changed: %q, %v", tt.name, got, err)
				}
			}

			// Listing: the directory holding the name, and every directory
			// on the way, either refuses or leaves the denied name out.
			for _, name := range []string{tt.name, mixed, nested} {
				comps := strings.Split(name, "/")
				for i := range comps {
					parent := strings.Join(comps[:i], "/")
					entries, _, err := r.ListDir(parent, 1000)
					shown := slices.ContainsFunc(entries, func(e Entry) bool { return e.Name == comps[i] })
					if tt.deny {
						if errors.Is(err, ErrDenied) {
							break // and so is everything below
						}
						if err != nil {
							t.Fatalf("ListDir(%q) = %v", parent, err)
						}
						if !shown {
							break
						}
						continue
					}
					if err != nil || !shown {
						t.Errorf("ListDir(%q) = %v, %v; want %q shown", parent, entries, err, comps[i])
					}
				}
				if tt.deny {
					last := path.Dir(name)
					entries, _, err := r.ListDir(last, 1000)
					if err == nil && slices.ContainsFunc(entries, func(e Entry) bool { return e.Name == path.Base(name) }) {
						t.Errorf("ListDir(%q) shows %q", last, path.Base(name))
					}
				}
			}
		})
	}
}

// TestDenyCasesCoverPatterns checks that the table exercises every
// pattern: each pattern denies some denied case and no allowed one, each
// fileRule denies some denied case by name (and one beneath a directory of
// its name, for a tree rule), and every exception is an allowed case.
func TestDenyCasesCoverPatterns(t *testing.T) {
	t.Parallel()
	hits := func(match func(parent, name string) bool, deny bool) bool {
		for _, tt := range denyCases {
			if tt.deny != deny {
				continue
			}
			comps := strings.Split(tt.name, "/")
			for i, c := range comps {
				parent := ""
				if i > 0 {
					parent = comps[i-1]
				}
				if match(parent, c) {
					return true
				}
			}
		}
		return false
	}
	for _, p := range denyPatterns {
		match := func(_, name string) bool {
			ok, _ := path.Match(fold(p), denyKey(name))
			return ok && !excepted(p, denyKey(name))
		}
		if !hits(match, true) {
			t.Errorf("pattern %q has no denied case in the table", p)
		}
		if hits(match, false) {
			t.Errorf("pattern %q matches an allowed case", p)
		}
	}
	for _, d := range denyPairs {
		match := func(parent, name string) bool {
			return denyKey(parent) == fold(d[0]) && denyKey(name) == fold(d[1])
		}
		if !hits(match, true) {
			t.Errorf("pair %q has no denied case in the table", d)
		}
	}
	for _, r := range fileRules {
		var byName, beneath bool
		for _, tt := range denyCases {
			comps := strings.Split(tt.name, "/")
			leaf := comps[len(comps)-1]
			if !tt.deny || deniedComponent(comps) != "" {
				continue
			}
			ok, _ := path.Match(fold(r.pattern), denyKey(leaf))
			c, under := deniedFile(nil, leaf)
			byName = byName || ok && c == leaf && !under
			for _, d := range comps[:len(comps)-1] {
				ok, _ := path.Match(fold(r.pattern), denyKey(d))
				c, under := deniedFile(comps[:len(comps)-1], leaf)
				beneath = beneath || ok && c == d && under
			}
		}
		if !byName || r.tree && !beneath {
			t.Errorf("file rule %q: a denied case by name %v, beneath %v", r.pattern, byName, beneath)
		}
	}
	for _, p := range denyPatterns {
		for _, e := range denyExceptions(p) {
			if !slices.Contains(denyCases, denyCase{e, false}) {
				t.Errorf("exception %q of %q is not an allowed case", e, p)
			}
		}
	}
}

// TestGitPatternsOrder checks what gitPatterns relies on to express the
// list in git's last-match-wins order: an exception matches no other
// pattern, pair or file rule; a file rule with free extensions ends in "*";
// and no name a file rule matches is matched by another or by a pattern
// (the tables' own cases stand in for "no name").
func TestGitPatternsOrder(t *testing.T) {
	t.Parallel()
	matches := func(p, name string) bool {
		ok, _ := path.Match(fold(p), denyKey(name))
		return ok
	}
	for _, p := range denyPatterns {
		for _, e := range denyExceptions(p) {
			for _, q := range denyPatterns {
				if q != p && matches(q, e) {
					t.Errorf("exception %q of %q is matched by %q too", e, p, q)
				}
			}
			for _, r := range fileRules {
				if matches(r.pattern, e) || hasExt(sourceExts, path.Ext(denyKey(e))) {
					t.Errorf("exception %q of %q is matched by the file rule %q, or is source", e, p, r.pattern)
				}
			}
			for _, d := range denyPairs {
				if denyKey(e) == fold(d[1]) {
					t.Errorf("exception %q of %q is the name of the pair %q", e, p, d)
				}
			}
		}
	}
	for _, r := range fileRules {
		if len(r.free) > 0 && !strings.HasSuffix(r.pattern, "*") {
			t.Errorf("file rule %q has free extensions but does not end in *", r.pattern)
		}
		for _, tt := range denyCases {
			for _, c := range strings.Split(tt.name, "/") {
				if !matches(r.pattern, c) {
					continue
				}
				for _, q := range fileRules {
					if q.pattern != r.pattern && matches(q.pattern, c) {
						t.Errorf("%q is matched by the file rules %q and %q", c, r.pattern, q.pattern)
					}
				}
				for _, q := range denyPatterns {
					if matches(q, c) && len(denyExceptions(q)) > 0 {
						t.Errorf("%q is matched by the file rule %q and the pattern with exceptions %q", c, r.pattern, q)
					}
				}
			}
		}
	}
	for _, e := range codeExts {
		if !slices.Contains(sourceExts, e) {
			t.Errorf("%s frees a name but not a file beneath a directory so named", e)
		}
	}
}

// TestDenyListReference pins the names shelldon's predecessors denied
// (../shared/reference: .env / *.env / .env.*, the vault/ tree, the
// key and certificate suffixes, id_* private keys).
func TestDenyListReference(t *testing.T) {
	t.Parallel()
	for _, name := range []string{
		".env", "prod.env", ".env.local", "vault/x", "a.pem", "a.key", "a.crt",
		"a.cer", "a.p12", "a.pfx", ".htpasswd", "a.jks", "a.ppk", "id_rsa",
		"id_ed25519", "id_ecdsa", "id_dsa",
	} {
		if err := CheckName(name); !errors.Is(err, ErrDenied) {
			t.Errorf("CheckName(%q) = %v; want ErrDenied", name, err)
		}
	}
}

// TestDenyPatternsGit runs git with DenyPatterns as its exclude file, as
// the git tool does, and checks that 'add -A' takes every allowed file of
// the table and no denied one, in any ASCII case and at any depth.
func TestDenyPatternsGit(t *testing.T) {
	t.Parallel()
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not installed")
	}
	base := t.TempDir()
	home := filepath.Join(base, "home")
	repo := filepath.Join(base, "repo")
	exclude := filepath.Join(home, "ignore")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exclude, []byte(strings.Join(DenyPatterns(), "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(gitPath, append([]string{"-c", "core.excludesFile=" + exclude, "-c", "core.ignoreCase=false"}, args...)...)
		cmd.Dir = repo
		cmd.Env = []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "LANG=C", "PATH=" + os.Getenv("PATH")}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	git("init", "-q", ".")
	want := map[string]bool{} // path -> tracked
	for _, tt := range denyCases {
		for _, name := range []string{tt.name, mixedCase(tt.name), strings.ToUpper(tt.name), "x/y/" + tt.name} {
			p := filepath.Join(repo, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(name+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			want[name] = !tt.deny
		}
	}
	git("add", "-A")
	tracked := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(git("ls-files", "-z")), "\x00") {
		tracked[l] = true
	}
	for name, w := range want {
		if tracked[name] != w {
			t.Errorf("git add -A: %q tracked = %v, want %v", name, tracked[name], w)
		}
	}
	if t.Failed() {
		t.Logf("exclude file:\n%s", strings.Join(DenyPatterns(), "\n"))
	}
}

// TestCaseless checks the git form of a pattern.
func TestCaseless(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"*.pem":     "*.[pP][eE][mM]",
		".env.*":    ".[eE][nN][vV].*",
		"id_rsa*":   "[iI][dD]_[rR][sS][aA]*",
		"*.p12":     "*.[pP]12",
		".Docker-1": ".[dD][oO][cC][kK][eE][rR]-1",
	} {
		if got := caseless(in); got != want {
			t.Errorf("caseless(%q) = %q, want %q", in, got, want)
		}
	}
	for _, line := range []string{
		"**/[gG][hH]/[hH][oO][sS][tT][sS].[yY][mM][lL]",
		".[kK][uU][bB][eE]",
		"!.[eE][nN][vV].[eE][xX][aA][mM][pP][lL][eE]",
		"!**/[sS][eE][cC][rR][eE][tT][sS]*/**/*.[gG][oO]",
	} {
		if !slices.Contains(DenyPatterns(), line) {
			t.Errorf("DenyPatterns() has no %s line: %q", line, DenyPatterns())
		}
	}
}

// sourceExts, spelled out, starts with codeExts: every extension that frees
// a file named like a credential store frees one beneath such a directory.
func TestSourceExtsHoldCodeExts(t *testing.T) {
	t.Parallel()
	if len(sourceExts) <= len(codeExts) || !slices.Equal(sourceExts[:len(codeExts)], codeExts) {
		t.Errorf("sourceExts %q does not start with codeExts %q", sourceExts, codeExts)
	}
}
