package tokenizer

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// Section is one file's part of a diff.
type Section struct {
	Name string
	Text string
	// Omitted marks a section whose text was never built because the
	// sections before it already hold more than MaxBytes: it is cut whole.
	Omitted bool
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

// MaxBytes is how much text Fit may read of a diff cut to tokens: a section
// starting past it is never kept, so a diff's text need not be built beyond.
func MaxBytes(tokens int) int { return tokens * maxBytesPerToken }

// maxNamesInNote keeps the note short when thousands of files were cut.
const maxNamesInNote = 20

// Fit keeps whole sections while they fit in max tokens, then as many whole
// lines of the next one as fit, and ends with a note naming what was cut.
// Only the kept prefix is tokenized. The result, note included, never counts
// more than max tokens by this tokenizer.
func (t *Tokenizer) Fit(sections []Section, max int) Cut {
	f := &fitter{Tokenizer: t, sections: sections, counts: make([]int, len(sections)), lines: map[int][]lineEnd{}}
	for i := range f.counts {
		f.counts[i] = -1 // cut fills repeatedly: count each section once
	}
	body, kept, _ := f.fill(max, false)
	if kept == len(sections) {
		// The joined text's count, which the summed counts are only where
		// the sections meet additively.
		if n := f.bodyCount(body, kept, ""); n <= max {
			return Cut{Text: body, Tokens: n}
		}
	}
	return f.cut(max, kept)
}

// fitter is one Fit's state: the counts it learned, so that each part of
// the diff is tokenized once however often the cut is retried.
type fitter struct {
	*Tokenizer
	sections []Section
	counts   []int             // tokens of each whole section, -1 until counted
	lines    map[int][]lineEnd // a section's line ends counted so far
}

// lineEnd is the end of a section's prefix of whole lines, and its tokens.
type lineEnd struct{ end, tokens int }

// additive reports whether the tokens of a+b are those of a plus those of
// b. They are when a ends a line and b starts with none of the bytes that
// extend a piece across a newline (more newlines, and '/' after
// punctuation in o200k): then no piece of the split crosses the seam, and
// none before it looks past it. Sections of a git diff always meet so, as
// do a diff's lines and a diff and its note.
func additive(a, b string) bool {
	if a == "" || b == "" {
		return true
	}
	return a[len(a)-1] == '\n' && b[0] != '\n' && b[0] != '\r' && b[0] != '/'
}

// bodyCount counts body, which is the first kept sections whole followed
// by partial, from counts already known where every seam is additive, and
// by tokenizing it again otherwise.
func (f *fitter) bodyCount(body string, kept int, partial string) int {
	n, prev := 0, ""
	for i, s := range f.sections[:kept] {
		if !additive(prev, s.Text) {
			return f.Count(body)
		}
		if s.Text != "" {
			prev = s.Text
		}
		n += f.counts[i]
	}
	if partial == "" {
		return n
	}
	if !additive(prev, partial) || len(body) != len(partial)+joinedLen(f.sections[:kept]) ||
		!strings.HasPrefix(f.sections[kept].Text, partial) {
		return f.Count(body) // a line cut short, with a newline of its own
	}
	p, ok := f.prefixTokens(kept, len(partial))
	if !ok {
		return f.Count(body)
	}
	return n + p
}

func joinedLen(sections []Section) int {
	n := 0
	for _, s := range sections {
		n += len(s.Text)
	}
	return n
}

// fill appends whole sections while they fit in budget and, when partial is
// set, the longest prefix of the next that fits. kept counts whole sections.
func (f *fitter) fill(budget int, partial bool) (body string, kept int, partly bool) {
	body, kept, p := f.fillParts(budget, partial)
	return body + p, kept, p != ""
}

// fillParts is fill with the partial prefix apart.
func (f *fitter) fillParts(budget int, partial bool) (whole string, kept int, prefix string) {
	var b strings.Builder
	used := 0
	for ; kept < len(f.sections); kept++ {
		s := f.sections[kept]
		if s.Omitted || len(s.Text) > (budget-used)*maxBytesPerToken {
			break // cannot fit: do not spend time counting it
		}
		if f.counts[kept] < 0 {
			f.counts[kept] = f.Count(s.Text)
		}
		n := f.counts[kept]
		if used+n > budget {
			break
		}
		b.WriteString(s.Text)
		used += n
	}
	if partial && kept < len(f.sections) && budget > used {
		prefix = f.prefixWithin(kept, budget-used)
	}
	return b.String(), kept, prefix
}

// cut builds the truncated text, given that the first fits sections fit
// whole without a note. The note's size depends on what is kept, and BPE
// counts of joined text are not sums, so it shrinks the diff's budget by
// each overshoot until diff and note together fit.
func (f *fitter) cut(max, fits int) Cut {
	t := f.Tokenizer
	names := func(from int) []string {
		out := make([]string, 0, len(f.sections)-from)
		for _, s := range f.sections[from:] {
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
			whole, kept, prefix := f.fillParts(budget, partial)
			body, partly := whole+prefix, prefix != ""
			if body != "" && !strings.HasSuffix(body, "\n") {
				body += "\n"
				prefix = "\n" // any other prefix ends a line: counted below the slow way
			}
			bodyTokens := f.bodyCount(body, kept, prefix)
			note := cutNote(bodyTokens, max, names(kept), partly)
			n := bodyTokens + t.Count(note)
			if !additive(body, note) {
				n = t.Count(body + note)
			}
			text := body + note
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

// prefixWithin returns the longest prefix of section i's text ending at a
// line end that counts at most budget tokens, or, if not even the first
// line fits, the longest prefix of that line (on a character boundary) plus
// a newline. Each line is tokenized once per Fit, however often it asks.
func (f *fitter) prefixWithin(i, budget int) string {
	text := f.sections[i].Text
	limit := min(len(text), budget*maxBytesPerToken)
	ends := f.countLines(i, limit, budget)
	// The last line end within limit whose prefix fits.
	k := sort.Search(len(ends), func(j int) bool { return ends[j].end > limit || ends[j].tokens > budget })
	if k > 0 {
		return text[:ends[k-1].end]
	}
	line := text[:limit]
	if j := strings.IndexByte(line, '\n'); j >= 0 {
		line = line[:j]
	}
	// Not one whole line fits: keep as much of the first as fits, in chunks
	// cut at character boundaries, leaving a token for the newline.
	const chunk = 256
	end := f.grow(line, budget-1, func(s string) int {
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

// countLines extends section i's table of line ends until it covers limit
// bytes or passes budget tokens, and returns it. Where two lines do not
// meet additively, the prefix is counted whole, so every entry is exact.
func (f *fitter) countLines(i, limit, budget int) []lineEnd {
	text := f.sections[i].Text
	ends := f.lines[i]
	end, tokens := 0, 0
	if len(ends) > 0 {
		end, tokens = ends[len(ends)-1].end, ends[len(ends)-1].tokens
	}
	for end < limit && tokens <= budget {
		j := strings.IndexByte(text[end:limit], '\n')
		if j < 0 {
			break
		}
		line := text[end : end+j+1]
		if additive(text[:end], line) {
			tokens += f.Count(line)
		} else {
			tokens = f.Count(text[:end+j+1])
		}
		end += j + 1
		ends = append(ends, lineEnd{end, tokens})
	}
	f.lines[i] = ends
	return ends
}

// prefixTokens is the count of section i's first n bytes, if countLines
// has counted them.
func (f *fitter) prefixTokens(i, n int) (int, bool) {
	ends := f.lines[i]
	k := sort.Search(len(ends), func(j int) bool { return ends[j].end >= n })
	if k < len(ends) && ends[k].end == n {
		return ends[k].tokens, true
	}
	return 0, false
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
