// Package history reads commits and their diffs out of local git
// repositories without running git: objects through gitobjects; in a SHA-1
// repository refs and rename detection through go-git, in a SHA-256 one
// (which go-git v5 does not open) refs from their files.
package history

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/digest-cli/digest/internal/gitobjects"
	"github.com/go-git/go-billy/v5"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	format "github.com/go-git/go-git/v5/plumbing/format/config"
	"github.com/go-git/go-git/v5/storage"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// ErrEmpty reports a repository without a single commit: nothing to do,
// which callers treat as success rather than failure.
var ErrEmpty = errors.New("repository has no commits")

// Repo is an opened repository.
type Repo struct {
	// git is go-git's view of a SHA-1 repository, which reads its
	// references and configuration and detects renames; nil for a SHA-256
	// one, which go-git v5 does not open: digest reads that one alone.
	git     *git.Repository
	path    string
	storage *filesystem.Storage // kept open; nil when go-git chose its own
	// objects reads commits, trees and blobs without a lock; nil when it
	// cannot read this SHA-1 repository (a pack it does not understand),
	// and go-git does.
	objects *gitobjects.DB
	// hashSize is the length of object names in bytes: gitobjects.SHA1Size,
	// or gitobjects.SHA256Size.
	hashSize int
	// Of a repository go-git did not open: its configuration, and whether
	// it has a work tree (else it is bare).
	config      *format.Config
	hasWorkTree bool
	// graph holds commits' parents, trees and dates for walks; nil when the
	// repository has no commit-graph or it cannot be trusted here.
	graph *gitobjects.CommitGraph

	// gitDir is the git directory ("" when go-git chose other storage);
	// commonDir the one a linked work tree shares with the main one, where
	// objects, refs and info/attributes are.
	gitDir, commonDir string

	// mu serializes go-git's reads of objects: its storage is not safe for
	// concurrent use.
	mu     sync.Mutex
	trees  treeCache
	abbrev abbrevState

	attrsOnce sync.Once
	attrs     *diffDrivers // read on the first diff

	// tagNodes holds the commits tag graphs have read (Tags, Versions,
	// LastTag, Debuts), each with its whole history, so that a run that
	// asks for several reads each commit once; tagMu guards it and each
	// graph built over it.
	tagMu    sync.Mutex
	tagNodes *commitNodes
}

// objectCacheBytes sizes the cache of delta bases by how much history is
// packed: a sixteenth of the pack files, from 8 to 32 MiB. Over go-git's
// history (a 14 MB pack) 64 MiB is no faster than 8; over git.git's (474
// MB), whose chains are deeper, more is faster (with the cache in the Go
// heap a dry run took 40.3 s with 8 MiB, 35.7 s with 16, 32.6 s with 32).
//
// The cache lives outside the Go heap, beside what a memory limit bounds
// (GOMEMLIMIT, or digest's default, see package memlimit), and takes at
// most a quarter of the limit. Under the default 72 MiB that is 18 MiB:
// git.git's dry run then takes 35-37 s and peaks at 140-144 MB.
func objectCacheBytes(gitDir billy.Filesystem) cache.FileSize {
	var packed int64
	packs, _ := gitDir.ReadDir("objects/pack")
	for _, p := range packs {
		if strings.HasSuffix(p.Name(), ".pack") {
			packed += p.Size()
		}
	}
	size := min(max(packed/16, 8<<20), 32<<20)
	if limit := debug.SetMemoryLimit(-1); limit < math.MaxInt64 {
		size = min(size, limit/4)
	}
	return cache.FileSize(size)
}

// largeObjectBytes keeps bigger blobs out of the object cache and unread
// until asked: diffs leave out files over 1 MiB by their size alone. Not
// lower: go-git streams a deferred object's deltas through repeated
// discards, which made blobs just over a 256 KiB threshold a third of
// digest's time over git.git's history.
const largeObjectBytes = 1 << 20

// Open opens the repository at or above path (work tree or bare).
func Open(path string) (*Repo, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	info, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("%s: no such directory. Try: a path to a git repository", path)
	}
	if !info.IsDir() {
		return nil, notADirectory(path, abs, info.Mode())
	}
	// A bare repository has no .git to detect, so try the path itself first.
	r, err := git.PlainOpenWithOptions(abs, &git.PlainOpenOptions{EnableDotGitCommonDir: true})
	if errors.Is(err, git.ErrRepositoryNotExists) {
		r, err = git.PlainOpenWithOptions(abs, &git.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true})
	}
	if errors.Is(err, git.ErrRepositoryNotExists) {
		return nil, fmt.Errorf("%s is not a git repository. Try: a path inside a git work tree or a bare repository", path)
	}
	if errors.Is(err, git.ErrUnknownExtension) && strings.Contains(err.Error(), "objectformat") {
		// go-git (v5) refuses any object format but SHA-1 as it opens a
		// repository: digest reads the others alone.
		return openWithoutGoGit(path, abs)
	}
	if err != nil {
		return nil, fmt.Errorf("open repository %s: %w. Try: git fsck in it", path, err)
	}
	root := repoRoot(r, abs)
	st, ok := r.Storer.(*filesystem.Storage)
	if !ok {
		return &Repo{git: r, path: root, hashSize: gitobjects.SHA1Size}, nil
	}
	gitDir := commonDir(st.Filesystem().Root())
	cacheBytes := objectCacheBytes(st.Filesystem())
	// gitobjects reads what a history needs; go-git still resolves refs and
	// revisions and detects renames, which needs little of its cache then.
	// What gitobjects cannot read (a pack it does not understand) go-git
	// reads instead, taking turns.
	var objects *gitobjects.DB
	var graph *gitobjects.CommitGraph
	if cfg, err := r.Config(); err == nil {
		if objects, err = gitobjects.Open(filepath.Join(gitDir, "objects"), int(cacheBytes)); err == nil {
			cacheBytes = 1 << 20
			graph = openCommitGraph(gitDir, cfg.Raw)
		}
	}
	// go-git opens and closes a pack file for every object it reads unless
	// told to keep descriptors: over a history that is most of the time.
	// Reopen the same git directory (found above, worktrees and all) that way.
	kept := filesystem.NewStorageWithOptions(st.Filesystem(), cache.NewObjectLRU(cacheBytes),
		filesystem.Options{KeepDescriptors: true, LargeObjectThreshold: largeObjectBytes})
	var wt billy.Filesystem
	if w, err := r.Worktree(); err == nil {
		wt = w.Filesystem
	}
	own := st.Filesystem().Root()
	var store storage.Storer = kept
	if objects != nil {
		store = readThroughStorage{Storage: kept, objects: objects}
	}
	if again, err := git.Open(store, wt); err == nil {
		return &Repo{git: again, path: root, storage: kept, objects: objects, graph: graph, gitDir: own, commonDir: gitDir, hashSize: gitobjects.SHA1Size}, nil
	}
	return &Repo{git: r, path: root, objects: objects, graph: graph, gitDir: own, commonDir: gitDir, hashSize: gitobjects.SHA1Size}, nil
}

// openCommitGraph opens the repository's commit-graph where git itself
// would read it: not when core.commitGraph is false, nor in a shallow clone
// or one with grafts, whose commits' parents differ from those the graph
// holds. A graph that cannot be read is no error: commits are read from
// their objects instead, as without one.
func openCommitGraph(common string, cfg *format.Config) *gitobjects.CommitGraph {
	if cfg != nil {
		switch strings.ToLower(cfg.Section("core").Option("commitGraph")) {
		case "false", "no", "off", "0":
			return nil
		}
	}
	objects := filepath.Join(common, "objects")
	for _, p := range []string{filepath.Join(common, "shallow"), filepath.Join(objects, "info", "grafts")} {
		if _, err := os.Stat(p); err == nil {
			return nil
		}
	}
	g, err := gitobjects.OpenCommitGraph(objects)
	if err != nil {
		return nil
	}
	return g
}

// commonDir is the git directory that holds objects and info/: a linked
// work tree's git directory names the main one in its "commondir" file.
func commonDir(gitDir string) string {
	if b, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		common := strings.TrimSpace(string(b))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitDir, common)
		}
		return common
	}
	return gitDir
}

// gitDirs returns the git directory and the common one.
func (r *Repo) gitDirs() (gitDir, commonDir string) { return r.gitDir, r.commonDir }

// Close releases the pack files kept open.
func (r *Repo) Close() error {
	var errs []error
	if r.objects != nil {
		errs = append(errs, r.objects.Close())
	}
	if r.graph != nil {
		errs = append(errs, r.graph.Close())
	}
	if r.storage != nil {
		errs = append(errs, r.storage.Close())
	}
	r.tagMu.Lock()
	r.tagNodes = nil
	r.tagMu.Unlock()
	return errors.Join(errs...)
}

// repoRoot names the repository by its work tree, or by its git directory
// when bare, whatever subdirectory the user pointed at.
func repoRoot(r *git.Repository, fallback string) string {
	if wt, err := r.Worktree(); err == nil {
		return wt.Filesystem.Root()
	}
	return fallback
}

// InWorkTree returns dir, an absolute directory, relative to the root of
// the repository's work tree, with slashes ("" for the root itself), and
// whether dir lies in the work tree at all: pathspecs given there are
// relative to it, as git takes them. A bare repository has no work tree.
func (r *Repo) InWorkTree(dir string) (string, bool) {
	if !r.workTree() {
		return "", false
	}
	root, err := filepath.EvalSymlinks(r.path)
	if err != nil {
		return "", false
	}
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		dir = d
	}
	rel, err := filepath.Rel(root, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	rel = filepath.ToSlash(rel)
	if rel == ".git" || strings.HasPrefix(rel, ".git/") {
		return "", false
	}
	if rel == "." {
		rel = ""
	}
	return rel, true
}

// notADirectory says what path is instead of a repository, and points to
// the repository holding it only when there is one: a file in a work tree
// is most likely meant as a pathspec.
func notADirectory(path, abs string, mode os.FileMode) error {
	kind := "a file"
	switch {
	case mode&os.ModeNamedPipe != 0:
		kind = "a named pipe"
	case mode&os.ModeSocket != 0:
		kind = "a socket"
	case mode&os.ModeDevice != 0:
		kind = "a device"
	}
	dir := filepath.Dir(path)
	if _, err := git.PlainOpenWithOptions(filepath.Dir(abs), &git.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true}); errors.Is(err, git.ErrRepositoryNotExists) {
		return fmt.Errorf("%s is %s, not a repository, and %s is in no git repository. Try: a path to a git repository", path, kind, dir)
	}
	return fmt.Errorf("%s is %s, not a repository. Try: the directory of its repository (%s), and the file as a pathspec after --", path, kind, dir)
}

// Path is the repository's absolute root.
func (r *Repo) Path() string { return r.path }

// Name is a short human name for the repository: its directory's base name
// ("api" for api.git), or that of the directory holding it when it was
// opened by its .git directory, which git reads as a bare repository.
func (r *Repo) Name() string {
	base := filepath.Base(r.path)
	if base == ".git" {
		base = filepath.Base(filepath.Dir(r.path))
	}
	return strings.TrimSuffix(base, ".git")
}

// Head returns the commit HEAD points to, or ErrEmpty when HEAD is unborn.
func (r *Repo) Head() (string, error) {
	h, err := r.head()
	return h.String(), err
}

func (r *Repo) head() (gitobjects.ID, error) {
	if r.git == nil {
		h, _, ok, err := r.resolveRef("HEAD")
		if err != nil {
			return gitobjects.ID{}, fmt.Errorf("%s: read HEAD: %w", r.path, err)
		}
		if !ok {
			return gitobjects.ID{}, ErrEmpty
		}
		return h, nil
	}
	ref, err := r.git.Head()
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return gitobjects.ID{}, ErrEmpty
	}
	if err != nil {
		return gitobjects.ID{}, fmt.Errorf("%s: read HEAD: %w", r.path, err)
	}
	return gitobjects.IDFromHash(ref.Hash()), nil
}

// resolveRef follows a reference through symbolic ones to an object, and
// names the last reference followed; ok is false when it ends at none (an
// unborn branch).
func (r *Repo) resolveRef(name string) (gitobjects.ID, string, bool, error) {
	for range 10 {
		e, ok, err := r.reference(name)
		if err != nil || !ok {
			return gitobjects.ID{}, name, false, err
		}
		if e.target == "" {
			return e.hash, name, true, nil
		}
		name = e.target
	}
	return gitobjects.ID{}, name, false, fmt.Errorf("reference %s: symbolic references nested too deep", name)
}

// RootCommit follows first parents from start to a commit without parents:
// the stable identity of a history, shared by every clone of it. known may
// name the root early for a commit already seen, sparing the walk; it is
// asked about the first knownChecks commits only, since an unknown history
// stays unknown however far back one asks.
func (r *Repo) RootCommit(ctx context.Context, start string, known func(hash string) (root string, ok bool, err error)) (string, error) {
	const knownChecks = 64
	h := gitobjects.MustParseID(start)
	for step := 0; ; step++ {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		if known != nil && step < knownChecks {
			if root, ok, err := known(h.String()); err != nil || ok {
				return root, err
			}
		}
		next, ok, err := r.firstParent(h)
		if err != nil {
			return "", err
		}
		if !ok {
			return h.String(), nil
		}
		h = next
	}
}

// firstParent returns h's first parent, or false for a root commit or one
// at a shallow clone's boundary. The commit-graph answers without reading
// the commit: git.git's first-parent line is 24,000 commits long.
func (r *Repo) firstParent(h gitobjects.ID) (gitobjects.ID, bool, error) {
	if r.graph != nil {
		if pos, ok := r.graph.Find(h); ok {
			c, err := r.graph.Commit(pos, nil)
			if err == nil && len(c.Parents) == 0 {
				return gitobjects.ID{}, false, nil
			}
			if err == nil {
				if parent, err := r.graph.Hash(c.Parents[0]); err == nil {
					return parent, true, nil
				}
			}
			// Damaged: the object answers instead.
		}
	}
	obj, err := r.readObject(h, plumbing.CommitObject, 0)
	var parents []gitobjects.ID
	if err == nil {
		// The header alone: decoding whole commits made this walk 40% slower.
		_, parents, _, err = parseCommitHeader(obj.Data, nil)
	}
	if err != nil {
		return gitobjects.ID{}, false, fmt.Errorf("%s: read commit %s: %w. Try: git fsck, to see what is damaged", r.path, h, err)
	}
	if len(parents) == 0 {
		return gitobjects.ID{}, false, nil
	}
	next := parents[0]
	// A shallow clone's boundary commit names a parent it does not have:
	// the boundary is as far back as this history goes here.
	if ok, _ := r.hasCommit(next); !ok {
		return gitobjects.ID{}, false, nil
	}
	return next, true, nil
}

// Commit is one commit's metadata, as printed in reports.
type Commit struct {
	Hash        string
	AuthorName  string
	AuthorEmail string
	AuthorDate  time.Time
	CommitDate  time.Time
	// Boundary is set when the commit's first parent is not in the
	// repository, as at the edge of a shallow clone: what the commit changed
	// cannot be known, only what its tree holds.
	Boundary bool
	// Parents is how many parents the commit has: more than one for a
	// merge, which a FirstParent walk selects.
	Parents int
	Subject string
	Message string // the whole message, trimmed

	tree       gitobjects.ID
	parent     gitobjects.ID // the first; zero for a root commit
	merged     gitobjects.ID // the second, of a merge; zero for others
	parentTree gitobjects.ID // the first parent's tree, when the walk read it
}

// MergedAuthor is who wrote the branch a merge commit merged: the author
// of its second parent, the branch's last commit. A forge's merge of a
// pull request is committed by whoever pressed the button; the request's
// author wrote the branch. ok is false for a commit that merged nothing,
// or whose second parent lies beyond a shallow clone's edge.
func (r *Repo) MergedAuthor(c Commit) (name, email string, ok bool) {
	if c.merged.IsZero() {
		return "", "", false
	}
	if have, _ := r.hasCommit(c.merged); !have {
		return "", "", false
	}
	dc, err := r.commitObject(c.merged)
	if err != nil {
		return "", "", false
	}
	text := decoder(dc.meta)
	return strings.ToValidUTF8(text(dc.meta.Author.Name), "\uFFFD"), strings.ToValidUTF8(text(dc.meta.Author.Email), "\uFFFD"), true
}

func newCommit(dc *decodedCommit) Commit {
	c := dc.meta
	text := decoder(c)
	msg := strings.TrimSpace(text(c.Message))
	subject, _, _ := strings.Cut(msg, "\n")
	var parent, merged gitobjects.ID
	if len(dc.parents) > 0 {
		parent = dc.parents[0]
	}
	if len(dc.parents) > 1 {
		merged = dc.parents[1]
	}
	return Commit{
		Hash:        dc.hash.String(),
		AuthorName:  strings.ToValidUTF8(text(c.Author.Name), "\uFFFD"),
		AuthorEmail: strings.ToValidUTF8(text(c.Author.Email), "\uFFFD"),
		AuthorDate:  c.Author.When,
		CommitDate:  c.Committer.When,
		Parents:     len(dc.parents),
		// A copy: a slice of the message would keep all of it alive.
		Subject: strings.Clone(strings.ToValidUTF8(strings.TrimSpace(subject), "\uFFFD")),
		Message: strings.ToValidUTF8(msg, "\uFFFD"),
		tree:    dc.tree,
		parent:  parent,
		merged:  merged,
	}
}

// PromisorRemote names the remote a partial clone (git clone
// --filter=blob:none, as CI checkouts often are) fetches its missing
// objects from, or "" for a complete repository. Blobs such a clone lacks
// are not damage: they were never fetched, and digest does not fetch.
func (r *Repo) PromisorRemote() string {
	raw := r.localConfig()
	if raw == nil {
		return ""
	}
	if name := raw.Section("extensions").Option("partialclone"); name != "" {
		return name
	}
	for _, remote := range raw.Section("remote").Subsections {
		if strings.EqualFold(remote.Option("promisor"), "true") {
			return remote.Name
		}
	}
	return ""
}

// localConfig is the repository's own configuration file, nil when it
// cannot be read.
func (r *Repo) localConfig() *format.Config {
	if r.git == nil {
		return r.config
	}
	cfg, err := r.git.Config()
	if err != nil {
		return nil
	}
	return cfg.Raw
}

// workTree reports whether the repository has a work tree (is not bare).
func (r *Repo) workTree() bool {
	if r.git == nil {
		return r.hasWorkTree
	}
	_, err := r.git.Worktree()
	return err == nil
}

// HashSize is the length of the repository's object names in bytes: 20
// for SHA-1, 32 for SHA-256.
func (r *Repo) HashSize() int { return r.hashSize }
