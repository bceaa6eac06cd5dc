package history

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

var dateLayouts = []string{time.RFC3339, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02 15:04", time.DateOnly}

var units = map[string]time.Duration{
	"second": time.Second, "minute": time.Minute, "hour": time.Hour,
	"day": 24 * time.Hour, "week": 7 * 24 * time.Hour,
	"month": 30 * 24 * time.Hour, "year": 365 * 24 * time.Hour,
}

// ParseDate reads a --since/--until value: an RFC 3339 time, a date
// (2006-01-02, local time), "yesterday", "N units ago" as git accepts it
// (a month is 30 days, a year 365), or a Go duration meaning that long ago
// (72h). With endOfDay, a bare date means the end of that day, so that
// --until 2026-01-31 includes the 31st.
func ParseDate(s string, now time.Time, endOfDay bool) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, layout := range dateLayouts {
		if t, err := time.ParseInLocation(layout, s, now.Location()); err == nil {
			if endOfDay && layout == time.DateOnly {
				t = t.AddDate(0, 0, 1).Add(-time.Nanosecond)
			}
			return t, nil
		}
	}
	switch strings.ToLower(s) {
	case "now":
		return now, nil
	case "today":
		y, m, d := now.Date()
		return time.Date(y, m, d, 0, 0, 0, 0, now.Location()), nil
	case "yesterday":
		y, m, d := now.AddDate(0, 0, -1).Date()
		return time.Date(y, m, d, 0, 0, 0, 0, now.Location()), nil
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	fields := strings.Fields(strings.ToLower(strings.ReplaceAll(s, ".", " ")))
	if len(fields) == 3 && fields[2] == "ago" || len(fields) == 2 {
		n, err := strconv.Atoi(fields[0])
		unit := strings.TrimSuffix(fields[1], "s")
		if d, ok := units[unit]; err == nil && ok && n >= 0 {
			return now.Add(-time.Duration(n) * d), nil
		}
	}
	return time.Time{}, fmt.Errorf("cannot read date %q. Try: 2026-01-31, 2026-01-31T15:04:05Z, \"2 weeks ago\" or 72h", s)
}
