package eval

import (
	"bytes"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/evalreport"
)

// TestItemsSharingAnIDAreReportedByLine: two dataset lines with one id
// are two items; the report read back from the store knows the ids are
// shared, so that in JUnit each test case carries its line and a CI test
// view does not merge them into one test run twice.
func TestItemsSharingAnIDAreReportedByLine(t *testing.T) {
	r := newTestRun(t)
	r.models = r.models[:1]
	data := `{"id": "same", "prompt": "What is 1+1?", "expected": "2"}` + "\n" + `{"id": "same", "prompt": "What is 2+2?", "expected": "5"}` + "\n" +
		`{"id": "other", "prompt": "What is 3+3?", "expected": "6"}` + "\n"
	_, e := r.run(t, data, Options{})
	if !e.SharedIDs || e.Models[0].Items != 3 || e.Models[0].Passed != 2 {
		t.Fatalf("shared ids %v, model %+v: want 3 items, 2 passed, the ids shared", e.SharedIDs, e.Models[0])
	}
	var b bytes.Buffer
	if err := evalreport.WriteJUnit(&b, e); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`name="same (line 1)"`, `name="same (line 2)"`, `name="other (line 3)"`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("JUnit lacks %s:\n%s", want, b.String())
		}
	}
}
