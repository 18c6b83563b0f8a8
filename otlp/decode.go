package otlp

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"mime"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// Encoding is one of OTLP/HTTP's two body encodings. A response is
// encoded as its request was.
type Encoding int

const (
	Protobuf Encoding = iota // application/x-protobuf
	JSON                     // application/json
)

// ContentType is the media type of the encoding.
func (e Encoding) ContentType() string {
	if e == JSON {
		return "application/json"
	}
	return "application/x-protobuf"
}

// EncodingOf maps a Content-Type header to its encoding; false for any
// other media type (OTLP/HTTP answers those 415).
func EncodingOf(contentType string) (Encoding, bool) {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return Protobuf, false
	}
	switch mt {
	case "application/x-protobuf", "application/protobuf":
		return Protobuf, true
	case "application/json":
		return JSON, true
	}
	return Protobuf, false
}

// Marshal encodes m as the encoding says (OTLP/JSON's names are
// protojson's lowerCamelCase ones; responses carry no ids).
func (e Encoding) Marshal(m proto.Message) ([]byte, error) {
	if e == JSON {
		return protojson.Marshal(m)
	}
	return proto.Marshal(m)
}

// Decode reads an ExportTraceServiceRequest. Its error says what is
// malformed, for a 400.
func Decode(body []byte, enc Encoding) (*coltracepb.ExportTraceServiceRequest, error) {
	req := &coltracepb.ExportTraceServiceRequest{}
	if enc == Protobuf {
		if err := proto.Unmarshal(body, req); err != nil {
			return nil, fmt.Errorf("malformed protobuf ExportTraceServiceRequest: %w", err)
		}
		return req, nil
	}
	body, err := hexIDsToBase64(body)
	if err != nil {
		return nil, err
	}
	// Unknown fields are ignored, as the OTLP/JSON spec requires.
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(body, req); err != nil {
		return nil, fmt.Errorf("malformed OTLP/JSON ExportTraceServiceRequest: %w", err)
	}
	return req, nil
}

// hexIDsToBase64 rewrites the trace and span ids of an OTLP/JSON body,
// which the OTLP spec encodes as hex strings, to the base64 that the
// protobuf JSON mapping (protojson) reads for bytes fields. Numbers stay
// as written (json.Number), so 64-bit nanosecond times keep every digit.
func hexIDsToBase64(body []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("malformed OTLP/JSON ExportTraceServiceRequest: %w", err)
	}
	for i, rs := range objects(doc, "resourceSpans", "resource_spans") {
		for j, ss := range objects(rs, "scopeSpans", "scope_spans") {
			for k, sp := range objects(ss, "spans") {
				at := fmt.Sprintf("resourceSpans[%d].scopeSpans[%d].spans[%d]", i, j, k)
				if err := rewriteIDs(sp, at); err != nil {
					return nil, err
				}
				for l, ln := range objects(sp, "links") {
					if err := rewriteIDs(ln, fmt.Sprintf("%s.links[%d]", at, l)); err != nil {
						return nil, err
					}
				}
			}
		}
	}
	return json.Marshal(doc)
}

// objects is the array of objects under the first of names present in
// m; anything else there is left for protojson to refuse.
func objects(m map[string]any, names ...string) []map[string]any {
	for _, n := range names {
		arr, ok := m[n].([]any)
		if !ok {
			continue
		}
		out := make([]map[string]any, 0, len(arr))
		for _, v := range arr {
			if o, ok := v.(map[string]any); ok {
				out = append(out, o)
			}
		}
		return out
	}
	return nil
}

var errHexID = errors.New("must be a hex string")

func rewriteIDs(m map[string]any, at string) error {
	for _, names := range [][2]string{{"traceId", "trace_id"}, {"spanId", "span_id"}, {"parentSpanId", "parent_span_id"}} {
		for _, n := range names {
			s, ok := m[n].(string)
			if !ok {
				continue
			}
			raw, err := hex.DecodeString(s)
			if err != nil {
				return fmt.Errorf("%s.%s: %w (OTLP/JSON encodes ids in hex)", at, names[0], errHexID)
			}
			m[n] = base64.StdEncoding.EncodeToString(raw)
		}
	}
	return nil
}
