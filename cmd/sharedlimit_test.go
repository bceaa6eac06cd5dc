package cmd

import (
	"context"
	"testing"

	"github.com/digest-cli/digest/internal/iostreams"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/provider/anthropic"
	"github.com/digest-cli/digest/internal/provider/openai"
	"github.com/digest-cli/digest/internal/sharedlimit"
)

// TestConnectNamesTheAccountsLimit: connect, which gives summarize's
// model, eval's models and eval's judge their client, names with it the
// rate limit they share with every process on the account: sharedlimit.Name
// of the provider (OpenAI's whichever of its APIs), the base URL the model
// is served from, the model and the API key; the offline model shares
// none. The pipelines' TestRunsWriteTheLearnedLimitWhereOtherProcessesReadIt
// check that the limit a provider tells a run is stored under that name.
func TestConnectNamesTheAccountsLimit(t *testing.T) {
	ios, _, _ := iostreams.Test()
	f := factory{NewFactory(ios, "v1.2.3-test")}
	env := map[string]string{"OPENAI_API_KEY": "sk-openai", "ANTHROPIC_API_KEY": "sk-ant", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
	f.Getenv = func(k string) string { return env[k] }
	for _, tt := range []struct {
		spec       provider.Spec
		flag, want string
	}{
		{provider.Spec{Provider: "openai", Model: "m"}, "", sharedlimit.Name("openai", "http://127.0.0.1:9/v1", "m", "sk-openai")},
		{provider.Spec{Provider: openai.ResponsesProvider, Model: "m"}, "http://127.0.0.1:8/v1", sharedlimit.Name("openai", "http://127.0.0.1:8/v1", "m", "sk-openai")},
		{provider.Spec{Provider: "anthropic", Model: "claude-haiku-4-5"}, "", sharedlimit.Name("anthropic", anthropic.DefaultBaseURL, "claude-haiku-4-5", "sk-ant")},
		{provider.Spec{Provider: provider.Offline, Model: provider.Offline}, "", ""},
	} {
		flags := targetFlags{BaseURL: tt.flag}
		tg, err := f.target(tt.spec, flags)
		if err == nil {
			err = f.connect(context.Background(), &tg, flags)
		}
		if err != nil || tg.Provider == nil || tg.LimitName != tt.want {
			t.Errorf("%s: limit %q, %v; want %q", tt.spec, tg.LimitName, err, tt.want)
		}
	}
}
