// Package redact replaces secrets in text that is about to leave the machine
// with a marker naming the rule that found them. The rules are gitleaks'
// maintained set, used as a library, plus two of digest's own for what
// gitleaks leaves alone: a private key cut short by the token budget, and a
// bare high-entropy token with no telling keyword before it.
package redact

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/rs/zerolog"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/logging"
	"github.com/zricethezav/gitleaks/v8/report"
)

// droppedRules fire on text every diff is full of: sourcegraph-access-token
// matches any 40-hex git object name.
var droppedRules = []string{"sourcegraph-access-token"}

// Redactor finds and replaces secrets. It is safe for concurrent use.
type Redactor struct {
	detector *detect.Detector
}

// Counts is how many secrets each rule replaced.
type Counts map[string]int

// Total is the number of secrets replaced.
func (c Counts) Total() int {
	n := 0
	for _, v := range c {
		n += v
	}
	return n
}

// Add adds other's counts to c.
func (c Counts) Add(other Counts) {
	for rule, n := range other {
		c[rule] += n
	}
}

// String lists the rules, most frequent first: "aws-access-token 2, private-key 1".
func (c Counts) String() string {
	rules := make([]string, 0, len(c))
	for rule := range c {
		rules = append(rules, rule)
	}
	slices.SortFunc(rules, func(a, b string) int {
		return cmp.Or(cmp.Compare(c[b], c[a]), strings.Compare(a, b))
	})
	parts := make([]string, len(rules))
	for i, rule := range rules {
		parts[i] = fmt.Sprintf("%s %d", rule, c[rule])
	}
	return strings.Join(parts, ", ")
}

// gitleaks builds its rule set through viper's global state, so it is built
// once per process.
var newDetector = sync.OnceValues(func() (*detect.Detector, error) {
	// gitleaks logs to standard error on its own; digest reports what it
	// found through its own logger instead.
	logging.Logger = logging.Logger.Level(zerolog.Disabled)
	d, err := detect.NewDetectorDefaultConfig()
	if err != nil {
		return nil, err
	}
	for _, id := range droppedRules {
		delete(d.Config.Rules, id)
	}
	return d, nil
})

// New returns a Redactor with gitleaks' default rules.
func New() (*Redactor, error) {
	d, err := newDetector()
	if err != nil {
		return nil, fmt.Errorf("loading the secret rules: %w", err)
	}
	return &Redactor{detector: d}, nil
}

// Marker is what replaces a secret found by rule.
func Marker(rule string) string { return "[REDACTED:" + rule + "]" }

// Redact returns text with every secret replaced by its rule's marker, and
// what it replaced. Every occurrence of a found secret is replaced, not only
// the one the rule matched: the same key pasted twice leaks just the same.
func (r *Redactor) Redact(text string) (string, Counts) {
	counts := Counts{}
	if text == "" {
		return text, counts
	}
	text = redactPrivateKeys(text, counts)
	findings := r.detector.DetectString(text)
	// Longest first, so that a secret containing a shorter one is replaced
	// whole before the shorter one could split it.
	slices.SortFunc(findings, func(a, b report.Finding) int { return cmp.Compare(len(b.Secret), len(a.Secret)) })
	for _, f := range findings {
		if f.Secret == "" || !strings.Contains(text, f.Secret) {
			continue // already replaced as part of a longer one
		}
		counts[f.RuleID] += strings.Count(text, f.Secret)
		text = strings.ReplaceAll(text, f.Secret, Marker(f.RuleID))
	}
	text = redactHighEntropy(text, counts)
	return text, counts
}

const highEntropyRule = "high-entropy-string"

// A candidate token: the alphabets of base64, base64url and hex, long enough
// to be a credential.
var tokenPattern = regexp.MustCompile(`[A-Za-z0-9+/_=-]{24,}`)

// minEntropy is in bits per character. Random base64 scores about 4.7 over 32
// characters, hex at most 4 (so git object names stay), English words and
// identifiers well under 4.
const minEntropy = 4.3

// redactHighEntropy replaces random-looking tokens that name no rule: a key
// pasted into a commit message with no "key=" before it. Only tokens mixing
// upper case, lower case and digits qualify, so that hashes, identifiers and
// words are left alone.
func redactHighEntropy(text string, counts Counts) string {
	return tokenPattern.ReplaceAllStringFunc(text, func(tok string) string {
		if !mixedClasses(tok) || entropy(tok) < minEntropy {
			return tok
		}
		counts[highEntropyRule]++
		return Marker(highEntropyRule)
	})
}

func mixedClasses(s string) bool {
	var upper, lower, digits int
	for _, c := range s {
		switch {
		case c >= 'A' && c <= 'Z':
			upper++
		case c >= 'a' && c <= 'z':
			lower++
		case c >= '0' && c <= '9':
			digits++
		}
	}
	return upper > 0 && lower > 0 && digits > 1
}

// entropy is the Shannon entropy of s's characters, in bits per character.
func entropy(s string) float64 {
	var freq [256]int
	for i := 0; i < len(s); i++ {
		freq[s[i]]++
	}
	var h float64
	n := float64(len(s))
	for _, c := range freq {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}
