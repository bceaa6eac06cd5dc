package promptfoo

import (
	"fmt"
	"math"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// pair is one key of a YAML mapping, with the node it came from for
// positions in messages.
type pair struct {
	key     string
	keyNode *yaml.Node
	val     *yaml.Node
}

// deref follows aliases and documents to the node they stand for.
func deref(n *yaml.Node) *yaml.Node {
	for n != nil {
		switch {
		case n.Kind == yaml.AliasNode:
			n = n.Alias
		case n.Kind == yaml.DocumentNode && len(n.Content) > 0:
			n = n.Content[0]
		default:
			return n
		}
	}
	return n
}

// pairs lists a mapping's keys in order, with YAML merge keys (<<: *base)
// expanded the way yaml decoders do: the mapping's own keys win.
func pairs(n *yaml.Node) []pair {
	return pairsDepth(n, 0)
}

func pairsDepth(n *yaml.Node, depth int) []pair {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode || depth > 32 {
		return nil
	}
	var own, merged []pair
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
			src := deref(v)
			if src.Kind == yaml.SequenceNode {
				for _, e := range src.Content {
					merged = append(merged, pairsDepth(e, depth+1)...)
				}
			} else {
				merged = append(merged, pairsDepth(src, depth+1)...)
			}
			continue
		}
		own = append(own, pair{key: k.Value, keyNode: n.Content[i], val: v})
	}
	if len(merged) == 0 {
		return own
	}
	seen := map[string]bool{}
	for _, p := range own {
		seen[p.key] = true
	}
	for _, p := range merged {
		if !seen[p.key] {
			seen[p.key] = true
			own = append(own, p)
		}
	}
	return own
}

func isMapping(n *yaml.Node) bool  { n = deref(n); return n != nil && n.Kind == yaml.MappingNode }
func isSequence(n *yaml.Node) bool { n = deref(n); return n != nil && n.Kind == yaml.SequenceNode }

// isText reports whether n is a scalar that is not null.
func isText(n *yaml.Node) bool {
	n = deref(n)
	return n != nil && n.Kind == yaml.ScalarNode && n.Tag != "!!null"
}

func isNullNode(n *yaml.Node) bool {
	n = deref(n)
	return n == nil || n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// yamlKind names what a node is, for messages.
func yamlKind(n *yaml.Node) string {
	n = deref(n)
	switch {
	case n == nil:
		return "nothing"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case n.Tag == "!!null":
		return "null"
	case n.Tag == "!!str":
		return "a string"
	case n.Tag == "!!int" || n.Tag == "!!float":
		return "a number"
	case n.Tag == "!!bool":
		return "a boolean"
	}
	return "a " + n.Tag
}

// number reads a YAML number.
func yamlNumber(n *yaml.Node) (float64, bool) {
	n = deref(n)
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag != "!!int" && n.Tag != "!!float" {
		return 0, false
	}
	var f float64
	if err := n.Decode(&f); err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// yamlValue decodes a node into plain values that encode as JSON: mappings
// with keys of any kind become map[string]any, and what JSON cannot hold
// (NaN, infinities) is an error.
func yamlValue(n *yaml.Node) (any, error) {
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, err
	}
	return jsonable(v, 0)
}

func jsonable(v any, depth int) (any, error) {
	if depth > 64 {
		return nil, fmt.Errorf("nested more than 64 levels deep")
	}
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			j, err := jsonable(e, depth+1)
			if err != nil {
				return nil, err
			}
			v[k] = j
		}
		return v, nil
	case map[any]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			j, err := jsonable(e, depth+1)
			if err != nil {
				return nil, err
			}
			out[fmt.Sprint(k)] = j
		}
		return out, nil
	case []any:
		for i, e := range v {
			j, err := jsonable(e, depth+1)
			if err != nil {
				return nil, err
			}
			v[i] = j
		}
		return v, nil
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%s is not a number JSON can hold", strconv.FormatFloat(v, 'g', -1, 64))
		}
	}
	return v, nil
}
