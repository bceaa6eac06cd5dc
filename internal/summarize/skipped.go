package summarize

import (
	"strings"

	"github.com/digest-cli/digest/internal/changelog"
)

// The store keeps skipped files as "reason\tpath" strings: paths can hold
// anything but a NUL, reasons are ours and never hold a tab.
func encodeSkipped(files []changelog.SkippedFile) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.Reason + "\t" + f.Path
	}
	return out
}

func decodeSkipped(stored []string) []changelog.SkippedFile {
	out := make([]changelog.SkippedFile, 0, len(stored))
	for _, s := range stored {
		reason, path, _ := strings.Cut(s, "\t")
		out = append(out, changelog.SkippedFile{Path: path, Reason: reason})
	}
	return out
}
