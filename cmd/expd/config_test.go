package main

import (
	"strings"
	"testing"
	"time"
)

// INGEST_SPOOL_DIR needs ClickHouse, the store the spool ships to,
// INGEST_SPOOL_MAX_BYTES a positive number of bytes and
// INGEST_SPOOL_LINGER a positive Go duration (2s unset): anything else
// stops the process at start with an error naming the setting; the
// flags' directory and linger are checked the same way when the spool
// opens.
func TestSpoolSettings(t *testing.T) {
	dir := t.TempDir()
	const ch = "clickhouse://127.0.0.1:9000/expd"
	for _, c := range []struct {
		name, clickhouse, dir, max, linger string
		want                               string // in the error; "" for valid
	}{
		{"without clickhouse", "", dir, "", "", "INGEST_SPOOL_DIR is set without CLICKHOUSE_URL"},
		{"bound with a unit", ch, dir, "1GiB", "", "INGEST_SPOOL_MAX_BYTES: want a positive number of bytes"},
		{"bound zero", ch, dir, "0", "", "INGEST_SPOOL_MAX_BYTES: want a positive number of bytes"},
		{"bound negative", ch, dir, "-1", "", "INGEST_SPOOL_MAX_BYTES: want a positive number of bytes"},
		{"linger without a unit", ch, dir, "", "2", "INGEST_SPOOL_LINGER: want a positive duration"},
		{"linger zero", ch, dir, "", "0s", "INGEST_SPOOL_LINGER: want a positive duration"},
		{"linger negative", ch, dir, "", "-1s", "INGEST_SPOOL_LINGER: want a positive duration"},
		{"linger a word", ch, dir, "", "soon", "INGEST_SPOOL_LINGER: want a positive duration"},
		{"valid", ch, dir, "2048", "250ms", ""},
		{"unset", "", "", "", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("CLICKHOUSE_URL", c.clickhouse)
			t.Setenv("INGEST_SPOOL_DIR", c.dir)
			t.Setenv("INGEST_SPOOL_MAX_BYTES", c.max)
			t.Setenv("INGEST_SPOOL_LINGER", c.linger)
			cfg := configFromEnv()
			err := cfg.validate()
			if c.want == "" {
				if err != nil {
					t.Fatalf("validate: %v", err)
				}
				if cfg.SpoolDir != c.dir || c.max != "" && cfg.SpoolMaxBytes != 2048 {
					t.Errorf("SpoolDir %q, SpoolMaxBytes %d; want %q, 2048", cfg.SpoolDir, cfg.SpoolMaxBytes, c.dir)
				}
				want := 2 * time.Second
				if c.linger != "" {
					want = 250 * time.Millisecond
				}
				if cfg.SpoolLinger != want {
					t.Errorf("SpoolLinger %s; want %s", cfg.SpoolLinger, want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("validate: %v; want an error containing %q", err, c.want)
			}
		})
	}
	// --ingest-spool-dir without CLICKHOUSE_URL.
	if _, _, err := openSpool(Config{SpoolDir: dir, SpoolLinger: time.Second}, nil, nil); err == nil || !strings.Contains(err.Error(), "without CLICKHOUSE_URL") {
		t.Errorf("openSpool without ClickHouse: %v; want refused", err)
	}
	// --ingest-spool-linger 0s.
	if _, _, err := openSpool(Config{SpoolDir: dir, ClickHouseURL: ch}, nil, nil); err == nil || !strings.Contains(err.Error(), "INGEST_SPOOL_LINGER (--ingest-spool-linger): want a positive duration") {
		t.Errorf("openSpool with a zero linger: %v; want refused", err)
	}
}
