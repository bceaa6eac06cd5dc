package versionsort

import (
	"math/rand/v2"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/gittest"
)

// gitOrder tags one commit with every name and returns them as `git tag
// --sort=version:refname` lists them.
func gitOrder(t *testing.T, names []string) []string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	r := gittest.New(t)
	r.Write("a", "a\n").Commit("a")
	for _, n := range names {
		r.Tag(n)
	}
	cmd := exec.Command("git", "-C", r.Dir, "tag", "--sort=version:refname")
	cmd.Env = gittest.GitEnv(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git tag --sort=version:refname: %v", err)
	}
	return strings.Fields(string(out))
}

// ourOrder sorts names by Compare, ties (none: Compare is 0 for equal
// names only) by name, as git's ref-filter breaks them.
func ourOrder(names []string) []string {
	out := slices.Clone(names)
	slices.SortStableFunc(out, func(a, b string) int {
		if c := Compare(a, b); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	return out
}

// TestCompareMatchesGitTagSort: the tags a project mixes (v-prefixed and
// bare, pre-releases, nightlies, leading zeros) sort as git sorts them.
func TestCompareMatchesGitTagSort(t *testing.T) {
	names := []string{
		"v1.9", "v1.10", "v1.0.0-rc1", "v1.0.0", "v1.0.0-rc2", "v1.0.0-rc10", "0.0.5", "v0.0.5",
		"nightly-1", "nightly-2", "nightly-10", "v2.0.0-beta.1", "v2.0.0-beta.2", "v2.0.0", "v2.0.0-alpha",
		"1.05", "1.5", "1.50", "1.005", "v1.2.3.4", "v01.2", "v1.02", "release-2024-01-02", "release-2024-1-3",
		"v10.0.0", "v9.9.9", "v0.0.0", "0", "00", "000", "01", "010", "1", "10", "a", "A", "v", "V1", "go1.21.0",
		"go1.21rc1", "go1.21.10", "x9", "x09", "x009", "x10",
	}
	want := gitOrder(t, names)
	if got := ourOrder(names); !slices.Equal(got, want) {
		t.Errorf("order:\n got %v\nwant %v", got, want)
	}
}

// TestCompareMatchesGitOnRandomNames sorts random names of digits, dots,
// dashes and letters both ways.
func TestCompareMatchesGitOnRandomNames(t *testing.T) {
	rng := rand.New(rand.NewPCG(26, 1))
	const alphabet = "0000111223456789..--vrcab"
	seen := map[string]bool{}
	var names []string
	for len(names) < 300 {
		var b strings.Builder
		b.WriteByte("v0123456789ab"[rng.IntN(13)])
		for range 1 + rng.IntN(9) {
			b.WriteByte(alphabet[rng.IntN(len(alphabet))])
		}
		n := b.String()
		// Keep to names git takes as tags.
		if strings.HasSuffix(n, ".") || strings.Contains(n, "..") || seen[n] {
			continue
		}
		seen[n] = true
		names = append(names, n)
	}
	want := gitOrder(t, names)
	if got := ourOrder(names); !slices.Equal(got, want) {
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("first difference at %d: got %q, want %q", i, got[i], want[i])
			}
		}
	}
}

func TestCompareCases(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{
		{"v1.9", "v1.10", -1},
		{"v1.10", "v1.9", 1},
		{"v1.0.0", "v1.0.0-rc1", -1}, // no versionsort.suffix: a suffix sorts after
		{"0.0.5", "v0.0.5", -1},
		{"1.05", "1.5", -1},
		{"1.005", "1.05", -1},
		{"abc", "abc", 0},
		{"", "", 0},
		{"", "a", -1},
		{"a\x00b", "a\x00c", 0}, // read as C strings
		{"9", "10", -1},
		{"09", "9", -1},
	} {
		if got := Compare(tt.a, tt.b); got != tt.want {
			t.Errorf("Compare(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

// FuzzCompare checks that Compare is an order: antisymmetric, zero only
// for equal C strings.
func FuzzCompare(f *testing.F) {
	for _, s := range [][2]string{{"v1.9", "v1.10"}, {"1.05", "1.5"}, {"v1.0.0-rc1", "v1.0.0"}, {"007", "7"}, {"", "0"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		ab, ba := Compare(a, b), Compare(b, a)
		if ab != -ba || ab < -1 || ab > 1 {
			t.Fatalf("Compare(%q, %q) = %d, Compare(%q, %q) = %d", a, b, ab, b, a, ba)
		}
		if (ab == 0) != (cString(a) == cString(b)) {
			t.Fatalf("Compare(%q, %q) = %d", a, b, ab)
		}
	})
}
