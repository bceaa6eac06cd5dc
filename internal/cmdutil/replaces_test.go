package cmdutil

import (
	"os"
	"path/filepath"
	"testing"
)

// TestReplacesIsWhatWriteFileRenamesIntoPlace: a failed write leaves
// these as they were; the others hold what came before the failure.
func TestReplacesIsWhatWriteFileRenamesIntoPlace(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "CHANGELOG.md")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.md")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]bool{
		file: true, link: true, filepath.Join(dir, "new.md"): true,
		"": false, "-": false, "/dev/null": false, "/dev/stdout": false,
	} {
		if got := Replaces(path); got != want {
			t.Errorf("Replaces(%q) = %v, want %v", path, got, want)
		}
	}
}
