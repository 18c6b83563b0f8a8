// Package vectors reads and writes testdata/bucketing/vectors.json, the
// language-neutral cases that every bucketing implementation (server, Go SDK,
// Python SDK) is tested against. It is shared by the generator and the Go
// tests so both agree on the file's shape.
package vectors

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/expd/expd/bucketing"
)

// File is the whole vector file.
type File struct {
	Format          int              `json:"format"`
	Notes           []string         `json:"notes"`
	MinBucketCount  uint32           `json:"min_bucket_count"`
	MaxBucketCount  uint32           `json:"max_bucket_count"`
	BucketCases     []BucketCase     `json:"bucket_cases"`
	InitialMapCases []InitialMapCase `json:"initial_map_cases"`
	RebalanceCases  []RebalanceCase  `json:"rebalance_cases"`
	LookupCases     []LookupCase     `json:"lookup_cases"`
}

// BucketCase: Bucket(ExperimentID, Salt, UserID, BucketCount) == Bucket.
type BucketCase struct {
	ExperimentID string `json:"experiment_id"`
	Salt         string `json:"salt"`
	BucketCount  uint32 `json:"bucket_count"`
	UserID       string `json:"user_id"`
	Bucket       uint32 `json:"bucket"`
}

// InitialMapCase: InitialMap(Allocation, BucketCount) == Map.
type InitialMapCase struct {
	BucketCount uint32            `json:"bucket_count"`
	Allocation  []bucketing.Slice `json:"allocation"`
	Map         bucketing.Map     `json:"map"`
}

// RebalanceCase: Rebalance(OldMap, Allocation, BucketCount) == Map.
type RebalanceCase struct {
	BucketCount uint32            `json:"bucket_count"`
	OldMap      bucketing.Map     `json:"old_map"`
	Allocation  []bucketing.Slice `json:"allocation"`
	Map         bucketing.Map     `json:"map"`
}

// LookupCase: Map.Lookup(Bucket) == Variant; a nil Variant (JSON null) means
// no range holds the bucket.
type LookupCase struct {
	Map     bucketing.Map `json:"map"`
	Bucket  uint32        `json:"bucket"`
	Variant *string       `json:"variant"`
}

// Read loads a vector file.
func Read(path string) (*File, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read vectors: %w", err)
	}
	var f File
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("parse vectors %s: %w", path, err)
	}
	return &f, nil
}

// Write encodes f with one case per line, so diffs of the file stay readable.
// Strings are written as raw UTF-8 (no HTML escaping), which SDK parsers
// must handle.
func (f *File) Write(out io.Writer) error {
	w := &lineWriter{buf: bufio.NewWriter(out)}
	w.printf("{\n")
	w.field("format", f.Format, ",\n")
	w.field("notes", f.Notes, ",\n")
	w.field("min_bucket_count", f.MinBucketCount, ",\n")
	w.field("max_bucket_count", f.MaxBucketCount, ",\n")
	writeCases(w, "bucket_cases", f.BucketCases, ",\n")
	writeCases(w, "initial_map_cases", f.InitialMapCases, ",\n")
	writeCases(w, "rebalance_cases", f.RebalanceCases, ",\n")
	writeCases(w, "lookup_cases", f.LookupCases, "\n")
	w.printf("}\n")
	if w.err != nil {
		return fmt.Errorf("write vectors: %w", w.err)
	}
	if err := w.buf.Flush(); err != nil {
		return fmt.Errorf("write vectors: %w", err)
	}
	return nil
}

func writeCases[T any](w *lineWriter, name string, cases []T, after string) {
	w.printf("%s: [\n", w.encode(name))
	for i, c := range cases {
		sep := ",\n"
		if i == len(cases)-1 {
			sep = "\n"
		}
		w.printf("  %s%s", w.encode(c), sep)
	}
	w.printf("]%s", after)
}

// lineWriter keeps the first error so Write can check once at the end.
type lineWriter struct {
	buf *bufio.Writer
	err error
}

func (w *lineWriter) field(name string, value any, after string) {
	w.printf("%s: %s%s", w.encode(name), w.encode(value), after)
}

func (w *lineWriter) encode(v any) string {
	var sb strings.Builder
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil && w.err == nil {
		w.err = err
	}
	return strings.TrimSuffix(sb.String(), "\n") // the encoder ends every value with a newline
}

func (w *lineWriter) printf(format string, args ...any) {
	if w.err != nil {
		return
	}
	_, w.err = fmt.Fprintf(w.buf, format, args...)
}
