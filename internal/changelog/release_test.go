package changelog_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/changelog"
	"github.com/digest-cli/digest/internal/forge"
	"github.com/digest-cli/digest/internal/goldentest"
)

// releases is one repository's notes as the pipeline fills them: merged
// pull requests with titles, logins and a bot, a merge commit whose
// summary does not name its pull request, two bumps of one dependency,
// categories from a release.yml on one release, a breaking removal, a
// deprecation, a security fix, a CI change, hostile text, a first release
// with direct commits, and new contributors.
func releases() *changelog.Changelog {
	at := func(m, d int) time.Time {
		return time.Date(2026, time.Month(m), d, 12, 0, 0, 0, time.FixedZone("CEST", 2*3600))
	}
	gh := forge.Forge{Kind: forge.GitHub, Base: "https://github.com/acme/cli"}
	n := 0
	entry := func(e changelog.Entry) changelog.Entry {
		n++
		e.Repo, e.RepoID, e.Forge, e.Model = "cli", "1111111111111111", gh, "offline"
		e.Commit = strings.Repeat(string(rune('0'+n%10)), 40)
		e.URL = gh.Commit(e.Commit)
		if e.Subject == "" {
			e.Subject = e.Title
		}
		if e.PR != "" {
			e.PRURL, _ = gh.Ref('#', e.PR)
		}
		if e.Date.IsZero() {
			e.Date = at(4, 30-n)
		}
		return e
	}
	ada := changelog.Entry{Author: "Ada Lovelace", AuthorEmail: "ada@example.com", Login: "ada"}
	by := func(who changelog.Entry, e changelog.Entry) changelog.Entry {
		e.Author, e.AuthorEmail, e.Login, e.Bot = who.Author, who.AuthorEmail, who.Login, who.Bot
		return e
	}
	bot := changelog.Entry{Author: "dependabot[bot]", AuthorEmail: "49699333+dependabot[bot]@users.noreply.github.com", Login: "dependabot[bot]", Bot: true}
	cy := changelog.Entry{Author: "Cy Twombly", AuthorEmail: "cy@example.com", Login: "cy"}
	dee := changelog.Entry{Author: "Dee <Dee>", AuthorEmail: "dee@example.com"}
	v12, v11 := at(5, 2), at(4, 1)
	return &changelog.Changelog{
		Model: "offline",
		Entries: []changelog.Entry{
			entry(by(changelog.Entry{Author: "Bob Stone", AuthorEmail: "bob@example.com", Login: "bob"}, changelog.Entry{
				Subject: "Merge pull request #30 from bob/json", Title: "Add --json output", Merge: true, PR: "30",
				Summary: "Adds a --json flag to every command.", Details: "Changes 3 files in cmd (+120/-4): modifies cmd/root.go (Execute).", Type: "feat"})),
			entry(by(ada, changelog.Entry{Title: "fix(security): escape shell arguments (CVE-2026-1234) (#29)", PR: "29",
				Summary: "Escapes the shell arguments hooks receive (#29).", Type: "fix", Scope: "security"})),
			entry(by(ada, changelog.Entry{Title: "feat!: drop support for config v1 (#27)", PR: "27", Summary: "Drops config files of version 1.",
				Type: "feat", Breaking: true, Labels: []string{"breaking"}, Category: "Breaking Changes", Version: "v1.2.0", VersionDate: v12})),
			entry(by(ada, changelog.Entry{Title: "Deprecate the --old flag (#26)", PR: "26", Summary: "Deprecates --old in favour of --new.",
				Type: "refactor", Version: "v1.2.0", VersionDate: v12})),
			entry(by(bot, changelog.Entry{Title: "Bump golang.org/x/net from 0.22.0 to 0.23.0 (#25)", PR: "25", Summary: "Bumps golang.org/x/net to 0.23.0 (#25).",
				Type: "build", Scope: "deps", Labels: []string{"dependencies"}, Category: "Dependencies", Version: "v1.2.0", VersionDate: v12})),
			entry(by(bot, changelog.Entry{Title: "Bump golang.org/x/net from 0.21.0 to 0.22.0 (#24)", PR: "24", Summary: "Bumps golang.org/x/net to 0.22.0 (#24).",
				Type: "build", Scope: "deps", Labels: []string{"dependencies"}, Category: "Dependencies", Version: "v1.2.0", VersionDate: v12})),
			entry(by(cy, changelog.Entry{Title: "ci: cache modules (#23)", PR: "23", Summary: "Caches Go modules in CI.", Type: "ci",
				Version: "v1.2.0", VersionDate: v12})),
			entry(by(ada, changelog.Entry{Title: "feat(api): add pagination (#22)", PR: "22", Summary: "Adds pagination to list calls (#22).",
				Type: "feat", Scope: "api", Category: "Features", Version: "v1.2.0", VersionDate: v12})),
			entry(by(dee, changelog.Entry{Title: "docs: fix <b>typo</b> ![x](https://evil.example/x.png) #README (#21)", PR: "21",
				Summary: "# Fixes a typo <script>alert(1)</script>", Type: "docs", Version: "v1.2.0", VersionDate: v12})),
			entry(by(ada, changelog.Entry{Title: "fix: handle empty input", Summary: "Handles empty input.", Type: "fix",
				Version: "v1.1.0", VersionDate: v11})),
			entry(by(ada, changelog.Entry{Title: "feat: first version", Summary: "The first version.", Type: "feat",
				Version: "v1.1.0", VersionDate: v11})),
		},
		Versions: []changelog.VersionInfo{
			{Repo: "cli", RepoID: "1111111111111111", Tag: "", PreviousTag: "v1.2.0", CompareURL: gh.Compare("v1.2.0", "HEAD"),
				NewContributors: []changelog.Person{{Name: "Bob Stone", Email: "bob@example.com", Login: "bob", FirstPR: "30",
					FirstPRURL: "https://github.com/acme/cli/pull/30", FirstCommit: strings.Repeat("1", 40), FirstURL: gh.Commit(strings.Repeat("1", 40))}}},
			{Repo: "cli", RepoID: "1111111111111111", Tag: "v1.2.0", PreviousTag: "v1.1.0", CompareURL: gh.Compare("v1.1.0", "v1.2.0"),
				Categories: []string{"Breaking Changes", "Features"},
				NewContributors: []changelog.Person{
					{Name: "Cy Twombly", Email: "cy@example.com", Login: "cy", FirstPR: "23", FirstPRURL: "https://github.com/acme/cli/pull/23"},
					{Name: "dependabot[bot]", Login: "dependabot[bot]", Bot: true, FirstPR: "24", FirstPRURL: "https://github.com/acme/cli/pull/24"},
					{Name: "Dee <Dee>", Email: "dee@example.com", FirstPR: "21", FirstPRURL: "https://github.com/acme/cli/pull/21"},
				}},
			{Repo: "cli", RepoID: "1111111111111111", Tag: "v1.1.0", CompareURL: gh.Commits("v1.1.0"),
				NewContributors: []changelog.Person{{Name: "Ada Lovelace", Email: "ada@example.com", Login: "ada",
					FirstCommit: strings.Repeat("1", 40), FirstURL: gh.Commit(strings.Repeat("1", 40))}}},
		},
	}
}

// twoRepositories is releases() and a repository with no forge: no
// links, no pull requests, no logins.
func twoRepositories() *changelog.Changelog {
	c := releases()
	c.Entries = append(c.Entries,
		changelog.Entry{Repo: "web", RepoID: "2222222222222222", Commit: strings.Repeat("d", 40), Author: "Cy", Subject: "fix: layout",
			Summary: "Fixes the header layout.", Type: "fix", Version: "v0.1.0", VersionDate: time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)})
	return c
}

// golden compares got with testdata/name, or writes it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldentest.Check(t, filepath.Join("testdata", name), got)
}

// builtin writes c through a built-in layout.
func builtin(t *testing.T, name, groupBy, entryText string, c *changelog.Changelog) []byte {
	t.Helper()
	tmpl, err := changelog.ParseTemplateOrBuiltin(name)
	if err != nil {
		t.Fatal(err)
	}
	tp := changelog.Template{T: tmpl, GroupBy: groupBy, EntryText: entryText, Limits: changelog.DefaultTemplateLimits}
	if err := tp.Check(context.Background()); err != nil {
		t.Fatalf("%s on sample notes: %v", name, err)
	}
	var b bytes.Buffer
	if err := tp.WriteContext(context.Background(), &b, c); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return b.Bytes()
}

// TestBuiltinTemplatesGolden: each built-in layout on notes built in code,
// one repository and two, with the entry text of each choice.
func TestBuiltinTemplatesGolden(t *testing.T) {
	for _, tt := range []struct {
		file, template, entryText string
		changelog                 func() *changelog.Changelog
	}{
		{"github.golden", "github", "", releases},
		{"github-summary.golden", "github", "summary", releases},
		{"github-repos.golden", "github", "", twoRepositories},
		{"github-empty.golden", "github", "", func() *changelog.Changelog { return &changelog.Changelog{Model: "offline"} }},
		{"keepachangelog.golden", "keepachangelog", "", releases},
		{"keepachangelog-title.golden", "keepachangelog", "title", releases},
		{"keepachangelog-repos.golden", "keepachangelog", "", twoRepositories},
		{"keepachangelog-empty.golden", "keepachangelog", "", func() *changelog.Changelog { return &changelog.Changelog{Model: "offline"} }},
		{"default-title.golden", "default", "title", releases},
	} {
		t.Run(tt.file, func(t *testing.T) {
			golden(t, tt.file, builtin(t, tt.template, "", tt.entryText, tt.changelog()))
		})
	}
}

// TestDefaultTemplateIsTheMarkdownFormat: byte for byte, in every
// grouping, entry text, with highlights, several repositories, none.
func TestDefaultTemplateIsTheMarkdownFormat(t *testing.T) {
	empty := func() *changelog.Changelog { return &changelog.Changelog{Model: "offline"} }
	for name, c := range map[string]func() *changelog.Changelog{
		"releases": releases, "two repositories": twoRepositories, "highlights": withHighlights, "changelog": sampleChangelog, "empty": empty,
	} {
		for _, groupBy := range changelog.GroupBys {
			for _, text := range []string{"", changelog.EntryTitle, changelog.EntrySummary} {
				var want bytes.Buffer
				if err := (changelog.Markdown{GroupBy: groupBy, EntryText: text}).Write(&want, c()); err != nil {
					t.Fatal(err)
				}
				got := builtin(t, "default", groupBy, text, c())
				if !bytes.Equal(got, want.Bytes()) {
					t.Errorf("%s, --group-by %s, entry text %q: the default template differs from the Markdown format\n--- template ---\n%s--- markdown ---\n%s",
						name, groupBy, text, got, want.Bytes())
				}
			}
		}
	}
}

// TestGitHubLayoutLines: the lines GitHub's generated notes are made of.
func TestGitHubLayoutLines(t *testing.T) {
	out := string(builtin(t, "github", "", "", releases()))
	for _, want := range []string{
		// Oldest first, as the requests were merged.
		"## Unreleased\n\n### What's Changed\n* fix(security): escape shell arguments (CVE-2026-1234) by @ada in https://github.com/acme/cli/pull/29\n* Add --json output by @bob in https://github.com/acme/cli/pull/30\n",
		"### New Contributors\n* @bob made their first contribution in https://github.com/acme/cli/pull/30\n",
		"**Full Changelog**: https://github.com/acme/cli/compare/v1.2.0...HEAD\n",
		// release.yml's order, then categories it does not list, then the rest.
		"### What's Changed\n#### Breaking Changes\n* feat!: drop support for config v1 by @ada in https://github.com/acme/cli/pull/27\n#### Features\n",
		"#### Dependencies\n* Bump golang.org/x/net from 0.21.0 to 0.23.0 (2 updates) by @dependabot in https://github.com/acme/cli/pull/25\n#### Other Changes\n",
		"* @dependabot made their first contribution in https://github.com/acme/cli/pull/24\n",
		"* Dee &lt;Dee&gt; made their first contribution in https://github.com/acme/cli/pull/21\n",
		// No pull request: the commit's page.
		"* fix: handle empty input by @ada in https://github.com/acme/cli/commit/",
		"* @ada made their first contribution in https://github.com/acme/cli/commit/1111111111111111111111111111111111111111\n",
		"**Full Changelog**: https://github.com/acme/cli/commits/v1.1.0\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	// Hostile text is text: no HTML, image or heading gets through.
	for _, layout := range []string{"", "summary"} {
		out := string(builtin(t, "github", "", layout, releases()))
		for _, bad := range []string{"<b>", "![x]", "<script>", "\n# ", "<Dee>"} {
			if strings.Contains(out, bad) {
				t.Errorf("%q got through:\n%s", bad, out)
			}
		}
	}
}

func TestKeepAChangelogSection(t *testing.T) {
	for _, tt := range []struct {
		e    changelog.Entry
		want string
	}{
		{changelog.Entry{Subject: "feat: add x", Type: "feat"}, changelog.Added},
		{changelog.Entry{Subject: "fix: crash", Type: "fix"}, changelog.Fixed},
		{changelog.Entry{Subject: "perf: faster", Type: "perf"}, changelog.Changed},
		{changelog.Entry{Subject: "docs: explain", Type: "docs"}, changelog.Changed},
		{changelog.Entry{Subject: "Bump x from 1 to 2", Type: "build"}, changelog.Changed},
		{changelog.Entry{Subject: "ci: cache", Type: "ci"}, ""},
		{changelog.Entry{Subject: "test: more", Type: "test"}, ""},
		{changelog.Entry{Subject: "style: gofmt", Type: "style"}, ""},
		{changelog.Entry{Subject: "ci!: require go 1.26", Type: "ci", Breaking: true}, changelog.Changed},
		{changelog.Entry{Subject: "feat!: new config format", Type: "feat", Breaking: true}, changelog.Changed},
		{changelog.Entry{Subject: "feat!: remove the v1 API", Type: "feat", Breaking: true}, changelog.Removed},
		{changelog.Entry{Subject: "Drop support for Go 1.20", Type: "build"}, changelog.Removed},
		{changelog.Entry{Subject: "refactor: remove deprecated Foo", Type: "refactor"}, changelog.Removed},
		{changelog.Entry{Subject: "refactor: remove dead code", Type: "refactor"}, changelog.Changed},
		{changelog.Entry{Subject: "fix: remove a race", Type: "fix"}, changelog.Fixed},
		{changelog.Entry{Subject: "Deprecate --old", Type: "other"}, changelog.Deprecated},
		{changelog.Entry{Subject: "feat: mark Foo as deprecated", Type: "feat"}, changelog.Deprecated},
		{changelog.Entry{Subject: "fix: don't warn about deprecated flags", Type: "fix"}, changelog.Fixed},
		{changelog.Entry{Subject: "fix: escape input (CVE-2026-1234)", Type: "fix"}, changelog.Security},
		{changelog.Entry{Subject: "Patch GHSA-abcd-1234-wxyz", Type: "other"}, changelog.Security},
		{changelog.Entry{Subject: "fix: a vulnerability in the parser", Type: "fix"}, changelog.Security},
		{changelog.Entry{Subject: "fix: security issue in hooks", Type: "fix"}, changelog.Security},
		{changelog.Entry{Subject: "feat: add security headers", Type: "feat"}, changelog.Added},
		{changelog.Entry{Subject: "docs: update SECURITY.md", Type: "docs"}, changelog.Changed},
		{changelog.Entry{Subject: "tighten hooks", Type: "other", Scope: "security"}, changelog.Security},
		{changelog.Entry{Subject: "tighten hooks", Type: "other", Labels: []string{"Security"}}, changelog.Security},
		{changelog.Entry{Subject: "Merge pull request #3 from a/b", Title: "Remove the legacy API", Type: "feat"}, changelog.Removed},
	} {
		if got := changelog.KeepAChangelogSection(tt.e); got != tt.want {
			t.Errorf("%q (%s, breaking %v): %q, want %q", tt.e.Subject, tt.e.Type, tt.e.Breaking, got, tt.want)
		}
	}
}

// TestVersionNotesFromThePipeline: what the pipeline gives per section
// reaches it, contributors are distinct in order with bots flagged, and
// the repository has its forge's page.
func TestVersionNotesFromThePipeline(t *testing.T) {
	notes, err := changelog.BuildNotes(releases(), changelog.GroupByType)
	if err != nil {
		t.Fatal(err)
	}
	repo := notes.Repos[0]
	if repo.URL != "https://github.com/acme/cli" || len(repo.Versions) != 3 {
		t.Fatalf("repository %q with %d versions", repo.URL, len(repo.Versions))
	}
	v := repo.Versions[1]
	if v.Tag != "v1.2.0" || v.Version() != "1.2.0" || v.PreviousTag != "v1.1.0" || v.CompareURL != "https://github.com/acme/cli/compare/v1.1.0...v1.2.0" || len(v.NewContributors) != 3 {
		t.Errorf("v1.2.0: %q %q %q %q, %d new contributors", v.Tag, v.Version(), v.PreviousTag, v.CompareURL, len(v.NewContributors))
	}
	var names []string
	for _, p := range v.Contributors {
		names = append(names, p.Handle())
		if p.Bot != (p.Login == "dependabot[bot]") {
			t.Errorf("%s: bot %v", p.Handle(), p.Bot)
		}
	}
	if got := strings.Join(names, ","); got != "@ada,@dependabot,@cy,Dee <Dee>" {
		t.Errorf("contributors %s", got)
	}
	if u := repo.Versions[0]; u.Version() != "Unreleased" || u.CompareURL != "https://github.com/acme/cli/compare/v1.2.0...HEAD" {
		t.Errorf("Unreleased: %q %q", u.Version(), u.CompareURL)
	}
	for tag, want := range map[string]string{"v1.2.0": "1.2.0", "V2": "2", "release-1": "release-1", "v": "v", "vNext": "vNext"} {
		if got := (changelog.VersionNotes{Tag: tag}).Version(); got != want {
			t.Errorf("Version of %q = %q, want %q", tag, got, want)
		}
	}
	// Without categories, one untitled group; bumps fold there too.
	c := releases()
	for i := range c.Entries {
		c.Entries[i].Category = ""
	}
	notes, _ = changelog.BuildNotes(c, changelog.GroupByNone)
	groups := notes.Repos[0].Versions[1].WhatsChanged()
	if len(groups) != 1 || groups[0].Title != "" || len(groups[0].Entries) != 6 {
		t.Errorf("uncategorized: %+v", groups)
	}
	if n := len(notes.Repos[0].Versions[1].Groups[0].Entries); n != 6 {
		t.Errorf("--group-by none: %d entries, want the bumps folded into 6", n)
	}
}

// TestMarkdownEntryLinksItsPullRequest: a merged pull request's link
// comes after the hash unless the text names it.
func TestMarkdownEntryLinksItsPullRequest(t *testing.T) {
	c := releases()
	merge, squash := c.Entries[0], c.Entries[1]
	if got := changelog.MarkdownEntry(merge); !strings.Contains(got, "), [#30](https://github.com/acme/cli/pull/30), Bob Stone)") {
		t.Errorf("merge: %s", got)
	}
	if got := changelog.MarkdownEntry(squash); strings.Count(got, "pull/29") != 1 {
		t.Errorf("squash: %s", got)
	}
	if got := changelog.MarkdownEntryText(squash, changelog.EntryTitle); !strings.HasPrefix(got, "**security:** Escape shell arguments (CVE-2026-1234) (") ||
		strings.Count(got, "pull/29") != 1 {
		t.Errorf("title: %s", got)
	}
	gl := changelog.Entry{Commit: "abc", PR: "5", PRURL: "https://gitlab.com/g/p/-/merge_requests/5", Forge: forge.Forge{Kind: forge.GitLab, Base: "https://gitlab.com/g/p"}, Summary: "Fixes x."}
	if got := changelog.MarkdownEntry(gl); !strings.Contains(got, `, [\!5](https://gitlab.com/g/p/-/merge_requests/5))`) {
		t.Errorf("GitLab: %s", got)
	}
	gl.Summary = "Fixes x (!5)."
	if got := changelog.MarkdownEntry(gl); strings.Count(got, "merge_requests/5") != 1 {
		t.Errorf("GitLab, named: %s", got)
	}
	gl.Summary = "Fixes x (!50)."
	if got := changelog.MarkdownEntry(gl); !strings.Contains(got, "merge_requests/5)") {
		t.Errorf("!50 is not !5: %s", got)
	}
}

// TestEntryText: the value is checked wherever it is given.
func TestEntryText(t *testing.T) {
	if err := (changelog.Markdown{EntryText: "body"}).Write(&bytes.Buffer{}, releases()); err == nil || !strings.Contains(err.Error(), "Try: one of title, summary") {
		t.Errorf("Markdown: %v", err)
	}
	tmpl, err := changelog.ParseTemplateOrBuiltin("github")
	if err != nil {
		t.Fatal(err)
	}
	if err := (changelog.Template{T: tmpl, EntryText: "body"}).Check(context.Background()); err == nil {
		t.Error("Check took an unknown entry text")
	}
	path := filepath.Join(t.TempDir(), "t.tmpl")
	os.WriteFile(path, []byte(`{{range .Repos}}{{range .Versions}}{{range .Entries}}{{entry . "title" "x"}}{{end}}{{end}}{{end}}`), 0o644)
	tmpl, err = changelog.ParseTemplate(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := (changelog.Template{T: tmpl}).Check(context.Background()); err == nil || !strings.Contains(err.Error(), "at most one") {
		t.Errorf("entry with two texts: %v", err)
	}
}

// TestTemplateNamesAndFiles: the built-in names are layouts; a file so
// named is read through a path; a missing file names the layouts.
func TestTemplateNamesAndFiles(t *testing.T) {
	for _, name := range changelog.BuiltinTemplates {
		if _, ok := changelog.BuiltinTemplate(name); !ok {
			t.Errorf("no text for %s", name)
		}
		tmpl, err := changelog.ParseTemplateOrBuiltin(name)
		if err != nil || tmpl.Name() != name {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, ok := changelog.BuiltinTemplate("../report.go"); ok {
		t.Error("a path is not a layout")
	}
	dir := t.TempDir()
	t.Chdir(dir)
	os.WriteFile("github", []byte("mine\n"), 0o644)
	tmpl, err := changelog.ParseTemplateOrBuiltin("./github")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := (changelog.Template{T: tmpl}).Write(&b, releases()); err != nil || b.String() != "mine\n" {
		t.Errorf("./github: %q, %v", b.String(), err)
	}
	_, err = changelog.ParseTemplateOrBuiltin("githb")
	if err == nil || !strings.Contains(err.Error(), "default, github, keepachangelog") {
		t.Errorf("a missing file: %v", err)
	}
}

// TestTemplateReadsTheNewFields: every field and function the Template
// doc lists is there.
func TestTemplateReadsTheNewFields(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.tmpl")
	os.WriteFile(path, []byte(`{{range .Repos}}{{.URL}}{{range .Versions}}|{{.Version}}|{{.PreviousTag}}|{{.CompareURL}}|{{range .Contributors}}{{person .}}{{.Bot}}{{end}}|{{range .NewContributors}}{{.Handle}} {{.FirstContribution}} {{.FirstPR}} {{.FirstCommit}} {{.FirstURL}} {{.FirstPRURL}} {{.Name}} {{.Email}} {{.Login}}{{end}}
{{range .WhatsChanged}}{{.Title}}{{end}}{{range .KeepAChangelog}}{{.Title}}{{end}}
{{range .Entries}}{{.Title}}|{{.Details}}|{{.PR}}|{{.PRURL}}|{{.PRRef}}|{{.AuthorEmail}}|{{.Login}}|{{.Bot}}|{{.Labels}}|{{.Merge}}|{{.Category}}|{{title .}}|{{describe .}}|{{pr .}}|{{withpr . "x"}}|{{author .}}|{{keepachangelog .}}
{{end}}{{end}}{{end}}{{$.EntryText}}`), 0o644)
	tmpl, err := changelog.ParseTemplate(path)
	if err != nil {
		t.Fatal(err)
	}
	tp := changelog.Template{T: tmpl, EntryText: "title"}
	if err := tp.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := tp.Write(&b, releases()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"https://github.com/acme/cli|Unreleased|v1.2.0|https://github.com/acme/cli/compare/v1.2.0...HEAD|@bobfalse@adafalse|@bob https://github.com/acme/cli/pull/30 30 ",
		"\nBreaking ChangesFeaturesDependenciesOther ChangesAddedChangedDeprecatedRemoved\n",
		"Add --json output|Changes 3 files in cmd (+120/-4): modifies cmd/root.go (Execute).|30|https://github.com/acme/cli/pull/30|#30|bob@example.com|bob|false|[]|true||Add --json output|Add --json output|[#30](https://github.com/acme/cli/pull/30)|x ([#30](https://github.com/acme/cli/pull/30))|@bob|Added\n",
		"|dependabot[bot]|true|[dependencies]|false|Dependencies|Bump golang.org/x/net from 0.22.0 to 0.23.0|",
		"\ntitle",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in:\n%s", want, b.String())
		}
	}
}

// TestJSONCarriesTheNewFields: the entries' new fields, and the
// sections' when the pipeline gave them.
func TestJSONCarriesTheNewFields(t *testing.T) {
	var b bytes.Buffer
	if err := (changelog.JSON{}).Write(&b, releases()); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Commits  []map[string]any        `json:"commits"`
		Versions []changelog.VersionInfo `json:"versions"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	first := doc.Commits[0]
	for key, want := range map[string]any{"title": "Add --json output", "pr": "30", "pr_url": "https://github.com/acme/cli/pull/30",
		"login": "bob", "author_email": "bob@example.com", "bot": false, "merge": true, "category": "",
		"details": "Changes 3 files in cmd (+120/-4): modifies cmd/root.go (Execute).", "summary": "Adds a --json flag to every command."} {
		if first[key] != want {
			t.Errorf("%s = %v, want %v", key, first[key], want)
		}
	}
	if labels, ok := first["labels"].([]any); !ok || len(labels) != 0 {
		t.Errorf("labels = %v, want []", first["labels"])
	}
	if len(doc.Versions) != 3 || doc.Versions[1].PreviousTag != "v1.1.0" || doc.Versions[1].NewContributors[1].Login != "dependabot[bot]" {
		t.Errorf("versions: %+v", doc.Versions)
	}
	b.Reset()
	if err := (changelog.JSONL{}).Write(&b, releases()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"title":"Add --json output","summary":"Adds a --json flag to every command.","details":"Changes 3 files`) {
		t.Errorf("jsonl:\n%s", b.String())
	}
}

// BenchmarkBuiltinTemplates writes git.git's size of history (60,000
// entries in 960 sections) through each built-in layout.
func BenchmarkBuiltinTemplates(b *testing.B) {
	one := releases()
	c := &changelog.Changelog{Model: "offline"}
	for i := range 60_000 {
		e := one.Entries[i%len(one.Entries)]
		e.Version = fmt.Sprintf("v1.%d.0", 960-i/63)
		e.VersionDate = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(960-i/63) * 24 * time.Hour)
		c.Entries = append(c.Entries, e)
	}
	b.Run("markdown format", func(b *testing.B) {
		var out bytes.Buffer
		for b.Loop() {
			out.Reset()
			if err := (changelog.Markdown{}).Write(&out, c); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(out.Len())/(1<<20), "MiB")
	})
	for _, name := range changelog.BuiltinTemplates {
		b.Run(name, func(b *testing.B) {
			tmpl, err := changelog.ParseTemplateOrBuiltin(name)
			if err != nil {
				b.Fatal(err)
			}
			var out bytes.Buffer
			for b.Loop() {
				out.Reset()
				if err := (changelog.Template{T: tmpl, Limits: changelog.DefaultTemplateLimits}).Write(&out, c); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(out.Len())/(1<<20), "MiB")
		})
	}
}

// TestMergedBumpsFold: bumps merged as pull requests (--first-parent: the
// subject names a branch, the title the bump) fold in every grouping.
func TestMergedBumpsFold(t *testing.T) {
	bump := func(c, pr, from, to string) changelog.Entry {
		return changelog.Entry{Repo: "api", RepoID: "1", Commit: strings.Repeat(c, 40), Merge: true, PR: pr, Type: "build",
			Subject: "Merge pull request #" + pr + " from dependabot/go_modules/golang.org/x/net-" + to,
			Title:   "Bump golang.org/x/net from " + from + " to " + to, Summary: "Bumps golang.org/x/net to " + to + "."}
	}
	c := &changelog.Changelog{Model: "offline", Entries: []changelog.Entry{bump("a", "3", "0.22.0", "0.23.0"), bump("b", "2", "0.21.0", "0.22.0")}}
	for _, groupBy := range changelog.GroupBys {
		var b bytes.Buffer
		if err := (changelog.Markdown{GroupBy: groupBy, EntryText: changelog.EntryTitle}).Write(&b, c); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "- Bump golang.org/x/net from 0.21.0 to 0.23.0 (2 updates) (`aaaaaaa`, #3)") || strings.Count(b.String(), "\n- ") != 1 {
			t.Errorf("--group-by %s:\n%s", groupBy, b.String())
		}
	}
}
