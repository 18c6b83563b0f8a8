package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/expd/expd/internal/eventmix"
)

func jsonOf(v any) ([]byte, error) { return json.Marshal(v) }

// importAll writes lines events to a temporary NDJSON file and streams it
// to POST /v1/events/import.
func importAll(ctx context.Context, env *benchEnv, lines int) (loadResult, error) {
	f, err := os.CreateTemp("", "expd-import-*.ndjson")
	if err != nil {
		return loadResult{}, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	w := bufio.NewWriter(f)
	now := time.Now().UTC()
	for i := 0; i < lines; i++ {
		b, err := jsonOf(eventmix.Event(env.experimentID, i, now))
		if err != nil {
			return loadResult{}, err
		}
		w.Write(b)
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		return loadResult{}, err
	}
	size, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return loadResult{}, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return loadResult{}, err
	}
	req, err := http.NewRequestWithContext(ctx, "POST", env.baseURL+"/v1/events/import", f)
	if err != nil {
		return loadResult{}, err
	}
	req.ContentLength = size
	req.Header.Set("Content-Type", "application/x-ndjson")
	req.Header.Set("X-API-Key", env.secret)
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return loadResult{}, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	elapsed := time.Since(start)
	var ack struct {
		Accepted int `json:"accepted"`
	}
	if resp.StatusCode != http.StatusAccepted || json.Unmarshal(raw, &ack) != nil || ack.Accepted != lines {
		return loadResult{}, fmt.Errorf("import: %d %s", resp.StatusCode, raw)
	}
	return loadResult{rows: ack.Accepted, bytes: size, elapsed: elapsed}, nil
}
