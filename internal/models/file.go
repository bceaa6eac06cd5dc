package models

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/digest-cli/digest/internal/provider"
)

// File is a models file: the figures of the user's own account, by model
// spec, over the built-in table. For example:
//
//	{"openai:gpt-4o-mini": {"rpm": 5000, "tpm": 4000000},
//	 "openai:my-finetune": {"price": {"input_per_million": 0.3, "output_per_million": 1.2}}}
type File map[string]Info

// LoadFile reads a models file. A key it does not know is refused, not
// ignored: "rmp" for "rpm" would leave the account's limit unset, and the
// run far slower or far faster than the user asked, with nothing said.
func LoadFile(path string) (File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("models file: %w", err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("models file %s: %v. Try: a JSON object such as %s", path, err, example)
	}
	f := make(File, len(raw))
	for _, spec := range slices.Sorted(maps.Keys(raw)) {
		if _, err := provider.ParseSpec(spec); err != nil {
			return nil, fmt.Errorf("models file %s: %v", path, err)
		}
		info, err := parseInfo(raw[spec])
		if err != nil {
			return nil, fmt.Errorf("models file %s: %s: %v", path, spec, err)
		}
		f[spec] = info
	}
	return f, nil
}

const example = `{"openai:gpt-4o-mini": {"rpm": 500, "tpm": 200000, "price": {"input_per_million": 0.15, "output_per_million": 0.6}}}`

// The keys of a model's figures and of its price, with an example of each.
var (
	infoKeys = map[string]string{
		"rpm":         `"rpm": 500`,
		"tpm":         `"tpm": 200000`,
		"price":       `"price": {"input_per_million": 0.15, "output_per_million": 0.6}`,
		"batch_price": `"batch_price": {"input_per_million": 0.075, "output_per_million": 0.3}`,
		"context":     `"context": 128000`,
		"max_output":  `"max_output": 16384`,
	}
	priceKeys = map[string]string{
		"input_per_million":        `"input_per_million": 0.15`,
		"output_per_million":       `"output_per_million": 0.6`,
		"cached_input_per_million": `"cached_input_per_million": 0.075`,
		"cache_write_per_million":  `"cache_write_per_million": 0.1875`,
	}
	// requiredPriceKeys are the halves a price cannot go without: a
	// missing one would charge its tokens as free. A missing cache price
	// charges those tokens as input.
	requiredPriceKeys = []string{"input_per_million", "output_per_million"}
)

// parseInfo reads one model's figures, refusing unknown keys, values of
// the wrong kind, negative figures and half a price.
func parseInfo(raw json.RawMessage) (Info, error) {
	var info Info
	fields, err := object(raw, infoKeys, "")
	if err != nil {
		return info, err
	}
	for _, name := range []string{"price", "batch_price"} {
		price, ok := fields[name]
		if !ok {
			continue
		}
		priced, err := object(price, priceKeys, name+": ")
		if err != nil {
			return info, err
		}
		for _, k := range requiredPriceKeys {
			if _, ok := priced[k]; !ok {
				return info, fmt.Errorf("%s has no %s; a price missing one would charge it as free. Try: %s", name, k, infoKeys[name])
			}
		}
	}
	if err := json.Unmarshal(raw, &info); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			want := "a whole number"
			if strings.HasPrefix(te.Field, "price.") || strings.HasPrefix(te.Field, "batch_price.") {
				want = "a number of dollars"
			}
			return info, fmt.Errorf("%s is %s, not %s. Try: %s", te.Field, te.Value, want, exampleOf(te.Field))
		}
		return info, err
	}
	figures := []struct {
		name  string
		value float64
	}{{"rpm", float64(info.RPM)}, {"tpm", float64(info.TPM)}, {"context", float64(info.Context)}, {"max_output", float64(info.MaxOutput)}}
	figures = append(figures, priceFigures("price", info.Price)...)
	if info.BatchPrice != nil {
		figures = append(figures, priceFigures("batch_price", *info.BatchPrice)...)
	}
	for _, figure := range figures {
		if figure.value < 0 {
			return info, fmt.Errorf("%s is %v; it cannot be negative. Try: %s", figure.name, figure.value, exampleOf(figure.name))
		}
	}
	return info, nil
}

// priceFigures are a price's four figures under their names in a models
// file, such as "price.cached_input_per_million".
func priceFigures(name string, p Price) []struct {
	name  string
	value float64
} {
	return []struct {
		name  string
		value float64
	}{
		{name + ".input_per_million", p.InputPerM}, {name + ".output_per_million", p.OutputPerM},
		{name + ".cached_input_per_million", p.CachedInputPerM}, {name + ".cache_write_per_million", p.CacheWritePerM},
	}
}

func exampleOf(field string) string {
	for _, prefix := range []string{"price.", "batch_price."} {
		if k, ok := strings.CutPrefix(field, prefix); ok {
			return priceKeys[k]
		}
	}
	return infoKeys[field]
}

// object reads raw as a JSON object of known's keys, refusing another key
// with the closest known one to try.
func object(raw json.RawMessage, known map[string]string, where string) (map[string]json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		got := strings.Join(strings.Fields(string(raw)), " ")
		if len(got) > 40 {
			got = got[:40] + "..."
		}
		return nil, fmt.Errorf("%swant an object, got %s. Try: {%s}", where, got, strings.Join(sortedValues(known), ", "))
	}
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if _, ok := known[k]; !ok {
			return nil, fmt.Errorf("%sunknown field %q. Try: %s", where, k, closest(k, slices.Sorted(maps.Keys(known))))
		}
	}
	return obj, nil
}

func sortedValues(m map[string]string) []string {
	var vs []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		vs = append(vs, m[k])
	}
	return vs
}

// closest is the known key nearest to k, when one is near enough to be
// what was meant, or else all of them.
func closest(k string, known []string) string {
	best, bestDistance := "", len(k)
	for _, c := range known {
		if d := typoDistance(strings.ToLower(k), c); d < bestDistance {
			best, bestDistance = c, d
		}
	}
	if best == "" || bestDistance > max(2, len(best)/3) {
		return "one of " + strings.Join(known, ", ")
	}
	return best
}

// typoDistance counts the edits from a to b, a swap of neighbours being
// one edit as a deletion is: "rmp" is one from "rpm", two from "tpm".
func typoDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// Lookup is Lookup with the file's figures, where it gives them, taking
// precedence over the built-in ones.
func (f File) Lookup(spec provider.Spec) Info {
	info := Lookup(spec)
	mine, ok := f[spec.String()]
	if !ok {
		return info
	}
	if mine.RPM > 0 {
		info.RPM = mine.RPM
	}
	if mine.TPM > 0 {
		info.TPM = mine.TPM
	}
	if mine.Price != (Price{}) {
		info.Price = mine.Price
		info.Known = true
	}
	if mine.BatchPrice != nil {
		info.BatchPrice = mine.BatchPrice
	}
	if mine.Context > 0 {
		info.Context = mine.Context
	}
	if mine.MaxOutput > 0 {
		info.MaxOutput = mine.MaxOutput
	}
	return info
}

// PriceForm is what --price takes.
const PriceForm = "INPUT/OUTPUT[/CACHED_INPUT[/CACHE_WRITE]] dollars per million tokens"

// ParsePrice reads a --price value: "INPUT/OUTPUT", "INPUT/OUTPUT/CACHED_INPUT"
// or "INPUT/OUTPUT/CACHED_INPUT/CACHE_WRITE", in dollars per million
// tokens. A cache price left out charges those tokens as input.
func ParsePrice(s string) (Price, error) {
	const try = "Try: --price 0.15/0.60, or with cache prices --price 3/15/0.30/3.75"
	parts := strings.Split(s, "/")
	if len(parts) < 2 || len(parts) > 4 {
		return Price{}, fmt.Errorf("--price %q has %d part(s); it takes %s. %s", s, len(parts), PriceForm, try)
	}
	var figures [4]float64
	for i, part := range parts {
		part = strings.TrimSpace(part)
		v, err := strconv.ParseFloat(part, 64)
		switch {
		case err != nil || math.IsNaN(v) || math.IsInf(v, 0):
			return Price{}, fmt.Errorf("--price %q: %q is not a number of dollars; it takes %s. %s", s, part, PriceForm, try)
		case v < 0:
			return Price{}, fmt.Errorf("--price %q: %s cannot be negative; it takes %s. %s", s, part, PriceForm, try)
		}
		figures[i] = v
	}
	return price(figures[0], figures[1], figures[2], figures[3]), nil
}

// Overrides are the flags that set a model's figures over the built-in
// table and the models file: --rpm, --tpm (0: not given) and --price.
type Overrides struct {
	RPM, TPM int
	Price    string // PriceForm, "" when not given
}

// Resolve gives spec's figures as every command reads them: the built-in
// table, then the models file, then the flags.
func (f File) Resolve(spec provider.Spec, o Overrides) (Info, error) {
	info := f.Lookup(spec)
	if o.RPM > 0 {
		info.RPM = o.RPM
	}
	if o.TPM > 0 {
		info.TPM = o.TPM
	}
	if o.Price != "" {
		p, err := ParsePrice(o.Price)
		if err != nil {
			return info, err
		}
		info.Price, info.Known = p, true
	}
	return info, nil
}
