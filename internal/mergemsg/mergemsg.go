// Package mergemsg reads the commit messages forges write when they merge
// a pull or merge request, so that release notes can list one entry per
// merged change the way the forges' own generated notes do: the request's
// number, its title and the branch it came from.
package mergemsg

import "strings"

// PR is the pull or merge request a commit message says the commit merged.
type PR struct {
	// Number is the request's number, decimal digits without a sign or
	// leading zero.
	Number string
	// Sigil is how the forge writes a mention of the request: '#' on
	// GitHub, Bitbucket and Gitea, '!' on GitLab, Azure DevOps, and Gitea
	// with an external issue tracker.
	Sigil byte
	// Title is the request's title, "" when the message does not carry it
	// (a GitHub merge with an empty body, Bitbucket Server's old form).
	Title string
	// Branch is the branch the request merged, "" when the message does
	// not name it (squash merges, Azure DevOps). GitHub's "owner/branch"
	// gives "branch", with the owner in Owner.
	Branch string
	// Owner is the owner of the repository the branch lives in, as GitHub
	// ("from owner/branch") and Gitea ("from owner/repo:branch") write it:
	// the author of a request from a fork, the repository's own owner for
	// a branch of the repository itself. "" when the message does not say.
	Owner string
	// Squash is true for the subject GitHub and Gitea write for a squash
	// merge, the title with the number after it: "Title (#123)". GitHub
	// writes the same subject for a merge commit when the repository asks
	// for the title as its message, and a commit pushed by hand may end so
	// too; nothing in the message tells these apart.
	Squash bool
}

// Limits that keep Parse bounded on messages of any size.
const (
	// maxSubject is the longest subject read. Forges cap titles (GitHub at
	// 256 characters, Gitea 255, Azure DevOps 400), so a longer subject is
	// no forge's merge message.
	maxSubject = 4096
	// maxNumber is the most digits a request number may have.
	maxNumber = 10
)

// Parse reads a merge or squash message in one of the forms forges write:
//
//   - GitHub merge: "Merge pull request #123 from owner/branch", the title
//     on the body's first line;
//   - GitHub and Gitea squash: "Title (#123)", the number in the last
//     parentheses at the end of the subject, so that `Revert "x (#1)" (#2)`
//     is #2 titled `Revert "x (#1)"`; Gitea writes "(!123)" when the
//     repository uses an external tracker;
//   - GitLab: "Merge branch 'feature' into 'main'", the title on the
//     body's first line and the number on the line "See merge request
//     group/project!42" (or "!42" in GitLab before 9.0); a message with a
//     different subject that ends in that line is titled by its subject;
//   - Bitbucket Cloud: "Merged in feature/x (pull request #12)", the title
//     on the body's first line;
//   - Bitbucket Server and Data Center: "Merge pull request #12 in
//     PROJ/repo from feature/x to main", and since 7.0 "Pull request #12:
//     Title" over a line "Merge in PROJ/repo from feature/x to main";
//   - Gitea and Forgejo: "Merge pull request 'Title' (#7) from branch into
//     main" (from "owner/repo:branch" for a fork);
//   - Azure DevOps: "Merged PR 42: Title".
//
// A body's first line is no title when it lists merged commits ("* ..."),
// is a trailer ("Signed-off-by: ...") or GitLab's "See merge request".
// ok is false for every other message, git's own "Merge branch 'x'"
// included: a merge of a branch is no request, and its topic name is not a
// title. Parse does not copy the message and reads it at most once: a
// subject over 4096 bytes is no forge's and is not read further, and the
// body is searched for GitLab's line from its end.
func Parse(message string) (PR, bool) {
	head := message
	if len(head) > maxSubject+2 {
		head = head[:maxSubject+2]
	}
	if !strings.Contains(head, "\n") && len(message) > len(head) {
		return PR{}, false
	}
	subject, body := cutLine(message)
	subject = strings.TrimSpace(subject)
	if len(subject) > maxSubject || subject == "" {
		return PR{}, false
	}
	switch {
	case strings.HasPrefix(subject, "Merge pull request #"):
		return githubOrBitbucketServer(subject, body)
	case strings.HasPrefix(subject, "Merge pull request '"):
		return gitea(subject)
	case strings.HasPrefix(subject, "Merged in "):
		return bitbucketCloud(subject, body)
	case strings.HasPrefix(subject, "Merged PR "):
		return azure(subject)
	case strings.HasPrefix(subject, "Pull request #"):
		if pr, ok := bitbucketDataCenter(subject, body); ok {
			return pr, true
		}
	}
	if pr, ok := gitlab(subject, body); ok {
		return pr, true
	}
	return squash(subject)
}

// githubOrBitbucketServer reads "Merge pull request #123 from owner/branch"
// (GitHub) and "Merge pull request #12 in PROJ/repo from branch to main"
// (Bitbucket Server).
func githubOrBitbucketServer(subject, body string) (PR, bool) {
	num, rest, ok := number(strings.TrimPrefix(subject, "Merge pull request #"))
	if !ok {
		return PR{}, false
	}
	pr := PR{Number: num, Sigil: '#', Title: bodyTitle(body)}
	if rest == "" {
		return pr, true
	}
	if head, ok := strings.CutPrefix(rest, " from "); ok {
		// GitHub writes the head as owner/branch; an owner has no slash.
		if owner, branch, ok := strings.Cut(head, "/"); ok && isWord(head) && owner != "" && branch != "" {
			pr.Owner, pr.Branch = owner, branch
		}
		return pr, true
	}
	// Bitbucket Server: " in PROJ/repo from feature/x to main".
	if repo, ok := strings.CutPrefix(rest, " in "); ok {
		if _, head, ok := strings.Cut(repo, " from "); ok {
			if branch, target, ok := strings.Cut(head, " to "); ok && isWord(branch) && isWord(target) {
				pr.Branch = branch
				return pr, true
			}
		}
	}
	return PR{}, false
}

// gitea reads "Merge pull request 'Title' (#7) from branch into main".
// The title may hold anything, quotes and " from " included, but branch
// names hold no spaces: the subject is read from its end.
func gitea(subject string) (PR, bool) {
	rest := strings.TrimPrefix(subject, "Merge pull request '")
	i := strings.LastIndex(rest, " into ")
	if i < 0 || !isWord(rest[i+len(" into "):]) {
		return PR{}, false
	}
	rest = rest[:i]
	i = strings.LastIndex(rest, " from ")
	if i < 0 || !isWord(rest[i+len(" from "):]) {
		return PR{}, false
	}
	head := rest[i+len(" from "):]
	rest = rest[:i]
	title, num, sigil, ok := trailingNumber(rest)
	if !ok || !strings.HasSuffix(title, "'") {
		return PR{}, false
	}
	pr := PR{Number: num, Sigil: sigil, Title: strings.TrimSpace(strings.TrimSuffix(title, "'"))}
	if owner, branch, ok := strings.Cut(head, ":"); ok && owner != "" && branch != "" {
		pr.Owner, pr.Branch = owner, branch
	} else {
		pr.Branch = head
	}
	return pr, true
}

// bitbucketCloud reads "Merged in feature/x (pull request #12)".
func bitbucketCloud(subject, body string) (PR, bool) {
	rest := strings.TrimPrefix(subject, "Merged in ")
	branch, rest, ok := strings.Cut(rest, " (pull request #")
	if !ok || !isWord(branch) {
		return PR{}, false
	}
	num, rest, ok := number(rest)
	if !ok || rest != ")" {
		return PR{}, false
	}
	return PR{Number: num, Sigil: '#', Title: bodyTitle(body), Branch: branch}, true
}

// bitbucketDataCenter reads Bitbucket Server's form since 7.0: "Pull
// request #12: Title" over "Merge in PROJ/repo from feature/x to main".
// The second line is what tells it from a subject a person wrote.
func bitbucketDataCenter(subject, body string) (PR, bool) {
	num, rest, ok := number(strings.TrimPrefix(subject, "Pull request #"))
	if !ok {
		return PR{}, false
	}
	title, ok := strings.CutPrefix(rest, ": ")
	if !ok {
		return PR{}, false
	}
	line, _ := cutLine(skipBlank(body))
	repo, ok := strings.CutPrefix(strings.TrimSpace(line), "Merge in ")
	if !ok {
		return PR{}, false
	}
	_, head, ok := strings.Cut(repo, " from ")
	if !ok {
		return PR{}, false
	}
	branch, target, ok := strings.Cut(head, " to ")
	if !ok || !isWord(branch) || !isWord(target) {
		return PR{}, false
	}
	return PR{Number: num, Sigil: '#', Title: strings.TrimSpace(title), Branch: branch}, true
}

// azure reads "Merged PR 42: Title", which Azure DevOps writes for merges
// and squashes alike.
func azure(subject string) (PR, bool) {
	num, rest, ok := number(strings.TrimPrefix(subject, "Merged PR "))
	if !ok {
		return PR{}, false
	}
	title, ok := strings.CutPrefix(rest, ":")
	if !ok {
		return PR{}, false
	}
	return PR{Number: num, Sigil: '!', Title: strings.TrimSpace(title)}, true
}

// gitlab finds the line "See merge request group/project!42" GitLab ends
// its merge messages with. Its default subject is "Merge branch 'feature'
// into 'main'", the title on the body's first line; with any other subject
// (a template of the project's own) the subject is the title.
func gitlab(subject, body string) (PR, bool) {
	const marker = "See merge request "
	i := strings.LastIndex(body, marker)
	for i >= 0 && i > 0 && body[i-1] != '\n' {
		i = strings.LastIndex(body[:i], marker)
	}
	if i < 0 {
		return PR{}, false
	}
	line, _ := cutLine(body[i+len(marker):])
	ref := strings.TrimSpace(line)
	j := strings.LastIndexByte(ref, '!')
	if j < 0 || strings.ContainsAny(ref[:j], " \t") {
		return PR{}, false
	}
	num, rest, ok := number(ref[j+1:])
	if !ok || rest != "" {
		return PR{}, false
	}
	pr := PR{Number: num, Sigil: '!'}
	if branch, ok := gitlabBranch(subject); ok {
		pr.Branch = branch
		pr.Title = bodyTitle(body)
	} else {
		pr.Title = subject
	}
	return pr, true
}

// gitlabBranch reads GitLab's default subject, "Merge branch 'feature'
// into 'main'", which quotes the target as git's own merges do not.
func gitlabBranch(subject string) (string, bool) {
	rest, ok := strings.CutPrefix(subject, "Merge branch '")
	if !ok {
		return "", false
	}
	branch, rest, ok := strings.Cut(rest, "'")
	if !ok || !isWord(branch) {
		return "", false
	}
	if !strings.HasPrefix(rest, " into '") || !strings.HasSuffix(rest, "'") {
		return "", false
	}
	return branch, true
}

// squash reads "Title (#123)".
func squash(subject string) (PR, bool) {
	title, num, sigil, ok := trailingNumber(subject)
	if !ok {
		return PR{}, false
	}
	title = strings.TrimSpace(title)
	if title == "" {
		return PR{}, false
	}
	return PR{Number: num, Sigil: sigil, Title: title, Squash: true}, true
}

// trailingNumber splits "text (#123)" or "text (!123)" into the text, the
// number and the sigil. The parentheses must end s and follow a space.
func trailingNumber(s string) (text, num string, sigil byte, ok bool) {
	if !strings.HasSuffix(s, ")") {
		return "", "", 0, false
	}
	i := strings.LastIndex(s, " (")
	if i < 0 || i+3 > len(s) {
		return "", "", 0, false
	}
	sigil = s[i+2]
	if sigil != '#' && sigil != '!' {
		return "", "", 0, false
	}
	num, rest, ok := number(s[i+3:])
	if !ok || rest != ")" {
		return "", "", 0, false
	}
	return s[:i], num, sigil, true
}

// number reads the request number s starts with and gives what follows.
func number(s string) (num, rest string, ok bool) {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	if n == 0 || n > maxNumber || s[0] == '0' {
		return "", "", false
	}
	return s[:n], s[n:], true
}

// bodyTitle is the first line of the body's first paragraph, where GitHub,
// GitLab and Bitbucket put the request's title, or "" when that line is
// something else.
func bodyTitle(body string) string {
	line, _ := cutLine(skipBlank(body))
	line = strings.TrimSpace(line)
	if line == "" || len(line) > maxSubject || strings.HasPrefix(line, "* ") ||
		strings.HasPrefix(line, "See merge request ") || isTrailer(line) {
		return ""
	}
	return line
}

// isTrailer reports whether line is a git trailer with a hyphenated key,
// "Signed-off-by: ..." or "Co-authored-by: ...": a body that starts with
// one has no title. Single-word keys are left alone, since "fix: x" is a
// title.
func isTrailer(line string) bool {
	key, _, ok := strings.Cut(line, ": ")
	if !ok || !strings.Contains(key, "-") || strings.HasPrefix(key, "-") || strings.HasSuffix(key, "-") {
		return false
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-') {
			return false
		}
	}
	return true
}

// cutLine splits s after its first line, dropping the newline and a
// carriage return before it.
func cutLine(s string) (line, rest string) {
	line, rest, _ = strings.Cut(s, "\n")
	return strings.TrimSuffix(line, "\r"), rest
}

// skipBlank drops the blank lines s starts with.
func skipBlank(s string) string {
	for {
		i := 0
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r') {
			i++
		}
		if i < len(s) && s[i] == '\n' {
			s = s[i+1:]
			continue
		}
		return s
	}
}

// isWord reports whether s is one non-empty run without spaces or control
// characters, as branch and repository names are.
func isWord(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] == 0x7f {
			return false
		}
	}
	return true
}
