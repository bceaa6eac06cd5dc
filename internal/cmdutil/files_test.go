package cmdutil

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func writeText(text string) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := io.WriteString(w, text)
		return err
	}
}

func TestWriteFileReplacesALinksTargetAndKeepsTheLink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "docs", "CHANGELOG.md")
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(target, []byte("old\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "CHANGELOG.md")
	if err := os.Symlink("docs/CHANGELOG.md", link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(link, nil, writeText("new\n")); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Lstat(link); err != nil || info.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced by a file: %v %v", info.Mode(), err)
	}
	got, _ := os.ReadFile(target)
	if string(got) != "new\n" {
		t.Errorf("target holds %q, want the new text", got)
	}
	if info, _ := os.Stat(target); info.Mode().Perm() != 0o640 {
		t.Errorf("target mode %v, want 0640 kept", info.Mode().Perm())
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, "*", ".*"))
	if len(leftovers) != 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
}

func TestWriteFileThroughADanglingLinkCreatesItsTarget(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "out.md")
	if err := os.Symlink("real.md", link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(link, nil, writeText("x")); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "real.md")); err != nil || string(got) != "x" {
		t.Errorf("real.md: %q %v", got, err)
	}
	if info, _ := os.Lstat(link); info.Mode()&os.ModeSymlink == 0 {
		t.Error("the dangling link was replaced")
	}
}

func TestWriteFileWritesThroughAFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	read := make(chan string)
	go func() {
		b, _ := os.ReadFile(fifo)
		read <- string(b)
	}()
	if err := WriteFile(fifo, nil, writeText("through the pipe\n")); err != nil {
		t.Fatal(err)
	}
	if got := <-read; got != "through the pipe\n" {
		t.Errorf("reader got %q", got)
	}
	if info, err := os.Lstat(fifo); err != nil || info.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO is now %v (%v)", info.Mode(), err)
	}
}

func TestWriteFileRefusesADirectory(t *testing.T) {
	err := WriteFile(t.TempDir(), nil, writeText("x"))
	if err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("got %v, want an error saying it is a directory", err)
	}
}

func TestCheckOutputsRefusesWhatTheRunDependsOn(t *testing.T) {
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	for _, name := range []string{"cache.db", "data.jsonl", "prompt.txt"} {
		if err := os.WriteFile(at(name), []byte("precious"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("cache.db", at("link.db")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(at("data.jsonl"), at("hard.jsonl")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(at("sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(at("fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	inputs := []NamedPath{{"the dataset", at("data.jsonl")}, {"--prompt", at("prompt.txt")}, {"--model-config", ""}}
	relative, err := filepath.Rel(mustGetwd(t), at("cache.db"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name    string
		outputs []NamedPath
		want    string // "" when the outputs are fine
	}{
		{"the database", []NamedPath{{"-o", at("cache.db")}}, "is the database"},
		{"the database by a relative path", []NamedPath{{"-o", relative}}, "is the database"},
		{"the database through a link", []NamedPath{{"--html", at("link.db")}}, "is the database"},
		{"the write-ahead log, not yet there", []NamedPath{{"-o", at("cache.db-wal")}}, "is the database"},
		{"the shared memory file", []NamedPath{{"--junit", at("cache.db-shm")}}, "is the database"},
		{"the dataset", []NamedPath{{"-o", at("data.jsonl")}}, "is the dataset"},
		{"the dataset by a hard link", []NamedPath{{"-o", at("hard.jsonl")}}, "is the dataset"},
		{"the prompt", []NamedPath{{"--junit", at("prompt.txt")}}, "is --prompt"},
		{"two outputs, one new file", []NamedPath{{"-o", at("r.xml")}, {"--junit", at("./sub/../r.xml")}}, "are the same file"},
		{"a directory", []NamedPath{{"-o", at("sub")}}, "is a directory"},
		{"a missing directory", []NamedPath{{"-o", at("nowhere/r.md")}}, "does not exist"},
		{"separate new files", []NamedPath{{"-o", at("a.md")}, {"--junit", at("a.xml")}, {"--html", ""}, {"-o", "-"}}, ""},
		{"a pipe, twice", []NamedPath{{"-o", at("fifo")}, {"--junit", at("fifo")}}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckOutputs(tt.outputs, at("cache.db"), inputs)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var ee *ExitError
			if !errors.As(err, &ee) || ee.Code != ExitUsage {
				t.Fatalf("got %v, want a usage error", err)
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "Try: ") {
				t.Errorf("error %q does not say %q and what to try", err, tt.want)
			}
		})
	}
}

func mustGetwd(t *testing.T) string {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}

// A path under /proc that does not exist is an error, not a panic.
func TestWriteFileToAMissingProcPath(t *testing.T) {
	if _, err := os.Stat("/proc/self"); err != nil {
		t.Skip("no /proc here")
	}
	if err := WriteFile("/proc/self/no-such-digest-file", nil, writeText("x")); err == nil {
		t.Error("wrote a file that cannot exist")
	}
}
