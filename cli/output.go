package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// newTable writes aligned columns; Flush prints them.
func newTable(w io.Writer, header ...string) *tabwriter.Writer {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if len(header) > 0 {
		fmt.Fprintln(tw, strings.Join(header, "\t"))
	}
	return tw
}

func row(tw *tabwriter.Writer, cells ...string) { fmt.Fprintln(tw, strings.Join(cells, "\t")) }

func when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

// num prints a statistic compactly: 4 significant digits.
func num(v float64) string { return fmt.Sprintf("%.4g", v) }

// pval prints a p-value; tiny ones as "<0.0001".
func pval(p float64) string {
	if p < 0.0001 {
		return "<0.0001"
	}
	return fmt.Sprintf("%.4f", p)
}

// remarshal converts a decoded JSON value into a typed one.
func remarshal(from, to any) error {
	b, err := json.Marshal(from)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, to)
}

func readAll(r io.Reader) ([]byte, error) { return io.ReadAll(r) }
