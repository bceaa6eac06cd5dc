package cmd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/digest-cli/digest/internal/batchrun"
	"github.com/digest-cli/digest/internal/cmdutil"
	"github.com/digest-cli/digest/internal/engine"
	"github.com/digest-cli/digest/internal/iostreams"
	"github.com/digest-cli/digest/internal/models"
	"github.com/digest-cli/digest/internal/payloads"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/provider/anthropic"
	"github.com/digest-cli/digest/internal/provider/offline"
	"github.com/digest-cli/digest/internal/provider/openai"
	"github.com/digest-cli/digest/internal/redact"
	"github.com/digest-cli/digest/internal/sharedlimit"
	"github.com/digest-cli/digest/internal/store"
	"github.com/digest-cli/digest/internal/store/postgres"
	"github.com/digest-cli/digest/internal/store/sqlite"
	"github.com/digest-cli/digest/internal/target"
	"github.com/digest-cli/digest/internal/textsafe"
	"github.com/digest-cli/digest/internal/tokenizer"
)

// NewFactory returns the factory of the real program: the databases and
// providers digest knows, each built when a command first asks for it.
func NewFactory(ios *iostreams.IOStreams, version string) *cmdutil.Factory {
	f := &cmdutil.Factory{IOStreams: ios, Version: version, Getenv: os.Getenv, ParseDB: parseDB}
	f.Store = func(ctx context.Context, access cmdutil.Access) (store.Store, error) {
		s, err := openDBFor(ctx, f.Globals.DB, access)
		if err != nil || f.Globals.Payloads == "" || access == cmdutil.Read {
			return s, err
		}
		// Writers send payloads to the object store; readers (reports) find
		// what they show in the database, and `runs payloads` opens the store.
		if err := usePayloads(ctx, s, f.Globals.Payloads); err != nil {
			s.Close()
			return nil, err
		}
		return s, nil
	}
	f.Provider = func(spec provider.Spec, o cmdutil.ProviderOptions) (provider.Provider, error) {
		return newProvider(f, spec, o)
	}
	return f
}

// parseDB reads a --db as a person means it (see postgres.Classify): a
// PostgreSQL URL, its scheme in any case, or a keyword/value connection
// string is a server shared by every machine that names it (and never a
// local file); space around it is no part of it; what looks like a URL or
// a connection string but is none digest can use is a usage error that
// shows no password; anything else is an SQLite file.
func parseDB(db string) (cmdutil.Database, error) {
	name, server, err := postgres.Classify(db)
	if err != nil {
		return cmdutil.Database{}, cmdutil.AsUsage(err)
	}
	return cmdutil.Database{Name: name, Server: server}, nil
}

// payloadStore is a database that can keep payloads in an object store.
type payloadStore interface {
	UsePayloads(*payloads.Bucket)
	ResultPayloads(ctx context.Context, key string) (request, response store.Payload, ok bool, err error)
}

// usePayloads opens the object store --payloads names and gives it to s:
// a store that cannot be reached stops the command before anything is paid.
func usePayloads(ctx context.Context, s store.Store, raw string) error {
	ps, ok := s.(payloadStore)
	if !ok {
		return fmt.Errorf("database %s cannot keep payloads in an object store. Try: without --payloads", s.Path())
	}
	b, err := openPayloads(ctx, raw)
	if err != nil {
		return err
	}
	ps.UsePayloads(b)
	return nil
}

// openPayloads opens the payload store raw names: a URL naming no store
// digest can open is a usage error (exit 2), a store that cannot be
// reached an error of the run.
func openPayloads(ctx context.Context, raw string) (*payloads.Bucket, error) {
	b, err := payloads.Open(ctx, raw)
	if bad := (*payloads.URLError)(nil); errors.As(err, &bad) {
		return nil, cmdutil.AsUsage(err)
	}
	return b, err
}

// openDB opens the database --db names to read and write, creating an
// SQLite file that does not exist yet.
func openDB(ctx context.Context, raw string) (store.Store, error) {
	return openDBFor(ctx, raw, cmdutil.Create)
}

// openDBFor opens the database --db names as access asks. An SQLite file
// is created only for Create; to Read, one digest may not write to is
// opened read-only.
func openDBFor(ctx context.Context, raw string, access cmdutil.Access) (store.Store, error) {
	db, err := parseDB(raw)
	if err != nil {
		return nil, err
	}
	var s store.Store
	switch {
	case db.Server:
		s, err = postgres.Open(ctx, db.Name)
	case access == cmdutil.Create:
		s, err = sqlite.Open(ctx, db.Name)
	default:
		s, err = sqlite.OpenExisting(ctx, db.Name, access == cmdutil.Write)
	}
	if err != nil {
		return nil, err // not a typed nil in the interface
	}
	return s, nil
}

// providers lists the provider names --model accepts.
var providers = []string{provider.Offline, "openai", openai.ResponsesProvider, "anthropic", "ollama"}

// newProvider returns the provider for spec, configured from the
// environment. API keys are read here and passed to the client alone: they
// are never logged, stored or printed.
func newProvider(f *cmdutil.Factory, spec provider.Spec, o cmdutil.ProviderOptions) (provider.Provider, error) {
	url, err := factory{f}.BaseURL(spec, o.BaseURL)
	if err != nil {
		return nil, err
	}
	key := func(env string, required bool) (string, error) {
		k := strings.TrimSpace(f.Getenv(env))
		if k == "" && required {
			return "", cmdutil.UsageError("model %s needs an API key in %s, which is not set. Try: export %s=<your key>, or the offline model", spec, env, env)
		}
		return k, nil
	}
	switch spec.Provider {
	case provider.Offline:
		return offline.New(o.Tokenizer.Count), nil
	case "openai", openai.ResponsesProvider:
		// A server of one's own (vLLM, LM Studio) usually takes no key.
		k, err := key("OPENAI_API_KEY", url == openai.DefaultBaseURL)
		if err != nil {
			return nil, err
		}
		opts := openai.Options{Name: "openai", BaseURL: url, APIKey: k, KeyEnv: "OPENAI_API_KEY", HTTPClient: httpClient(o.Concurrency)}
		// Pro, codex and deep-research models answer on the Responses API
		// alone; openai-responses:MODEL sends any model there.
		if spec.Provider == openai.ResponsesProvider || provider.RulesFor(spec.Model).ResponsesOnly {
			return openai.NewResponses(opts), nil
		}
		return openai.New(opts), nil
	case "anthropic":
		k, err := key("ANTHROPIC_API_KEY", url == anthropic.DefaultBaseURL)
		if err != nil {
			return nil, err
		}
		return anthropic.New(anthropic.Options{BaseURL: url, APIKey: k, KeyEnv: "ANTHROPIC_API_KEY", HTTPClient: httpClient(o.Concurrency)}), nil
	case "ollama":
		return openai.New(openai.Options{Name: "ollama", BaseURL: url, HTTPClient: httpClient(o.Concurrency)}), nil
	}
	return nil, cmdutil.UsageError("unknown provider %q in model %s. Try: one of %s", spec.Provider, spec, strings.Join(providers, ", "))
}

// factory is the Factory with what cmd knows of models: where each is
// served from, the rate limit it shares, and the target.Target every
// command sends to, built by target and connect around the Factory's
// Provider (the one piece of a model a test replaces).
type factory struct{ *cmdutil.Factory }

// LimitName names the rate limit a model's requests share with every
// process using the same account: provider, base URL (as BaseURL resolves
// flag), model, and a hash of the API key newProvider would send, never
// the key. The offline model has no limit: "".
func (f factory) LimitName(spec provider.Spec, flag string) (string, error) {
	if spec.Provider == provider.Offline {
		return "", nil
	}
	url, err := f.BaseURL(spec, flag)
	if err != nil {
		return "", err
	}
	apiKey, prov := "", spec.Provider
	switch spec.Provider {
	case "openai", openai.ResponsesProvider:
		// OpenAI limits a model per account whichever API it answers on.
		apiKey, prov = strings.TrimSpace(f.Getenv("OPENAI_API_KEY")), "openai"
	case "anthropic":
		apiKey = strings.TrimSpace(f.Getenv("ANTHROPIC_API_KEY"))
	}
	return sharedlimit.Name(prov, url, spec.Model, apiKey), nil
}

// BaseURL is the endpoint a model is served from: --base-url, else the
// provider's variable, else its default. It is part of every evaluation
// key, since another server is another model. An address that is not an
// http or https URL with a host is a usage error naming where it came from:
// sent as it is, it would fail every request as if the network did.
func (f factory) BaseURL(spec provider.Spec, flag string) (string, error) {
	from, raw := "--base-url", flag
	if raw == "" {
		switch spec.Provider {
		case "openai", openai.ResponsesProvider:
			from, raw = "OPENAI_BASE_URL", cmp.Or(f.Getenv("OPENAI_BASE_URL"), openai.DefaultBaseURL)
		case "anthropic":
			from, raw = "ANTHROPIC_BASE_URL", cmp.Or(f.Getenv("ANTHROPIC_BASE_URL"), anthropic.DefaultBaseURL)
		case "ollama":
			host := cmp.Or(f.Getenv("OLLAMA_HOST"), "http://localhost:11434")
			if !strings.Contains(host, "://") {
				host = "http://" + host // OLLAMA_HOST is often host:port
			}
			from, raw = "OLLAMA_HOST", strings.TrimRight(host, "/")+"/v1"
		default:
			return "", nil
		}
	}
	if spec.Provider == provider.Offline {
		return "", nil
	}
	if err := checkBaseURL(raw); err != nil {
		return "", cmdutil.UsageError("%s %s %v", from, textsafe.URL(raw), err)
	}
	return raw, nil
}

// checkBaseURL says what keeps raw from being a server's address.
func checkBaseURL(raw string) error {
	u, err := url.Parse(raw)
	scheme := ""
	if err == nil {
		scheme = strings.ToLower(u.Scheme)
	}
	switch {
	case err != nil:
		return fmt.Errorf("is not a URL. Try: one such as http://localhost:8000/v1")
	case !strings.Contains(raw, "://"):
		// "localhost:11434" parses as scheme "localhost"; "host/v1" as a path.
		return fmt.Errorf("has no http:// or https:// in front. Try: http://%s", textsafe.URL(raw))
	case scheme != "http" && scheme != "https":
		return fmt.Errorf("is not an http or https URL. Try: one such as http://localhost:8000/v1")
	case u.Hostname() == "":
		return fmt.Errorf("names no host. Try: one such as http://localhost:8000/v1")
	case u.RawQuery != "" || u.Fragment != "":
		return fmt.Errorf("has a query or fragment, which digest would drop. Try: the server's address alone")
	}
	return nil
}

// httpClient shares one transport among a model's requests, keeping as many
// connections alive as there are requests in flight. Timeouts are the
// engine's, per attempt.
func httpClient(concurrency int) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = max(2, concurrency)
	t.MaxIdleConns = max(100, concurrency)
	return &http.Client{Transport: t}
}

// runDeps are what a command's run takes: the factory itself, as gh
// passes its own (streams, the environment, the globals, the database,
// logging and the provider, each a field or method a test can replace),
// and the targets it configures.
type runDeps struct {
	factory
	IO *iostreams.IOStreams // the factory's IOStreams
}

func newRunDeps(f *cmdutil.Factory) runDeps {
	return runDeps{factory: factory{f}, IO: f.IOStreams}
}

// targetFlags are the flags that configure a model, read alike for
// summarize's model, eval's models and eval's judge: factory.target and
// factory.connect build every target.Target from them, so that the same
// flags give every model the same limits, prices and rules.
type targetFlags struct {
	BaseURL  string        // --base-url; "" for the provider's variable, else its default
	RPM, TPM int           // --rpm, --tpm; 0 for --model-config's, else the built-in table's
	Price    string        // --price (summarize's alone)
	File     models.File   // --model-config, as read
	Mode     batchrun.Mode // --batch-api and the flags beside it
	// DryRun leaves a target unconnected: a dry run needs no key, calls
	// nobody and paces nothing.
	DryRun      bool
	Concurrency int                  // sizes the client's connection pool
	Tokenizer   *tokenizer.Tokenizer // the run's, which the offline model counts its usage in; set before connect
}

// target is the configured model spec names, as far as it is known
// without a key or the network: its limits and prices as the built-in
// table, the models file and the flags resolve them (models.File.Resolve),
// its price in the run's mode (the batch price with --batch-api), the
// base URL it is served from, and its request rules. Every error is a
// usage error, before anything is read or sent; connect adds the client.
func (d factory) target(spec provider.Spec, f targetFlags) (target.Target, error) {
	info, err := f.File.Resolve(spec, models.Overrides{RPM: f.RPM, TPM: f.TPM, Price: f.Price})
	if err != nil {
		return target.Target{}, cmdutil.AsUsage(err)
	}
	base, err := d.BaseURL(spec, f.BaseURL)
	if err != nil {
		return target.Target{}, err
	}
	price, err := priceOf(info, spec, f.Mode)
	if err != nil {
		return target.Target{}, err
	}
	return target.Target{
		Spec: spec, BaseURL: base,
		Limits: engine.Limits{RPM: info.RPM, TPM: info.TPM, Window: time.Minute},
		Price:  price, SyncPrice: info.Price, PriceUnknown: !info.Known,
		Rules: provider.ProviderRules(spec),
	}, nil
}

// connect gives a target what sending to it takes, unless the run is a dry
// run: its client (an API key missing is a usage error naming the
// variable), the name of the rate limit it shares with other processes on
// the same account, and with --batch-api its batch API, checked to answer
// (a server without batch endpoints is refused before anything is sent).
// The client is served from the base URL target resolved.
func (d factory) connect(ctx context.Context, t *target.Target, f targetFlags) error {
	if f.DryRun {
		return nil
	}
	p, err := d.Provider(t.Spec, cmdutil.ProviderOptions{Tokenizer: f.Tokenizer, BaseURL: t.BaseURL, Concurrency: f.Concurrency})
	if err != nil {
		return err
	}
	name, err := d.LimitName(t.Spec, t.BaseURL)
	if err != nil {
		return err
	}
	var b provider.Batcher
	if f.Mode.On {
		if b, err = batcherOf(ctx, p, t.Spec, t.BaseURL); err != nil {
			return err
		}
	}
	t.Provider, t.LimitName, t.Batcher = p, name, b
	return nil
}

// priceOf is what a model's answers cost in the mode the run sends them.
func priceOf(info models.Info, spec provider.Spec, mode batchrun.Mode) (models.Price, error) {
	if !mode.On {
		return info.Price, nil
	}
	p, ok := info.Batched(spec)
	if !ok {
		return p, noBatchAPI(spec)
	}
	return p, nil
}

// learnFactors gives each target what st holds of its model's tokenizer
// (see target.Target.Learn).
func learnFactors(ctx context.Context, st store.Store, targets []*target.Target) error {
	for _, t := range targets {
		if err := t.Learn(ctx, st); err != nil {
			return err
		}
	}
	return nil
}

// saveFactors keeps what the run learned of each target's tokenizer for
// the runs after it. A failure to keep it loses no result: it is logged.
func saveFactors(ctx context.Context, st store.Store, targets []*target.Target, log *slog.Logger) {
	for _, t := range targets {
		if err := t.SaveFactor(ctx, st); err != nil {
			log.Warn("the learned token factor was not saved", "model", t.Spec.String(), "err", err)
		}
	}
}

// addEffortFlag adds --reasoning-effort, the same for every command.
func addEffortFlag(fl *pflag.FlagSet, into *string) {
	fl.StringVar(into, "reasoning-effort", "", "low, medium or high, for models that reason (default: the model's; Claude models that think by default do not)")
}

// checkEffort refuses a --reasoning-effort no API takes.
func checkEffort(v string) error {
	if v != "" && !slices.Contains(provider.Efforts, v) {
		return cmdutil.UsageError("--reasoning-effort %q is not one of %s. Try: --reasoning-effort medium", v, strings.Join(provider.Efforts, ", "))
	}
	return nil
}

// secrets are the environment's secrets, to be scrubbed from whatever is
// sent, stored or reported: every variable whose name says it holds one,
// and the API keys digest reads, as getenv gives them.
func secrets(getenv func(string) string) redact.Secrets {
	env := os.Environ()
	for _, name := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY"} {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			env = append(env, name+"="+v)
		}
	}
	return redact.EnvSecrets(env)
}
