package summarize

import (
	"testing"

	"github.com/digest-cli/digest/internal/committype"
	"github.com/digest-cli/digest/internal/prompt"
)

func TestKindOfPrefersTheModelWhereItIsValid(t *testing.T) {
	yes, no := true, false
	const fixMsg = "fix(api): handle empty bodies"
	for _, tt := range []struct {
		name    string
		a       prompt.Answer
		message string
		paths   []string
		want    committype.Kind
	}{
		{"the model's kind", prompt.Answer{Type: "Feature", Scope: "cli", Breaking: &yes}, fixMsg, nil, committype.Kind{Type: "feat", Scope: "cli", Breaking: true}},
		{"no kind given: the rules", prompt.Answer{}, fixMsg, nil, committype.Kind{Type: "fix", Scope: "api"}},
		{"an invalid type: the rules' type and scope", prompt.Answer{Type: "improvement", Scope: "x", Breaking: &no}, fixMsg, nil, committype.Kind{Type: "fix", Scope: "api"}},
		{"a breaking footer stands", prompt.Answer{Type: "refactor", Breaking: &no}, "refactor: drop v1\n\nBREAKING CHANGE: v1 is gone", nil, committype.Kind{Type: "refactor", Breaking: true}},
		{"paths decide for the rules", prompt.Answer{}, "Update things", []string{"docs/a.md", "README.md"}, committype.Kind{Type: "docs"}},
	} {
		if got := kindOf(tt.a, tt.message, tt.paths); got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
}
