package cli

import (
	"github.com/expd/expd/mgmttokens"

	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"time"
)

// runTokens is `expd tokens create NAME [--role member] [--expires 720h]
// | list | revoke ID`.
func runTokens(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		return usagef("usage: expd tokens create NAME [--role admin|member] [--expires DURATION] | list | revoke ID")
	}
	sub, args := args[0], args[1:]
	fs := e.flags(sub)
	role := fs.String("role", "member", "admin or member (create)")
	expires := fs.Duration("expires", 0, "lifetime, e.g. 720h (create; default: no expiry)")
	want := map[string]int{"create": 1, "list": 0, "revoke": 1}
	n, ok := want[sub]
	if !ok {
		return usagef("unknown subcommand %q: create, list or revoke", sub)
	}
	pos, c, err := e.setup(fs, args, n, "create NAME, list, or revoke ID")
	if err != nil {
		return err
	}
	switch sub {
	case "create":
		body := map[string]any{"name": pos[0], "role": *role}
		if *expires > 0 {
			body["expires_at"] = time.Now().Add(*expires).UTC().Format(time.RFC3339)
		}
		var tok mgmttokens.IssuedToken
		if err := c.Do(ctx, "POST", "/v1/management-tokens", body, &tok); err != nil {
			return err
		}
		if !e.table() {
			return e.printJSON(tok)
		}
		fmt.Fprintf(e.io.Stdout, "Management token %q (%s), shown once:\n%s\n", tok.Name, tok.Role, tok.Plaintext)
		return nil
	case "revoke":
		if err := c.Do(ctx, "DELETE", "/v1/management-tokens/"+url.PathEscape(pos[0]), nil, nil); err != nil {
			return err
		}
		fmt.Fprintf(e.io.Stderr, "Revoked %s\n", pos[0])
		return nil
	}
	var list mgmttokens.TokenList
	var raw json.RawMessage
	if err := c.Do(ctx, "GET", "/v1/management-tokens", nil, &raw); err != nil {
		return err
	}
	if !e.table() {
		_, err := fmt.Fprintf(e.io.Stdout, "%s\n", raw)
		return err
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return err
	}
	tw := newTable(e.io.Stdout, "NAME", "ROLE", "PREFIX", "CREATED", "EXPIRES", "LAST USED", "STATE", "ID")
	now := time.Now()
	for _, t := range list.ManagementTokens {
		row(tw, t.Name, t.Role, t.Prefix+"…", when(t.CreatedAt), optWhen(t.ExpiresAt), optWhen(t.LastUsedAt), t.State(now), t.ID)
	}
	return tw.Flush()
}

func optWhen(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return when(*t)
}
