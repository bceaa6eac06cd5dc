package history

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/digest-cli/digest/internal/linediff"
	"github.com/digest-cli/digest/internal/userdiff"
)

// contextLines matches git's default -U3.
const contextLines = 3

// writeHunks appends the file's hunks in unified format, with the function
// names of the diff driver (nil: git's default rule), and counts the added
// and removed lines.
func writeHunks(b *strings.Builder, fd FileDiff, oldText, newText string, driver *userdiff.Driver) (added, removed int) {
	if oldText == newText {
		return 0, 0 // a mode-only change, a rename without edits or an empty file
	}
	oldName, newName := "a/"+fd.OldPath, "b/"+fd.Path
	if fd.Status == 'A' {
		oldName = "/dev/null"
	}
	if fd.Status == 'D' {
		newName = "/dev/null"
	}
	b.WriteString("--- " + oldName + "\n+++ " + newName + "\n")
	d := linediff.Lines(oldText, newText)
	return encodeHunks(b, d, d.Changes(), driver)
}

// encodeHunks writes the changes as git's xdl_emit_diff does: changes at
// most 2*contextLines unchanged lines apart share a hunk, and each hunk's
// removed lines come before its added ones.
func encodeHunks(b *strings.Builder, d linediff.Diff, changes []linediff.Change, driver *userdiff.Driver) (added, removed int) {
	before, after := d.Old(), d.New()
	fn := funcFinder{text: before.Text(), driver: driver}
	for len(changes) > 0 {
		n := 1
		for n < len(changes) && changes[n].I1-(changes[n-1].I1+changes[n-1].N1) <= 2*contextLines {
			n++
		}
		hunk, last := changes[:n], changes[n-1]
		changes = changes[n:]

		s1, s2 := max(hunk[0].I1-contextLines, 0), max(hunk[0].I2-contextLines, 0)
		e1 := min(last.I1+last.N1+contextLines, before.Len())
		e2 := min(last.I2+last.N2+contextLines, after.Len())
		b.WriteString("@@ -")
		b.WriteString(hunkRange(s1+1, e1-s1))
		b.WriteString(" +")
		b.WriteString(hunkRange(s2+1, e2-s2))
		b.WriteString(" @@")
		if name := fn.find(before.Start(s1)); name != "" {
			b.WriteString(" " + name)
		}
		b.WriteByte('\n')

		for _, c := range hunk {
			for ; s2 < c.I2; s2++ {
				writeHunkLine(b, ' ', after.Line(s2))
			}
			for i := c.I1; i < c.I1+c.N1; i++ {
				writeHunkLine(b, '-', before.Line(i))
			}
			for i := c.I2; i < c.I2+c.N2; i++ {
				writeHunkLine(b, '+', after.Line(i))
			}
			s2 = c.I2 + c.N2
			added += c.N2
			removed += c.N1
		}
		for ; s2 < e2; s2++ {
			writeHunkLine(b, ' ', after.Line(s2))
		}
	}
	return added, removed
}

// writeHunkLine writes one line of a hunk; the text must be valid UTF-8, and
// git marks a last line that lacks its newline.
func writeHunkLine(b *strings.Builder, prefix byte, line string) {
	text, eol := strings.CutSuffix(line, "\n")
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\uFFFD")
	}
	b.WriteByte(prefix)
	b.WriteString(text)
	b.WriteByte('\n')
	if !eol {
		b.WriteString("\\ No newline at end of file\n")
	}
}

// hunkRange prints git's "start,count" (an empty range starts one line early).
func hunkRange(start, count int) string {
	switch count {
	case 0:
		return strconv.Itoa(start-1) + ",0"
	case 1:
		return strconv.Itoa(start)
	}
	return strconv.Itoa(start) + "," + strconv.Itoa(count)
}

// funcFinder finds the function names of a file's hunk headers, in order.
// Like xdiff it searches each time only back to where the previous hunk
// began, keeping the name found before, so that a file without such lines
// is scanned once rather than once per hunk.
type funcFinder struct {
	text   string           // the old file
	driver *userdiff.Driver // whose rule finds function lines; nil: git's default
	limit  int              // lines starting before this offset were searched
	name   string
}

// find returns the name for a hunk starting at byte offset pos of the old
// file: that of the nearest function line above it. Without a driver, a
// function line is one that starts with a letter, '_' or '$'.
func (f *funcFinder) find(pos int) string {
	for end := pos; end > f.limit; {
		start := strings.LastIndexByte(f.text[:end-1], '\n') + 1
		if f.driver == nil {
			// The default rule, inline: most lines are turned away by one byte.
			if c := f.text[start]; c == '_' || c == '$' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') {
				f.name = funcName(f.text[start:end])
				break
			}
		} else if name, ok := f.driver.FuncName(f.text[start:end]); ok {
			f.name = validPrefix(name)
			break
		}
		end = start
	}
	f.limit = pos
	return f.name
}

// funcName is git's default function line: the line (with its newline) cut
// to userdiff.NameBytes, without trailing white space.
func funcName(line string) string {
	line = line[:min(len(line), userdiff.NameBytes)]
	return validPrefix(strings.TrimRight(line, " \t\r\n"))
}

// validPrefix cuts a function name at its first byte that is not UTF-8:
// git's hunk header ends there, and so does ours, to stay valid text.
func validPrefix(line string) string {
	for i := 0; i < len(line); {
		r, size := utf8.DecodeRuneInString(line[i:])
		// git's UTF-8 check also refuses the noncharacters U+FFFE and U+FFFF.
		if (r == utf8.RuneError && size == 1) || r == 0xFFFE || r == 0xFFFF {
			return line[:i]
		}
		i += size
	}
	return line
}
