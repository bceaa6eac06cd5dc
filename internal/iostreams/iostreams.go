// Package iostreams carries a command's standard streams and what is known
// about them, so commands print data to Out, everything else to ErrOut, and
// draw progress only for a person at a terminal.
package iostreams

import (
	"bytes"
	"io"
	"os"

	"golang.org/x/term"

	"github.com/digest-cli/digest/internal/textsafe"
)

// IOStreams are a command's standard streams.
//
// Out and ErrOut show every control character that reaches them as text
// (ESC as \x1b, see textsafe.Text) while they are terminals: commit
// subjects, file names, dataset text and model answers end up in tables,
// errors and warnings, and none of them may set a window title, write the
// clipboard (OSC 52), clear the screen or reorder a line. Files and pipes
// get the bytes as they are.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	// out and errOut are the streams themselves, which the progress bar
	// draws on with its own escape sequences.
	out    io.Writer
	errOut io.Writer

	stdoutTTY bool
	stderrTTY bool
}

// System returns the process's own streams.
func System() *IOStreams {
	s := &IOStreams{In: os.Stdin, out: os.Stdout, errOut: os.Stderr}
	s.SetStdoutTTY(term.IsTerminal(int(os.Stdout.Fd())))
	s.SetStderrTTY(term.IsTerminal(int(os.Stderr.Fd())))
	return s
}

// Test returns streams backed by buffers, none of them a terminal.
func Test() (ios *IOStreams, out, errOut *bytes.Buffer) {
	out, errOut = &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: &bytes.Buffer{}, Out: out, ErrOut: errOut, out: out, errOut: errOut}, out, errOut
}

// IsStdoutTTY reports whether standard output is a terminal: tables for
// people there, JSON for programs elsewhere.
func (s *IOStreams) IsStdoutTTY() bool { return s.stdoutTTY }

// SetStdoutTTY overrides terminal detection, for tests; Out shows control
// characters as text while it is set.
func (s *IOStreams) SetStdoutTTY(v bool) {
	s.stdoutTTY = v
	s.out = stream(s.out, s.Out)
	s.Out = terminalSafe(s.out, v)
}

// IsStderrTTY reports whether standard error is a terminal.
func (s *IOStreams) IsStderrTTY() bool { return s.stderrTTY }

// SetStderrTTY overrides terminal detection, for tests; ErrOut shows
// control characters as text while it is set.
func (s *IOStreams) SetStderrTTY(v bool) {
	s.stderrTTY = v
	s.errOut = stream(s.errOut, s.ErrOut)
	s.ErrOut = terminalSafe(s.errOut, v)
}

// stream is the stream under a command's writer: the one kept, or, for
// streams made without System or Test, the writer itself.
func stream(kept, w io.Writer) io.Writer {
	if kept != nil {
		return kept
	}
	if tw, ok := w.(*textsafe.Writer); ok {
		return tw.Underlying()
	}
	return w
}

func terminalSafe(w io.Writer, tty bool) io.Writer {
	if tty {
		return textsafe.NewWriter(w)
	}
	return w
}

// StyledOut is standard output itself, escape sequences passed through:
// only for text digest wrote (its help pages' styles), never for text
// from a repository, a dataset or a model, which goes to Out.
func (s *IOStreams) StyledOut() io.Writer { return stream(s.out, s.Out) }

// TerminalWidth is standard output's width in columns when it is a
// terminal, else 80.
func (s *IOStreams) TerminalWidth() int {
	if f, ok := s.out.(*os.File); ok && s.stdoutTTY {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
			return w
		}
	}
	return 80
}
