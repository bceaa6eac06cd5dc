package redact

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
)

// corpusLine is a line of a corpus file, and the section it is in.
type corpusLine struct {
	section, text string
	number        int
}

// readCorpus reads a corpus file: one line a line, "## " lines naming the
// section that follows or commenting.
func readCorpus(t *testing.T, path string) []corpusLine {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []corpusLine
	section := ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		text := sc.Text()
		if strings.HasPrefix(text, "##") {
			section = strings.TrimSpace(strings.TrimPrefix(text, "##"))
			continue
		}
		// ⏎ breaks a corpus line in two: a Kubernetes env entry names its
		// secret on one line and gives its value on the next.
		lines = append(lines, corpusLine{section, strings.ReplaceAll(text, "⏎", "\n"), n})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// secretGen fills the «slots» of the corpus's secret lines with values made
// by a seeded generator: the repository holds no secret, and every run
// tests the same ones.
type secretGen struct{ rng *rand.Rand }

const (
	alphaUpper = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	alphaLower = "abcdefghijklmnopqrstuvwxyz"
	digitChars = "0123456789"
	alnumChars = alphaUpper + alphaLower + digitChars
	// passwordSymbols are those a password in any of the corpus's forms may
	// hold without ending its value early: no quotes, spaces, separators.
	passwordSymbols = "!*_-+=?~^#"
)

// passwordWords are the words everyday passwords are made of.
var passwordWords = strings.Fields(`tangerine bluebird marigold pinecone hazelnut lighthouse
	snowflake waterfall sunflower butterfly dragonfly cinnamon moonlight starfish riverbank
	stonewall blackbird rainforest wildfire peppermint honeybee thunder silverado coconut
	avalanche firefly meadowlark seashell driftwood evergreen changeme letmein welcome dragon
	sunshine princess football shadow qwerty iloveyou baseball superman freedom whatever`)

func (g secretGen) pick(alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[g.rng.IntN(len(alphabet))]
	}
	return string(b)
}

func (g secretGen) word() string { return passwordWords[g.rng.IntN(len(passwordWords))] }

// password is one in the shapes people choose: a word and a year, a
// capitalised word with a symbol, leetspeak, or random characters. It
// starts with a letter and holds a digit or a symbol, as policies ask.
func (g secretGen) password() string {
	switch g.rng.IntN(5) {
	case 0:
		return g.word() + g.pick(digitChars, 2+g.rng.IntN(3))
	case 1:
		w := g.word()
		return strings.ToUpper(w[:1]) + w[1:] + g.pick(digitChars, 1+g.rng.IntN(3)) + g.pick(passwordSymbols, 1)
	case 2:
		leet := strings.NewReplacer("a", "4", "e", "3", "i", "1", "o", "0", "s", "5").Replace(g.word())
		return "p" + leet + g.pick(passwordSymbols, 1)
	case 3:
		return g.word() + g.pick(passwordSymbols, 1) + g.word() + g.pick(digitChars, 1)
	}
	return g.pick(alphaUpper+alphaLower, 1) + g.pick(alnumChars+passwordSymbols, 6+g.rng.IntN(10)) + g.pick(digitChars, 1)
}

// fill returns template with its slots filled, and the values filled in.
func (g secretGen) fill(template string) (string, []string, error) {
	var b strings.Builder
	var values []string
	rest := template
	for {
		open := strings.Index(rest, "«")
		if open < 0 {
			break
		}
		end := strings.Index(rest[open:], "»")
		if end < 0 {
			return "", nil, fmt.Errorf("a slot opened and not closed in %q", template)
		}
		slot := rest[open+len("«") : open+end]
		v, err := g.value(slot)
		if err != nil {
			return "", nil, err
		}
		b.WriteString(rest[:open])
		b.WriteString(v)
		values = append(values, v)
		rest = rest[open+end+len("»"):]
	}
	b.WriteString(rest)
	if len(values) == 0 {
		return "", nil, fmt.Errorf("no «slot» in the secret line %q", template)
	}
	return b.String(), values, nil
}

func (g secretGen) value(slot string) (string, error) {
	kind, size, sized := strings.Cut(slot, ":")
	n := 0
	if sized {
		var err error
		if n, err = strconv.Atoi(size); err != nil || n <= 0 {
			return "", fmt.Errorf("slot «%s»: the length is not a number", slot)
		}
	}
	switch kind {
	case "pw":
		return g.password(), nil
	case "urlpw":
		return g.pick(alphaLower+alphaUpper, 1) + g.pick(alnumChars+"-_.~", 8+g.rng.IntN(10)) + g.pick(digitChars, 1), nil
	case "word":
		return g.word(), nil
	case "hex":
		return g.pick("0123456789abcdef", n), nil
	case "alnum", "b62":
		return g.pick(alnumChars, n), nil
	case "b64":
		return g.pick(alnumChars+"+/", n), nil
	case "b64url":
		return g.pick(alnumChars+"-_", n), nil
	case "lower":
		return g.pick(alphaLower+digitChars, n), nil
	case "upper":
		return g.pick(alphaUpper+digitChars, n), nil
	case "digits":
		return g.pick(digitChars, n), nil
	case "uuid":
		hex := "0123456789abcdef"
		return g.pick(hex, 8) + "-" + g.pick(hex, 4) + "-4" + g.pick(hex, 3) + "-a" + g.pick(hex, 3) + "-" + g.pick(hex, 12), nil
	case "basic":
		user := []string{"admin", "deploy", "ci", "ops", "svc-backup"}[g.rng.IntN(5)]
		return base64.StdEncoding.EncodeToString([]byte(user + ":" + g.password())), nil
	case "ghp":
		return "ghp_" + g.pick(alnumChars, 36), nil
	case "aws":
		return "AKIA" + g.pick("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16), nil
	case "awssecret":
		return g.pick(alnumChars+"+/", 40), nil
	case "slack":
		return "xoxb-" + g.pick(digitChars, 12) + "-" + g.pick(digitChars, 13) + "-" + g.pick(alnumChars, 24), nil
	case "stripe":
		return "sk_live_" + g.pick(alnumChars, 24), nil
	case "sendgrid":
		return "SG." + g.pick(alnumChars+"-_", 22) + "." + g.pick(alnumChars+"-_", 43), nil
	}
	return "", fmt.Errorf("slot «%s»: no such kind of value", slot)
}

// minRecall is the share of the corpus's secret lines Redact must catch.
const minRecall = 0.99

// fillsPerLine is how many times each secret line is filled with new values:
// a line is caught when all of them are, so that a rule holding for some
// passwords only fails here, not on some later seed.
const fillsPerLine = 3

// TestCorpusRecallAndFalsePositives runs every line of the labelled corpus
// through Redact: a secret line is caught when none of its secret values is
// left in the result, in each of its fills; a clean line must come out
// unchanged.
func TestCorpusRecallAndFalsePositives(t *testing.T) {
	r, err := New()
	if err != nil {
		t.Fatal(err)
	}
	secrets := readCorpus(t, "testdata/corpus/secret.txt")
	clean := readCorpus(t, "testdata/corpus/clean.txt")
	if len(secrets) < 400 || len(clean) < 400 {
		t.Fatalf("the corpus has %d secret and %d clean lines, want 400 of each at least", len(secrets), len(clean))
	}

	gen := secretGen{rand.New(rand.NewPCG(2026, 12))}
	caught := 0
	perSection := map[string][2]int{} // caught, total
	var sections []string
	for _, l := range secrets {
		ok := true
		for range fillsPerLine {
			line, values, err := gen.fill(l.text)
			if err != nil {
				t.Fatalf("secret.txt:%d: %v", l.number, err)
			}
			got, _ := r.Redact(line)
			for _, v := range values {
				if strings.Contains(got, v) {
					ok = false
					t.Logf("missed, secret.txt:%d:\n\t%s\n\t%s", l.number, line, got)
					break
				}
			}
		}
		if _, seen := perSection[l.section]; !seen {
			sections = append(sections, l.section)
		}
		s := perSection[l.section]
		s[1]++
		if ok {
			caught++
			s[0]++
		}
		perSection[l.section] = s
	}
	for _, name := range sections {
		s := perSection[name]
		t.Logf("%-28s %3d/%3d caught", name, s[0], s[1])
	}

	changed := 0
	for _, l := range clean {
		if got, counts := r.Redact(l.text); got != l.text {
			changed++
			t.Errorf("clean.txt:%d redacted (%v):\n\t%s\n\t%s", l.number, counts, l.text, got)
		}
	}

	recall := float64(caught) / float64(len(secrets))
	t.Logf("corpus: recall %d/%d secret lines (%.1f%%, each filled %d times); false positives %d/%d clean lines",
		caught, len(secrets), 100*recall, fillsPerLine, changed, len(clean))
	if recall < minRecall {
		t.Errorf("recall %.1f%% is under %.0f%%", 100*recall, 100*minRecall)
	}
}
