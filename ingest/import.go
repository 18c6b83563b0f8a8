package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/expd/expd/plans"
)

// Bounds of an import, documented in docs/ingest.md.
const (
	MaxImportLineBytes    = 256 << 10
	MaxReportedRejections = 100
	importChunkLines      = 5_000
)

// ImportResult counts an import's non-blank lines:
// Lines = Accepted + Duplicates + Rejected.
type ImportResult struct {
	Lines         int         `json:"lines"`
	Accepted      int         `json:"accepted"`
	Duplicates    int         `json:"duplicates"`
	Rejected      int         `json:"rejected"`
	FirstRejected []Rejection `json:"first_rejected"` // Index is the line number, from 1
}

// Import streams NDJSON events from body into the events table in one
// transaction, in chunks, so memory stays bounded whatever the file's
// size. It is all or nothing: a read error, an oversized body or an
// allowance that would be exceeded rolls every chunk back.
func (w *Writer) Import(ctx context.Context, t Tenant, body io.Reader, p Preparer) (ImportResult, error) {
	res := ImportResult{FirstRejected: []Rejection{}}
	lines := newLineReader(body, MaxImportLineBytes)
	now := w.opts.Now().UTC()
	month := MonthOf(now)
	err := w.store.inTx(ctx, func(tx groupTx) error {
		var stored int64
		for {
			c, err := readChunk(lines)
			if err != nil {
				return err
			}
			prep, err := p.Prepare(c.raws)
			if err != nil {
				return err
			}
			res.Lines += len(c.raws) + len(c.tooLong)
			rejected := c.tooLong
			for _, rej := range prep.Rejected {
				rej.Index = c.numbers[rej.Index]
				rejected = append(rejected, rej)
			}
			slices.SortFunc(rejected, func(a, b Rejection) int { return a.Index - b.Index })
			for _, rej := range rejected {
				res.reject(rej)
			}
			rows, erased, err := w.dropErased(ctx, tx.tombstones, t.OrgID, prep.Rows)
			if err != nil {
				return err
			}
			prep.Rows = rows
			res.Duplicates += erased
			for i := range prep.Rows {
				prep.Rows[i].ReceivedAt = now
			}
			late := map[dayMark]bool{}
			inserted, err := storeEvents(ctx, tx, prep.Rows, late)
			if err != nil {
				return err
			}
			if err := markLate(ctx, tx, late); err != nil {
				return err
			}
			stored += int64(len(inserted))
			res.Accepted += len(inserted)
			res.Duplicates += len(prep.Rows) - len(inserted)
			if c.last {
				break
			}
		}
		return chargeImport(ctx, tx, t, month, stored)
	})
	if err != nil {
		var allowance *AllowanceError
		if errors.As(err, &allowance) {
			return res, err
		}
		return res, classify(fmt.Errorf("import: %w", err))
	}
	return res, nil
}

// chunk is up to importChunkLines lines of an import.
type chunk struct {
	raws    [][]byte
	numbers []int       // line number of each raw
	tooLong []Rejection // oversized lines, skipped
	last    bool        // the body ended
}

func readChunk(lines *lineReader) (chunk, error) {
	var c chunk
	for len(c.raws) < importChunkLines {
		text, number, tooLong, err := lines.next()
		if errors.Is(err, io.EOF) {
			c.last = true
			return c, nil
		}
		if err != nil {
			return c, fmt.Errorf("read line %d: %w", lines.line+1, err)
		}
		if tooLong {
			c.tooLong = append(c.tooLong, Rejection{Index: number, Reason: fmt.Sprintf("line: longer than %d bytes", MaxImportLineBytes)})
			continue
		}
		c.raws = append(c.raws, append([]byte(nil), text...))
		c.numbers = append(c.numbers, number)
	}
	return c, nil
}

func (r *ImportResult) reject(rej Rejection) {
	r.Rejected++
	if len(r.FirstRejected) < MaxReportedRejections {
		r.FirstRejected = append(r.FirstRejected, rej)
	}
}

// chargeImport checks the whole import against the allowance once, at the
// end, so the usage row is locked only briefly.
func chargeImport(ctx context.Context, tx groupTx, t Tenant, month string, stored int64) error {
	if stored == 0 {
		return nil
	}
	if t.Allowance() != plans.Unlimited {
		used, err := tx.lockUsage(ctx, month, []string{t.OrgID})
		if err != nil {
			return err
		}
		if used[t.OrgID]+stored > t.Allowance() {
			return &AllowanceError{Plan: t.Plan, Allowance: t.Allowance(), Used: used[t.OrgID], Adding: stored, Month: month}
		}
	}
	// Slot 0: an import is no group transaction of the writer.
	return tx.addUsage(ctx, month, []usageDelta{{orgID: t.OrgID, events: stored}})
}
