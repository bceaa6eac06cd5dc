package openai

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/provider"
)

func TestParseReset(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"1s", time.Second, true},
		{"6m0s", 6 * time.Minute, true},
		{"12ms", 12 * time.Millisecond, true},
		{"2m59.56s", 2*time.Minute + 59560*time.Millisecond, true},
		{"1h2m3s", time.Hour + 2*time.Minute + 3*time.Second, true},
		{"30", 30 * time.Second, true},
		{"0.5", 500 * time.Millisecond, true},
		{"0", 0, true},
		{" 7.66s ", 7660 * time.Millisecond, true},
		{"", 0, false},
		{"-1s", 0, false},
		{"-3", 0, false},
		{"soon", 0, false},
		{"Inf", 0, false},
		{"NaN", 0, false},
		{"1e400", 0, false},
		{"9300000000", 0, false},
		{"1d", 0, false},
	}
	for _, tt := range tests {
		got, ok := parseReset(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseReset(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestParseLimitsPartial(t *testing.T) {
	if l := parseLimits(http.Header{"X-Request-Id": {"req_1"}}); l != nil {
		t.Errorf("parseLimits without rate-limit headers = %+v, want nil", l)
	}
	h := http.Header{}
	h.Set("x-ratelimit-remaining-tokens", "1000")
	h.Set("x-ratelimit-limit-requests", "lots")
	h.Set("x-ratelimit-reset-tokens", "bogus")
	want := provider.NoLimits()
	want.TokensRemaining = 1000
	if l := parseLimits(h); l == nil || *l != want {
		t.Errorf("parseLimits = %+v, want %+v", l, want)
	}
}

func FuzzParseReset(f *testing.F) {
	f.Add("1s")
	f.Add("6m0s")
	f.Fuzz(func(t *testing.T, s string) {
		d, ok := parseReset(s)
		if d < 0 || !ok && d != 0 {
			t.Fatalf("parseReset(%q) = %v, %v", s, d, ok)
		}
		// Whatever Go reads as a non-negative duration is read the same.
		if want, err := time.ParseDuration(strings.TrimSpace(s)); err == nil && want >= 0 && (!ok || d != want) {
			t.Fatalf("parseReset(%q) = %v, %v; time.ParseDuration says %v", s, d, ok, want)
		}
	})
}
