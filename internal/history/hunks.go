package history

import (
	"fmt"
	"strings"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// contextLines matches git's default -U3.
const contextLines = 3

type lineOp struct {
	op   diffmatchpatch.Operation
	text string // without its newline
	eol  bool   // false only for a last line lacking its newline
}

// writeHunks appends the file's hunks in unified format and counts the
// added and removed lines.
func writeHunks(b *strings.Builder, fd FileDiff, oldText, newText string) (added, removed int) {
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
	fmt.Fprintf(b, "--- %s\n+++ %s\n", oldName, newName)
	ops := diffLines(oldText, newText)
	var oldLines []string // the pre-image, for git's function-name hunk headers
	for _, o := range ops {
		if o.op != diffmatchpatch.DiffInsert {
			oldLines = append(oldLines, o.text)
		}
	}
	return encodeHunks(b, ops, oldLines)
}

func encodeHunks(b *strings.Builder, ops []lineOp, oldLines []string) (added, removed int) {
	// Line numbers (1-based) of ops[i] in the old and new file.
	oldAt := make([]int, len(ops)+1)
	newAt := make([]int, len(ops)+1)
	o, n := 1, 1
	for i, op := range ops {
		oldAt[i], newAt[i] = o, n
		if op.op != diffmatchpatch.DiffInsert {
			o++
		}
		if op.op != diffmatchpatch.DiffDelete {
			n++
		}
	}
	oldAt[len(ops)], newAt[len(ops)] = o, n

	i := 0
	for i < len(ops) {
		for i < len(ops) && ops[i].op == diffmatchpatch.DiffEqual {
			i++
		}
		if i == len(ops) {
			break
		}
		start := max(0, i-contextLines)
		end := i // one past the last changed op of the hunk
		for j := i; j < len(ops); j++ {
			if ops[j].op != diffmatchpatch.DiffEqual {
				end = j + 1
				continue
			}
			if j-end >= 2*contextLines {
				break
			}
		}
		stop := min(len(ops), end+contextLines)
		oldCount, newCount := 0, 0
		for _, op := range ops[start:stop] {
			if op.op != diffmatchpatch.DiffInsert {
				oldCount++
			}
			if op.op != diffmatchpatch.DiffDelete {
				newCount++
			}
		}
		fmt.Fprintf(b, "@@ -%s +%s @@", hunkRange(oldAt[start], oldCount), hunkRange(newAt[start], newCount))
		if fn := funcName(oldLines, oldAt[start]-1); fn != "" {
			b.WriteString(" " + fn)
		}
		b.WriteByte('\n')
		for _, op := range ops[start:stop] {
			switch op.op {
			case diffmatchpatch.DiffInsert:
				b.WriteByte('+')
				added++
			case diffmatchpatch.DiffDelete:
				b.WriteByte('-')
				removed++
			default:
				b.WriteByte(' ')
			}
			b.WriteString(op.text)
			b.WriteByte('\n')
			if !op.eol {
				b.WriteString("\\ No newline at end of file\n")
			}
		}
		i = stop
	}
	return added, removed
}

// hunkRange prints git's "start,count" (an empty range starts one line early).
func hunkRange(start, count int) string {
	if count == 0 {
		return fmt.Sprintf("%d,0", start-1)
	}
	if count == 1 {
		return fmt.Sprintf("%d", start)
	}
	return fmt.Sprintf("%d,%d", start, count)
}

// funcName applies git's default funcname rule: the nearest line before the
// hunk that starts with a letter, '_' or '$', cut to 80 bytes.
func funcName(oldLines []string, before int) string {
	for i := min(before, len(oldLines)) - 1; i >= 0; i-- {
		l := oldLines[i]
		if l == "" {
			continue
		}
		c := l[0]
		if c == '_' || c == '$' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') {
			l = strings.TrimRight(l, " \t")
			if len(l) > 80 {
				l = strings.ToValidUTF8(l[:80], "")
			}
			return l
		}
	}
	return ""
}
