// Package changelog writes the release notes of a summarize run: the
// Markdown, JSON and JSONL formats behind the Reporter interface, the
// built-in layouts (github, keepachangelog, default) and Go templates
// over Notes, and --prepend's new sections above an existing changelog's.
// An eval run's reports are internal/evalreport's.
package changelog

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/digest-cli/digest/internal/forge"
)

// SkippedFile is a changed file whose diff was not sent, and why.
type SkippedFile struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Entry is one summarized commit: with --first-parent, one change as it
// was merged (a merge commit stands for its pull request).
type Entry struct {
	Repo   string `json:"repo"`
	RepoID string `json:"repo_id"`
	Commit string `json:"commit"`
	// Short is the commit's hash abbreviated as git abbreviates it in its
	// repository (7 digits at least, longer where needed: 10 in git.git);
	// machine formats carry the whole hash.
	Short  string `json:"-"`
	Author string `json:"author"`
	// AuthorEmail is the author's address (after .mailmap), Login their
	// forge login ("" when nothing names it), and Bot whether the author
	// is a bot (dependabot[bot]).
	AuthorEmail string    `json:"author_email"`
	Login       string    `json:"login"`
	Bot         bool      `json:"bot"`
	Date        time.Time `json:"date"`
	Subject     string    `json:"subject"`
	// Title is what the change is called: the commit's subject, or for a
	// merged pull request its title.
	Title string `json:"title"`
	// Summary is what release notes show: a sentence or two as a person
	// would write them. Details is the rest of the summary, what the
	// machine reads off the diff ("Changes 4 files ... (+237/-11):
	// modifies x.go (f)"); only the machine formats carry it.
	Summary string `json:"summary"`
	Details string `json:"details"`
	// Type (feat, fix, ...; see committype.Types), Scope and Breaking
	// classify the change as release notes group it.
	Type     string `json:"type"`
	Scope    string `json:"scope"`
	Breaking bool   `json:"breaking"`
	// Labels are the pull request's labels, from the forge's API (none
	// without one), and Category the heading a .github/release.yml files
	// the change under ("" for none: GitHub's "Other Changes").
	Labels   []string `json:"labels"`
	Category string   `json:"category"`
	// Merge is true for a merge commit, summarized from its diff against
	// its first parent (--first-parent).
	Merge bool `json:"merge"`
	// Version is the tag that first released the commit, "" while none
	// has; VersionDate is that tag's date.
	Version     string    `json:"version"`
	VersionDate time.Time `json:"-"`
	// URL is the commit's page on the forge its origin remote names.
	URL string `json:"url,omitempty"`
	// PR is the number of the pull or merge request that brought the
	// change ("" when none is known), and PRURL its page.
	PR    string `json:"pr"`
	PRURL string `json:"pr_url"`
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

// Person is someone whose commits a section holds: a contributor of a
// version, or a new one, with where they first contributed.
type Person struct {
	Name  string `json:"name"`
	Email string `json:"email"`
	Login string `json:"login"` // "" when nothing names it
	Bot   bool   `json:"bot"`
	// FirstPR and FirstPRURL are the pull request of their first commit in
	// the repository, FirstCommit and FirstURL that commit: the link of
	// "made their first contribution in". A version's contributors carry
	// none of them.
	FirstPR     string `json:"first_pr,omitempty"`
	FirstPRURL  string `json:"first_pr_url,omitempty"`
	FirstCommit string `json:"first_commit,omitempty"`
	FirstURL    string `json:"first_url,omitempty"`
}

// Handle is how release notes name the person: "@login" when the login
// is known (a bot's without its "[bot]", as GitHub writes @dependabot),
// else the name.
func (p Person) Handle() string {
	return handle(p.Login, p.Name)
}

// FirstContribution is the page of the person's first contribution: its
// pull request's, else its commit's, else "".
func (p Person) FirstContribution() string {
	if p.FirstPRURL != "" {
		return p.FirstPRURL
	}
	return p.FirstURL
}

func handle(login, name string) string {
	if login = strings.TrimSuffix(login, "[bot]"); login != "" {
		return "@" + login
	}
	return name
}

// VersionInfo is what the pipeline knows of a section beyond its
// commits, from the repository's whole history: the release before it,
// the forge's page comparing the two, and who first contributed in it.
type VersionInfo struct {
	Repo   string `json:"repo"`
	RepoID string `json:"repo_id"`
	// Tag is the section's version as its entries carry it: "" for
	// Unreleased, or the name --tag gives it.
	Tag string `json:"tag"`
	// PreviousTag is the matching tag before it in history, "" for the
	// first release.
	PreviousTag string `json:"previous_tag"`
	// CompareURL is the forge's page of the section's changes: PREV...TAG,
	// PREV...HEAD for Unreleased (or a --tag not yet created), a first
	// release's history page (forge.Commits); "" without a forge.
	CompareURL string `json:"compare_url"`
	// NewContributors are those whose first commit in the repository lies
	// in this section, each with that commit and its pull request.
	NewContributors []Person `json:"new_contributors"`
	// Categories are the headings of the repository's .github/release.yml
	// in its order: entries whose Category is one of them come in this
	// order; nil: in order of first appearance.
	Categories []string `json:"categories,omitempty"`
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
	// Versions holds, per repository and section, what the history tells
	// beyond the entries (previous tag, compare page, new contributors);
	// a section without one has none of them.
	Versions []VersionInfo
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
