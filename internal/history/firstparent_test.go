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
)

// firstParent turns queries into --first-parent ones.
func firstParent(queries []query) []query {
	out := make([]query, len(queries))
	for i, q := range queries {
		q.opts.FirstParent = true
		out[i] = q
	}
	return out
}

// TestFirstParentMatchesGitRevList: --first-parent over feature branches
// of several commits merged into main, main merged into a branch, an
// octopus merge, and ranges whose excluded side reaches the selected side
// through a second parent only (git still hides those commits: it walks
// the excluded side through every parent).
func TestFirstParentMatchesGitRevList(t *testing.T) {
	needGit(t)
	d := newDAG(t)
	at := int64(1_700_000_000)
	d.commit("root", at)
	d.commit("m1", at+1*hour, "root")
	d.commit("a1", at+2*hour, "m1") // feature a: three commits
	d.commit("a2", at+3*hour, "a1")
	d.commit("m2", at+4*hour, "m1")
	d.commit("a3", at+5*hour, "a2")
	d.commit("ma", at+6*hour, "m2", "a3") // a merged
	d.commit("b1", at+7*hour, "m2")       // feature b, from before the merge
	d.commit("b2", at+8*hour, "b1")
	d.commit("bm", at+9*hour, "b2", "ma") // main merged into b
	d.commit("b3", at+10*hour, "bm")
	d.commit("m3", at+11*hour, "ma")
	d.commit("mb", at+12*hour, "m3", "b3") // b merged
	d.commit("c1", at+13*hour, "mb")
	d.commit("e1", at+13*hour, "mb") // the same second
	d.commit("g1", at+14*hour, "root")
	d.commit("octo", at+15*hour, "mb", "c1", "e1", "g1")
	d.commit("m4", at+16*hour, "octo")
	d.commit("f1", at+17*hour, "a2") // a later branch from a's middle
	d.commit("f2", at+18*hour, "f1")
	d.commit("head", at+19*hour, "m4", "f2")
	queries := firstParent([]query{
		{starts: []string{"head"}},
		{starts: []string{"b3"}},
		{starts: []string{"head"}, hidden: []string{"ma"}},
		{starts: []string{"head"}, hidden: []string{"mb"}},
		{starts: []string{"b3"}, hidden: []string{"ma"}}, // ma reaches b's base through its first parent
		{starts: []string{"f2"}, hidden: []string{"ma"}}, // ma hides a1 a2 through its second parent
		{starts: []string{"ma"}, hidden: []string{"f2"}},
		{starts: []string{"octo"}, hidden: []string{"e1"}},
		{starts: []string{"head", "b3"}, hidden: []string{"m2"}},
		{starts: []string{"head"}, hidden: []string{"g1", "a3"}},
		{starts: []string{"head"}, opts: WalkOptions{Since: time.Unix(at+9*hour, 0)}},
		{starts: []string{"head"}, hidden: []string{"m1"}, opts: WalkOptions{Since: time.Unix(at+5*hour, 0), Until: time.Unix(at+16*hour, 0)}},
	})
	d.sameAsGit(t, queries)
}

// TestFirstParentRandomHistories compares --first-parent walks of random
// histories (merges of up to four parents, tied and skewed dates) with
// git's.
func TestFirstParentRandomHistories(t *testing.T) {
	needGit(t)
	seeds := uint64(4)
	if n, err := fmt.Sscan(os.Getenv("DIGEST_TEST_SEEDS"), &seeds); err != nil || n != 1 {
		seeds = 4
	}
	for seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 11))
			d, names, at := randomDAG(t, rng, randomHistory{commits: 60, firstMerge: 5, mergeOneIn: 3, reach: 12, clockOneIn: 8, behind: 4})
			pick := func(n int) []string {
				var out []string
				for range n {
					out = append(out, names[len(names)/2+rng.IntN(len(names)/2)])
				}
				return out
			}
			var queries []query
			for range 12 {
				queries = append(queries, query{starts: pick(1 + rng.IntN(2)), hidden: pick(1 + rng.IntN(2))})
			}
			queries = append(queries, query{starts: pick(1)}, query{starts: pick(2)},
				query{starts: pick(1), hidden: pick(1), opts: WalkOptions{Since: time.Unix(at-20*hour, 0)}})
			d.sameAsGit(t, firstParent(queries))
		})
	}
}

// TestFirstParentCountsMergesAndParents: a merge on the first-parent line
// is selected, counted by MaxCommits, and says it has two parents.
func TestFirstParentCountsMergesAndParents(t *testing.T) {
	needGit(t)
	d := newDAG(t)
	at := int64(1_700_000_000)
	d.commit("root", at)
	d.commit("f1", at+hour, "root")
	d.commit("f2", at+2*hour, "f1")
	d.commit("m", at+3*hour, "root", "f2")
	d.commit("n", at+4*hour, "m")
	r := openRepo(t, d.repo.Dir)
	defer r.Close()
	var got []string
	parents := map[string]int{}
	err := r.Walk(context.Background(), WalkOptions{Revs: []string{d.names["n"].String()}, FirstParent: true, MaxCommits: 2}, func(c Commit) error {
		got = append(got, c.Hash)
		parents[c.Hash] = c.Parents
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{d.names["n"].String(), d.names["m"].String()}; !slices.Equal(got, want) {
		t.Fatalf("got %s, want n m", d.name(got))
	}
	if parents[d.names["m"].String()] != 2 || parents[d.names["n"].String()] != 1 {
		t.Errorf("parents: %v", parents)
	}
	count := d.revList(query{starts: []string{"n"}, opts: WalkOptions{FirstParent: true}})
	if len(count) != 3 {
		t.Errorf("git rev-list --first-parent n: %d commits, want 3", len(count))
	}
}

// TestFirstParentOnGoGitMirror: v5.11.0..v5.12.0 of go-git's history,
// first parents only, is git's 44 commits. DIGEST_GOGIT_REPO names the
// clone (a bare mirror will do).
func TestFirstParentOnGoGitMirror(t *testing.T) {
	needGit(t)
	dir := os.Getenv("DIGEST_GOGIT_REPO")
	if dir == "" {
		t.Skip("DIGEST_GOGIT_REPO names no clone of go-git")
	}
	r := openRepo(t, dir)
	defer r.Close()
	const rev = "v5.11.0..v5.12.0"
	start := time.Now()
	var got []string
	if err := r.Walk(context.Background(), WalkOptions{Revs: []string{rev}, FirstParent: true}, func(c Commit) error {
		got = append(got, c.Hash)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	ours := time.Since(start)
	start = time.Now()
	cmd := exec.Command("git", "-C", dir, "rev-list", "--first-parent", rev)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	theirs := time.Since(start)
	want := strings.Fields(string(out))
	if !slices.Equal(got, want) {
		t.Fatalf("got %d commits, git %d", len(got), len(want))
	}
	t.Logf("%s --first-parent: %d commits; digest %v, git rev-list %v", rev, len(got), ours, theirs)
}
