package summarize

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"

	"github.com/digest-cli/digest/internal/changelog"
	"github.com/digest-cli/digest/internal/gittest"
	"github.com/digest-cli/digest/internal/goldentest"
)

// compareGolden compares got with testdata/summarize/name at the repository's
// root, the files `digest summarize` is compared with too, or with -update
// writes it there.
func compareGolden(t *testing.T, name, got string) {
	t.Helper()
	goldentest.Check(t, filepath.Join("..", "..", "testdata", "summarize", name), []byte(got))
}

// cliRelease is the Release `digest summarize` gives Run by default:
// sections of the tags DefaultTagPattern matches, and the contributors
// read only for the layouts that show them (the JSON document's).
func cliRelease(t *testing.T, contributors bool) Release {
	t.Helper()
	tags, err := Tags(DefaultTagPattern, "")
	if err != nil {
		t.Fatal(err)
	}
	return Release{Tags: tags, Contributors: contributors}
}

// renderAs writes c as the command writes it in format (Markdown grouped
// by type, as by default).
func renderAs(t *testing.T, format string, c *changelog.Changelog) string {
	t.Helper()
	r, err := changelog.ForFormat(format)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.(changelog.Markdown); ok {
		r = changelog.Markdown{GroupBy: changelog.GroupByType}
	}
	var b bytes.Buffer
	if err := r.Write(&b, c); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// releaseRepo is a repository named name (its directory's name shows in
// the notes) with an origin remote at url.
func releaseRepo(t *testing.T, name, url string) *gittest.Repo {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	r := gittest.NewAt(t, dir)
	if _, err := r.Git.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{url}}); err != nil {
		t.Fatal(err)
	}
	return r
}

// annotatedTag tags HEAD with a message, dated half an hour after the clock.
func annotatedTag(t *testing.T, r *gittest.Repo, name string) {
	t.Helper()
	head, err := r.Git.Head()
	if err != nil {
		t.Fatal(err)
	}
	sig := &object.Signature{Name: "Rel Eng", Email: "release@example.com", When: r.Clock.Add(30 * time.Minute)}
	if _, err := r.Git.CreateTag(name, head.Hash(), &git.CreateTagOptions{Tagger: sig, Message: "Release " + name}); err != nil {
		t.Fatal(err)
	}
}

// TestReleaseNotesGolden: two repositories, one on GitHub (ssh remote) and
// one on GitLab (a nested group), with Conventional Commits, area:
// prefixes, lightweight and annotated tags, a breaking change, two bumps
// of one dependency and subjects holding HTML, pipes, backticks and
// stars, written in every format as `digest summarize` writes them
// (cmd.TestSummarizeGolden checks the command writes these writers' bytes).
// Rendered as GitHub renders Markdown, no HTML from a commit gets through.
func TestReleaseNotesGolden(t *testing.T) {
	api := releaseRepo(t, "api", "git@github.com:acme/api.git")
	api.Write("main.go", "package main\n\nfunc main() {}\n").Commit("feat: serve the first endpoint")
	annotatedTag(t, api, "v0.1.0")
	api.Write("router.go", "package main\n\nfunc route(p string) string {\n\treturn p\n}\n").Commit("fix(router): handle trailing slashes (#12)")
	api.Write("go.mod", "module acme/api\n\nrequire golang.org/x/net v0.20.0\n").Commit("Bump golang.org/x/net from 0.19.0 to 0.20.0")
	api.Write("go.mod", "module acme/api\n\nrequire golang.org/x/net v0.23.0\n").Commit("Bump golang.org/x/net from 0.20.0 to 0.23.0 (#15)")
	api.Write("api.go", "package main\n\nfunc v2() {}\n").Commit("feat(api)!: drop the v1 endpoints\n\nBREAKING CHANGE: /v1 is gone; call /v2 instead.")
	api.Tag("v0.2.0")
	api.Write("README.md", "# api\n\nEscapes <script> and | pipes.\n").Commit("docs: explain <script> handling, `|` pipes and *stars*")
	api.Write("router.go", "package main\n\nvar routes = map[string]string{}\n\nfunc route(p string) string {\n\tif r, ok := routes[p]; ok {\n\t\treturn r\n\t}\n\treturn p\n}\n").
		Commit("perf(router): cache compiled routes")

	web := releaseRepo(t, "web", "https://gitlab.com/acme/frontend/web.git")
	web.Write("ui/header.js", "export const header = '<mark>';\n").Commit("ui: add the <mark> header component for <name>")
	web.Write("package.json", "{\"engines\": {\"node\": \"22\"}}\n").Commit("build: require node 22")
	annotatedTag(t, web, "v1.0.0")
	web.Write(".gitlab-ci.yml", "test:\n  script: npm test\n").Commit("ci: test on every push")
	web.Write("ui/header.js", "export const header = '&lt;mark&gt;';\n").Commit("fix: escape the header, see !7 and #8")

	var md string
	for _, format := range []string{"markdown", "jsonl", "json"} {
		h := newTestRun(t) // a database each: no entry reads as cached
		opts := h.options("", api.Dir, web.Dir)
		opts.Release = cliRelease(t, format == "json")
		out := renderAs(t, format, &h.mustRun(opts).Changelog)
		compareGolden(t, "releasenotes."+format, out)
		if format == "markdown" {
			md = out
		}
	}
	for _, want := range []string{
		"## api\n\n### Unreleased\n\n#### Performance\n",
		"### v0.2.0 (", "### v0.1.0 (", "#### Breaking changes\n\n- **api:** ",
		"(https://github.com/acme/api/commit/", "[#12](https://github.com/acme/api/pull/12)",
		"Bumps golang.org/x/net from 0.19.0 to 0.23.0 (2 updates).",
		"(https://gitlab.com/acme/frontend/web/-/commit/", "[\\!7](https://gitlab.com/acme/frontend/web/-/merge_requests/7)",
		"[#8](https://gitlab.com/acme/frontend/web/-/issues/8)", "- **ui:** ",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("no %q in the notes:\n%s", want, md)
		}
	}
	// Rendered as GitHub renders it, no HTML from a commit gets through and
	// the text reads as the subjects were written.
	var html bytes.Buffer
	gfm := goldmark.New(goldmark.WithExtensions(extension.GFM))
	if err := gfm.Convert([]byte(md), &html); err != nil {
		t.Fatal(err)
	}
	err := ast.Walk(gfm.Parser().Parse(text.NewReader([]byte(md))), func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if k := n.Kind(); entering && (k == ast.KindRawHTML || k == ast.KindHTMLBlock || k == ast.KindImage) {
			t.Errorf("a %s node in the notes", k)
		}
		return ast.WalkContinue, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"&lt;script&gt; handling, <code>|</code> pipes and *stars*", "&lt;mark&gt; header component for &lt;name&gt;"} {
		if !strings.Contains(html.String(), want) {
			t.Errorf("the rendered notes lack %q:\n%s", want, html.String())
		}
	}
	for _, tag := range []string{"<script", "<mark", "<name"} {
		if strings.Contains(html.String(), tag) {
			t.Errorf("the rendered notes hold %s:\n%s", tag, html.String())
		}
	}
}

// TestNamedReleaseStaysOnTop: the section Release.Tag or Release.Bump
// names is written above the last release even when its newest commit was
// authored before that release's tag (and merged after it): the notes
// order releases by their dates, and the named one is dated no earlier
// than the last (TestNamedReleaseIsDatedNoEarlierThanTheLast checks the
// dates).
func TestNamedReleaseStaysOnTop(t *testing.T) {
	dir, _ := mergedAfterTheTag(t)
	h := newTestRun(t)
	for name, rel := range map[string]Release{"v0.2.0": {Tag: "v0.2.0"}, "v0.1.1": {Bump: BumpAuto}} { // a feat in 0.x: a patch
		opts := h.options("", dir)
		opts.Release = cliRelease(t, false)
		opts.Release.Tag, opts.Release.Bump = rel.Tag, rel.Bump
		md := renderAs(t, "markdown", &h.mustRun(opts).Changelog)
		if newer, older := strings.Index(md, "## "+name), strings.Index(md, "## v0.1.0"); newer < 0 || older < newer {
			t.Errorf("%+v: the new release at %d and v0.1.0 at %d:\n%s", rel, newer, older, md)
		}
	}
}
