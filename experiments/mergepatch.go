package experiments

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/expd/expd/validate"
)

// MergePatch applies the JSON merge patch patch (RFC 7396) to the object
// target, after removing the members drop from target: objects merge
// member by member, null removes a member, anything else (arrays
// included) replaces it whole. The patch must be a JSON object.
func MergePatch(target, patch []byte, drop ...string) ([]byte, error) {
	var doc map[string]any
	td := json.NewDecoder(bytes.NewReader(target))
	td.UseNumber()
	if err := td.Decode(&doc); err != nil {
		return nil, fmt.Errorf("decode the current config: %w", err)
	}
	for _, k := range drop {
		delete(doc, k)
	}
	dec := json.NewDecoder(bytes.NewReader(patch))
	dec.UseNumber() // numbers pass through unchanged (bucket_count, weights)
	var p any
	if err := dec.Decode(&p); err != nil {
		return nil, validate.DecodeError(err)
	}
	obj, ok := p.(map[string]any)
	if !ok {
		return nil, validate.New("body", "a merge patch of an experiment must be a JSON object")
	}
	return json.Marshal(merge(doc, obj))
}

func merge(target any, patch map[string]any) map[string]any {
	t, ok := target.(map[string]any)
	if !ok {
		t = map[string]any{}
	}
	for k, v := range patch {
		switch pv := v.(type) {
		case nil:
			delete(t, k)
		case map[string]any:
			t[k] = merge(t[k], pv)
		default:
			t[k] = v
		}
	}
	return t
}
