package score

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

// maxChoices is how many choices letters name: A to Z.
const maxChoices = 26

var (
	// "Answer: B", "The answer is (C).", "correct option is D", "ANSWER: b)"
	// ... the last one counts. A bare letter must be a capital followed by
	// no letter or digit ("The answer is Berlin" names no letter); a small
	// one needs brackets or a closing parenthesis ("answer: (b)").
	answerPhrase = regexp.MustCompile(`(?i:\b(?:answer|option|choice))(?:\s+(?i:is|would\s+be|will\s+be))?\s*[:\-=]?\s*(?i:(?:option|choice|letter)\s+)?(?:[\(\[]([A-Za-z])[\)\]]|([a-z])\)|([A-Z]))(?:[^\p{L}\p{N}]|$)`)
	// "B) Paris", "(B) Paris", "B. Paris", "b: Paris" at the start.
	leadingLetter = regexp.MustCompile(`^[\(\[]?([A-Za-z])[\)\]\.:](?:\s|$)`)
	// What follows "the answer is" or "answer:", to compare with the texts
	// of the choices.
	answerTail = regexp.MustCompile(`(?i)\banswer(?:\s+is|\s*:)\s*(.+)$`)
)

// answerChoice is the choice (0 for A) an answer picks, among choices
// when the item has them (else any letter A to Z). Tried in turn:
//
//   - the whole answer is a letter, maybe bracketed or followed by
//     punctuation: "B", "b", "(B)", "B)", "[B]", "B.";
//   - the last "answer/option/choice [is] [:] X" phrase: "Answer: B",
//     "The answer is B.", "The correct option is (C)";
//   - a letter at the start followed by ")", ".", "]" or ":": "B) Paris";
//   - the text of a choice, compared without case, surrounding spaces or
//     final punctuation, as the whole answer or after "the answer is".
//
// Markdown emphasis (**, __, `) is ignored.
func answerChoice(answer string, choices []string) (int, bool) {
	n := maxChoices
	if len(choices) > 0 {
		n = min(len(choices), maxChoices)
	}
	inRange := func(letter string) (int, bool) {
		c := letter[0]
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		i := int(c - 'A')
		return i, i >= 0 && i < n
	}
	s := strings.TrimSpace(strings.NewReplacer("**", "", "__", "", "`", "").Replace(answer))
	if bare := strings.Trim(s, " \t\r\n()[]{}.:,;!*\"'"); len(bare) == 1 && isASCIILetter(bare[0]) {
		if i, ok := inRange(bare); ok {
			return i, true
		}
	}
	ms := answerPhrase.FindAllStringSubmatch(s, -1)
	for k := len(ms) - 1; k >= 0; k-- {
		for _, g := range ms[k][1:] {
			if g != "" {
				if i, ok := inRange(g); ok {
					return i, true
				}
			}
		}
	}
	if m := leadingLetter.FindStringSubmatch(s); m != nil {
		if i, ok := inRange(m[1]); ok {
			return i, true
		}
	}
	if len(choices) > 0 {
		if i, ok := choiceText(s, choices); ok {
			return i, true
		}
		if m := answerTail.FindStringSubmatch(s); m != nil {
			if i, ok := choiceText(m[1], choices); ok {
				return i, true
			}
		}
	}
	return 0, false
}

// choiceText is the index of the choice whose text s is.
func choiceText(s string, choices []string) (int, bool) {
	want := normChoice(s)
	if want == "" {
		return 0, false
	}
	for i, c := range choices[:min(len(choices), maxChoices)] {
		if normChoice(c) == want {
			return i, true
		}
	}
	return 0, false
}

func normChoice(s string) string {
	return fold(strings.Trim(strings.TrimSpace(s), " \t\r\n.!?;:,\"'"))
}

// expectedChoice reads an expected answer of a choice assertion: the text
// of one of the choices, a letter ("B"), or any answer form ("(B)",
// "Answer: B").
func expectedChoice(v string, choices []string) (int, bool) {
	// A lone letter is a letter, as inspect reads targets (and as the
	// dataset reader writes them), even when some choice's text is that letter.
	if t := strings.TrimSpace(v); len(t) == 1 && isASCIILetter(t[0]) {
		i := int(unicode.ToUpper(rune(t[0])) - 'A')
		if len(choices) == 0 || i < len(choices) {
			return i, true
		}
	}
	if len(choices) > 0 {
		if i, ok := choiceText(v, choices); ok {
			return i, true
		}
	}
	return answerChoice(v, choices)
}

// choiceName shows a choice: B ("London"), or B without choices.
func choiceName(i int, choices []string) string {
	l := string(rune('A' + i))
	if i < len(choices) {
		return fmt.Sprintf("%s (%q)", l, clip(choices[i]))
	}
	return l
}

func isASCIILetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
