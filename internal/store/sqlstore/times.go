package sqlstore

import (
	"fmt"
	"time"
)

// timeArg is how a time is bound to a statement: in SQLite, text in
// layout, as every time column there has always held (a layout of
// sortableTime or RFC3339Nano is written in UTC, RFC3339 in t's own zone,
// as commits' dates are); in PostgreSQL, whose time columns are
// timestamptz, the time itself, cut to the microsecond that type keeps,
// so that every way pgx may send it (binary, or text through a pooler)
// stores the same instant.
func (s *DB) timeArg(t time.Time, layout string) any {
	if s.d.Timestamps {
		return t.UTC().Truncate(time.Microsecond)
	}
	if layout != time.RFC3339 {
		t = t.UTC()
	}
	return t.Format(layout)
}

// dbTime reads a time column of either kind: SQLite's text (RFC 3339,
// any precision), or the time.Time a PostgreSQL timestamptz arrives as;
// NULL leaves it zero with Valid false. A text that is no time leaves it
// zero too, with Err saying so, for the readers that report it: a
// malformed time never fails a whole read.
type dbTime struct {
	Time  time.Time
	Valid bool
	Err   error
}

// Scan implements sql.Scanner.
func (d *dbTime) Scan(v any) error {
	*d = dbTime{}
	switch v := v.(type) {
	case nil:
		return nil
	case time.Time:
		d.Time, d.Valid = v.UTC(), true
	case string:
		d.parse(v)
	case []byte:
		d.parse(string(v))
	default:
		d.Err = fmt.Errorf("a time column holds a %T", v)
	}
	return nil
}

func (d *dbTime) parse(text string) {
	if text == "" {
		return
	}
	t, err := time.Parse(time.RFC3339Nano, text)
	if err != nil {
		d.Err = fmt.Errorf("unreadable time %q: %w", text, err)
		return
	}
	d.Time, d.Valid = t, true
}
