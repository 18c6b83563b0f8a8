package main

import (
	"context"
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/expd/expd/activities"
	"github.com/expd/expd/bench/benchseed"
	"github.com/expd/expd/clickhouse"
	"github.com/expd/expd/ingest"
	"github.com/expd/expd/results"
)

// chEnv is the -clickhouse side: the same org and experiments (the
// control plane in the PostgreSQL schema), their events in a ClickHouse
// database filled in the same shape as the PostgreSQL one (the same ids,
// users, experiments and times; the random values are each engine's own).
type chEnv struct {
	store    *clickhouse.Store
	raw      *benchseed.RawClickHouse
	database string
	cluster  string
	events   int64
}

// setUpClickHouse migrates a fresh database on the ClickHouse of dsn (or
// reopens database, kept by an earlier -keep run); stop drops a fresh one
// unless keep.
func setUpClickHouse(ctx context.Context, dsn, cluster, database string, keep bool) (*chEnv, func(), error) {
	db, stop, err := benchseed.OpenClickHouseDB(ctx, dsn, cluster, database, "scale", keep)
	if err != nil {
		return nil, nil, err
	}
	c := &chEnv{store: db.Store, database: db.Name, cluster: cluster}
	if c.raw, err = benchseed.OpenRawClickHouse(dsn, db.Name, cluster); err != nil {
		stop()
		return nil, nil, err
	}
	log.Printf("clickhouse database %s (%d shard(s))", db.Name, c.store.Shards())
	return c, func() { c.raw.Close(); stop() }, nil
}

// countEvents sets c.events from what the shards hold (a reused database).
func (c *chEnv) countEvents(ctx context.Context, orgID string) error {
	counts, err := c.store.CountPerShard(ctx, orgID)
	if err != nil {
		return err
	}
	c.events = 0
	for _, n := range counts {
		c.events += int64(n)
	}
	return nil
}

// fillDay writes one day of one pass, the rows of env.fillDay, with two
// INSERT ... SELECT statements (events, then their claims) generated on
// the server and written through the Distributed tables.
func (c *chEnv) fillDay(ctx context.Context, e *env, pass, d int, day time.Time, perDay int) error {
	exps := make([]string, len(e.expIDs))
	for i, id := range e.expIDs {
		exps[i] = "'" + id + "'"
	}
	gen := fmt.Sprintf(`SELECT number AS i, intDiv(number, 10) AS u, number %% 10 AS k, toInt64(%d + (intDiv(number, 10) %% 86000) * 1000000 + (number %% 10) * 1000000) AS ts,
    concat('p%[2]d-d%[3]d-', toString(number)) AS event_id, concat('p%[2]d-d%[3]d-u', toString(intDiv(number, 10))) AS user_id,
    [%[4]s][1 + if(intDiv(number, 10) %% 10 = 0, 0, 1 + intDiv(number, 10) %% %[5]d)] AS experiment_id
  FROM system.numbers LIMIT %[6]d`, day.UnixMicro(), pass, d, strings.Join(exps, ","), max(len(exps)-1, 1), perDay)
	events := fmt.Sprintf(`INSERT INTO %[1]s.%[2]s (org_id, event_id, type, experiment_id, user_id, variant, ts, received_at, model,
  latency_ms, input_tokens, output_tokens, total_tokens, cost_usd, error, business_metric, value, prompt, response, source)
SELECT '%[3]s', event_id, multiIf(k = 0, 'exposure', k = 9, 'business_event', 'model_call'), experiment_id, user_id,
  if(u %% 2 = 0, 'control', 'treatment'), ts, ts,
  if(k BETWEEN 1 AND 8, 'gpt-4o-mini', NULL),
  if(k BETWEEN 1 AND 8, 200 + (u %% 2) * 5 + rand(1) / 4294967296 * 100, NULL),
  if(k BETWEEN 1 AND 8, toInt64(120 + i %% 50), NULL), if(k BETWEEN 1 AND 8, toInt64(40 + i %% 30), NULL),
  if(k BETWEEN 1 AND 8, toInt64(160 + i %% 80), NULL), if(k BETWEEN 1 AND 8, 0.00042, NULL),
  if(k BETWEEN 1 AND 8 AND rand(2) / 4294967296 < 0.02, 'timeout', NULL),
  if(k = 9, if(rand(3) / 4294967296 < 0.2 + (u %% 2) * 0.02, 'purchase', 'visit'), NULL),
  if(k = 9, rand(4) / 4294967296 * 50, NULL),
  if(k BETWEEN 1 AND 8, 'You are a helpful support agent. Answer briefly.', NULL),
  if(k BETWEEN 1 AND 8, 'You can reset your password from the account page.', NULL), 'api'
FROM (%[4]s)`, c.database, c.table("events"), e.orgID, gen)
	claims := fmt.Sprintf("INSERT INTO %s.%s (org_id, event_id, experiment_id, user_id, ts) SELECT '%s', event_id, experiment_id, user_id, ts FROM (%s)",
		c.database, c.table("event_ids"), e.orgID, gen)
	for _, q := range []string{events, claims} {
		if err := c.raw.Exec(ctx, q); err != nil {
			return err
		}
	}
	c.events += int64(perDay)
	return nil
}

// table is the table a write goes to: the Distributed one on a cluster.
func (c *chEnv) table(name string) string {
	if c.cluster == "" {
		return name + "_local"
	}
	return name
}

// chMeasurement is one size's numbers on ClickHouse.
type chMeasurement struct {
	events        int64
	rawRate       float64
	parts         []string // per table: rows, bytes on disk, bytes per row
	org           time.Duration
	orgRuns       int
	largest       time.Duration
	largestUsers  int
	largestManual time.Duration
	dropDay       time.Duration
	dropRows      int64
	erase         time.Duration
	erased        int64
}

// measure takes one size's numbers: the raw insert rate (cfg.ingest
// events from 8 writers in batches of 10,000: the rows of env.ingest),
// the bytes on disk per table, yesterday's nightly of the whole org and
// of the largest experiment alone (no rollups on ClickHouse: each night
// reads the window, so there is no cold and warm), a manual run of the
// largest experiment, dropping the oldest day (DropDay) and erasing one
// user (DeleteUser).
func (c *chEnv) measure(ctx context.Context, e *env, pass int) (chMeasurement, error) {
	var m chMeasurement
	var err error
	if m.rawRate, err = e.ingestRows(ctx, pass, "ch-", 10_000, func(ctx context.Context, rows []ingest.EventRow) error {
		_, err := c.raw.Insert(ctx, rows)
		return err
	}); err != nil {
		return m, err
	}
	c.events += int64(e.cfg.ingest / 8 * 8)
	m.events = c.events
	if m.parts, err = c.diskUse(ctx); err != nil {
		return m, err
	}
	log.Printf("clickhouse pass %d: %d events; raw insert %.0f events/s; %s", pass, m.events, m.rawRate, strings.Join(m.parts, "; "))
	acts := &activities.Activities{DB: e.db, Events: c.store, Aggregator: c.store}
	cl, queue, stop, err := startTemporal(ctx, acts)
	if err != nil {
		return m, err
	}
	defer stop()
	day := e.today.AddDate(0, 0, -1).Format(time.DateOnly)
	if c.events <= int64(e.cfg.chOrgNightlyMax) {
		if m.org, m.orgRuns, err = e.orgNightly(ctx, cl, queue, day, fmt.Sprintf("ch-%d", pass)); err != nil {
			return m, err
		}
	}
	if err := e.clear("", nil, runTables...); err != nil {
		return m, err
	}
	if m.largest, m.largestUsers, err = e.experimentRun(ctx, cl, queue, day); err != nil {
		return m, fmt.Errorf("largest experiment on clickhouse: %w", err)
	}
	log.Printf("clickhouse pass %d: largest experiment nightly: %d users in %s", pass, m.largestUsers, m.largest.Round(time.Millisecond))
	if m.largestManual, _, err = e.experimentRun(ctx, cl, queue, results.ManualKey(time.Now()).ComputedFor); err != nil {
		return m, fmt.Errorf("largest experiment on clickhouse, manual: %w", err)
	}
	days, err := c.store.Days(ctx)
	if err != nil || len(days) == 0 {
		return m, fmt.Errorf("list days: %v (%d)", err, len(days))
	}
	start := time.Now()
	if m.dropRows, err = c.store.DropDay(ctx, days[0]); err != nil {
		return m, err
	}
	m.dropDay = time.Since(start)
	c.events -= m.dropRows
	user := fmt.Sprintf("p%d-d%d-u%d", pass, e.cfg.days/2, 10) // the first experiment's
	start = time.Now()
	if m.erased, err = c.store.DeleteUser(ctx, e.orgID, user); err != nil {
		return m, err
	}
	m.erase = time.Since(start)
	c.events -= m.erased
	return m, nil
}

// diskUse is, per table, the active parts' rows and bytes on disk summed
// over the cluster's shards (each shard's system.parts, read with
// remote()).
func (c *chEnv) diskUse(ctx context.Context) ([]string, error) {
	addrs := []string{""}
	if c.cluster != "" {
		rows, err := c.raw.Query(ctx, "SELECT host_address, port FROM system.clusters WHERE cluster = ?", c.cluster)
		if err != nil {
			return nil, err
		}
		addrs = addrs[:0]
		for rows.Next() {
			var host string
			var port uint16
			if err := rows.Scan(&host, &port); err != nil {
				rows.Close()
				return nil, err
			}
			addrs = append(addrs, fmt.Sprintf("%s:%d", host, port))
		}
		rows.Close()
	}
	type use struct{ rows, bytes uint64 }
	by := map[string]*use{}
	var tables []string
	for _, a := range addrs {
		from := "system.parts"
		if a != "" {
			from = "remote('" + a + "', system, parts)"
		}
		rows, err := c.raw.Query(ctx, "SELECT table, sum(rows), sum(bytes_on_disk) FROM "+from+" WHERE active AND database = ? GROUP BY table ORDER BY table", c.database)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var t string
			var u use
			if err := rows.Scan(&t, &u.rows, &u.bytes); err != nil {
				rows.Close()
				return nil, err
			}
			if by[t] == nil {
				by[t] = &use{}
				tables = append(tables, t)
			}
			by[t].rows += u.rows
			by[t].bytes += u.bytes
		}
		rows.Close()
	}
	var out []string
	for _, t := range tables {
		u := by[t]
		per := 0.0
		if u.rows > 0 {
			per = float64(u.bytes) / float64(u.rows)
		}
		out = append(out, fmt.Sprintf("%s %d rows %s (%.1f B/row)", t, u.rows, mib(int64(u.bytes)), per))
	}
	return out, nil
}

func (m chMeasurement) row() string {
	org := "not measured"
	if m.org > 0 {
		org = fmt.Sprintf("%s (%d runs)", m.org.Round(100*time.Millisecond), m.orgRuns)
	}
	return fmt.Sprintf("| %d | %.0f | %s | %s | %s (%d users) | %s | %s (%d) | %s (%d) |",
		m.events, m.rawRate, strings.Join(m.parts, "; "), org, m.largest.Round(100*time.Millisecond), m.largestUsers,
		m.largestManual.Round(100*time.Millisecond), m.dropDay.Round(100*time.Millisecond), m.dropRows, m.erase.Round(100*time.Millisecond), m.erased)
}
