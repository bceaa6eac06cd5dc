package history

import (
	"strings"
	"testing"
)

// TestCheckPathspecRefusesWhatGitCannotRead: before any repository is
// opened, a spec of attribute or unknown magic, of glob and literal magic
// at once, of magic left open or of a glob that does not compile is
// refused, naming the path; a run's usual specs pass
// (cmd.TestErrorsAndExitCodes checks the command's usage error).
func TestCheckPathspecRefusesWhatGitCannotRead(t *testing.T) {
	for _, bad := range []string{":(attr:diff)x", ":(nonsense)x", ":(glob,literal)x", ":(exclude", "[a-"} {
		if err := CheckPathspec([]string{"docs", bad}); err == nil || !strings.Contains(err.Error(), "path") {
			t.Errorf("%q: %v, want an error naming the path", bad, err)
		}
	}
	if err := CheckPathspec([]string{"docs", ":!*.md", ":(glob)a/**/b.go", ":(literal)a*b", ":/x"}); err != nil {
		t.Errorf("usual specs refused: %v", err)
	}
}
