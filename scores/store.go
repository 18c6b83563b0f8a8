package scores

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"gorm.io/gorm"
)

// columns of the scores table in the order the upserts write them.
var columns = []string{"org_id", "call_id", "name", "source", "value", "ts", "received_at",
	"comment", "evaluator", "evaluator_version", "judge_model"}

var columnList = strings.Join(columns, ", ")

// replaceOnConflict is the upsert's conflict clause, the same in both
// dialects but for how rows are compared null-safely (distinct): a
// stored score is replaced by one with a later timestamp, or with the
// same timestamp (ties go to the later arrival) when it differs; an
// identical re-send changes nothing and is a duplicate.
func replaceOnConflict(distinct string) string {
	var set []string
	for _, c := range columns[4:] {
		set = append(set, c+" = excluded."+c)
	}
	content := "(excluded.value, excluded.comment, excluded.evaluator, excluded.evaluator_version, excluded.judge_model) " +
		distinct + " (scores.value, scores.comment, scores.evaluator, scores.evaluator_version, scores.judge_model)"
	return ` ON CONFLICT (org_id, call_id, name, source) DO UPDATE SET ` + strings.Join(set, ", ") +
		` WHERE excluded.ts > scores.ts OR (excluded.ts = scores.ts AND ` + content + `)`
}

// Written is one row an upsert stored: New when no score of its key was
// stored before (only those count against the monthly allowance), else a
// replacement.
type Written struct {
	Key Key
	New bool
}

// Latest keeps, of rows sharing a key, the one that wins: the later
// timestamp, ties by arrival (the later in rows). won[i] says whether
// rows[i] is kept; kept is sorted by key, so two transactions writing the
// same keys lock them in one order.
func Latest(rows []Row) (kept []Row, won []bool) {
	at := make(map[Key]int, len(rows))
	for i := range rows {
		k := KeyOf(&rows[i])
		if j, seen := at[k]; seen && rows[i].Ts.Before(rows[j].Ts) {
			continue
		}
		at[k] = i
	}
	won = make([]bool, len(rows))
	kept = make([]Row, 0, len(at))
	for _, i := range at {
		won[i] = true
		kept = append(kept, rows[i])
	}
	slices.SortFunc(kept, func(a, b Row) int {
		return cmp.Or(strings.Compare(a.OrgID, b.OrgID), strings.Compare(a.CallID, b.CallID),
			strings.Compare(a.Name, b.Name), strings.Compare(a.Source, b.Source))
	})
	return kept, won
}

// upsertPostgres is the PostgreSQL upsert: one statement over arrays;
// xmax = 0 tells an inserted row from an updated one.
var upsertPostgres = `INSERT INTO scores (` + columnList + `)
SELECT o::uuid, c, n, s, v, t, $7, cm, ev, evv, jm
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::float8[], $6::timestamptz[], $8::text[], $9::text[], $10::text[], $11::text[])
  AS u(o, c, n, s, v, t, cm, ev, evv, jm)` + replaceOnConflict("IS DISTINCT FROM") + `
RETURNING org_id::text, call_id, name, source, xmax = 0`

// UpsertPostgres stores rows (distinct keys, see Latest) received at
// receivedAt in tx and returns the rows it wrote.
func UpsertPostgres(ctx context.Context, tx pgx.Tx, rows []Row, receivedAt time.Time) ([]Written, error) {
	if len(rows) == 0 {
		return nil, nil
	}
	n := len(rows)
	orgs, calls, names, sources := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	values, ts := make([]float64, n), make([]time.Time, n)
	comments, evaluators, versions, judges := make([]*string, n), make([]*string, n), make([]*string, n), make([]*string, n)
	for i := range rows {
		r := &rows[i]
		orgs[i], calls[i], names[i], sources[i], values[i], ts[i] = r.OrgID, r.CallID, r.Name, r.Source, r.Value, r.Ts
		comments[i], evaluators[i], versions[i], judges[i] = r.Comment, r.Evaluator, r.EvaluatorVersion, r.JudgeModel
	}
	res, err := tx.Query(ctx, upsertPostgres, orgs, calls, names, sources, values, ts, receivedAt, comments, evaluators, versions, judges)
	if err != nil {
		return nil, fmt.Errorf("upsert scores: %w", err)
	}
	var out []Written
	var w Written
	if _, err := pgx.ForEachRow(res, []any{&w.Key.OrgID, &w.Key.CallID, &w.Key.Name, &w.Key.Source, &w.New}, func() error {
		out = append(out, w)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("upsert scores: %w", err)
	}
	return out, nil
}

// ExistingPostgres returns which keys of rows have a stored score.
func ExistingPostgres(ctx context.Context, tx pgx.Tx, rows []Row) (map[Key]bool, error) {
	out := make(map[Key]bool)
	n := len(rows)
	if n == 0 {
		return out, nil
	}
	orgs, calls, names, sources := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	for i := range rows {
		orgs[i], calls[i], names[i], sources[i] = rows[i].OrgID, rows[i].CallID, rows[i].Name, rows[i].Source
	}
	res, err := tx.Query(ctx, `SELECT s.org_id::text, s.call_id, s.name, s.source FROM scores s
JOIN unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS k(o, c, n, src)
  ON s.org_id = k.o::uuid AND s.call_id = k.c AND s.name = k.n AND s.source = k.src`, orgs, calls, names, sources)
	if err != nil {
		return nil, fmt.Errorf("find stored scores: %w", err)
	}
	var k Key
	if _, err := pgx.ForEachRow(res, []any{&k.OrgID, &k.CallID, &k.Name, &k.Source}, func() error { out[k] = true; return nil }); err != nil {
		return nil, fmt.Errorf("find stored scores: %w", err)
	}
	return out, nil
}

// sqliteRowsPerStatement keeps a statement's parameters (11 per row)
// under SQLite's limit of 32,766.
const sqliteRowsPerStatement = 1000

var sqliteRow = "(" + strings.TrimSuffix(strings.Repeat("?, ", len(columns)), ", ") + ")"

// UpsertSQLite is UpsertPostgres on SQLite. SQLite has no xmax: the keys
// stored before are read first, which is exact because SQLite has a
// single writer.
func UpsertSQLite(ctx context.Context, tx *gorm.DB, rows []Row, receivedAt time.Time) ([]Written, error) {
	var out []Written
	for chunk := range slices.Chunk(rows, sqliteRowsPerStatement) {
		stored, err := ExistingSQLite(ctx, tx, chunk)
		if err != nil {
			return nil, err
		}
		args := make([]any, 0, len(chunk)*len(columns))
		for i := range chunk {
			r := &chunk[i]
			args = append(args, r.OrgID, r.CallID, r.Name, r.Source, r.Value, r.Ts, receivedAt,
				r.Comment, r.Evaluator, r.EvaluatorVersion, r.JudgeModel)
		}
		values := strings.TrimSuffix(strings.Repeat(sqliteRow+", ", len(chunk)), ", ")
		res, err := tx.WithContext(ctx).Raw(`INSERT INTO scores (`+columnList+`) VALUES `+values+
			replaceOnConflict("IS NOT")+` RETURNING org_id, call_id, name, source`, args...).Rows()
		if err != nil {
			return nil, fmt.Errorf("upsert scores: %w", err)
		}
		for res.Next() {
			var w Written
			if err := res.Scan(&w.Key.OrgID, &w.Key.CallID, &w.Key.Name, &w.Key.Source); err != nil {
				res.Close()
				return nil, fmt.Errorf("read upserted scores: %w", err)
			}
			w.New = !stored[w.Key]
			out = append(out, w)
		}
		if err := res.Close(); err != nil {
			return nil, fmt.Errorf("upsert scores: %w", err)
		}
	}
	return out, nil
}

// ExistingSQLite returns which keys of rows have a stored score.
func ExistingSQLite(ctx context.Context, tx *gorm.DB, rows []Row) (map[Key]bool, error) {
	out := make(map[Key]bool)
	for chunk := range slices.Chunk(rows, sqliteRowsPerStatement) {
		conds := strings.TrimSuffix(strings.Repeat("(org_id = ? AND call_id = ? AND name = ? AND source = ?) OR ", len(chunk)), " OR ")
		args := make([]any, 0, 4*len(chunk))
		for i := range chunk {
			args = append(args, chunk[i].OrgID, chunk[i].CallID, chunk[i].Name, chunk[i].Source)
		}
		res, err := tx.WithContext(ctx).Raw(`SELECT org_id, call_id, name, source FROM scores WHERE `+conds, args...).Rows()
		if err != nil {
			return nil, fmt.Errorf("find stored scores: %w", err)
		}
		for res.Next() {
			var k Key
			if err := res.Scan(&k.OrgID, &k.CallID, &k.Name, &k.Source); err != nil {
				res.Close()
				return nil, fmt.Errorf("find stored scores: %w", err)
			}
			out[k] = true
		}
		if err := res.Close(); err != nil {
			return nil, fmt.Errorf("find stored scores: %w", err)
		}
	}
	return out, nil
}
