package textsafe_test

import (
	"bytes"
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"

	"github.com/digest-cli/digest/internal/textsafe"
)

// The renderer the tests read Markdown back with: CommonMark with GFM's
// tables and strikethrough, as on GitHub. GFM's autolinks are left out
// here, since a bare URL is text that GitHub only makes clickable; raw
// HTML is left out by goldmark as <!-- raw HTML omitted -->, so that any
// of it shows as a comment.
var commonMark = goldmark.New(goldmark.WithExtensions(extension.Table, extension.Strikethrough))

func render(t testing.TB, md string) string {
	t.Helper()
	var b bytes.Buffer
	if err := commonMark.Convert([]byte(md), &b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

var tagPattern = regexp.MustCompile(`<[^>]*>`)

// textOf is what a reader sees of the HTML inside one element.
func textOf(inner string) string {
	return html.UnescapeString(tagPattern.ReplaceAllString(inner, ""))
}

// checkInline renders out, MarkdownInline(in), in every place a report
// puts it, and fails unless each shows exactly Line(in) as plain text.
func checkInline(t testing.TB, in, out string) {
	t.Helper()
	want := textsafe.Line(in)
	if strings.ContainsAny(out, "\n\r") {
		t.Fatalf("MarkdownInline(%q) = %q spans lines", in, out)
	}
	for _, place := range []struct{ name, prefix, suffix, open, close string }{
		{"paragraph", "", "", "<p>", "</p>\n"},
		{"list item", "- x ", "", "<ul>\n<li>x ", "</li>\n</ul>\n"},
		{"heading", "## ", "", "<h2>", "</h2>\n"},
		{"table cell", "| a | b |\n|:--|:--|\n| x | ", " |", "<table>\n<thead>\n<tr>\n<th style=\"text-align:left\">a</th>\n<th style=\"text-align:left\">b</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td style=\"text-align:left\">x</td>\n<td style=\"text-align:left\">", "</td>\n</tr>\n</tbody>\n</table>\n"},
	} {
		got := render(t, place.prefix+out+place.suffix)
		if want == "" {
			continue // nothing to show, and the place renders as it would empty
		}
		inner, ok := strings.CutPrefix(got, place.open)
		if ok {
			inner, ok = strings.CutSuffix(inner, place.close)
		}
		if !ok || strings.ContainsAny(inner, "<>") {
			t.Errorf("%s: MarkdownInline(%q) = %q renders as structure:\n%s", place.name, in, out, got)
			continue
		}
		if shown := html.UnescapeString(inner); shown != want {
			t.Errorf("%s: MarkdownInline(%q) = %q shows %q, want %q", place.name, in, out, shown, want)
		}
	}
}

func TestMarkdownInline(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"Add retries (see go.mod) in eval_table.go", "Add retries (see go.mod) in eval_table.go"},
		{"Fix <mark> handling", "Fix &lt;mark&gt; handling"},
		{"Document remote.<name>.promisor", "Document remote.&lt;name&gt;.promisor"},
		{"# Not a heading", `\# Not a heading`},
		{"> not a quote", `\> not a quote`},
		{"- not an item", `\- not an item`},
		{"+ not an item", `\+ not an item`},
		{"1. not an item", `1\. not an item`},
		{"12) not an item", `12\) not an item`},
		{"3.5 MB", "3.5 MB"},
		{"===", `\===`},
		{"a | b", `a \| b`},
		{"```go", "\\`\\`\\`go"},
		{"~~~", `\~\~\~`},
		{"*em* _em_ **strong** ~~del~~", `\*em\* \_em\_ \*\*strong\*\* \~\~del\~\~`},
		{"![pixel](https://evil.example/p.png)", `!\[pixel\](https://evil.example/p.png)`},
		{"[click](javascript:alert(1))", `\[click\](javascript:alert(1))`},
		{"[^1] and [ref]: https://x", `\[^1\] and \[ref\]: https://x`},
		{"<img src=x onerror=alert(1)>", "&lt;img src=x onerror=alert(1)&gt;"},
		{"<https://evil.example>", "&lt;https://evil.example&gt;"},
		{"&#x202e; &lt; R&D & co", "&amp;#x202e; &amp;lt; R&amp;D & co"},
		{"$x$ costs $5", `\$x\$ costs \$5`},
		{`C:\dir\`, `C:\\dir\\`},
		{"C# and foo #", `C# and foo \#`},
		{"two\nlines\r\nand\ttabs", "two lines and tabs"},
		{"invoice_\u202egnp.exe", `invoice\_\\u202egnp.exe`},
		{"\x1b]52;c;Y3VybA==\x07", `\\x1b\]52;c;Y3VybA==\\x07`},
		{"", ""},
	} {
		got := textsafe.MarkdownInline(tt.in)
		if got != tt.want {
			t.Errorf("MarkdownInline(%q) = %q, want %q", tt.in, got, tt.want)
		}
		checkInline(t, tt.in, got)
	}
}

func TestMarkdownCode(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"openai:gpt-4o-mini", "`openai:gpt-4o-mini`"},
		{"a`b", "``a`b``"},
		{"`x", "`` `x ``"},
		{"a\x1b[2Jb|c", "`a\\x1b[2Jb|c`"},
		{"", ""},
	} {
		got := textsafe.MarkdownCode(tt.in)
		if got != tt.want {
			t.Errorf("MarkdownCode(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if tt.in == "" {
			continue
		}
		rendered := render(t, "x "+got)
		if want := "<p>x <code>" + html.EscapeString(textsafe.Line(tt.in)) + "</code></p>\n"; strings.ReplaceAll(rendered, "&quot;", "&#34;") != want {
			t.Errorf("MarkdownCode(%q) = %q renders as %q, want %q", tt.in, got, rendered, want)
		}
	}
}

// checkSummary renders a summary as a changelog's bullet and fails unless
// it is one list item of text and code spans, showing nothing hidden.
func checkSummary(t testing.TB, in, out string) {
	t.Helper()
	if strings.ContainsAny(out, "\n\r") {
		t.Fatalf("MarkdownSummary(%q) = %q spans lines", in, out)
	}
	got := render(t, "- `abc1234` "+out+"\n- `def5678` next\n")
	inner, ok := strings.CutPrefix(got, "<ul>\n<li><code>abc1234</code> ")
	if ok {
		inner, ok = strings.CutSuffix(inner, "</li>\n<li><code>def5678</code> next</li>\n</ul>\n")
	}
	if out == "" {
		inner, ok = strings.CutPrefix(got, "<ul>\n<li><code>abc1234</code></li>\n<li><code>def5678</code> next</li>\n</ul>\n")
	}
	if !ok {
		t.Errorf("MarkdownSummary(%q) = %q breaks the list:\n%s", in, out, got)
		return
	}
	for _, tag := range tagPattern.FindAllString(inner, -1) {
		if tag != "<code>" && tag != "</code>" {
			t.Errorf("MarkdownSummary(%q) = %q renders %s:\n%s", in, out, tag, got)
		}
	}
	checkShown(t, textOf(inner), false)
}

func TestMarkdownSummary(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		{"prose", "Adds retries to the client.", "Adds retries to the client."},
		{"lines join", "Adds retries to the client.\nBackoff is capped at 8 s.", "Adds retries to the client. Backoff is capped at 8 s."},
		{"a wrapped sentence", "Adds retries to\nthe client.", "Adds retries to the client."},
		{"what a model writes",
			"## Summary\n\nAdds `Retry` to <Client>.\n\n- Caps backoff\n- Logs [retries](https://x)\n\n```go\nfunc f() {}\n```\n<details>open",
			"Summary: Adds `Retry` to &lt;Client&gt;. Caps backoff. Logs \\[retries\\](https://x). func f() {}. &lt;details&gt;open"},
		{"an unclosed fence", "Fixes the parser.\n```\nand swallows the rest", "Fixes the parser. and swallows the rest"},
		{"ordered items and tasks", "1. First\n2) Second\n- [x] done\n- [ ] todo", "First. Second. done. todo"},
		{"quotes", "> quoted\n> > more", "quoted more"},
		{"setext heading", "Title\n=====\nBody", "Title. Body"},
		{"closing hashes", "### Changes ###\nMore", "Changes: More"},
		{"rules", "One.\n***\n---\n___\nTwo.", "One. Two."},
		{"code spans stay", "Renames `old_name` to ``new`|name``, and `this one` opens only", "Renames `old_name` to ``new`|name``, and `this one` opens only"},
		{"an unmatched backtick", "Fixes ` in names", "Fixes \\` in names"},
		{"a code span keeps markup literal", "Fix `<mark>` handling", "Fix `<mark>` handling"},
		{"one line keeps its marker as text", "# Title", `\# Title`},
		{"one line, HTML", "Rewrites <the> parser & lexer.", "Rewrites &lt;the&gt; parser & lexer."},
		{"image", "Adds a logo ![x](https://evil.example/pixel.png)", `Adds a logo !\[x\](https://evil.example/pixel.png)`},
		{"escapes", "Adds\x1b]0;pwned\x07 a title\r\n\u202eesrever", `Adds\\x1b\]0;pwned\\x07 a title \\u202eesrever`},
		{"blank", " \n\t\n", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := textsafe.MarkdownSummary(tt.in)
			if got != tt.want {
				t.Errorf("MarkdownSummary(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
			checkSummary(t, tt.in, got)
		})
	}
}

var markdownSeeds = []string{
	"# h", "> q", "- i", "1. i", "```go\nx", "~~~", "<mark>", "&#x202e;", "[a](b)", "![a](b)", "a|b", "*a* _b_", "`a` ``b`` `c",
	"x\n===", "\\", "$a$", "<!-- c -->", "foo #", "\u202e", "\x1b[2J", "a_b", "_a_", "http://x/_a_", "[^1]", "\U0001f3f4\U000e0067",
}

func FuzzMarkdownInline(f *testing.F) {
	for _, s := range markdownSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkInline(t, s, textsafe.MarkdownInline(s))
	})
}

func FuzzMarkdownSummary(f *testing.F) {
	for _, s := range markdownSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkSummary(t, s, textsafe.MarkdownSummary(s))
	})
}
