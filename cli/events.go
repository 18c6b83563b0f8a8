package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"
)

type importResult struct {
	Lines         int `json:"lines"`
	Accepted      int `json:"accepted"`
	Duplicates    int `json:"duplicates"`
	Rejected      int `json:"rejected"`
	FirstRejected []struct {
		Index   int    `json:"index"`
		EventID string `json:"event_id"`
		Reason  string `json:"reason"`
	} `json:"first_rejected"`
}

// runEvents is `expd events import FILE` (NDJSON; needs the org's secret
// key: --key, EXPD_SECRET_KEY, 'expd login --secret-key' or expd dev's).
func runEvents(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || args[0] != "import" {
		return usagef("usage: expd %s", e.usage)
	}
	fs := e.flags("import")
	fs.StringVar(&e.key, "key", "", "the org's secret key (default: EXPD_SECRET_KEY, 'expd login --secret-key', or expd dev's)")
	pos, err := e.parse(fs, args[1:], 1, "FILE: newline-delimited JSON events")
	if err != nil {
		return err
	}
	f, err := os.Open(pos[0])
	if err != nil {
		return usagef("open %s: %v", pos[0], err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return usagef("stat %s: %v", pos[0], err)
	}
	c, err := e.client()
	if err != nil {
		return err
	}
	if c.SecretKey == "" {
		return usagef("events import needs the org's secret key: --key, EXPD_SECRET_KEY or 'expd login --secret-key'")
	}
	body := &countingReader{r: f}
	stop := e.progress(body, st.Size())
	req, err := http.NewRequestWithContext(ctx, "POST", c.BaseURL+"/v1/events/import", body)
	if err != nil {
		return err
	}
	req.ContentLength = st.Size() // lets the server refuse an oversized file before it is sent
	req.Header.Set("Content-Type", "application/x-ndjson")
	req.Header.Set("X-API-Key", c.SecretKey)
	var res importResult
	err = c.send(req, &res)
	stop()
	if err != nil {
		return err
	}
	if !e.table() {
		if err := e.printJSON(res); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(e.io.Stdout, "%d lines: %d accepted, %d duplicates, %d rejected\n", res.Lines, res.Accepted, res.Duplicates, res.Rejected)
		for _, r := range res.FirstRejected {
			fmt.Fprintf(e.io.Stdout, "  line %d (event %s): %s\n", r.Index, orDefault(r.EventID, "-"), r.Reason)
		}
		if res.Rejected > len(res.FirstRejected) {
			fmt.Fprintf(e.io.Stdout, "  ... and %d more rejected lines\n", res.Rejected-len(res.FirstRejected))
		}
	}
	if res.Rejected > 0 {
		return exitError{ExitImportPart, fmt.Sprintf("%d of %d lines rejected (the others were stored)", res.Rejected, res.Lines)}
	}
	return nil
}

type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// progress draws an upload bar on a terminal's stderr until stop is called.
func (e *env) progress(body *countingReader, total int64) (stop func()) {
	if !e.io.StderrTerminal {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			fmt.Fprint(e.io.Stderr, "\r"+progressBar(body.n.Load(), total, 30))
			select {
			case <-done:
				fmt.Fprint(e.io.Stderr, "\r"+progressBar(body.n.Load(), total, 30)+"\n")
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); <-finished }
}

// progressBar renders "[#######.......]  47%  12.0/25.5 MiB".
func progressBar(done, total int64, width int) string {
	frac := 1.0
	if total > 0 {
		frac = min(float64(done)/float64(total), 1)
	}
	fill := int(frac * float64(width))
	status := ""
	if done >= total {
		status = "  sent; the server is storing it"
	}
	return fmt.Sprintf("[%s%s] %3.0f%%  %.1f/%.1f MiB%s", strings.Repeat("#", fill), strings.Repeat(".", width-fill),
		frac*100, float64(done)/(1<<20), float64(total)/(1<<20), status)
}
