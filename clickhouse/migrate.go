package clickhouse

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one versioned step of the schema: statements applied on
// every node, and the Distributed tables a cluster gets over its local
// tables.
type migration struct {
	version     int
	name        string
	statements  []string
	distributed []distributedTable
}

// distributedTable is a "-- distributed: NAME by KEY" line of a
// migration: table NAME over NAME_local, sharded by KEY.
type distributedTable struct{ name, key string }

var distributedLine = regexp.MustCompile(`(?m)^-- distributed: (\w+) by (.+)$`)

// migrations are the files of migrations/, by version.
func migrations() ([]migration, error) {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	var out []migration
	for _, n := range names {
		base := strings.TrimSuffix(strings.TrimPrefix(n, "migrations/"), ".sql")
		v, err := strconv.Atoi(strings.SplitN(base, "_", 2)[0])
		if err != nil {
			return nil, fmt.Errorf("migration %s: no version number", n)
		}
		b, err := migrationFiles.ReadFile(n)
		if err != nil {
			return nil, err
		}
		text := string(b)
		m := migration{version: v, name: base}
		for _, d := range distributedLine.FindAllStringSubmatch(text, -1) {
			m.distributed = append(m.distributed, distributedTable{name: d[1], key: strings.TrimSpace(d[2])})
		}
		for _, st := range strings.Split(text, ";\n") {
			if st = stripComments(st); st != "" {
				m.statements = append(m.statements, st)
			}
		}
		out = append(out, m)
	}
	return out, nil
}

func stripComments(st string) string {
	var keep []string
	for _, l := range strings.Split(st, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "--") {
			keep = append(keep, l)
		}
	}
	return strings.TrimSpace(strings.Join(keep, "\n"))
}

// LatestVersion is the schema version this build needs.
func LatestVersion() (int, error) {
	ms, err := migrations()
	if err != nil || len(ms) == 0 {
		return 0, err
	}
	return ms[len(ms)-1].version, nil
}

// Migrate creates the database and applies the migrations it lacks on
// every node of the store's cluster (each node keeps its own version
// table, so a cluster without ZooKeeper needs no ON CLUSTER), then the
// Distributed tables over the local ones. Every statement is idempotent,
// so an interrupted Migrate is finished by the next.
func (s *Store) Migrate(ctx context.Context) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	return s.migrate(ctx, ms)
}

// migrate applies ms on every node.
func (s *Store) migrate(ctx context.Context, ms []migration) error {
	for _, node := range s.nodes {
		if err := s.migrateNode(ctx, node, ms); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) migrateNode(ctx context.Context, node driver.Conn, ms []migration) error {
	if err := node.Exec(ctx, "CREATE DATABASE IF NOT EXISTS "+quoteIdent(s.database)); err != nil {
		return fmt.Errorf("create clickhouse database %s: %w", s.database, err)
	}
	if err := node.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+s.t("schema_migrations")+" (version UInt32, name String) ENGINE = TinyLog"); err != nil {
		return fmt.Errorf("create clickhouse schema_migrations: %w", err)
	}
	applied, err := s.nodeVersion(ctx, node)
	if err != nil {
		return err
	}
	for _, m := range ms {
		if m.version <= applied {
			continue
		}
		for _, st := range m.statements {
			if add := addColumnStatement.FindStringSubmatch(st); add != nil {
				if err := s.addColumn(ctx, node, add[1], add[2], add[3]); err != nil {
					return fmt.Errorf("clickhouse migration %s: %w", m.name, err)
				}
				continue
			}
			st = qualify(st, s.database)
			if err := node.Exec(ctx, st); err != nil {
				return fmt.Errorf("clickhouse migration %s: %w", m.name, err)
			}
		}
		if s.cluster != "" {
			for _, d := range m.distributed {
				st := fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s AS %s ENGINE = Distributed(%s, %s, %s, %s)",
					s.t(d.name), s.t(d.name+"_local"), quote(s.cluster), quote(s.database), quote(d.name+"_local"), d.key)
				if err := node.Exec(ctx, st); err != nil {
					return fmt.Errorf("clickhouse migration %s: distributed %s: %w", m.name, d.name, err)
				}
			}
		}
		if err := s.record(ctx, node, m); err != nil {
			return fmt.Errorf("record clickhouse migration %s: %w", m.name, err)
		}
	}
	return nil
}

// record notes m as applied on node, with a batch: 18.16 waits for a
// data block after an INSERT over the native protocol, even one with
// VALUES in its text.
func (s *Store) record(ctx context.Context, node driver.Conn, m migration) error {
	ctx, release := batchContext(ctx)
	defer release()
	b, err := node.PrepareBatch(ctx, "INSERT INTO "+s.t("schema_migrations")+" (version, name)")
	if err != nil {
		return err
	}
	if err := b.Append(uint32(m.version), m.name); err != nil {
		return err
	}
	return b.Send()
}

// qualify names database in a migration's statement: the table it
// creates or drops, and the local tables a view or a copy reads and
// writes, which are resolved in the connection's database otherwise.
func qualify(st, database string) string {
	db := quoteIdent(database) + "."
	st = strings.Replace(st, "IF NOT EXISTS ", "IF NOT EXISTS "+db, 1)
	st = strings.Replace(st, "DROP TABLE IF EXISTS ", "DROP TABLE IF EXISTS "+db, 1)
	return localTableRef.ReplaceAllString(st, "$1 "+db+"$2")
}

// localTableRef is a statement's reference to a local table: a view's
// (TO or FROM it) or a copy's (INTO and FROM).
var localTableRef = regexp.MustCompile(`\b(TO|FROM|INTO) (\w+_local)\b`)

var addColumnStatement = regexp.MustCompile(`^ALTER TABLE (\w+) ADD COLUMN (\w+) (.+)$`)

// addColumn adds column to table on node, and on a cluster to the
// Distributed table over a _local one, where it is not there yet.
func (s *Store) addColumn(ctx context.Context, node driver.Conn, table, column, typ string) error {
	tables := []string{table}
	if s.cluster != "" && strings.HasSuffix(table, "_local") {
		tables = append(tables, strings.TrimSuffix(table, "_local"))
	}
	for _, t := range tables {
		var has uint8
		if err := node.QueryRow(ctx, "SELECT count() > 0 FROM system.columns WHERE database = ? AND table = ? AND name = ?", s.database, t, column).Scan(&has); err != nil {
			return fmt.Errorf("read columns of %s: %w", t, err)
		}
		if has == 1 {
			continue
		}
		if err := node.Exec(ctx, "ALTER TABLE "+s.t(t)+" ADD COLUMN "+quoteIdent(column)+" "+typ); err != nil {
			return fmt.Errorf("add column %s.%s: %w", t, column, err)
		}
	}
	return nil
}

// nodeVersion is the latest migration applied on node, 0 for none.
func (s *Store) nodeVersion(ctx context.Context, node driver.Conn) (int, error) {
	var exists uint8
	if err := node.QueryRow(ctx, "SELECT count() > 0 FROM system.tables WHERE database = ? AND name = 'schema_migrations'", s.database).Scan(&exists); err != nil {
		return 0, fmt.Errorf("read clickhouse schema version: %w", err)
	}
	if exists == 0 {
		return 0, nil
	}
	var v uint32
	if err := node.QueryRow(ctx, "SELECT max(version) FROM "+s.t("schema_migrations")).Scan(&v); err != nil {
		return 0, fmt.Errorf("read clickhouse schema version: %w", err)
	}
	return int(v), nil
}

// CheckSchema fails unless every node has every migration this build
// has: the api and the worker refuse to start on an unmigrated schema.
func (s *Store) CheckSchema(ctx context.Context) error {
	latest, err := LatestVersion()
	if err != nil {
		return err
	}
	for i, node := range s.nodes {
		v, err := s.nodeVersion(ctx, node)
		if err != nil {
			return err
		}
		if v < latest {
			return fmt.Errorf("clickhouse schema of node %d of %d is at version %d, this build needs %d: run expd migrate", i+1, len(s.nodes), v, latest)
		}
	}
	return nil
}

// DropDatabase drops the store's database on every node (tests).
func (s *Store) DropDatabase(ctx context.Context) error {
	for _, node := range s.nodes {
		if err := node.Exec(ctx, "DROP DATABASE IF EXISTS "+quoteIdent(s.database)); err != nil {
			return fmt.Errorf("drop clickhouse database %s: %w", s.database, err)
		}
	}
	return nil
}
