// Package approxidate reads the dates people give git: absolute times in
// the usual layouts and relative ones such as "2 weeks ago", with git's
// arithmetic (seconds to weeks are exact durations, months and years move
// the calendar).
package approxidate

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Form says how a date was written, for the few forms whose meaning a
// caller picks: git reads a date alone as that day at the current time of
// day and "yesterday" as 24 hours ago, which a selection by reflog must
// either copy or refuse, while --since and --until mean whole days.
type Form int

const (
	// Exact is a time, or an offset from now.
	Exact Form = iota
	// DayOnly is a date without a time of day, read as its start (local).
	DayOnly
	// DayWord is "today" or "yesterday", read as the start of that day.
	DayWord
)

var exactLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05",
	"2006-01-02 15:04:05",
	"2006-01-02 15:04:05 -0700",
	"2006-01-02 15:04:05 -07:00",
	"2006-01-02T15:04:05 -0700",
	"2006-01-02 15:04",
	time.RFC1123Z,                    // Mon, 02 Jan 2006 15:04:05 -0700, as in mail
	"Mon, 2 Jan 2006 15:04:05 -0700", // the same with one-digit days
	"Mon Jan 2 15:04:05 2006 -0700",  // git log's default
	"Mon Jan 2 15:04:05 2006",
}

// units holds git's exact units; months and years move the calendar.
var units = map[string]time.Duration{
	"second": time.Second, "minute": time.Minute, "hour": time.Hour,
	"day": 24 * time.Hour, "week": 7 * 24 * time.Hour,
}

// Parse reads s relative to now (whose location is the local zone): an RFC
// 3339 or ISO time, a date alone (its start), a mail or git log date, a
// Unix time as @SECONDS, "now", "today", "yesterday", "N units ago" (also
// "N.units.ago" and several pairs, "1 day 2 hours ago"), or a Go duration
// meaning that long ago (72h). Anything else is an error: git reads text
// it does not understand as now, a silent wrong answer digest does not give.
func Parse(s string, now time.Time) (time.Time, Form, error) {
	s = strings.TrimSpace(s)
	for _, layout := range exactLayouts {
		if t, err := time.ParseInLocation(layout, s, now.Location()); err == nil {
			return t, Exact, nil
		}
	}
	if t, err := time.ParseInLocation(time.DateOnly, s, now.Location()); err == nil {
		return t, DayOnly, nil
	}
	if secs, ok := strings.CutPrefix(s, "@"); ok {
		if n, err := strconv.ParseInt(secs, 10, 64); err == nil && n >= 0 {
			return time.Unix(n, 0).In(now.Location()), Exact, nil
		}
	}
	switch strings.ToLower(s) {
	case "now":
		return now, Exact, nil
	case "today":
		y, m, d := now.Date()
		return time.Date(y, m, d, 0, 0, 0, 0, now.Location()), DayWord, nil
	case "yesterday":
		y, m, d := now.AddDate(0, 0, -1).Date()
		return time.Date(y, m, d, 0, 0, 0, 0, now.Location()), DayWord, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), Exact, nil
	}
	if t, ok := ago(s, now); ok {
		return t, Exact, nil
	}
	return time.Time{}, Exact, fmt.Errorf("cannot read date %q. Try: 2026-01-31, 2026-01-31T15:04:05Z, \"2 weeks ago\" or 72h", s)
}

// ago reads "N unit [N unit...] [ago]", with dots or spaces between words.
func ago(s string, now time.Time) (time.Time, bool) {
	fields := strings.Fields(strings.ToLower(strings.ReplaceAll(s, ".", " ")))
	if len(fields) > 0 && fields[len(fields)-1] == "ago" {
		fields = fields[:len(fields)-1]
	}
	if len(fields) == 0 || len(fields)%2 != 0 {
		return time.Time{}, false
	}
	t := now
	for i := 0; i < len(fields); i += 2 {
		n, err := strconv.Atoi(fields[i])
		if err != nil || n < 0 || n > 1_000_000 {
			return time.Time{}, false
		}
		switch unit := strings.TrimSuffix(fields[i+1], "s"); unit {
		case "month":
			t = t.AddDate(0, -n, 0)
		case "year":
			t = t.AddDate(-n, 0, 0)
		default:
			d, ok := units[unit]
			if !ok {
				return time.Time{}, false
			}
			t = t.Add(-time.Duration(n) * d)
		}
	}
	return t, true
}
