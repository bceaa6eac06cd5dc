// Package hostiletest holds the hostile text the report writers' tests
// feed through every format (terminal escapes, bidirectional overrides,
// Markdown and HTML of a model's own), and the checks that a report shows
// it as text and keeps its structure. It is imported by tests only.
package hostiletest

import (
	"bytes"
	"strings"
	"testing"
	"unicode"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

// Each kind of hostile text a commit, a dataset or a model's answer can
// carry into a report.
const (
	// OSC52 writes the terminal's clipboard.
	OSC52 = "\x1b]52;c;Y3VybCBldmlsLnNofHNo\x07"
	// Title sets the terminal's title.
	Title = "\x1b]0;sudo password:\x07"
	// Clear clears the screen and moves the cursor home.
	Clear = "\x1b[2J\x1b[H"
	// Rewrite overwrites a line with a carriage return.
	Rewrite = "all tests failed\rall tests passed"
	// RTL reverses the rest of a file name.
	RTL = "invoice_\u202egnp.exe"
	// C1 is CSI as one C1 control character.
	C1 = "\u009b2J"
	// Isolate reorders text with isolates and a right-to-left mark.
	Isolate = "\u2067admin\u2069\u200f"
	// Tags hides "IGN" in invisible tag characters.
	Tags = "ok\U000e0049\U000e0047\U000e004e"
)

// Text is every kind of hostile text in one string, with two bytes that
// are not UTF-8 at its end.
var Text = strings.Join([]string{OSC52, Title, Clear, Rewrite, RTL, C1, Isolate, Tags, "\xff\xfe"}, " ")

// Summary is what a model could answer: Markdown structure, HTML, a
// remote image and an unclosed fence that would swallow the rest.
const Summary = "# Pwned\n\nAdds <mark>retries</mark> to remote.<name>.promisor.\n\n" +
	"> quoted\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n![pixel](https://evil.example/p.png) [click](https://evil.example)\n" +
	"<img src=x onerror=alert(1)>\n<script>alert(1)</script>\n\x1b]0;title\x07\u202e\n```\nthe rest of the changelog"

// gfm reads Markdown back as GitHub does.
var gfm = goldmark.New(goldmark.WithExtensions(extension.GFM))

// MarkdownNodes counts the nodes of each kind (goldmark's names:
// "Heading", "ListItem", "FencedCodeBlock", ...) in a Markdown document
// read as GitHub reads it.
func MarkdownNodes(t testing.TB, md []byte) map[string]int {
	t.Helper()
	doc := gfm.Parser().Parse(text.NewReader(md))
	kinds := map[string]int{}
	err := ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			kinds[n.Kind().String()]++
		}
		return ast.WalkContinue, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return kinds
}

// CheckTerminalSafe fails t when out holds anything a terminal acts on or
// that reorders or hides text: control characters but line feed and tab,
// DEL, C1 controls, bidirectional controls, invisible format characters,
// tag characters, bytes that are not UTF-8. name says which report it is.
func CheckTerminalSafe(t testing.TB, name string, out []byte) {
	t.Helper()
	for i, r := range string(out) {
		notUTF8 := r == unicode.ReplacementChar && !bytes.HasPrefix(out[i:], []byte("\ufffd"))
		if notUTF8 || r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r <= 0x9f ||
			unicode.Is(unicode.Cf, r) && r != 0x200c && r != 0x200d || r == 0x2028 || r == 0x2029 {
			t.Errorf("%s: %U at byte %d: %q", name, r, i, out[max(0, i-20):min(len(out), i+20)])
			return
		}
	}
}
