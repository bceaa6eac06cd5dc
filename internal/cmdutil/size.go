package cmdutil

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Size is a flag's number of bytes: 1048576, 64MiB, 64M, 1GiB, 500KB. K,
// M, G and T, with or without "iB", are powers of 1024 (as GNU coreutils
// and GOMEMLIMIT read them), KB, MB, GB and TB powers of 1000; case does
// not matter, nor does a space before the unit.
type Size int64

// sizeUnits are the units Size reads, lowercased.
var sizeUnits = map[string]int64{
	"": 1, "b": 1,
	"k": 1 << 10, "kib": 1 << 10, "kb": 1e3,
	"m": 1 << 20, "mib": 1 << 20, "mb": 1e6,
	"g": 1 << 30, "gib": 1 << 30, "gb": 1e9,
	"t": 1 << 40, "tib": 1 << 40, "tb": 1e12,
}

// errSize says what a size looks like.
var errSize = errors.New("want a whole number of bytes such as 1048576, 64MiB or 1GiB")

// ParseSize reads a Size.
func ParseSize(s string) (Size, error) {
	s = strings.TrimSpace(s)
	digits := len(s) - len(strings.TrimLeft(s, "0123456789"))
	if digits == 0 {
		if strings.HasPrefix(s, "-") {
			return 0, fmt.Errorf("a size cannot be negative: %w", errSize)
		}
		return 0, errSize
	}
	unit, ok := sizeUnits[strings.ToLower(strings.TrimSpace(s[digits:]))]
	if !ok {
		return 0, fmt.Errorf("unknown unit %q: %w", strings.TrimSpace(s[digits:]), errSize)
	}
	n, err := strconv.ParseInt(s[:digits], 10, 64)
	if err != nil || n > math.MaxInt64/unit {
		return 0, fmt.Errorf("%s is too large: %w", s, errSize)
	}
	return Size(n * unit), nil
}

// Set implements pflag.Value.
func (s *Size) Set(v string) error {
	n, err := ParseSize(v)
	if err != nil {
		return err
	}
	*s = n
	return nil
}

// String writes the size as Set reads it, in the largest binary unit that
// divides it: 64MiB, 1000.
func (s Size) String() string {
	for _, u := range []string{"TiB", "GiB", "MiB", "KiB"} {
		if n := sizeUnits[strings.ToLower(u)]; s >= Size(n) && int64(s)%n == 0 {
			return fmt.Sprintf("%d%s", int64(s)/n, u)
		}
	}
	return strconv.FormatInt(int64(s), 10)
}

// Type implements pflag.Value: the word help shows for the value.
func (s *Size) Type() string { return "size" }
