package people

import (
	"strings"
	"testing"
)

func TestLogin(t *testing.T) {
	tests := []struct {
		email string
		want  string
		ok    bool
	}{
		// Addresses from go-git's and cobra's histories.
		{"15041913+AriehSchneier@users.noreply.github.com", "AriehSchneier", true},
		{"thaJeztah@users.noreply.github.com", "thaJeztah", true},
		{"49699333+dependabot[bot]@users.noreply.github.com", "dependabot[bot]", true},
		{"245267575+go-git-renovate[bot]@users.noreply.github.com", "go-git-renovate[bot]", true},
		{"198982749+Copilot@users.noreply.github.com", "Copilot", true},
		{"133815608+cedric-appdirect@users.noreply.github.com", "cedric-appdirect", true},
		{"41898282+github-actions[bot]@users.noreply.github.com", "github-actions[bot]", true},
		{"66853113+pre-commit-ci[bot]@users.noreply.github.com", "pre-commit-ci[bot]", true},
		{"1+a@USERS.NoReply.GitHub.com", "a", true},
		{"  1+a@users.noreply.github.com ", "a", true},
		{strings.Repeat("a", 39) + "@users.noreply.github.com", strings.Repeat("a", 39), true},

		{strings.Repeat("a", 40) + "@users.noreply.github.com", "", false},
		{"-a@users.noreply.github.com", "", false},
		{"a-@users.noreply.github.com", "", false},
		{"a--b@users.noreply.github.com", "", false},
		{"a_b@users.noreply.github.com", "", false},
		{"a.b@users.noreply.github.com", "", false},
		{"[bot]@users.noreply.github.com", "", false},
		{"a[bot]x@users.noreply.github.com", "", false},
		{"+a@users.noreply.github.com", "", false},
		{"x+a@users.noreply.github.com", "", false},
		{"01+a@users.noreply.github.com", "", false},
		{"1+2+a@users.noreply.github.com", "", false},
		{"1+@users.noreply.github.com", "", false},
		{"@users.noreply.github.com", "", false},
		{"octocat@github.com", "", false},
		{"noreply@github.com", "", false},
		{"octocat@users.noreply.github.com.evil.example", "", false},
		{"octocat@noreply.github.com", "", false},
		{"octocat", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		got, ok := Login(tt.email)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Login(%q) = %q, %v; want %q, %v", tt.email, got, ok, tt.want, tt.ok)
		}
	}
}

func TestIsBot(t *testing.T) {
	tests := []struct {
		name, email string
		want        bool
	}{
		{"dependabot[bot]", "49699333+dependabot[bot]@users.noreply.github.com", true},
		{"go-git-renovate[bot]", "245267575+go-git-renovate[bot]@users.noreply.github.com", true},
		{"copilot-swe-agent[bot]", "198982749+Copilot@users.noreply.github.com", true},
		{"github-actions", "41898282+github-actions[bot]@users.noreply.github.com", true},
		{"GitHub Action", "action@github.com", true},
		{"GitHub", "noreply@github.com", true},
		{"Renovate Bot", "bot@renovateapp.com", true},
		{"dependabot-preview", "27856297+dependabot-preview[bot]@users.noreply.github.com", true},
		{"Dependabot", "support@dependabot.com", true},
		{"pre-commit-ci", "", true},
		{"Someone", "Someone@users.noreply.github.com", false},
		{"Sebastiaan van Stijn", "thaJeztah@users.noreply.github.com", false},
		{"Talbot", "talbot@example.com", false},
		{"Ann Bot", "ann@example.com", false},
		{"bot", "bot@example.com", false},
		{"", "", false},
	}
	for _, tt := range tests {
		if got := IsBot(tt.name, tt.email); got != tt.want {
			t.Errorf("IsBot(%q, %q) = %v, want %v", tt.name, tt.email, got, tt.want)
		}
	}
}

func TestKey(t *testing.T) {
	same := [][2]string{
		// One account's newer and older noreply addresses, in any case.
		{"38422348+umarcor@users.noreply.github.com", "umarcor@users.noreply.github.com"},
		{"1+Octocat@users.noreply.github.com", "octocat@USERS.NOREPLY.GITHUB.COM"},
		{"Ada@Example.com", "ada@example.com"},
	}
	for _, p := range same {
		if a, b := Key("x", p[0]), Key("y", p[1]); a != b {
			t.Errorf("Key(%q) = %q, Key(%q) = %q; want the same", p[0], a, p[1], b)
		}
	}
	tests := []struct{ name, email, want string }{
		{"Unai", "38422348+umarcor@users.noreply.github.com", "github:umarcor"},
		{"Ada", " Ada@Example.com ", "email:ada@example.com"},
		{"Ada Lovelace", "", "name:Ada Lovelace"},
		{"", "", ""},
		// An address that looks like a login is no login.
		{"", "github:x", "email:github:x"},
	}
	for _, tt := range tests {
		if got := Key(tt.name, tt.email); got != tt.want {
			t.Errorf("Key(%q, %q) = %q, want %q", tt.name, tt.email, got, tt.want)
		}
	}
}

func FuzzLogin(f *testing.F) {
	for _, s := range []string{
		"15041913+AriehSchneier@users.noreply.github.com",
		"thaJeztah@users.noreply.github.com",
		"49699333+dependabot[bot]@users.noreply.github.com",
		"a@example.com",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, email string) {
		login, ok := Login(email)
		if !ok {
			if login != "" {
				t.Fatalf("not ok but %q", login)
			}
			return
		}
		if !ValidLogin(login) || !strings.Contains(email, login) {
			t.Fatalf("Login(%q) = %q", email, login)
		}
		// The login is what Key keys the address by.
		if k := Key("", email); k != "github:"+strings.ToLower(login) {
			t.Fatalf("Key(%q) = %q for login %q", email, k, login)
		}
		if strings.HasSuffix(login, "[bot]") && !IsBot("", email) {
			t.Fatalf("%q is an app's address but no bot's", email)
		}
	})
}
