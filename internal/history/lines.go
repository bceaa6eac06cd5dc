package history

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// diffLines is the line diff of two texts, as go-git's utils/diff computes
// it (the same diffmatchpatch algorithm and settings, so the same hunks),
// without its detour through joined strings: lines become runes here, and
// the script is read back as lines directly.
func diffLines(oldText, newText string) []lineOp {
	oldLines, newLines := splitLines(oldText), splitLines(newText)
	// Nearly all text is valid UTF-8: checked whole, its lines need no repair.
	valid := utf8.ValidString(oldText) && utf8.ValidString(newText)
	appendOps := func(ops []lineOp, op diffmatchpatch.Operation, lines []string) []lineOp {
		for _, l := range lines {
			text, eol := strings.CutSuffix(l, "\n")
			if !valid {
				text = strings.ToValidUTF8(text, "\uFFFD")
			}
			ops = append(ops, lineOp{op: op, text: text, eol: eol})
		}
		return ops
	}
	switch {
	case len(oldLines) == 0:
		return appendOps(nil, diffmatchpatch.DiffInsert, newLines)
	case len(newLines) == 0:
		return appendOps(nil, diffmatchpatch.DiffDelete, oldLines)
	}
	ids := make(map[string]rune, len(oldLines))
	toRunes := func(lines []string) []rune {
		out := make([]rune, len(lines))
		for i, l := range lines {
			id, ok := ids[l]
			if !ok {
				id = lineRune(len(ids))
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	a, b := toRunes(oldLines), toRunes(newLines)
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = time.Hour // go-git's setting: it allows the half-match speed-up
	ops := make([]lineOp, 0, max(len(oldLines), len(newLines)))
	for _, d := range dmp.DiffMainRunes(a, b, false) {
		n := utf8.RuneCountInString(d.Text)
		if d.Type == diffmatchpatch.DiffInsert {
			ops = appendOps(ops, d.Type, newLines[:n])
			newLines = newLines[n:]
			continue
		}
		ops = appendOps(ops, d.Type, oldLines[:n])
		oldLines = oldLines[n:]
		if d.Type == diffmatchpatch.DiffEqual {
			newLines = newLines[n:]
		}
	}
	return ops
}

// lineRune numbers distinct lines with runes, stepping over the surrogate
// range, which strings cannot hold.
func lineRune(i int) rune {
	if i >= 0xD800 {
		return rune(i + 0x800)
	}
	return rune(i)
}

// countLines counts the lines a diff adds and removes, without its text.
func countLines(oldText, newText string) (added, removed int) {
	if oldText == newText {
		return 0, 0
	}
	for _, op := range diffLines(oldText, newText) {
		switch op.op {
		case diffmatchpatch.DiffInsert:
			added++
		case diffmatchpatch.DiffDelete:
			removed++
		}
	}
	return added, removed
}

// splitLines cuts text after each newline; a last line may lack one.
func splitLines(text string) []string {
	lines := make([]string, 0, strings.Count(text, "\n")+1)
	for len(text) > 0 {
		i := strings.IndexByte(text, '\n') + 1
		if i == 0 {
			i = len(text)
		}
		lines = append(lines, text[:i])
		text = text[i:]
	}
	return lines
}
