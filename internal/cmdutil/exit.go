// Package cmdutil holds what every digest command shares: the factory of
// lazily built dependencies, exit codes, and DIGEST_* environment defaults.
package cmdutil

import (
	"context"
	"errors"
	"fmt"
)

// Exit codes, listed in every command's help.
const (
	ExitOK          = 0
	ExitFailure     = 1
	ExitUsage       = 2
	ExitGate        = 3
	ExitInterrupted = 130
)

// ExitCodesHelp is the exit-code section of each command's help.
const ExitCodesHelp = `Exit codes:
  0    success (also when there is nothing to do)
  1    error: a repository, the database or a provider failed, an eval result ended
       in error, or --max-cost was reached (every report is written first)
  2    usage: a flag, argument or DIGEST_* value is invalid
  3    eval: a model's pass rate is below --min or --min-accuracy, or --min names a
       metric the run does not have (every report is written first)
  130  interrupted (SIGINT, SIGTERM or SIGHUP); everything finished so far is stored`

// ExitError carries the exit code an error should end the process with.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// UsageError is an error in what the user asked for: exit code 2.
func UsageError(format string, args ...any) error {
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf(format, args...)}
}

// AsUsage marks err as a usage error.
func AsUsage(err error) error {
	if err == nil {
		return nil
	}
	return &ExitError{Code: ExitUsage, Err: err}
}

// interruptedError reports a run stopped by a signal, in the command's own
// words, while still matching context.Canceled.
type interruptedError struct{ msg string }

func (e interruptedError) Error() string { return e.msg }
func (e interruptedError) Unwrap() error { return context.Canceled }

// Interrupted is the error of a command stopped by SIGINT or SIGTERM; msg
// says what was kept.
func Interrupted(msg string) error { return interruptedError{msg} }

// Code returns the exit code for err.
func Code(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	return ExitFailure
}
