// Package iostreams carries a command's standard streams and what is known
// about them, so commands print data to Out, everything else to ErrOut, and
// draw progress only for a person at a terminal.
package iostreams

import (
	"bytes"
	"io"
	"os"

	"golang.org/x/term"
)

// IOStreams are a command's standard streams.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	stdoutTTY bool
	stderrTTY bool
}

// System returns the process's own streams.
func System() *IOStreams {
	return &IOStreams{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		stdoutTTY: term.IsTerminal(int(os.Stdout.Fd())),
		stderrTTY: term.IsTerminal(int(os.Stderr.Fd())),
	}
}

// Test returns streams backed by buffers, none of them a terminal.
func Test() (ios *IOStreams, out, errOut *bytes.Buffer) {
	out, errOut = &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: &bytes.Buffer{}, Out: out, ErrOut: errOut}, out, errOut
}

// IsStdoutTTY reports whether standard output is a terminal: tables for
// people there, JSON for programs elsewhere.
func (s *IOStreams) IsStdoutTTY() bool { return s.stdoutTTY }

// SetStdoutTTY overrides terminal detection, for tests.
func (s *IOStreams) SetStdoutTTY(v bool) { s.stdoutTTY = v }

// IsStderrTTY reports whether standard error is a terminal.
func (s *IOStreams) IsStderrTTY() bool { return s.stderrTTY }

// SetStderrTTY overrides terminal detection, for tests.
func (s *IOStreams) SetStderrTTY(v bool) { s.stderrTTY = v }
