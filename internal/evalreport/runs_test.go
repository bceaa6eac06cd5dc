package evalreport_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/evalreport"
)

func TestWriteRunsInEveryFormat(t *testing.T) {
	done := time.Date(2026, 5, 3, 10, 0, 0, 0, time.UTC)
	runs := []evalreport.Run{
		{ID: "r1", Dataset: "qa|\x1b]0;x\x07.jsonl", Models: []string{"offline", "openai:m"}, Created: done.Add(-time.Hour), Finished: &done},
		{ID: "r2", Dataset: "<b>.jsonl", Models: []string{"offline"}, Created: done},
	}
	for _, format := range evalreport.RunFormats {
		var b bytes.Buffer
		if err := evalreport.WriteRuns(&b, format, runs); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		out := b.String()
		if !strings.Contains(out, "r1") || !strings.Contains(out, "r2") {
			t.Errorf("%s: a run is missing:\n%s", format, out)
		}
		if format != "json" && format != "jsonl" && format != "csv" && strings.ContainsAny(out, "\x1b\x07") {
			t.Errorf("%s: a terminal escape got through:\n%q", format, out)
		}
		if format == "table" && !strings.Contains(out, "incomplete") {
			t.Errorf("table: r2 is not incomplete:\n%s", out)
		}
	}
	if err := evalreport.WriteRuns(&bytes.Buffer{}, "xml", runs); err == nil {
		t.Error("xml accepted")
	}
}
