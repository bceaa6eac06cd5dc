package revision

import "testing"

func TestApplyRefspecs(t *testing.T) {
	specs := []string{"^refs/heads/secret/*", "+refs/heads/*:refs/remotes/origin/*", "refs/tags/v1:refs/tags/first"}
	for _, tt := range []struct {
		ref, want string
		ok        bool
	}{
		{"refs/heads/main", "refs/remotes/origin/main", true},
		{"refs/heads/a/b", "refs/remotes/origin/a/b", true},
		{"refs/heads/secret/x", "", false}, // a negative refspec excludes
		{"refs/tags/v1", "refs/tags/first", true},
		{"refs/tags/v2", "", false},
	} {
		got, ok := applyRefspecs(specs, tt.ref)
		if got != tt.want || ok != tt.ok {
			t.Errorf("applyRefspecs(%q) = %q, %v; want %q, %v", tt.ref, got, ok, tt.want, tt.ok)
		}
	}
	if got, ok := applyRefspecs([]string{"refs/heads/*-wip:refs/wip/*"}, "refs/heads/x-wip"); !ok || got != "refs/wip/x" {
		t.Errorf("a glob with a suffix: %q, %v", got, ok)
	}
}
