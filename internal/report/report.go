// Package report writes results in the formats people and machines read:
// one file per format behind the Reporter interface.
package report

import (
	"fmt"
	"github.com/digest-cli/digest/internal/forge"
	"io"
	"strings"
	"time"
)

// SkippedFile is a changed file whose diff was not sent, and why.
type SkippedFile struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Entry is one summarized commit.
type Entry struct {
	Repo   string `json:"repo"`
	RepoID string `json:"repo_id"`
	Commit string `json:"commit"`
	// Short is the commit's hash abbreviated as git abbreviates it in its
	// repository (7 digits at least, longer where needed: 10 in git.git);
	// machine formats carry the whole hash.
	Short   string    `json:"-"`
	Author  string    `json:"author"`
	Date    time.Time `json:"date"`
	Subject string    `json:"subject"`
	Summary string    `json:"summary"`
	// Type (feat, fix, ...; see committype.Types), Scope and Breaking
	// classify the change as release notes group it.
	Type     string `json:"type"`
	Scope    string `json:"scope"`
	Breaking bool   `json:"breaking"`
	// Version is the tag that first released the commit, "" while none
	// has; VersionDate is that tag's date.
	Version     string    `json:"version"`
	VersionDate time.Time `json:"-"`
	// URL is the commit's page on the forge its origin remote names.
	URL string `json:"url,omitempty"`
	// Forge links the references (#123) in the summary; zero: no links.
	Forge        forge.Forge   `json:"-"`
	Model        string        `json:"model"`
	Cached       bool          `json:"cached"`
	Truncated    bool          `json:"truncated"`
	DiffTokens   int           `json:"diff_tokens"`
	SkippedFiles []SkippedFile `json:"skipped_files"`
	InputTokens  int           `json:"input_tokens"`
	OutputTokens int           `json:"output_tokens"`
	CostUSD      float64       `json:"cost_usd"`
}

// Stats sums up a run. Timing stays out of the reports so that the same
// history always gives the same bytes.
type Stats struct {
	Repositories int `json:"repositories"`
	Commits      int `json:"commits"`
	Cached       int `json:"cached"`
	Summarized   int `json:"summarized"`
	Failed       int `json:"failed"`
	SkippedFiles int `json:"skipped_files"`
	// RedactedSecrets counts the secrets replaced by markers in what this
	// run sent.
	RedactedSecrets int     `json:"redacted_secrets"`
	InputTokens     int     `json:"input_tokens"`
	OutputTokens    int     `json:"output_tokens"`
	CostUSD         float64 `json:"cost_usd"`
}

// Changelog is the result of a summarize run.
type Changelog struct {
	Model   string
	Entries []Entry
	Stats   Stats
	// Highlights is nil unless they were asked for (--highlights); then it
	// holds those of each section that got any.
	Highlights []Highlights
}

// Highlights are the bullets a model wrote about one section of the
// release notes: a repository's Unreleased work (Version "") or a release.
type Highlights struct {
	Repo    string   `json:"repo"`
	RepoID  string   `json:"repo_id"`
	Version string   `json:"version"`
	Bullets []string `json:"bullets"`
}

// Reporter writes a changelog in one format.
type Reporter interface {
	Write(w io.Writer, c *Changelog) error
}

// Formats lists the names ForFormat accepts.
var Formats = []string{"markdown", "jsonl", "json"}

// ForFormat returns the reporter for a --format value.
func ForFormat(name string) (Reporter, error) {
	switch name {
	case "markdown", "md":
		return Markdown{}, nil
	case "jsonl":
		return JSONL{}, nil
	case "json":
		return JSON{}, nil
	}
	return nil, fmt.Errorf("unknown format %q. Try: one of %s", name, strings.Join(Formats, ", "))
}
