package offline

import (
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/prompt"
)

func TestSplit(t *testing.T) {
	for _, c := range []struct{ summary, short, detail string }{
		{"Add the --bump flag. Changes 2 files in cmd (+40/-3): modifies summarize.go (runSummarize), root.go.",
			"Add the --bump flag.", "Changes 2 files in cmd (+40/-3): modifies summarize.go (runSummarize), root.go."},
		{"Fix a typo. The README said tehm. Changes 1 file in the repository root (+1/-1): modifies README.md.",
			"Fix a typo. The README said tehm.", "Changes 1 file in the repository root (+1/-1): modifies README.md."},
		{"Update dependencies. Leaves out go.sum (lockfile).", "Update dependencies.", "Leaves out go.sum (lockfile)."},
		// A body sentence that reads like the details: the last one is.
		{"Split the engine. Changes 2 files of the API at once. Changes 3 files in internal (+9/-9): modifies a.go.",
			"Split the engine. Changes 2 files of the API at once.", "Changes 3 files in internal (+9/-9): modifies a.go."},
		{"A summary a hosted model wrote, with no details.", "A summary a hosted model wrote, with no details.", ""},
		// Nothing but the details: kept whole, an entry needs a text.
		{"Commit without a message. Changes 1 file in docs (+1/-0): adds a.md.",
			"Commit without a message. Changes 1 file in docs (+1/-0): adds a.md.", ""},
		{"", "", ""},
	} {
		short, detail := Split(c.summary)
		if short != c.short || detail != c.detail {
			t.Errorf("Split(%q) =\n%q, %q\nwant\n%q, %q", c.summary, short, detail, c.short, c.detail)
		}
	}
}

// TestSplitReadsWhatSummarizeWrites: the details sentence Summarize adds
// is the one Split takes off, whatever the message says.
func TestSplitReadsWhatSummarizeWrites(t *testing.T) {
	files := []prompt.File{{Path: "internal/engine/engine.go", Status: 'M', Added: 12, Removed: 3}, {Path: "go.sum", Status: 'M', Skip: "lockfile"}}
	for _, msg := range []string{"feat(engine): pace by tokens", "Changes 2 files at once\n\nChanges 3 files of the API.", "Fix it.\n\nLeaves out nothing."} {
		full := Summarize(prompt.Commit{Message: msg, Files: files})
		short, detail := Split(full)
		if detail == "" || short+" "+detail != full {
			t.Errorf("%q: Split(%q) = %q + %q", msg, full, short, detail)
		}
	}
}

func FuzzSplit(f *testing.F) {
	f.Add("Add x. Changes 2 files in cmd (+1/-1): modifies a.go.")
	f.Add("Leaves out a.")
	f.Fuzz(func(t *testing.T, s string) {
		short, detail := Split(s)
		if detail == "" && short != s {
			t.Fatalf("Split(%q) lost text: %q", s, short)
		}
		if detail != "" && (!strings.HasSuffix(s, detail) || strings.TrimSpace(s[:len(s)-len(detail)]) != short) {
			t.Fatalf("Split(%q) = %q + %q, which is not the summary", s, short, detail)
		}
	})
}

// TestSummarizeTitlesAMergeByItsPullRequest: a merge commit under
// --first-parent is summarized by its pull request's title, not by the
// forge's "Merge pull request" line, and the title is not said twice.
func TestSummarizeTitlesAMergeByItsPullRequest(t *testing.T) {
	msg := "Merge pull request #1048 from pjbgf/fix-reset-validation\n\ngit: Fix Worktree.Reset validation\n\nThe check ran before the commit was read."
	got, _ := Split(Summarize(prompt.Commit{Message: msg, Files: []prompt.File{{Path: "worktree.go", Status: 'M', Added: 3, Removed: 1}}}))
	if want := "Fix Worktree.Reset validation. The check ran before the commit was read."; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
}
