// Command gen writes testdata/bucketing/vectors.json from the bucketing
// package. The expected buckets are re-derived independently by
// ../crosscheck.py (Python hashlib and fractions), which the bucketing tests
// run, so the file is not merely consistent with the code that wrote it.
//
// Run it with `go generate ./bucketing`.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/testdata/bucketing/vectors"
)

func main() {
	out := flag.String("o", "testdata/bucketing/vectors.json", "path of the vector file to write")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(path string) error {
	initial, err := initialMapCases()
	if err != nil {
		return err
	}
	rebalance, err := rebalanceCases()
	if err != nil {
		return err
	}
	file := &vectors.File{
		Format: 1,
		Notes: []string{
			"Rules: bucketing/doc.go. bucket = first 8 bytes of SHA-256(experiment_id + '.' + salt + '.' + user_id) over the exact UTF-8 bytes (no normalization), big-endian uint64, modulo bucket_count.",
			"Maps are canonical: ranges [start, end) sorted by start, covering [0, bucket_count), adjacent ranges of one variant merged.",
			"lookup_cases with variant null: no range holds the bucket (it is >= bucket_count).",
			"Regenerate with `go generate ./bucketing`; cross-check with `python3 testdata/bucketing/crosscheck.py`.",
		},
		MinBucketCount:  bucketing.MinBucketCount,
		MaxBucketCount:  bucketing.MaxBucketCount,
		BucketCases:     bucketCases(),
		InitialMapCases: initial,
		RebalanceCases:  rebalance,
		LookupCases:     lookupCases(initial, rebalance),
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	if err := file.Write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
