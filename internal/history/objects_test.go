package history

import (
	"context"
	"reflect"
	"testing"

	"github.com/digest-cli/digest/internal/gittest"
)

// everything walks the repository with every option that reads objects
// (merges, renames, a pathspec) and diffs each commit.
func everything(t *testing.T, r *Repo) (commits []Commit, diffs []Diff) {
	t.Helper()
	ctx := context.Background()
	err := r.Walk(ctx, WalkOptions{All: true, IncludeMerges: true}, func(c Commit) error {
		commits = append(commits, c)
		for _, renames := range []bool{false, true} {
			d, err := r.Diff(ctx, c, DiffOptions{Renames: renames, MaxFileBytes: 20_000})
			if err != nil {
				return err
			}
			diffs = append(diffs, d)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	head, err := r.Head()
	if err != nil {
		t.Fatal(err)
	}
	root, err := r.RootCommit(ctx, head, nil)
	if err != nil {
		t.Fatal(err)
	}
	commits = append(commits, Commit{Hash: root})
	return commits, diffs
}

// TestGoGitFallbackReadsTheSame: a repository gitobjects cannot read (a
// SHA-256 one, say) is read through go-git instead, with the same result.
func TestGoGitFallbackReadsTheSame(t *testing.T) {
	f := gittest.NewFixture(t)
	r, err := Open(f.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.objects == nil {
		t.Fatal("gitobjects did not open the fixture")
	}
	commits, diffs := everything(t, r)

	fallback, err := Open(f.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer fallback.Close()
	fallback.objects.Close()
	fallback.objects = nil
	commits2, diffs2 := everything(t, fallback)
	if !reflect.DeepEqual(commits, commits2) {
		t.Errorf("walks differ:\n gitobjects %+v\n go-git     %+v", commits, commits2)
	}
	if !reflect.DeepEqual(diffs, diffs2) {
		t.Errorf("diffs differ:\n gitobjects %+v\n go-git     %+v", diffs, diffs2)
	}
	if len(commits) < 8 || len(diffs) < 16 {
		t.Fatalf("compared %d commits and %d diffs", len(commits), len(diffs))
	}
}
