package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// env is one command invocation: its IO, common flags and credentials.
type env struct {
	io    IO
	name  string
	usage string

	url, token, key string
	jsonOut         bool
	tableOut        bool
	creds           Credentials
}

// flags makes the command's flag set with the flags every command takes.
func (e *env) flags(sub string) *flag.FlagSet {
	name := "expd " + e.name
	if sub != "" {
		name += " " + sub
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.io.Stderr)
	fs.StringVar(&e.url, "url", "", "server address (default: EXPD_URL, 'expd login', or a local expd dev)")
	fs.StringVar(&e.token, "token", "", "management token or identity session token (default: EXPD_TOKEN, 'expd login', or expd dev's)")
	fs.BoolVar(&e.jsonOut, "json", false, "print JSON even on a terminal")
	fs.BoolVar(&e.tableOut, "table", false, "print tables even when piped")
	return fs
}

// parse parses flags anywhere among the arguments ("results exp --day D"
// as well as "results --day D exp") and returns the positional ones.
func (e *env) parse(fs *flag.FlagSet, args []string, nPos int, posNames string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usageError{err.Error()}
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
	if nPos >= 0 && len(pos) != nPos {
		return nil, usagef("usage: expd %s (%s)", e.usage, posNames)
	}
	return pos, nil
}

// setup parses the arguments and resolves the client: the start of
// every command that talks to the server.
func (e *env) setup(fs *flag.FlagSet, args []string, nPos int, posNames string) ([]string, *Client, error) {
	pos, err := e.parse(fs, args, nPos, posNames)
	if err != nil {
		return nil, nil, err
	}
	c, err := e.client()
	return pos, c, err
}

// table tells whether to print for a person rather than for a program.
func (e *env) table() bool { return !e.jsonOut && (e.tableOut || e.io.StdoutTerminal) }

// Credentials are where and as whom the CLI talks to expd.
type Credentials struct {
	URL       string `json:"url"`
	Token     string `json:"token"`                // dashboard routes: management token or identity JWT
	SecretKey string `json:"secret_key,omitempty"` // events import
	Source    string `json:"-"`                    // where they came from, for messages
}

// credentials resolves them: flags, then EXPD_URL/EXPD_TOKEN/
// EXPD_SECRET_KEY, then the file 'expd login' wrote, then a local expd
// dev's dev-credentials.json. Each field falls through on its own.
func (e *env) credentials() (Credentials, error) {
	c := Credentials{URL: e.url, Token: e.token, SecretKey: e.key, Source: "flags"}
	fill := func(from Credentials, source string) {
		if c.URL == "" && c.Token == "" {
			c.Source = source
		}
		if c.URL == "" {
			c.URL = from.URL
		}
		if c.Token == "" {
			c.Token = from.Token
		}
		if c.SecretKey == "" {
			c.SecretKey = from.SecretKey
		}
	}
	fill(Credentials{URL: e.io.Getenv("EXPD_URL"), Token: e.io.Getenv("EXPD_TOKEN"), SecretKey: e.io.Getenv("EXPD_SECRET_KEY")}, "environment")
	if stored, err := e.loadLogin(); err == nil {
		fill(stored, "expd login")
	}
	if dev, err := e.loadDev(); err == nil {
		fill(dev, "expd dev")
	}
	c.URL = strings.TrimRight(c.URL, "/")
	if c.URL == "" || c.Token == "" {
		return c, usagef("no credentials: run 'expd login', set EXPD_URL and EXPD_TOKEN, pass --url and --token, or start 'expd dev' in this directory")
	}
	return c, nil
}

// client is the API client of the resolved credentials.
func (e *env) client() (*Client, error) {
	c, err := e.credentials()
	if err != nil {
		return nil, err
	}
	e.creds = c
	return &Client{BaseURL: c.URL, Token: c.Token, SecretKey: c.SecretKey}, nil
}

// loginPath is where 'expd login' stores credentials (mode 0600).
func (e *env) loginPath() (string, error) {
	dir := e.io.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		var err error
		if dir, err = os.UserConfigDir(); err != nil {
			return "", fmt.Errorf("find the config dir: %w", err)
		}
	}
	return filepath.Join(dir, "expd", "credentials.json"), nil
}

func (e *env) loadLogin() (Credentials, error) {
	var c Credentials
	path, err := e.loginPath()
	if err != nil {
		return c, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return c, err
	}
	return c, json.Unmarshal(b, &c)
}

// loadDev reads a local expd dev's credentials: its admin session token,
// its secret key and its address.
func (e *env) loadDev() (Credentials, error) {
	dir := e.io.Getenv("EXPD_DEV_DATA_DIR")
	if dir == "" {
		dir = ".expd"
	}
	b, err := os.ReadFile(filepath.Join(dir, "dev-credentials.json"))
	if err != nil {
		return Credentials{}, err
	}
	var dev struct {
		BaseURL     string `json:"base_url"`
		IdentityJWT string `json:"identity_jwt"`
		SecretKey   string `json:"secret_key"`
	}
	if err := json.Unmarshal(b, &dev); err != nil {
		return Credentials{}, err
	}
	return Credentials{URL: dev.BaseURL, Token: dev.IdentityJWT, SecretKey: dev.SecretKey}, nil
}

// printJSON writes v indented.
func (e *env) printJSON(v any) error {
	enc := json.NewEncoder(e.io.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// readLine reads one line of input (a prompt's answer).
func readLine(r io.Reader) (string, error) {
	var b strings.Builder
	buf := make([]byte, 1)
	for {
		n, err := r.Read(buf)
		if n == 1 {
			if buf[0] == '\n' {
				break
			}
			b.WriteByte(buf[0])
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", err
		}
	}
	return strings.TrimSpace(b.String()), nil
}
