package changelog

import (
	"bytes"
	"strings"
	"testing"
)

func TestVersionHeadings(t *testing.T) {
	for line, want := range map[string]string{
		"## Unreleased":                      "unreleased",
		"## [Unreleased]":                    "unreleased",
		"## [unreleased](https://x/compare)": "unreleased",
		"## v1.2.0 (2026-11-30)":             "1.2.0",
		"## [1.2.0] - 2026-11-30":            "1.2.0",
		"## [1.2.0](https://x) - 2026-11-30": "1.2.0",
		"## [v1.2.0]":                        "1.2.0",
		"## 1.2.0":                           "1.2.0",
		"## V2 - 2026-01-01 ##":              "2",
		"   ## v1.0.0\r":                     "1.0.0",
		"## release-7 (2026-01-02)":          "release-7",
		"## [nightly] - 2026-01-02":          "nightly",
		"## v1\\_2 (2026-01-02)":             "1_2",
		// Not versions: prose headings, other levels, code.
		"## Notes":                "",
		"## [Docs](docs.md)":      "",
		"### v1.2.0 (2026-11-30)": "",
		"# v1.2.0":                "",
		"##v1.2.0":                "",
		"    ## v1.2.0":           "",
		"## ":                     "",
	} {
		got, ok := headingKey(strings.TrimSuffix(line, "\r"), 2)
		if got != want || ok != (want != "") {
			t.Errorf("%q: %q, %v; want %q", line, got, ok, want)
		}
	}
	doc := "## v3\n```\n## v2\n````\n## v1\n~~~~\n```\n## v0\n"
	secs, open := scanSections([]byte(doc), 2)
	// ```` closes ```; ``` does not close ~~~~, which runs to the end.
	if len(secs) != 2 || secs[0].key != "3" || secs[1].key != "1" || !open {
		t.Errorf("fenced headings: %+v, open %v", secs, open)
	}
	if _, err := Prepend([]byte("# Log\n\n## v1\n"), []byte("## v2\n\n```\ncode\n")); err == nil || !strings.Contains(err.Error(), "Try:") {
		t.Errorf("notes ending in an open fence: %v", err)
	}
}

// FuzzPrepend: Prepend never panics; when it writes, the file's header
// starts the output, the file from its first released section on ends it,
// byte for byte, and those sections are still sections there.
func FuzzPrepend(f *testing.F) {
	f.Add([]byte("# Changelog\n\n## Unreleased\n\nold\n\n## v1.0.0 (2026-01-01)\n\nx\n"), []byte("# Changelog\n\n## v1.1.0 (2026-02-01)\n\n- y\n\n_Summarized by `offline` with digest._\n"))
	f.Add([]byte("# Changelog\r\n\r\n## [1.0.0] - 2026-01-01\r\n\r\n[1.0.0]: https://x\r\n"), []byte("# Changelog\n\n## [Unreleased]\n\n### Added\n\n- z\n\n## [1.0.0] - 2026-01-01\n\n[unreleased]: https://u\n[1.0.0]: https://v\n"))
	f.Add([]byte("prose only"), []byte("## v1\n"))
	f.Add([]byte("```\n## v1\n"), []byte("## v2\n~~~\n~~~\n"))
	f.Add([]byte(""), []byte("## api\n\n### v1.0.0 (2026-01-01)\n"))
	f.Fuzz(func(t *testing.T, existing, notes []byte) {
		out, err := Prepend(existing, notes)
		if err != nil {
			if !strings.Contains(err.Error(), "Try: ") {
				t.Errorf("error without a way out: %v", err)
			}
			return
		}
		fresh, _ := scanSections(notes, 2)
		switch {
		case len(fresh) == 0:
			if !bytes.Equal(out, existing) {
				t.Fatalf("notes without sections changed the file")
			}
			return
		case len(bytes.TrimSpace(existing)) == 0:
			if !bytes.Equal(out, notes) {
				t.Fatalf("a blank file did not get the notes whole")
			}
			return
		}
		header, tail, kept := splitExisting(existing)
		if !bytes.HasPrefix(out, existing[:header]) {
			t.Fatalf("the header is not kept:\n%q\n%q", existing[:header], out)
		}
		if !bytes.HasSuffix(out, existing[tail:]) {
			t.Fatalf("the sections are not kept:\n%q\n%q", existing[tail:], out)
		}
		again, _ := scanSections(out, 2)
		for _, s := range again {
			delete(kept, s.key)
		}
		if len(kept) > 0 {
			t.Fatalf("sections %v of the file are no longer sections:\n%q", kept, out)
		}
	})
}
