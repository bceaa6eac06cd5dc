// Package redact replaces secrets in text that is about to leave the machine
// with a marker naming the rule that found them. The rules are gitleaks'
// maintained set, used as a library, for well-formed vendor tokens, and
// digest's own for what gitleaks leaves alone: a private key cut short by the
// token budget, a password in a connection URL or on a command line, an
// Authorization header, the value of any key whose name says it holds a
// password, secret, token, key or credential, whatever that value's entropy,
// and a bare random-looking token with no telling name before it.
//
// A marker replaces the secret only: the diff prefix of its line, the key
// name and the rest of a URL stay, so that the model still reads what
// changed. What is clearly no secret is left alone: an empty value, a
// placeholder (<your-key>, ***, xxx, your_token_here, replace-me, the word
// "password", foo, example, dummy), a reference to one (${VAR}, $VAR,
// os.Getenv("X"), process.env.X, {{ secrets.X }}, cfg.Password), a
// boolean, a number for any key but a password's, a path, and the
// identifiers, hashes and hash-built URLs every diff is made of. A default
// such as "changeme" is redacted: services run with it.
package redact

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/rs/zerolog"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/logging"
	"github.com/zricethezav/gitleaks/v8/report"
)

// droppedRules are gitleaks rules digest's own replace or must not run:
// sourcegraph-access-token matches any 40-hex git object name, and
// generic-api-key fires on hashes after words such as "authentication",
// takes half of all the redaction time, and is outdone by the assignment
// rules here, which keep the key name and catch values of any entropy.
var droppedRules = []string{"sourcegraph-access-token", "generic-api-key"}

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

// New returns a Redactor with gitleaks' default rules and digest's own.
func New() (*Redactor, error) {
	d, err := newDetector()
	if err != nil {
		return nil, fmt.Errorf("loading the secret rules: %w", err)
	}
	return &Redactor{detector: d}, nil
}

// markerPrefix starts every marker; a value that starts with it was
// redacted already.
const markerPrefix = "[REDACTED:"

// Marker is what replaces a secret found by rule.
func Marker(rule string) string { return markerPrefix + rule + "]" }

// Redact returns text with every secret replaced by its rule's marker, and
// what it replaced. Every occurrence of a found secret is replaced, not only
// the one a rule matched: the same key pasted twice leaks just the same.
//
// Redacting the result again changes nothing. One pass is not enough for
// that: a gitleaks rule whose regular expression is greedy (curl-auth-user
// takes the last -u of a line) may match an earlier part once a later one
// is a marker. So passes repeat until one finds nothing; text without
// secrets is read once.
func (r *Redactor) Redact(text string) (string, Counts) {
	counts := Counts{}
	for range maxPasses {
		found := counts.Total()
		text = r.pass(text, counts)
		if counts.Total() == found {
			break
		}
	}
	return text, counts
}

// maxPasses bounds the passes of Redact; each after the first needs a
// secret that only became visible when another was replaced.
const maxPasses = 4

// pass replaces the secrets found in one reading of text, adding them to
// counts.
func (r *Redactor) pass(text string, counts Counts) string {
	if text == "" {
		return text
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
	return redactLines(text, counts)
}
