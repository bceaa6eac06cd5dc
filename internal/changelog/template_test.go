package changelog

// The limits a --template runs under. What spins for good (a loop of a
// billion turns) is tested on the real binary, in cmd's
// template_process_test.go: here a template that never returns waits on a
// channel the test closes, so that no goroutine outlives its test.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"text/template"
	"time"
)

func TestBudgetWriterFailsTheWritePastTheLimit(t *testing.T) {
	var out bytes.Buffer
	b := &budgetWriter{w: &out, max: 10, clock: func() time.Duration { return 0 }}
	for _, p := range []string{"0123", "4567"} {
		if n, err := b.Write([]byte(p)); n != len(p) || err != nil {
			t.Fatalf("Write(%q) = %d, %v under the limit", p, n, err)
		}
	}
	n, err := b.Write([]byte("89x"))
	var budget *BudgetError
	if n != 0 || !errors.As(err, &budget) || budget.Flag != TemplateMaxBytesFlag || budget.Limit != "10 bytes" {
		t.Fatalf("Write past the limit = %d, %v; want 0 and a BudgetError naming %s and 10 bytes", n, err, TemplateMaxBytesFlag)
	}
	if n, err := b.Write([]byte("89")); n != 2 || err != nil {
		t.Errorf("Write up to the limit exactly = %d, %v", n, err)
	}
	if out.String() != "0123456789" {
		t.Errorf("passed on %q, want the 10 bytes the limit allows", out.String())
	}
	if _, err := b.Write([]byte("!")); !errors.As(err, &budget) {
		t.Errorf("a byte past a full budget: %v", err)
	}

	unlimited := &budgetWriter{w: &out, clock: func() time.Duration { return 0 }}
	if _, err := unlimited.Write(make([]byte, 1<<20)); err != nil {
		t.Errorf("max 0 is no limit: %v", err)
	}
}

func TestBudgetWriterFailsEveryWriteOnceStopped(t *testing.T) {
	var out bytes.Buffer
	b := &budgetWriter{w: &out, clock: func() time.Duration { return 0 }}
	b.stop()
	if n, err := b.Write([]byte("late")); n != 0 || !errors.Is(err, errAbandoned) || out.Len() != 0 {
		t.Errorf("Write after stop = %d, %v, %q passed on", n, err, out.String())
	}
}

// clockWriter is a reader that keeps its writer waiting an hour, on a
// clock the test moves by hand.
type clockWriter struct {
	now    *time.Duration
	during func() // called in the middle of each write
}

func (c clockWriter) Write(p []byte) (int, error) {
	*c.now += time.Hour
	c.during()
	return len(p), nil
}

func TestTheTimeLimitDoesNotCountWaitsOnTheReader(t *testing.T) {
	var now time.Duration
	var b *budgetWriter
	var inWrite time.Duration
	b = &budgetWriter{clock: func() time.Duration { return now },
		w: clockWriter{now: &now, during: func() { inWrite = b.used() }}}
	now = 2 * time.Second // the template works
	if _, err := b.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if inWrite != 2*time.Second {
		t.Errorf("during a write that has waited an hour, used = %s, want the 2s before it", inWrite)
	}
	now += 3 * time.Second
	if got := b.used(); got != 5*time.Second {
		t.Errorf("used = %s after 5s of work and an hour's wait, want 5s", got)
	}
}

// blocking is a template whose run waits in wait until release is closed,
// as one spinning would, without a goroutine left spinning after the test.
func blocking(t *testing.T, limits TemplateLimits) Template {
	t.Helper()
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	tmpl := template.Must(template.New("t").Funcs(TemplateFuncs).Funcs(template.FuncMap{
		"wait": func() string { <-release; return "" },
	}).Parse("before {{wait}} after"))
	return Template{T: tmpl, Limits: limits}
}

func TestTheTimeLimitStopsATemplateThatDoesNotReturn(t *testing.T) {
	limits := TemplateLimits{Timeout: time.Nanosecond, MaxBytes: 1 << 20}
	var budget *BudgetError
	err := blocking(t, limits).WriteContext(context.Background(), &bytes.Buffer{}, &Changelog{Model: "offline"})
	if !errors.As(err, &budget) || budget.Flag != TemplateTimeoutFlag || budget.Sample {
		t.Fatalf("WriteContext = %v, want the time limit's BudgetError", err)
	}
	if want := "--template ran longer than 1ns (--template-timeout)"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	err = blocking(t, limits).Check(context.Background())
	if !errors.As(err, &budget) || budget.Flag != TemplateTimeoutFlag || !budget.Sample {
		t.Fatalf("Check = %v, want the time limit's BudgetError on the sample", err)
	}
	for _, want := range []string{"--template ran longer than 1ns (--template-timeout) on sample notes", "Try: ", "a higher --template-timeout"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

func TestACanceledContextStopsATemplateThatDoesNotReturn(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := blocking(t, TemplateLimits{}).Check(ctx); err != context.Canceled {
		t.Errorf("Check = %v, want context.Canceled as it is", err)
	}
	if err := blocking(t, DefaultTemplateLimits).WriteContext(ctx, &bytes.Buffer{}, &Changelog{Model: "offline"}); err != context.Canceled {
		t.Errorf("WriteContext = %v, want context.Canceled as it is", err)
	}
}

func parse(t *testing.T, text string, limits TemplateLimits) Template {
	t.Helper()
	tmpl, err := template.New("t").Funcs(TemplateFuncs).Option("missingkey=error").Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	return Template{T: tmpl, Limits: limits}
}

func TestTheOutputLimit(t *testing.T) {
	const text = `{{range 1000}}0123456789{{end}}`
	var out bytes.Buffer
	err := parse(t, text, TemplateLimits{MaxBytes: 10_000}).WriteContext(context.Background(), &out, &Changelog{})
	if err != nil || out.Len() != 10_000 {
		t.Fatalf("10,000 bytes under a limit of 10,000: %v, %d written", err, out.Len())
	}
	out.Reset()
	err = parse(t, text, TemplateLimits{MaxBytes: 9_999}).WriteContext(context.Background(), &out, &Changelog{})
	var budget *BudgetError
	if !errors.As(err, &budget) || err.Error() != "--template wrote more than 9999 bytes (--template-max-bytes)" {
		t.Fatalf("10,000 bytes under a limit of 9,999: %v", err)
	}
	if out.Len() > 9_999 {
		t.Errorf("%d bytes passed on, past the limit", out.Len())
	}

	err = parse(t, text, TemplateLimits{MaxBytes: 1 << 10}).Check(context.Background())
	for _, want := range []string{"--template wrote more than 1 KiB (--template-max-bytes) on sample notes of one commit, before anything was sent. Try: ", "a higher --template-max-bytes"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Check = %v, want it to say %q", err, want)
		}
	}
}

// TestTemplateFunctionsCannotBuildPastTheOutputLimit: text kept in a
// variable is never written, but it fills the memory all the same.
func TestTemplateFunctionsCannotBuildPastTheOutputLimit(t *testing.T) {
	// 1 MiB of c is under the limit, and each function makes more of it.
	const mebibyte = `{{$s := %q}}{{range 20}}{{$s = printf "%%s%%s" $s $s}}{{end}}`
	for _, tt := range []struct{ text, fn string }{
		{`{{$s := "x"}}{{range 64}}{{$s = printf "%s%s" $s $s}}{{end}}`, "printf"},
		{fmt.Sprintf(mebibyte, "x") + `{{print $s "!"}}`, "print"},
		{fmt.Sprintf(mebibyte, "x") + `{{println $s}}`, "println"},
		{fmt.Sprintf(mebibyte, "<") + `{{html $s}}`, "html"},
		{fmt.Sprintf(mebibyte, "<") + `{{js $s}}`, "js"},
		{fmt.Sprintf(mebibyte, "<") + `{{urlquery $s}}`, "urlquery"},
		{fmt.Sprintf(mebibyte, "*") + `{{md $s}}`, "md"},
		{fmt.Sprintf(mebibyte, "`") + `{{code $s}}`, "code"},
		{fmt.Sprintf(mebibyte, "\x1b") + `{{line $s}}`, "line"},
	} {
		err := parse(t, tt.text, TemplateLimits{MaxBytes: 1 << 20}).Check(context.Background())
		var budget *BudgetError
		if !errors.As(err, &budget) || budget.Func != tt.fn || !strings.Contains(err.Error(), "built a string of more than 1 MiB in "+tt.fn+" (--template-max-bytes)") {
			t.Errorf("%s: %v, want the output limit to stop %s", tt.text, err, tt.fn)
		}
	}
	err := parse(t, `{{$s := "x"}}{{range 64}}{{$s = printf "%s%s" $s $s}}{{end}}`, TemplateLimits{MaxBytes: 1 << 20}).Write(&bytes.Buffer{}, &Changelog{})
	if want := "--template built a string of more than 1 MiB in printf (--template-max-bytes)"; err == nil || err.Error() != want {
		t.Errorf("Write = %v, want %q alone", err, want)
	}
	// Under the limit, the functions are text/template's and digest's.
	var out bytes.Buffer
	err = parse(t, `{{printf "%03d" 7}} {{print "a" 1}} {{html "<"}} {{js "'"}} {{urlquery "a b"}} {{md "*"}} {{code "x"}} {{line "a\nb"}}`,
		DefaultTemplateLimits).WriteContext(context.Background(), &out, &Changelog{})
	if want := `007 a1 &lt; \' a+b \* ` + "`x`" + ` a b`; err != nil || out.String() != want {
		t.Errorf("got %q, %v; want %q", out.String(), err, want)
	}
}

func TestTheLimitsChangeNoOutput(t *testing.T) {
	c := &Changelog{Model: "offline", Entries: []Entry{
		{Repo: "api", RepoID: "1", Commit: strings.Repeat("a", 40), Short: "aaaaaaa", Subject: "feat: x", Summary: "Adds *x*.", Type: "feat"},
		{Repo: "api", RepoID: "1", Commit: strings.Repeat("b", 40), Short: "bbbbbbb", Subject: "fix: y", Summary: "Fixes y.", Type: "fix", Version: "v1.0.0"},
	}}
	const text = `{{range .Repos}}{{range .Versions}}## {{.Title}}
{{range .Groups}}### {{.Title}}
{{range .Entries}}- {{entry .}} {{printf "%q" .Subject}} {{md .Summary}}
{{end}}{{end}}{{end}}{{end}}`
	var limited, unlimited bytes.Buffer
	if err := parse(t, text, DefaultTemplateLimits).WriteContext(context.Background(), &limited, c); err != nil {
		t.Fatal(err)
	}
	if err := parse(t, text, TemplateLimits{}).Write(&unlimited, c); err != nil {
		t.Fatal(err)
	}
	if limited.String() != unlimited.String() || !strings.Contains(limited.String(), `"feat: x" Adds \*x\*.`) {
		t.Errorf("under the default limits:\n%s\nwithout:\n%s", limited.String(), unlimited.String())
	}
}

func TestFormatSize(t *testing.T) {
	for n, want := range map[int64]string{1: "1 bytes", 1000: "1000 bytes", 1024: "1 KiB", 64 << 20: "64 MiB", 3 << 30: "3 GiB", 1<<20 + 1: "1048577 bytes", 1 << 40: "1 TiB"} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
}
