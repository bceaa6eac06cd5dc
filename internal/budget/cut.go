package budget

import (
	"fmt"
	"strings"
	"unicode/utf8"
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
// Only the kept prefix is tokenized. The result, note included, never counts
// more than max tokens by this tokenizer.
func (t *Tokenizer) Fit(sections []Section, max int) Cut {
	counts := make([]int, len(sections)) // cut fills repeatedly: count each section once
	for i := range counts {
		counts[i] = -1
	}
	body, kept, _ := t.fill(sections, counts, max, false)
	if kept == len(sections) {
		// Summed counts can differ from the joined text's where two sections
		// meet, so the joined text is what is checked.
		if n := t.Count(body); n <= max {
			return Cut{Text: body, Tokens: n}
		}
	}
	return t.cut(sections, counts, max, kept)
}

// fill appends whole sections while they fit in budget and, when partial is
// set, the longest prefix of the next that fits. kept counts whole sections.
func (t *Tokenizer) fill(sections []Section, counts []int, budget int, partial bool) (body string, kept int, partly bool) {
	var b strings.Builder
	used := 0
	for ; kept < len(sections); kept++ {
		s := sections[kept].Text
		if len(s) > (budget-used)*maxBytesPerToken {
			break // cannot fit: do not spend time counting it
		}
		if counts[kept] < 0 {
			counts[kept] = t.Count(s)
		}
		n := counts[kept]
		if used+n > budget {
			break
		}
		b.WriteString(s)
		used += n
	}
	if partial && kept < len(sections) && budget > used {
		if p := t.prefixWithin(sections[kept].Text, budget-used); p != "" {
			b.WriteString(p)
			partly = true
		}
	}
	return b.String(), kept, partly
}

// cut builds the truncated text, given that the first fits sections fit
// whole without a note. The note's size depends on what is kept, and BPE
// counts of joined text are not sums, so it shrinks the diff's budget by
// each overshoot until diff and note together fit.
func (t *Tokenizer) cut(sections []Section, counts []int, max, fits int) Cut {
	names := func(from int) []string {
		out := make([]string, 0, len(sections)-from)
		for _, s := range sections[from:] {
			out = append(out, s.Name)
		}
		return out
	}
	start := max - t.Count(cutNote(max, max, names(fits), false))
	// Part of the next file costs "(partly)" in the note too, so ending at a
	// file boundary sometimes keeps more: try both, keep the larger.
	var best Cut
	bestTokens, bestKept := -1, 0
	for _, partial := range []bool{true, false} {
		if !partial && bestTokens >= 0 && bestKept >= fits {
			break // it kept every whole file the boundary could, and more
		}
		for budget := start; budget > 0; {
			body, kept, partly := t.fill(sections, counts, budget, partial)
			if body != "" && !strings.HasSuffix(body, "\n") {
				body += "\n"
			}
			bodyTokens := t.Count(body)
			text := body + cutNote(bodyTokens, max, names(kept), partly)
			n := t.Count(text)
			if n > max {
				budget -= n - max
				continue
			}
			if bodyTokens > bestTokens {
				best, bestTokens, bestKept = Cut{Text: text, Tokens: n, Truncated: true, CutFiles: names(kept)}, bodyTokens, kept
			}
			break
		}
	}
	if bestTokens >= 0 {
		return best
	}
	// Not even the note fits beside any diff: say as much as the limit allows.
	all := names(0)
	for _, text := range []string{cutNote(0, max, all, false), shortNote} {
		if n := t.Count(text); n <= max {
			return Cut{Text: text, Tokens: n, Truncated: true, CutFiles: all}
		}
	}
	return Cut{Truncated: true, CutFiles: all}
}

const shortNote = "[digest: diff cut]\n"

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
// longest prefix of that line (on a character boundary) plus a newline. It
// tokenizes the kept text piece by piece, once, plus a check of the whole.
func (t *Tokenizer) prefixWithin(text string, budget int) string {
	limit := min(len(text), budget*maxBytesPerToken)
	end := t.grow(text[:limit], budget, func(s string) int {
		if j := strings.IndexByte(s, '\n'); j >= 0 {
			return j + 1
		}
		return 0
	})
	if end > 0 {
		return text[:end]
	}
	line := text[:limit]
	if j := strings.IndexByte(line, '\n'); j >= 0 {
		line = line[:j]
	}
	// Not one whole line fits: keep as much of the first as fits, in chunks
	// cut at character boundaries, leaving a token for the newline.
	const chunk = 256
	end = t.grow(line, budget-1, func(s string) int {
		if len(s) <= chunk {
			return len(s)
		}
		n := chunk
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		return n
	})
	if end == 0 {
		return ""
	}
	return line[:end] + "\n"
}

// grow extends a prefix of text piece by piece (next gives the length of
// the next piece, 0 when there is none) while the summed counts fit budget,
// then trims whole pieces until the joined prefix itself fits: a seam
// between pieces can tokenize differently than the pieces did alone.
func (t *Tokenizer) grow(text string, budget int, next func(rest string) int) int {
	var ends []int
	end, used := 0, 0
	for end < len(text) {
		n := next(text[end:])
		if n == 0 {
			break
		}
		c := t.Count(text[end : end+n])
		if used+c > budget {
			break
		}
		used += c
		end += n
		ends = append(ends, end)
	}
	for len(ends) > 0 && t.Count(text[:ends[len(ends)-1]]) > budget {
		ends = ends[:len(ends)-1]
	}
	if len(ends) == 0 {
		return 0
	}
	return ends[len(ends)-1]
}
