package cmd

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
// reports.
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
