package dashboard

import (
	"fmt"
	"html/template"
	"math"
	"strings"

	"github.com/expd/expd/ingest"
)

// Charts are drawn here as SVG strings. Every number written is a float
// formatted by us and every text goes through template.HTMLEscapeString,
// so the result is safe to embed as template.HTML.

// sparkline draws total exposed users per day, with a text alternative.
func sparkline(days []ingest.TrafficDay) template.HTML {
	const w, h = 120.0, 28.0
	totals := make([]float64, len(days))
	peak, sum := 0.0, 0.0
	for i, d := range days {
		for _, n := range d.Variants {
			totals[i] += float64(n)
		}
		peak, sum = math.Max(peak, totals[i]), sum+totals[i]
	}
	label := fmt.Sprintf("%s exposed user-days over the last %d days", fmtInt(int64(sum)), len(days))
	var b strings.Builder
	fmt.Fprintf(&b, `<svg role="img" aria-label="%s" width="%g" height="%g" viewBox="0 0 %g %g"><title>%s</title>`,
		esc(label), w, h, w, h, esc(label))
	if len(totals) > 1 {
		b.WriteString(`<polyline class="spark" points="`)
		for i, t := range totals {
			y := h - 2
			if peak > 0 {
				y = h - 2 - (h-4)*t/peak
			}
			fmt.Fprintf(&b, "%.1f,%.1f ", w*float64(i)/float64(len(totals)-1), y)
		}
		b.WriteString(`"/>`)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// timeline draws daily exposed users per variant, one line each.
func timeline(days []ingest.TrafficDay, variants []string) template.HTML {
	const w, h, left, bottom, top = 760.0, 220.0, 56.0, 28.0, 10.0
	peak := 1.0
	for _, d := range days {
		for _, n := range d.Variants {
			peak = math.Max(peak, float64(n))
		}
	}
	x := func(i int) float64 {
		if len(days) < 2 {
			return left + (w-left-10)/2
		}
		return left + (w-left-10)*float64(i)/float64(len(days)-1)
	}
	y := func(v float64) float64 { return top + (h-top-bottom)*(1-v/peak) }
	var b strings.Builder
	label := fmt.Sprintf("Daily exposed users per variant, %d days", len(days))
	fmt.Fprintf(&b, `<svg role="img" aria-label="%s" width="%g" height="%g" viewBox="0 0 %g %g"><title>%s</title>`, esc(label), w, h, w, h, esc(label))
	for _, f := range []float64{0, 0.5, 1} {
		fmt.Fprintf(&b, `<line class="grid" x1="%g" x2="%g" y1="%.1f" y2="%.1f"/><text x="%g" y="%.1f" text-anchor="end">%s</text>`,
			left, w-10, y(peak*f), y(peak*f), left-6, y(peak*f)+4, esc(fmtInt(int64(peak*f))))
	}
	if len(days) > 0 {
		fmt.Fprintf(&b, `<text x="%g" y="%g">%s</text><text x="%g" y="%g" text-anchor="end">%s</text>`,
			left, h-8, esc(days[0].Day), w-10, h-8, esc(days[len(days)-1].Day))
	}
	for vi, v := range variants {
		fmt.Fprintf(&b, `<polyline class="series s%d" points="`, vi%6)
		for i, d := range days {
			fmt.Fprintf(&b, "%.1f,%.1f ", x(i), y(float64(d.Variants[v])))
		}
		b.WriteString(`"/>`)
		if len(days) == 1 {
			fmt.Fprintf(&b, `<circle class="s%d" cx="%.1f" cy="%.1f" r="3"/>`, vi%6, x(0), y(float64(days[0].Variants[v])))
		}
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// forestRow is one interval of the forest plot.
type forestRow struct {
	Metric     string
	Label      string  // the arm
	Est, Lo, H float64 // in percent of control (relative lift)
	Direction  string  // the badge's class: good | bad | neutral | flat
}

// forests draws one small plot per metric (in the rows' order), each on
// its own axis, so a metric that moved a lot does not squash the others.
func forests(rows []forestRow) []template.HTML {
	var out []template.HTML
	for i := 0; i < len(rows); {
		j := i
		for j < len(rows) && rows[j].Metric == rows[i].Metric {
			j++
		}
		out = append(out, forest(rows[i].Metric, rows[i:j]))
		i = j
	}
	return out
}

// forest draws one metric's intervals, one line per arm, on an axis of
// relative lift (percent) around zero; rows without an interval are
// listed by the caller, not drawn.
func forest(metric string, rows []forestRow) template.HTML {
	const w, left, right, rowH, top = 380.0, 96.0, 16.0, 24.0, 22.0
	h := top + rowH*float64(len(rows)) + 26
	span := 1.0
	for _, r := range rows {
		span = math.Max(span, math.Max(math.Abs(r.Lo), math.Abs(r.H)))
	}
	span *= 1.1
	x := func(v float64) float64 { return left + (w-left-right)*(v+span)/(2*span) }
	var b strings.Builder
	label := fmt.Sprintf("%s: relative lift with confidence interval for %d arms", metric, len(rows))
	fmt.Fprintf(&b, `<svg role="img" aria-label="%s" width="%g" height="%g" viewBox="0 0 %g %g" data-intervals="%d"><title>%s</title>`,
		esc(label), w, h, w, h, len(rows), esc(label))
	fmt.Fprintf(&b, `<text class="metric" x="4" y="14">%s</text>`, esc(truncate(metric, 48)))
	base := top + rowH*float64(len(rows))
	for _, f := range []float64{-1, 1} {
		fmt.Fprintf(&b, `<line class="grid" x1="%.1f" x2="%.1f" y1="%g" y2="%g"/><text x="%.1f" y="%g" text-anchor="middle">%s</text>`,
			x(span*f/1.1), x(span*f/1.1), top, base, x(span*f/1.1), base+16, esc(fmtPct(span*f/1.1)))
	}
	fmt.Fprintf(&b, `<line class="zero" x1="%.1f" x2="%.1f" y1="%g" y2="%g"/><text x="%.1f" y="%g" text-anchor="middle">0</text>`,
		x(0), x(0), top, base, x(0), base+16)
	for i, r := range rows {
		cy := top + rowH*float64(i) + rowH/2
		fmt.Fprintf(&b, `<g class="%s"><title>%s · %s: %s (%s to %s)</title>`, r.Direction, esc(metric), esc(r.Label), esc(fmtPct(r.Est)), esc(fmtPct(r.Lo)), esc(fmtPct(r.H)))
		fmt.Fprintf(&b, `<text x="%g" y="%.1f" text-anchor="end">%s</text>`, left-8, cy+4, esc(truncate(r.Label, 12)))
		fmt.Fprintf(&b, `<line class="ci %s" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, r.Direction, x(r.Lo), x(r.H), cy, cy)
		fmt.Fprintf(&b, `<circle class="%s" cx="%.1f" cy="%.1f" r="5" stroke-width="2"/></g>`, r.Direction, x(r.Est), cy)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// histogram draws two arms' histograms on shared bins, overlaid.
func histogram(edges []float64, arms []string, counts [][]int) template.HTML {
	const w, h, left, bottom, top = 560.0, 180.0, 50.0, 26.0, 8.0
	bins := len(edges) - 1
	if bins < 1 {
		return ""
	}
	// Heights are shares of each arm, so unequal arms compare.
	shares := make([][]float64, len(counts))
	peak := 0.0
	for a, cs := range counts {
		total := 0
		for _, c := range cs {
			total += c
		}
		shares[a] = make([]float64, len(cs))
		for i, c := range cs {
			if total > 0 {
				shares[a][i] = float64(c) / float64(total)
			}
			peak = math.Max(peak, shares[a][i])
		}
	}
	if peak == 0 {
		peak = 1
	}
	var b strings.Builder
	label := fmt.Sprintf("Histogram of per-user values for %s, share of each arm's users per bin", strings.Join(arms, " and "))
	fmt.Fprintf(&b, `<svg role="img" aria-label="%s" width="%g" height="%g" viewBox="0 0 %g %g"><title>%s</title>`, esc(label), w, h, w, h, esc(label))
	bw := (w - left - 10) / float64(bins)
	for a, sh := range shares {
		for i, s := range sh {
			if i >= bins {
				break
			}
			bh := (h - top - bottom) * s / peak
			fmt.Fprintf(&b, `<rect class="bar s%d" x="%.1f" y="%.1f" width="%.1f" height="%.1f"/>`, a%6, left+bw*float64(i)+float64(a)*bw/2, h-bottom-bh, bw/2, bh)
		}
	}
	fmt.Fprintf(&b, `<line class="axis" x1="%g" x2="%g" y1="%g" y2="%g"/>`, left, w-10, h-bottom, h-bottom)
	fmt.Fprintf(&b, `<text x="%g" y="%g">%s</text><text x="%g" y="%g" text-anchor="end">%s</text><text x="%g" y="%g" text-anchor="end">%s</text>`,
		left, h-8, esc(fmtNum(edges[0])), w-10, h-8, esc(fmtNum(edges[bins])), left-6, top+10, esc(fmtPct(100*peak)))
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

func esc(s string) string { return template.HTMLEscapeString(s) }

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
