package cli

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// experiment is the part of the Experiment resource the tables show; JSON
// output passes the server's answer through unchanged.
type experiment struct {
	ID         string    `json:"id"`
	Name       string    `json:"name"`
	Status     string    `json:"status"`
	Version    int       `json:"version"`
	Salt       string    `json:"salt"`
	Buckets    int       `json:"bucket_count"`
	UpdatedAt  time.Time `json:"updated_at"`
	Allocation []struct {
		Variant string  `json:"variant"`
		Weight  float64 `json:"weight"`
	} `json:"allocation"`
	Metrics []struct {
		Name     string `json:"name"`
		Kind     string `json:"kind"`
		Category string `json:"category"`
		Method   string `json:"method_default"`
	} `json:"metrics"`
}

func runExperiments(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		return usagef("usage: expd %s", e.usage)
	}
	sub, args := args[0], args[1:]
	switch sub {
	case "list":
		return experimentsList(ctx, e, args)
	case "get":
		return experimentsGet(ctx, e, args)
	case "create", "update":
		return experimentsWrite(ctx, e, sub, args)
	case "patch":
		return experimentsPatch(ctx, e, args)
	case "start", "stop":
		return experimentsSetStatus(ctx, e, sub, args)
	case "ship":
		return experimentsShip(ctx, e, args)
	case "power":
		return experimentsPower(ctx, e, args)
	}
	return usagef("unknown subcommand %q; usage: expd %s", sub, e.usage)
}

func experimentsList(ctx context.Context, e *env, args []string) error {
	fs := e.flags("list")
	status := fs.String("status", "", "only running or stopped experiments")
	if _, err := e.parse(fs, args, 0, "no arguments"); err != nil {
		return err
	}
	c, err := e.client()
	if err != nil {
		return err
	}
	path := "/v1/experiments"
	if *status != "" {
		path += "?status=" + url.QueryEscape(*status)
	}
	var raw map[string]any
	if err := c.Do(ctx, "GET", path, nil, &raw); err != nil {
		return err
	}
	if !e.table() {
		return e.printJSON(raw)
	}
	var list struct{ Experiments []experiment }
	if err := remarshal(raw, &list); err != nil {
		return err
	}
	tw := newTable(e.io.Stdout, "NAME", "STATUS", "VERSION", "VARIANTS", "METRICS", "UPDATED", "ID")
	for _, x := range list.Experiments {
		row(tw, x.Name, x.Status, strconv.Itoa(x.Version), variantList(x), strconv.Itoa(len(x.Metrics)), when(x.UpdatedAt), x.ID)
	}
	return tw.Flush()
}

func variantList(x experiment) string {
	var parts []string
	for _, a := range x.Allocation {
		parts = append(parts, fmt.Sprintf("%s:%g", a.Variant, a.Weight))
	}
	return strings.Join(parts, " ")
}

func experimentsGet(ctx context.Context, e *env, args []string) error {
	fs := e.flags("get")
	pos, c, err := e.setup(fs, args, 1, "EXPERIMENT: name or id")
	if err != nil {
		return err
	}
	var raw map[string]any
	if err := c.Do(ctx, "GET", experimentPath(pos[0]), nil, &raw); err != nil {
		return err
	}
	return e.showExperiment(raw)
}

// showExperiment prints one experiment: a summary for a person, the
// server's JSON for a program.
func (e *env) showExperiment(raw map[string]any) error {
	if !e.table() {
		return e.printJSON(raw)
	}
	var x experiment
	if err := remarshal(raw, &x); err != nil {
		return err
	}
	tw := newTable(e.io.Stdout)
	row(tw, "name", x.Name)
	row(tw, "id", x.ID)
	row(tw, "status", x.Status)
	row(tw, "version", strconv.Itoa(x.Version))
	row(tw, "bucketing", fmt.Sprintf("salt %s, %d buckets", x.Salt, x.Buckets))
	row(tw, "updated", when(x.UpdatedAt))
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(e.io.Stdout)
	tw = newTable(e.io.Stdout, "VARIANT", "WEIGHT")
	for _, a := range x.Allocation {
		row(tw, a.Variant, fmt.Sprintf("%g", a.Weight))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(x.Metrics) == 0 {
		return nil
	}
	fmt.Fprintln(e.io.Stdout)
	tw = newTable(e.io.Stdout, "METRIC", "KIND", "CATEGORY", "METHOD")
	for _, m := range x.Metrics {
		row(tw, m.Name, m.Kind, m.Category, m.Method)
	}
	return tw.Flush()
}

// experimentsWrite is create -f FILE and update EXPERIMENT -f FILE; the
// file is JSON or YAML (by extension; "-" reads JSON or YAML from stdin).
func experimentsWrite(ctx context.Context, e *env, sub string, args []string) error {
	fs := e.flags(sub)
	file := fs.String("f", "", "experiment config file: .json, .yaml or .yml (- for stdin)")
	want, names := 0, "create takes no positional argument, only -f FILE"
	if sub == "update" {
		want, names = 1, "EXPERIMENT: name or id, and -f FILE"
	}
	pos, err := e.parse(fs, args, want, names)
	if err != nil {
		return err
	}
	const what = "the experiment config as JSON or YAML"
	if sub == "create" {
		return e.sendConfigFile(ctx, *file, what, "POST", "/v1/experiments", "Content-Type", "application/json")
	}
	return e.sendConfigFile(ctx, *file, what, "PUT", experimentPath(pos[0]), "Content-Type", "application/json")
}

// sendConfigFile sends file (JSON or YAML, readConfigFile) to method path
// with headers and prints the experiment answered: create, update, patch.
func (e *env) sendConfigFile(ctx context.Context, file, what, method, path string, headers ...string) error {
	if file == "" {
		return usagef("-f FILE is required: %s", what)
	}
	body, err := readConfigFile(file, e)
	if err != nil {
		return err
	}
	c, err := e.client()
	if err != nil {
		return err
	}
	var raw map[string]any
	if err := c.DoWith(ctx, method, path, body, &raw, headers...); err != nil {
		return err
	}
	return e.showExperiment(raw)
}

// readConfigFile returns the file as JSON: YAML is converted with its
// keys kept as written, so the server validates exactly what the file says.
func readConfigFile(path string, e *env) ([]byte, error) {
	var b []byte
	var err error
	if path == "-" {
		b, err = readAll(e.io.Stdin)
	} else {
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, usagef("read %s: %v", path, err)
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json":
		return b, nil
	}
	j, err := yaml.YAMLToJSON(b)
	if err != nil {
		return nil, usagef("%s is neither JSON nor YAML: %v", path, err)
	}
	return j, nil
}

// experimentsSetStatus is start/stop through the lifecycle routes (POST
// /v1/experiments/{id}/start|stop, admin): audited, announced to webhooks
// and the experiment's workflow like the dashboard's buttons. Starting a
// running experiment (or stopping a stopped one) changes nothing and
// succeeds; a shipped one is refused (exit code of a 409).
func experimentsSetStatus(ctx context.Context, e *env, sub string, args []string) error {
	fs := e.flags(sub)
	pos, c, err := e.setup(fs, args, 1, "EXPERIMENT: name or id")
	if err != nil {
		return err
	}
	var raw map[string]any
	if err := c.Do(ctx, "POST", experimentPath(pos[0])+"/"+sub, nil, &raw); err != nil {
		return err
	}
	return e.showExperiment(raw)
}

// experimentsPatch is patch EXPERIMENT -f FILE: the file (JSON or YAML)
// is a JSON merge patch (RFC 7396) of the current config: only the fields
// it names change, null removes one, a list replaces the whole list.
// --if-match VERSION refuses the patch when another version is current.
func experimentsPatch(ctx context.Context, e *env, args []string) error {
	fs := e.flags("patch")
	file := fs.String("f", "", "merge patch file: .json, .yaml or .yml (- for stdin)")
	ifMatch := fs.Int("if-match", 0, "apply only if this is still the current version")
	pos, err := e.parse(fs, args, 1, "EXPERIMENT: name or id, and -f FILE")
	if err != nil {
		return err
	}
	headers := []string{"Content-Type", "application/merge-patch+json"}
	if *ifMatch > 0 {
		headers = append(headers, "If-Match", strconv.Quote(strconv.Itoa(*ifMatch)))
	}
	return e.sendConfigFile(ctx, *file, "the fields to change, as JSON or YAML", "PATCH", experimentPath(pos[0]), headers...)
}

// experimentsShip is ship EXPERIMENT VARIANT (POST .../ship, admin):
// everyone gets VARIANT from then on; shipping is final.
func experimentsShip(ctx context.Context, e *env, args []string) error {
	fs := e.flags("ship")
	pos, c, err := e.setup(fs, args, 2, "EXPERIMENT: name or id, and VARIANT: the variant everyone gets")
	if err != nil {
		return err
	}
	var raw map[string]any
	if err := c.Do(ctx, "POST", experimentPath(pos[0])+"/ship", map[string]string{"variant": pos[1]}, &raw); err != nil {
		return err
	}
	return e.showExperiment(raw)
}

func experimentPath(ref string) string { return "/v1/experiments/" + url.PathEscape(ref) }
