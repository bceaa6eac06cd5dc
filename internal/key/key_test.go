package key

import "testing"

func TestOfIsCanonical(t *testing.T) {
	if Of("ab", "c") == Of("a", "bc") {
		t.Error(`Of("ab","c") == Of("a","bc"): parts are not delimited`)
	}
	if Of("a") == Of("a", "") {
		t.Error("an empty trailing part does not change the key")
	}
	if Of("x", "y") != Of("x", "y") {
		t.Error("Of is not deterministic")
	}
	if got := Of(); got != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Errorf("Of() = %s, want the SHA-256 of nothing", got)
	}
}

func TestRepoID(t *testing.T) {
	a := RepoID("a2730b5417d427fa4a1150f40040d89252132138")
	if len(a) != 16 || a == RepoID("be57f07ffffffffffffffffffffffffffffffff0") {
		t.Errorf("RepoID = %q: want 16 hex digits that differ between roots", a)
	}
	if got := Commit(a, "abc"); got != a+":abc" {
		t.Errorf("Commit = %q", got)
	}
}

// TestRepoIDIsStable pins the id of a known root: changing how ids are
// derived would orphan every cache that exists.
func TestRepoIDIsStable(t *testing.T) {
	if got := RepoID("a2730b5417d427fa4a1150f40040d89252132138"); got != "7f0d143149efbadb" {
		t.Errorf("RepoID changed to %s", got)
	}
}
