// Package revision resolves git's revision syntax (gitrevisions(7)) the
// way `git rev-list` reads its arguments: names, abbreviated hashes,
// reflog and upstream selectors, suffixes, message searches and ranges.
// What it cannot resolve it refuses with the reason; it never answers with
// other commits than git would.
package revision

import (
	"cmp"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Kinds of objects, as git names them.
const (
	KindCommit = "commit"
	KindTree   = "tree"
	KindBlob   = "blob"
	KindTag    = "tag"
)

// ErrMissing is what a Source returns for an object it does not have.
var ErrMissing = errors.New("object not found")

// Source is the repository a revision is resolved in. Hashes are lower-case
// hex.
type Source interface {
	// Ref reads a reference by its full name ("HEAD", "refs/heads/main",
	// "ORIG_HEAD"), following symbolic references: the object it names and
	// the name of the last reference followed (HEAD on a branch gives that
	// branch's name). ok is false when there is no such reference or it is
	// a branch yet unborn, in which case target still names the branch.
	Ref(name string) (hash, target string, ok bool, err error)
	// Refs lists the objects every reference and HEAD name.
	Refs() ([]string, error)
	// Reflog reads a reference's log, oldest entry first; ok is false when
	// it has none.
	Reflog(name string) (entries []ReflogEntry, ok bool, err error)
	// Object reads an object's kind and, for a tag, the object it names.
	// A missing object is ErrMissing.
	Object(hash string) (kind, tagged string, err error)
	// Commit reads a commit. A missing one is ErrMissing.
	Commit(hash string) (Commit, error)
	// Abbrev lists up to max objects whose names begin with prefix.
	Abbrev(prefix string, max int) ([]string, error)
	// Config returns a configuration key's values ("branch.main.merge"),
	// the one that counts last.
	Config(key string) []string
}

// Commit is what resolving reads of a commit.
type Commit struct {
	Parents []string
	Time    time.Time // the committer's
	Message string    // as stored: git searches it whole
}

// ReflogEntry is one line of a reference's log.
type ReflogEntry struct {
	Old, New string // zero hashes where the reference did not exist
	Time     time.Time
	Message  string
}

// Options holds what resolving reads besides the repository.
type Options struct {
	// Now is the time relative reflog dates ("2 days ago") count back from.
	Now time.Time
	// HexDigits is the length of the repository's full hashes: 40 for
	// SHA-1 (also when 0), 64 for SHA-256.
	HexDigits int
}

// Selection is what a list of revisions selects, as rev-list reads it: the
// commits in Include and their ancestors, less those reachable from
// Exclude.
type Selection struct {
	Include, Exclude []string
	// Warnings are what git would warn of and go on: an ambiguous name, a
	// reflog that does not go back as far as asked.
	Warnings []string
}

// Resolve reads the revisions as `git rev-list ARGS...` does.
func Resolve(src Source, args []string, opts Options) (Selection, error) {
	if opts.HexDigits == 0 {
		opts.HexDigits = sha1HexDigits
	}
	r := &resolver{src: src, opts: opts}
	for _, arg := range args {
		if err := r.arg(arg); err != nil {
			if strings.Contains(err.Error(), strconv.Quote(arg)) {
				return Selection{}, err
			}
			return Selection{}, fmt.Errorf("revision %q: %w", arg, err)
		}
	}
	return r.sel, nil
}

type resolver struct {
	src  Source
	opts Options
	sel  Selection
}

func (r *resolver) warn(format string, args ...any) {
	r.sel.Warnings = append(r.sel.Warnings, fmt.Sprintf(format, args...))
}

func (r *resolver) add(hash string, exclude bool) {
	if exclude {
		r.sel.Exclude = append(r.sel.Exclude, hash)
	} else {
		r.sel.Include = append(r.sel.Include, hash)
	}
}

// arg reads one argument in the order git's handle_revision_arg tries its
// forms: a range, the parent suffixes ^@ ^! ^-N, then a single revision,
// excluded when it starts with ^.
func (r *resolver) arg(arg string) error {
	if arg == "" {
		return errors.New("empty. Try: a branch, tag or commit, or A..B")
	}
	if i := strings.Index(arg, ".."); i >= 0 {
		done, err := r.rangeArg(arg, i)
		if done || err != nil {
			return err
		}
	}
	if base, ok := strings.CutSuffix(arg, "^@"); ok && strings.Index(arg, "^@") == len(base) {
		return r.parentsOnly(base, false, 0)
	}
	if base, ok := strings.CutSuffix(arg, "^!"); ok && strings.Index(arg, "^!") == len(base) {
		if err := r.parentsOnly(base, true, 0); err != nil {
			return err
		}
		arg = base
	} else if i := strings.Index(arg, "^-"); i >= 0 {
		n := 1
		if rest := arg[i+2:]; rest != "" {
			var err error
			if n, err = smallNumber(rest); err != nil || n < 1 {
				return fmt.Errorf("%q after ^- is not a parent's number. Try: X^-1 or X^-2", rest)
			}
		}
		if err := r.parentsOnly(arg[:i], true, n); err != nil {
			return err
		}
		arg = arg[:i]
	}
	exclude := false
	if rest, ok := strings.CutPrefix(arg, "^"); ok {
		arg, exclude = rest, true
	}
	h, err := r.commitish(arg)
	if err != nil {
		return err
	}
	r.add(h, exclude)
	return nil
}

// rangeArg reads A..B and A...B (either side empty meaning HEAD). Like
// git, when a side does not resolve the argument is tried as one revision,
// and that failing, the side's error is the one reported.
func (r *resolver) rangeArg(arg string, dots int) (bool, error) {
	a, b := arg[:dots], arg[dots+2:]
	symmetric := strings.HasPrefix(b, ".")
	if symmetric {
		b = b[1:]
	}
	if a == "" {
		a = "HEAD"
	}
	if b == "" {
		b = "HEAD"
	}
	ah, aerr := r.object(a)
	bh, berr := r.object(b)
	if err := cmp.Or(aerr, berr); err != nil {
		if _, whole := r.object(arg); whole == nil {
			return false, nil
		}
		return true, err
	}
	ac, err := r.peel(ah, KindCommit, a)
	if err != nil {
		return true, err
	}
	bc, err := r.peel(bh, KindCommit, b)
	if err != nil {
		return true, err
	}
	if symmetric {
		bases, err := mergeBases(r.src, ac, bc)
		if err != nil {
			return true, err
		}
		for _, base := range bases {
			r.add(base, true)
		}
		r.add(ac, false)
		r.add(bc, false)
		return true, nil
	}
	r.add(ac, true)
	r.add(bc, false)
	return true, nil
}

// parentsOnly adds the parents of the commit base names (only the nth with
// nth > 0), excluded when exclude is set; a ^ before base flips that.
func (r *resolver) parentsOnly(base string, exclude bool, nth int) error {
	if rest, ok := strings.CutPrefix(base, "^"); ok {
		base, exclude = rest, !exclude
	}
	h, err := r.commitish(base)
	if err != nil {
		return err
	}
	c, err := r.commit(h, base)
	if err != nil {
		return err
	}
	if nth > 0 {
		if nth > len(c.Parents) {
			return fmt.Errorf("%s has %d parent(s), not a parent %d", base, len(c.Parents), nth)
		}
		r.add(c.Parents[nth-1], exclude)
		return nil
	}
	for _, p := range c.Parents {
		r.add(p, exclude)
	}
	return nil
}

// commitish resolves a single revision to a commit.
func (r *resolver) commitish(name string) (string, error) {
	h, err := r.object(name)
	if err != nil {
		return "", err
	}
	return r.peel(h, KindCommit, name)
}

// object resolves a single revision to the object it names (git's
// get_oid_with_context): a message search, an index path or REV:PATH,
// else the revision with its suffixes.
func (r *resolver) object(name string) (string, error) {
	if rest, ok := strings.CutPrefix(name, ":"); ok {
		if pattern, ok := strings.CutPrefix(rest, "/"); ok {
			starts, err := r.src.Refs()
			if err != nil {
				return "", err
			}
			return r.searchMessage(pattern, starts)
		}
		return "", fmt.Errorf("names a file in the index, not a commit. Try: a branch, tag or commit")
	}
	depth := 0
	for i := 0; i < len(name); i++ {
		switch name[i] {
		case '{':
			depth++
		case '}':
			if depth > 0 {
				depth--
			}
		case ':':
			if depth == 0 {
				return "", fmt.Errorf("names the file %q in %s, not a commit. Try: %s -- %s", name[i+1:], name[:i], name[:i], name[i+1:])
			}
		}
	}
	return r.suffixed(name)
}

// suffixed reads a revision from its end, as git's get_oid_1 does: a
// ^{...} peel, else a ~N or ^N step, else a name.
func (r *resolver) suffixed(name string) (string, error) {
	if strings.HasSuffix(name, "}") {
		if i := strings.LastIndex(name, "^{"); i >= 0 {
			return r.peelOnion(name[:i], name[i+2:len(name)-1])
		}
	}
	j := len(name) - 1
	for j >= 0 && name[j] >= '0' && name[j] <= '9' {
		j--
	}
	if j >= 0 && (name[j] == '~' || name[j] == '^') {
		base, digits := name[:j], name[j+1:]
		n := 1
		if digits != "" {
			var err error
			if n, err = smallNumber(digits); err != nil {
				return "", fmt.Errorf("%q is too large a step", digits)
			}
		}
		if base == "" {
			return "", fmt.Errorf("%c%s needs a revision before it. Try: HEAD%c%s", name[j], digits, name[j], digits)
		}
		h, err := r.suffixed(base)
		if err != nil {
			return "", err
		}
		if h, err = r.peel(h, KindCommit, base); err != nil {
			return "", err
		}
		if name[j] == '^' {
			return r.parent(h, base, n)
		}
		return r.ancestor(h, base, n)
	}
	return r.name(name)
}

// parent is the nth parent of a commit (git's X^n; X^0 is X).
func (r *resolver) parent(h, base string, n int) (string, error) {
	if n == 0 {
		return h, nil
	}
	c, err := r.commit(h, base)
	if err != nil {
		return "", err
	}
	if n > len(c.Parents) {
		if len(c.Parents) == 0 {
			return "", fmt.Errorf("%s is a root commit: it has no parent", base)
		}
		return "", fmt.Errorf("%s has %d parent(s), not a parent %d", base, len(c.Parents), n)
	}
	return c.Parents[n-1], nil
}

// ancestor follows first parents n times (git's X~n).
func (r *resolver) ancestor(h, base string, n int) (string, error) {
	for i := 0; i < n; i++ {
		c, err := r.commit(h, fmt.Sprintf("%s~%d", base, i))
		if err != nil {
			return "", err
		}
		if len(c.Parents) == 0 {
			return "", fmt.Errorf("%s~%d goes past the root commit (%s~%d is the root)", base, n, base, i)
		}
		h = c.Parents[0]
	}
	return h, nil
}

// peelOnion reads X^{type}, X^{} and X^{/regex}.
func (r *resolver) peelOnion(base, what string) (string, error) {
	h, err := r.suffixed(base)
	if err != nil {
		return "", err
	}
	if pattern, ok := strings.CutPrefix(what, "/"); ok {
		c, err := r.peel(h, KindCommit, base)
		if err != nil {
			return "", err
		}
		return r.searchMessage(pattern, []string{c})
	}
	switch what {
	case "":
		return r.peel(h, "", base)
	case "object":
		return h, nil
	case KindCommit, KindTree, KindBlob, KindTag:
		return r.peel(h, what, base)
	}
	return "", fmt.Errorf("^{%s}: no such kind of object. Try: ^{commit}, ^{tag}, ^{} or ^{/text}", what)
}

// peel follows tags (and a commit to its tree) to an object of kind want,
// or, with want empty, to the first object that is not a tag.
func (r *resolver) peel(h, want, name string) (string, error) {
	for range 64 {
		kind, tagged, err := r.src.Object(h)
		if errors.Is(err, ErrMissing) {
			return "", missing(name, h)
		}
		if err != nil {
			return "", err
		}
		switch {
		case kind == want || want == "" && kind != KindTag:
			return h, nil
		case kind == KindTag:
			h = tagged
		case want == KindCommit:
			return "", fmt.Errorf("%s names a %s, not a commit. Try: a branch, tag or commit", name, kind)
		case want == KindTree && kind == KindCommit:
			return "", fmt.Errorf("%s^{tree} names a tree, not a commit. Try: %s", name, name)
		default:
			return "", fmt.Errorf("%s is a %s, not a %s", name, kind, want)
		}
	}
	return "", fmt.Errorf("%s: tags nested too deep", name)
}

// commit reads the commit h that the revision name resolved to.
func (r *resolver) commit(h, name string) (Commit, error) {
	c, err := r.src.Commit(h)
	if errors.Is(err, ErrMissing) {
		return c, missing(name, h)
	}
	return c, err
}

func missing(name, h string) error {
	return fmt.Errorf("unknown revision %q: it names %s, which is not in this repository (beyond a shallow clone's edge, or never fetched). Try: git fetch --deepen, or another revision", name, h)
}

// smallNumber reads a decimal count that fits an int32, as git's do.
func smallNumber(s string) (int, error) {
	n := 0
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%q is not a number", s)
		}
		n = n*10 + int(c-'0')
		if n > 1<<31-1 {
			return 0, fmt.Errorf("%q is too large", s)
		}
	}
	if s == "" {
		return 0, errors.New("no number")
	}
	return n, nil
}
