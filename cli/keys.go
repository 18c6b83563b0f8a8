package cli

import (
	"context"
	"fmt"
)

// runKeys is `expd keys rotate SCOPE`: a new SDK key, shown once.
func runKeys(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || args[0] != "rotate" {
		return usagef("usage: expd %s", e.usage)
	}
	fs := e.flags("rotate")
	pos, err := e.parse(fs, args[1:], 1, "SCOPE: publishable or secret")
	if err != nil {
		return err
	}
	if pos[0] != "publishable" && pos[0] != "secret" {
		return usagef("SCOPE must be publishable or secret, not %q", pos[0])
	}
	c, err := e.client()
	if err != nil {
		return err
	}
	var key struct {
		Scope     string `json:"scope"`
		Key       string `json:"key"`
		CreatedAt string `json:"created_at"`
	}
	if err := c.Do(ctx, "POST", "/v1/keys", map[string]string{"scope": pos[0]}, &key); err != nil {
		return err
	}
	if !e.table() {
		return e.printJSON(key)
	}
	fmt.Fprintf(e.io.Stdout, "New %s key (shown once; the previous %s key no longer works):\n%s\n", key.Scope, key.Scope, key.Key)
	return nil
}
