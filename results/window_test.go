package results

import (
	"testing"
	"time"
)

func TestNewWindow(t *testing.T) {
	end := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name      string
		start     time.Time
		retention int
		wantStart time.Time
		days      int
		truncated bool
	}{
		{"partial day counts as one", end.Add(-9 * time.Hour), 30, end.Add(-9 * time.Hour), 1, false},
		{"two weeks", end.AddDate(0, 0, -14), 30, end.AddDate(0, 0, -14), 14, false},
		{"cut to retention", end.AddDate(0, 0, -45), 30, end.AddDate(0, 0, -30), 30, true},
		{"exactly at retention is not cut", end.AddDate(0, 0, -30), 30, end.AddDate(0, 0, -30), 30, false},
		{"started after the end is empty", end.Add(time.Hour), 30, end, 0, false},
	}
	for _, c := range cases {
		w := NewWindow(c.start, end, c.retention)
		if !w.Start.Equal(c.wantStart) || w.Days != c.days || w.RetentionTruncated != c.truncated || !w.End.Equal(end) {
			t.Errorf("%s: %+v, want start %s, %d days, truncated %v", c.name, w, c.wantStart, c.days, c.truncated)
		}
		if w.Empty() != (c.days == 0) {
			t.Errorf("%s: Empty() = %v", c.name, w.Empty())
		}
	}
}
