package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"

	"github.com/expd/expd/erasure"
)

// runErasures is `expd erasures create USER_ID | erasures get ID`.
func runErasures(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		return usagef("usage: expd erasures create USER_ID | get ID")
	}
	sub, args := args[0], args[1:]
	if sub != "create" && sub != "get" {
		return usagef("unknown subcommand %q: create or get", sub)
	}
	pos, c, err := e.setup(e.flags(sub), args, 1, "create USER_ID or get ID")
	if err != nil {
		return err
	}
	var v erasure.View
	if sub == "create" {
		err = c.Do(ctx, "POST", "/v1/erasures", map[string]string{"user_id": pos[0]}, &v)
	} else {
		err = c.Do(ctx, "GET", "/v1/erasures/"+url.PathEscape(pos[0]), nil, &v)
	}
	if err != nil {
		return err
	}
	if !e.table() {
		return e.printJSON(v)
	}
	fmt.Fprintf(e.io.Stdout, "Erasure %s: %s (user hash %s)\n", v.ID, v.State, v.UserHash)
	tables := make([]string, 0, len(v.Removed))
	for t := range v.Removed {
		tables = append(tables, t)
	}
	sort.Strings(tables)
	tw := newTable(e.io.Stdout, "TABLE", "ROWS REMOVED")
	for _, t := range tables {
		row(tw, t, fmt.Sprint(v.Removed[t]))
	}
	return tw.Flush()
}

// runExports is `expd exports create USER_ID`: the user's NDJSON, copied
// to stdout as it streams.
func runExports(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || args[0] != "create" {
		return usagef("usage: expd exports create USER_ID")
	}
	pos, c, err := e.setup(e.flags("create"), args[1:], 1, "create USER_ID")
	if err != nil {
		return err
	}
	return c.Stream(ctx, "POST", "/v1/exports", map[string]string{"user_id": pos[0]}, e.io.Stdout)
}

// Stream sends a JSON request and copies a 2xx answer's body to w as it
// arrives, without the default timeout (an export is as long as the
// user's history).
func (c *Client) Stream(ctx context.Context, method, path string, body any, w io.Writer) error {
	b, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("encode request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.Token)
	req.Header.Set("User-Agent", "expd-cli")
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("cannot reach %s: %w", c.BaseURL, unwrapURLError(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		p := &ProblemError{Status: resp.StatusCode}
		if json.Unmarshal(raw, p) != nil || p.Status == 0 {
			p.Status, p.Detail = resp.StatusCode, string(bytes.TrimSpace(raw))
		}
		return p
	}
	if _, err := io.Copy(w, resp.Body); err != nil {
		return fmt.Errorf("read answer of %s %s: %w", method, path, err)
	}
	return nil
}
