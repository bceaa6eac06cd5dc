package changelog_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/changelog"
)

// handWritten is a changelog kept by hand and by tools over the years:
// CRLF lines, a header with prose, a heading that is no version and a
// fenced block holding what looks like one, an Unreleased section on top,
// odd spacing, prose and reference definitions at the end, no final
// newline.
const handWritten = "# Changelog\r\n\r\nEverything that changed, by hand and by digest.\r\n\r\n## Notes\r\n\r\n" +
	"```markdown\r\n## v0.0.1 (2020-01-01)\r\n```\r\n\r\n" +
	"## [Unreleased]\r\n\r\n- A note by hand, soon released.\r\n\r\n" +
	"## [1.1.0] - 2026-04-01\r\n\r\n### Added\r\n\r\n- Hand-written   entry  with  odd  spacing\t\r\n\r\n" +
	"## 1.0.0 - 2026-01-01\r\n\r\nSome trailing prose.\r\n\r\n" +
	"[unreleased]: https://github.com/acme/cli/compare/v1.1.0...HEAD\r\n[1.1.0]: https://github.com/acme/cli/compare/v1.0.0...v1.1.0\r\n<!-- end -->"

// digestWritten is a changelog digest's Markdown format wrote, edited.
const digestWritten = "# Changelog\n\n## Unreleased\n\n### Features\n\n- Old unreleased work. (`abcdef0`)\n\n" +
	"## v1.1.0 (2026-04-01)\n\n### Features\n\n- The first version, edited by hand. (`1111111`)\n\n#### v9.9.9 is no section\n\n" +
	"_Summarized by `offline` with digest._\n"

func TestPrependGolden(t *testing.T) {
	for _, tt := range []struct {
		file, existing, template string
	}{
		{"prepend-keepachangelog.golden", handWritten, "keepachangelog"},
		{"prepend-default.golden", digestWritten, "default"},
		{"prepend-github.golden", digestWritten, "github"},
	} {
		t.Run(tt.file, func(t *testing.T) {
			notes := builtin(t, tt.template, "", "", releases())
			got, err := changelog.Prepend([]byte(tt.existing), notes)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tt.file, got)
			// The file from its v1.1.0 on is kept byte for byte, and the new
			// notes' v1.1.0 is not written twice.
			from := strings.Index(tt.existing, "## [1.1.0]")
			if from < 0 {
				from = strings.Index(tt.existing, "## v1.1.0")
			}
			if !bytes.HasSuffix(got, []byte(tt.existing[from:])) || !bytes.HasPrefix(got, []byte(tt.existing[:strings.Index(tt.existing, "Unreleased")-3])) {
				t.Errorf("the file's header and sections are not kept as they were:\n%q", got)
			}
			if n := bytes.Count(got, []byte("\n## [1.1.0]")) + bytes.Count(got, []byte("\n## v1.1.0")); n != 1 {
				t.Errorf("v1.1.0 is %d sections:\n%s", n, got)
			}
			if bytes.Contains(got, []byte("soon released")) || bytes.Contains(got, []byte("Old unreleased work")) {
				t.Errorf("the file's Unreleased section was kept:\n%s", got)
			}
			// A rerun with the same notes changes nothing.
			again, err := changelog.Prepend(got, notes)
			if err != nil || !bytes.Equal(again, got) {
				t.Errorf("a rerun changed the file (%v):\n--- first ---\n%s--- rerun ---\n%s", err, got, again)
			}
		})
	}
}

func TestPrependEdges(t *testing.T) {
	notes := builtin(t, "keepachangelog", "", "", releases())
	for _, tt := range []struct {
		name, existing, prefix, suffix string
	}{
		{"an empty file gets the notes whole", "", string(notes), ""},
		{"a blank file too", "\n  \n", string(notes), ""},
		{"a file of prose: the sections after it, a blank line between", "Release notes live here",
			"Release notes live here\n\n## [Unreleased](https://github.com/acme/cli/compare/v1.2.0...HEAD)\n\n### Added\n",
			"## [1.1.0](https://github.com/acme/cli/commits/v1.1.0) - 2026-04-01\n\n### Added\n\n- The first version.\n\n### Fixed\n\n- Handles empty input.\n"},
		{"a file whose versions are all in the notes loses only its Unreleased",
			"# Log\n\n## Unreleased\n\nold\n\n## v1.2.0 (2026-05-02)\n\nmine\n\n## [1.1.0]\n\nmine too\n",
			"# Log\n\n## [Unreleased](https://github.com/acme/cli/compare/v1.2.0...HEAD)\n\n### Added\n",
			"receive ([#29](https://github.com/acme/cli/pull/29)).\n\n## v1.2.0 (2026-05-02)\n\nmine\n\n## [1.1.0]\n\nmine too\n"},
		{"a file of Unreleased alone is replaced after its header", "# Log\n\n## Unreleased\n\nold\n",
			"# Log\n\n## [Unreleased](https://github.com/acme/cli/compare/v1.2.0...HEAD)\n", "- Handles empty input.\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := changelog.Prepend([]byte(tt.existing), notes)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(got), tt.prefix) || !strings.HasSuffix(string(got), tt.suffix) {
				t.Errorf("got:\n%s", got)
			}
		})
	}

	// A file that starts at a later release than the notes: only what is
	// newer than its top goes above it, never an older release.
	later := "# Log\n\n## v1.2.0 (2026-05-02)\n\nmine\n"
	got, err := changelog.Prepend([]byte(later), notes)
	if err != nil || !strings.HasSuffix(string(got), "\n\n## v1.2.0 (2026-05-02)\n\nmine\n") ||
		!strings.Contains(string(got), "## [Unreleased]") || strings.Contains(string(got), "1.1.0") {
		t.Errorf("an older release went above the file's newest: %v\n%s", err, got)
	}

	// Notes with nothing in them leave the file as it is.
	empty := builtin(t, "keepachangelog", "", "", &changelog.Changelog{Model: "offline"})
	if got, err := changelog.Prepend([]byte(handWritten), empty); err != nil || string(got) != handWritten {
		t.Errorf("empty notes: %v\n%q", err, got)
	}
	// Several repositories' notes are refused, with what to do.
	several := builtin(t, "default", "", "", twoRepositories())
	if _, err := changelog.Prepend([]byte(digestWritten), several); err == nil || !strings.Contains(err.Error(), "Try: one repository per --prepend file") {
		t.Errorf("several repositories: %v", err)
	}
}
