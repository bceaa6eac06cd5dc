package cmd

import (
	"context"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/config"

	"github.com/digest-cli/digest/internal/forgeapi/forgetest"
	"github.com/digest-cli/digest/internal/gittest"
)

// TestForgeFlagsReachTheRun: GITHUB_TOKEN gives the run a client of the
// API --forge-api names, and standard error counts the commits looked up
// and the answers from the cache; the token is in no output; --no-forge
// asks nothing (summarize.TestGitHubNotesFromTheForgeAPI checks the notes,
// the cache, the log and the database).
func TestForgeFlagsReachTheRun(t *testing.T) {
	r := gittest.New(t)
	if _, err := r.Git.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{"https://github.com/acme/parser.git"}}); err != nil {
		t.Fatal(err)
	}
	feature := r.Write("reader.go", "package parser\n").Commit("Read from an io.Reader")
	fake := forgetest.NewGitHub(t, "acme/parser", map[string]forgetest.Commit{
		feature: {PRs: []forgetest.PR{{Number: 41, Title: "Parse from a reader", Login: "octocat"}}},
	})
	h := newHarness(t)
	h.env["GITHUB_TOKEN"] = forgetest.Token
	args := []string{"summarize", r.Dir, "--template", "github", "--forge-api", fake.URL}
	res := h.run(context.Background(), args...)
	says(t, res, 0, []string{"Parse from a reader by @octocat in https://github.com/acme/parser/pull/41"}, "forge: 1 commits looked up, 0 answers from the cache")
	if strings.Contains(res.out+res.errOut, forgetest.Token) {
		t.Fatal("the token was written out")
	}
	before := fake.Requests()
	plain := h.run(context.Background(), append(args, "--no-forge")...)
	if plain.code != 0 || fake.Requests() != before || before == 0 || strings.Contains(plain.out, "@octocat") {
		t.Errorf("--no-forge: exit %d, %d requests:\n%s", plain.code, fake.Requests()-before, plain.out)
	}
}
