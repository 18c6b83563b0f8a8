package dashboard

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"
	"time"
)

var funcs = template.FuncMap{
	"num":  fmtNum,
	"pct":  fmtPct,
	"pval": fmtP,
	"int":  anyInt,
	"date": func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04") + " UTC" },
	"add":  func(a, b int) int { return a + b },
	// pct100 shows a share (0.23) as a percentage ("23%").
	"pct100": func(v float64) string { return fmtNum(100*v) + "%" },
}

// fmtNum shows a number with 4 significant digits, without exponent
// notation for everyday magnitudes.
func fmtNum(v float64) string {
	switch {
	case math.IsNaN(v):
		return "–"
	case math.IsInf(v, 0):
		return "∞"
	case v == 0:
		return "0"
	case math.Abs(v) >= 1e6 || math.Abs(v) < 1e-4:
		return strconv.FormatFloat(v, 'g', 4, 64)
	}
	s := strconv.FormatFloat(v, 'f', max(0, 3-int(math.Floor(math.Log10(math.Abs(v))))), 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// fmtPct shows a percentage given in percent points, signed.
func fmtPct(v float64) string {
	s := fmtNum(v) + "%"
	if v > 0 {
		s = "+" + s
	}
	return s
}

func fmtP(p float64) string {
	if p < 0.001 {
		return "<0.001"
	}
	return strconv.FormatFloat(p, 'f', 3, 64)
}

func fmtInt(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// anyInt formats any integer with thousands separators.
func anyInt(v any) string {
	switch n := v.(type) {
	case int:
		return fmtInt(int64(n))
	case int64:
		return fmtInt(n)
	case uint32:
		return fmtInt(int64(n))
	}
	return fmt.Sprint(v)
}
