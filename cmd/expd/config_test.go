package main

import (
	"strings"
	"testing"
)

// INGEST_SPOOL_DIR needs ClickHouse, the store the spool ships to, and
// INGEST_SPOOL_MAX_BYTES a positive number of bytes: anything else stops
// the process at start with an error naming the setting; the flag's
// directory is checked the same way when the spool opens.
func TestSpoolSettings(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, clickhouse, dir, max string
		want                       string // in the error; "" for valid
	}{
		{"without clickhouse", "", dir, "", "INGEST_SPOOL_DIR is set without CLICKHOUSE_URL"},
		{"bound with a unit", "clickhouse://127.0.0.1:9000/expd", dir, "1GiB", "INGEST_SPOOL_MAX_BYTES: want a positive number of bytes"},
		{"bound zero", "clickhouse://127.0.0.1:9000/expd", dir, "0", "INGEST_SPOOL_MAX_BYTES: want a positive number of bytes"},
		{"bound negative", "clickhouse://127.0.0.1:9000/expd", dir, "-1", "INGEST_SPOOL_MAX_BYTES: want a positive number of bytes"},
		{"valid", "clickhouse://127.0.0.1:9000/expd", dir, "2048", ""},
		{"unset", "", "", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("CLICKHOUSE_URL", c.clickhouse)
			t.Setenv("INGEST_SPOOL_DIR", c.dir)
			t.Setenv("INGEST_SPOOL_MAX_BYTES", c.max)
			cfg := configFromEnv()
			err := cfg.validate()
			if c.want == "" {
				if err != nil {
					t.Fatalf("validate: %v", err)
				}
				if cfg.SpoolDir != c.dir || c.max != "" && cfg.SpoolMaxBytes != 2048 {
					t.Errorf("SpoolDir %q, SpoolMaxBytes %d; want %q, 2048", cfg.SpoolDir, cfg.SpoolMaxBytes, c.dir)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("validate: %v; want an error containing %q", err, c.want)
			}
		})
	}
	// --ingest-spool-dir without CLICKHOUSE_URL.
	if _, _, err := openSpool(Config{SpoolDir: dir}, nil, nil); err == nil || !strings.Contains(err.Error(), "without CLICKHOUSE_URL") {
		t.Errorf("openSpool without ClickHouse: %v; want refused", err)
	}
}
