package offline

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxMessageBytes bounds the subject and the body's sentence together, so
// that a summary reads as a changelog line. A sentence that does not fit is
// left out rather than cut: half a sentence reads as a claim the author
// never made.
const maxMessageBytes = 140

// maxParagraphs is how far into the body a sentence is looked for: past
// the first few paragraphs a sentence is detail, not what the change does.
const maxParagraphs = 3

// bodySentence is the sentence of the body that best says what the change
// does. Each prose paragraph is offered by its first sentence; one that only
// gives context (what an earlier commit did, how things are now), that
// introduces a list or a code block, that leans on a sentence before it, or
// that is too long to quote whole is passed over. Of the rest, one that
// tells what the change does, in the imperative mood commit messages use
// for it ("Teach fetch to ..."), wins over one that describes; otherwise
// the first is taken. Lists, code, quotes and trailers are never quoted:
// joined into a line they read as one garbled sentence.
func bodySentence(body, subject string) string {
	first := ""
	for i, para := range proseParagraphs(body) {
		if i == maxParagraphs {
			break
		}
		lead := firstSentence(para.text)
		if lead == "" || para.resumed || !para.whole && lead == para.text && !endsSentence(lead) {
			continue // the paragraph runs on into a block it introduces
		}
		if strings.HasSuffix(lead, ":") || strings.HasSuffix(lead, ",") || strings.HasSuffix(lead, ";") ||
			strings.HasSuffix(lead, "...") || !balanced(lead) {
			continue // not a whole sentence
		}
		if len(subject)+1+len(lead) > maxMessageBytes || onlyContext.MatchString(lead) || restates(lead, subject) || !hasWord(lead) {
			continue
		}
		if imperative.MatchString(lead) {
			return sentence(lead)
		}
		if first == "" && !connective.MatchString(lead) {
			first = lead
		}
	}
	return sentence(first)
}

// paragraph is a run of prose lines joined into one line. whole is false
// when the run stopped at a list, code block or quote rather than at a blank
// line or the message's end; resumed when it began right under one, in the
// middle of a sentence that the block interrupted.
type paragraph struct {
	text           string
	whole, resumed bool
}

// proseParagraphs splits the body into runs of prose, dropping lists, code
// blocks, quotes, separators and everything from the first trailer on.
func proseParagraphs(body string) []paragraph {
	var out []paragraph
	var run []string
	inList, afterBlock, resumed, blank := false, false, false, false
	flush := func(whole bool) {
		if len(run) > 0 {
			text := strings.Join(strings.Fields(strings.Join(run, " ")), " ")
			out = append(out, paragraph{text: mdLink.ReplaceAllString(text, "$1"), whole: whole, resumed: resumed})
		}
		run = nil
	}
	for _, line := range strings.Split(body, "\n") {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" {
			// Whether the run before is whole depends on what follows: a
			// block after a blank line still ends its sentence for it.
			blank, inList = true, false
			continue
		}
		isTrailer := trailer.MatchString(trimmed)
		isBullet := bullet.MatchString(line)
		block := isTrailer || isBullet || inList || line[0] == ' ' || line[0] == '\t' || nonProse.MatchString(trimmed)
		if len(run) > 0 && (block || blank) {
			flush(!block || isTrailer)
		}
		switch {
		case isTrailer:
			// Trailers end the message; what follows them is not prose.
			return out
		case block:
			// A list, code or output quoted by indenting, a quote, a rule:
			// none is a sentence of the message's own. An unindented line
			// right under a list item still belongs to it.
			inList = inList || isBullet
			afterBlock = true
		default:
			if len(run) == 0 {
				// Right under a block, or after it in lower case, a run
				// goes on with the sentence the block interrupted.
				first, _ := utf8.DecodeRuneInString(trimmed)
				resumed = afterBlock && (!blank || unicode.IsLower(first))
				afterBlock = false
			}
			run = append(run, trimmed)
		}
		blank = false
	}
	flush(true)
	return out
}

var (
	// trailer matches git trailer lines: hyphenated keys such as
	// Signed-off-by or Co-authored-by, and the common one-word ones.
	// "Note: ..." is prose.
	trailer = regexp.MustCompile(`^(?:[A-Za-z]+(?:-[A-Za-z]+)+|Fixes|Closes|Resolves|Refs|Cc|Link|Bug|Issue|Change-Id):\s`)
	// bullet is a list item: "* x", "- x", "+ x", "• x", "1. x", "2) x".
	bullet = regexp.MustCompile(`^\s*(?:[-*+•]|\d{1,3}[.)])\s+\S`)
	// nonProse is a line no sentence is made of: a quote, a rule, a
	// heading, a link reference, a bare URL.
	nonProse = regexp.MustCompile(`^(?:>|[-=*_~#]{3,}|#+\s|\[[^\]]*\]:\s|[a-z]+://\S+$)`)
	// connective opens a sentence that answers the one before it.
	connective = regexp.MustCompile(`^(?:In contrast|On the other hand|But|However|And|Or|So|Yet|Also|Besides|Moreover|Furthermore|Nevertheless|Nonetheless|Thus|Hence|Therefore|Still|Then)\b`)
	// imperative opens a sentence that says what the change does, as
	// commit messages do: "Teach ...", "Instead, use ...", "This patch ...".
	imperative = regexp.MustCompile(`^(?:(?:Instead|So|Therefore|Thus|Hence|Now|To (?:fix|avoid|address|solve|prevent|correct) (?:this|that|these|it)),? )?(?:(?i:let's|let us) )?(?:(?i:Add|Adjust|Allow|Avoid|Bump|Call|Change|Check|Clean|Clear|Close|Convert|Copy|Correct|Create|Deprecate|Describe|Detect|Disable|Discard|Document|Don't|Do not|Drop|Enable|Ensure|Expose|Extend|Extract|Factor|Fix|Free|Guard|Handle|Ignore|Implement|Improve|Inline|Introduce|Keep|Let|Limit|Make|Mark|Move|Pass|Plug|Prefer|Prevent|Protect|Provide|Read|Redirect|Reduce|Refactor|Refuse|Reject|Release|Remove|Rename|Reorder|Replace|Report|Require|Reset|Restore|Restructure|Retire|Return|Reuse|Revert|Rewrite|Reword|Run|Separate|Set|Show|Simplify|Skip|Sort|Split|Stop|Store|Support|Switch|Teach|Tighten|Treat|Trim|Tweak|Unify|Update|Upgrade|Use|Validate|Verify|Warn|Wrap|Write)\b|This (?:patch|commit|change|series|PR|pull request)\b|With this (?:patch|commit|change)\b)`)
	// mdLink is a Markdown link, whose text is the words meant.
	mdLink = regexp.MustCompile(`\[([^\[\]]+)\]\([^()\s]+\)`)
	// onlyContext marks a sentence that tells the story so far rather than the
	// change: what an earlier commit did, what is the case today, who
	// reported what.
	onlyContext = regexp.MustCompile(`(?i)\b(?:previously|a previous commit|the previous commit|an earlier commit|a recent commit|recent commits|since commit|since [0-9a-f]{7,40}\b|currently|at present|at the moment|in the past|historically|originally|until now|as reported|was reported|were reported|users? reported|reported (?:by|in|on)|when [^.]{1,80} was (?:added|introduced|written|implemented|converted)|commit [0-9a-f]{7,40}\b|[0-9a-f]{7,40} \(|(?:in|by|since|after) #\d+)|^#\d+\s`)
)

// firstSentence is text up to its first sentence end: a stop, question or
// exclamation mark followed by a space and what can begin a sentence. "e.g.
// this", an ellipsis and a stop inside `code` end none.
func firstSentence(text string) string {
	inCode := false
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c == '`' {
			inCode = !inCode
		}
		if inCode || c != '.' && c != '!' && c != '?' {
			continue
		}
		if i+2 >= len(text) || text[i+1] != ' ' || i > 0 && text[i-1] == '.' {
			continue
		}
		if c != '.' && (i == 0 || !isWordEnd(text[i-1])) {
			continue // "'! (git ...)'" quotes an operator
		}
		next, _ := utf8.DecodeRuneInString(text[i+2:])
		if unicode.IsLower(next) || abbreviation(text[:i+1]) {
			continue
		}
		return text[:i+1]
	}
	return text
}

func isWordEnd(c byte) bool {
	return c >= 0x80 || c == ')' || c == '"' || c == '`' || unicode.IsLetter(rune(c)) || unicode.IsDigit(rune(c))
}

// balanced reports whether s closes every quote, code span and bracket it
// opens: one that does not was cut from the text around it.
func balanced(s string) bool {
	return strings.Count(s, "`")%2 == 0 && strings.Count(s, `"`)%2 == 0 &&
		strings.Count(s, "(") == strings.Count(s, ")") && strings.Count(s, "[") == strings.Count(s, "]")
}

func abbreviation(upToStop string) bool {
	word := upToStop[strings.LastIndexByte(upToStop, ' ')+1:]
	switch strings.ToLower(word) {
	case "e.g.", "i.e.", "cf.", "vs.", "etc.", "mr.", "ms.", "dr.", "no.", "approx.", "incl.", "resp.":
		return true
	}
	return false
}

// endsSentence reports whether s ends as sentences do, closing quotes and
// brackets aside.
func endsSentence(s string) bool {
	s = strings.TrimRight(s, `"')]`+"`")
	return s != "" && strings.ContainsAny(s[len(s)-1:], ".!?")
}

// restates reports whether every word of lead is in the subject: a
// sentence that says nothing the subject has not ("Bumps x from 1 to 2.").
func restates(lead, subject string) bool {
	have := map[string]bool{}
	for _, w := range wordsOf(subject) {
		have[w] = true
	}
	for _, w := range wordsOf(lead) {
		if !have[w] {
			return false
		}
	}
	return true
}

// wordsOf is s in lower case, split at anything but letters and digits, a
// plural or third-person "s" dropped.
func wordsOf(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if len(w) > 3 {
			w = strings.TrimSuffix(w, "s")
		}
		out = append(out, w)
	}
	return out
}

func hasWord(s string) bool {
	letters := 0
	for _, r := range s {
		if unicode.IsLetter(r) {
			letters++
			if letters >= 3 {
				return true
			}
		}
	}
	return false
}
