package mergemsg

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		message string
		want    PR
		ok      bool
	}{
		// GitHub merges, as go-git's and cobra's histories hold them.
		{"github merge", "Merge pull request #2331 from Soph/soph/sideband-muxer-size-limit\n\nplumbing: protocol/packp/sideband, Test the muxer packet size limit\n",
			PR{Number: "2331", Sigil: '#', Title: "plumbing: protocol/packp/sideband, Test the muxer packet size limit", Owner: "Soph", Branch: "soph/sideband-muxer-size-limit"}, true},
		{"github merge of a bot's branch", "Merge pull request #2321 from go-git/renovate/main-major-github-actions\n\nbuild: Update actions/stale action to v11 (main)\n",
			PR{Number: "2321", Sigil: '#', Title: "build: Update actions/stale action to v11 (main)", Owner: "go-git", Branch: "renovate/main-major-github-actions"}, true},
		{"github merge without a body", "Merge pull request #2237 from go-git/v2-consolidated\n",
			PR{Number: "2237", Sigil: '#', Owner: "go-git", Branch: "v2-consolidated"}, true},
		{"github merge, title over a trailer", "Merge pull request #907 from erizocosmico/feature/fix-tests\n\nplumbing: packfile, fix package tests\nSigned-off-by: Miguel Molina <miguel@erizocosmi.co>\n\n",
			PR{Number: "907", Sigil: '#', Title: "plumbing: packfile, fix package tests", Owner: "erizocosmico", Branch: "feature/fix-tests"}, true},
		{"github merge, body only a trailer", "Merge pull request #12 from a/b\n\nSigned-off-by: A U Thor <a@example.com>\n",
			PR{Number: "12", Sigil: '#', Owner: "a", Branch: "b"}, true},
		{"github merge, CRLF and blank lines", "Merge pull request #353 from bogem/helpfunc\r\n\r\n\r\nFix condition in HelpFunc\r\n",
			PR{Number: "353", Sigil: '#', Title: "Fix condition in HelpFunc", Owner: "bogem", Branch: "helpfunc"}, true},
		{"github merge from a deleted fork", "Merge pull request #77 from unknown repository\n\nFix it\n",
			PR{Number: "77", Sigil: '#', Title: "Fix it"}, true},

		// GitHub squash merges, as cobra's history holds them.
		{"github squash", "fix: quote args in fish shell completion (#2285)\n\nCo-authored-by: someone <s@example.com>",
			PR{Number: "2285", Sigil: '#', Title: "fix: quote args in fish shell completion", Squash: true}, true},
		{"github squash of a revert", "Revert \"Make detection for test-binary more universal (#2173)\" (#2235)",
			PR{Number: "2235", Sigil: '#', Title: "Revert \"Make detection for test-binary more universal (#2173)\"", Squash: true}, true},
		{"revert without a number of its own", "Revert \"Make detection for test-binary more universal (#2173)\"", PR{}, false},
		{"squash of a squash", "Fix x (#12) (#13)", PR{Number: "13", Sigil: '#', Title: "Fix x (#12)", Squash: true}, true},
		{"number inside the subject", "Fix #12 (again)", PR{}, false},
		{"number not at the end", "Fix x (#12) in the parser", PR{}, false},
		{"number with no space before", "Fix x(#12)", PR{}, false},
		{"leading zero", "Fix x (#012)", PR{}, false},
		{"only a number", "(#12)", PR{}, false},

		// GitLab.
		{"gitlab merge", "Merge branch 'feature/login' into 'main'\n\nAdd a login page\n\nCloses #17\n\nSee merge request group/project!42",
			PR{Number: "42", Sigil: '!', Title: "Add a login page", Branch: "feature/login"}, true},
		{"gitlab merge, old reference", "Merge branch 'fix-crash' into 'master'\n\nFix the crash on start\n\nSee merge request !7\n",
			PR{Number: "7", Sigil: '!', Title: "Fix the crash on start", Branch: "fix-crash"}, true},
		{"gitlab merge, nested groups and a trailer after", "Merge branch 'x' into 'main'\n\nTitle\n\nSee merge request a/b/c!1234\n\nCo-authored-by: B <b@example.com>\n",
			PR{Number: "1234", Sigil: '!', Title: "Title", Branch: "x"}, true},
		{"gitlab merge of a project's own template", "Add a login page\n\nSee merge request group/project!42",
			PR{Number: "42", Sigil: '!', Title: "Add a login page"}, true},
		{"gitlab marker inside a line", "Fix x\n\nPlease See merge request g/p!4 for more", PR{}, false},
		{"gitlab marker without a number", "Merge branch 'x' into 'main'\n\nSee merge request group/project", PR{}, false},
		{"git's branch merge", "Merge branch 'ps/odb-sources'\n\n* ps/odb-sources:\n  odb: drop the whence field", PR{}, false},
		{"git's branch merge into", "Merge branch 'v6-exp' into master-to-v6", PR{}, false},
		{"git's remote-tracking merge", "Merge remote-tracking branch 'origin/main'", PR{}, false},

		// Bitbucket.
		{"bitbucket cloud", "Merged in feature/x (pull request #12)\n\nAdd the x feature\n\n* Add x\n\n* Test x\n\nApproved-by: Jane Doe\n",
			PR{Number: "12", Sigil: '#', Title: "Add the x feature", Branch: "feature/x"}, true},
		{"bitbucket cloud, commit list only", "Merged in hotfix/y (pull request #3)\n\n* Fix y\n",
			PR{Number: "3", Sigil: '#', Branch: "hotfix/y"}, true},
		{"bitbucket server", "Merge pull request #12 in PROJ/repo from feature/x to master\n\n* commit 'abc123':\n  Add x\n",
			PR{Number: "12", Sigil: '#', Branch: "feature/x"}, true},
		{"bitbucket data center", "Pull request #12: Add the x feature\n\nMerge in PROJ/repo from feature/x to main\n\n* commit 'abc123':\n  Add x\n",
			PR{Number: "12", Sigil: '#', Title: "Add the x feature", Branch: "feature/x"}, true},
		{"pull request subject a person wrote", "Pull request #12: follow-up\n\nThis fixes the rest.", PR{}, false},

		// Gitea and Forgejo.
		{"gitea merge", "Merge pull request 'Add dark mode' (#7) from feature/dark into main\n\nReviewed-on: https://codeberg.org/a/b/pulls/7\n",
			PR{Number: "7", Sigil: '#', Title: "Add dark mode", Branch: "feature/dark"}, true},
		{"gitea merge from a fork", "Merge pull request 'Fix it' (#8) from alice/b:fix into main",
			PR{Number: "8", Sigil: '#', Title: "Fix it", Owner: "alice/b", Branch: "fix"}, true},
		{"gitea title with quotes and from", "Merge pull request 'Move 'x' from a (#3) to b' (#9) from move into main",
			PR{Number: "9", Sigil: '#', Title: "Move 'x' from a (#3) to b", Branch: "move"}, true},
		{"gitea with an external tracker", "Merge pull request 'Fix it' (!10) from fix into main",
			PR{Number: "10", Sigil: '!', Title: "Fix it", Branch: "fix"}, true},
		{"gitea squash", "Add dark mode (#7)\n\nReviewed-on: https://codeberg.org/a/b/pulls/7\n",
			PR{Number: "7", Sigil: '#', Title: "Add dark mode", Squash: true}, true},
		{"gitea form, broken", "Merge pull request 'Fix it' from fix into main", PR{}, false},

		// Azure DevOps.
		{"azure devops", "Merged PR 42: Add retries to the uploader\n\nRelated work items: #100",
			PR{Number: "42", Sigil: '!', Title: "Add retries to the uploader"}, true},
		{"azure devops without a colon", "Merged PR 42 Add retries", PR{}, false},

		// Anything else.
		{"plain commit", "fix: handle nil context", PR{}, false},
		{"empty", "", PR{}, false},
		{"merge pull request without a number", "Merge pull request from a/b", PR{}, false},
		{"merge pull request with words after", "Merge pull request #12 and more", PR{}, false},
		{"huge number", "Fix (#12345678901)", PR{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Parse(tt.message)
			if ok != tt.ok || got != tt.want {
				t.Errorf("Parse(%q) = %+v, %v; want %+v, %v", tt.message, got, ok, tt.want, tt.ok)
			}
		})
	}
}

// TestParseLongMessage checks that a long subject is no forge's and that a
// long body is read only as far as needed.
func TestParseLongMessage(t *testing.T) {
	long := strings.Repeat("x", maxSubject+1)
	if pr, ok := Parse(long + " (#1)"); ok {
		t.Errorf("a %d-byte subject parsed as %+v", len(long), pr)
	}
	huge := strings.Repeat("y", 8<<20)
	if pr, ok := Parse(huge + " (#1)"); ok {
		t.Errorf("an 8 MiB subject parsed as %+v", pr)
	}
	if n := testing.AllocsPerRun(10, func() { Parse(huge) }); n != 0 {
		t.Errorf("Parse of an 8 MiB subject allocated %v times", n)
	}
	body := strings.Repeat("a line of the description\n", 1<<16)
	msg := "Merge pull request #5 from a/b\n\nTitle\n\n" + body
	if pr, ok := Parse(msg); !ok || pr.Title != "Title" {
		t.Errorf("Parse of a %d-byte message = %+v, %v", len(msg), pr, ok)
	}
	allocs := testing.AllocsPerRun(10, func() { Parse(msg) })
	if allocs != 0 {
		t.Errorf("Parse allocated %v times; it should not copy the message", allocs)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"Merge pull request #1 from a/b\n\nTitle",
		"Title (#2)",
		"Merge branch 'a' into 'b'\n\nT\n\nSee merge request g/p!3",
		"Merged in a (pull request #4)\n\nT",
		"Pull request #5: T\n\nMerge in P/r from a to b",
		"Merge pull request 'T' (#6) from a into b",
		"Merged PR 7: T",
		"Merge pull request #8 in P/r from a to b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, message string) {
		pr, ok := Parse(message)
		if !ok {
			if pr != (PR{}) {
				t.Fatalf("not ok but %+v", pr)
			}
			return
		}
		if pr.Number == "" || pr.Number[0] == '0' || len(pr.Number) > maxNumber || strings.Trim(pr.Number, "0123456789") != "" {
			t.Fatalf("number %q", pr.Number)
		}
		if pr.Sigil != '#' && pr.Sigil != '!' {
			t.Fatalf("sigil %q", pr.Sigil)
		}
		for _, s := range []string{pr.Title, pr.Branch, pr.Owner} {
			if strings.ContainsAny(s, "\n") || len(s) > maxSubject {
				t.Fatalf("field %q in %+v", s, pr)
			}
			if !strings.Contains(message, s) {
				t.Fatalf("field %q is not in the message", s)
			}
		}
		if pr.Title != strings.TrimSpace(pr.Title) {
			t.Fatalf("untrimmed title %q", pr.Title)
		}
		if utf8.ValidString(message) && !utf8.ValidString(pr.Title) {
			t.Fatalf("title %q cuts a character", pr.Title)
		}
		if strings.ContainsAny(pr.Branch, " \t") {
			t.Fatalf("branch %q", pr.Branch)
		}
	})
}
