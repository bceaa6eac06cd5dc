package changelog_test

// Hostile text through every report: commit subjects, author, repository
// and file names, summaries, dataset text and model answers that carry
// terminal escapes, bidirectional overrides and Markdown or HTML of their
// own. Terminal and Markdown reports must show them as text and keep their
// structure; JSON, JSONL and CSV must keep them exactly.

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/changelog"
	"github.com/digest-cli/digest/internal/hostiletest"
)

func hostileChangelog() *changelog.Changelog {
	day := time.Date(2026, 5, 3, 9, 0, 0, 0, time.UTC)
	entry := func(repo, commit, author, subject, summary, path string) changelog.Entry {
		return changelog.Entry{Repo: repo, RepoID: "1111111111111111", Commit: commit, Author: author, Date: day,
			Subject: subject, Summary: summary, Model: "offline",
			SkippedFiles: []changelog.SkippedFile{{Path: path, Reason: "binary"}}}
	}
	return &changelog.Changelog{
		Model: "offline`" + hostiletest.Title,
		Entries: []changelog.Entry{
			entry("api"+hostiletest.OSC52+" # repo", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "Mallory"+hostiletest.RTL,
				"# Fix <mark>"+hostiletest.Clear, hostiletest.Summary, "logo"+hostiletest.RTL+".png"),
			entry("api"+hostiletest.OSC52+" # repo", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", hostiletest.Isolate,
				"> quote", "- Fixes x\n- ```\n"+hostiletest.Text, "a|b\n## c.txt"),
			entry("```", "cccccccccccccccccccccccccccccccccccccccc", "Eve", hostiletest.Rewrite,
				"Rewrites the parser.\r\n\r\n```go\nfunc main() {", "<script>.js"),
			entry("<details>", "dddddddddddddddddddddddddddddddddddddddd", "Eve", "Fixes `x`",
				"Fixes `<mark>` handling in `remote.<name>.promisor`.", "ok.go"),
		},
	}
}

func TestHostileChangelogMarkdown(t *testing.T) {
	c := hostileChangelog()
	var b bytes.Buffer
	if err := (changelog.Markdown{}).Write(&b, c); err != nil {
		t.Fatal(err)
	}
	out := b.Bytes()
	hostiletest.CheckTerminalSafe(t, "markdown", out)
	nodes := hostiletest.MarkdownNodes(t, out)
	// # Changelog, three repositories, one version and one group each.
	if nodes["Heading"] != 1+3+3+3 || nodes["ListItem"] != len(c.Entries) || nodes["List"] != 3 {
		t.Errorf("structure changed: %d headings, %d lists, %d items, want 10, 3, 4\n%s", nodes["Heading"], nodes["List"], nodes["ListItem"], out)
	}
	for _, kind := range []string{"FencedCodeBlock", "CodeBlock", "HTMLBlock", "RawHTML", "Image", "Link", "Blockquote", "Table", "ThematicBreak", "Strikethrough", "TaskCheckBox"} {
		if nodes[kind] > 0 {
			t.Errorf("%d %s in the changelog:\n%s", nodes[kind], kind, out)
		}
	}
	if nodes["Emphasis"] != 1 { // the footer's
		t.Errorf("%d emphasis in the changelog, want the footer's:\n%s", nodes["Emphasis"], out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if line != "" && !strings.HasPrefix(line, "#") && !strings.HasPrefix(line, "- ") && !strings.HasPrefix(line, "_Summarized") {
			t.Errorf("a line of its own: %q", line)
		}
	}
	for _, want := range []string{
		"Adds &lt;mark&gt;retries&lt;/mark&gt; to remote.&lt;name&gt;.promisor.",
		`!\[pixel\](https://evil.example/p.png)`,
		"Fixes `<mark>` handling in `remote.<name>.promisor`.",
		`\\x1b\]0;title\\x07\\u202e`,
		"## " + `api\\x1b\]52;c;Y3VybCBldmlsLnNofHNo\\x07 # repo` + "\n",
		"## \\`\\`\\`\n",
		"## &lt;details&gt;\n",
		"the rest of the changelog (`aaaaaaa`, ",
	} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
}

func TestHostileChangelogJSONKeepsTheData(t *testing.T) {
	c := hostileChangelog()
	for _, format := range []string{"json", "jsonl"} {
		r, err := changelog.ForFormat(format)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := r.Write(&b, c); err != nil {
			t.Fatal(err)
		}
		hostiletest.CheckTerminalSafe(t, format, b.Bytes())
		var got []changelog.Entry
		if format == "json" {
			var doc struct {
				Model   string            `json:"model"`
				Commits []changelog.Entry `json:"commits"`
			}
			if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
				t.Fatalf("%s: %v", format, err)
			}
			if doc.Model != c.Model {
				t.Errorf("json: model %q, want %q", doc.Model, c.Model)
			}
			got = doc.Commits
		} else {
			dec := json.NewDecoder(&b)
			for dec.More() {
				var e changelog.Entry
				if err := dec.Decode(&e); err != nil {
					t.Fatalf("%s: %v", format, err)
				}
				got = append(got, e)
			}
		}
		if len(got) != len(c.Entries) {
			t.Fatalf("%s: %d entries, want %d", format, len(got), len(c.Entries))
		}
		for i, e := range got {
			want := c.Entries[i]
			// The one change JSON makes: each byte that is not UTF-8 becomes
			// U+FFFD; hostiletest.Text has one run of two.
			fix := func(s string) string { return strings.ToValidUTF8(s, "\ufffd\ufffd") }
			if e.Repo != want.Repo || e.Author != want.Author || e.Subject != want.Subject || e.Summary != fix(want.Summary) ||
				!reflect.DeepEqual(e.SkippedFiles, want.SkippedFiles) {
				t.Errorf("%s: entry %d read back as %+v, want %+v", format, i, e, want)
			}
		}
	}
}
