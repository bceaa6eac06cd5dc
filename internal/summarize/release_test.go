package summarize

import (
	"regexp"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/changelog"
	"github.com/digest-cli/digest/internal/gittest"
)

// mergedAfterTheTag is a repository whose v0.1.0 tags its second commit
// and whose third, late, was written two days before the tag and lands
// after it, as an old branch merged late does.
func mergedAfterTheTag(t *testing.T) (dir, late string) {
	r := gittest.New(t)
	r.Write("a.go", "package a\n").Commit("feat: start")
	r.Clock = r.Clock.Add(48 * time.Hour)
	r.Write("b.go", "package a\n").Commit("fix: settle")
	r.Tag("v0.1.0")
	r.Clock = r.Clock.Add(-72 * time.Hour) // written before v0.1.0, merged after it
	late = r.Write("c.go", "package a\n").Commit("feat: an old branch lands")
	return r.Dir, late
}

// TestNamedReleaseIsDatedNoEarlierThanTheLast: the release Release.Tag or
// Release.Bump names is dated by its newest commit but never before the
// last release, so a commit authored before that release's tag (and merged
// after it) does not date the new release before it; an empty repository's
// next version is the first.
func TestNamedReleaseIsDatedNoEarlierThanTheLast(t *testing.T) {
	dir, late := mergedAfterTheTag(t)
	h := newTestRun(t)
	for _, rel := range []Release{{Tag: "v0.2.0"}, {Bump: BumpAuto}} {
		opts := h.options("", dir)
		opts.Release = rel
		res := h.mustRun(opts)
		var named, last *changelog.Entry
		for i, e := range res.Changelog.Entries {
			switch {
			case e.Commit == late:
				named = &res.Changelog.Entries[i]
			case e.Version == "v0.1.0":
				last = &res.Changelog.Entries[i]
			}
		}
		want := rel.Tag
		if want == "" {
			want = "v0.1.1" // a feat in 0.x: a patch
		}
		if named == nil || last == nil || named.Version != want || named.VersionDate.Before(last.VersionDate) {
			t.Fatalf("%+v: the late commit in %+v, v0.1.0's %+v; want it in %s, dated no earlier than v0.1.0", rel, named, last, want)
		}
	}
	opts := h.options("", gittest.New(t).Dir)
	opts.Release.Bump = BumpAuto
	if res := h.mustRun(opts); len(res.Bumped) != 1 || res.Bumped[0].Next != "v0.1.0" {
		t.Errorf("an empty repository's next version: %+v, want v0.1.0", res.Bumped)
	}
}

// TestTagsChooseTheSections: only the tags Release.Tags keeps (Tags of
// --tag-pattern and --ignore-tags) make sections; a commit of a tag left
// out belongs to the next kept release. A pattern Go cannot read is an
// error naming its flag.
func TestTagsChooseTheSections(t *testing.T) {
	r := gittest.New(t)
	first := r.Write("a.txt", "1\n").Commit("feat: one")
	r.Tag("v1.0.0")
	nightly := r.Write("a.txt", "2\n").Commit("fix: two")
	r.Tag("nightly-2")
	rc := r.Write("a.txt", "3\n").Commit("fix: three")
	r.Tag("v1.1.0-rc.1")
	final := r.Write("a.txt", "4\n").Commit("fix: four")
	r.Tag("v1.1.0")
	h := newTestRun(t)
	for _, tt := range []struct {
		pattern, ignore string
		want            map[string]string // commit: version
	}{
		{"", "", map[string]string{first: "v1.0.0", nightly: "nightly-2", rc: "v1.1.0-rc.1", final: "v1.1.0"}},
		{DefaultTagPattern, "", map[string]string{first: "v1.0.0", nightly: "v1.1.0-rc.1", rc: "v1.1.0-rc.1", final: "v1.1.0"}},
		{DefaultTagPattern, "-rc", map[string]string{first: "v1.0.0", nightly: "v1.1.0", rc: "v1.1.0", final: "v1.1.0"}},
	} {
		tags, err := Tags(tt.pattern, tt.ignore)
		if err != nil {
			t.Fatal(err)
		}
		opts := h.options("", r.Dir)
		opts.Release.Tags = tags
		for _, e := range h.mustRun(opts).Changelog.Entries {
			if want := tt.want[e.Commit]; e.Version != want {
				t.Errorf("pattern %q, ignoring %q: %q is in %q, want %q", tt.pattern, tt.ignore, e.Subject, e.Version, want)
			}
		}
	}
	for _, bad := range [][2]string{{"(", ""}, {"", "["}} {
		if _, err := Tags(bad[0], bad[1]); err == nil {
			t.Errorf("Tags(%q, %q) took a pattern Go cannot read", bad[0], bad[1])
		}
	}
}

// TestExcludeAuthorLeavesCommitsOut: the commits of authors
// Release.ExcludeAuthor matches, as "Name <email>", are neither summarized
// nor reported, and counted; the others are.
func TestExcludeAuthorLeavesCommitsOut(t *testing.T) {
	r := gittest.New(t)
	kept := r.Write("a.txt", "1\n").Commit("feat: by a person")
	r.AuthorName, r.AuthorEmail = "dependabot[bot]", "49699333+dependabot[bot]@users.noreply.github.com"
	r.Write("go.mod", "module x\n").Commit("Bump golang.org/x/net from 0.19.0 to 0.20.0")
	h := newTestRun(t)
	opts := h.options("", r.Dir)
	opts.Release.ExcludeAuthor = regexp.MustCompile(`^dependabot\[bot\] <`)
	res := h.mustRun(opts)
	if got := commits(res.Changelog.Entries); res.Excluded != 1 || len(got) != 1 || got[0] != kept || h.calls.Load() != 1 {
		t.Errorf("excluded %d, entries %v, %d calls; want the bot's commit left out, unsent, and %s kept", res.Excluded, got, h.calls.Load(), kept[:7])
	}
}
