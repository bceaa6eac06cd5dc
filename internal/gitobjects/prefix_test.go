package gitobjects

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestWithPrefixFindsPackedAndLoose checks the prefix search against a
// search of every object, for prefixes of odd and even length, in a pack
// and loose beside it.
func TestWithPrefixFindsPackedAndLoose(t *testing.T) {
	needGit(t)
	r := history(t, 30)
	packObjects(t, r.Dir, []string{"--all"})
	os.WriteFile(filepath.Join(r.Dir, "loose.txt"), []byte("loose\n"), 0o644)
	gitRun(t, r.Dir, "", "add", "loose.txt")
	gitRun(t, r.Dir, "", "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qm", "loose")
	loose := strings.TrimSpace(gitRun(t, r.Dir, "", "rev-parse", "HEAD"))

	db, err := Open(filepath.Join(r.Dir, ".git", "objects"), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// Every object, as git lists them.
	all := strings.Fields(gitRun(t, r.Dir, "", "cat-file", "--batch-all-objects", "--batch-check=%(objectname)"))
	slices.Sort(all)
	all = slices.Compact(all)
	if !slices.Contains(all, loose) || len(all) < 100 {
		t.Fatalf("fixture: %d objects, loose commit among them: %v", len(all), slices.Contains(all, loose))
	}
	for _, h := range append(slices.Clone(all[:40]), loose) {
		for _, n := range []int{2, 3, 4, 7, 40} {
			prefix := h[:n]
			got, err := db.WithPrefix(strings.ToUpper(prefix), 1000)
			if err != nil {
				t.Fatal(err)
			}
			var want []ID
			for _, o := range all {
				if strings.HasPrefix(o, prefix) {
					want = append(want, MustParseID(o))
				}
			}
			slices.SortFunc(got, func(a, b ID) int { return strings.Compare(a.String(), b.String()) })
			slices.SortFunc(want, func(a, b ID) int { return strings.Compare(a.String(), b.String()) })
			if !slices.Equal(got, want) {

				t.Fatalf("WithPrefix(%q) = %v, want %v (loose %s)", prefix, got, want, loose)
			}
		}
	}
	if got, _ := db.WithPrefix(all[0][:1], 2); len(got) != 2 {
		t.Errorf("WithPrefix with max 2 gave %d", len(got))
	}
	for _, bad := range []string{"", "xyz", strings.Repeat("a", 41)} {
		if _, err := db.WithPrefix(bad, 10); err == nil {
			t.Errorf("WithPrefix(%q) accepted", bad)
		}
	}
}
