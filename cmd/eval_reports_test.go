package cmd

// The reports eval writes beside its output: JUnit, step summaries, -o.

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/fakeprovider"
)

// TestEvalStoppedBeforeAnyResultWritesNoEmptyReports: a run stopped by a
// fatal error before any result was stored (a refused key on the first
// request) is dropped from the store; its reports would be empty ones
// with no run id and a JUnit of 0 tests and 0 failures, which a CI test
// view shows as a pass. It writes none, and its error says nothing of
// reports. The run's drop is eval's TestRunStoppedBeforeAnyResultIsDropped.
func TestEvalStoppedBeforeAnyResultWritesNoEmptyReports(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{APIKey: "sk-right"})
	h := newHarness(t)
	h.env["OPENAI_API_KEY"] = "sk-wrong"
	dir := t.TempDir()
	h.env["GITHUB_STEP_SUMMARY"] = filepath.Join(dir, "summary.md")
	res := h.run(context.Background(), "eval", sums(t), "--models", "openai:strong", "--base-url", srv.OpenAIBaseURL(),
		"-f", "json", "-o", filepath.Join(dir, "report.json"), "--junit", filepath.Join(dir, "junit.xml"))
	oneLineError(t, res, 1, "HTTP 401", "OPENAI_API_KEY")
	if strings.Contains(res.errOut, "the reports hold") {
		t.Errorf("the error speaks of reports of a run that stored nothing: %s", res.errOut)
	}
	for _, name := range []string{"summary.md", "junit.xml", "report.json"} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
			t.Errorf("%s written for a run that stored no result:\n%s", name, b)
		}
	}
	if srv.Stats().Unauthorized == 0 {
		t.Errorf("no request was refused: the test did not stop the run as meant")
	}
}

// TestJUnitKeepsItemsSharingAnIDApart: two dataset lines with one id are
// two items; in JUnit each test case carries its line, so a CI test view
// does not merge them into one test run twice.
func TestJUnitKeepsItemsSharingAnIDApart(t *testing.T) {
	h := newHarness(t)
	data := writeDataset(t, `{"id": "same", "prompt": "Say yes\nAnswer: yes", "expected": "yes"}`,
		`{"id": "same", "prompt": "Say no\nAnswer: maybe", "expected": "no"}`, `{"id": "other", "prompt": "x\nAnswer: x", "expected": "x"}`)
	junit := filepath.Join(t.TempDir(), "junit.xml")
	res := h.run(context.Background(), "eval", data, "--models", "offline", "-f", "json", "--junit", junit)
	if res.code != 1 && res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.errOut)
	}
	b, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`name="same (line 1)"`, `name="same (line 2)"`, `name="other (line 3)"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JUnit lacks %s:\n%s", want, b)
		}
	}
}
