package history_test

import (
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/gittest"
	"github.com/digest-cli/digest/internal/history"
)

// FuzzRevision: any --rev resolves or is refused in one line, without a
// panic, in a repository with branches, tags and a merge.
func FuzzRevision(f *testing.F) {
	for _, seed := range []string{"HEAD", "main~2^2", "v1..feature", "a...b", "HEAD^!", "HEAD^@", "HEAD^-2", "^main", "@{-1}", "@{u}",
		"main@{push}", "main@{1}", "HEAD@{2 days ago}", ":/fix", ":/!-x", "HEAD^{/x}", "HEAD^{tree}", "HEAD:a", ":0:a", "abcd", "x-gabcd",
		"@", "@{", "}", "^{}", "~", "^", "..", "...", "^-", "HEAD~99999999999", "main@{-1}", ":/[", "HEAD^{/(}"} {
		f.Add(seed)
	}
	fx := gittest.NewFixture(f)
	r, err := history.Open(fx.Dir)
	if err != nil {
		f.Fatal(err)
	}
	defer r.Close()
	f.Fuzz(func(t *testing.T, rev string) {
		_, err := r.Resolve(history.WalkOptions{Revs: []string{rev}})
		if err != nil && (err.Error() == "" || strings.Contains(err.Error(), "\n") && !strings.Contains(rev, "\n")) {
			t.Errorf("--rev %q: the refusal is not one line: %q", rev, err)
		}
	})
}
