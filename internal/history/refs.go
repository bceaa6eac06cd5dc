package history

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/digest-cli/digest/internal/gitobjects"
)

// refEntry is one reference as stored: an object's name, or for a symbolic
// reference the name of the reference it points to.
type refEntry struct {
	name   string
	hash   gitobjects.ID
	target string // set for a symbolic reference, hash then zero
}

// reference reads one reference by its full name without following it;
// ok is false when there is none. go-git reads a SHA-1 repository's
// references; a SHA-256 one's, which go-git will not open, are read from
// their files here.
func (r *Repo) reference(name string) (refEntry, bool, error) {
	if r.git == nil {
		return fileRefs{gitDir: r.gitDir, commonDir: r.commonDir}.read(name)
	}
	r.mu.Lock()
	ref, err := r.git.Storer.Reference(plumbing.ReferenceName(name))
	r.mu.Unlock()
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return refEntry{}, false, nil
	}
	if err != nil {
		return refEntry{}, false, err
	}
	return fromGoGit(ref), true, nil
}

// references lists every reference under refs/, unfollowed, in no order.
func (r *Repo) references() ([]refEntry, error) {
	if r.git == nil {
		return fileRefs{gitDir: r.gitDir, commonDir: r.commonDir}.list()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	iter, err := r.git.Storer.IterReferences()
	if err != nil {
		return nil, err
	}
	var refs []refEntry
	err = iter.ForEach(func(ref *plumbing.Reference) error {
		if strings.HasPrefix(ref.Name().String(), "refs/") {
			refs = append(refs, fromGoGit(ref))
		}
		return nil
	})
	return refs, err
}

func fromGoGit(ref *plumbing.Reference) refEntry {
	if ref.Type() == plumbing.SymbolicReference {
		return refEntry{name: ref.Name().String(), target: ref.Target().String()}
	}
	return refEntry{name: ref.Name().String(), hash: gitobjects.IDFromHash(ref.Hash())}
}

// fileRefs reads references from the git directory's files, as git's
// files backend stores them: HEAD and other pseudo-references in the work
// tree's own git directory, refs/ loose in the common one or else in its
// packed-refs file.
type fileRefs struct{ gitDir, commonDir string }

func (f fileRefs) read(name string) (refEntry, bool, error) {
	if !validRefName(name) {
		return refEntry{}, false, nil
	}
	dir := f.commonDir
	if !strings.HasPrefix(name, "refs/") || perWorktreeRef(name) {
		dir = f.gitDir
	}
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
	if err == nil {
		e, ok := parseRefValue(name, string(b))
		if !ok {
			return refEntry{}, false, fmt.Errorf("reference %s: %q is neither an object name nor \"ref: NAME\". Try: git show-ref", name, strings.TrimSpace(string(b)))
		}
		return e, true, nil
	}
	// A directory where the name would be (refs/heads, asked as a name) is
	// no reference either.
	if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.EISDIR) {
		return refEntry{}, false, fmt.Errorf("read reference %s: %w", name, err)
	}
	if !strings.HasPrefix(name, "refs/") {
		return refEntry{}, false, nil
	}
	packed, err := f.packed()
	if err != nil {
		return refEntry{}, false, err
	}
	for _, e := range packed {
		if e.name == name {
			return e, true, nil
		}
	}
	return refEntry{}, false, nil
}

func (f fileRefs) list() ([]refEntry, error) {
	byName := map[string]refEntry{}
	packed, err := f.packed()
	if err != nil {
		return nil, err
	}
	for _, e := range packed {
		byName[e.name] = e
	}
	// Loose references override packed ones of the same name.
	root := filepath.Join(f.commonDir, "refs")
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(f.commonDir, path)
		if err != nil {
			return err
		}
		name := filepath.ToSlash(rel)
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if e, ok := parseRefValue(name, string(b)); ok {
			byName[name] = e
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list references: %w", err)
	}
	refs := make([]refEntry, 0, len(byName))
	for _, e := range byName {
		refs = append(refs, e)
	}
	slices.SortFunc(refs, func(a, b refEntry) int { return strings.Compare(a.name, b.name) })
	return refs, nil
}

// packed reads the packed-refs file: "HASH NAME" lines, each perhaps
// followed by "^HASH", the tag's peeled object, which is left out here.
func (f fileRefs) packed() ([]refEntry, error) {
	file, err := os.Open(filepath.Join(f.commonDir, "packed-refs"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read packed-refs: %w", err)
	}
	defer file.Close()
	var refs []refEntry
	sc := bufio.NewScanner(file)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' || line[0] == '^' {
			continue
		}
		hash, name, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		if h, err := gitobjects.ParseID(hash); err == nil && validRefName(name) {
			refs = append(refs, refEntry{name: name, hash: h})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read packed-refs: %w", err)
	}
	return refs, nil
}

// parseRefValue reads a loose reference file's content.
func parseRefValue(name, content string) (refEntry, bool) {
	line, _, _ := strings.Cut(content, "\n")
	line = strings.TrimSpace(line)
	if target, ok := strings.CutPrefix(line, "ref:"); ok {
		target = strings.TrimSpace(target)
		return refEntry{name: name, target: target}, target != ""
	}
	h, err := gitobjects.ParseID(line)
	return refEntry{name: name, hash: h}, err == nil
}

// perWorktreeRef names the references each work tree keeps for itself, in
// its own git directory, as git's files backend does.
func perWorktreeRef(name string) bool {
	for _, p := range []string{"refs/worktree/", "refs/bisect/", "refs/rewritten/"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// validRefName keeps a name read from the command line or a file inside
// the git directory.
func validRefName(name string) bool {
	if name == "" || strings.HasPrefix(name, "/") || strings.Contains(name, "\\") {
		return false
	}
	for _, part := range strings.Split(name, "/") {
		if part == "" || part == "." || part == ".." {
			return false
		}
	}
	return true
}

// peel follows annotated tags from h down to the commit they name, with
// the date of the first annotated tag met (zero for none): what go-git's
// object decoding does for a SHA-1 repository, for a SHA-256 one.
func (r *Repo) peel(h gitobjects.ID) (gitobjects.ID, time.Time, error) {
	var date time.Time
	for range 16 {
		obj, err := r.readObject(h, plumbing.AnyObject, 1)
		if err != nil {
			return gitobjects.ID{}, date, err
		}
		switch obj.Type {
		case plumbing.CommitObject:
			return h, date, nil
		case plumbing.TagObject:
			if obj, err = r.readObject(h, plumbing.TagObject, 0); err != nil {
				return gitobjects.ID{}, date, err
			}
			target, tagger, err := parseTagHeader(obj.Data)
			if err != nil {
				return gitobjects.ID{}, date, fmt.Errorf("tag %s: %w. Try: git fsck", h, err)
			}
			if date.IsZero() {
				date = tagger
			}
			h = target
		default:
			return gitobjects.ID{}, date, fmt.Errorf("%s is a %s, not a commit", h, obj.Type)
		}
	}
	return gitobjects.ID{}, date, fmt.Errorf("%s: tag chain too deep", h)
}

// parseTagHeader reads a tag's object line and its tagger's date (zero
// when it has no tagger line, as old tags do not).
func parseTagHeader(data []byte) (gitobjects.ID, time.Time, error) {
	var target gitobjects.ID
	var date time.Time
	for len(data) > 0 {
		line, rest, _ := bytes.Cut(data, []byte("\n"))
		data = rest
		if len(line) == 0 {
			break // the message follows
		}
		if v, ok := bytes.CutPrefix(line, []byte("object ")); ok {
			h, err := gitobjects.ParseID(string(v))
			if err != nil {
				return target, date, err
			}
			target = h
		}
		if v, ok := bytes.CutPrefix(line, []byte("tagger ")); ok {
			var sig object.Signature
			sig.Decode(v)
			date = sig.When
		}
	}
	if target.IsZero() {
		return target, date, errors.New("no object line")
	}
	return target, date, nil
}
