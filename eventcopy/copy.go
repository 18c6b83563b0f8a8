// Package eventcopy copies the events and scores stored in the database
// (PostgreSQL or SQLite) into another events store, ClickHouse: `expd
// migrate --copy-events-to-clickhouse`. It reads in keyset order, writes
// each batch through the target's own dedup (ingest.EventStore.Insert
// claims each id once; UpsertScores keeps the winner of a key), and
// records the last key of every batch written in event_copy_checkpoints,
// which this package owns, so an interrupted copy resumes after its last
// batch and a batch written twice (interrupted between the write and the
// checkpoint) is stored once.
package eventcopy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/expd/expd/ingest"
	"github.com/expd/expd/scores"
)

// Target is where the rows go: the events store's writes.
type Target interface {
	Insert(ctx context.Context, rows []ingest.EventRow) (int, error)
	UpsertScores(ctx context.Context, rows []scores.Row, receivedAt time.Time) (int, error)
}

// Options tune a copy.
type Options struct {
	// Batch is how many rows one read and one write carry (default 5,000).
	Batch int
	// Progress, when set, hears after every checkpoint.
	Progress func(Progress)
}

// Progress is where a copy stands: the kind of row and, for this kind
// and target, the rows read so far (over every run) and stored by this
// run (rows the target held already are not stored again).
type Progress struct {
	Kind   string
	Read   int64
	Stored int64
}

// Result counts one run's work per kind.
type Result struct {
	Events, Scores Progress
}

// Copy copies every event, then every score, of db into target, resuming
// after the checkpoint of targetName (a name of the target, such as its
// database: a copy into another target starts over).
func Copy(ctx context.Context, db *gorm.DB, target Target, targetName string, opts Options) (Result, error) {
	if opts.Batch <= 0 {
		opts.Batch = 5000
	}
	var out Result
	var err error
	out.Events, err = copyKind(ctx, db, targetName, opts, kind[ingest.EventRow, eventCursor]{
		name: "events", table: "events", order: []string{"org_id", "ts", "event_id"},
		key:   func(r ingest.EventRow) eventCursor { return eventCursor{r.OrgID, r.Ts, r.EventID} },
		after: func(c eventCursor) []any { return []any{c.OrgID, c.Ts, c.EventID} },
		write: target.Insert,
	})
	if err != nil {
		return out, err
	}
	out.Scores, err = copyKind(ctx, db, targetName, opts, kind[scores.Row, scoreCursor]{
		name: "scores", table: "scores", order: []string{"org_id", "call_id", "name", "source"},
		key:   func(r scores.Row) scoreCursor { return scoreCursor{r.OrgID, r.CallID, r.Name, r.Source} },
		after: func(c scoreCursor) []any { return []any{c.OrgID, c.CallID, c.Name, c.Source} },
		// A zero receivedAt keeps each score's own (its first receipt).
		write: func(ctx context.Context, rows []scores.Row) (int, error) {
			return target.UpsertScores(ctx, rows, time.Time{})
		},
	})
	return out, err
}

type eventCursor struct {
	OrgID   string
	Ts      time.Time
	EventID string
}

type scoreCursor struct{ OrgID, CallID, Name, Source string }

// kind is one table copied in the keyset order of its key columns.
type kind[R any, C any] struct {
	name, table string
	order       []string // the key's columns: the read order and the cursor
	key         func(R) C
	after       func(C) []any
	write       func(context.Context, []R) (int, error)
}

// checkpoint is a row of event_copy_checkpoints.
type checkpoint struct {
	Kind      string
	Target    string
	LastKey   string
	Copied    int64
	UpdatedAt time.Time
}

func (checkpoint) TableName() string { return "event_copy_checkpoints" }

func copyKind[R any, C any](ctx context.Context, db *gorm.DB, target string, opts Options, k kind[R, C]) (Progress, error) {
	p := Progress{Kind: k.name}
	var cp checkpoint
	var cursor *C
	err := db.WithContext(ctx).Where("kind = ? AND target = ?", k.name, target).Take(&cp).Error
	switch {
	case err == nil:
		var c C
		if err := json.Unmarshal([]byte(cp.LastKey), &c); err != nil {
			return p, fmt.Errorf("checkpoint of %s: %w", k.name, err)
		}
		cursor, p.Read = &c, cp.Copied
	case !errors.Is(err, gorm.ErrRecordNotFound):
		return p, fmt.Errorf("read the checkpoint of %s: %w", k.name, err)
	}
	cols := strings.Join(k.order, ", ")
	for {
		q := db.WithContext(ctx).Table(k.table).Order(cols).Limit(opts.Batch)
		if cursor != nil {
			q = q.Where("("+cols+") > ("+strings.TrimSuffix(strings.Repeat("?, ", len(k.order)), ", ")+")", k.after(*cursor)...)
		}
		var rows []R
		if err := q.Find(&rows).Error; err != nil {
			return p, fmt.Errorf("read %s: %w", k.name, err)
		}
		if len(rows) == 0 {
			return p, nil
		}
		n, err := k.write(ctx, rows)
		if err != nil {
			return p, fmt.Errorf("write %d %s: %w", len(rows), k.name, err)
		}
		last := k.key(rows[len(rows)-1])
		enc, err := json.Marshal(last)
		if err != nil {
			return p, err
		}
		p.Read += int64(len(rows))
		p.Stored += int64(n)
		cp = checkpoint{Kind: k.name, Target: target, LastKey: string(enc), Copied: p.Read, UpdatedAt: time.Now().UTC()}
		if err := db.WithContext(ctx).Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "kind"}, {Name: "target"}},
			DoUpdates: clause.AssignmentColumns([]string{"last_key", "copied", "updated_at"})}).Create(&cp).Error; err != nil {
			return p, fmt.Errorf("checkpoint of %s: %w", k.name, err)
		}
		cursor = &last
		if opts.Progress != nil {
			opts.Progress(p)
		}
		if len(rows) < opts.Batch {
			return p, nil
		}
	}
}
