package dashboard

import (
	"encoding/json"
	"strings"

	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/experiments"
)

// diffLine is one line of a line diff: Op is "add", "del" or "same".
type diffLine struct {
	Op, Text string
}

// configDiff diffs two configs as indented JSON, line by line. Unchanged
// runs longer than a few lines are folded to keep the change readable.
func configDiff(old, new experiments.Config) []diffLine {
	a, b := configLines(old), configLines(new)
	return fold(lineDiff(a, b), 2)
}

func configLines(c experiments.Config) []string {
	buf, _ := json.MarshalIndent(c, "", "  ")
	return strings.Split(string(buf), "\n")
}

// lineDiff is the longest-common-subsequence diff of two line lists.
func lineDiff(a, b []string) []diffLine {
	n, m := len(a), len(b)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []diffLine
	i, j := 0, 0
	for i < n && j < m {
		switch {
		case a[i] == b[j]:
			out = append(out, diffLine{"same", a[i]})
			i, j = i+1, j+1
		case lcs[i+1][j] >= lcs[i][j+1]:
			out = append(out, diffLine{"del", a[i]})
			i++
		default:
			out = append(out, diffLine{"add", b[j]})
			j++
		}
	}
	for ; i < n; i++ {
		out = append(out, diffLine{"del", a[i]})
	}
	for ; j < m; j++ {
		out = append(out, diffLine{"add", b[j]})
	}
	return out
}

// fold keeps context lines around changes and replaces the rest by "…".
func fold(lines []diffLine, context int) []diffLine {
	keep := make([]bool, len(lines))
	for i, l := range lines {
		if l.Op == "same" {
			continue
		}
		for k := max(0, i-context); k <= min(len(lines)-1, i+context); k++ {
			keep[k] = true
		}
	}
	var out []diffLine
	for i, l := range lines {
		if keep[i] {
			out = append(out, l)
		} else if len(out) == 0 || out[len(out)-1].Text != "…" {
			out = append(out, diffLine{"same", "…"})
		}
	}
	return out
}

// changed tells whether a diff has any change.
func changed(lines []diffLine) bool {
	for _, l := range lines {
		if l.Op != "same" {
			return true
		}
	}
	return false
}

// preview is what saving an edit would do.
type preview struct {
	NextVersion  int
	Diff         []diffLine
	Changed      bool
	BucketsMoved uint32
	BucketCount  uint32
	SharePct     float64 // of buckets, so of users not yet pinned
	Pinned       int64   // users holding a pin, who keep their variant
	Moves        []bucketMove
}

// bucketMove is how many buckets go from one variant to another.
type bucketMove struct {
	From, To string
	Buckets  uint32
}

// previewChange diffs the new config against the latest version and
// rebalances the bucket map exactly as the store will on save.
func previewChange(exp experiments.Experiment, cfg experiments.Config, pinned int64) (preview, error) {
	p := preview{NextVersion: exp.Version + 1, BucketCount: exp.BucketCount, Pinned: pinned}
	p.Diff = configDiff(exp.Config, cfg)
	p.Changed = changed(p.Diff)
	next, err := bucketing.Rebalance(exp.BucketMap, cfg.Allocation, exp.BucketCount)
	if err != nil {
		return p, err
	}
	moves := map[[2]string]uint32{}
	var order [][2]string
	walkMoves(exp.BucketMap, next, func(from, to string, n uint32) {
		k := [2]string{from, to}
		if _, ok := moves[k]; !ok {
			order = append(order, k)
		}
		moves[k] += n
		p.BucketsMoved += n
	})
	for _, k := range order {
		p.Moves = append(p.Moves, bucketMove{From: k[0], To: k[1], Buckets: moves[k]})
	}
	if exp.BucketCount > 0 {
		p.SharePct = 100 * float64(p.BucketsMoved) / float64(exp.BucketCount)
	}
	return p, nil
}

// walkMoves calls fn for every stretch of buckets whose variant differs
// between two canonical maps of the same bucket count.
func walkMoves(a, b bucketing.Map, fn func(from, to string, n uint32)) {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		start := max(a[i].Start, b[j].Start)
		end := min(a[i].End, b[j].End)
		if end > start && a[i].Variant != b[j].Variant {
			fn(a[i].Variant, b[j].Variant, end-start)
		}
		if a[i].End == end {
			i++
		}
		if b[j].End == end {
			j++
		}
	}
}
