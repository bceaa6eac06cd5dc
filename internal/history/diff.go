package history

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/utils/diff"
	"github.com/sergi/go-diff/diffmatchpatch"
)

// DiffOptions shapes a commit's diff.
type DiffOptions struct {
	Renames bool
	Paths   Pathspec
	// SkipPath names why a path is left out of the text (a lockfile, say)
	// before its blobs are read, or returns "" to keep it.
	SkipPath func(path string) string
	// MaxFileBytes leaves out blobs larger than this without diffing them;
	// such a diff would be cut to a few thousand tokens anyway.
	MaxFileBytes int64
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
}

// Diff is a commit's change against its first parent.
type Diff struct {
	Files    []FileDiff
	Warnings []string // objects that could not be read; the rest is still diffed
}

func (r *Repo) changes(ctx context.Context, c *object.Commit, renames bool) (object.Changes, error) {
	tree, err := c.Tree()
	if err != nil {
		return nil, fmt.Errorf("%s: commit %s: read tree: %w", r.path, c.Hash, err)
	}
	var parentTree *object.Tree // nil diffs the root commit against the empty tree
	if c.NumParents() > 0 {
		parent, err := r.git.CommitObject(c.ParentHashes[0])
		if err != nil && !errors.Is(err, plumbing.ErrObjectNotFound) {
			return nil, fmt.Errorf("%s: commit %s: read parent: %w", r.path, c.Hash, err)
		}
		if parent != nil {
			if parentTree, err = parent.Tree(); err != nil {
				return nil, fmt.Errorf("%s: commit %s: read parent tree: %w", r.path, c.Hash, err)
			}
		}
	}
	opts := &object.DiffTreeOptions{}
	if renames {
		opts = object.DefaultDiffTreeOptions
	}
	changes, err := object.DiffTreeWithOptions(ctx, parentTree, tree, opts)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		return nil, fmt.Errorf("%s: commit %s: diff trees: %w", r.path, c.Hash, err)
	}
	return changes, nil
}

// Diff builds the commit's diff against its first parent (the empty tree for
// a root commit). Files are in path order, as git prints them.
func (r *Repo) Diff(ctx context.Context, c Commit, opts DiffOptions) (Diff, error) {
	changes, err := r.changes(ctx, c.obj, opts.Renames)
	if err != nil {
		return Diff{}, err
	}
	var d Diff
	for _, ch := range changes {
		if err := ctx.Err(); err != nil {
			return Diff{}, err
		}
		if !opts.Paths.Empty() && !opts.Paths.Match(ch.From.Name) && !opts.Paths.Match(ch.To.Name) {
			continue
		}
		fd := r.fileDiff(ch, opts, &d.Warnings)
		d.Files = append(d.Files, fd)
	}
	return d, nil
}

func (r *Repo) fileDiff(ch *object.Change, opts DiffOptions, warnings *[]string) FileDiff {
	fd := FileDiff{Path: ch.To.Name, OldPath: ch.From.Name}
	switch {
	case ch.From.Name == "":
		fd.Status, fd.OldPath = 'A', ch.To.Name
	case ch.To.Name == "":
		fd.Status, fd.Path = 'D', ch.From.Name
	case ch.From.Name != ch.To.Name:
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
	oldMode, newMode := ch.From.TreeEntry.Mode, ch.To.TreeEntry.Mode
	if oldMode == filemode.Submodule || newMode == filemode.Submodule {
		fd.Text, fd.Added, fd.Removed = submoduleText(fd, ch)
		return fd
	}

	oldText, newText, skip, err := r.contents(ch, opts.MaxFileBytes)
	if err != nil {
		fd.Skip = SkipMissing
		*warnings = append(*warnings, fmt.Sprintf("%s: %v", fd.Path, err))
		return fd
	}
	if skip != "" {
		fd.Skip = skip
		return fd
	}
	var b strings.Builder
	writeHeader(&b, fd, oldMode, newMode)
	fd.Added, fd.Removed = writeHunks(&b, fd, oldText, newText)
	fd.Text = b.String()
	return fd
}

// contents reads both sides of a change, refusing binary and oversized blobs
// before any diffing.
func (r *Repo) contents(ch *object.Change, maxBytes int64) (oldText, newText, skip string, err error) {
	read := func(e object.ChangeEntry) (string, string, error) {
		if e.Name == "" {
			return "", "", nil
		}
		blob, err := r.git.BlobObject(e.TreeEntry.Hash)
		if err != nil {
			return "", "", fmt.Errorf("blob %s: %w", e.TreeEntry.Hash, err)
		}
		if maxBytes > 0 && blob.Size > maxBytes {
			return "", SkipLarge, nil
		}
		rd, err := blob.Reader()
		if err != nil {
			return "", "", fmt.Errorf("blob %s: %w", e.TreeEntry.Hash, err)
		}
		defer rd.Close()
		var sb strings.Builder
		sb.Grow(int(blob.Size))
		if _, err := io.Copy(&sb, rd); err != nil {
			return "", "", fmt.Errorf("blob %s: %w", e.TreeEntry.Hash, err)
		}
		s := sb.String()
		if isBinary(s) {
			return "", SkipBinary, nil
		}
		if generatedMarker.MatchString(s[:min(len(s), 1024)]) {
			return "", SkipGenerated, nil
		}
		return s, "", nil
	}
	oldText, skip, err = read(ch.From)
	if err != nil || skip != "" {
		return "", "", skip, err
	}
	newText, skip, err = read(ch.To)
	return oldText, newText, skip, err
}

// isBinary uses git's rule: a NUL byte in the first 8000 bytes.
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

func submoduleText(fd FileDiff, ch *object.Change) (string, int, int) {
	var b strings.Builder
	writeHeader(&b, fd, ch.From.TreeEntry.Mode, ch.To.TreeEntry.Mode)
	added, removed := 0, 0
	if ch.From.Name != "" {
		fmt.Fprintf(&b, "-Subproject commit %s\n", ch.From.TreeEntry.Hash)
		removed++
	}
	if ch.To.Name != "" {
		fmt.Fprintf(&b, "+Subproject commit %s\n", ch.To.TreeEntry.Hash)
		added++
	}
	return b.String(), added, removed
}

// contextLines matches git's default -U3.
const contextLines = 3

type lineOp struct {
	op   diffmatchpatch.Operation
	text string // without its newline
	eol  bool   // false only for a last line lacking its newline
}

// writeHunks appends the file's hunks in unified format and counts the
// added and removed lines.
func writeHunks(b *strings.Builder, fd FileDiff, oldText, newText string) (added, removed int) {
	if oldText == newText {
		return 0, 0 // a mode-only change, a rename without edits or an empty file
	}
	oldName, newName := "a/"+fd.OldPath, "b/"+fd.Path
	if fd.Status == 'A' {
		oldName = "/dev/null"
	}
	if fd.Status == 'D' {
		newName = "/dev/null"
	}
	fmt.Fprintf(b, "--- %s\n+++ %s\n", oldName, newName)
	var ops []lineOp
	switch {
	case oldText == "":
		ops = appendLines(ops, diffmatchpatch.DiffInsert, newText)
	case newText == "":
		ops = appendLines(ops, diffmatchpatch.DiffDelete, oldText)
	default:
		for _, d := range diff.Do(oldText, newText) {
			ops = appendLines(ops, d.Type, d.Text)
		}
	}
	var oldLines []string // the pre-image, for git's function-name hunk headers
	for _, o := range ops {
		if o.op != diffmatchpatch.DiffInsert {
			oldLines = append(oldLines, o.text)
		}
	}
	return encodeHunks(b, ops, oldLines)
}

func appendLines(ops []lineOp, op diffmatchpatch.Operation, text string) []lineOp {
	for len(text) > 0 {
		line, rest, found := strings.Cut(text, "\n")
		ops = append(ops, lineOp{op: op, text: strings.ToValidUTF8(line, "\uFFFD"), eol: found})
		text = rest
	}
	return ops
}

func encodeHunks(b *strings.Builder, ops []lineOp, oldLines []string) (added, removed int) {
	// Line numbers (1-based) of ops[i] in the old and new file.
	oldAt := make([]int, len(ops)+1)
	newAt := make([]int, len(ops)+1)
	o, n := 1, 1
	for i, op := range ops {
		oldAt[i], newAt[i] = o, n
		if op.op != diffmatchpatch.DiffInsert {
			o++
		}
		if op.op != diffmatchpatch.DiffDelete {
			n++
		}
	}
	oldAt[len(ops)], newAt[len(ops)] = o, n

	i := 0
	for i < len(ops) {
		for i < len(ops) && ops[i].op == diffmatchpatch.DiffEqual {
			i++
		}
		if i == len(ops) {
			break
		}
		start := max(0, i-contextLines)
		end := i // one past the last changed op of the hunk
		for j := i; j < len(ops); j++ {
			if ops[j].op != diffmatchpatch.DiffEqual {
				end = j + 1
				continue
			}
			if j-end >= 2*contextLines {
				break
			}
		}
		stop := min(len(ops), end+contextLines)
		oldCount, newCount := 0, 0
		for _, op := range ops[start:stop] {
			if op.op != diffmatchpatch.DiffInsert {
				oldCount++
			}
			if op.op != diffmatchpatch.DiffDelete {
				newCount++
			}
		}
		fmt.Fprintf(b, "@@ -%s +%s @@", hunkRange(oldAt[start], oldCount), hunkRange(newAt[start], newCount))
		if fn := funcName(oldLines, oldAt[start]-1); fn != "" {
			b.WriteString(" " + fn)
		}
		b.WriteByte('\n')
		for _, op := range ops[start:stop] {
			switch op.op {
			case diffmatchpatch.DiffInsert:
				b.WriteByte('+')
				added++
			case diffmatchpatch.DiffDelete:
				b.WriteByte('-')
				removed++
			default:
				b.WriteByte(' ')
			}
			b.WriteString(op.text)
			b.WriteByte('\n')
			if !op.eol {
				b.WriteString("\\ No newline at end of file\n")
			}
		}
		i = stop
	}
	return added, removed
}

// hunkRange prints git's "start,count" (an empty range starts one line early).
func hunkRange(start, count int) string {
	if count == 0 {
		return fmt.Sprintf("%d,0", start-1)
	}
	if count == 1 {
		return fmt.Sprintf("%d", start)
	}
	return fmt.Sprintf("%d,%d", start, count)
}

// funcName applies git's default funcname rule: the nearest line before the
// hunk that starts with a letter, '_' or '$', cut to 80 bytes.
func funcName(oldLines []string, before int) string {
	for i := min(before, len(oldLines)) - 1; i >= 0; i-- {
		l := oldLines[i]
		if l == "" {
			continue
		}
		c := l[0]
		if c == '_' || c == '$' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') {
			l = strings.TrimRight(l, " \t")
			if len(l) > 80 {
				l = strings.ToValidUTF8(l[:80], "")
			}
			return l
		}
	}
	return ""
}
