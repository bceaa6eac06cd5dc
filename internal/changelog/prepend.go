package changelog

import (
	"bytes"
	"errors"
	"regexp"
	"strings"
)

// Prepend writes the sections of new release notes above those of an
// existing changelog, for --prepend FILE, keeping the rest of the file
// byte for byte. Either document is a header (everything before its first
// version heading) and sections (each from its version heading to the
// next). The result is:
//
//   - the existing header;
//   - the new sections whose version is not a section of the file already
//     (a rerun over the same tags adds nothing twice), with the Markdown
//     format's "_Summarized by ... with digest._" line left out, and
//     their headings in keepachangelog's reference style ("## [1.2.0] -
//     2026-11-30" with "[1.2.0]: URL" at the end of the notes) as inline
//     links ("## [1.2.0](URL) - 2026-11-30"): what is inserted stands
//     alone, and the definitions at the end of the file keep serving its
//     older sections;
//   - the existing sections, from the first one that is not Unreleased:
//     an Unreleased section at the top, up to the next version's
//     heading, is replaced, its commits being in the new sections.
//
// A version heading is a level-2 ATX heading, outside fenced code, in the
// form one of the built-in layouts or digest's Markdown writes: "##
// Unreleased", "## [Unreleased]", "## v1.2.0 (2026-11-30)", "## [1.2.0] -
// 2026-11-30", or a bare version "## v1.2.0" or "## 1.2.0 - ...".
// Versions compare without brackets, backslash escapes, case and the v
// before a digit: "v1.2.0" and "[1.2.0]" are one version.
//
// A file with no version heading is all header: the new sections go after
// it, a blank line between. An empty (or blank) file gets the new notes
// whole, header included. New notes with no version section (an empty
// range) leave the file as it is. Notes of several repositories, whose
// versions are headings of level 3 under one per repository, cannot be
// merged into one file's sections: Prepend refuses them. When the file's
// lines end in CRLF, so do the lines it inserts.
func Prepend(existing, notes []byte) ([]byte, error) {
	fresh, open := scanSections(notes, 2)
	if open {
		// The fence would run on over the file's sections.
		return nil, errors.New("--prepend: the notes end inside a fenced code block (``` or ~~~ left open). Try: a template that closes its code blocks")
	}
	if len(fresh) == 0 {
		if several, _ := scanSections(notes, 3); len(several) > 0 {
			return nil, errors.New("--prepend: the notes hold several repositories, each with its own versions, and a changelog file holds one's. Try: one repository per --prepend file")
		}
		return existing, nil
	}
	if len(bytes.TrimSpace(existing)) == 0 {
		return notes, nil
	}
	header, tail, kept := splitExisting(existing)

	end, defs := trailer(notes, fresh[len(fresh)-1].start)
	var insert []byte
	written := map[string]bool{}
	for i, s := range fresh {
		if kept[s.key] {
			// The notes run newest first: what comes after a version
			// the file holds is older than the file's top, and the file
			// has it or chose to leave it out. Above its top it would
			// put old releases over new ones.
			break
		}
		if written[s.key] {
			continue
		}
		written[s.key] = true
		next := end
		if i+1 < len(fresh) {
			next = fresh[i+1].start
		}
		insert = append(insert, inlineLink(trimBlankEnd(notes[s.start:next]), defs)...)
		insert = append(insert, "\n\n"...)
	}
	out := make([]byte, 0, len(existing)+len(insert)+2)
	out = append(out, existing[:header]...)
	if len(insert) == 0 { // every version is in the file already
		return append(out, existing[tail:]...), nil
	}
	if header == len(existing) { // no sections: after the header, a blank line between
		out = appendBlankLine(out)
	}
	if tail == len(existing) {
		insert = append(trimBlankEnd(insert), '\n')
	}
	if crlf(existing) {
		insert = toCRLF(insert)
	}
	out = append(out, insert...)
	return append(out, existing[tail:]...), nil
}

// splitExisting finds where an existing changelog's sections begin
// (header) and where the part kept byte for byte begins (tail: past any
// Unreleased section at the top), and the versions of the kept sections.
func splitExisting(existing []byte) (header, tail int, kept map[string]bool) {
	sections, _ := scanSections(existing, 2)
	header, tail = len(existing), len(existing)
	if len(sections) > 0 {
		header = sections[0].start
	}
	k := 0
	for k < len(sections) && sections[k].key == unreleasedKey {
		k++
	}
	if k < len(sections) {
		tail = sections[k].start
	}
	kept = map[string]bool{}
	for _, s := range sections[k:] {
		kept[s.key] = true
	}
	return header, tail, kept
}

// section is where a version's heading starts, and its version.
type section struct {
	start int
	key   string
}

const unreleasedKey = "unreleased"

// scanSections finds the version headings of the given level, outside
// fenced code blocks, in one pass over the lines; open tells whether the
// document ends inside a fence.
func scanSections(doc []byte, level int) (sections []section, open bool) {
	var out []section
	var fence byte // '`' or '~' inside a fence
	fenceLen := 0
	for start := 0; start < len(doc); {
		end := bytes.IndexByte(doc[start:], '\n')
		if end < 0 {
			end = len(doc)
		} else {
			end += start
		}
		line := strings.TrimSuffix(string(doc[start:end]), "\r")
		if c, n, ok := fenceLine(line); ok {
			switch {
			case fence == 0:
				fence, fenceLen = c, n
			case c == fence && n >= fenceLen && strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), string(c))) == "":
				fence = 0
			}
		} else if fence == 0 {
			if key, ok := headingKey(line, level); ok {
				out = append(out, section{start: start, key: key})
			}
		}
		start = end + 1
	}
	return out, fence != 0
}

// fenceLine tells whether line opens or may close a fenced code block:
// up to three spaces, then three or more backticks or tildes.
func fenceLine(line string) (c byte, n int, ok bool) {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 || len(t) < 3 || t[0] != '`' && t[0] != '~' {
		return 0, 0, false
	}
	n = len(t) - len(strings.TrimLeft(t, t[:1]))
	if n < 3 || t[0] == '`' && strings.Contains(t[n:], "`") {
		return 0, 0, false
	}
	return t[0], n, true
}

var (
	// keepachangelog's "[1.2.0] - 2026-11-30", "[Unreleased]", or the
	// inline-linked "[1.2.0](URL) - 2026-11-30".
	bracketed = regexp.MustCompile(`^\[((?:\\.|[^\]\\])+)\](\(\S*\))?(\s.*)?$`)
	// digest's "v1.2.0 (2026-11-30)".
	dated = regexp.MustCompile(`^(\S+) \(\d{4}-\d{2}-\d{2}\)$`)
	// A bare version: "v1.2.0", "1.2.0 - 2026-11-30".
	bare     = regexp.MustCompile(`^([vV]?[0-9]\S*)(\s.*)?$`)
	dateRest = regexp.MustCompile(`^\s+(-|–|—)\s+\d{4}-\d{2}-\d{2}\b`)
)

// headingKey is the version of a version heading of the given level.
func headingKey(line string, level int) (string, bool) {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 || len(t) <= level || strings.Count(t[:level], "#") != level || t[level] != ' ' && t[level] != '\t' {
		return "", false
	}
	text := strings.TrimSpace(t[level:])
	// A closing run of hashes is not part of the heading.
	if i := strings.LastIndexAny(text, " \t"); i >= 0 && strings.Trim(text[i+1:], "#") == "" {
		text = strings.TrimSpace(text[:i])
	}
	if strings.EqualFold(text, "unreleased") {
		return unreleasedKey, true
	}
	if m := bracketed.FindStringSubmatch(text); m != nil {
		label := m[1]
		if strings.EqualFold(label, "unreleased") || bare.MatchString(label) || dateRest.MatchString(m[3]) {
			return versionKey(label), true
		}
		return "", false
	}
	if m := dated.FindStringSubmatch(text); m != nil {
		return versionKey(m[1]), true
	}
	if m := bare.FindStringSubmatch(text); m != nil {
		return versionKey(m[1]), true
	}
	return "", false
}

// versionKey is a version as sections compare: unescaped, lower case,
// without the v before a digit.
func versionKey(v string) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) {
			i++
		}
		b.WriteByte(v[i])
	}
	k := strings.ToLower(b.String())
	if len(k) > 1 && k[0] == 'v' && isDigit(k[1]) {
		k = k[1:]
	}
	return k
}

var (
	linkDefinition = regexp.MustCompile(`^ {0,3}\[((?:\\.|[^\]\\])+)\]:[ \t]*(<[^<>\n]*>|\S+)`)
	summarizedBy   = regexp.MustCompile(`^_Summarized by .* with digest\._$`)
	// A heading in keepachangelog's reference style: "## [1.2.0] - date".
	referenceHeading = regexp.MustCompile(`^(#+[ \t]+\[((?:\\.|[^\]\\])+)\])([^(\[].*)?$`)
)

// trailer finds what ends the new notes after their last section's
// content: blank lines, link reference definitions and the Markdown
// format's closing line. It returns where that begins, at or after from,
// and the definitions, by their labels in lower case.
func trailer(notes []byte, from int) (end int, defs map[string]string) {
	defs = map[string]string{}
	end = len(notes)
	for end > from {
		// The last line before end, without its ending.
		lineEnd := end
		if notes[lineEnd-1] == '\n' {
			lineEnd--
		}
		start := bytes.LastIndexByte(notes[from:lineEnd], '\n') + 1 + from
		if start <= from {
			break // the section's heading
		}
		line := bytes.TrimSuffix(notes[start:lineEnd], []byte("\r"))
		if m := linkDefinition.FindSubmatch(line); m != nil {
			defs[strings.ToLower(string(m[1]))] = string(m[2])
		} else if len(bytes.TrimSpace(line)) != 0 && !summarizedBy.Match(line) {
			break
		}
		end = start
	}
	return end, defs
}

// inlineLink writes the heading of a section in keepachangelog's
// reference style with its definition's URL inline.
func inlineLink(sec []byte, defs map[string]string) []byte {
	nl := bytes.IndexByte(sec, '\n')
	if nl < 0 {
		nl = len(sec)
	}
	heading := strings.TrimSuffix(string(sec[:nl]), "\r")
	m := referenceHeading.FindStringSubmatch(heading)
	if m == nil {
		return sec
	}
	url, ok := defs[strings.ToLower(m[2])]
	if !ok {
		return sec
	}
	out := append([]byte(m[1]+"("+url+")"+m[3]), sec[len(heading):]...)
	return out
}

// trimBlankEnd is b without the blank lines and spaces that end it.
func trimBlankEnd(b []byte) []byte {
	return bytes.TrimRight(b, " \t\r\n")
}

// appendBlankLine ends b with an empty line, adding what it lacks.
func appendBlankLine(b []byte) []byte {
	nl := []byte("\n")
	if crlf(b) {
		nl = []byte("\r\n")
	}
	if !bytes.HasSuffix(b, []byte("\n")) {
		b = append(b, nl...)
	}
	if trimmed := bytes.TrimSuffix(bytes.TrimSuffix(b, []byte("\n")), []byte("\r")); !bytes.HasSuffix(trimmed, []byte("\n")) {
		b = append(b, nl...)
	}
	return b
}

// crlf tells whether the document's first line ends in CRLF.
func crlf(doc []byte) bool {
	i := bytes.IndexByte(doc, '\n')
	return i > 0 && doc[i-1] == '\r'
}

// toCRLF ends every line of b, not already so ended, in CRLF.
func toCRLF(b []byte) []byte {
	out := make([]byte, 0, len(b)+bytes.Count(b, []byte("\n")))
	for i, c := range b {
		if c == '\n' && (i == 0 || b[i-1] != '\r') {
			out = append(out, '\r')
		}
		out = append(out, c)
	}
	return out
}
