package cmdutil

import (
	"math"
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]Size{
		"0": 0, "1048576": 1 << 20, "64MiB": 64 << 20, "64M": 64 << 20, "64mib": 64 << 20, "64 MiB": 64 << 20,
		"1GiB": 1 << 30, "1g": 1 << 30, "512KiB": 512 << 10, "512k": 512 << 10, "500KB": 500_000, "2MB": 2_000_000,
		"1GB": 1_000_000_000, "1TiB": 1 << 40, "10B": 10, " 7 ": 7, "8388607TiB": 8388607 << 40,
	} {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for in, says := range map[string]string{
		"":                     "want a whole number of bytes",
		"lots":                 "want a whole number of bytes",
		"-1":                   "cannot be negative",
		"-64MiB":               "cannot be negative",
		"1.5GiB":               `unknown unit ".5GiB"`,
		"64 mebibyte":          `unknown unit "mebibyte"`,
		"8388608TiB":           "too large",
		"99999999999999999999": "too large",
	} {
		_, err := ParseSize(in)
		if err == nil || !strings.Contains(err.Error(), says) || !strings.Contains(err.Error(), "such as 1048576, 64MiB or 1GiB") {
			t.Errorf("ParseSize(%q) = %v, want an error saying %q and what a size looks like", in, err, says)
		}
	}
}

// TestSizeStringIsReadBack: help shows the default as Set reads it.
func TestSizeStringIsReadBack(t *testing.T) {
	for _, s := range []Size{0, 1, 1000, 1 << 10, 64 << 20, 3 << 30, 1<<20 + 1, 5 << 40, math.MaxInt64} {
		var back Size
		if err := back.Set(s.String()); err != nil || back != s {
			t.Errorf("Size(%d).String() = %q, read back as %d, %v", int64(s), s.String(), back, err)
		}
	}
	if got := Size(64 << 20).String(); got != "64MiB" {
		t.Errorf("64 MiB shows as %q", got)
	}
}
