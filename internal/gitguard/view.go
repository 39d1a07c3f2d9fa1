package gitguard

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// ConfigFile is a repository configuration file as a guarded git must see
// it: the file at Path, inside the workspace, shown with Data in its place
// (sandbox.Cover).
type ConfigFile struct {
	Path string
	Data []byte
}

// maxConfigFile bounds a configuration or gitfile read by ConfigView.
const maxConfigFile = 1 << 20

// ConfigView returns, for workspace (an absolute path), the sanitized copy
// (sanitizeConfig) of every file there that a guarded git command may read
// as a repository's configuration: the workspace's own repository, its
// submodules (git runs git in each to ask whether it is modified) and any
// other repository a .git entry leads to. It returns an error, and the
// call must be refused, when it cannot vouch for what git would read:
//
//   - A .git entry (directory, symbolic link or "gitdir:" file, at any
//     depth) or a commondir file leads to a git directory outside the
//     workspace, or inside it but not within a directory named .git.
//     Git never writes a path with a .git component when it checks files
//     out, so within .git nothing a command writes can become, in the
//     middle of that command, a configuration that was not covered.
//   - A configuration file is a symbolic link out of such a directory, is
//     neither a regular file nor a directory, does not parse, is larger
//     than 1 MiB, or uses a format extension not known here.
//
// The configuration files are config in every directory within a .git
// directory that has HEAD, commondir, objects or refs (git reads it in a
// common directory, which has objects and refs), and config.worktree in
// every one that has HEAD or commondir (a git directory; git reads it
// only with extensions.worktreeConfig). This search does not depend on
// how git would resolve a .git entry, so it holds for a file git reaches
// in a way this package does not model, as long as it lies within .git.
//
// The view is taken before the sandbox starts. A process running beside
// the guarded command (another approved command in another chat) could
// still change the workspace in between, or replace a covered file, which
// detaches its cover; nothing in the sandbox of the guarded command can.
func ConfigView(workspace string) ([]ConfigFile, error) {
	resolved, err := filepath.EvalSymlinks(workspace)
	if err != nil {
		return nil, fmt.Errorf("gitguard: resolve the workspace: %w", err)
	}
	v := &viewer{ws: filepath.Clean(workspace), resolved: resolved, seen: map[string]bool{}}
	if err := v.visit(v.ws, false); err != nil {
		return nil, err
	}
	return v.files, nil
}

type viewer struct {
	ws       string // the workspace as the sandbox shows it
	resolved string // the workspace with symbolic links resolved
	files    []ConfigFile
	seen     map[string]bool
}

// visit looks at one directory of the workspace and everything below it,
// without following symbolic links (what they lead to inside the workspace
// is visited where it is). inGit says whether dir is, or is within, a
// directory named .git.
func (v *viewer) visit(dir string, inGit bool) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("gitguard: read %s: %w", dir, err)
	}
	has := map[string]bool{}
	for _, e := range ents {
		has[e.Name()] = true
	}
	gitdirLike := has["HEAD"] || has["commondir"]
	if inGit && has["config"] && (gitdirLike || has["objects"] || has["refs"]) {
		if err := v.add(filepath.Join(dir, "config")); err != nil {
			return err
		}
	}
	if inGit && has["config.worktree"] && gitdirLike {
		if err := v.add(filepath.Join(dir, "config.worktree")); err != nil {
			return err
		}
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		if e.Name() == ".git" {
			if err := v.checkDotGit(p); err != nil {
				return err
			}
		}
		if e.IsDir() {
			if err := v.visit(p, inGit || isDotGit(e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// isDotGit reports whether name is ".git" as git's path checks see it
// (case-insensitively): no checked-out path has such a component.
func isDotGit(name string) bool { return strings.EqualFold(name, ".git") }

// add covers the configuration file at path, or the file a symbolic link
// there leads to.
func (v *viewer) add(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return fmt.Errorf("gitguard: %w", err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, err := filepath.EvalSymlinks(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil // git reads nothing there
		}
		if err != nil {
			return fmt.Errorf("gitguard: resolve %s: %w", path, err)
		}
		if path, err = v.inGitDir(target); err != nil {
			return fmt.Errorf("gitguard: the configuration %s is a symbolic link to %s: %w", v.show(path), target, err)
		}
		if fi, err = os.Lstat(path); err != nil {
			return fmt.Errorf("gitguard: %w", err)
		}
	}
	switch {
	case fi.IsDir():
		return nil // git cannot read a directory as configuration
	case !fi.Mode().IsRegular():
		return fmt.Errorf("gitguard: the configuration %s is not a regular file", v.show(path))
	case v.seen[path]:
		return nil
	}
	data, err := readSmall(path)
	if err != nil {
		return err
	}
	clean, err := sanitizeConfig(data)
	if err != nil {
		return fmt.Errorf("gitguard: the configuration %s: %w", v.show(path), err)
	}
	v.seen[path] = true
	v.files = append(v.files, ConfigFile{Path: path, Data: clean})
	return nil
}

// checkDotGit refuses a .git entry that leads to a git directory, or a
// common directory, outside a .git directory of the workspace. It follows
// git's setup: a directory (or a symbolic link to one) is the git
// directory; a regular file is a gitfile, "gitdir: <path>", relative to
// the file's directory; the git directory's commondir file names the
// common directory, relative to the git directory. What does not exist,
// or is not a git directory's shape, git refuses to use.
func (v *viewer) checkDotGit(entry string) error {
	fi, err := os.Stat(entry)
	if err != nil {
		return nil // a dangling link: git finds no repository there
	}
	gitdir := entry
	switch {
	case fi.IsDir():
	case fi.Mode().IsRegular():
		data, err := readSmall(entry)
		if err != nil {
			return err
		}
		target, ok := bytes.CutPrefix(data, []byte("gitdir: "))
		if !ok {
			return nil // git refuses it as a gitfile
		}
		if bytes.IndexByte(target, 0) >= 0 {
			return fmt.Errorf("gitguard: the gitfile %s holds a NUL byte", v.show(entry))
		}
		target = bytes.TrimRight(target, "\r\n")
		gitdir = string(target)
		if !filepath.IsAbs(gitdir) {
			gitdir = filepath.Dir(entry) + "/" + gitdir // resolved as the OS does, not cleaned
		}
	default:
		return nil
	}
	resolved, err := filepath.EvalSymlinks(gitdir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("gitguard: resolve %s: %w", gitdir, err)
	}
	if _, err := v.inGitDir(resolved); err != nil {
		return fmt.Errorf("gitguard: %s leads to the git directory %s: %w", v.show(entry), resolved, err)
	}
	data, err := readSmall(filepath.Join(resolved, "commondir"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	common := string(bytes.TrimRight(data, "\r\n"))
	if !filepath.IsAbs(common) {
		common = resolved + "/" + common
	}
	creal, err := filepath.EvalSymlinks(common)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("gitguard: resolve %s: %w", common, err)
	}
	if _, err := v.inGitDir(creal); err != nil {
		return fmt.Errorf("gitguard: the git directory %s has its common directory at %s: %w", resolved, creal, err)
	}
	return nil
}

// inGitDir maps path, with its symbolic links resolved, to the workspace
// as the sandbox shows it, if it lies within a directory named .git of the
// workspace.
func (v *viewer) inGitDir(path string) (string, error) {
	rel, err := filepath.Rel(v.resolved, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") || filepath.IsAbs(rel) {
		return "", errors.New("it is outside the workspace")
	}
	for _, part := range strings.Split(rel, "/") {
		if isDotGit(part) {
			return filepath.Join(v.ws, rel), nil
		}
	}
	return "", errors.New("it is not within a .git directory, where a checkout could write a configuration")
}

// show names path relative to the workspace, for messages.
func (v *viewer) show(path string) string {
	if rel, err := filepath.Rel(v.ws, path); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return path
}

// readSmall reads the regular file at path (following symbolic links), up
// to maxConfigFile bytes. It never blocks on a FIFO.
func readSmall(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("gitguard: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("gitguard: %s is not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxConfigFile+1))
	if err != nil {
		return nil, fmt.Errorf("gitguard: read %s: %w", path, err)
	}
	if len(data) > maxConfigFile {
		return nil, fmt.Errorf("gitguard: %s is larger than %d bytes", path, maxConfigFile)
	}
	return data, nil
}
