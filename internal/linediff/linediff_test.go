package linediff

import (
	"fmt"
	"strings"
	"testing"
)

// TestHugeFileSplitsAroundTheChange: one changed line in a big file costs
// work around the change only, not on every line of the file.
func TestHugeFileSplitsAroundTheChange(t *testing.T) {
	var b strings.Builder
	for i := range 200000 {
		fmt.Fprintf(&b, "\tline %d\n", i)
	}
	old := b.String()
	new := strings.Replace(old, "\tline 123456\n", "\tline 123456 changed\n", 1)
	d := diffLines(old, new)
	for _, f := range []*lineFile{&d.old, &d.new} {
		if f.hi-f.lo > 64 || len(f.ids) > 1 {
			t.Errorf("split out lines %d to %d of %d (interned %d)", f.lo, f.hi, f.nrec, len(f.ids))
		}
	}
	if cs := Lines(old, new).Changes(); len(cs) != 1 || cs[0] != (Change{I1: 123456, I2: 123456, N1: 1, N2: 1}) {
		t.Errorf("changes %+v, want line 123456 replaced", cs)
	}
	if a, r := Count(old, new); a != 1 || r != 1 {
		t.Errorf("Count = +%d -%d, want +1 -1", a, r)
	}
}

// TestSidesReadTheTexts: a side's lines, starts and length read its text.
func TestSidesReadTheTexts(t *testing.T) {
	d := Lines("a\nb\nc", "a\nc\nd\n")
	old, new := d.Old(), d.New()
	if old.Len() != 3 || new.Len() != 3 || old.Text() != "a\nb\nc" {
		t.Fatalf("lengths %d %d, text %q", old.Len(), new.Len(), old.Text())
	}
	for i, want := range []string{"a\n", "b\n", "c"} {
		if got := old.Line(i); got != want {
			t.Errorf("old line %d = %q, want %q", i, got, want)
		}
	}
	if old.Start(2) != 4 || new.Start(1) != 2 {
		t.Errorf("starts %d %d, want 4 2", old.Start(2), new.Start(1))
	}
}
