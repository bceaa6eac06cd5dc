package changelog

import (
	"regexp"
	"slices"
	"strings"

	"github.com/digest-cli/digest/internal/committype"
)

// The kinds of change of Keep a Changelog 1.1.0
// (https://keepachangelog.com/en/1.1.0/), in the order it lists them.
const (
	Added      = "Added"
	Changed    = "Changed"
	Deprecated = "Deprecated"
	Removed    = "Removed"
	Fixed      = "Fixed"
	Security   = "Security"
)

// KeepAChangelogOrder is the order of a version's kinds of change.
var KeepAChangelogOrder = []string{Added, Changed, Deprecated, Removed, Fixed, Security}

// KeepAChangelogSection is the kind of change of Keep a Changelog an entry
// is filed under, or "" for one the format leaves out, since it keeps
// "notable changes" only. The first rule that matches decides; "the
// title" is the entry's title (its subject when it has none) without a
// Conventional prefix, the author's own words: the summary, a model's,
// is not read.
//
//	rule                                                                section
//	type ci, test or style, and not breaking                            left out
//	scope or label "security", a CVE or GHSA id or vulnerab* in the
//	  title, or a fix whose title says "security"                       Security
//	the title starts with remove, drop or delete (any form) and the
//	  change is breaking, a feat, or the title says support or
//	  deprecated ("Drop support for Go 1.20")                           Removed
//	the title starts with deprecate (any form) or says "as deprecated"  Deprecated
//	breaking (the entry says so in bold)                                Changed
//	type feat                                                           Added
//	type fix                                                            Fixed
//	anything else: perf, refactor, docs, build (dependency bumps),
//	  chore, revert, other                                              Changed
func KeepAChangelogSection(e Entry) string {
	if !e.Breaking && (e.Type == "ci" || e.Type == "test" || e.Type == "style") {
		return ""
	}
	t := plainTitle(e)
	lower := strings.ToLower(t)
	switch {
	case isSecurity(e, t, lower):
		return Security
	case isRemoval(e, t, lower):
		return Removed
	case strings.Contains(lower, "deprecat") && deprecation.MatchString(t):
		return Deprecated
	case e.Breaking:
		return Changed
	case e.Type == "feat":
		return Added
	case e.Type == "fix":
		return Fixed
	}
	return Changed
}

var (
	advisory     = regexp.MustCompile(`(?i)\b(CVE-[0-9]{4}-[0-9]+|GHSA(-[0-9a-z]{4}){3}|vulnerab)`)
	securityWord = regexp.MustCompile(`(?i)\bsecurity\b`)
	removalVerb  = regexp.MustCompile(`(?i)^(remov(e|es|ed|ing)|drop(s|ped|ping)?|delet(e|es|ed|ing))\b`)
	removalWhat  = regexp.MustCompile(`(?i)\b(support|deprecated)\b`)
	deprecation  = regexp.MustCompile(`(?i)^deprecat(e|es|ed|ing)\b|\bas deprecated\b`)
)

// plainTitle is the entry's title without its Conventional prefix.
func plainTitle(e Entry) string {
	t := e.Title
	if t == "" {
		t = e.Subject
	}
	return committype.Description(t)
}

// isSecurity, isRemoval: the rules above, on the plain title t and its
// lower case, which spares the regular expressions most titles.
func isSecurity(e Entry, t, lower string) bool {
	if strings.EqualFold(e.Scope, "security") || slices.ContainsFunc(e.Labels, func(l string) bool { return strings.EqualFold(l, "security") }) {
		return true
	}
	if (strings.Contains(lower, "cve-") || strings.Contains(lower, "ghsa-") || strings.Contains(lower, "vulnerab")) && advisory.MatchString(t) {
		return true
	}
	return e.Type == "fix" && strings.Contains(lower, "security") && securityWord.MatchString(t)
}

func isRemoval(e Entry, t, lower string) bool {
	if !strings.HasPrefix(lower, "remov") && !strings.HasPrefix(lower, "drop") && !strings.HasPrefix(lower, "delet") {
		return false
	}
	return removalVerb.MatchString(t) && (e.Breaking || e.Type == "feat" || removalWhat.MatchString(t))
}

// KeepAChangelog is the section's entries as Keep a Changelog groups them:
// a group per kind of change that has any, in KeepAChangelogOrder, each
// in the walk's order, bumps of one dependency as one entry; entries the
// format leaves out (KeepAChangelogSection) are in no group.
func (v VersionNotes) KeepAChangelog() []GroupNotes {
	bySection := groupEntries(v.Entries, KeepAChangelogSection)
	var out []GroupNotes
	for _, title := range KeepAChangelogOrder {
		for _, g := range bySection {
			if g.key == title {
				out = append(out, GroupNotes{Title: title, Entries: collapseBumps(g.entries)})
			}
		}
	}
	return out
}
