package iostreams

import (
	"strings"
	"testing"
	"time"
)

func TestProgressDrawsOnlyOnATerminal(t *testing.T) {
	for _, tt := range []struct {
		tty, enabled, draws bool
	}{
		{tty: true, enabled: true, draws: true},
		{tty: true, enabled: false, draws: false},
		{tty: false, enabled: true, draws: false},
	} {
		ios, out, errOut := Test()
		ios.SetStderrTTY(tt.tty)
		p := ios.NewProgress("summarizing", tt.enabled)
		p.Start(10)
		p.Spent(12345, 0.5, 2)
		time.Sleep(150 * time.Millisecond) // past the bar's redraw throttle
		p.Done(1)
		p.Done(9)
		p.Finish()
		if drew := strings.Contains(errOut.String(), "summarizing"); drew != tt.draws {
			t.Errorf("tty=%v enabled=%v: drew=%v, want %v (stderr %q)", tt.tty, tt.enabled, drew, tt.draws, errOut.String())
		}
		if tt.draws && !strings.Contains(errOut.String(), "12.3k tokens · $0.5000 · 2 retries") {
			t.Errorf("the bar does not show tokens, cost and retries: %q", errOut.String())
		}
		if out.Len() != 0 {
			t.Errorf("progress went to stdout: %q", out.String())
		}
	}
}

// TestProgressTotalGrowsAsStepsAreFound: the bar's total is what was found
// so far, for runs that start work before they know how much there is.
func TestProgressTotalGrowsAsStepsAreFound(t *testing.T) {
	ios, _, errOut := Test()
	ios.SetStderrTTY(true)
	p := ios.NewProgress("summarizing", true)
	p.Found(4)
	p.Done(2)
	p.Found(6)
	time.Sleep(150 * time.Millisecond) // past the bar's redraw throttle
	p.Done(1)
	if !strings.Contains(errOut.String(), "3/10") {
		t.Errorf("after 4 and 6 found and 3 done, the bar does not show 3/10: %q", errOut.String())
	}
	p.Finish()
}
