package history

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-billy/v5/osfs"
	format "github.com/go-git/go-git/v5/plumbing/format/config"

	"github.com/digest-cli/digest/internal/gitobjects"
)

// openWithoutGoGit opens a repository go-git refuses for its object format
// (a SHA-256 one): the git directory found as git finds it, references
// read from their files, objects by gitobjects.
func openWithoutGoGit(path, abs string) (*Repo, error) {
	gitDir, workTree, ok := findGitDir(abs)
	if !ok {
		return nil, fmt.Errorf("%s is not a git repository. Try: a path inside a git work tree or a bare repository", path)
	}
	common := commonDir(gitDir)
	b, err := os.ReadFile(filepath.Join(common, "config"))
	if err != nil {
		return nil, fmt.Errorf("open repository %s: %w. Try: git fsck in it", path, err)
	}
	cfg := format.New()
	if err := format.NewDecoder(bytes.NewReader(b)).Decode(cfg); err != nil {
		return nil, fmt.Errorf("open repository %s: %s: %w. Try: git config --list there, to see what is malformed", path, filepath.Join(common, "config"), err)
	}
	var hashSize int
	switch name := strings.ToLower(cfg.Section("extensions").Option("objectformat")); name {
	case "sha256":
		hashSize = gitobjects.SHA256Size
	case "", "sha1":
		hashSize = gitobjects.SHA1Size
	default:
		return nil, fmt.Errorf("%s: object format %q (extensions.objectformat) is neither sha1 nor sha256. Try: git log -p there", path, name)
	}
	cacheBytes := objectCacheBytes(osfs.New(common))
	objects, err := gitobjects.OpenFormat(filepath.Join(common, "objects"), int(cacheBytes), hashSize)
	if err != nil {
		return nil, fmt.Errorf("open repository %s: %w. Try: git fsck in it", path, err)
	}
	root := workTree
	if root == "" {
		root = gitDir
	}
	return &Repo{
		path:        root,
		objects:     objects,
		graph:       openCommitGraph(common, cfg),
		hashSize:    hashSize,
		config:      cfg,
		hasWorkTree: workTree != "",
		gitDir:      gitDir,
		commonDir:   common,
	}, nil
}

// findGitDir finds the git directory for a path as git does: a ".git"
// directory (or a ".git" file naming one, in a linked work tree or a
// submodule) in the path or a directory above it, or the path itself
// when it is a bare repository. workTree is "" for a bare repository.
func findGitDir(abs string) (gitDir, workTree string, ok bool) {
	if isGitDir(abs) && filepath.Base(abs) != ".git" {
		return abs, "", true
	}
	for dir := abs; ; dir = filepath.Dir(dir) {
		dotGit := filepath.Join(dir, ".git")
		if info, err := os.Stat(dotGit); err == nil {
			if info.IsDir() && isGitDir(dotGit) {
				return dotGit, dir, true
			}
			if info.Mode().IsRegular() {
				if target, ok := readGitFile(dotGit); ok && isGitDir(target) {
					return target, dir, true
				}
			}
		}
		if filepath.Dir(dir) == dir {
			return "", "", false
		}
	}
}

// readGitFile reads a ".git" file: "gitdir: PATH", relative to the file.
func readGitFile(name string) (string, bool) {
	b, err := os.ReadFile(name)
	if err != nil {
		return "", false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	target, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	if !ok {
		return "", false
	}
	target = strings.TrimSpace(target)
	if !filepath.IsAbs(target) {
		target = filepath.Join(filepath.Dir(name), target)
	}
	return target, true
}

// isGitDir is git's test of a git directory: HEAD, and objects and refs
// where the common directory is.
func isGitDir(dir string) bool {
	if info, err := os.Stat(filepath.Join(dir, "HEAD")); err != nil || !info.Mode().IsRegular() {
		return false
	}
	common := commonDir(dir)
	for _, sub := range []string{"objects", "refs"} {
		if info, err := os.Stat(filepath.Join(common, sub)); err != nil || !info.IsDir() {
			return false
		}
	}
	return true
}
