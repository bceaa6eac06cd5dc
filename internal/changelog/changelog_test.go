package changelog_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/changelog"
	"github.com/digest-cli/digest/internal/forge"
	"github.com/digest-cli/digest/internal/goldentest"
)

// sampleChangelog has two repositories, commits on three days given out of day
// order, two releases and unreleased work, types, a scope, a breaking
// change, links to a GitHub repository, a multi-line summary and an entry
// with skipped files.
func sampleChangelog() *changelog.Changelog {
	day := func(d, h int) time.Time { return time.Date(2026, 5, d, h, 0, 0, 0, time.FixedZone("CEST", 2*3600)) }
	gh := forge.Forge{Kind: forge.GitHub, Base: "https://github.com/acme/api"}
	return &changelog.Changelog{
		Model: "openai:gpt-4o-mini",
		Entries: []changelog.Entry{
			{Repo: "api", RepoID: "1111111111111111", Commit: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", Author: "Ada", Date: day(3, 9),
				Subject: "feat(client): add retries (#12)", Summary: "Adds retries to the client (#12).\nBackoff is capped at 8 s.", Model: "openai:gpt-4o-mini",
				Type: "feat", Scope: "client", URL: gh.Commit("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"), Forge: gh,
				DiffTokens: 1200, InputTokens: 1500, OutputTokens: 40, CostUSD: 0.000249},
			{Repo: "api", RepoID: "1111111111111111", Commit: "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", Author: "Ada", Date: day(1, 23),
				Subject: "Bump deps", Summary: "Updates dependencies.", Model: "openai:gpt-4o-mini", Cached: true, Type: "build",
				Version: "v1.1.0", VersionDate: day(2, 10), URL: gh.Commit("bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"), Forge: gh,
				SkippedFiles: []changelog.SkippedFile{{Path: "go.sum", Reason: "lockfile"}}},
			{Repo: "api", RepoID: "1111111111111111", Commit: "cccccccccccccccccccccccccccccccccccccccc", Author: "Bob", Date: day(3, 1),
				Subject: "refactor!: cut big", Summary: "Rewrites <the> parser & lexer.", Model: "openai:gpt-4o-mini", Truncated: true, DiffTokens: 4000,
				Type: "refactor", Breaking: true, Version: "v1.1.0", VersionDate: day(2, 10), URL: gh.Commit("cccccccccccccccccccccccccccccccccccccccc"), Forge: gh},
			{Repo: "api", RepoID: "1111111111111111", Commit: "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee", Short: "eeeeeeeeee", Author: "Cy", Date: day(1, 8),
				Subject: "fix: a crash", Summary: "Fixes a crash on empty input.", Model: "openai:gpt-4o-mini", Type: "fix",
				Version: "v1.0.0", VersionDate: day(1, 9), URL: gh.Commit("eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"), Forge: gh},
			{Repo: "web", RepoID: "2222222222222222", Commit: "dddddddddddddddddddddddddddddddddddddddd", Author: "Cy", Date: day(2, 12),
				Subject: "Fix layout", Summary: "Fixes the header layout.", Model: "openai:gpt-4o-mini", Type: "fix"},
		},
		Stats: changelog.Stats{Repositories: 2, Commits: 5, Cached: 1, Summarized: 4, SkippedFiles: 1, InputTokens: 1500, OutputTokens: 40, CostUSD: 0.000249},
	}
}

func TestReportersGolden(t *testing.T) {
	for _, format := range changelog.Formats {
		t.Run(format, func(t *testing.T) {
			r, err := changelog.ForFormat(format)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := r.Write(&b, sampleChangelog()); err != nil {
				t.Fatal(err)
			}
			goldentest.Check(t, filepath.Join("testdata", "changelog."+format), b.Bytes())
		})
	}
}

func TestSameNamedRepositoriesStayApart(t *testing.T) {
	c := &changelog.Changelog{Model: "offline", Entries: []changelog.Entry{
		{Repo: "app", RepoID: "1111111111111111", Commit: "aaaaaaaaaa", Summary: "One."},
		{Repo: "app", RepoID: "2222222222222222", Commit: "bbbbbbbbbb", Summary: "Two."},
		{Repo: "lib", RepoID: "3333333333333333", Commit: "cccccccccc", Summary: "Three."},
	}}
	var b bytes.Buffer
	if err := (changelog.Markdown{}).Write(&b, c); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## app (1111111111111111)\n", "## app (2222222222222222)\n", "## lib\n"} {
		if !bytes.Contains(b.Bytes(), []byte(want)) {
			t.Errorf("no heading %q in:\n%s", want, b.String())
		}
	}
}

func TestEmptyChangelog(t *testing.T) {
	var b bytes.Buffer
	if err := (changelog.Markdown{}).Write(&b, &changelog.Changelog{Model: "offline"}); err != nil {
		t.Fatal(err)
	}
	if b.String() != "# Changelog\n\nNo commits to summarize.\n" {
		t.Errorf("got %q", b.String())
	}
	b.Reset()
	if err := (changelog.JSON{}).Write(&b, &changelog.Changelog{Model: "offline"}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b.Bytes(), []byte(`"commits": []`)) {
		t.Errorf("empty JSON report should have an empty commits array, got %s", b.String())
	}
	if _, err := changelog.ForFormat("xml"); err == nil {
		t.Error("unknown format accepted")
	}
}

func TestTemplateReadsTheNotes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notes.tmpl")
	text := `{{range .Repos}}{{range .Versions}}== {{.Title}}
{{range .Groups}}-- {{.Title}}
{{range .Entries}}* {{if .Scope}}{{md .Scope}}: {{end}}{{summary .}} [{{.Short}}]{{if .Breaking}} BREAKING{{end}} <{{.URL}}> {{date .Date}}
{{end}}{{end}}{{end}}{{end}}`
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	tmpl, err := changelog.ParseTemplate(path)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := (changelog.Template{T: tmpl}).Write(&b, sampleChangelog()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"== Unreleased\n-- Features\n* client: Adds retries to the client ([#12](https://github.com/acme/api/pull/12)). Backoff is capped at 8 s. [aaaaaaa] <https://github.com/acme/api/commit/aaaa",
		"== v1.1.0 (2026-05-02)\n-- Breaking changes\n* Rewrites &lt;the&gt; parser & lexer. [ccccccc] BREAKING",
		"== v1.0.0 (2026-05-01)\n-- Fixes\n* Fixes a crash on empty input. [eeeeeeeeee]",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in:\n%s", want, b.String())
		}
	}
	for _, bad := range []string{"{{.Nope}}", "{{range}}", "{{frobnicate .}}"} {
		os.WriteFile(path, []byte(bad), 0o644)
		tmpl, err := changelog.ParseTemplate(path)
		if err == nil {
			err = (changelog.Template{T: tmpl}).Write(&bytes.Buffer{}, sampleChangelog())
		}
		if err == nil || !strings.Contains(err.Error(), "--template") {
			t.Errorf("template %q: %v", bad, err)
		}
	}
}

func TestBumpsOfOneDependencyAreOneLine(t *testing.T) {
	bump := func(c, subject string) changelog.Entry {
		return changelog.Entry{Repo: "api", RepoID: "1", Commit: strings.Repeat(c, 40), Subject: subject, Summary: subject + ".", Type: "build"}
	}
	c := &changelog.Changelog{Model: "offline", Entries: []changelog.Entry{
		bump("a", "Bump golang.org/x/net from 0.20.0 to 0.23.0 (#41)"),
		bump("b", "Bump github.com/spf13/cobra from 1.7.0 to 1.8.0"),
		bump("c", "Bump golang.org/x/net from 0.19.0 to 0.20.0"),
		bump("d", "chore(deps): update module golang.org/x/net to v0.19.0"),
		{Repo: "api", RepoID: "1", Commit: strings.Repeat("e", 40), Subject: "build: use go 1.26", Summary: "Uses Go 1.26.", Type: "build"},
	}}
	var b bytes.Buffer
	if err := (changelog.Markdown{}).Write(&b, c); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"- Bumps golang.org/x/net from 0.19.0 to 0.23.0 (3 updates). (`aaaaaaa`)",
		"- Bump github.com/spf13/cobra from 1.7.0 to 1.8.0. (`bbbbbbb`)",
		"- Uses Go 1.26. (`eeeeeee`)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "\n- "); n != 3 {
		t.Errorf("%d entries, want 3:\n%s", n, out)
	}
}

// withHighlights is sampleChangelog() with highlights for two of its sections,
// one of them hostile: a heading, HTML, an image and a reference to link.
func withHighlights() *changelog.Changelog {
	c := sampleChangelog()
	c.Highlights = []changelog.Highlights{
		{Repo: "api", RepoID: "1111111111111111", Version: "v1.1.0", Bullets: []string{"parser (breaking): Rewrites the parser.", "Updates dependencies."}},
		{Repo: "api", RepoID: "1111111111111111", Version: "", Bullets: []string{
			"client: Adds retries (#12).", "# Not a heading <script>alert(1)</script>", "![x](https://evil.example/x.png) *bold*\nsecond line"}},
	}
	return c
}

// TestHighlightsGolden: each section's highlights come under its heading,
// before its groups, escaped like every summary and linked to the forge;
// JSON lists them in the order of the notes; with --group-by none the
// entries' list stays apart from the highlights'.
func TestHighlightsGolden(t *testing.T) {
	for _, tt := range []struct {
		name     string
		reporter changelog.Reporter
	}{
		{"highlights.markdown", changelog.Markdown{}},
		{"highlights-ungrouped.markdown", changelog.Markdown{GroupBy: changelog.GroupByNone}},
		{"highlights.json", changelog.JSON{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tt.reporter.Write(&b, withHighlights()); err != nil {
				t.Fatal(err)
			}
			goldentest.Check(t, filepath.Join("testdata", tt.name), b.Bytes())
		})
	}
}

// TestHighlightsOnlyWhenAskedFor: JSON has no highlights key unless they
// were asked for, and an empty array when asked for and none came.
func TestHighlightsOnlyWhenAskedFor(t *testing.T) {
	var b bytes.Buffer
	if err := (changelog.JSON{}).Write(&b, sampleChangelog()); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), `"highlights"`) {
		t.Errorf("highlights key without --highlights:\n%s", b.String())
	}
	c := sampleChangelog()
	c.Highlights = []changelog.Highlights{}
	b.Reset()
	if err := (changelog.JSON{}).Write(&b, c); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"highlights": []`) {
		t.Errorf("no empty highlights array when asked for and none came:\n%s", b.String())
	}
}

func TestTemplateReadsTheHighlights(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notes.tmpl")
	os.WriteFile(path, []byte(`{{range .Repos}}{{range .Versions}}{{.Title}}:{{range .MarkdownHighlights}} [{{.}}]{{end}}{{range .Highlights}} <{{md .}}>{{end}}
{{end}}{{end}}`), 0o644)
	tmpl, err := changelog.ParseTemplate(path)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := (changelog.Template{T: tmpl}).Write(&b, withHighlights()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Unreleased: [client: Adds retries ([#12](https://github.com/acme/api/pull/12)).]",
		"<client: Adds retries (#12).>",
		"v1.1.0 (2026-05-02): [parser (breaking): Rewrites the parser.] [Updates dependencies.]",
		"v1.0.0 (2026-05-01):\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in:\n%s", want, b.String())
		}
	}
}
