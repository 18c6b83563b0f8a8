package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// runLogin stores the server address and a token after checking them
// against the server. Interactive on a terminal; for scripts,
// `expd login --url URL --token TOKEN` (or the token on stdin).
func runLogin(ctx context.Context, e *env, args []string) error {
	fs := e.flags("")
	secretKey := fs.String("secret-key", "", "also store a secret SDK key for 'expd events import'")
	if _, err := e.parse(fs, args, 0, "no arguments"); err != nil {
		return err
	}
	fallback, _ := e.loadDev()
	if e.url == "" {
		e.url = firstNonEmpty(e.io.Getenv("EXPD_URL"), fallback.URL)
		if e.io.StdinTerminal {
			fmt.Fprintf(e.io.Stderr, "expd server URL [%s]: ", orDefault(e.url, "none"))
			line, err := readLine(e.io.Stdin)
			if err != nil {
				return err
			}
			if line != "" {
				e.url = line
			}
		}
	}
	if e.url == "" {
		return usagef("no server URL: pass --url URL")
	}
	if e.token == "" {
		if e.io.StdinTerminal {
			fmt.Fprint(e.io.Stderr, "management token (expd_mt_...) or identity session token: ")
		}
		line, err := readLine(e.io.Stdin)
		if err != nil {
			return err
		}
		e.token = line
	}
	if e.token == "" {
		return usagef("no token: pass --token TOKEN, or give it on stdin")
	}
	creds := Credentials{URL: strings.TrimRight(e.url, "/"), Token: e.token, SecretKey: *secretKey}
	c := &Client{BaseURL: creds.URL, Token: creds.Token}
	var list struct {
		Experiments []json.RawMessage `json:"experiments"`
	}
	if err := c.Do(ctx, "GET", "/v1/experiments", nil, &list); err != nil {
		return fmt.Errorf("the server refused these credentials: %w", err)
	}
	path, err := e.loginPath()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	b, _ := json.MarshalIndent(creds, "", "  ")
	if err := os.WriteFile(path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("store credentials: %w", err)
	}
	if e.table() {
		fmt.Fprintf(e.io.Stdout, "Logged in to %s (%d experiments visible). Credentials stored in %s\n", creds.URL, len(list.Experiments), path)
		return nil
	}
	return e.printJSON(map[string]any{"url": creds.URL, "stored_in": path, "experiments": len(list.Experiments)})
}

func runLogout(_ context.Context, e *env, args []string) error {
	if _, err := e.parse(e.flags(""), args, 0, "no arguments"); err != nil {
		return err
	}
	path, err := e.loginPath()
	if err != nil {
		return err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", path, err)
	}
	fmt.Fprintf(e.io.Stderr, "Removed %s\n", path)
	return nil
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

func orDefault(v, d string) string {
	if v == "" {
		return d
	}
	return v
}
