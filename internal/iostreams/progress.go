package iostreams

import (
	"fmt"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/digest-cli/digest/internal/textsafe"
)

// Progress is a bar on standard error. Its zero value draws nothing.
type Progress struct {
	bar         *progressbar.ProgressBar
	description string
	unit        string        // what a step is, in the plural: "commits", "results"
	throttle    time.Duration // between redraws; tests set 0 to see every one
	s           *IOStreams
	total       int        // of the steps Found
	mu          sync.Mutex // guards spent and note: a batch run's looks come from its own goroutine
	spent, note string
}

// NewProgress returns a bar that draws only when standard error is a
// terminal and enabled is true; otherwise every call is a no-op, so logs
// and CI output never fill with carriage returns.
func (s *IOStreams) NewProgress(description string, enabled bool) *Progress {
	return s.NewProgressOf(description, "commits", enabled)
}

// NewProgressOf is NewProgress counting steps of unit, a plural noun:
// "12/40 results, 3 results/s".
func (s *IOStreams) NewProgressOf(description, unit string, enabled bool) *Progress {
	if !enabled || !s.stderrTTY {
		return &Progress{}
	}
	return &Progress{description: textsafe.Line(description), unit: textsafe.Line(unit), s: s, throttle: 100 * time.Millisecond}
}

// Start sets the number of steps and draws the bar.
func (p *Progress) Start(total int) {
	if p.s == nil {
		return
	}
	p.total = total
	p.bar = progressbar.NewOptions(total,
		progressbar.OptionSetWriter(p.s.errOut), // its own escapes must pass
		progressbar.OptionSetDescription(p.description),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString(p.unit),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetRenderBlankState(true),
		progressbar.OptionThrottle(p.throttle),
	)
}

// Found adds n steps to the bar, drawing it on the first call: for a total
// that grows while the first steps are already done.
func (p *Progress) Found(n int) {
	if p.s == nil {
		return
	}
	if p.bar == nil {
		p.Start(n)
		return
	}
	p.total += n
	p.bar.ChangeMax(p.total)
}

// Done advances the bar by n steps.
func (p *Progress) Done(n int) {
	if p.bar != nil && n > 0 {
		p.bar.Add(n)
	}
}

// Spent shows the run's tokens, cost and retries beside the bar.
func (p *Progress) Spent(tokens int, costUSD float64, retries int64) {
	if p.bar == nil {
		return
	}
	desc := fmt.Sprintf(" · %s tokens", compact(tokens))
	if costUSD > 0 {
		desc += fmt.Sprintf(" · $%.4f", costUSD)
	}
	if retries > 0 {
		desc += fmt.Sprintf(" · %d retries", retries)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.spent = desc
	p.describe()
}

// Note shows what the run waits for beside the bar (the state of its
// batches), or nothing for "".
func (p *Progress) Note(s string) {
	if p.bar == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.note = ""
	if s != "" {
		p.note = " · " + textsafe.Line(s)
	}
	p.describe()
}

func (p *Progress) describe() { p.bar.Describe(p.description + p.spent + p.note) }

// compact writes 12345 as 12.3k.
func compact(n int) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1_000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

// Finish removes the bar so the final summary line starts clean.
func (p *Progress) Finish() {
	if p.bar != nil {
		p.bar.Finish()
	}
}
