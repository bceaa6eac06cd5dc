package approxidate_test

import (
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/approxidate"
)

func TestParse(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		in   string
		want time.Time
		form approxidate.Form
	}{
		{"2026-01-31", time.Date(2026, 1, 31, 0, 0, 0, 0, time.UTC), approxidate.DayOnly},
		{"2026-01-31T15:04:05Z", time.Date(2026, 1, 31, 15, 4, 5, 0, time.UTC), approxidate.Exact},
		{"2026-01-31 15:04:05 +0200", time.Date(2026, 1, 31, 13, 4, 5, 0, time.UTC), approxidate.Exact},
		{"Sat, 31 Jan 2026 15:04:05 -0100", time.Date(2026, 1, 31, 16, 4, 5, 0, time.UTC), approxidate.Exact},
		{"Sat Jan 31 15:04:05 2026 +0000", time.Date(2026, 1, 31, 15, 4, 5, 0, time.UTC), approxidate.Exact},
		{"@1769871845", time.Unix(1769871845, 0), approxidate.Exact},
		{"2 weeks ago", now.Add(-14 * 24 * time.Hour), approxidate.Exact},
		{"3.days.ago", now.Add(-72 * time.Hour), approxidate.Exact},
		{"1 day 2 hours ago", now.Add(-26 * time.Hour), approxidate.Exact},
		{"1 hour", now.Add(-time.Hour), approxidate.Exact},
		// Months and years move the calendar, as git's do.
		{"1 month ago", time.Date(2026, 10, 30, 12, 0, 0, 0, time.UTC), approxidate.Exact},
		{"2.years.ago", time.Date(2024, 11, 30, 12, 0, 0, 0, time.UTC), approxidate.Exact},
		{"72h", now.Add(-72 * time.Hour), approxidate.Exact},
		{"now", now, approxidate.Exact},
		{"yesterday", time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC), approxidate.DayWord},
		{"today", time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), approxidate.DayWord},
	} {
		got, form, err := approxidate.Parse(tt.in, now)
		if err != nil || !got.Equal(tt.want) || form != tt.form {
			t.Errorf("Parse(%q) = %v, %v, %v; want %v, %v", tt.in, got, form, err, tt.want, tt.form)
		}
	}
	// git reads these as now; digest refuses them.
	for _, bad := range []string{"", "soon", "-5h", "2 fortnights ago", "2026-13-01", "1 day 2", "@-5", "last friday"} {
		if _, _, err := approxidate.Parse(bad, now); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"2026-01-31", "2 weeks ago", "@12", "1.day.2.hours.ago", "Mon Jan 2 15:04:05 2006 -0700", "72h"} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		got, _, err := approxidate.Parse(s, now)
		if err == nil && got.IsZero() {
			t.Fatalf("Parse(%q) gave the zero time", s)
		}
	})
}
