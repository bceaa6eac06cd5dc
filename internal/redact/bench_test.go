package redact

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// diffOfThisModule is a realistic diff to redact: the module's own Go
// source, about a megabyte, laid out as git diff hunks of context, added and
// removed lines, as a cut diff reaches Redact.
func diffOfThisModule(tb testing.TB) string {
	paths, err := filepath.Glob("../*/*.go")
	if err != nil || len(paths) == 0 {
		tb.Fatalf("no Go source under ..: %v", err)
	}
	slices.Sort(paths)
	var b strings.Builder
	for _, path := range paths {
		src, err := os.ReadFile(path)
		if err != nil {
			tb.Fatal(err)
		}
		name := filepath.ToSlash(path[len("../"):])
		fmt.Fprintf(&b, "diff --git a/internal/%s b/internal/%s\nindex 3f78685..e69de29 100644\n--- a/internal/%s\n+++ b/internal/%s\n", name, name, name, name)
		lines := strings.Split(string(src), "\n")
		for i, line := range lines {
			if i%40 == 0 {
				fmt.Fprintf(&b, "@@ -%d,40 +%d,40 @@ func hunk%d() {\n", i+1, i+1, i)
			}
			prefix := " "
			switch i % 7 {
			case 2, 5:
				prefix = "+"
			case 3:
				prefix = "-"
			}
			b.WriteString(prefix + line + "\n")
		}
	}
	return b.String()
}

// commitSized cuts text at line ends into parts of about the size digest
// redacts at a time: one commit's diff cut to the default 4000 tokens.
func commitSized(text string) []string {
	const size = 16 << 10
	var parts []string
	for len(text) > size {
		end := size + strings.IndexByte(text[size:], '\n') + 1
		if end == size {
			break
		}
		parts = append(parts, text[:end])
		text = text[end:]
	}
	return append(parts, text)
}

// BenchmarkRedact reports the throughput of redacting a megabyte of diffs,
// one commit's part at a time.
func BenchmarkRedact(b *testing.B) {
	text := diffOfThisModule(b)
	parts := commitSized(text)
	r, err := New()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for b.Loop() {
		for _, part := range parts {
			r.Redact(part)
		}
	}
}
