package clickhousetest

import (
	"net/url"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/expd/expd/clickhouse"
)

// OwnCluster is a two-shard cluster a test starts for itself with
// .ci/clickhouse-cluster.sh, for what the shared one must not see: a
// shard stopped and started again.
type OwnCluster struct {
	script, dir, url, name string
}

// StartCluster starts a cluster of two clickhouse-server processes for
// the test and stops it at cleanup. Without clickhouse-server it skips
// (fails where ClickHouse is required).
func StartCluster(t testing.TB) *OwnCluster {
	t.Helper()
	if _, err := exec.LookPath("clickhouse-server"); err != nil {
		if required() {
			t.Fatal("clickhouse-server is not installed and ClickHouse is required")
		}
		t.Skip("clickhouse-server is not installed")
	}
	_, file, _, _ := runtime.Caller(0)
	c := &OwnCluster{script: filepath.Join(filepath.Dir(file), "..", "..", ".ci", "clickhouse-cluster.sh")}
	out, err := exec.Command(c.script, "start").Output()
	if err != nil {
		t.Fatalf("start a clickhouse cluster: %v\n%s", err, exitStderr(err))
	}
	for _, line := range strings.Split(string(out), "\n") {
		k, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		if !ok {
			continue
		}
		switch k {
		case "CLICKHOUSE_TEST_URL":
			c.url = v
		case "CLICKHOUSE_TEST_CLUSTER":
			c.name = v
		case "CLICKHOUSE_CLUSTER_DIR":
			c.dir = v
		}
	}
	if c.dir == "" || c.url == "" || c.name == "" {
		t.Fatalf("clickhouse-cluster.sh start printed %q", out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command(c.script, "stop", c.dir).CombinedOutput(); err != nil {
			t.Errorf("stop the clickhouse cluster: %v\n%s", err, out)
		}
	})
	return c
}

// Store is a migrated store sharded over the cluster, in a fresh
// database, and its DSN.
func (c *OwnCluster) Store(t testing.TB) (*clickhouse.Store, string) {
	t.Helper()
	u, err := url.Parse(c.url)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + Database(t)
	return open(t, u.String(), c.name), u.String()
}

// Name is the cluster's name (CLICKHOUSE_CLUSTER).
func (c *OwnCluster) Name() string { return c.name }

// StopShard stops server n (0 or 1) and waits until it is gone.
func (c *OwnCluster) StopShard(t testing.TB, n int) { c.run(t, "stop-shard", n) }

// StartShard starts server n again on its data and waits until it answers.
func (c *OwnCluster) StartShard(t testing.TB, n int) { c.run(t, "start-shard", n) }

func (c *OwnCluster) run(t testing.TB, verb string, n int) {
	t.Helper()
	if out, err := exec.Command(c.script, verb, c.dir, strconv.Itoa(n)).CombinedOutput(); err != nil {
		t.Fatalf("clickhouse-cluster.sh %s %d: %v\n%s", verb, n, err, out)
	}
}

func exitStderr(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}
