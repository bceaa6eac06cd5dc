package textsafe

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The Markdown functions write for GitHub's renderer (CommonMark with
// GFM's tables, strikethrough and autolinks, and GitHub's $ math), which
// also renders step summaries and release notes. What they write is one
// line meant to stand inside a line of the report, after a list marker,
// a heading's hashes or a cell's pipe; it holds even at the start of a
// line. Escapes are added only where a character could start or end
// something, so that the file reads well as text too: "vendor (see
// go.mod)" and "snake_case" stay as they are.
//
// Links and images: with the brackets escaped, nothing can load a remote
// image (a tracking pixel) or hide where a link goes behind other words.
// A bare URL stays text that GitHub makes clickable; nothing fetches it.

// MarkdownInline is s as literal text inside a line of Markdown: a table
// cell, a heading, a list item. The page shows exactly Line(s).
func MarkdownInline(s string) string {
	return escapeInline(Line(s), false)
}

// MarkdownCode is s as a code span, for names that read best in code font
// (a model spec, a hash); it is not for table cells, where a pipe inside
// would still end the cell. Empty text gives "".
func MarkdownCode(s string) string {
	t := Line(s)
	if t == "" {
		return ""
	}
	longest, run := 0, 0
	for i := 0; i < len(t); i++ {
		if t[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if t[0] == '`' || t[len(t)-1] == '`' {
		return fence + " " + t + " " + fence
	}
	return fence + t + fence
}

// MarkdownSummary is a model's summary as one paragraph of plain text for
// a changelog's list item. A summary of several lines is read as the
// Markdown a model writes: fence and rule lines go, heading, list and
// quote markers go, and the lines join into one paragraph with a stop
// where an item, a heading or a paragraph ended without one. Code spans
// that open and close in it stay code spans, since their text shows as it
// is; everything else shows literally, HTML and brackets included.
func MarkdownSummary(s string) string {
	lines := strings.Split(Text(s), "\n")
	nonEmpty := 0
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			nonEmpty++
		}
	}
	if nonEmpty <= 1 {
		// Prose: markers in it are not at the start of a line in the
		// report and do nothing.
		return escapeInline(Line(s), true)
	}
	type fragment struct {
		text                     string
		heading, item, paragraph bool
	}
	var frags []fragment
	blank := false
	for _, raw := range lines {
		line := stripQuotes(Line(raw))
		if line == "" {
			blank = true
			continue
		}
		if isFence(line) || isRule(line) {
			blank = true // what follows is a block of its own
			continue
		}
		f := fragment{paragraph: blank}
		blank = false
		if text, ok := stripHeading(line); ok {
			line, f.heading = text, true
		} else if text, ok := stripItem(line); ok {
			line, f.item = text, true
		}
		if line == "" {
			continue
		}
		f.text = line
		frags = append(frags, f)
	}
	var b strings.Builder
	for i, f := range frags {
		if i > 0 {
			prev := frags[i-1]
			if (f.paragraph || f.heading || f.item || prev.heading) && !endsSentence(prev.text) {
				if prev.heading {
					b.WriteByte(':')
				} else {
					b.WriteByte('.')
				}
			}
			b.WriteByte(' ')
		}
		b.WriteString(f.text)
	}
	return escapeInline(b.String(), true)
}

func endsSentence(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return strings.ContainsRune(".!?:;…", r)
}

// stripQuotes takes the block-quote markers off a line.
func stripQuotes(line string) string {
	for strings.HasPrefix(line, ">") {
		line = strings.TrimLeft(line[1:], " ")
	}
	return line
}

// isFence tells whether a line opens or closes a fenced code block.
func isFence(line string) bool {
	for _, c := range []byte{'`', '~'} {
		n := len(line) - len(strings.TrimLeft(line, string(c)))
		if n >= 3 && (c == '~' || !strings.ContainsRune(line[n:], '`')) {
			return true
		}
	}
	return false
}

// isRule tells whether a line is only a thematic break, a setext
// heading's underline or a table's delimiter row.
func isRule(line string) bool {
	return strings.Trim(line, "-*_=|: ") == "" && strings.ContainsAny(line, "-*_=")
}

// stripHeading takes an ATX heading's hashes off a line, the closing ones
// too.
func stripHeading(line string) (string, bool) {
	n := len(line) - len(strings.TrimLeft(line, "#"))
	if n == 0 || n > 6 || n < len(line) && line[n] != ' ' {
		return line, false
	}
	text := strings.TrimSpace(line[n:])
	if closing := strings.TrimRight(text, "#"); closing == "" || strings.HasSuffix(closing, " ") {
		text = strings.TrimSpace(closing)
	}
	return text, true
}

// stripItem takes a list item's marker, and a task's box, off a line.
func stripItem(line string) (string, bool) {
	rest, ok := "", false
	switch {
	case len(line) >= 2 && strings.ContainsRune("-+*", rune(line[0])) && line[1] == ' ':
		rest, ok = line[2:], true
	default:
		digits := len(line) - len(strings.TrimLeft(line, "0123456789"))
		if digits >= 1 && digits <= 9 && len(line) > digits+1 && strings.ContainsRune(".)", rune(line[digits])) && line[digits+1] == ' ' {
			rest, ok = line[digits+2:], true
		}
	}
	if !ok {
		return line, false
	}
	for _, box := range []string{"[ ] ", "[x] ", "[X] "} {
		if strings.HasPrefix(rest, box) {
			return rest[len(box):], true
		}
	}
	return rest, true
}

// escapeInline escapes what could make structure of one line t, already
// through Line; with codeSpans, code spans that open and close in t are
// kept.
func escapeInline(t string, codeSpans bool) string {
	var b strings.Builder
	b.Grow(len(t) + 8)
	i := 0
	// What starts a block at the start of a line: a heading, a quote, a
	// list item, a setext underline, an ordered list item.
	if t != "" && strings.ContainsRune("#>-+=", rune(t[0])) {
		b.WriteByte('\\')
		b.WriteByte(t[0])
		i = 1
	} else if d := len(t) - len(strings.TrimLeft(t, "0123456789")); d >= 1 && d <= 9 && d < len(t) &&
		(t[d] == '.' || t[d] == ')') && (d+1 == len(t) || t[d+1] == ' ') {
		b.WriteString(t[:d])
		b.WriteByte('\\')
		b.WriteByte(t[d])
		i = d + 1
	}
	for i < len(t) {
		c := t[i]
		switch c {
		case '`':
			n := len(t[i:]) - len(strings.TrimLeft(t[i:], "`"))
			if codeSpans {
				if end := closingRun(t, i+n, n); end >= 0 {
					b.WriteString(t[i : end+n])
					i = end + n
					continue
				}
			}
			for range n {
				b.WriteString("\\`")
			}
			i += n
			continue
		case '\\', '*', '~', '[', ']', '|', '$':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '_':
			if !intraword(t, i) {
				b.WriteByte('\\')
			}
			b.WriteByte('_')
		case '#':
			// A closing run of hashes would end a heading early.
			if strings.Trim(t[i:], "#") == "" {
				b.WriteByte('\\')
			}
			b.WriteByte('#')
		case '<':
			b.WriteString("&lt;")
		case '>':
			// Only a quote's marker at the start of a line, but "&lt;b>"
			// would read oddly.
			b.WriteString("&gt;")
		case '&':
			// Only an entity reference (&#x202e;, &lt;) would be read as
			// something else.
			if i+1 < len(t) && (t[i+1] == '#' || 'a' <= t[i+1]|0x20 && t[i+1]|0x20 <= 'z') {
				b.WriteString("&amp;")
			} else {
				b.WriteByte('&')
			}
		default:
			b.WriteByte(c)
		}
		i++
	}
	return b.String()
}

// closingRun is where a run of exactly n backticks starts at or after
// from, or -1.
func closingRun(t string, from, n int) int {
	for i := from; i < len(t); {
		if t[i] != '`' {
			i++
			continue
		}
		m := len(t[i:]) - len(strings.TrimLeft(t[i:], "`"))
		if m == n {
			return i
		}
		i += m
	}
	return -1
}

// intraword tells whether the underscore at i has a letter or digit on
// both sides, where it can neither open nor close emphasis.
func intraword(t string, i int) bool {
	before, _ := utf8.DecodeLastRuneInString(t[:i])
	after, _ := utf8.DecodeRuneInString(t[i+1:])
	alnum := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
	return i > 0 && i+1 < len(t) && alnum(before) && alnum(after)
}
