package sqlstore

import (
	"testing"
	"time"
)

// TestTimeArgBindsEachDialectsType: SQLite gets its text as it always
// had it (UTC, but for commits' RFC 3339 dates, which keep their zone),
// PostgreSQL a time cut to the microsecond.
func TestTimeArgBindsEachDialectsType(t *testing.T) {
	at := time.Date(2026, 12, 2, 7, 8, 9, 123456789, time.FixedZone("UTC+2", 2*3600))
	text := &DB{}
	for _, c := range []struct {
		layout string
		want   string
	}{
		{sortableTime, "2026-12-02T05:08:09.123456789Z"},
		{time.RFC3339Nano, "2026-12-02T05:08:09.123456789Z"},
		{time.RFC3339, "2026-12-02T07:08:09+02:00"},
	} {
		if got := text.timeArg(at, c.layout); got != c.want {
			t.Errorf("SQLite's timeArg(%s) = %v, want %s", c.layout, got, c.want)
		}
	}
	stamps := &DB{d: Dialect{Timestamps: true}}
	got, ok := stamps.timeArg(at, sortableTime).(time.Time)
	if want := time.Date(2026, 12, 2, 5, 8, 9, 123456000, time.UTC); !ok || !got.Equal(want) || got.Location() != time.UTC {
		t.Errorf("PostgreSQL's timeArg = %v, want %v in UTC", got, want)
	}
}

// TestDBTimeScan reads what each database gives back for a time column.
func TestDBTimeScan(t *testing.T) {
	local := time.Date(2026, 12, 2, 7, 8, 9, 0, time.FixedZone("UTC+2", 2*3600))
	for _, c := range []struct {
		in    any
		valid bool
		want  time.Time
		err   bool
	}{
		{nil, false, time.Time{}, false},
		{"", false, time.Time{}, false},
		{local, true, local, false},
		{"2026-12-02T05:08:09Z", true, local, false},
		{[]byte("2026-12-02T05:08:09.000000000Z"), true, local, false},
		{"2026-12-02T07:08:09+02:00", true, local, false},
		{"yesterday", false, time.Time{}, true},
		{int64(5), false, time.Time{}, true},
	} {
		var d dbTime
		if err := d.Scan(c.in); err != nil {
			t.Errorf("Scan(%#v) = %v, want nil: a bad time is for the reader to report", c.in, err)
		}
		if d.Valid != c.valid || !d.Time.Equal(c.want) || (d.Err != nil) != c.err {
			t.Errorf("Scan(%#v) = %+v, want valid %v at %v, error %v", c.in, d, c.valid, c.want, c.err)
		}
		if _, isTime := c.in.(time.Time); isTime && d.Time.Location() != time.UTC {
			t.Errorf("Scan(%v) kept zone %v, want UTC", c.in, d.Time.Location())
		}
	}
}

// FuzzDBTime: whatever text a time column holds, reading it never fails
// the read, and a time it accepts is the one SQLite's text says.
func FuzzDBTime(f *testing.F) {
	for _, s := range []string{"", "2026-12-02T05:08:09.123456789Z", "2026-12-02T07:08:09+02:00", "0001-01-01T00:00:00Z", "2026-13-45T99:00:00Z", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var d dbTime
		if err := d.Scan(s); err != nil {
			t.Fatalf("Scan(%q) = %v", s, err)
		}
		if d.Valid && d.Err != nil || !d.Valid && !d.Time.IsZero() {
			t.Fatalf("Scan(%q) = %+v: valid and an error, or a time that is not", s, d)
		}
		if d.Valid {
			want, err := time.Parse(time.RFC3339Nano, s)
			if err != nil || !want.Equal(d.Time) {
				t.Fatalf("Scan(%q) = %v, but time.Parse says %v, %v", s, d.Time, want, err)
			}
		}
	})
}
