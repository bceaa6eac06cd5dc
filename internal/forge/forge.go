// Package forge turns a repository's remote URL into the web pages release
// notes link to: a commit, the pull or merge request or issue a message
// names as #123 (or !123 on GitLab), and a release's pages: the comparison
// with the release before, and a tag's files and history.
package forge

import (
	"net/url"
	"regexp"
	"strings"
)

// Kind is a family of forges that share their URL layout.
type Kind string

// The forges whose layouts digest knows.
const (
	GitHub    Kind = "github"
	GitLab    Kind = "gitlab"
	Bitbucket Kind = "bitbucket"
	Gitea     Kind = "gitea" // Gitea, Forgejo, Codeberg
)

// Forge is a repository's home on the web.
type Forge struct {
	Kind Kind
	// Base is the repository's page, https://host/owner/name, without
	// credentials, a port or .git.
	Base string
}

// Parse reads a remote URL in the forms git accepts (https://,
// ssh://git@host/path, git@host:path) and returns the repository's page
// when the host is a forge digest knows: github.com, gitlab.com,
// bitbucket.org, codeberg.org, gitea.com, or a host whose name says it
// runs GitLab, Gitea or Forgejo (gitlab.example.com). ok is false for
// anything else, local paths included: no link is better than a wrong one.
func Parse(remote string) (Forge, bool) {
	host, path, ok := split(strings.TrimSpace(remote))
	if !ok {
		return Forge{}, false
	}
	host = strings.ToLower(host)
	path = strings.TrimSuffix(strings.Trim(path, "/"), ".git")
	if path == "" || strings.Contains(path, "..") || strings.Count(path, "/") < 1 {
		return Forge{}, false
	}
	kind, ok := kindOf(host)
	if !ok {
		return Forge{}, false
	}
	if kind != GitLab && strings.Count(path, "/") != 1 {
		return Forge{}, false // only GitLab nests groups
	}
	return Forge{Kind: kind, Base: "https://" + host + "/" + path}, true
}

// split finds the host and path of a URL or of scp-like syntax.
func split(remote string) (host, path string, ok bool) {
	if strings.Contains(remote, "://") {
		u, err := url.Parse(remote)
		if err != nil || u.Hostname() == "" {
			return "", "", false
		}
		switch u.Scheme {
		case "https", "http", "ssh", "git", "git+ssh", "ssh+git":
		default:
			return "", "", false
		}
		return u.Hostname(), u.Path, true
	}
	// git@host:owner/name.git: a colon before any slash.
	at := strings.LastIndexByte(remote[:max(0, strings.IndexByte(remote, ':'))], '@')
	colon := strings.IndexByte(remote, ':')
	slash := strings.IndexByte(remote, '/')
	if colon <= 0 || slash >= 0 && slash < colon {
		return "", "", false
	}
	return remote[at+1 : colon], remote[colon+1:], true
}

func kindOf(host string) (Kind, bool) {
	switch host {
	case "github.com", "www.github.com":
		return GitHub, true
	case "gitlab.com":
		return GitLab, true
	case "bitbucket.org":
		return Bitbucket, true
	case "codeberg.org", "gitea.com":
		return Gitea, true
	}
	first, _, _ := strings.Cut(host, ".")
	switch {
	case strings.Contains(first, "gitlab"):
		return GitLab, true
	case strings.Contains(first, "gitea"), strings.Contains(first, "forgejo"):
		return Gitea, true
	}
	return "", false
}

// Commit is a commit's page.
func (f Forge) Commit(hash string) string {
	switch f.Kind {
	case GitLab:
		return f.Base + "/-/commit/" + hash
	case Bitbucket:
		return f.Base + "/commits/" + hash
	}
	return f.Base + "/commit/" + hash
}

// Ref is the page of #N or !N: the pull or merge request (GitHub and
// Gitea send a pull request's number to its page either way), or a GitLab
// issue for #N. ok is false for a sigil the forge does not use.
func (f Forge) Ref(sigil byte, number string) (string, bool) {
	switch {
	case f.Kind == GitLab && sigil == '!':
		return f.Base + "/-/merge_requests/" + number, true
	case f.Kind == GitLab && sigil == '#':
		return f.Base + "/-/issues/" + number, true
	case sigil != '#':
		return "", false
	case f.Kind == GitHub:
		return f.Base + "/pull/" + number, true
	case f.Kind == Bitbucket:
		return f.Base + "/pull-requests/" + number, true
	}
	return f.Base + "/issues/" + number, true
}

// refs finds #123 and !123 where they stand as references: after a space,
// an opening bracket or the start, before a word's end.
var refs = regexp.MustCompile(`(^|[\s(\[{,;])([#!])([0-9]{1,9})\b`)

// Link rewrites the references in text, already escaped Markdown, as
// links; escape makes a link's text. A forge with no Kind links nothing.
func (f Forge) Link(text string) string {
	if f.Kind == "" {
		return text
	}
	return refs.ReplaceAllStringFunc(text, func(m string) string {
		sub := refs.FindStringSubmatch(m)
		url, ok := f.Ref(sub[2][0], sub[3])
		if !ok {
			return m
		}
		return sub[1] + "[" + escapeSigil(sub[2]) + sub[3] + "](" + url + ")"
	})
}

// escapeSigil keeps ! from starting an image before the bracket.
func escapeSigil(s string) string {
	if s == "!" {
		return `\!`
	}
	return s
}

// Compare is the page of the changes from one revision to another, a
// release's "Full Changelog": the commits from..to and their diff. to may
// be HEAD, for the work no tag has released yet. A forge with no Kind
// gives "".
func (f Forge) Compare(from, to string) string {
	a, b := escapeRef(from), escapeRef(to)
	switch f.Kind {
	case "":
		return ""
	case GitLab:
		return f.Base + "/-/compare/" + a + "..." + b
	case Bitbucket:
		// Bitbucket Cloud names the newer revision first, the two apart by
		// a carriage return (%0D); #diff opens the diff rather than the
		// commits.
		return f.Base + "/branches/compare/" + b + "%0D" + a + "#diff"
	}
	return f.Base + "/compare/" + a + "..." + b
}

// Tree is the page of a revision's files: a tag's, for a release.
func (f Forge) Tree(ref string) string {
	r := escapeRef(ref)
	switch f.Kind {
	case "":
		return ""
	case GitLab:
		return f.Base + "/-/tree/" + r
	case Bitbucket:
		return f.Base + "/src/" + r + "/"
	case Gitea:
		return f.Base + "/src/tag/" + r
	}
	return f.Base + "/tree/" + r
}

// Commits is the page of a tag's history, what GitHub's generated notes
// link as the "Full Changelog" of a first release, which has no release
// to compare with.
func (f Forge) Commits(tag string) string {
	r := escapeRef(tag)
	switch f.Kind {
	case "":
		return ""
	case GitLab:
		return f.Base + "/-/commits/" + r
	case Bitbucket, Gitea:
		return f.Base + "/commits/tag/" + r
	}
	return f.Base + "/commits/" + r
}

// escapeRef makes a ref name one piece of a URL's path: each of its
// slash-separated parts escaped (a tag may hold #, %, parentheses or
// letters of any script), the slashes kept, as the forges read
// release/1.0.
func escapeRef(ref string) string {
	parts := strings.Split(ref, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return strings.Join(parts, "/")
}
