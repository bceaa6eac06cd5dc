// Package people tells who wrote a change, for the contributors of
// release notes: the GitHub login a commit's address gives, whether an
// identity is a bot's, and one key per person however they sign.
//
// Apply the repository's .mailmap before asking: these functions read the
// name and address as given.
package people

import "strings"

// noreplyDomain is the domain of the addresses GitHub gives people who keep
// their own private: ID+login@users.noreply.github.com since July 2017,
// login@users.noreply.github.com before.
const noreplyDomain = "users.noreply.github.com"

// maxLogin is the longest login GitHub allows.
const maxLogin = 39

// Login gives the GitHub login in a noreply address,
// "12345+octocat@users.noreply.github.com" or the older
// "octocat@users.noreply.github.com", and apps' like
// "49699333+dependabot[bot]@users.noreply.github.com" ("dependabot[bot]").
// The domain is matched without regard to case; the login keeps the case
// it was written in. The login must be one GitHub allows now: letters,
// digits and single hyphens, not first or last, at most 39 characters, and
// "[bot]" after it for an app. ok is false for every other address: an
// address at a domain of its own says nothing of a GitHub account.
func Login(email string) (string, bool) {
	email = strings.TrimSpace(email)
	at := strings.LastIndexByte(email, '@')
	if at < 0 || !strings.EqualFold(email[at+1:], noreplyDomain) {
		return "", false
	}
	local := email[:at]
	if id, login, ok := strings.Cut(local, "+"); ok {
		if !isID(id) {
			return "", false
		}
		local = login
	}
	if !ValidLogin(local) {
		return "", false
	}
	return local, true
}

// ValidLogin reports whether login is a GitHub login as GitHub allows
// them now: letters, digits and single hyphens, not first or last, at most
// 39 characters, or such a name followed by "[bot]" for an app. Some
// accounts older than the rule break it and are refused here.
func ValidLogin(login string) bool {
	login = strings.TrimSuffix(login, "[bot]")
	if login == "" || len(login) > maxLogin || login[0] == '-' || login[len(login)-1] == '-' {
		return false
	}
	for i := 0; i < len(login); i++ {
		c := login[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '-' && login[i-1] != '-':
		default:
			return false
		}
	}
	return true
}

// isID reports whether s is the account number of a noreply address.
func isID(s string) bool {
	if s == "" || len(s) > 20 || s[0] == '0' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// botNames are the names and logins, lower-cased, that automation commits
// under without the "[bot]" suffix GitHub gives apps: the GitHub Actions
// token's identity, Dependabot's (and the old Dependabot Preview's),
// Renovate's, pre-commit.ci's, GitHub Copilot's coding agent (whose
// address is 198982749+Copilot@users.noreply.github.com), and other bots
// common in open-source histories.
var botNames = map[string]bool{
	"dependabot": true, "dependabot-preview": true,
	"renovate": true, "renovate-bot": true, "renovatebot": true, "renovate bot": true,
	"github-actions": true, "github actions": true, "github action": true,
	"pre-commit-ci": true, "pre-commit.ci": true,
	"greenkeeper": true, "greenkeeperio-bot": true,
	"mergify": true, "imgbot": true, "snyk-bot": true, "allcontributors": true,
	"semantic-release-bot": true, "release-please": true, "web-flow": true,
	"copilot": true, "copilot-swe-agent": true,
}

// botEmails are the addresses, lower-cased, such bots commit with outside
// GitHub's noreply domain.
var botEmails = map[string]bool{
	"noreply@github.com":                true, // GitHub itself (web-flow), committer of web edits and merges
	"action@github.com":                 true, // the address workflows commonly configure for GitHub Actions
	"github-actions@github.com":         true,
	"support@dependabot.com":            true,
	"bot@renovateapp.com":               true,
	"renovate@whitesourcesoftware.com":  true,
	"semantic-release-bot@martynus.net": true,
}

// IsBot reports whether a commit's author is automation rather than a
// person, so that release notes can leave it out of their contributors:
//
//   - a name or GitHub login that ends in "[bot]", as GitHub names apps
//     ("dependabot[bot]", "github-actions[bot]", "pre-commit-ci[bot]");
//   - a name or login, ignoring case, of a well-known bot that commits
//     without that suffix: dependabot, dependabot-preview, renovate
//     (renovate-bot, renovatebot, "Renovate Bot"), github-actions ("GitHub
//     Actions", "GitHub Action"), pre-commit-ci (pre-commit.ci),
//     greenkeeper (greenkeeperio-bot), mergify, imgbot, snyk-bot, allcontributors,
//     semantic-release-bot, release-please, web-flow and Copilot
//     (copilot-swe-agent);
//   - an address such bots use: noreply@github.com (GitHub itself),
//     action@github.com and github-actions@github.com (Actions workflows),
//     support@dependabot.com, bot@renovateapp.com,
//     renovate@whitesourcesoftware.com, semantic-release-bot@martynus.net.
//
// A person who names themselves like a bot is taken for one; a bot that
// commits under a person's name is not found.
func IsBot(name, email string) bool {
	name = strings.ToLower(strings.TrimSpace(name))
	email = strings.ToLower(strings.TrimSpace(email))
	if strings.HasSuffix(name, "[bot]") || botNames[name] || botEmails[email] {
		return true
	}
	if login, ok := Login(email); ok {
		return strings.HasSuffix(login, "[bot]") || botNames[login]
	}
	return false
}

// Key gives one key per person, to count contributors and tell a first
// contribution: "github:" and the lower-cased login for a noreply address,
// so that the older and newer forms of one account's address agree;
// "email:" and the lower-cased address for any other address; "name:" and
// the name for an identity without an address; "" for neither. Keys of
// the three kinds never collide.
func Key(name, email string) string {
	email = strings.TrimSpace(email)
	if login, ok := Login(email); ok {
		return "github:" + strings.ToLower(login)
	}
	if email != "" {
		return "email:" + strings.ToLower(email)
	}
	if name = strings.TrimSpace(name); name != "" {
		return "name:" + name
	}
	return ""
}
