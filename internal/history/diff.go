package history

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/digest-cli/digest/internal/gitobjects"
	"github.com/digest-cli/digest/internal/linediff"
	"github.com/digest-cli/digest/internal/offheap"
	"github.com/digest-cli/digest/internal/userdiff"
)

// DiffOptions shapes a commit's diff.
type DiffOptions struct {
	Renames bool
	Paths   Pathspec
	// SkipPath names why a path is left out of the text (a lockfile, say)
	// before its blobs are read, or returns "" to keep it.
	SkipPath func(path string) string
	// MaxFileBytes leaves out blobs larger than this without reading them;
	// such a diff would be cut to a few thousand tokens anyway.
	MaxFileBytes int64
	// MaxTextBytes stops building text once the commit's files hold this
	// much: a reader of the first MaxTextBytes never sees the rest. Later
	// files still carry their line counts, with TextOmitted set. 0: no bound.
	MaxTextBytes int
}

// Skip reasons that history itself decides, from a file's content.
const (
	SkipBinary    = "binary"
	SkipLarge     = "large"
	SkipMissing   = "missing object"
	SkipGenerated = "generated"
)

// generatedMarker is the Go convention (also used by many other generators)
// for files no human edits: https://go.dev/s/generatedcode.
var generatedMarker = regexp.MustCompile(`(?m)^(//|#) Code generated .* DO NOT EDIT\.$`)

// FileDiff is one changed file.
type FileDiff struct {
	Path    string // path after the change ("" never: deletions keep the old path)
	OldPath string // path before; differs from Path only for renames
	Status  byte   // 'A' added, 'M' modified, 'D' deleted, 'R' renamed
	Skip    string // why the text is absent, or ""
	Added   int
	Removed int
	Text    string // git-style unified diff of this file, valid UTF-8
	// TextOmitted is set when Text was not built because the files before
	// it passed DiffOptions.MaxTextBytes.
	TextOmitted bool
}

// Diff is a commit's change against its first parent.
type Diff struct {
	Files    []FileDiff
	Warnings []string // objects that could not be read; the rest is still diffed
}

// changes lists what c changed against its first parent (or the empty tree).
func (r *Repo) changes(ctx context.Context, c Commit, renames bool) ([]change, error) {
	parentTree := c.parentTree // zero diffs the root commit against the empty tree
	if parentTree.IsZero() && !c.parent.IsZero() {
		parent, err := r.commitObject(c.parent)
		if err != nil && !errors.Is(err, plumbing.ErrObjectNotFound) {
			return nil, fmt.Errorf("%s: commit %s: read parent: %w", r.path, c.Hash, err)
		}
		if parent != nil {
			parentTree = parent.tree
		}
	}
	diff := r.diffTrees
	if renames {
		diff = r.renamedChanges
	}
	changes, err := diff(ctx, parentTree, c.tree)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		return nil, fmt.Errorf("%s: commit %s: diff trees: %w", r.path, c.Hash, err)
	}
	return changes, nil
}

// Diff builds the commit's diff against its first parent (the empty tree for
// a root commit). Files are in path order, as git prints them. It is safe
// for concurrent use, and runs in parallel (but for go-git's reads of a
// repository gitobjects cannot read, which take turns).
func (r *Repo) Diff(ctx context.Context, c Commit, opts DiffOptions) (Diff, error) {
	changes, err := r.changes(ctx, c, opts.Renames)
	if err != nil {
		return Diff{}, err
	}
	var d Diff
	textBytes := 0
	for _, ch := range changes {
		if err := ctx.Err(); err != nil {
			return Diff{}, err
		}
		if !opts.Paths.Empty() && !opts.Paths.Match(ch.from.path) && !opts.Paths.Match(ch.to.path) {
			continue
		}
		withText := opts.MaxTextBytes <= 0 || textBytes < opts.MaxTextBytes
		fd := r.fileDiff(ch, opts, withText, &d.Warnings)
		textBytes += len(fd.Text)
		d.Files = append(d.Files, fd)
	}
	return d, nil
}

func (r *Repo) fileDiff(ch change, opts DiffOptions, withText bool, warnings *[]string) FileDiff {
	fd := FileDiff{Path: ch.to.path, OldPath: ch.from.path}
	switch {
	case ch.from.path == "":
		fd.Status, fd.OldPath = 'A', ch.to.path
	case ch.to.path == "":
		fd.Status, fd.Path = 'D', ch.from.path
	case ch.from.path != ch.to.path:
		fd.Status = 'R'
	default:
		fd.Status = 'M'
	}
	if opts.SkipPath != nil {
		if why := opts.SkipPath(fd.Path); why != "" {
			fd.Skip = why
			return fd
		}
	}
	if ch.from.mode == filemode.Submodule || ch.to.mode == filemode.Submodule {
		text, added, removed := submoduleText(fd, ch)
		fd.Added, fd.Removed = added, removed
		if withText {
			fd.Text = text
		} else {
			fd.TextOmitted = true
		}
		return fd
	}

	drivers := r.diffDrivers()
	from, to := drivers.driverOf(ch.from), drivers.driverOf(ch.to)
	oldText, newText, skip, release, err := r.contents(ch, opts.MaxFileBytes, [2]userdiff.Content{declared(from), declared(to)})
	// The texts may be the cache's: they are not kept past this file's diff.
	defer release()
	if err != nil {
		fd.Skip = SkipMissing
		*warnings = append(*warnings, fmt.Sprintf("%s: %v", fd.Path, err))
		return fd
	}
	if skip != "" {
		fd.Skip = skip
		return fd
	}
	if !withText {
		fd.Added, fd.Removed = linediff.Count(oldText, newText)
		fd.TextOmitted = true
		return fd
	}
	var b strings.Builder
	writeHeader(&b, fd, ch.from.mode, ch.to.mode)
	fd.Added, fd.Removed = writeHunks(&b, fd, oldText, newText, funcDriver(from, to))
	fd.Text = b.String()
	return fd
}

// contents reads both sides of a change, refusing oversized blobs before
// reading them and binary or generated ones before diffing them: binary as
// each side's diff driver declares it (content, from the sides' drivers),
// else by git's rule. The texts are valid until release is called.
func (r *Repo) contents(ch change, maxBytes int64, content [2]userdiff.Content) (oldText, newText, skip string, release func(), err error) {
	var texts [2]string
	var releases [2]func()
	release = func() {
		for _, f := range releases {
			if f != nil {
				f()
			}
		}
	}
	sides := [2]side{ch.from, ch.to}
	for i, s := range sides {
		if s.path != "" && content[i] == userdiff.Binary {
			return "", "", SkipBinary, release, nil // git reads no content then
		}
	}
	for i, s := range sides {
		if s.path == "" {
			continue
		}
		text, large, free, err := r.blob(s.hash, maxBytes)
		releases[i] = free
		if err != nil {
			return "", "", "", release, err
		}
		if large {
			return "", "", SkipLarge, release, nil
		}
		if content[i] != userdiff.Text && isBinary(text) {
			return "", "", SkipBinary, release, nil
		}
		if isGenerated(text) {
			return "", "", SkipGenerated, release, nil
		}
		texts[i] = text
	}
	return texts[0], texts[1], "", release, nil
}

// blob borrows a blob whole, unless it is larger than maxBytes (0: no
// limit): its size is known before it is inflated. The text is valid until
// release is called.
func (r *Repo) blob(h gitobjects.ID, maxBytes int64) (text string, large bool, release func(), err error) {
	obj, release, err := r.borrowObject(h, plumbing.BlobObject, maxBytes)
	if err != nil {
		return "", false, release, err
	}
	if obj.Data == nil && obj.Size > 0 {
		return "", true, release, nil
	}
	// Nothing writes an object's bytes while they are borrowed.
	return offheap.String(obj.Data), false, release, nil
}

// isGenerated looks for the generated-code marker in the first 1 KiB; the
// substring test spares the regular expression nearly every file.
func isGenerated(text string) bool {
	head := text[:min(len(text), 1024)]
	return strings.Contains(head, " DO NOT EDIT.") && generatedMarker.MatchString(head)
}

// isBinary uses git's rule for a file its diff driver says nothing of: a
// NUL byte in the first 8000 bytes.
func isBinary(s string) bool {
	return strings.IndexByte(s[:min(len(s), 8000)], 0) >= 0
}

func writeHeader(b *strings.Builder, fd FileDiff, oldMode, newMode filemode.FileMode) {
	fmt.Fprintf(b, "diff --git a/%s b/%s\n", fd.OldPath, fd.Path)
	switch fd.Status {
	case 'A':
		fmt.Fprintf(b, "new file mode %o\n", uint32(newMode))
	case 'D':
		fmt.Fprintf(b, "deleted file mode %o\n", uint32(oldMode))
	default:
		if oldMode != newMode {
			fmt.Fprintf(b, "old mode %o\nnew mode %o\n", uint32(oldMode), uint32(newMode))
		}
		if fd.Status == 'R' {
			fmt.Fprintf(b, "rename from %s\nrename to %s\n", fd.OldPath, fd.Path)
		}
	}
}

// submoduleText is a submodule's change as git shows it: a one-line hunk
// of "Subproject commit HASH" for each side that has the submodule.
func submoduleText(fd FileDiff, ch change) (string, int, int) {
	var b strings.Builder
	writeHeader(&b, fd, ch.from.mode, ch.to.mode)
	oldName, newName, oldRange, newRange := "a/"+fd.OldPath, "b/"+fd.Path, "1", "1"
	added, removed := 0, 0
	if ch.from.path == "" {
		oldName, oldRange = "/dev/null", "0,0"
	} else {
		removed++
	}
	if ch.to.path == "" {
		newName, newRange = "/dev/null", "0,0"
	} else {
		added++
	}
	fmt.Fprintf(&b, "--- %s\n+++ %s\n@@ -%s +%s @@\n", oldName, newName, oldRange, newRange)
	if ch.from.path != "" {
		fmt.Fprintf(&b, "-Subproject commit %s\n", ch.from.hash)
	}
	if ch.to.path != "" {
		fmt.Fprintf(&b, "+Subproject commit %s\n", ch.to.hash)
	}
	return b.String(), added, removed
}
