package history

import (
	"strings"
	"testing"
)

// FuzzPathspec: any argument, magic or not, in any directory, parses or is
// refused without a panic; what parses matches any path without one, and
// an excluded spec never selects what it names.
func FuzzPathspec(f *testing.F) {
	for _, seed := range []string{"docs", ":!docs", ":^*.md", ":(exclude,icase)SITE", ":(glob)a/**/b*.go", ":(literal)a*b", ":/x", ":(top)", ":/!:x",
		":(attr:diff)x", ":(", "[a-", "../x", ".", "", "*", "?/[!a]"} {
		f.Add(seed, "sub/dir", "sub/dir/file.md")
	}
	f.Fuzz(func(t *testing.T, arg, dir, name string) {
		p, err := ParsePathspecIn([]string{arg}, strings.Trim(dir, "/"))
		if err != nil {
			return
		}
		matched := p.Match(name)
		if strings.HasPrefix(arg, ":!") || strings.HasPrefix(arg, ":^") || strings.HasPrefix(arg, ":(exclude)") {
			if matched && len(p.items) == 1 && p.items[0].matches(name) {
				t.Errorf("%q in %q selects %q, which it excludes", arg, dir, name)
			}
		}
		_ = p.String()
	})
}
