package cmdutil

import (
	"math"
	"time"

	"github.com/spf13/pflag"

	"github.com/digest-cli/digest/internal/engine"
)

// Checks of flag values. Each failure is a usage error (exit 2) of one
// line that names the flag, the value given and what to give instead, so
// that one bad value among twenty flags is found at a glance.

// FirstError returns the first non-nil error: the checks of a command's
// flags, in the order its help lists them.
func FirstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// AtLeastOne refuses a count below 1.
func AtLeastOne(flag string, v int) error {
	if v < 1 {
		return UsageError("--%s must be at least 1, got %d. Try: --%s 1 or more", flag, v, flag)
	}
	return nil
}

// NotNegative refuses a negative count; zero means what zeroMeans says.
func NotNegative(flag string, v int, zeroMeans string) error {
	if v < 0 {
		return UsageError("--%s cannot be negative, got %d. Try: --%s 0 for %s", flag, v, flag, zeroMeans)
	}
	return nil
}

// NotNegativeFloat refuses a negative number, and NaN and infinities,
// which parse as numbers but would disable a limit silently (every
// comparison with NaN is false).
func NotNegativeFloat(flag string, v float64, zeroMeans string) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return UsageError("--%s must be a finite number, got %v. Try: --%s 0 for %s", flag, v, flag, zeroMeans)
	}
	if v < 0 {
		return UsageError("--%s cannot be negative, got %v. Try: --%s 0 for %s", flag, v, flag, zeroMeans)
	}
	return nil
}

// NotNegativeDuration refuses a negative duration; zero means what
// zeroMeans says.
func NotNegativeDuration(flag string, v time.Duration, zeroMeans string) error {
	if v < 0 {
		return UsageError("--%s cannot be negative, got %s. Try: --%s 0 for %s, or a duration such as 30s or 2m", flag, v, flag, zeroMeans)
	}
	return nil
}

// PositiveDuration refuses a duration of zero or less.
func PositiveDuration(flag string, v time.Duration) error {
	if v <= 0 {
		return UsageError("--%s must be positive, got %s. Try: a duration such as 30s or 5m", flag, v)
	}
	return nil
}

// Stops are the flags that end a run against a provider that cannot serve
// it, rather than leave an unattended job waiting for hours.
type Stops struct {
	MaxWait     time.Duration
	MaxFailures int
}

// AddFlags registers --max-wait and --max-failures.
func (s *Stops) AddFlags(fl *pflag.FlagSet) {
	fl.DurationVar(&s.MaxWait, "max-wait", engine.DefaultMaxWait, "stop the run when the provider asks to wait longer than this (a daily quota); 0: wait as long as asked")
	fl.IntVar(&s.MaxFailures, "max-failures", engine.DefaultMaxFailures, "stop the run after this many failed requests in a row (a dead server, a wrong URL); 0: never")
}

// Engine returns the engine's settings, or a usage error. 0 on the command
// line means never stop, which the engine spells as negative.
func (s Stops) Engine() (maxWait time.Duration, maxFailures int, err error) {
	if err := FirstError(
		NotNegativeDuration("max-wait", s.MaxWait, "waiting as long as the provider asks"),
		NotNegative("max-failures", s.MaxFailures, "never stopping on failures"),
	); err != nil {
		return 0, 0, err
	}
	maxWait, maxFailures = s.MaxWait, s.MaxFailures
	if maxWait == 0 {
		maxWait = -1
	}
	if maxFailures == 0 {
		maxFailures = -1
	}
	return maxWait, maxFailures, nil
}
