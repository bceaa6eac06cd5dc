package budget

import (
	"fmt"
	"strings"
)

// Section is one file's part of a diff.
type Section struct {
	Name string
	Text string
}

// Cut is the part of a diff that fits the budget.
type Cut struct {
	Text      string
	Tokens    int      // tokens in Text, note included
	Truncated bool     // some of the diff was left out
	CutFiles  []string // files left out wholly or in part, in diff order
}

// maxBytesPerToken bounds how much text can possibly fit in a budget, so a
// huge section is never tokenized whole: real diffs average 3-4 bytes a token.
const maxBytesPerToken = 32

// maxNamesInNote keeps the note short when thousands of files were cut.
const maxNamesInNote = 20

// Fit keeps whole sections while they fit in max tokens, then as many whole
// lines of the next one as fit, and ends with a note naming what was cut.
// Only the kept prefix is tokenized. The result, note included, counts at
// most max tokens by this tokenizer.
func (t *Tokenizer) Fit(sections []Section, max int) Cut {
	var b strings.Builder
	used := 0
	for i, s := range sections {
		if len(s.Text) <= (max-used)*maxBytesPerToken {
			if n := t.Count(s.Text); used+n <= max {
				b.WriteString(s.Text)
				used += n
				continue
			}
		}
		return t.cut(sections, i, max)
	}
	text := b.String()
	// Summed counts can differ from the joined text's by a merge at a seam.
	return Cut{Text: text, Tokens: t.Count(text)}
}

// cut builds the truncated text once section first is known not to fit.
func (t *Tokenizer) cut(sections []Section, first, max int) Cut {
	names := func(from int) []string {
		var out []string
		for i := from; i < len(sections); i++ {
			out = append(out, sections[i].Name)
		}
		return out
	}
	// Reserve room for the note first; it names the cut files, so its size
	// is known before the diff is cut, save for the kept-token figure.
	var b strings.Builder
	used, kept := 0, 0
	reserve := t.Count(cutNote(max, max, names(first), false)) + 1
	budget := max - reserve
	for kept < len(sections) {
		n := t.Count(sections[kept].Text)
		if used+n > budget || len(sections[kept].Text) > budget*maxBytesPerToken {
			break
		}
		b.WriteString(sections[kept].Text)
		used += n
		kept++
	}
	partly := false
	if kept < len(sections) && budget > used {
		if p := t.prefixWithin(sections[kept].Text, budget-used); p != "" {
			b.WriteString(p)
			partly = true
		}
	}
	body := b.String()
	cutFiles := names(kept)
	for {
		tokens := t.Count(body)
		note := cutNote(tokens, max, cutFiles, partly)
		text := body + note
		if total := t.Count(text); total <= max || body == "" {
			return Cut{Text: text, Tokens: total, Truncated: true, CutFiles: cutFiles}
		}
		// A seam merged differently than counted: drop the last line and retry.
		body = dropLastLine(body)
	}
}

// cutNote is the line that tells the reader the diff is incomplete.
func cutNote(kept, max int, files []string, partly bool) string {
	shown := files
	if len(shown) > maxNamesInNote {
		shown = shown[:maxNamesInNote]
	}
	var list []string
	for i, f := range shown {
		if i == 0 && partly {
			f += " (partly)"
		}
		list = append(list, f)
	}
	more := ""
	if len(files) > len(shown) {
		more = fmt.Sprintf(" and %d more", len(files)-len(shown))
	}
	return fmt.Sprintf("[digest: diff cut to %d tokens (limit %d); cut: %s%s]\n", kept, max, strings.Join(list, ", "), more)
}

// prefixWithin returns the longest prefix of text ending at a line end that
// counts at most budget tokens, or, if not even the first line fits, the
// longest prefix of that line (on a character boundary) plus a newline.
func (t *Tokenizer) prefixWithin(text string, budget int) string {
	limit := min(len(text), budget*maxBytesPerToken)
	var ends []int
	for i := 0; i < limit; {
		j := strings.IndexByte(text[i:limit], '\n')
		if j < 0 {
			break
		}
		i += j + 1
		ends = append(ends, i)
	}
	// Binary search for the last line end whose prefix fits.
	lo, hi := 0, len(ends) // ends[:lo] fit; ends[hi:] do not
	for lo < hi {
		mid := (lo + hi) / 2
		if t.Count(text[:ends[mid]]) <= budget {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo > 0 {
		return text[:ends[lo-1]]
	}
	// Not one whole line fits: keep part of the first line.
	line := text[:limit]
	if len(ends) > 0 {
		line = text[:ends[0]-1]
	}
	var starts []int // character boundaries, so a cut never splits a rune
	for i := range line {
		starts = append(starts, i)
	}
	starts = append(starts, len(line))
	lo, hi = 0, len(starts)-1 // line[:starts[lo]] fits (the empty prefix does)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if t.Count(line[:starts[mid]])+1 <= budget {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	if lo == 0 {
		return ""
	}
	return line[:starts[lo]] + "\n"
}

func dropLastLine(s string) string {
	s = strings.TrimSuffix(s, "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[:i+1]
	}
	return ""
}
