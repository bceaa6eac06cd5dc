package history

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"
)

// Pathspec selects paths like the arguments after `git log --`: a directory
// selects everything under it, a file itself, and *, ? and [...] glob across
// directories as in git. Paths are relative to the repository root.
type Pathspec struct {
	specs []string
	globs []*regexp.Regexp
}

// ParsePathspec validates and compiles path arguments relative to the
// repository root.
func ParsePathspec(args []string) (Pathspec, error) {
	return ParsePathspecIn(args, "")
}

// CheckPathspec reports what is wrong with path arguments wherever they are
// given (a glob that does not compile); where they lead is for
// ParsePathspecIn to say, in each repository.
func CheckPathspec(args []string) error {
	for _, a := range args {
		if strings.ContainsAny(a, "*?[") {
			if _, err := globRegexp(a); err != nil {
				return fmt.Errorf("path %q: %v. Try: a valid glob such as '*.go' or 'docs/*'", a, err)
			}
		}
	}
	return nil
}

// ParsePathspecIn validates and compiles path arguments given in dir, a
// directory of the work tree relative to its root ("" for the root), as
// git takes them from where it runs: "." is dir, "../x" a sibling of it.
// A path starting ":/" (or ":(top)") is relative to the root wherever it
// is given.
func ParsePathspecIn(args []string, dir string) (Pathspec, error) {
	var p Pathspec
	for _, a := range args {
		rel := a
		top := false
		for _, magic := range []string{":(top)", ":/"} {
			if r, ok := strings.CutPrefix(rel, magic); ok {
				rel, top = r, true
				break
			}
		}
		if !top && dir != "" && !strings.HasPrefix(rel, "/") {
			rel = path.Join(dir, rel)
		}
		spec := strings.TrimSuffix(path.Clean(strings.TrimPrefix(rel, "./")), "/")
		if spec == "." || spec == "" {
			return Pathspec{}, nil // the whole tree: no filter at all
		}
		if spec == ".." || strings.HasPrefix(spec, "../") || strings.HasPrefix(spec, "/") {
			return Pathspec{}, fmt.Errorf("path %q is outside the repository. Try: a path inside it, relative to where digest runs (or to the root with :/)", a)
		}
		p.specs = append(p.specs, spec)
		if strings.ContainsAny(spec, "*?[") {
			re, err := globRegexp(spec)
			if err != nil {
				return Pathspec{}, fmt.Errorf("path %q: %v. Try: a valid glob such as '*.go' or 'docs/*'", a, err)
			}
			p.globs = append(p.globs, re)
		}
	}
	sort.Strings(p.specs)
	return p, nil
}

func globRegexp(glob string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(glob); i++ {
		switch c := glob[i]; c {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".") // in git's pathspecs, as with *, this matches '/' too
		case '[':
			end := strings.IndexByte(glob[i:], ']')
			if end < 0 {
				return nil, fmt.Errorf("unclosed '['")
			}
			class := glob[i+1 : i+end]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + class + "]")
			i += end
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("(/.*)?$")
	return regexp.Compile(b.String())
}

// Empty reports whether the pathspec selects everything.
func (p Pathspec) Empty() bool { return len(p.specs) == 0 }

// String is the canonical form, used to key summaries of a filtered diff
// apart from summaries of the whole commit.
func (p Pathspec) String() string { return strings.Join(p.specs, "\n") }

// Match reports whether name is selected.
func (p Pathspec) Match(name string) bool {
	if name == "" {
		return false
	}
	if p.Empty() {
		return true
	}
	for _, s := range p.specs {
		if name == s || strings.HasPrefix(name, s+"/") {
			return true
		}
	}
	for _, re := range p.globs {
		if re.MatchString(name) {
			return true
		}
	}
	return false
}
