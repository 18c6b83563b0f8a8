package clickhouse

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// Store is a connection to expd's ClickHouse database: the node of the
// DSN, through which reads and writes of the whole data set go (the
// Distributed tables on a cluster), and one connection per shard (its
// first replica) for the per-shard reads of a run, plus every node of the
// cluster for DDL and deletes, which a Distributed table does not pass on.
type Store struct {
	conn     driver.Conn
	database string
	cluster  string
	shards   []driver.Conn // one per shard, for shard-local reads and writes
	slots    []int         // shard index by sharding key modulo total weight (route.go)
	nodes    []driver.Conn // every node (replicas too), for DDL and mutations
	// Tables read and written across the data set: the Distributed
	// tables on a cluster, the local ones on one node.
	events, claims, scores string
}

// The local tables of the schema (migrations/), one per shard.
const (
	eventsLocal = "events_local"
	// claimsLocal holds each stored event id's claim, derived from the
	// events by a view (0004_event_claims.sql).
	claimsLocal = "event_claims_local"
	scoresLocal = "scores_local"
)

// Open connects to the ClickHouse of dsn (a clickhouse-go DSN such as
// clickhouse://127.0.0.1:9000/expd). With cluster set (a name of the
// server's remote_servers), it reads the cluster's nodes from
// system.clusters and connects to each; the database must exist on every
// node (Migrate creates it).
func Open(ctx context.Context, dsn, cluster string) (*Store, error) {
	opts, err := ch.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("clickhouse dsn: %w", err)
	}
	if opts.Settings == nil {
		opts.Settings = ch.Settings{}
	}
	// A write to a Distributed table returns once every shard has its
	// rows, not when they are queued on this node: the commit point.
	opts.Settings["insert_distributed_sync"] = 1
	database := opts.Auth.Database
	if database == "" {
		database = "default"
	}
	s := &Store{database: database, cluster: cluster, events: eventsLocal, claims: claimsLocal, scores: scoresLocal}
	if s.conn, err = openAt(ctx, opts, "default"); err != nil {
		return nil, err
	}
	if cluster == "" {
		s.shards, s.nodes = []driver.Conn{s.conn}, []driver.Conn{s.conn}
		return s, nil
	}
	s.events, s.claims, s.scores = "events", "event_claims", "scores"
	rows, err := s.conn.Query(ctx, `SELECT shard_num, shard_weight, replica_num, host_address, port FROM system.clusters WHERE cluster = ? ORDER BY shard_num, replica_num`, cluster)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("read cluster %s: %w", cluster, err)
	}
	defer rows.Close()
	var weights []uint32
	for rows.Next() {
		var shard, weight, replica uint32
		var host string
		var port uint16
		if err := rows.Scan(&shard, &weight, &replica, &host, &port); err != nil {
			s.Close()
			return nil, fmt.Errorf("read cluster %s: %w", cluster, err)
		}
		o := *opts
		o.Addr = []string{joinHostPort(host, port)}
		c, err := openAt(ctx, &o, "default")
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("node %d.%d of cluster %s: %w", shard, replica, cluster, err)
		}
		s.nodes = append(s.nodes, c)
		if replica == 1 {
			s.shards = append(s.shards, c)
			weights = append(weights, weight)
		}
	}
	if err := rows.Err(); err != nil {
		s.Close()
		return nil, fmt.Errorf("read cluster %s: %w", cluster, err)
	}
	if s.slots = slotsOf(weights); len(s.slots) == 0 {
		s.Close()
		return nil, fmt.Errorf("cluster %q is not in system.clusters of %s, or all its shards weigh 0", cluster, strings.Join(opts.Addr, ","))
	}
	return s, nil
}

func joinHostPort(host string, port uint16) string {
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return host + ":" + strconv.Itoa(int(port))
}

// openAt opens a connection with opts and pings it. Statements name the
// database explicitly (qualified), so the connection's own database need
// not exist yet: Migrate creates it.
func openAt(ctx context.Context, opts *ch.Options, database string) (driver.Conn, error) {
	o := *opts
	o.Auth.Database = database
	c, err := ch.Open(&o)
	if err != nil {
		return nil, fmt.Errorf("open clickhouse %s: %w", strings.Join(o.Addr, ","), err)
	}
	if err := c.Ping(ctx); err != nil {
		c.Close()
		return nil, fmt.Errorf("ping clickhouse %s: %w", strings.Join(o.Addr, ","), err)
	}
	return c, nil
}

// Close closes every connection.
func (s *Store) Close() error {
	seen := map[driver.Conn]bool{}
	for _, c := range append([]driver.Conn{s.conn}, s.nodes...) {
		if c != nil && !seen[c] {
			seen[c] = true
			c.Close()
		}
	}
	return nil
}

// Database is the ClickHouse database the store uses.
func (s *Store) Database() string { return s.database }

// Cluster is the cluster the store shards over, "" on one node.
func (s *Store) Cluster() string { return s.cluster }

// Shards is how many shards the store reads from (1 on one node).
func (s *Store) Shards() int { return len(s.shards) }

// t qualifies a table name with the store's database.
func (s *Store) t(name string) string { return quoteIdent(s.database) + "." + name }

func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "\\`") + "`" }

// quote writes s as a ClickHouse string literal.
func quote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// quoteList writes ss as a parenthesized list of literals, for IN.
func quoteList(ss []string) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, s := range ss {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quote(s))
	}
	b.WriteByte(')')
	return b.String()
}

// CountPerShard counts the org's stored events on each shard (each id
// once), for tests and for watching the spread of a cluster.
func (s *Store) CountPerShard(ctx context.Context, orgID string) ([]uint64, error) {
	out := make([]uint64, len(s.shards))
	for i, c := range s.shards {
		if err := c.QueryRow(ctx, "SELECT uniqExact(event_id) FROM "+s.t(eventsLocal)+" WHERE org_id = ?", orgID).Scan(&out[i]); err != nil {
			return nil, fmt.Errorf("count events of shard %d: %w", i+1, err)
		}
	}
	return out, nil
}

// StoredIDs counts the org's events by id as reads see them (FINAL, so
// copies of a retried write that collapse count once), for tests and for
// checking what a write path acknowledged: every id once.
func (s *Store) StoredIDs(ctx context.Context, orgID string) (map[string]int, error) {
	rows, err := s.conn.Query(ctx, "SELECT event_id, count() FROM "+s.t(s.events)+" FINAL WHERE org_id = ? GROUP BY event_id", orgID)
	if err != nil {
		return nil, fmt.Errorf("count stored ids: %w", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var id string
		var n uint64
		if err := rows.Scan(&id, &n); err != nil {
			return nil, fmt.Errorf("count stored ids: %w", err)
		}
		out[id] = int(n)
	}
	return out, rows.Err()
}

// batchContext is the context of one batch insert on ctx: ctx's end
// reaches the batch until release is called, after its Send, and not
// afterwards. clickhouse-go's Send closes its connection when its
// context ends, from a goroutine that can see the end after Send has put
// the connection back in the pool, and the next query on it then fails
// with "use of closed network connection": a context ended just after an
// insert (a request's, a migration's timeout) broke the store's next
// query, seen as tests failing now and then on the loaded CI machine.
func batchContext(ctx context.Context) (bctx context.Context, release func()) {
	bctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
	return bctx, func() { stop() }
}
