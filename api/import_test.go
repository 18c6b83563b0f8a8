package api_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/expd/expd/ingest"
	"github.com/expd/expd/internal/testenv"
)

type importBody struct {
	Lines         int   `json:"lines"`
	Accepted      int   `json:"accepted"`
	Duplicates    int   `json:"duplicates"`
	Rejected      int   `json:"rejected"`
	ConfigVersion int64 `json:"config_version"`
	FirstRejected []struct {
		Index   int    `json:"index"`
		EventID string `json:"event_id"`
		Reason  string `json:"reason"`
	} `json:"first_rejected"`
}

// importFile streams the file at path to the import route.
func importFile(t *testing.T, env *testenv.Env, key, path string) testenv.Response {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	req, err := http.NewRequest("POST", env.Server.URL+"/v1/events/import", f)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-ndjson")
	req.Header.Set("X-API-Key", key)
	resp, err := env.Server.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return testenv.Response{Status: resp.StatusCode, Header: resp.Header, Body: body}
}

// importExpectation is what a generated file should import as.
type importExpectation struct {
	lines, accepted, duplicates, rejected int
	rejectedLines                         []int
}

// writeImportFile writes n event lines of historical events with bad lines,
// repeats, blank lines and one oversized line mixed in.
func writeImportFile(t *testing.T, path, expRef string, n int) importExpectation {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var want importExpectation
	base := time.Now().Add(-20 * 24 * time.Hour)
	var repeat string
	padding := strings.Repeat("p", 180)
	fileLine := 0 // line numbers in the file count blank lines too
	for line := 1; line <= n; line++ {
		if line%10_000 == 0 {
			fmt.Fprint(w, "\n  \n") // blank lines are skipped, not counted
			fileLine += 2
		}
		fileLine++
		var text string
		switch {
		case line%1000 == 0:
			text, want.rejected = `{"event_id": "broken`, want.rejected+1
			want.rejectedLines = append(want.rejectedLines, fileLine)
		case line%997 == 0:
			text, want.rejected = fmt.Sprintf(`{"event_id":"bad-%d","type":"model_call","experiment_id":%q,"user_id":"u","timestamp":%q,"latency_ms":"slow"}`, line, expRef, stamp(base)), want.rejected+1
			want.rejectedLines = append(want.rejectedLines, fileLine)
		case line%1499 == 0:
			text, want.rejected = fmt.Sprintf(`{"event_id":"old-%d","type":"exposure","experiment_id":%q,"user_id":"u","variant":"control","timestamp":%q}`, line, expRef, stamp(time.Now().Add(-800*24*time.Hour))), want.rejected+1
			want.rejectedLines = append(want.rejectedLines, fileLine)
		case line%1500 == 0 && repeat != "":
			text, want.duplicates = repeat, want.duplicates+1
		case line == n/2:
			text, want.rejected = `{"event_id":"huge","prompt":"`+strings.Repeat("h", 300<<10)+`"}`, want.rejected+1
			want.rejectedLines = append(want.rejectedLines, fileLine)
		case line%2 == 0:
			text, want.accepted = fmt.Sprintf(`{"event_id":%q,"type":"model_call","experiment_id":%q,"user_id":"user-%d","variant":"concise","timestamp":%q,"latency_ms":%d,"input_tokens":10,"output_tokens":5,"prompt":%q}`,
				uuid.NewString(), expRef, line%5000, stamp(base.Add(time.Duration(line)*time.Second)), line%900, padding), want.accepted+1
		default:
			text, want.accepted = fmt.Sprintf(`{"event_id":%q,"type":"exposure","experiment_id":%q,"user_id":"user-%d","variant":"control","timestamp":%q,"note":%q}`,
				uuid.NewString(), expRef, line%5000, stamp(base.Add(time.Duration(line)*time.Second)), padding), want.accepted+1
			repeat = text
		}
		fmt.Fprintln(w, text)
	}
	want.lines = n
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return want
}

// rejectedBefore counts the rejected lines among the first n.
func (w importExpectation) rejectedBefore(n int) int {
	c := 0
	for _, l := range w.rejectedLines {
		if l <= n {
			c++
		}
	}
	return c
}

// writeHead copies the first n lines of src to dst.
func writeHead(t *testing.T, src, dst string, n int) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	sc := bufio.NewScanner(in)
	sc.Buffer(nil, 1<<20)
	var b strings.Builder
	for i := 0; i < n && sc.Scan(); i++ {
		b.WriteString(sc.Text() + "\n")
	}
	if err := os.WriteFile(dst, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}

// resetPeakRSS returns freed memory to the OS and restarts the kernel's
// peak-RSS count (VmHWM) from the current resident set, which it returns.
func resetPeakRSS(t *testing.T) int64 {
	t.Helper()
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Skipf("cannot reset peak RSS: %v", err)
	}
	return procStatus(t, "VmRSS:")
}

// procStatus reads a size field of /proc/self/status in bytes.
func procStatus(t *testing.T, field string) int64 {
	t.Helper()
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, field); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Skipf("no %s in /proc/self/status", field)
	return 0
}

func TestImportLargeFileWithBadLines(t *testing.T) {
	f := newIngestFixture(t)
	// 200,000 events exceed the free plan's allowance; lines older than
	// the enterprise plan's 730-day retention are rejected.
	if err := f.env.DB.Exec("UPDATE orgs SET plan = 'enterprise' WHERE id = ?", f.org.ID).Error; err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "events.ndjson")
	want := writeImportFile(t, path, "exp", 200_000)
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	// Peak RSS also counts the garbage the GC lets pile up before its next
	// cycle, which at the default GOGC scales with the live heap of the
	// whole test binary (every earlier test's state, the OpenAPI contract's
	// document); a low GOGC while importing keeps that slack small, so the
	// bound below measures the import.
	defer debug.SetGCPercent(debug.SetGCPercent(20))
	base := resetPeakRSS(t)
	start := time.Now()
	r := importFile(t, f.env, f.org.SecretKey, path)
	elapsed := time.Since(start)
	peak := procStatus(t, "VmHWM:")
	if r.Status != http.StatusAccepted {
		t.Fatalf("import: %d %s", r.Status, r.Body)
	}
	var got importBody
	r.JSON(t, &got)
	t.Logf("imported %d lines (%d MiB) in %s: %.0f lines/s; RSS of the test process (client, server, SQLite) %d MiB before, peak %d MiB",
		got.Lines, info.Size()>>20, elapsed.Round(time.Millisecond), float64(got.Lines)/elapsed.Seconds(), base>>20, peak>>20)
	if got.Lines != want.lines || got.Accepted != want.accepted || got.Duplicates != want.duplicates || got.Rejected != want.rejected {
		t.Fatalf("counts %+v, want lines %d accepted %d duplicates %d rejected %d", got, want.lines, want.accepted, want.duplicates, want.rejected)
	}
	if len(got.FirstRejected) != min(100, want.rejected) {
		t.Fatalf("%d rejections reported", len(got.FirstRejected))
	}
	for i, rej := range got.FirstRejected {
		if rej.Index != want.rejectedLines[i] || rej.Reason == "" {
			t.Fatalf("rejection %d: %+v, want line %d", i, rej, want.rejectedLines[i])
		}
	}
	if n := countRows(t, f.env, "org_id = ? AND source = 'import'", f.org.ID); n != int64(want.accepted) {
		t.Fatalf("%d rows stored, want %d", n, want.accepted)
	}
	// Memory stays bounded: the import grows the process by far less than
	// the file's size (loading it would take more than the file itself).
	if grown := peak - base; grown > 64<<20 {
		t.Fatalf("RSS grew by %d MiB while importing a %d MiB file", grown>>20, info.Size()>>20)
	}
	// Original timestamps are kept.
	var oldest ingest.EventRow
	if err := f.env.DB.Where("org_id = ?", f.org.ID).Order("ts").Limit(1).Take(&oldest).Error; err != nil {
		t.Fatal(err)
	}
	if age := time.Since(oldest.Ts); age < 19*24*time.Hour || age > 21*24*time.Hour {
		t.Fatalf("oldest stored ts %s: original timestamps were not kept", oldest.Ts)
	}
	// Importing the file's first lines again stores nothing twice.
	head := filepath.Join(t.TempDir(), "head.ndjson")
	writeHead(t, path, head, 2_000)
	r = importFile(t, f.env, f.org.SecretKey, head)
	var again importBody
	r.JSON(t, &again)
	if r.Status != http.StatusAccepted || again.Accepted != 0 || again.Duplicates != 2_000-want.rejectedBefore(2_000) {
		t.Fatalf("re-import: %d %+v", r.Status, again)
	}
}

func TestImportNeedsSecretKeyAndFitsTheAllowance(t *testing.T) {
	f := newIngestFixture(t)
	path := filepath.Join(t.TempDir(), "events.ndjson")
	var lines []string
	for i := 0; i < 10; i++ {
		lines = append(lines, string(testenv.Marshal(t, exposure("exp", fmt.Sprint("u", i), "control", time.Now().Add(-48*time.Hour)))))
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{f.org.PublishableKey, "", "sk_unknown"} {
		if p := testenv.ExpectProblem(t, importFile(t, f.env, key, path), 401); p.Code != "unauthorized" {
			t.Fatalf("key %q: %+v", key, p)
		}
	}
	// Nine events left this month: the ten-line file is refused whole.
	month := time.Now().UTC().Format("2006-01")
	if err := f.env.DB.Exec("INSERT INTO event_usage (org_id, month, events) VALUES (?, ?, ?)", f.org.ID, month, 100_000-9).Error; err != nil {
		t.Fatal(err)
	}
	p := testenv.ExpectProblem(t, importFile(t, f.env, f.org.SecretKey, path), 429)
	if !strings.Contains(p.Detail, "monthly_event_allowance") {
		t.Fatalf("problem %+v", p)
	}
	if n := countRows(t, f.env, "org_id = ?", f.org.ID); n != 0 {
		t.Fatalf("%d rows of a refused import stored", n)
	}
	if err := f.env.DB.Exec("UPDATE event_usage SET events = events - 1 WHERE org_id = ?", f.org.ID).Error; err != nil {
		t.Fatal(err)
	}
	r := importFile(t, f.env, f.org.SecretKey, path)
	var got importBody
	r.JSON(t, &got)
	if r.Status != http.StatusAccepted || got.Accepted != 10 || got.Lines != 10 {
		t.Fatalf("import within the allowance: %d %s", r.Status, r.Body)
	}
	// Lines reject alone, with their numbers.
	if err := os.WriteFile(path, []byte("{}\n\n[1]\n"+lines[0]+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = importFile(t, f.env, f.org.SecretKey, path)
	var mixed importBody
	r.JSON(t, &mixed)
	if mixed.Lines != 3 || mixed.Rejected != 2 || mixed.Duplicates != 1 || mixed.FirstRejected[0].Index != 1 || mixed.FirstRejected[1].Index != 3 {
		b, _ := json.Marshal(mixed)
		t.Fatalf("mixed file: %s", b)
	}
}

// The import's window is the retention in force: the org's shorter
// retention_days (PUT /v1/privacy) rejects lines the plan's would accept,
// so an import stores nothing the next purge removes.
func TestImportWindowIsTheOrgsRetention(t *testing.T) {
	f := newIngestFixture(t)
	path := filepath.Join(t.TempDir(), "events.ndjson")
	write := func(ages ...int) {
		var lines []string
		for i, days := range ages {
			at := time.Now().Add(-time.Duration(days)*24*time.Hour + time.Hour)
			lines = append(lines, string(testenv.Marshal(t, exposure("exp", fmt.Sprint("u", i), "control", at))))
		}
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// Under the plan's 30 days: 8 days old is in.
	write(8)
	var got importBody
	importFile(t, f.env, f.org.SecretKey, path).JSON(t, &got)
	if got.Accepted != 1 {
		t.Fatalf("an 8-day-old line under the plan's 30 days: %+v; want accepted", got)
	}
	putPrivacy(t, f.env, f.org, map[string]any{"payload_policy": "store", "retention_days": 7})
	write(6, 8, 20)
	got = importBody{}
	r := importFile(t, f.env, f.org.SecretKey, path)
	r.JSON(t, &got)
	if r.Status != http.StatusAccepted || got.Accepted != 1 || got.Rejected != 2 || len(got.FirstRejected) != 2 ||
		got.FirstRejected[0].Index != 2 || got.FirstRejected[1].Index != 3 || !strings.Contains(got.FirstRejected[0].Reason, "timestamp") {
		t.Fatalf("import under retention_days 7 of lines 6, 8 and 20 days old: %d %s; want the first accepted, lines 2 and 3 rejected naming timestamp", r.Status, r.Body)
	}
}
