package dataset

import (
	"fmt"
	"strings"
	"testing"
)

func TestParseScale(t *testing.T) {
	for in, want := range map[string]Scale{
		"1-5": {1, 5}, "0-1": {0, 1}, "0-10": {0, 10}, "1-10": {1, 10}, "0-100": {0, 100}, " 2 - 7 ": {2, 7},
	} {
		got, err := ParseScale(in)
		if err != nil || got != want {
			t.Errorf("ParseScale(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "5", "5-1", "3-3", "0-101", "-1-5", "1-5-7", "a-b", "1.5-5", "+1-5", "01-5", "1 5", "1–5"} {
		if got, err := ParseScale(in); err == nil {
			t.Errorf("ParseScale(%q) = %v, want an error", in, got)
		}
	}
	s := Scale{1, 5}
	if s.Midpoint() != 3 || s.Normalize(4) != 0.75 || s.Normalize(1) != 0 || s.Normalize(5) != 1 || !s.Contains(3.5) || s.Contains(0) || s.Contains(5.01) {
		t.Errorf("1-5: midpoint %v, normalize(4) %v", s.Midpoint(), s.Normalize(4))
	}
}

// FuzzParseScale: whatever the text, a scale read is within 0-100, low
// below high, and reads back the same from its String.
func FuzzParseScale(f *testing.F) {
	for _, s := range []string{"1-5", "0-10", " 0 - 1", "100-0", "-", "9999999999999999999-1", "1-5-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sc, err := ParseScale(s)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error on two lines: %q", err)
			}
			return
		}
		if sc.Lo < 0 || sc.Hi > MaxScale || sc.Lo >= sc.Hi {
			t.Errorf("%q read as %v", s, sc)
		}
		if again, err := ParseScale(sc.String()); err != nil || again != sc {
			t.Errorf("%q: %v reads back as %v, %v", s, sc, again, err)
		}
		if sc.Normalize(float64(sc.Lo)) != 0 || sc.Normalize(float64(sc.Hi)) != 1 {
			t.Errorf("%v normalises its ends to %v and %v", sc, sc.Normalize(float64(sc.Lo)), sc.Normalize(float64(sc.Hi)))
		}
	})
}

// A judge's scale in digest's JSON Lines, and promptfoo's graded judges
// read there: g-eval 0-10 at 0.7, llm-rubric with a threshold 0-1.
func TestAssertionScale(t *testing.T) {
	as, err := parseAsserts([]byte(`[{"type": "judge", "value": "fair", "scale": "1-5"},
		{"type": "judge", "value": "kind", "scale": "0-10", "threshold": 0.8},
		{"type": "g-eval", "value": "clear"},
		{"type": "g-eval", "value": "clear", "threshold": 0.5},
		{"type": "llm-rubric", "value": "polite", "threshold": 0.6},
		{"type": "llm-rubric", "value": "polite"},
		{"type": "judge", "value": "plain"}]`), nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range as {
		th := "-"
		if a.Threshold != nil {
			th = fmt.Sprint(*a.Threshold)
		}
		got = append(got, a.Type+" "+a.Scale+" "+th)
	}
	want := "judge 1-5 -|judge 0-10 0.8|judge 0-10 0.7|judge 0-10 0.5|judge 0-1 0.6|judge  -|judge  -"
	if strings.Join(got, "|") != want {
		t.Errorf("got  %s\nwant %s", strings.Join(got, "|"), want)
	}
	for raw, want := range map[string]string{
		`[{"type": "judge", "scale": "5-1"}]`:         `"assert"[0]: "scale": scale "5-1": it must run from a low to a higher`,
		`[{"type": "judge", "scale": 5}]`:             `"assert"[0]: "scale" must be a string such as "1-5"; got a number`,
		`[{"type": "exact", "scale": "1-5"}]`:         `"assert"[0]: "scale" grades a judge assertion only, not exact`,
		`[{"type": "not-judge", "scale": "1-5"}]`:     `"assert"[0]: "scale": a graded judge has no not- form`,
		`[{"type": "not-g-eval", "value": "x"}]`:      `"assert"[0]: not-g-eval has no digest equivalent`,
		`[{"type": "judge", "scale": "1-5", "x": 1}]`: ``,
	} {
		_, err := parseAsserts([]byte(raw), nil)
		if want == "" {
			if err != nil {
				t.Errorf("%s: %v", raw, err)
			}
			continue
		}
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: %v, want %q", raw, err, want)
		}
	}
}
