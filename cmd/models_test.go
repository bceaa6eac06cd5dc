package cmd

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/digest-cli/digest/internal/cmdutil"
	"github.com/digest-cli/digest/internal/iostreams"
	"github.com/digest-cli/digest/internal/models"
	"github.com/digest-cli/digest/internal/provider"
)

type modelsJSON struct {
	SourceDate string     `json:"source_date"`
	Override   string     `json:"override"`
	Models     []modelRow `json:"models"`
}

func (m modelsJSON) find(t *testing.T, name string) modelRow {
	t.Helper()
	for _, r := range m.Models {
		if r.Model == name {
			return r
		}
	}
	t.Fatalf("%s is not listed", name)
	return modelRow{}
}

// runModelsOn runs digest models at the day now, its standard output a
// terminal or not.
func runModelsOn(t *testing.T, now time.Time, terminal bool, o ModelsOptions) (out, errOut string, err error) {
	t.Helper()
	ios, stdout, stderr := iostreams.Test()
	ios.SetStdoutTTY(terminal)
	o.IO, o.Globals, o.Now = ios, &cmdutil.Globals{}, func() time.Time { return now }
	err = runModels(&o)
	return stdout.String(), stderr.String(), err
}

// TestModelsListsTheTableAsJSON: off a terminal, digest models writes the
// table as JSON: each model's four prices and its batch price, context,
// output limit, first-tier limits, rules and retirement, under the date
// the table was read and how to give one's own figures.
func TestModelsListsTheTableAsJSON(t *testing.T) {
	h := newHarness(t)
	res := h.run(context.Background(), "models")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.errOut)
	}
	var doc modelsJSON
	if err := json.Unmarshal([]byte(res.out), &doc); err != nil {
		t.Fatalf("%v: %s", err, res.out)
	}
	if doc.SourceDate != models.SourceDate || !strings.Contains(doc.Override, "--model-config") || !strings.Contains(doc.Override, "--price") {
		t.Errorf("source date %q, override %q", doc.SourceDate, doc.Override)
	}
	if len(doc.Models) != len(models.Table()) {
		t.Errorf("%d models listed, the table holds %d", len(doc.Models), len(models.Table()))
	}
	sonnet := doc.find(t, "anthropic:claude-sonnet-5")
	want := models.Price{InputPerM: 2, OutputPerM: 10, CachedInputPerM: 0.20, CacheWritePerM: 2.50}
	if sonnet.Price == nil || *sonnet.Price != want || sonnet.BatchPrice == nil || *sonnet.BatchPrice != (models.Price{InputPerM: 1, OutputPerM: 5, CachedInputPerM: 0.10, CacheWritePerM: 1.25}) {
		t.Errorf("claude-sonnet-5 priced %+v, batch %+v; want %+v and half of it", sonnet.Price, sonnet.BatchPrice, want)
	}
	if sonnet.Context != 1_000_000 || sonnet.MaxOutput != 128_000 || sonnet.RPM != 1_000 || sonnet.TPM != 2_000_000 || sonnet.Source == "" {
		t.Errorf("claude-sonnet-5: %+v", sonnet)
	}
	if want := provider.ProviderRules(provider.Spec{Provider: "anthropic", Model: "claude-sonnet-5"}).Summary(); sonnet.Rules != want || want == "" {
		t.Errorf("claude-sonnet-5 rules %q, want %q", sonnet.Rules, want)
	}
	if mini := doc.find(t, "openai:gpt-5.4-mini"); mini.Price == nil || mini.Price.InputPerM != 0.75 {
		t.Errorf("gpt-5.4-mini priced as %+v", mini.Price)
	}
}

// TestModelsSaysWhatRetired: the status of each model is judged on the
// day digest runs; a retired one names its successor.
func TestModelsSaysWhatRetired(t *testing.T) {
	out, _, err := runModelsOn(t, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), false, ModelsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var doc modelsJSON
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][3]string{
		"anthropic:claude-opus-4-1": {"retired", "2026-08-05", "anthropic:claude-opus-4-8"},
		"openai:gpt-5":              {"deprecated", "2026-12-11", "openai:gpt-5.6-sol"},
		"anthropic:claude-sonnet-5": {"active", "", ""},
	} {
		r := doc.find(t, name)
		if got := [3]string{r.Status, r.Retired, r.Successor}; got != want {
			t.Errorf("%s: %v, want %v", name, got, want)
		}
	}
	out, _, _ = runModelsOn(t, time.Date(2026, 12, 11, 0, 0, 0, 0, time.UTC), false, ModelsOptions{})
	doc = modelsJSON{}
	json.Unmarshal([]byte(out), &doc)
	if r := doc.find(t, "openai:gpt-5"); r.Status != "retired" {
		t.Errorf("gpt-5 on its shutdown day: %s", r.Status)
	}
}

// TestModelsTableOnATerminal: on a terminal the table is aligned, with
// the rules of each model, between a line naming the table's date and
// one saying how to give one's own figures.
func TestModelsTableOnATerminal(t *testing.T) {
	out, _, err := runModelsOn(t, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), true, ModelsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if !strings.Contains(lines[0], models.SourceDate) || !strings.Contains(lines[len(lines)-1], "--model-config") || !strings.Contains(lines[len(lines)-1], "--price") {
		t.Errorf("first line %q, last %q: want the date, then how to override", lines[0], lines[len(lines)-1])
	}
	var header, sonnet, opus41 string
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "MODEL "):
			header = l
		case strings.HasPrefix(l, "anthropic:claude-sonnet-5 "):
			sonnet = l
		case strings.HasPrefix(l, "anthropic:claude-opus-4-1 "):
			opus41 = l
		}
	}
	rules := provider.ProviderRules(provider.Spec{Provider: "anthropic", Model: "claude-sonnet-5"}).Summary()
	if !strings.HasSuffix(sonnet, rules) || !strings.Contains(sonnet, "$2.50") || !strings.Contains(sonnet, "1M") || !strings.Contains(sonnet, "128K") {
		t.Errorf("claude-sonnet-5's line %q, want its prices, context, output limit and rules %q", sonnet, rules)
	}
	if !strings.Contains(opus41, "retired 2026-08-05, then anthropic:claude-opus-4-8") {
		t.Errorf("claude-opus-4-1's line %q", opus41)
	}
	for _, column := range []string{"INPUT", "OUTPUT", "CACHED", "CACHE WRITE", "BATCH IN/OUT", "CONTEXT", "MAX OUT", "RPM", "TPM", "RETIREMENT", "RULES"} {
		if !strings.Contains(header, column) {
			t.Errorf("header %q has no %s", header, column)
		}
	}
	// Aligned: every model's rules start where the header's RULES does.
	at := strings.Index(header, "RULES")
	if sonnet[at:] != rules {
		t.Errorf("rules not aligned under RULES:\n%s\n%s", header, sonnet)
	}
	// --quiet leaves the data alone.
	ios, stdout, _ := iostreams.Test()
	ios.SetStdoutTTY(true)
	o := &ModelsOptions{IO: ios, Globals: &cmdutil.Globals{Quiet: true}, Now: time.Now}
	if err := runModels(o); err != nil || !strings.HasPrefix(stdout.String(), "MODEL ") {
		t.Errorf("--quiet: %v %q", err, stdout.String()[:min(80, stdout.Len())])
	}
	// --format json on a terminal is JSON.
	out, _, _ = runModelsOn(t, time.Now(), true, ModelsOptions{Format: "json"})
	if !json.Valid([]byte(out)) {
		t.Errorf("--format json on a terminal: %.80s", out)
	}
}

// TestModelsWithAModelsFile: --model-config shows the file's figures over
// the table's, and the models only the file names.
func TestModelsWithAModelsFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "models.json")
	os.WriteFile(path, []byte(`{"openai:gpt-5.4-mini": {"rpm": 9000, "tpm": 5000000},
		"openai:my-finetune": {"price": {"input_per_million": 1, "output_per_million": 4, "cached_input_per_million": 0.1}, "context": 32000}}`), 0o600)
	out, _, err := runModelsOn(t, time.Now(), false, ModelsOptions{ModelConfig: path})
	if err != nil {
		t.Fatal(err)
	}
	var doc modelsJSON
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	mini := doc.find(t, "openai:gpt-5.4-mini")
	if mini.RPM != 9000 || mini.TPM != 5_000_000 || !mini.ModelConfig || mini.Price == nil || mini.Price.InputPerM != 0.75 || mini.Context != 400_000 {
		t.Errorf("gpt-5.4-mini with the file: %+v", mini)
	}
	ft := doc.find(t, "openai:my-finetune")
	if ft.Price == nil || *ft.Price != (models.Price{InputPerM: 1, OutputPerM: 4, CachedInputPerM: 0.1}) || ft.Context != 32_000 || !ft.ModelConfig || ft.Status != "active" {
		t.Errorf("my-finetune from the file: %+v", ft)
	}
	if doc.find(t, "anthropic:claude-sonnet-5").ModelConfig {
		t.Error("claude-sonnet-5 marked as from the file")
	}
	table, _, _ := runModelsOn(t, time.Now(), true, ModelsOptions{ModelConfig: path})
	if !regexp.MustCompile(`(?m)^openai:my-finetune \*\s+\$1\s+\$4\s+\$0\.10\s`).MatchString(table) || !strings.Contains(table, "* with figures from --model-config") {
		t.Errorf("table with the file:\n%s", table)
	}
}

// TestModelsRefusesBadUsage: a bad --format or models file is a usage
// error of one line that says what to do.
func TestModelsRefusesBadUsage(t *testing.T) {
	h := newHarness(t)
	bad := filepath.Join(t.TempDir(), "models.json")
	os.WriteFile(bad, []byte(`{"openai:x": {"price": {"input_per_million": 1, "output_per_million": 2, "cached_input_per_milion": 0.1}}}`), 0o600)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"models", "--format", "csv"}, `--format "csv" is neither table nor json. Try: --format json`},
		{[]string{"models", "--model-config", bad}, `unknown field "cached_input_per_milion". Try: cached_input_per_million`},
		{[]string{"models", "--model-config", filepath.Join(t.TempDir(), "none.json")}, "models file:"},
		{[]string{"models", "extra"}, "unknown command"},
	} {
		res := h.run(context.Background(), tt.args...)
		if res.code != 2 || !strings.Contains(res.errOut, tt.want) || strings.Count(strings.TrimSpace(res.errOut), "\n") != 0 {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tt.args, res.code, res.errOut, tt.want)
		}
	}
}

// TestModelsHelpNamesOnlyRealFlags: every flag digest models' help and
// its footer name is a flag of the command said to take it.
func TestModelsHelpNamesOnlyRealFlags(t *testing.T) {
	ios, _, _ := iostreams.Test()
	root := NewRootCmd(NewFactory(ios, "test"))
	find := func(name string) map[string]bool {
		cmd, _, err := root.Find([]string{name})
		if err != nil {
			t.Fatal(err)
		}
		flags := map[string]bool{}
		cmd.InheritedFlags().VisitAll(func(f *pflag.Flag) { flags[f.Name] = true })
		cmd.Flags().VisitAll(func(f *pflag.Flag) { flags[f.Name] = true })
		return flags
	}
	flag := regexp.MustCompile(`--[a-z][a-z-]*`)
	modelsCmd, _, _ := root.Find([]string{"models"})
	own := find("models")
	for _, text := range []string{modelsCmd.Long, modelsCmd.Example} {
		for _, f := range flag.FindAllString(text, -1) {
			if !own[strings.TrimPrefix(f, "--")] {
				t.Errorf("digest models' help names %s, which it does not take", f)
			}
		}
	}
	// The footer: --model-config here and on summarize and eval, --rpm
	// and --tpm on both, --price on summarize.
	for cmd, flags := range map[string][]string{"models": {"model-config"}, "summarize": {"model-config", "rpm", "tpm", "price"}, "eval": {"model-config", "rpm", "tpm"}} {
		have := find(cmd)
		for _, f := range flags {
			if !have[f] || !strings.Contains(overrideNote, "--"+f) {
				t.Errorf("the override note names --%s on %s: the command has it %v, the note %q", f, cmd, have[f], overrideNote)
			}
		}
	}
}
