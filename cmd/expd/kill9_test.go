package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/expd/expd/clickhouse/clickhousetest"
	"github.com/expd/expd/database"
)

// TestAckedEventsSurviveKill9 loads POST /v1/events of a real `expd dev`
// from eight clients and kills the process (SIGKILL) mid-load: every
// event it acknowledged (202) is stored exactly once, nothing is stored
// twice, and after a restart the batches that got no answer are sent
// again and every event is stored once. On the database engine (SQLite,
// the dev's), with CLICKHOUSE_URL on the two-shard cluster, and with the
// ingest spool in front of it (INGEST_SPOOL_DIR): there the acknowledged
// events are in the spool's log at the kill, and the restarted process
// on the same directory ships them, each once.
func TestAckedEventsSurviveKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildExpd(t)
	onClickHouse := func(spool bool) func(t *testing.T, dir string) ([]string, func(t *testing.T, orgID string) map[string]int) {
		return func(t *testing.T, dir string) ([]string, func(*testing.T, string) map[string]int) {
			s, dsn := clickhousetest.StoreWithDSN(t, true)
			env := []string{"CLICKHOUSE_URL=" + dsn, "CLICKHOUSE_CLUSTER=" + clickhousetest.Cluster(t)}
			if spool {
				env = append(env, "INGEST_SPOOL_DIR="+filepath.Join(dir, "spool"))
			}
			return env, func(t *testing.T, orgID string) map[string]int {
				ids, err := s.StoredIDs(t.Context(), orgID)
				if err != nil {
					t.Fatal(err)
				}
				return ids
			}
		}
	}
	for _, engine := range []struct {
		name  string
		spool bool // acknowledged events reach the store after the restart
		env   func(t *testing.T, dir string) ([]string, func(t *testing.T, orgID string) map[string]int)
	}{
		{"database", false, func(*testing.T, string) ([]string, func(*testing.T, string) map[string]int) { return nil, nil }},
		{"clickhouse", false, onClickHouse(false)},
		{"spool", true, onClickHouse(true)},
	} {
		t.Run(engine.name, func(t *testing.T) {
			dir := t.TempDir()
			env, stored := engine.env(t, dir)
			if stored == nil {
				stored = func(t *testing.T, orgID string) map[string]int { return sqlStoredIDs(t, dir, orgID) }
			}
			p := startDevEnv(t, bin, dir, env, "--plan", "enterprise")
			creds := readCreds(t, dir)
			exp := `{"name":"kill9","salt":"saltsalt","bucket_count":100,"allocation":[{"variant":"a","weight":1},{"variant":"b","weight":1}],"metrics":[]}`
			if status, body := call(t, "POST", p.base+"/v1/experiments", creds.IdentityJWT, exp); status != 201 {
				t.Fatalf("create: %d %s", status, body)
			}

			var (
				mu               sync.Mutex
				acked, uncertain [][]byte // request bodies
				ackedIDs         []string
				allIDs           []string
				stop             atomic.Bool
				wg               sync.WaitGroup
			)
			enough := make(chan struct{})
			var once sync.Once
			for c := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; !stop.Load(); i++ {
						body, ids := kill9Batch(c, i)
						status := postRaw(p.base+"/v1/events", creds.SecretKey, body)
						mu.Lock()
						allIDs = append(allIDs, ids...)
						if status == http.StatusAccepted {
							acked, ackedIDs = append(acked, body), append(ackedIDs, ids...)
							if len(acked) >= 60 {
								once.Do(func() { close(enough) })
							}
						} else {
							uncertain = append(uncertain, body)
						}
						mu.Unlock()
					}
				}()
			}
			<-enough
			p.kill() // mid-load: requests are in flight
			stop.Store(true)
			wg.Wait()
			t.Logf("%d batches acknowledged before the kill, %d without an answer", len(acked), len(uncertain))

			storedOnce := func(after map[string]int) {
				t.Helper()
				for _, id := range ackedIDs {
					if after[id] != 1 {
						t.Fatalf("acknowledged event %s stored %d times after kill -9; want once", id, after[id])
					}
				}
				for id, n := range after {
					if n != 1 {
						t.Fatalf("event %s stored %d times; want once", id, n)
					}
				}
			}
			if !engine.spool {
				storedOnce(stored(t, creds.OrgID))
			}

			// Restarted, the clients send again what got no answer.
			p = startDevEnv(t, bin, dir, env, "--plan", "enterprise")
			if engine.spool {
				// The restarted process ships what the killed one
				// acknowledged into the spool.
				deadline := time.Now().Add(time.Minute)
				after := stored(t, creds.OrgID)
				for slices.ContainsFunc(ackedIDs, func(id string) bool { return after[id] == 0 }) && time.Now().Before(deadline) {
					time.Sleep(200 * time.Millisecond)
					after = stored(t, creds.OrgID)
				}
				storedOnce(after)
			}
			for _, body := range uncertain {
				if status := postRaw(p.base+"/v1/events", creds.SecretKey, body); status != http.StatusAccepted {
					t.Fatalf("resend after restart: %d", status)
				}
			}
			p.stop()
			final := stored(t, creds.OrgID)
			if len(final) != len(allIDs) {
				t.Errorf("%d ids stored after the resends; want %d", len(final), len(allIDs))
			}
			for _, id := range allIDs {
				if final[id] != 1 {
					t.Fatalf("event %s stored %d times after the resends; want once", id, final[id])
				}
			}
		})
	}
}

// kill9Batch is client c's i-th request body: 50 exposures of distinct
// users, and their ids.
func kill9Batch(c, i int) ([]byte, []string) {
	var events []map[string]any
	var ids []string
	now := time.Now().UTC().Format(time.RFC3339Nano)
	for j := range 50 {
		id := fmt.Sprintf("k9-%d-%d-%d", c, i, j)
		ids = append(ids, id)
		events = append(events, map[string]any{"event_id": id, "type": "exposure", "experiment_id": "kill9",
			"user_id": fmt.Sprintf("u-%d-%d-%d", c, i, j), "variant": "a", "timestamp": now})
	}
	b, _ := json.Marshal(map[string]any{"events": events})
	return b, ids
}

// postRaw posts body with an SDK key and returns the status, 0 when no
// answer came (the process died).
func postRaw(url, key string, body []byte) int {
	req, err := http.NewRequest("POST", url, bytes.NewReader(body))
	if err != nil {
		return 0
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// sqlStoredIDs counts the org's events by id in the dev's SQLite.
func sqlStoredIDs(t *testing.T, dir, orgID string) map[string]int {
	t.Helper()
	db, err := database.Open("", dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if s, err := db.DB(); err == nil {
			s.Close()
		}
	}()
	var rows []struct {
		EventID string
		N       int
	}
	if err := db.Raw("SELECT event_id, count(*) AS n FROM events WHERE org_id = ? GROUP BY event_id", orgID).Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, r := range rows {
		if strings.HasPrefix(r.EventID, "k9-") {
			out[r.EventID] = r.N
		}
	}
	return out
}
