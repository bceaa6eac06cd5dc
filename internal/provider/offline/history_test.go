package offline_test

import (
	"context"
	"fmt"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/prompt"
	"github.com/digest-cli/digest/internal/tokenizer"
)

// The generated history holds, in realistic form, every kind of commit the
// offline summary used to get wrong on go-git's and git.git's histories.
// Each commit goes through a real request and back, as the provider reads it.

// file writes one file's part of a unified diff.
func file(p, body string) string {
	return "diff --git a/" + p + " b/" + p + "\n--- a/" + p + "\n+++ b/" + p + "\n" + body
}

const goModHunk = "@@ -3,7 +3,7 @@ module example.com/app\n go 1.22\n \n require (\n-\tgolang.org/x/net v0.24.0\n+\tgolang.org/x/net v0.25.0\n \tgolang.org/x/text v0.15.0\n )\n"

const poHunk = "@@ -120,7 +120,7 @@ msgstr \"\"\n #: builtin/add.c:412\n msgid \"adding files failed\"\n-msgstr \"theip ar chur comhad\"\n+msgstr \"theip ar chomhaid a chur leis\"\n \n #: builtin/add.c:430\n"

const adocHunk = "@@ -40,6 +40,9 @@ include::includes/cmd-config-section-all.adoc[]\n OPTIONS\n -------\n+--quiet::\n+\tSuppress the progress report.\n+\n --dry-run::\n \tShow what would be done.\n"

const constHunk = "@@ -12,6 +12,7 @@ import (\n const (\n \tdefaultTimeout = 30 * time.Second\n \tmaxRetries     = 5\n+\tmaxRedirects   = 10\n )\n \n var (\n"

const varHunk = "@@ -20,7 +21,8 @@ const (\n var (\n \tErrClosed = errors.New(\"client: closed\")\n-\tErrTimeout = errors.New(\"timeout\")\n+\tErrTimeout = errors.New(\"client: timeout\")\n+\tErrRedirects = errors.New(\"client: too many redirects\")\n )\n \n"

// addedBelow adds a function under OnlyDigits: git's header names
// OnlyDigits, the hunk's own definition is NoRepeats.
const addedBelow = "@@ -40,6 +40,21 @@ func OnlyDigits(s string) error {\n \t}\n \treturn nil\n }\n+\n+// NoRepeats refuses a list that names one value twice.\n+func NoRepeats(values []string) error {\n+\tseen := map[string]bool{}\n+\tfor _, v := range values {\n+\t\tif seen[v] {\n+\t\t\treturn fmt.Errorf(\"%q given twice\", v)\n+\t\t}\n+\t\tseen[v] = true\n+\t}\n+\treturn nil\n+}\n"

const addedBelowPy = "@@ -30,6 +30,12 @@ class Loader:\n     def load(self, path):\n         return self._read(path)\n \n+    def reload(self, path):\n+        self._cache.pop(path, None)\n+        return self.load(path)\n+\n     def _read(self, path):\n         with open(path) as f:\n"

const addedBelowC = "@@ -210,6 +210,18 @@ static int parse_refspec(const char *spec, struct refspec *rs)\n \treturn 0;\n }\n \n+static struct ref *find_tracking_ref(struct ref *refs, const char *name)\n+{\n+\tfor (; refs; refs = refs->next)\n+\t\tif (!strcmp(refs->name, name))\n+\t\t\treturn refs;\n+\treturn NULL;\n+}\n+\n int cmd_fetch(int argc, const char **argv, const char *prefix)\n {\n"

const modifiedGo = "@@ -88,7 +88,7 @@ func (c *Client) Do(req *Request) (*Response, error) {\n \tif c.closed {\n \t\treturn nil, ErrClosed\n \t}\n-\tctx, cancel := context.WithTimeout(req.ctx, defaultTimeout)\n+\tctx, cancel := context.WithTimeout(req.Context(), defaultTimeout)\n \tdefer cancel()\n"

type generated struct {
	c prompt.Commit
	// names maps a file's base name to the definitions the summary must
	// name for it, and wrong to those it must not.
	names, wrong map[string][]string
}

func hash(i int) string { return fmt.Sprintf("%040x", 0xabc000+i) }

// generatedHistory builds the history; each kind of message and diff
// appears with several subjects, so the median is not one commit's.
func generatedHistory() []generated {
	subjects := []string{
		"client: retry idempotent requests",
		"fix(parser): accept a trailing comma in arrays",
		"plumbing: format/packfile, reuse the inflate buffer",
		"builtin/fetch: report the ref that failed to update",
		"docs: explain the cache directory",
		"Speed up status on large trees",
	}
	bodies := []string{
		// Context first; the change in the next paragraph.
		"A previous commit made sure every request carries a context.\nThe retry loop still used its own.\n\nUse the request's context for each attempt.",
		"Currently the parser stops at the first trailing comma and reports a\nconfusing error.\n\nAccept the comma, as the JSON5 readers our users feed us do.",
		"Since commit 1a2b3c4d5e (packfile: inflate lazily, 2024-02-11) every\nobject allocates a new buffer.\n\nKeep one buffer per scanner.",
		"When the atomic mode was added, the error lost the ref's name.\n\nName it again.",
		"As reported on the mailing list, the cache directory is never described.",
		"In the past this walked every tree twice.\n\nWalk it once.",
		// A sentence that ends at a colon, introducing a block.
		"The decoder rejects these hunk headers:\n\n    @@ -1 +1 @@ func (x) {\n\nIt now reads them.",
		"Two issues when detecting a repository:\n\n- a .git file was not followed\n- a bare repository was missed",
		// Squash-merge bullets.
		"* feat: retry idempotent requests (#2429)\n\n* chore(ci): pin the lint action\n\n* test: cover retries\n\n---------\n\nCo-authored-by: Sam Doe <sam@example.com>",
		"Squashed changes:\n* parser: accept trailing comma\n* parser: test it\n",
		// A plain, useful first sentence with a wrapped line and a trailer.
		"Requests that time out are now retried once with backoff, so a\nslow proxy no longer fails the whole run.\n\nSigned-off-by: Ana Lee <ana@example.com>",
		"",
	}
	var out []generated
	n := 0
	next := func(subject, body string, files []prompt.File, diff string, names, wrong map[string][]string) {
		msg := subject
		if body != "" {
			msg += "\n\n" + body
		}
		out = append(out, generated{
			c:     prompt.Commit{Hash: hash(n), Author: "Ana Lee", Date: "2025-01-02T03:04:05Z", Message: msg + "\n", Files: files, Diff: diff},
			names: names, wrong: wrong,
		})
		n++
	}
	for i, subject := range subjects {
		for j, body := range bodies {
			switch (i + j) % 8 {
			case 0: // a dependency bump: go.mod's header is no function
				next(subject, body, []prompt.File{
					{Status: 'M', Path: "go.mod", Added: 1, Removed: 1},
					{Status: 'M', Path: "go.sum", Added: 2, Removed: 2, Skip: tokenizer.Lockfile},
				}, file("go.mod", goModHunk), nil, map[string][]string{"go.mod": {"require", "module"}})
			case 1: // translations and documentation
				next(subject, body, []prompt.File{
					{Status: 'M', Path: "po/ga.po", Added: 1, Removed: 1},
					{Status: 'M', Path: "Documentation/git-add.adoc", Added: 3},
				}, file("po/ga.po", poHunk)+file("Documentation/git-add.adoc", adocHunk), nil,
					map[string][]string{"ga.po": {"msgstr"}, "git-add.adoc": {"include", "itself"}})
			case 2: // const and var blocks
				next(subject, body, []prompt.File{
					{Status: 'M', Path: "client/client.go", Added: 3, Removed: 1},
				}, file("client/client.go", constHunk+varHunk), nil,
					map[string][]string{"client.go": {"const", "var", "import"}})
			case 3: // a function added below another
				next(subject, body, []prompt.File{
					{Status: 'M', Path: "args.go", Added: 15},
				}, file("args.go", addedBelow),
					map[string][]string{"args.go": {"NoRepeats"}}, map[string][]string{"args.go": {"OnlyDigits"}})
			case 4: // a method added in Python, a function in C
				next(subject, body, []prompt.File{
					{Status: 'M', Path: "tools/loader.py", Added: 4},
					{Status: 'M', Path: "builtin/fetch.c", Added: 8},
				}, file("tools/loader.py", addedBelowPy)+file("builtin/fetch.c", addedBelowC),
					map[string][]string{"loader.py": {"reload"}, "fetch.c": {"find_tracking_ref"}},
					map[string][]string{"loader.py": {"Loader"}, "fetch.c": {"parse_refspec", "ref"}})
			case 5: // nine files, eight of them never diffed
				files := []prompt.File{{Status: 'M', Path: "assets/index.go", Added: 1}}
				for k := range 8 {
					files = append(files, prompt.File{Status: 'A', Path: fmt.Sprintf("assets/icon-%d.png", k), Skip: "binary"})
				}
				next(subject, body, files, file("assets/index.go", "@@ -3,3 +3,4 @@ package assets\n \n //go:embed *.png\n var icons embed.FS\n+var _ = icons\n"), nil, nil)
			case 6: // a plain change inside one function
				next(subject, body, []prompt.File{
					{Status: 'M', Path: "client/client.go", Added: 1, Removed: 1},
					{Status: 'M', Path: "client/client_test.go", Added: 12},
				}, file("client/client.go", modifiedGo)+file("client/client_test.go", "@@ -50,3 +50,15 @@ func TestDo(t *testing.T) {\n }\n+\n+func TestDoUsesRequestContext(t *testing.T) {\n+\tt.Parallel()\n+}\n"),
					map[string][]string{"client.go": {"Do"}}, nil)
			default: // more than the request lists: 75 files, 210 skipped
				var files []prompt.File
				for k := range 75 {
					files = append(files, prompt.File{Status: 'M', Path: fmt.Sprintf("pkg/m%02d/m.go", k), Added: 2, Removed: 1})
				}
				for k := range 210 {
					files = append(files, prompt.File{Status: 'A', Path: fmt.Sprintf("vendor/example.com/v%03d/v.go", k), Added: 9, Skip: tokenizer.Vendored})
				}
				next(subject, body, files, file("pkg/m00/m.go", "@@ -1,3 +1,4 @@ package m00\n+// m00 is generated.\n"), nil, nil)
			}
		}
	}
	return out
}

// summaries answers the whole history through the provider, a few commits
// a request, and reads the answers back as the summarizer does.
func summaries(t *testing.T, history []generated) map[string]string {
	t.Helper()
	p, _ := newProvider(t)
	got := map[string]string{}
	for start := 0; start < len(history); start += 8 {
		var batch []prompt.Commit
		var asked []string
		for _, g := range history[start:min(start+8, len(history))] {
			batch = append(batch, g.c)
			asked = append(asked, g.c.Hash)
		}
		resp, err := p.Complete(context.Background(), prompt.Request("offline", batch))
		if err != nil {
			t.Fatal(err)
		}
		answers, missing := prompt.ParseAnswer(resp.Text, asked)
		if len(missing) > 0 {
			t.Fatalf("no answer for %v", missing)
		}
		for h, s := range answers {
			got[h] = s.Summary
		}
	}
	return got
}

var (
	// parenthesised is a name list after a file: "x.go (A and B)".
	parenthesised = regexp.MustCompile(`([\w./-]+) \(([^()]*)\)`)
	keywords      = strings.Fields("const var type import package func return if for struct static int void def class fn impl module require")
	contextWords  = regexp.MustCompile(`(?i)previously|a previous commit|since commit|currently|when .* was added|as reported|in the past`)
	bulletText    = regexp.MustCompile(`(?:^|\. |\)\. )[*•-] \w|chore\(ci\)|test: cover|Co-authored`)
	skipReasons   = []string{tokenizer.Lockfile, tokenizer.Vendored, tokenizer.Generated, "binary", "large", "missing object"}
)

// artefacts lists what is wrong in one summary, by kind.
func artefacts(g generated, s string) map[string]string {
	found := map[string]string{}
	subject, _, _ := strings.Cut(g.c.Message, "\n")
	rest := strings.TrimPrefix(s, sentenceOf(subject))
	changesAt := strings.Index(rest, "Changes ")
	if changesAt < 0 {
		changesAt = len(rest)
	}
	body, changes := strings.TrimSpace(rest[:changesAt]), rest[changesAt:]
	for _, m := range parenthesised.FindAllStringSubmatch(changes, -1) {
		what := m[2]
		if slices.Contains(skipReasons, what) || strings.HasPrefix(what, "+") {
			continue
		}
		if !codeFile(m[1]) {
			found["name for a file that is not code"] = m[0]
		}
		for _, name := range strings.FieldsFunc(what, func(r rune) bool { return r == ',' || r == ' ' }) {
			if slices.Contains(keywords, name) {
				found["keyword as a name"] = m[0]
			}
		}
	}
	for f, names := range g.names {
		for _, n := range names {
			if !regexp.MustCompile(regexp.QuoteMeta(f) + ` \([^()]*\b` + n + `\b`).MatchString(changes) {
				found["a hunk's own definition not named"] = f + " lacks " + n
			}
		}
	}
	for f, names := range g.wrong {
		for _, n := range names {
			if regexp.MustCompile(regexp.QuoteMeta(f) + ` \([^()]*\b` + n + `\b`).MatchString(changes) {
				found["a definition named that the hunk does not change"] = f + " names " + n
			}
		}
	}
	if contextWords.MatchString(body) {
		found["context sentence leads"] = body
	}
	if strings.Contains(s, ":.") || strings.HasSuffix(body, ":") {
		found["sentence cut at a colon"] = body
	}
	if bulletText.MatchString(body) {
		found["bullet list in the sentence"] = body
	}
	t := prompt.TotalsOf(g.c.Files)
	if t.Skipped > 0 && t.Files > t.Skipped {
		want := fmt.Sprintf("Changes %d files", t.Files)
		left := fmt.Sprintf("%d left out of the diff", t.Skipped)
		if !strings.Contains(changes, want) || !strings.Contains(changes, left) {
			found["file count hides the files left out"] = changes
		}
	}
	return found
}

func sentenceOf(subject string) string {
	subject = strings.TrimSpace(subject)
	if !strings.ContainsAny(subject[len(subject)-1:], ".!?") {
		subject += "."
	}
	return subject
}

func codeFile(p string) bool {
	switch path.Ext(p) {
	case ".go", ".c", ".h", ".py", ".js", ".ts", ".java", ".rs", ".rb", ".sh":
		return true
	}
	return false
}

func TestGeneratedHistoryHasNoArtefacts(t *testing.T) {
	history := generatedHistory()
	got := summaries(t, history)
	counts := map[string]int{}
	examples := map[string]string{}
	for _, g := range history {
		for kind, example := range artefacts(g, got[g.c.Hash]) {
			counts[kind]++
			examples[kind] = got[g.c.Hash] + "\n      because: " + example
		}
	}
	kinds := make([]string, 0, len(counts))
	for k := range counts {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		t.Errorf("%s: %d of %d summaries, e.g.\n    %s", k, counts[k], len(history), examples[k])
	}
}

// TestGeneratedHistoryMedianLength: a summary is a changelog line, not a
// paragraph.
func TestGeneratedHistoryMedianLength(t *testing.T) {
	history := generatedHistory()
	got := summaries(t, history)
	lengths := make([]int, 0, len(got))
	for _, s := range got {
		lengths = append(lengths, len(s))
	}
	sort.Ints(lengths)
	median := lengths[len(lengths)/2]
	t.Logf("median summary length over %d generated commits: %d bytes (longest %d)", len(lengths), median, lengths[len(lengths)-1])
	if median >= 200 {
		t.Errorf("median summary length is %d bytes, want under 200", median)
	}
}
