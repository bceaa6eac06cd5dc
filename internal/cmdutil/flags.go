package cmdutil

import (
	"math"
	"time"
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
