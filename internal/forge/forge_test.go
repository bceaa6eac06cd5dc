package forge

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		remote string
		want   Forge
		ok     bool
	}{
		{"https://github.com/spf13/cobra.git", Forge{GitHub, "https://github.com/spf13/cobra"}, true},
		{"https://user:token@github.com/spf13/cobra", Forge{GitHub, "https://github.com/spf13/cobra"}, true},
		{"git@github.com:go-git/go-git.git", Forge{GitHub, "https://github.com/go-git/go-git"}, true},
		{"ssh://git@github.com/go-git/go-git", Forge{GitHub, "https://github.com/go-git/go-git"}, true},
		{"ssh://git@GitHub.com:22/a/b.git/", Forge{GitHub, "https://github.com/a/b"}, true},
		{"https://gitlab.com/group/sub/project.git", Forge{GitLab, "https://gitlab.com/group/sub/project"}, true},
		{"git@gitlab.example.com:team/app.git", Forge{GitLab, "https://gitlab.example.com/team/app"}, true},
		{"https://bitbucket.org/team/repo.git", Forge{Bitbucket, "https://bitbucket.org/team/repo"}, true},
		{"https://codeberg.org/forgejo/forgejo", Forge{Gitea, "https://codeberg.org/forgejo/forgejo"}, true},
		{"https://forgejo.example.org/a/b", Forge{Gitea, "https://forgejo.example.org/a/b"}, true},
		{"https://git.example.com/a/b", Forge{}, false}, // a host that does not say what it runs
		{"/srv/git/repo.git", Forge{}, false},
		{"../origin.git", Forge{}, false},
		{"file:///srv/repo", Forge{}, false},
		{"https://github.com/only-owner", Forge{}, false},
		{"https://github.com/a/b/c", Forge{}, false},
		{"", Forge{}, false},
	} {
		got, ok := Parse(tt.remote)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Parse(%q) = %+v, %v; want %+v, %v", tt.remote, got, ok, tt.want, tt.ok)
		}
	}
}

func TestLinks(t *testing.T) {
	gh := Forge{GitHub, "https://github.com/o/r"}
	gl := Forge{GitLab, "https://gitlab.com/g/p"}
	for _, tt := range []struct {
		f          Forge
		text, want string
	}{
		{gh, "Adds X (#2010).", "Adds X ([#2010](https://github.com/o/r/pull/2010))."},
		{gh, "#12 and #13", "[#12](https://github.com/o/r/pull/12) and [#13](https://github.com/o/r/pull/13)"},
		{gh, "C# and a#1 and &#123; stay", "C# and a#1 and &#123; stay"},
		{gh, "!5 is not GitHub's", "!5 is not GitHub's"},
		{gl, "See !5 and #6", "See [\\!5](https://gitlab.com/g/p/-/merge_requests/5) and [#6](https://gitlab.com/g/p/-/issues/6)"},
		{Forge{}, "#1", "#1"},
	} {
		if got := tt.f.Link(tt.text); got != tt.want {
			t.Errorf("Link(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
	if got := (Forge{Bitbucket, "https://bitbucket.org/t/r"}).Commit("abc"); got != "https://bitbucket.org/t/r/commits/abc" {
		t.Error(got)
	}
	if got := gl.Commit("abc"); got != "https://gitlab.com/g/p/-/commit/abc" {
		t.Error(got)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"git@github.com:a/b.git", "https://gitlab.com/a/b/c", "ssh://x@y:1/z", ":", "@:", "a@b:c/d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if fg, ok := Parse(s); ok {
			_ = fg.Link("#1 " + s)
			_ = fg.Commit("abc")
		}
		// Whatever a tag is named, its pages stay on the repository's page
		// and nothing in the name can end a Markdown link or start a
		// fragment or a query.
		for _, fg := range []Forge{{GitHub, "https://github.com/o/r"}, {GitLab, "https://gitlab.com/g/p"},
			{Bitbucket, "https://bitbucket.org/t/r"}, {Gitea, "https://codeberg.org/o/r"}} {
			for _, page := range []string{fg.Compare(s, s), fg.Tree(s), fg.Commits(s)} {
				rest, ok := strings.CutPrefix(page, fg.Base+"/")
				rest = strings.TrimSuffix(rest, "#diff")
				if !ok || strings.ContainsAny(rest, " \t\n()<>[]#?\"") {
					t.Errorf("%s: page %q for ref %q", fg.Kind, page, s)
				}
			}
		}
	})
}

// TestReleasePages: the comparison, tree and history pages each forge
// serves, in the layout its own pages link (GitHub's generated notes,
// GitLab's and Gitea's compare views, Bitbucket's branches/compare with
// the newer revision first).
func TestReleasePages(t *testing.T) {
	gh := Forge{GitHub, "https://github.com/o/r"}
	gl := Forge{GitLab, "https://gitlab.com/g/sub/p"}
	bb := Forge{Bitbucket, "https://bitbucket.org/t/r"}
	gt := Forge{Gitea, "https://codeberg.org/o/r"}
	for _, tt := range []struct{ got, want string }{
		{gh.Compare("v1.7.0", "v1.8.0"), "https://github.com/o/r/compare/v1.7.0...v1.8.0"},
		{gh.Compare("v1.8.0", "HEAD"), "https://github.com/o/r/compare/v1.8.0...HEAD"},
		{gh.Tree("v1.0.0"), "https://github.com/o/r/tree/v1.0.0"},
		{gh.Commits("v1.0.0"), "https://github.com/o/r/commits/v1.0.0"},
		{gl.Compare("v1", "v2"), "https://gitlab.com/g/sub/p/-/compare/v1...v2"},
		{gl.Tree("v2"), "https://gitlab.com/g/sub/p/-/tree/v2"},
		{gl.Commits("v2"), "https://gitlab.com/g/sub/p/-/commits/v2"},
		{bb.Compare("v1", "v2"), "https://bitbucket.org/t/r/branches/compare/v2%0Dv1#diff"},
		{bb.Tree("v2"), "https://bitbucket.org/t/r/src/v2/"},
		{bb.Commits("v2"), "https://bitbucket.org/t/r/commits/tag/v2"},
		{gt.Compare("v1", "v2"), "https://codeberg.org/o/r/compare/v1...v2"},
		{gt.Tree("v2"), "https://codeberg.org/o/r/src/tag/v2"},
		{gt.Commits("v2"), "https://codeberg.org/o/r/commits/tag/v2"},
		// A tag's name is a path: slashes stay, what would end or bend the
		// URL (#, %, parentheses, spaces) is escaped.
		{gh.Compare("release/1.0", "v2#(x)%"), "https://github.com/o/r/compare/release/1.0...v2%23%28x%29%25"},
		{gh.Commits("ünï"), "https://github.com/o/r/commits/%C3%BCn%C3%AF"},
		{Forge{}.Compare("a", "b"), ""},
		{Forge{}.Tree("a"), ""},
		{Forge{}.Commits("a"), ""},
	} {
		if tt.got != tt.want {
			t.Errorf("got %s, want %s", tt.got, tt.want)
		}
	}
}
