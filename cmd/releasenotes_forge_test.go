package cmd

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/forgeapi/forgetest"
)

// TestGitHubNotesFromTheForgeAPI: with GITHUB_TOKEN set, the pull
// requests, titles, @logins and labels the history cannot tell come from
// GitHub's API (a fake that speaks its REST wire format); the
// repository's .github/release.yml sorts the changes into its
// categories and leaves out what it excludes; a second run asks the API
// nothing, every answer being stored; the token is in no output and not
// in the database.
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
	h := newHarness(t)
	h.env["GITHUB_TOKEN"] = forgetest.Token
	args := []string{"summarize", r.Dir, "--template", "github", "--tag", "v1.1.0", "--forge-api", fake.URL}
	res := h.run(context.Background(), args...)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.errOut)
	}
	for _, want := range []string{
		"#### New Features\n* Parse from a reader by @octocat in https://github.com/acme/parser/pull/41\n",
		"#### Bug Fixes\n* Refuse NUL bytes in input by @hubot in https://github.com/acme/parser/pull/42\n",
		"* @hubot made their first contribution in https://github.com/acme/parser/pull/42\n",
		"**Full Changelog**: https://github.com/acme/parser/compare/v1.0.0...v1.1.0\n",
	} {
		if !strings.Contains(res.out, want) {
			t.Errorf("no %q in:\n%s", want, res.out)
		}
	}
	// GitHub's rules: excluded by label, or in no category (no "*").
	if strings.Contains(res.out, "Makefile") || strings.Contains(res.out, "Say what it parses") {
		t.Errorf("a change release.yml leaves out is listed:\n%s", res.out)
	}
	asked := fake.Requests()
	if asked == 0 || !strings.Contains(res.errOut, "forge: 5 commits looked up, 0 answers from the cache") {
		t.Errorf("%d requests; stderr:\n%s", asked, res.errOut)
	}
	if faults := fake.Faults(); len(faults) > 0 {
		t.Errorf("requests GitHub would refuse: %v", faults)
	}

	again := h.run(context.Background(), args...)
	if again.code != 0 || again.out != res.out {
		t.Errorf("second run: exit %d, same notes %v; stderr:\n%s", again.code, again.out == res.out, again.errOut)
	}
	if n := fake.Requests() - asked; n != 0 || !strings.Contains(again.errOut, "0 commits looked up, 5 answers from the cache") {
		t.Errorf("second run asked the API %d times; stderr:\n%s", n, again.errOut)
	}
	db, err := os.ReadFile(h.db)
	if err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{res.out, res.errOut, again.errOut, string(db)} {
		if strings.Contains(out, forgetest.Token) {
			t.Fatal("the token was written out")
		}
	}

	// --no-forge asks nothing, and the notes say what the history tells:
	// no labels, so no change in a category, none dropped, and a line
	// says why.
	before := fake.Requests()
	plain := h.run(context.Background(), append(args, "--no-forge")...)
	if plain.code != 0 || fake.Requests() != before || strings.Contains(plain.out, "@octocat") {
		t.Errorf("--no-forge: exit %d, %d requests:\n%s", plain.code, fake.Requests()-before, plain.out)
	}
	if !strings.Contains(plain.out, "### What's Changed\n* Read from an io.Reader by Ada Lovelace") || !strings.Contains(plain.out, "* Tidy the Makefile") ||
		!strings.Contains(plain.errOut, "5 changes are listed in no category") || !strings.Contains(plain.errOut, "Try: GITHUB_TOKEN") {
		t.Errorf("--no-forge with a release.yml sorting by label:\n%s\n%s", plain.out, plain.errOut)
	}
}
