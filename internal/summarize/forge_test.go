package summarize

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/changelog"
	"github.com/digest-cli/digest/internal/forge"
	"github.com/digest-cli/digest/internal/forgeapi"
	"github.com/digest-cli/digest/internal/forgeapi/forgetest"
)

// TestGitHubNotesFromTheForgeAPI: with Release.Forge a client of GitHub's
// API (a fake that speaks its REST wire format), the pull requests,
// titles, @logins and labels the history cannot tell come from it; the
// repository's .github/release.yml sorts the changes into its categories
// and leaves out what it excludes; a second run asks the API nothing,
// every answer being stored; the token is in no output, log or database.
// Without a client the notes say what the history tells, and a warning
// says why no change is in a category. (cmd.TestForgeFlagsReachTheRun
// checks GITHUB_TOKEN, --forge-api and --no-forge.)
func TestGitHubNotesFromTheForgeAPI(t *testing.T) {
	r := releaseRepo(t, "parser", "https://github.com/acme/parser.git")
	r.Write(".github/release.yml", `changelog:
  exclude:
    labels: [skip-changelog]
  categories:
    - title: New Features
      labels: [enhancement]
    - title: Bug Fixes
      labels: [bug]
`).Commit("Set up the release notes")
	r.Tag("v1.0.0")
	feature := r.Write("reader.go", "package parser\n").Commit("Read from an io.Reader")
	// Their addresses tell no login: the API does.
	r.AuthorName, r.AuthorEmail = "Hu Bot", "hu@example.net"
	fix := r.Write("parser.go", "package parser\n\n// NUL bytes are refused.\n").Commit("Refuse NUL bytes")
	r.AuthorName, r.AuthorEmail = "", ""
	chore := r.Write("Makefile", "all:\n").Commit("Tidy the Makefile")
	docs := r.Write("README.md", "# parser\n").Commit("Say what it parses")

	fake := forgetest.NewGitHub(t, "acme/parser", map[string]forgetest.Commit{
		feature: {PRs: []forgetest.PR{{Number: 41, Title: "Parse from a reader", Login: "octocat", Labels: []string{"enhancement"}}}},
		fix:     {PRs: []forgetest.PR{{Number: 42, Title: "Refuse NUL bytes in input", Login: "hubot", Labels: []string{"bug"}}}},
		chore:   {PRs: []forgetest.PR{{Number: 43, Title: "Tidy the Makefile", Login: "octocat", Labels: []string{"skip-changelog"}}}},
		docs:    {Login: "monalisa"}, // pushed without a pull request
	})
	tmpl, err := changelog.ParseTemplateOrBuiltin(changelog.TemplateGitHub)
	if err != nil {
		t.Fatal(err)
	}
	h := newTestRun(t)
	st := h.store()
	run := func(withForge bool) (*Output, string) {
		t.Helper()
		opts := h.options("", r.Dir)
		opts.Release, opts.Store = cliRelease(t, true), st
		opts.Release.Tag = "v1.1.0"
		if withForge {
			opts.Release.Forge = func(f forge.Forge) (*forgeapi.Client, error) {
				return forgeapi.New(f, forgeapi.Token{Value: forgetest.Token, Var: "GITHUB_TOKEN"}, st, opts.Log, forgeapi.Options{APIURL: fake.URL})
			}
		}
		res, err := Run(context.Background(), opts)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := (changelog.Template{T: tmpl, GroupBy: changelog.GroupByType, Limits: changelog.DefaultTemplateLimits}).Write(&b, &res.Changelog); err != nil {
			t.Fatal(err)
		}
		return res, b.String()
	}
	res, notes := run(true)
	for _, want := range []string{
		"#### New Features\n* Parse from a reader by @octocat in https://github.com/acme/parser/pull/41\n",
		"#### Bug Fixes\n* Refuse NUL bytes in input by @hubot in https://github.com/acme/parser/pull/42\n",
		"* @hubot made their first contribution in https://github.com/acme/parser/pull/42\n",
		"**Full Changelog**: https://github.com/acme/parser/compare/v1.0.0...v1.1.0\n",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("no %q in:\n%s", want, notes)
		}
	}
	// GitHub's rules: excluded by label, or in no category (no "*").
	if strings.Contains(notes, "Makefile") || strings.Contains(notes, "Say what it parses") {
		t.Errorf("a change release.yml leaves out is listed:\n%s", notes)
	}
	asked := fake.Requests()
	if asked == 0 || res.ForgeAsked != 5 || res.ForgeCached != 0 {
		t.Errorf("%d requests; %d commits looked up, %d from the store; want 5 and 0", asked, res.ForgeAsked, res.ForgeCached)
	}
	if faults := fake.Faults(); len(faults) > 0 {
		t.Errorf("requests GitHub would refuse: %v", faults)
	}

	again, againNotes := run(true)
	if n := fake.Requests() - asked; n != 0 || againNotes != notes || again.ForgeAsked != 0 || again.ForgeCached != 5 {
		t.Errorf("second run: %d requests, %d looked up, %d from the store, same notes %v", n, again.ForgeAsked, again.ForgeCached, againNotes == notes)
	}
	db, err := os.ReadFile(h.db)
	if err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{notes, h.logs.String(), string(db)} {
		if strings.Contains(out, forgetest.Token) {
			t.Fatal("the token was written out")
		}
	}

	// Without the API: no labels, so no change in a category, none
	// dropped, and a warning says why.
	before := fake.Requests()
	plain, plainNotes := run(false)
	if fake.Requests() != before || plain.ForgeAsked+plain.ForgeCached != 0 || strings.Contains(plainNotes, "@octocat") {
		t.Errorf("without the API: %d requests:\n%s", fake.Requests()-before, plainNotes)
	}
	if !strings.Contains(plainNotes, "### What's Changed\n* Read from an io.Reader by Ada Lovelace") || !strings.Contains(plainNotes, "* Tidy the Makefile") ||
		!strings.Contains(h.logs.String(), "5 changes are listed in no category") || !strings.Contains(h.logs.String(), "Try: GITHUB_TOKEN") {
		t.Errorf("without the API, with a release.yml sorting by label:\n%s\n%s", plainNotes, h.logs.String())
	}
}
