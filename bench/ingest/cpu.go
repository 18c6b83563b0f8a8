package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/expd/expd/bench/benchseed"
)

// cpuMeter measures what a timed phase costs in CPU in every process it
// runs in on this machine, so that a path's cost per event can be read
// apart from the other engineers' load (which moves wall-clock rates, not
// these): this process (getrusage: the in-process API and the load
// generator), each ClickHouse server of the cluster (/proc/<pid>/stat)
// and PostgreSQL's backends connected to the bench's database. A phase is
// counted until settle after it ends, so that the servers' background
// work it caused (merges of the parts it made, a Distributed table's
// forwarding) is counted with it; the processes' idle rate, measured
// once before the rounds, is taken off.
type cpuMeter struct {
	db      *gorm.DB
	servers []int                      // ClickHouse server pids
	shards  []*benchseed.RawClickHouse // every server, for its system.events
	settle  time.Duration
	idle    cpuCost // per second
}

// cpuCost is CPU time by process group, and the servers' parts written
// by inserts, rows merged and marks (8,192 rows) read by SELECTs (the
// claim probe): system.events' MergeTreeDataWriterBlocks, MergedRows and
// SelectedMarks, summed over the servers.
type cpuCost struct {
	self, clickhouse, pg time.Duration
	parts, merged, marks float64
}

func (c cpuCost) total() time.Duration { return c.self + c.clickhouse + c.pg }

func (c cpuCost) add(o cpuCost) cpuCost {
	return cpuCost{c.self + o.self, c.clickhouse + o.clickhouse, c.pg + o.pg, c.parts + o.parts, c.merged + o.merged, c.marks + o.marks}
}

// scale is c times f (for the idle rate over a phase).
func (c cpuCost) scale(f float64) cpuCost {
	s := func(d time.Duration) time.Duration { return time.Duration(float64(d) * f) }
	return cpuCost{s(c.self), s(c.clickhouse), s(c.pg), c.parts * f, c.merged * f, c.marks * f}
}

// perEvent is c divided by n events, in µs per event.
func (c cpuCost) perEvent(n int) string {
	us := func(d time.Duration) float64 { return perEventUs(d, n) }
	return fmt.Sprintf("this process %.1f, ClickHouse %.1f, PostgreSQL backends %.1f, total %.1f µs/event; ClickHouse wrote %.1f parts per 10,000 events, merged %.1f rows and read %.1f rows in SELECTs per event",
		us(c.self), us(c.clickhouse), us(c.pg), us(c.total()), c.parts*1e4/float64(max(n, 1)), c.merged/float64(max(n, 1)), c.marks*8192/float64(max(n, 1)))
}

// cpuSample is the processes' CPU time at one instant; pg by backend pid
// (backends come and go: one that ended between two samples is lost).
type cpuSample struct {
	self                 time.Duration
	clickhouse           time.Duration
	pg                   map[int]time.Duration
	parts, merged, marks float64
}

// newCPUMeter finds the servers' pids in pids (comma-separated) or, when
// it is empty, in the pid files of the cluster directory that
// .ci/clickhouse-cluster.sh made (clusterDir/s*/pid), connects to every
// server of the cluster raw is on (its own server alone without one), and
// measures the idle rate over settle. stop closes the connections.
func newCPUMeter(ctx context.Context, db *gorm.DB, raw *benchseed.RawClickHouse, dsn, cluster, pids, clusterDir string, settle time.Duration) (m *cpuMeter, stop func(), err error) {
	m = &cpuMeter{db: db, settle: settle}
	stop = func() {
		for _, s := range m.shards {
			s.Close()
		}
	}
	if err := m.connect(ctx, raw, dsn, cluster); err != nil {
		stop()
		return nil, nil, err
	}
	if err := m.findServers(pids, clusterDir); err != nil {
		stop()
		return nil, nil, err
	}
	start := time.Now()
	s0, err := m.sample(ctx)
	if err != nil {
		stop()
		return nil, nil, err
	}
	time.Sleep(settle)
	s1, err := m.sample(ctx)
	if err != nil {
		stop()
		return nil, nil, err
	}
	m.idle = s1.since(s0).scale(1 / time.Since(start).Seconds())
	return m, stop, nil
}

// connect opens a connection to every server of cluster (listed by raw's
// server), or to dsn's server without a cluster.
func (m *cpuMeter) connect(ctx context.Context, raw *benchseed.RawClickHouse, dsn, cluster string) error {
	addrs := []string{}
	if cluster == "" {
		u, err := url.Parse(dsn)
		if err != nil {
			return err
		}
		addrs = append(addrs, u.Host)
	} else {
		rows, err := raw.Query(ctx, "SELECT host_address, port FROM system.clusters WHERE cluster = ?", cluster)
		if err != nil {
			return fmt.Errorf("cluster servers: %w", err)
		}
		for rows.Next() {
			var host string
			var port uint16
			if err := rows.Scan(&host, &port); err != nil {
				rows.Close()
				return fmt.Errorf("cluster servers: %w", err)
			}
			addrs = append(addrs, net.JoinHostPort(host, strconv.Itoa(int(port))))
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("cluster servers: %w", err)
		}
	}
	for _, a := range addrs {
		c, err := benchseed.OpenRawClickHouse("clickhouse://"+a+"/default", "default", "")
		if err != nil {
			return err
		}
		m.shards = append(m.shards, c)
	}
	return nil
}

// findServers reads the servers' pids.
func (m *cpuMeter) findServers(pids, clusterDir string) error {
	var fields []string
	if pids != "" {
		fields = strings.Split(pids, ",")
	} else if clusterDir != "" {
		files, _ := filepath.Glob(filepath.Join(clusterDir, "s*", "pid"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				return fmt.Errorf("clickhouse pid: %w", err)
			}
			fields = append(fields, string(b))
		}
	}
	for _, f := range fields {
		pid, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return fmt.Errorf("clickhouse pid %q: %w", f, err)
		}
		if _, err := procCPU(pid); err != nil {
			return err
		}
		m.servers = append(m.servers, pid)
	}
	return nil
}

// measure runs phase and sets its result's cost: the CPU used from its
// start until settle after its end, less the idle rate over that time.
func (m *cpuMeter) measure(ctx context.Context, phase func() (loadResult, error)) (loadResult, error) {
	start := time.Now()
	s0, err := m.sample(ctx)
	if err != nil {
		return loadResult{}, err
	}
	res, err := phase()
	if err != nil {
		return res, err
	}
	time.Sleep(m.settle)
	s1, err := m.sample(ctx)
	if err != nil {
		return res, err
	}
	c := s1.since(s0)
	idle := m.idle.scale(time.Since(start).Seconds())
	res.cost = cpuCost{max(c.self-idle.self, 0), max(c.clickhouse-idle.clickhouse, 0), max(c.pg-idle.pg, 0),
		max(c.parts-idle.parts, 0), max(c.merged-idle.merged, 0), max(c.marks-idle.marks, 0)}
	return res, nil
}

func (m *cpuMeter) sample(ctx context.Context) (cpuSample, error) {
	s := cpuSample{self: processCPU(), pg: map[int]time.Duration{}}
	for _, pid := range m.servers {
		c, err := procCPU(pid)
		if err != nil {
			return s, err
		}
		s.clickhouse += c
	}
	for _, sh := range m.shards {
		rows, err := sh.Query(ctx, "SELECT event, value FROM system.events WHERE event IN ('MergeTreeDataWriterBlocks', 'MergedRows', 'SelectedMarks')")
		if err != nil {
			return s, fmt.Errorf("clickhouse counters: %w", err)
		}
		for rows.Next() {
			var name string
			var v uint64
			if err := rows.Scan(&name, &v); err != nil {
				rows.Close()
				return s, fmt.Errorf("clickhouse counters: %w", err)
			}
			switch name {
			case "MergedRows":
				s.merged += float64(v)
			case "SelectedMarks":
				s.marks += float64(v)
			default:
				s.parts += float64(v)
			}
		}
		rows.Close()
	}
	var pids []int
	if err := m.db.WithContext(ctx).Raw("SELECT pid FROM pg_stat_activity WHERE datname = current_database()").Scan(&pids).Error; err != nil {
		return s, fmt.Errorf("postgresql backends: %w", err)
	}
	for _, pid := range pids {
		if c, err := procCPU(pid); err == nil { // not on this machine, or ended
			s.pg[pid] = c
		}
	}
	return s, nil
}

// since is the CPU used from s0 to s: a backend started in between
// counts from zero.
func (s cpuSample) since(s0 cpuSample) cpuCost {
	c := cpuCost{self: s.self - s0.self, clickhouse: s.clickhouse - s0.clickhouse, parts: s.parts - s0.parts, merged: s.merged - s0.merged, marks: s.marks - s0.marks}
	for pid, t := range s.pg {
		c.pg += t - s0.pg[pid]
	}
	return c
}

// clockTick is the unit of /proc/<pid>/stat's times (USER_HZ, 100 on
// Linux's supported architectures).
const clockTick = 10 * time.Millisecond

// procCPU is a process's user and system CPU time from /proc/<pid>/stat.
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("cpu of pid %d: %w", pid, err)
	}
	// Fields after the command (which may hold spaces) in parentheses:
	// state is field 3, utime 14, stime 15.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("cpu of pid %d: short stat", pid)
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("cpu of pid %d: stat %q", pid, f[11:13])
	}
	return time.Duration(ut+st) * clockTick, nil
}

// serveNull serves a handler that reads a request's body and acks size
// events without looking at them: posting to it costs this process the
// HTTP exchange alone (the load generator's side and the server's
// transport), the part of the API path's own CPU that is not the API's.
func serveNull(size int) (string, error) {
	ack := []byte(fmt.Sprintf(`{"accepted":%d}`, size))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	go func() {
		_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusAccepted)
			_, _ = w.Write(ack)
		}))
	}()
	return "http://" + ln.Addr().String(), nil
}
