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

// ParsePathspec validates and compiles path arguments.
func ParsePathspec(args []string) (Pathspec, error) {
	var p Pathspec
	for _, a := range args {
		spec := strings.TrimSuffix(path.Clean(strings.TrimPrefix(a, "./")), "/")
		if spec == "." || spec == "" {
			return Pathspec{}, nil // "." is the whole tree: no filter at all
		}
		if spec == ".." || strings.HasPrefix(spec, "../") || strings.HasPrefix(spec, "/") {
			return Pathspec{}, fmt.Errorf("path %q is outside the repository. Try: a path relative to the repository root", a)
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
