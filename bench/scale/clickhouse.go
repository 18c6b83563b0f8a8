package main

import (
	"context"
	"fmt"
	"log"
	"net"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

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
	raw      *benchseed.RawClickHouse // the DSN's node: writes through the Distributed tables
	shards   []chShard                // each shard's first replica: writes into its local tables
	dsn      string
	database string
	cluster  string
	events   int64
}

// chShard is one shard's server and the users the Distributed tables
// route to it: cityHash64(org_id, user_id) % total weight in [from, to).
type chShard struct {
	raw      *benchseed.RawClickHouse
	from, to uint64
	total    uint64
}

// setUpClickHouse migrates a fresh database on the ClickHouse of dsn (or
// reopens database, kept by an earlier -keep run) and connects to each
// shard; stop drops a fresh one unless keep.
func setUpClickHouse(ctx context.Context, dsn, cluster, database string, keep bool) (*chEnv, func(), error) {
	db, stop, err := benchseed.OpenClickHouseDB(ctx, dsn, cluster, database, "scale", keep)
	if err != nil {
		return nil, nil, err
	}
	c := &chEnv{store: db.Store, dsn: dsn, database: db.Name, cluster: cluster}
	closeAll := func() {
		for _, s := range c.shards {
			if s.raw != c.raw {
				s.raw.Close()
			}
		}
		if c.raw != nil {
			c.raw.Close()
		}
		stop()
	}
	if c.raw, err = benchseed.OpenRawClickHouse(dsn, db.Name, cluster); err != nil {
		closeAll()
		return nil, nil, err
	}
	if err := c.openShards(ctx); err != nil {
		closeAll()
		return nil, nil, err
	}
	log.Printf("clickhouse database %s (%d shard(s))", db.Name, len(c.shards))
	return c, closeAll, nil
}

// openShards connects to each shard's first replica (system.clusters,
// in shard order) and gives it the slots of the sharding key's remainder
// that the Distributed tables send it: shard n of weights w1..wk gets
// remainders from w1+...+w(n-1) up to w1+...+wn, modulo their sum. On
// one node the node is the only shard and gets every user.
func (c *chEnv) openShards(ctx context.Context) error {
	if c.cluster == "" {
		c.shards = []chShard{{raw: c.raw, from: 0, to: 1, total: 1}}
		return nil
	}
	rows, err := c.raw.Query(ctx, `SELECT host_address, port, shard_weight FROM system.clusters WHERE cluster = ? AND replica_num = 1 ORDER BY shard_num`, c.cluster)
	if err != nil {
		return fmt.Errorf("read cluster %s: %w", c.cluster, err)
	}
	defer rows.Close()
	u, err := url.Parse(c.dsn)
	if err != nil {
		return err
	}
	var total uint64
	for rows.Next() {
		var host string
		var port uint16
		var weight uint32
		if err := rows.Scan(&host, &port, &weight); err != nil {
			return fmt.Errorf("read cluster %s: %w", c.cluster, err)
		}
		u.Host = net.JoinHostPort(host, strconv.Itoa(int(port)))
		raw, err := benchseed.OpenRawClickHouse(u.String(), c.database, "")
		if err != nil {
			return fmt.Errorf("shard %s: %w", u.Host, err)
		}
		c.shards = append(c.shards, chShard{raw: raw, from: total, to: total + uint64(weight)})
		total += uint64(weight)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read cluster %s: %w", c.cluster, err)
	}
	for i := range c.shards {
		c.shards[i].total = total
	}
	return nil
}

// users is the condition on user_id that keeps the users the
// Distributed tables route to this shard (events and claims alike are
// sharded by cityHash64(org_id, user_id)).
func (s chShard) users(orgID string) string {
	if s.total == 1 {
		return "1"
	}
	return fmt.Sprintf("cityHash64('%s', user_id) %% %d BETWEEN %d AND %d", orgID, s.total, s.from, s.to-1)
}

// countEvents sets c.events from what the shards hold (a reused
// database): the rows of events_local's active parts, which the fill
// writes without duplicates (a uniqExact over 100 M ids would need GBs).
func (c *chEnv) countEvents(ctx context.Context) error {
	use, err := c.diskUse(ctx)
	if err != nil {
		return err
	}
	c.events = int64(use["events_local"].rows)
	return nil
}

// fillDay writes one day of one pass, the rows of env.fillDay, with an
// INSERT ... SELECT of the events (whose claims the schema's view
// derives) generated on the server: with -clickhouse-fill shards (the
// default) each shard's server generates the users the Distributed
// tables would route to it and writes them into its local tables, all
// shards at once; with distributed the DSN's node generates them all and
// writes them through the Distributed tables (the slower route, kept to
// compare with).
func (c *chEnv) fillDay(ctx context.Context, e *env, pass, d int, day time.Time, perDay int) error {
	if perDay == 0 {
		return nil
	}
	if e.cfg.chFill == "distributed" {
		if err := c.raw.Exec(ctx, c.fillSQL(e, pass, d, day, perDay, c.table("events"), "1")); err != nil {
			return err
		}
	} else {
		g, gctx := errgroup.WithContext(ctx)
		for i, s := range c.shards {
			g.Go(func() error {
				if err := s.raw.Exec(gctx, c.fillSQL(e, pass, d, day, perDay, "events_local", s.users(e.orgID))); err != nil {
					return fmt.Errorf("shard %d: %w", i+1, err)
				}
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return err
		}
	}
	c.events += int64(perDay)
	return nil
}

// fillSQL is the events statement of one day of one pass (the schema's
// view derives their claims), into the table named, of the users that
// keep: user u (u = 0 to perDay/10, id p<pass>-d<d>-u<u>) has events u*10 to u*10+9 (fewer for
// the last when perDay is not a multiple of 10): an exposure (k = 0),
// eight model calls with prompt and response, a business event (k = 9),
// k seconds after (u % 86000) s into the day; a tenth of the users in the
// first experiment, the rest spread over the others. The users are
// generated first and filtered, then their events, so a shard hashes
// each of its users once.
func (c *chEnv) fillSQL(e *env, pass, d int, day time.Time, perDay int, events, keep string) string {
	exps := make([]string, len(e.expIDs))
	for i, id := range e.expIDs {
		exps[i] = "'" + id + "'"
	}
	gen := fmt.Sprintf(`SELECT u * 10 + k AS i, u, k, toInt64(%[1]d + (u %% 86000) * 1000000 + k * 1000000) AS ts,
    concat('p%[2]d-d%[3]d-', toString(u * 10 + k)) AS event_id, user_id,
    [%[4]s][1 + if(u %% 10 = 0, 0, 1 + u %% %[5]d)] AS experiment_id
  FROM (SELECT number AS u, concat('p%[2]d-d%[3]d-u', toString(number)) AS user_id FROM numbers(%[6]d) WHERE %[8]s)
  ARRAY JOIN range(toUInt64(least(10, %[7]d - u * 10))) AS k`, day.UnixMicro(), pass, d, strings.Join(exps, ","), max(len(exps)-1, 1), (perDay+9)/10, perDay, keep)
	const call, business = "k BETWEEN 1 AND 8", "k = 9"
	return fmt.Sprintf(`INSERT INTO %[1]s.%[2]s (org_id, event_id, type, experiment_id, user_id, variant, ts, received_at, model,
  latency_ms, input_tokens, output_tokens, total_tokens, cost_usd, error, business_metric, value, prompt, response, source)
SELECT '%[3]s', event_id, multiIf(k = 0, 'exposure', k = 9, 'business_event', 'model_call'), experiment_id, user_id,
  if(u %% 2 = 0, 'control', 'treatment'), ts, ts,
  %[5]s,
  %[6]s,
  %[7]s, %[8]s,
  %[9]s, %[10]s,
  %[11]s,
  %[12]s,
  %[13]s,
  %[14]s,
  %[15]s, 'api'
FROM (%[4]s)`, c.database, events, e.orgID, gen,
		nullUnless(call, "'gpt-4o-mini'", "''"),
		nullUnless(call, "200 + (u % 2) * 5 + rand(1) / 4294967296 * 100", "0"),
		nullUnless(call, "toInt64(120 + i % 50)", "0"), nullUnless(call, "toInt64(40 + i % 30)", "0"),
		nullUnless(call, "toInt64(160 + i % 80)", "0"), nullUnless(call, "0.00042", "0"),
		nullUnless(call+" AND rand(2) / 4294967296 < 0.02", "'timeout'", "''"),
		nullUnless(business, "if(rand(3) / 4294967296 < 0.2 + (u % 2) * 0.02, 'purchase', 'visit')", "''"),
		nullUnless(business, "rand(4) / 4294967296 * 50", "0"),
		nullUnless(call, "'You are a helpful support agent. Answer briefly.'", "''"),
		nullUnless(call, "'You can reset your password from the account page.'", "''"))
}

// nullUnless is expr where cond holds and NULL elsewhere, with zero (the
// column's default) under the NULLs, as the write path stores them:
// ClickHouse's if computes both branches, so a bare if(cond, expr, NULL)
// would keep expr's values (random ones too) under the NULLs, bytes on
// disk that real events never have.
func nullUnless(cond, expr, zero string) string {
	return fmt.Sprintf("if(%s, if(%s, %s, %s), NULL)", cond, cond, expr, zero)
}

// table is the table a write goes to: the Distributed one on a cluster.
func (c *chEnv) table(name string) string {
	if c.cluster == "" {
		return name + "_local"
	}
	return name
}

// chMeasurement is one size's numbers on ClickHouse; a duration of 0 is
// a step not run (-clickhouse-steps).
type chMeasurement struct {
	events          int64
	rawRate         float64 // into the filled database
	freshRate       float64 // the same rows into a fresh database, rounds alternating
	parts           []string
	org             time.Duration
	orgRuns         int
	orgCut          bool // stopped at -clickhouse-org-nightly-limit
	largest         time.Duration
	largestUsers    int
	largestManual   time.Duration
	dropDay         time.Duration
	dropRows        int64
	erase           time.Duration // a user of the fill: 10 events on one day
	erased          int64
	eraseHeavy      time.Duration // plantUser's: 1,200 events on 6 days
	erasedHeavy     int64
	eraseHeavyEvent int64 // the events the heavy user had
}

// measure takes one size's numbers, the steps of -clickhouse-steps in
// this order:
//
//   - write: the raw batch insert rate (cfg.ingest events from 8 writers
//     in batches of 10,000: the rows of env.ingest) into the filled
//     database and into a fresh one, two rounds each, alternating, so
//     the ratio compares rates under the same load;
//   - disk: rows, parts and bytes on disk per table, every shard;
//   - largest: yesterday's nightly of the largest experiment alone (no
//     rollups on ClickHouse: each night reads the window, so there is no
//     cold and warm) and a manual run of it;
//   - drop: dropping the oldest day (DropDay);
//   - erase: erasing a user of the fill (10 events, one day) and the
//     heavy user of plantUser (1,200 events on 6 days) (DeleteUser);
//   - org: yesterday's nightly of the whole org, stopped after
//     -clickhouse-org-nightly-limit when set (the experiments done by
//     then are counted). Last: a cut nightly leaves its runs' queries to
//     the server's cancellation.
func (c *chEnv) measure(ctx context.Context, e *env, pass int) (chMeasurement, error) {
	var m chMeasurement
	var err error
	steps := e.cfg.chSteps
	if steps["write"] {
		if m.rawRate, m.freshRate, err = c.writeRates(ctx, e, pass); err != nil {
			return m, err
		}
	}
	m.events = c.events
	if steps["disk"] {
		use, err := c.diskUse(ctx)
		if err != nil {
			return m, err
		}
		m.parts = use.lines()
		log.Printf("clickhouse pass %d: %d events; %s", pass, m.events, strings.Join(m.parts, "; "))
	}
	acts := &activities.Activities{DB: e.db, Events: c.store, Aggregator: c.store}
	day := e.today.AddDate(0, 0, -1).Format(time.DateOnly)
	if steps["largest"] {
		cl, queue, stop, err := startTemporal(ctx, acts)
		if err != nil {
			return m, err
		}
		defer stop()
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
		log.Printf("clickhouse pass %d: largest experiment manual run in %s", pass, m.largestManual.Round(time.Millisecond))
	}
	if steps["drop"] {
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
		log.Printf("clickhouse pass %d: dropped %s (%d events) in %s", pass, days[0].Format(time.DateOnly), m.dropRows, m.dropDay.Round(time.Millisecond))
	}
	if steps["erase"] {
		// A user of the first experiment, of the last pass that filled.
		filled := pass
		if e.cfg.sizes[pass-e.cfg.firstPass] == 0 {
			filled = pass - 1
		}
		user := fmt.Sprintf("p%d-d%d-u%d", filled, e.cfg.days/2, 10)
		start := time.Now()
		if m.erased, err = c.store.DeleteUser(ctx, e.orgID, user); err != nil {
			return m, err
		}
		m.erase = time.Since(start)
		c.events -= m.erased
		log.Printf("clickhouse pass %d: erased %s (%d events) in %s", pass, user, m.erased, m.erase.Round(time.Millisecond))
		heavy, err := e.plantUser(ctx, pass, c.store)
		if err != nil {
			return m, err
		}
		m.eraseHeavyEvent = heavyDays * heavyPerDay * int64(min(heavyExperiments, len(e.expIDs)))
		start = time.Now()
		if m.erasedHeavy, err = c.store.DeleteUser(ctx, e.orgID, heavy); err != nil {
			return m, err
		}
		m.eraseHeavy = time.Since(start)
		log.Printf("clickhouse pass %d: erased %s (%d events) in %s", pass, heavy, m.erasedHeavy, m.eraseHeavy.Round(time.Millisecond))
	}
	if steps["org"] && c.events <= int64(e.cfg.chOrgNightlyMax) {
		// A fresh server: DailyResults counts a child whose workflow id
		// already ran (the largest experiment's nightly) as done.
		cl, queue, stop, err := startTemporal(ctx, acts)
		if err != nil {
			return m, err
		}
		defer stop()
		if m.org, m.orgRuns, m.orgCut, err = e.orgNightly(ctx, cl, queue, day, fmt.Sprintf("ch-%d", pass), e.cfg.chOrgNightlyLimit); err != nil {
			return m, err
		}
	}
	return m, nil
}

// writeRates writes cfg.ingest raw rows into the filled database and as
// many into a fresh one (created here, dropped after), two rounds each,
// alternating, and returns the two mean rates.
func (c *chEnv) writeRates(ctx context.Context, e *env, pass int) (filled, fresh float64, err error) {
	db, stop, err := benchseed.OpenClickHouseDB(ctx, c.dsn, c.cluster, "", "scale_fresh", false)
	if err != nil {
		return 0, 0, err
	}
	defer stop()
	raw, err := benchseed.OpenRawClickHouse(c.dsn, db.Name, c.cluster)
	if err != nil {
		return 0, 0, err
	}
	defer raw.Close()
	const rounds = 2
	for r := range rounds {
		for _, to := range []struct {
			raw  *benchseed.RawClickHouse
			rate *float64
			what string
		}{{c.raw, &filled, "filled"}, {raw, &fresh, "fresh"}} {
			rate, err := e.ingestRows(ctx, pass, fmt.Sprintf("ch%d-", r), 10_000, func(ctx context.Context, rows []ingest.EventRow) error {
				_, err := to.raw.Insert(ctx, rows)
				return err
			})
			if err != nil {
				return 0, 0, fmt.Errorf("raw insert into the %s database: %w", to.what, err)
			}
			log.Printf("clickhouse pass %d: raw insert round %d into the %s database: %.0f events/s", pass, r+1, to.what, rate)
			*to.rate += rate / rounds
		}
		c.events += int64(e.cfg.ingest / 8 * 8)
	}
	return filled, fresh, nil
}

// tableUse is, per table, the active parts' rows, parts and bytes on
// disk summed over the shards.
type tableUse map[string]*struct{ rows, parts, bytes uint64 }

// diskUse reads each shard's system.parts.
func (c *chEnv) diskUse(ctx context.Context) (tableUse, error) {
	out := tableUse{}
	for i, s := range c.shards {
		rows, err := s.raw.Query(ctx, "SELECT table, sum(rows), count(), sum(bytes_on_disk) FROM system.parts WHERE active AND database = ? GROUP BY table", c.database)
		if err != nil {
			return nil, fmt.Errorf("parts of shard %d: %w", i+1, err)
		}
		for rows.Next() {
			var t string
			var r, p, b uint64
			if err := rows.Scan(&t, &r, &p, &b); err != nil {
				rows.Close()
				return nil, err
			}
			if out[t] == nil {
				out[t] = &struct{ rows, parts, bytes uint64 }{}
			}
			out[t].rows += r
			out[t].parts += p
			out[t].bytes += b
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// lines is one line per table: rows, parts, bytes, bytes per row.
func (u tableUse) lines() []string {
	tables := make([]string, 0, len(u))
	for t := range u {
		tables = append(tables, t)
	}
	sort.Strings(tables)
	var out []string
	for _, t := range tables {
		x := u[t]
		per := 0.0
		if x.rows > 0 {
			per = float64(x.bytes) / float64(x.rows)
		}
		out = append(out, fmt.Sprintf("%s %d rows %d parts %s (%.1f B/row)", t, x.rows, x.parts, mib(int64(x.bytes)), per))
	}
	return out
}

// took is a step's time, or "not measured".
func took(d time.Duration) string {
	if d == 0 {
		return "not measured"
	}
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(100 * time.Millisecond).String()
}

func (m chMeasurement) row() string {
	org := took(m.org)
	if m.org > 0 {
		org += fmt.Sprintf(" (%d runs", m.orgRuns)
		if m.orgCut {
			org += ", cut"
		}
		org += ")"
	}
	write := "not measured"
	if m.rawRate > 0 {
		write = fmt.Sprintf("%.0f / %.0f (%.2f)", m.rawRate, m.freshRate, m.rawRate/m.freshRate)
	}
	return fmt.Sprintf("| %d | %s | %s | %s | %s (%d users) | %s | %s (%d) | %s (%d); %s (%d of %d) |",
		m.events, write, strings.Join(m.parts, "; "), org, took(m.largest), m.largestUsers,
		took(m.largestManual), took(m.dropDay), m.dropRows, took(m.erase), m.erased, took(m.eraseHeavy), m.erasedHeavy, m.eraseHeavyEvent)
}
