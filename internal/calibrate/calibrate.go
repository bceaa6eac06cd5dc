// Package calibrate learns how many tokens a model's tokenizer counts per
// token of digest's own (o200k), from the input tokens providers report
// for prompts digest counted: a model whose tokenizer counts 40% more
// would otherwise be paced, capped and priced 40% low.
package calibrate

import (
	"math"
	"sync"
)

// MinSamples is how many answers a factor is learned from before it is
// used: fewer could be a few odd prompts.
const MinSamples = 8

// RunSamples is how many answers a run learns from: the mean of that many
// moves no more, and counting each prompt again costs a tokenizer pass.
const RunSamples = 256

// Smallest estimates are not learned from: a server's few tokens of chat
// template would swamp them.
const minEstimate = 64

// Learner is one model's factor: a prior (stored from earlier runs, or the
// model's documented factor) and what this run observes. Safe for
// concurrent use.
type Learner struct {
	mu           sync.Mutex
	prior        float64
	priorSamples int
	sum          float64 // of this run's ratios
	samples      int
	fallback     float64 // used until enough samples exist
}

// New returns a learner starting from prior over priorSamples (0 when
// nothing is stored), using fallback (the model's documented factor, or
// 1) until MinSamples answers in all are known.
func New(prior float64, priorSamples int, fallback float64) *Learner {
	if !(prior > 0) || math.IsInf(prior, 0) {
		prior, priorSamples = 0, 0
	}
	if !(fallback > 0) {
		fallback = 1
	}
	return &Learner{prior: prior, priorSamples: max(priorSamples, 0), fallback: fallback}
}

// Observe learns from one answer: estimated is digest's count of the
// prompt, reported the input tokens the provider billed for it.
func (l *Learner) Observe(estimated, reported int) {
	if estimated < minEstimate || reported <= 0 {
		return
	}
	r := float64(reported) / float64(estimated)
	r = min(max(r, 0.5), 4) // a server's odd count must not pace a run to a stop
	l.mu.Lock()
	l.sum += r
	l.samples++
	l.mu.Unlock()
}

// Learning reports whether the run still learns: fewer than RunSamples
// answers observed. Callers skip counting a prompt for Observe when not.
func (l *Learner) Learning() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.samples < RunSamples
}

// Factor is the factor to count with now.
func (l *Learner) Factor() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.priorSamples + l.samples
	if n < MinSamples {
		return l.fallback
	}
	return (l.prior*float64(l.priorSamples) + l.sum) / float64(n)
}

// Scale is n of digest's tokens as the model counts them, rounded up.
func (l *Learner) Scale(n int) int {
	f := l.Factor()
	if f == 1 || n <= 0 {
		return n
	}
	return int(math.Ceil(float64(n) * f))
}

// Learned is what this run observed, to be folded into what is stored:
// the mean ratio and how many answers it is of (0: nothing to save).
func (l *Learner) Learned() (factor float64, samples int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.samples == 0 {
		return 0, 0
	}
	return l.sum / float64(l.samples), l.samples
}
