package history

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/digest-cli/digest/internal/gittest"
	"github.com/digest-cli/digest/internal/mailmap"
)

// tag puts a lightweight tag on a commit by name.
func (d *dag) tag(name, commit string) {
	d.t.Helper()
	if err := d.repo.Git.Storer.SetReference(plumbing.NewHashReference(plumbing.NewTagReferenceName(name), d.names[commit])); err != nil {
		d.t.Fatal(err)
	}
}

// gitLines runs git in the repository and splits its output into lines.
func (d *dag) gitLines(args ...string) []string {
	d.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", d.repo.Dir}, args...)...)
	cmd.Env = gittest.GitEnv(d.t)
	out, err := cmd.Output()
	if err != nil {
		d.t.Fatalf("git %v: %v", args, err)
	}
	s := strings.TrimSpace(string(out))
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// tagOracle is what the git binary says of the tags: each release (tags
// of one commit, named as Tags names them) and the commits each one's
// history holds, in the order Tags must give, found the slow way.
type tagOracle struct {
	names     [][]string        // by release: its tags, naming one first
	commit    []string          // by release
	ancestors []map[string]bool // by release: the commits its history holds
	order     []int             // releases in history order
	rankOf    map[int]int       // release → position in order
	byCommit  map[string]int    // a tagged commit → its release
	version   map[string]int    // tag → position in git tag --sort=version:refname
}

func newTagOracle(d *dag, match func(string) bool) *tagOracle {
	d.t.Helper()
	o := &tagOracle{byCommit: map[string]int{}, version: map[string]int{}, rankOf: map[int]int{}}
	for i, name := range d.gitLines("tag", "--sort=version:refname") {
		o.version[name] = i
	}
	tagged := map[string][]string{}
	var commits []string
	for _, line := range d.gitLines("for-each-ref", "refs/tags", "--format=%(refname:strip=2) %(objectname) %(*objectname)") {
		f := strings.Fields(line)
		name, commit := f[0], f[len(f)-1]
		if match != nil && !match(name) {
			continue
		}
		if _, ok := tagged[commit]; !ok {
			commits = append(commits, commit)
		}
		tagged[commit] = append(tagged[commit], name)
	}
	for _, c := range commits {
		names := tagged[c]
		slices.SortFunc(names, func(a, b string) int { return o.version[a] - o.version[b] })
		// Version order, but each vX right before its X.
		var ordered []string
		for _, n := range names {
			if slices.Contains(ordered, n) {
				continue // placed before its bare twin
			}
			if slices.Contains(names, "v"+n) && !slices.Contains(ordered, "v"+n) {
				ordered = append(ordered, "v"+n)
			}
			ordered = append(ordered, n)
		}
		o.byCommit[c] = len(o.names)
		o.names = append(o.names, ordered)
		o.commit = append(o.commit, c)
		set := map[string]bool{}
		for _, h := range d.gitLines("rev-list", c) {
			set[h] = true
		}
		o.ancestors = append(o.ancestors, set)
	}
	// Kahn's order, the earliest version first among the releases all of
	// whose ancestors are placed.
	placed := make([]bool, len(o.names))
	key := func(i int) int {
		k := len(o.version)
		for _, n := range o.names[i] {
			k = min(k, o.version[n])
		}
		return k
	}
	for len(o.order) < len(o.names) {
		best := -1
		for i := range o.names {
			if placed[i] {
				continue
			}
			free := true
			for j := range o.names {
				if j != i && !placed[j] && o.ancestors[i][o.commit[j]] {
					free = false
					break
				}
			}
			if free && (best < 0 || key(i) < key(best)) {
				best = i
			}
		}
		placed[best] = true
		o.rankOf[best] = len(o.order)
		o.order = append(o.order, best)
	}
	return o
}

// first is the release, first in history order, whose history holds c;
// -1 for none.
func (o *tagOracle) first(c string) int {
	for _, rel := range o.order {
		if o.ancestors[rel][c] {
			return rel
		}
	}
	return -1
}

func (o *tagOracle) name(rel int) string {
	if rel < 0 {
		return ""
	}
	return o.names[rel][0]
}

// checkTags compares Tags, VersionsMatching and LastTag with the oracle,
// read from objects and again through a commit-graph.
func checkTags(t *testing.T, d *dag, match func(string) bool) {
	t.Helper()
	o := newTagOracle(d, match)
	var all []string
	for _, h := range d.names {
		all = append(all, h.String())
	}
	slices.Sort(all)
	ctx := context.Background()
	for _, withGraph := range []bool{false, true} {
		if withGraph {
			d.graph()
		}
		r := openRepo(t, d.repo.Dir)
		tags, err := r.Tags(ctx, match)
		if err != nil {
			t.Fatal(err)
		}
		var got, want []string
		for _, tag := range tags {
			got = append(got, fmt.Sprintf("%s%v<%s", tag.Tag, tag.Aliases, tag.Previous))
		}
		for _, rel := range o.order {
			prev := -1
			for _, other := range o.order {
				if other != rel && o.ancestors[rel][o.commit[other]] {
					prev = other // the last such in order
				}
			}
			want = append(want, fmt.Sprintf("%s%v<%s", o.names[rel][0], o.names[rel][1:], o.name(prev)))
		}
		if !slices.Equal(got, want) {
			t.Errorf("graph %v: Tags:\n got %v\nwant %v", withGraph, got, want)
		}
		for i, tag := range tags {
			if rel := o.order[min(i, len(o.order)-1)]; tag.Commit != o.commit[rel] || tag.Date.IsZero() {
				t.Errorf("graph %v: %s: commit %s, date %v; want commit %s", withGraph, tag.Tag, tag.Commit, tag.Date, o.commit[rel])
			}
		}
		versions, err := r.VersionsMatching(ctx, all, match)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range all {
			if got, want := versions[c].Tag, o.name(o.first(c)); got != want {
				t.Errorf("graph %v: commit %s: version %q, want %q", withGraph, d.name([]string{c}), got, want)
			}
		}
		for _, c := range all {
			tag, ok, err := r.LastTag(ctx, c, match)
			if err != nil {
				t.Fatal(err)
			}
			want := ""
			for i := len(o.order) - 1; i >= 0; i-- {
				if rel := o.order[i]; d.isAncestor(o.commit[rel], c) {
					want = o.name(rel)
					break
				}
			}
			if tag.Tag != want || ok != (want != "") {
				t.Errorf("graph %v: LastTag(%s) = %q, %v; want %q", withGraph, d.name([]string{c}), tag.Tag, ok, want)
			}
		}
		r.Close()
	}
}

// isAncestor asks git whether a is an ancestor of b (or b itself).
func (d *dag) isAncestor(a, b string) bool {
	cmd := exec.Command("git", "-C", d.repo.Dir, "merge-base", "--is-ancestor", a, b)
	cmd.Env = gittest.GitEnv(d.t)
	return cmd.Run() == nil
}

// TestTagsFollowHistoryNotClocks: two tags of one second on different
// commits, the newer commit tagged v0.1.0 and its ancestor nightly-1, or
// the other way round: each tag's commits are its own, though nightly-1
// sorts first by name and no date tells them apart. The same holds when
// the clocks run backwards by days, and for a tag made long after its
// commit.
func TestTagsFollowHistoryNotClocks(t *testing.T) {
	needGit(t)
	at := int64(1_700_000_000)
	for _, newer := range []string{"v0.1.0", "nightly-1"} {
		t.Run(newer, func(t *testing.T) {
			d := newDAG(t)
			d.commit("root", at)
			d.commit("a", at+hour, "root")
			d.commit("b", at+hour, "a") // the same second
			d.commit("c", at+hour, "b")
			older := map[string]string{"v0.1.0": "nightly-1", "nightly-1": "v0.1.0"}[newer]
			d.tag(older, "a")
			d.tag(newer, "c")
			r := openRepo(t, d.repo.Dir)
			defer r.Close()
			versions, err := r.Versions(context.Background(), []string{d.names["root"].String(), d.names["a"].String(), d.names["b"].String(), d.names["c"].String()})
			if err != nil {
				t.Fatal(err)
			}
			for c, want := range map[string]string{"root": older, "a": older, "b": newer, "c": newer} {
				if got := versions[d.names[c].String()].Tag; got != want {
					t.Errorf("%s: version %q, want %q", c, got, want)
				}
			}
			checkTags(t, d, nil)
		})
	}
	t.Run("skew", func(t *testing.T) {
		d := newDAG(t)
		d.commit("root", at)
		d.commit("a", at+10*24*hour, "root")
		d.commit("b", at+2*hour, "a") // three days behind its parent
		d.commit("c", at+3*hour, "b")
		d.tag("v1.0.0", "c")
		d.commit("d", at+20*24*hour, "c")
		d.tag("v0.9.0", "root")
		r := openRepo(t, d.repo.Dir)
		defer r.Close()
		versions, err := r.Versions(context.Background(), []string{d.names["a"].String(), d.names["d"].String()})
		if err != nil {
			t.Fatal(err)
		}
		if got := versions[d.names["a"].String()].Tag; got != "v1.0.0" {
			t.Errorf("a, dated after v1.0.0's commit: version %q, want v1.0.0", got)
		}
		if _, ok := versions[d.names["d"].String()]; ok {
			t.Error("d, after every tag, has a version")
		}
		checkTags(t, d, nil)
	})
}

// TestTagsOfOneCommit: tags of one commit make one release, named by the
// first in version order but for a vX, which comes before its bare X.
func TestTagsOfOneCommit(t *testing.T) {
	needGit(t)
	d := newDAG(t)
	at := int64(1_700_000_000)
	d.commit("root", at)
	d.commit("a", at+hour, "root")
	for _, n := range []string{"1.0.0", "v1.0.0", "release-1", "0.9"} {
		d.tag(n, "a")
	}
	d.commit("b", at+2*hour, "a")
	for _, n := range []string{"2.0.0", "v2.0.0-rc1", "zz", "vzz", "vvzz"} {
		d.tag(n, "b")
	}
	r := openRepo(t, d.repo.Dir)
	defer r.Close()
	tags, err := r.Tags(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tag := range tags {
		got = append(got, fmt.Sprintf("%s %v %s", tag.Tag, tag.Aliases, tag.Previous))
	}
	want := []string{"0.9 [v1.0.0 1.0.0 release-1] ", "2.0.0 [v2.0.0-rc1 vvzz vzz zz] 0.9"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	d.tag("v0.9", "a")
	r2 := openRepo(t, d.repo.Dir)
	defer r2.Close()
	if tags, err = r2.Tags(context.Background(), nil); err != nil || tags[0].Tag != "v0.9" || tags[0].Aliases[0] != "0.9" {
		t.Errorf("with v0.9 beside 0.9: %+v, %v", tags, err)
	}
	checkTags(t, d, nil)
}

// TestTagsMaintenanceBranch: a release of a maintenance branch, made
// after a newer release of main, comes before it by version; a release
// after the branch was merged back follows both, and its previous
// release is the later of them.
func TestTagsMaintenanceBranch(t *testing.T) {
	needGit(t)
	d := newDAG(t)
	at := int64(1_700_000_000)
	d.commit("root", at)
	d.commit("a", at+hour, "root")
	d.tag("v1.0.0", "a")
	d.commit("fix", at+5*hour, "a") // on release-1.0, later than v1.1.0
	d.tag("v1.0.1", "fix")
	d.commit("feat", at+2*hour, "a")
	d.commit("b", at+3*hour, "feat")
	d.tag("v1.1.0", "b")
	d.commit("merge", at+6*hour, "b", "fix")
	d.commit("c", at+7*hour, "merge")
	d.tag("v1.2.0", "c")
	d.commit("head", at+8*hour, "c")
	d.tag("nightly-9", "head")
	r := openRepo(t, d.repo.Dir)
	defer r.Close()
	vOnly := func(tag string) bool { return strings.HasPrefix(tag, "v") }
	tags, err := r.Tags(context.Background(), vOnly)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tag := range tags {
		got = append(got, tag.Tag+"<"+tag.Previous)
	}
	if want := []string{"v1.0.0<", "v1.0.1<v1.0.0", "v1.1.0<v1.0.0", "v1.2.0<v1.1.0"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if err := d.repo.Git.Storer.SetReference(plumbing.NewHashReference("refs/heads/main", d.names["head"])); err != nil {
		t.Fatal(err)
	}
	if last, ok, err := r.LastTag(context.Background(), "HEAD", vOnly); err != nil || !ok || last.Tag != "v1.2.0" || last.Previous != "v1.1.0" {
		t.Errorf("LastTag(HEAD) = %+v, %v, %v; want v1.2.0", last, ok, err)
	}
	if last, ok, _ := r.LastTag(context.Background(), "HEAD", nil); last.Tag != "nightly-9" || !ok {
		t.Errorf("LastTag(HEAD) of every tag = %q, want nightly-9", last.Tag)
	}
	if _, ok, err := r.LastTag(context.Background(), "HEAD", func(string) bool { return false }); ok || err != nil {
		t.Errorf("LastTag with no tag matching: %v, %v", ok, err)
	}
	checkTags(t, d, vOnly)
	checkTags(t, d, nil)
}

// TestTagsRandomHistories compares Tags, VersionsMatching and LastTag
// with what git says of random histories with random tags.
func TestTagsRandomHistories(t *testing.T) {
	needGit(t)
	seeds := uint64(3)
	if n, err := fmt.Sscan(os.Getenv("DIGEST_TEST_SEEDS"), &seeds); err != nil || n != 1 {
		seeds = 3
	}
	names := []string{"v1.9", "v1.10", "v1.0.0-rc1", "v1.0.0", "0.0.5", "v0.0.5", "nightly-1", "nightly-2", "nightly-10", "1.0.0", "v2", "2", "v0.1.0", "release-3"}
	for seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 26))
			// Clocks go back days.
			d, commits, _ := randomDAG(t, rng, randomHistory{commits: 40, firstMerge: 4, mergeOneIn: 4, reach: 10, clockOneIn: 6, behind: 60})
			for _, n := range names {
				if rng.IntN(5) > 0 {
					d.tag(n, commits[rng.IntN(len(commits))])
				}
			}
			checkTags(t, d, nil)
			checkTags(t, d, func(tag string) bool { return !strings.HasPrefix(tag, "nightly") })
		})
	}
}

// TestTagsAnnotatedDates: an annotated tag's release is dated by the tag,
// a lightweight one by its commit.
func TestTagsAnnotatedDates(t *testing.T) {
	needGit(t)
	d := newDAG(t)
	d.commit("root", 1_700_000_000)
	d.commit("a", 1_700_000_000+hour, "root")
	d.tag("v1", "root")
	cmd := exec.Command("git", "-C", d.repo.Dir, "tag", "-a", "-m", "two", "v2", d.names["a"].String())
	cmd.Env = append(gittest.GitEnv(t), "GIT_COMMITTER_DATE=@1800000000 +0200", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@x")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git tag -a: %v\n%s", err, out)
	}
	r := openRepo(t, d.repo.Dir)
	defer r.Close()
	tags, err := r.Tags(context.Background(), nil)
	if err != nil || len(tags) != 2 {
		t.Fatalf("%+v, %v", tags, err)
	}
	if !tags[0].Date.Equal(time.Unix(1_700_000_000, 0)) || !tags[1].Date.Equal(time.Unix(1_800_000_000, 0)) {
		t.Errorf("dates %v, %v", tags[0].Date, tags[1].Date)
	}
	if _, off := tags[1].Date.Zone(); off != 2*3600 {
		t.Errorf("the tagger's zone is lost: %v", tags[1].Date)
	}
	checkTags(t, d, nil)
}

// TestDebuts: authors (one under two addresses, joined by the mailmap;
// one without an address) debut in the first release of any of their
// commits, by history order, unreleased last.
func TestDebuts(t *testing.T) {
	needGit(t)
	d := newDAG(t)
	at := int64(1_700_000_000)
	as := func(name, email string) { d.author = object.Signature{Name: name, Email: email} }
	as("Ada", "ada@old.example")
	d.commit("root", at)
	d.commit("a", at+hour, "root")
	d.tag("v1.0.0", "a")
	as("Bob", "bob@example.com")
	d.commit("fix", at+10*hour, "a") // v1.0.1, after v1.1.0 by the clock
	d.tag("v1.0.1", "fix")
	as("Ada", "ADA@new.example")
	d.commit("feat", at+2*hour, "a")
	as("Bob", "Bob@Example.com")
	d.commit("b", at+3*hour, "feat")
	d.commit("b2", at+3*hour, "b")
	d.tag("v1.1.0", "b2")
	as("Carol", "")
	d.commit("merge", at+11*hour, "b2", "fix")
	as("Dan", "dan@example.com")
	d.commit("d1", at+12*hour, "merge")
	d.commit("d2", at+13*hour, "d1")
	if err := d.repo.Git.Storer.SetReference(plumbing.NewHashReference("refs/heads/main", d.names["d2"])); err != nil {
		t.Fatal(err)
	}
	mm, err := mailmap.Parse([]byte("Ada Lovelace <ada@new.example> <ada@old.example>\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, withGraph := range []bool{false, true} {
		if withGraph {
			d.graph()
		}
		r := openRepo(t, d.repo.Dir)
		debuts, err := r.Debuts(context.Background(), []string{"HEAD"}, nil, mm)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]Debut{
			"ada@new.example": {"v1.0.0", d.names["root"].String()},
			"bob@example.com": {"v1.0.1", d.names["fix"].String()},
			"Carol":           {"", d.names["merge"].String()},
			"dan@example.com": {"", d.names["d1"].String()},
		}
		if len(debuts) != len(want) {
			t.Errorf("graph %v: %d authors, want %d: %v", withGraph, len(debuts), len(want), debuts)
		}
		for k, w := range want {
			if got := debuts[k]; got != w {
				t.Errorf("graph %v: %s: %+v (%s), want %+v (%s)", withGraph, k, got, d.name([]string{got.Commit}), w, d.name([]string{w.Commit}))
			}
		}
		// Only v1.1.0 counted: Bob's debut is there, his first commit in it b.
		only := func(tag string) bool { return tag == "v1.1.0" }
		if debuts, err = r.Debuts(context.Background(), []string{"HEAD"}, only, mm); err != nil {
			t.Fatal(err)
		}
		if got := debuts["bob@example.com"]; got.Version != "v1.1.0" || got.Commit != d.names["b"].String() {
			t.Errorf("graph %v: Bob with v1.1.0 alone: %+v", withGraph, got)
		}
		// From v1.0.1 alone, nobody but Ada and Bob has written anything.
		if debuts, err = r.Debuts(context.Background(), []string{"v1.0.1"}, nil, nil); err != nil || len(debuts) != 2 {
			t.Errorf("graph %v: from v1.0.1: %v, %v", withGraph, debuts, err)
		}
		r.Close()
	}
}

// TestDebutsMatchGit: over random histories and authors, each author's
// debut is the first release (as the oracle orders them) of their
// commits, and its commit one of theirs in it that no other of theirs
// there precedes.
func TestDebutsMatchGit(t *testing.T) {
	needGit(t)
	for seed := range uint64(3) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 4))
			d := newDAG(t)
			at := int64(1_700_000_000)
			people := []object.Signature{{Name: "Ada", Email: "ada@x"}, {Name: "A", Email: "ADA@X"}, {Name: "Bob", Email: "bob@x"}, {Name: "Cy", Email: "cy@x"}, {Name: "Dee", Email: ""}, {Name: "Eve", Email: "eve@x"}}
			var commits []string
			for i := range 50 {
				d.author = people[rng.IntN(len(people))]
				name := fmt.Sprintf("c%d", i)
				var parents []string
				if i > 0 {
					parents = append(parents, commits[max(0, i-1-rng.IntN(min(i, 6)))])
					if i > 3 && rng.IntN(4) == 0 {
						if p := commits[rng.IntN(i)]; !slices.Contains(parents, p) {
							parents = append(parents, p)
						}
					}
				}
				at += int64(rng.IntN(3)-1) * hour
				d.commit(name, at, parents...)
				commits = append(commits, name)
			}
			for i, n := range []string{"v1", "v2", "v3", "v1.5", "v0.9"} {
				d.tag(n, commits[5+rng.IntN(40)+i%2])
			}
			tip := commits[len(commits)-1]
			o := newTagOracle(d, nil)
			r := openRepo(t, d.repo.Dir)
			defer r.Close()
			debuts, err := r.Debuts(context.Background(), []string{d.names[tip].String()}, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			rank := func(c string) int {
				if rel := o.first(c); rel >= 0 {
					return o.rankOf[rel]
				}
				return len(o.order)
			}
			byAuthor := map[string][]string{}
			for _, line := range d.gitLines("log", "--format=%H %ae %an", d.names[tip].String()) {
				f := strings.SplitN(line, " ", 3)
				key := strings.ToLower(f[1])
				if key == "" {
					key = f[2]
				}
				byAuthor[key] = append(byAuthor[key], f[0])
			}
			if len(debuts) != len(byAuthor) {
				t.Errorf("%d authors, git %d", len(debuts), len(byAuthor))
			}
			for key, cs := range byAuthor {
				best := len(o.order) + 1
				for _, c := range cs {
					best = min(best, rank(c))
				}
				got := debuts[key]
				if got.Version != o.name(o.order[min(best, len(o.order)-1)]) && best < len(o.order) || best == len(o.order) && got.Version != "" {
					t.Errorf("%s: debut %q, want rank %d", key, got.Version, best)
				}
				if !slices.Contains(cs, got.Commit) || rank(got.Commit) != best {
					t.Errorf("%s: commit %s is not theirs in their debut", key, d.name([]string{got.Commit}))
				}
				for _, c := range cs {
					if c != got.Commit && rank(c) == best && d.isAncestor(c, got.Commit) {
						t.Errorf("%s: %s precedes their debut commit %s", key, d.name([]string{c}), d.name([]string{got.Commit}))
					}
				}
			}
		})
	}
}

// TestTagsOnMirrors measures Tags, Versions and Debuts over the histories
// of go-git and cobra (DIGEST_GOGIT_REPO, DIGEST_COBRA_REPO): each alone
// on a fresh Repo, then Debuts, Tags and Versions in a row on one, as a
// run that asks for all reads each commit once.
func TestTagsOnMirrors(t *testing.T) {
	for _, env := range []string{"DIGEST_GOGIT_REPO", "DIGEST_COBRA_REPO"} {
		t.Run(env, func(t *testing.T) {
			dir := os.Getenv(env)
			if dir == "" {
				t.Skipf("%s names no clone", env)
			}
			ctx := context.Background()
			var hashes []string
			r := openRepo(t, dir)
			head, err := r.Head()
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Walk(ctx, WalkOptions{Revs: []string{"HEAD~50..HEAD"}}, func(c Commit) error {
				hashes = append(hashes, c.Hash)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			mm, err := r.Mailmap()
			if err != nil {
				t.Fatal(err)
			}
			r.Close()
			ops := []struct {
				name string
				run  func(r *Repo) (int, error)
			}{
				{"Debuts", func(r *Repo) (int, error) {
					d, err := r.Debuts(ctx, []string{head}, nil, mm)
					return len(d), err
				}},
				{"Tags", func(r *Repo) (int, error) {
					tags, err := r.Tags(ctx, nil)
					return len(tags), err
				}},
				{"Versions", func(r *Repo) (int, error) {
					v, err := r.Versions(ctx, hashes)
					return len(v), err
				}},
			}
			var alone, inRow []string
			for _, op := range ops {
				r := openRepo(t, dir)
				start := time.Now()
				n, err := op.run(r)
				if err != nil {
					t.Fatal(err)
				}
				alone = append(alone, fmt.Sprintf("%s %d in %v", op.name, n, time.Since(start).Round(time.Millisecond)))
				r.Close()
			}
			r = openRepo(t, dir)
			defer r.Close()
			for _, op := range ops {
				start := time.Now()
				if _, err := op.run(r); err != nil {
					t.Fatal(err)
				}
				inRow = append(inRow, fmt.Sprintf("%s %v", op.name, time.Since(start).Round(time.Millisecond)))
			}
			t.Logf("alone: %s; in a row: %s", strings.Join(alone, ", "), strings.Join(inRow, ", "))
		})
	}
}

// TestTagsConcurrentCalls: calls on one Repo from several goroutines
// answer as they do one at a time.
func TestTagsConcurrentCalls(t *testing.T) {
	needGit(t)
	d := newDAG(t)
	at := int64(1_700_000_000)
	d.commit("c0", at)
	for i := 1; i < 30; i++ {
		parents := []string{fmt.Sprintf("c%d", i-1)}
		if i%7 == 0 {
			parents = append(parents, fmt.Sprintf("c%d", i-5))
		}
		d.commit(fmt.Sprintf("c%d", i), at+int64(i)*hour, parents...)
		if i%4 == 0 {
			d.tag(fmt.Sprintf("v0.%d", i), fmt.Sprintf("c%d", i))
		}
	}
	tip := d.names["c29"].String()
	var all []string
	for _, h := range d.names {
		all = append(all, h.String())
	}
	ctx := context.Background()
	one := openRepo(t, d.repo.Dir)
	wantTags, err1 := one.Tags(ctx, nil)
	wantVersions, err2 := one.Versions(ctx, all)
	wantDebuts, err3 := one.Debuts(ctx, []string{tip}, nil, nil)
	one.Close()
	if err1 != nil || err2 != nil || err3 != nil {
		t.Fatal(err1, err2, err3)
	}
	r := openRepo(t, d.repo.Dir)
	defer r.Close()
	errs := make(chan error, 12)
	for i := range 12 {
		go func() {
			var err error
			switch i % 3 {
			case 0:
				var tags []Tag
				if tags, err = r.Tags(ctx, nil); err == nil && fmt.Sprint(tags) != fmt.Sprint(wantTags) {
					err = fmt.Errorf("tags %v, want %v", tags, wantTags)
				}
			case 1:
				var v map[string]Version
				if v, err = r.Versions(ctx, all); err == nil && fmt.Sprint(v) != fmt.Sprint(wantVersions) {
					err = fmt.Errorf("versions differ")
				}
			case 2:
				var debuts map[string]Debut
				if debuts, err = r.Debuts(ctx, []string{tip}, nil, nil); err == nil && fmt.Sprint(debuts) != fmt.Sprint(wantDebuts) {
					err = fmt.Errorf("debuts %v, want %v", debuts, wantDebuts)
				}
			}
			errs <- err
		}()
	}
	for range 12 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestTagsShallowAndCanceled: in a shallow clone a tag whose commit was
// not fetched makes no release, and the history stops at the boundary; a
// canceled call leaves nothing behind that would spoil the next one.
func TestTagsShallowAndCanceled(t *testing.T) {
	needGit(t)
	d := newDAG(t)
	at := int64(1_700_000_000)
	d.commit("c0", at)
	for i := 1; i < 6; i++ {
		d.commit(fmt.Sprintf("c%d", i), at+int64(i)*hour, fmt.Sprintf("c%d", i-1))
	}
	d.tag("v1", "c1")
	d.tag("v2", "c4")
	if err := d.repo.Git.Storer.SetReference(plumbing.NewHashReference("refs/heads/main", d.names["c5"])); err != nil {
		t.Fatal(err)
	}
	shallow := d.repo.ShallowClone(3)
	cmd := exec.Command("git", "-C", shallow, "fetch", "-q", "--depth", "3", "origin", "tag", "v1")
	cmd.Env = gittest.GitEnv(t)
	cmd.Run() // v1's commit, if fetched at all, comes with its own short history
	r := openRepo(t, shallow)
	defer r.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.Tags(ctx, nil); err == nil {
		t.Error("a canceled Tags answered")
	}
	tags, err := r.Tags(context.Background(), func(tag string) bool { return tag == "v2" })
	if err != nil || len(tags) != 1 || tags[0].Tag != "v2" || tags[0].Previous != "" {
		t.Fatalf("Tags: %+v, %v", tags, err)
	}
	versions, err := r.Versions(context.Background(), []string{d.names["c3"].String(), d.names["c5"].String()})
	if err != nil {
		t.Fatal(err)
	}
	if versions[d.names["c3"].String()].Tag != "v2" || versions[d.names["c5"].String()].Tag != "" {
		t.Errorf("versions: %+v", versions)
	}
	debuts, err := r.Debuts(context.Background(), []string{"HEAD"}, nil, nil)
	if err != nil || debuts["ada@example.com"].Commit == "" {
		t.Errorf("Debuts: %+v, %v", debuts, err)
	}
}

// FuzzCommitAuthor reads the author of any commit header: no panic, and
// UTF-8 out, as Walk's commits give it.
func FuzzCommitAuthor(f *testing.F) {
	f.Add([]byte("tree 0\nauthor Ada <ada@x> 1 +0000\ncommitter C <c> 1 +0000\n\nmsg"))
	f.Add([]byte("tree 0\nauthor Ren\xe9 <r@x> 1 +0000\nencoding ISO-8859-1\n\n"))
	f.Add([]byte("author <> \n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		name, email := commitAuthor(data)
		if !utf8.ValidString(name) || !utf8.ValidString(email) {
			t.Fatalf("%q <%q>", name, email)
		}
	})
}

func TestCommitAuthorDecodesItsEncoding(t *testing.T) {
	name, email := commitAuthor([]byte("tree 0\nauthor Ren\xe9 <r@x> 1 +0000\ncommitter C <c> 1 +0000\nencoding ISO-8859-1\n\nmsg"))
	if name != "René" || email != "r@x" {
		t.Errorf("got %q <%s>", name, email)
	}
}
