package offline

import "testing"

func TestBodySentence(t *testing.T) {
	tests := []struct {
		name, subject, body, want string // want "": no sentence
	}{
		{"first sentence", "cache: keep results", "The resolver asked the server every time. Later text.", "The resolver asked the server every time."},
		{"wrapped lines join", "x: y", "The resolver asked\nthe server every time.", "The resolver asked the server every time."},
		{"no stop at the end", "x: y", "The resolver asked the server every time", "The resolver asked the server every time."},
		{"context first, change next", "client: retry",
			"A previous commit made sure every request has a context.\nThe retry loop still used its own.\n\nUse the request's context for each attempt.",
			"Use the request's context for each attempt."},
		{"currently", "x: y", "Currently the parser stops early.\n\nAccept the comma.", "Accept the comma."},
		{"previously", "x: y", "Previously we leaked fds.\n\nClose them.", "Close them."},
		{"since commit", "x: y", "Since commit 1a2b3c4d5e (x: y, 2024-01-01) we copy twice.\n\nCopy once.", "Copy once."},
		{"a cited commit", "x: y", "Commit 8174627b3d (diff-lib: z, 2021-08-22) taught it to skip.\n\nSkip less.", "Skip less."},
		{"when it was added", "x: y", "When the atomic mode was added, the name was lost.\n\nName it.", "Name it."},
		{"as reported", "x: y", "As reported on the list, it crashes.\n\nDo not crash.", "Do not crash."},
		{"in the past", "x: y", "In the past this walked twice.", ""},
		{"a sentence that ends at a colon", "x: y", "The decoder rejects these headers:\n\n    @@ -1 +1 @@\n\nIt now reads them.", "It now reads them."},
		{"a paragraph that runs into a code block", "x: y", "Running\n    git foo\nfails.", ""},
		{"a list's introduction", "x: y", "Two issues:\n- one\n- two", ""},
		{"squash bullets", "feat: retry (#2430)", "* feat: retry (#2429)\n\n* chore(ci): pin\n\n---------\n\nCo-authored-by: A <a@example.com>", ""},
		{"text after a list is its own paragraph", "x: y", "* one\n* two\n\nBoth are needed for the release.", "Both are needed for the release."},
		{"a list item's wrapped line stays in the list", "x: y", "* one that\nwraps\n\nDone here.", "Done here."},
		{"trailers end the body", "x: y", "Signed-off-by: A <a@example.com>\n\nLater prose.", ""},
		{"a trailer right under the text", "x: y", "The cache was stale\nSigned-off-by: A <a@example.com>", "The cache was stale."},
		{"e.g. does not end a sentence", "x: y", "Tools, e.g. linters, read it. More.", "Tools, e.g. linters, read it."},
		{"a stop in code does not end a sentence", "x: y", "Replace `[--format=... | -z]` with `-z` in the synopsis. More.", "Replace `[--format=... | -z]` with `-z` in the synopsis."},
		{"an ellipsis does not end a sentence", "x: y", "It uses the 'test $(git ...) = x' pattern. More.", "It uses the 'test $(git ...) = x' pattern."},
		{"a quoted operator does not end a sentence", "x: y", "It uses '! (git foo)' often.", "It uses '! (git foo)' often."},
		{"a sentence cut by a stray quote is left out", "x: y", "It prints \"yes. No.\n\nThe rest is fine.", "The rest is fine."},
		{"a connective leans on what was left out", "x: y", "Previously it failed.\n\nBut now it works.\n\nTest it.", "Test it."},
		{"a sentence that restates the subject", "build: bump golang.org/x/net from 0.24.0 to 0.25.0", "Bumps [golang.org/x/net](https://github.com/golang/net) from 0.24.0 to 0.25.0.\n- [Commits](https://example.com)", ""},
		{"Markdown links read as their text", "x: y", "See [the guide](https://example.com/g) for the new flags.", "See the guide for the new flags."},
		{"too long to fit beside the subject", "x: y", "This sentence goes on and on " + repeat("and on ", 20) + "until it ends.", ""},
		{"only three paragraphs are searched", "x: y", "Previously a.\n\nPreviously b.\n\nPreviously c.\n\nFourth says what changed.", ""},
		{"a run in lower case after a code block goes on with its sentence", "push: hint",
			"When pushing 'main' to 'origin', i.e.,\n\n    $ git push origin main\n\nit is easy to write\n\n    $ git push origin/main\n\nThat is taken as a repository.",
			"That is taken as a repository."},
		{"a sentence without a stop that a block follows is cut", "x: y", "Run\n\n    git foo\n\nto see it.", ""},
		{"the change wins over a description", "odb: free the cache",
			"The cache is allocated per source and outlives it.\n\nFree it when the source is closed.",
			"Free it when the source is closed."},
		{"a description when nothing says what changed", "x: y", "The helper keeps main small. It is tested.", "The helper keeps main small."},
		{"This patch says what changed", "x: y", "The parser is slow.\n\nThis patch caches the tokens.", "This patch caches the tokens."},
		{"Instead, then a verb", "x: y", "The loop copies every entry.\n\nInstead, reuse the entries.", "Instead, reuse the entries."},
		{"no body", "x: y", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := bodySentence(tt.body, tt.subject); got != tt.want {
				t.Errorf("bodySentence = %q, want %q", got, tt.want)
			}
		})
	}
}

func repeat(s string, n int) string {
	out := ""
	for range n {
		out += s
	}
	return out
}

func TestMendSubject(t *testing.T) {
	subject, body := mendSubject("config: support multiple insteadOf keys in co…", "…nfiguration\n\nMore text.")
	if subject != "config: support multiple insteadOf keys in configuration" || body != "\nMore text." {
		t.Errorf("mendSubject = %q, %q", subject, body)
	}
	if s, b := mendSubject("wait…", "No continuation."); s != "wait…" || b != "No continuation." {
		t.Errorf("a subject ending in … without a continuation changed: %q, %q", s, b)
	}
}
