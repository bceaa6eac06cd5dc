package anthropic

import (
	"net/http"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/provider"
)

var now = time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)

func TestParseResetTime(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"2024-03-01T12:00:30Z", 30 * time.Second, true},
		{"2024-03-01T13:00:30+01:00", 30 * time.Second, true},
		{"2024-03-01T12:00:00.5Z", 500 * time.Millisecond, true},
		{" 2024-03-01T12:01:00Z ", time.Minute, true},
		{"2015-10-21T07:28:00Z", 0, true},
		{"", 0, false},
		{"6m0s", 0, false},
		{"2024-03-01T12:00:30", 0, false},
	}
	for _, tt := range tests {
		got, ok := parseResetTime(tt.in, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseResetTime(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestParseLimits(t *testing.T) {
	if l := parseLimits(http.Header{"Request-Id": {"req_1"}}, now); l != nil {
		t.Errorf("parseLimits without rate-limit headers = %+v, want nil", l)
	}
	// Output tokens alone say nothing Limits can hold.
	h := http.Header{}
	h.Set("anthropic-ratelimit-output-tokens-remaining", "100")
	if l := parseLimits(h, now); l != nil {
		t.Errorf("parseLimits with only output-tokens = %+v, want nil", l)
	}
	h.Set("anthropic-ratelimit-requests-reset", "2024-03-01T12:00:06Z")
	h.Set("anthropic-ratelimit-requests-remaining", "garbage")
	want := provider.NoLimits()
	want.RequestsReset = 6 * time.Second
	if l := parseLimits(h, now); l == nil || *l != want {
		t.Errorf("parseLimits = %+v, want %+v", l, want)
	}
}

func FuzzParseResetTime(f *testing.F) {
	f.Add("2024-03-01T12:00:30Z")
	f.Fuzz(func(t *testing.T, s string) {
		d, ok := parseResetTime(s, now)
		if d < 0 || !ok && d != 0 {
			t.Fatalf("parseResetTime(%q) = %v, %v", s, d, ok)
		}
	})
}
