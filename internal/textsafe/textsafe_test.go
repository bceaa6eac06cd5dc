package textsafe_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/digest-cli/digest/internal/textsafe"
)

// Hostile text as it reaches digest in commit subjects, author and file
// names, dataset text and model answers.
const (
	osc52     = "\x1b]52;c;Y3VybCBldmlsLnNofHNo\x07"         // writes the clipboard
	oscTitle  = "\x1b]0;sudo password:\x1b\\"                // sets the window title, ST-terminated
	clear     = "\x1b[2J\x1b[H"                              // clears the screen
	red       = "\x1b[31mred\x1b[0m"                         // colour
	rewrite   = "tests failed\rtests passed"                 // a bare CR writes over the line
	rtl       = "invoice_\u202egnp.exe"                      // reads as invoice_exe.png
	csi8bit   = "\u009b2J"                                   // C1 CSI, as UTF-8
	rawCSI    = "\x9b2J"                                     // C1 CSI, as the one byte of 8-bit terminals
	smuggled  = "ok\U000e0049\U000e0047\U000e004e\U000e004f" // tag characters spelling IGNO, invisible
	scotland  = "\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f"
	family    = "\U0001f468\u200d\U0001f469\u200d\U0001f467" // joined by ZWJ
	persian   = "می\u200cخواهم"                              // ZWNJ is spelling
	arabicNum = "\u0600\u0661\u0662"                         // a number sign that shows
)

func TestLine(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		{"clean", "Add retries (see go.mod)", "Add retries (see go.mod)"},
		{"OSC 52 clipboard", "a" + osc52 + "b", `a\x1b]52;c;Y3VybCBldmlsLnNofHNo\x07b`},
		{"OSC 0 title", oscTitle, `\x1b]0;sudo password:\x1b\`},
		{"clear screen", clear + "x", `\x1b[2J\x1b[Hx`},
		{"colour", red, `\x1b[31mred\x1b[0m`},
		{"bare CR", rewrite, "tests failed tests passed"},
		{"white space folds", "  a \t\n\v\f b\r\n\u0085c\u2028d\u2029e\u00a0f  ", "a b c d e f"},
		{"NUL and DEL", "a\x00b\x7fc", `a\x00b\x7fc`},
		{"RTL override", rtl, `invoice_\u202egnp.exe`},
		{"embeddings and isolates", "\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069", `\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069`},
		{"marks", "\u200e\u200f\u061c", `\u200e\u200f\u061c`},
		{"invisible", "a\u200bb\ufeffc\u00add\u2060e\u180ef", `a\u200bb\ufeffc\u00add\u2060e\u180ef`},
		{"C1 CSI", csi8bit, `\u009b2J`},
		{"NEL folds, other C1 shows", "a\u0085b\u0090c", `a b\u0090c`},
		{"8-bit CSI byte", rawCSI, `\x9b2J`},
		{"invalid UTF-8", "caf\xe9 \xff\xfe", `caf\xe9 \xff\xfe`},
		{"noncharacters XML forbids", "a\ufffeb\uffffc\ufffd", `a\ufffeb\uffffc` + "\ufffd"},
		{"smuggled tags", smuggled, `ok\U000e0049\U000e0047\U000e004e\U000e004f`},
		{"a flag keeps its tags", scotland + " go", scotland + " go"},
		{"a flag spells at most seven", "\U0001f3f4" + strings.Repeat("\U000e0061", 8) + "\U000e007f",
			"\U0001f3f4" + strings.Repeat("\U000e0061", 7) + `\U000e0061\U000e007f`},
		{"upper-case tags are not a flag's", "\U0001f3f4\U000e0041", "\U0001f3f4" + `\U000e0041`},
		{"joiners stay", family + " " + persian, family + " " + persian},
		{"number signs stay", arabicNum, arabicNum},
		{"backslashes stay", `C:\x1b\dir`, `C:\x1b\dir`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := textsafe.Line(tt.in)
			if got != tt.want {
				t.Errorf("Line(%q) = %q, want %q", tt.in, got, tt.want)
			}
			checkShown(t, got, false)
		})
	}
}

func TestText(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		{"lines and tabs stay", "a\n\tb\n", "a\n\tb\n"},
		{"CRLF is a line break", "a\r\nb\r\n", "a\nb\n"},
		{"bare CR is a line break", rewrite, "tests failed\ntests passed"},
		{"CR CR LF", "a\r\r\nb", "a\n\nb"},
		{"separators are line breaks", "a\u2028b\u2029c\u0085d", "a\nb\nc\nd"},
		{"VT and FF show", "a\vb\fc", `a\x0bb\x0cc`},
		{"spaces stay", "  a  b  ", "  a  b  "},
		{"OSC 52", osc52, `\x1b]52;c;Y3VybCBldmlsLnNofHNo\x07`},
		{"RTL override", rtl, `invoice_\u202egnp.exe`},
		{"invalid UTF-8", "\xc3(", `\xc3(`},
		{"flag", scotland, scotland},
		{"tags after a line break are not a flag's", "\U0001f3f4\n\U000e0067\U000e007f", "\U0001f3f4\n" + `\U000e0067\U000e007f`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := textsafe.Text(tt.in)
			if got != tt.want {
				t.Errorf("Text(%q) = %q, want %q", tt.in, got, tt.want)
			}
			checkShown(t, got, true)
		})
	}
}

// TestVeryLongLine: a 4 MB line with escapes all along comes out whole,
// every escape shown.
func TestVeryLongLine(t *testing.T) {
	unit := "abc" + clear + rtl + "\xff"
	in := strings.Repeat(unit, 4<<20/len(unit))
	for name, f := range map[string]func(string) string{"Line": textsafe.Line, "Text": textsafe.Text} {
		got := f(in)
		want := strings.Repeat(`abc\x1b[2J\x1b[Hinvoice_\u202egnp.exe\xff`, 4<<20/len(unit))
		if got != want {
			t.Errorf("%s: %d bytes out, want %d", name, len(got), len(want))
		}
	}
}

// TestCleanTextIsNotCopied: nearly all text has nothing to show, and a
// report of a million answers should not copy each of them.
func TestCleanTextIsNotCopied(t *testing.T) {
	s := strings.Repeat("Größe — 東京 ✓ "+family+" "+persian+"\tx\n", 100)
	if n := testing.AllocsPerRun(10, func() { textsafe.Text(s) }); n != 0 {
		t.Errorf("Text allocated %v times for clean text", n)
	}
	line := strings.Repeat("Größe — 東京 ✓ a_b ", 100) + "end"
	if n := testing.AllocsPerRun(10, func() { textsafe.Line(line) }); n != 0 {
		t.Errorf("Line allocated %v times for clean text", n)
	}
}

func TestAppendJSON(t *testing.T) {
	values := []string{osc52, oscTitle, rtl, csi8bit, smuggled, scotland, "a\x7fb", "line\u2028sep", family, "<b>&</b>"}
	var doc bytes.Buffer
	enc := json.NewEncoder(&doc)
	enc.SetEscapeHTML(false) // as the reports write it
	if err := enc.Encode(values); err != nil {
		t.Fatal(err)
	}
	safe := textsafe.AppendJSON(nil, doc.Bytes())
	var back []string
	if err := json.Unmarshal(safe, &back); err != nil {
		t.Fatalf("%v: %s", err, safe)
	}
	if fmt.Sprint(back) != fmt.Sprint(values) {
		t.Errorf("read back %q, want %q", back, values)
	}
	checkShown(t, string(safe), true) // Encode ends the document with a line feed
	for _, want := range []string{`\u202e`, `\u009b`, `\udb40\udc49`, `\u007f`, scotland, family, "<b>&</b>"} {
		if !bytes.Contains(safe, []byte(want)) {
			t.Errorf("no %q in %s", want, safe)
		}
	}
}

// TestWriter: what a terminal gets through a Writer, one byte at a time
// or all at once, is what Text makes of the whole.
func TestWriter(t *testing.T) {
	in := "ok\r\n" + osc52 + rtl + "\xe2\x80" + family + "\r" + scotland + "\U0001f3f4\n" + smuggled + "Größe\r\xf0\x9f"
	want := textsafe.Text(in)
	for _, size := range []int{1, 2, 3, 5, 7, len(in)} {
		var b bytes.Buffer
		w := textsafe.NewWriter(&b)
		for i := 0; i < len(in); i += size {
			chunk := []byte(in[i:min(i+size, len(in))])
			if n, err := w.Write(chunk); n != len(chunk) || err != nil {
				t.Fatalf("Write(%q) = %d, %v", chunk, n, err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if b.String() != want {
			t.Errorf("in writes of %d bytes:\n got %q\nwant %q", size, b.String(), want)
		}
	}
}

// checkShown fails when s holds anything a terminal or a reader could be
// fooled by: a control character (line feed and tab allowed in text), a
// C1 control, a bidirectional control, an invisible format character but
// the joiners, a tag character outside a flag, or bytes that are not UTF-8.
func checkShown(t testing.TB, s string, text bool) {
	t.Helper()
	if !utf8.ValidString(s) {
		t.Errorf("not UTF-8: %q", s)
	}
	flagTags := -1
	for _, r := range s {
		if r == 0x1f3f4 {
			flagTags = 0
			continue
		}
		isTag := r >= 0xe0000 && r <= 0xe007f
		if isTag && flagTags >= 0 && flagTags < 8 {
			flagTags++
			continue
		}
		flagTags = -1
		switch {
		case text && (r == '\n' || r == '\t'):
		case r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f:
			t.Errorf("control character %U in %q", r, s)
		case r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || r == 0x200e || r == 0x200f || r == 0x061c:
			t.Errorf("bidirectional control %U in %q", r, s)
		case r == 0x2028 || r == 0x2029 || r == 0xfffe || r == 0xffff || isTag:
			t.Errorf("%U in %q", r, s)
		case unicode.Is(unicode.Cf, r) && r != 0x200c && r != 0x200d && !unicode.Is(unicode.Prepended_Concatenation_Mark, r):
			t.Errorf("format character %U in %q", r, s)
		}
	}
}

func FuzzTerminal(f *testing.F) {
	for _, s := range []string{osc52, oscTitle, clear, red, rewrite, rtl, csi8bit, rawCSI, smuggled, scotland, family, persian, "a\r\nb", "\xe2\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		line, text := textsafe.Line(s), textsafe.Text(s)
		checkShown(t, line, false)
		checkShown(t, text, true)
		if strings.ContainsAny(line, "\n\t") || strings.HasPrefix(line, " ") || strings.HasSuffix(line, " ") || strings.Contains(line, "  ") {
			t.Errorf("Line(%q) = %q is not one trimmed line", s, line)
		}
		if again := textsafe.Line(line); again != line {
			t.Errorf("Line not idempotent: %q then %q", line, again)
		}
		if again := textsafe.Text(text); again != text {
			t.Errorf("Text not idempotent: %q then %q", text, again)
		}
		var b bytes.Buffer
		w := textsafe.NewWriter(&b)
		half := len(s) / 2
		w.Write([]byte(s[:half]))
		w.Write([]byte(s[half:]))
		w.Flush()
		if b.String() != text {
			t.Errorf("Writer in two writes %q, Text %q", b.String(), text)
		}
		doc, _ := json.Marshal(s)
		var want, back string
		json.Unmarshal(doc, &want)
		if err := json.Unmarshal(textsafe.AppendJSON(nil, doc), &back); err != nil || back != want {
			t.Errorf("AppendJSON(%s) read back %q, %v; want %q", doc, back, err, want)
		}
	})
}

func BenchmarkText(b *testing.B) {
	clean := strings.Repeat("Rewrites the parser and lexer; Größe — 東京.\n", 100)
	hostile := strings.Repeat("Rewrites"+clear+rtl+"the parser.\n", 100)
	for _, bc := range []struct{ name, s string }{{"clean", clean}, {"hostile", hostile}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.s)))
			for b.Loop() {
				textsafe.Text(bc.s)
			}
		})
	}
}

func TestURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://user:pass@localhost:11434/v1":  "http://localhost:11434/v1",
		"https://key@api.example.com/v1?a=b@c": "https://api.example.com/v1?a=b@c",
		"user:pass@localhost:11434/v1":         "localhost:11434/v1",
		"http://u:p@local host/v1":             "http://local host/v1",
		"http://a@b@host/v1":                   "http://host/v1",
		"https://api.openai.com/v1":            "https://api.openai.com/v1",
		"http://host/path/with@sign":           "http://host/path/with@sign",
		"localhost:11434":                      "localhost:11434",
		"":                                     "",
	} {
		if got := textsafe.URL(in); got != want {
			t.Errorf("URL(%q) = %q, want %q", in, got, want)
		}
	}
}
