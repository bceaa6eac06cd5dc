package iostreams

import (
	"strings"
	"testing"
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
		p.Done(10)
		p.Finish()
		if drew := strings.Contains(errOut.String(), "summarizing"); drew != tt.draws {
			t.Errorf("tty=%v enabled=%v: drew=%v, want %v (stderr %q)", tt.tty, tt.enabled, drew, tt.draws, errOut.String())
		}
		if out.Len() != 0 {
			t.Errorf("progress went to stdout: %q", out.String())
		}
	}
}
