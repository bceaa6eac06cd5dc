package bump

import (
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"
)

var (
	fix      = Change{Type: "fix"}
	feat     = Change{Type: "feat"}
	docs     = Change{Type: "docs"}
	breaking = Change{Type: "fix", Breaking: true}
)

func TestLevel(t *testing.T) {
	tests := []struct {
		changes []Change
		want    string
	}{
		{nil, ""},
		{[]Change{docs}, Patch},
		{[]Change{{Type: "other"}}, Patch},
		{[]Change{{}}, Patch},
		{[]Change{fix, docs}, Patch},
		{[]Change{fix, feat, docs}, Minor},
		{[]Change{{Type: " FEAT "}}, Minor},
		{[]Change{{Type: "feature"}}, Patch}, // committype normalizes aliases
		{[]Change{fix, breaking, feat}, Major},
		{[]Change{{Type: "docs", Breaking: true}}, Major},
	}
	for _, tt := range tests {
		if got := Level(tt.changes); got != tt.want {
			t.Errorf("Level(%+v) = %q, want %q", tt.changes, got, tt.want)
		}
	}
}

func TestNext(t *testing.T) {
	tests := []struct {
		last    string
		changes []Change
		want    string
	}{
		// From 1.0.0 on.
		{"v1.2.3", []Change{fix}, "v1.2.4"},
		{"v1.2.3", []Change{docs, feat}, "v1.3.0"},
		{"v1.2.3", []Change{feat, breaking}, "v2.0.0"},
		{"1.2.3", []Change{feat}, "1.3.0"},
		{"v100.0.0", []Change{breaking}, "v101.0.0"},
		// 0.x: breaking is minor, anything else patch.
		{"v0.4.2", []Change{fix}, "v0.4.3"},
		{"v0.4.2", []Change{feat}, "v0.4.3"},
		{"v0.4.2", []Change{breaking}, "v0.5.0"},
		{"v0.0.1", []Change{breaking}, "v0.1.0"},
		// Prefixes are kept.
		{"release-1.2.3", []Change{feat}, "release-1.3.0"},
		{"cli/v1.2.3", []Change{fix}, "cli/v1.2.4"},
		{"tauri-v1.5.4", []Change{feat}, "tauri-v1.6.0"},
		{"zzz-123/test/1.0.0", []Change{fix}, "zzz-123/test/1.0.1"},
		{"app2-1.2.3", []Change{fix}, "app2-1.2.4"},
		{"v1.2.3-rc.1+build.5", []Change{fix}, "v1.2.3"},
		// Pre-releases are released at their level or above.
		{"v1.2.0-rc.1", []Change{fix}, "v1.2.0"},
		{"v1.2.0-rc.1", []Change{feat}, "v1.2.0"},
		{"v1.2.0-rc.1", []Change{breaking}, "v2.0.0"},
		{"v1.2.1-rc.1", []Change{feat}, "v1.3.0"},
		{"v1.2.1-rc.1", []Change{fix}, "v1.2.1"},
		{"v2.0.0-beta.3", []Change{breaking}, "v2.0.0"},
		{"v0.5.0-rc.1", []Change{breaking}, "v0.5.0"},
		{"v0.5.1-rc.1", []Change{breaking}, "v0.6.0"},
		{"v1.2.3+build.7", []Change{fix}, "v1.2.4"},
		// No changes, no tag.
		{"v1.2.3", nil, "v1.2.3"},
		{"", []Change{breaking}, First},
		{"", nil, First},
	}
	for _, tt := range tests {
		got, err := Next(tt.last, tt.changes)
		if err != nil || got != tt.want {
			t.Errorf("Next(%q, %+v) = %q, %v; want %q", tt.last, tt.changes, got, err, tt.want)
		}
	}
}

func TestNextErrors(t *testing.T) {
	for _, last := range []string{
		"nightly", "v1", "v1.2", "v1.2.3.4", "v01.2.3", "v1.2.3-", "v1.2.3-rc..1", "v1.2.3+",
		"v1.2.3-rc_1", "v1.2.3 ", "1.2.3\n", "v1.2.99999999999999999999", strings.Repeat("v", 300) + "1.2.3",
	} {
		got, err := Next(last, []Change{fix})
		if err == nil {
			t.Errorf("Next(%q) = %q, want an error", last, got)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, "--tag-pattern") || strings.Contains(msg, "\n") {
			t.Errorf("Next(%q): %q; want one line that says what to try", last, msg)
		}
		if len(last) < maxTag && !strings.Contains(msg, strings.TrimSpace(last)) {
			t.Errorf("Next(%q): %q does not name the tag", last, msg)
		}
	}
	if _, err := Next("v1.2.18446744073709551615", []Change{fix}); err == nil || !strings.Contains(err.Error(), "cannot be raised") {
		t.Errorf("patch overflow: %v", err)
	}
}

func TestForce(t *testing.T) {
	tests := []struct{ last, level, want string }{
		{"v1.2.3", Major, "v2.0.0"},
		{"v1.2.3", Minor, "v1.3.0"},
		{"v1.2.3", Patch, "v1.2.4"},
		{"v0.4.2", Major, "v1.0.0"},
		{"v0.4.2", Minor, "v0.5.0"},
		{"v1.2.0-rc.1", Minor, "v1.2.0"},
		{"", Major, "v1.0.0"},
		{"", Minor, "v0.1.0"},
		{"", Patch, "v0.0.1"},
	}
	for _, tt := range tests {
		got, err := Force(tt.last, tt.level)
		if err != nil || got != tt.want {
			t.Errorf("Force(%q, %q) = %q, %v; want %q", tt.last, tt.level, got, err, tt.want)
		}
	}
	if _, err := Force("v1.2.3", "auto"); err == nil || !strings.Contains(err.Error(), "major, minor or patch") {
		t.Errorf("Force with level auto: %v", err)
	}
	if _, err := Force("nightly", Major); err == nil {
		t.Error("Force(nightly) gave no error")
	}
}

func FuzzNext(f *testing.F) {
	for _, s := range []string{"v1.2.3", "release-1.2.3-rc.1+b", "0.0.0", "cli/v0.1.0-alpha", "v1.2", "", "a1.2.3.4"} {
		f.Add(s, false, "feat")
		f.Add(s, true, "fix")
	}
	f.Fuzz(func(t *testing.T, last string, breaking bool, typ string) {
		changes := []Change{{Breaking: breaking, Type: typ}}
		next, err := Next(last, changes)
		if err != nil {
			if strings.Contains(err.Error(), "\n") && len(last) < maxTag {
				t.Fatalf("error %q spans lines", err)
			}
			return
		}
		if strings.TrimSpace(last) == "" {
			if next != First {
				t.Fatalf("Next(%q) = %q", last, next)
			}
			return
		}
		prefix, was, err := parse(last)
		if err != nil {
			t.Fatalf("Next(%q) = %q but parse fails: %v", last, next, err)
		}
		if !strings.HasPrefix(next, prefix) {
			t.Fatalf("Next(%q) = %q lost the prefix %q", last, next, prefix)
		}
		now, err := semver.StrictNewVersion(next[len(prefix):])
		if err != nil {
			t.Fatalf("Next(%q) = %q, no version: %v", last, next, err)
		}
		if !now.GreaterThan(was) {
			t.Fatalf("Next(%q) = %q, not after it", last, next)
		}
		if now.Prerelease() != "" || now.Metadata() != "" {
			t.Fatalf("Next(%q) = %q keeps a pre-release or metadata", last, next)
		}
	})
}

// TestApplied: the level Next raises a version by, 0.x read as Next
// reads it.
func TestApplied(t *testing.T) {
	breaking := []Change{{Breaking: true, Type: "feat"}}
	feat := []Change{{Type: "feat"}}
	for _, c := range []struct {
		last    string
		changes []Change
		want    string
	}{
		{"v0.1.0", breaking, Minor},
		{"v0.1.0", feat, Patch},
		{"v1.4.2", breaking, Major},
		{"v1.4.2", feat, Minor},
		{"v1.4.2", nil, ""},
		{"", feat, Minor},
	} {
		if got := Applied(c.last, c.changes); got != c.want {
			t.Errorf("Applied(%q, %v) = %q, want %q", c.last, c.changes, got, c.want)
		}
	}
}
