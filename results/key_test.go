package results

import (
	"testing"
	"time"
)

func TestParseKeyCanonicalisesBothKinds(t *testing.T) {
	cases := []struct {
		in, want, kind string
		end            time.Time
	}{
		{"2025-03-09", "2025-03-09", KindNightly, time.Date(2025, 3, 10, 0, 0, 0, 0, time.UTC)},
		{"manual-2025-03-09T10:11:12Z", "manual-2025-03-09T10:11:12Z", KindManual, time.Date(2025, 3, 9, 10, 11, 12, 0, time.UTC)},
		{"manual-2025-03-09T12:11:12+02:00", "manual-2025-03-09T10:11:12Z", KindManual, time.Date(2025, 3, 9, 10, 11, 12, 0, time.UTC)},
	}
	for _, c := range cases {
		k, err := ParseKey(c.in)
		if err != nil {
			t.Fatalf("ParseKey(%q): %v", c.in, err)
		}
		if k.ComputedFor != c.want || k.Kind != c.kind || !k.WindowEnd.Equal(c.end) {
			t.Errorf("ParseKey(%q) = %+v, want %s %s ending %s", c.in, k, c.want, c.kind, c.end)
		}
	}
}

func TestParseKeyRejectsMalformed(t *testing.T) {
	for _, s := range []string{"", "2025-3-9", "2025-02-30", "yesterday", "manual-", "manual-2025-03-09", "manual-2025-03-09T10:11:12.5Z", "Manual-2025-03-09T10:11:12Z"} {
		if k, err := ParseKey(s); err == nil {
			t.Errorf("ParseKey(%q) = %+v, want an error", s, k)
		}
	}
}

func TestManualKeyRoundsUpToTheNextWholeSecondInUTC(t *testing.T) {
	at := time.Date(2025, 1, 2, 4, 5, 6, 789, time.FixedZone("x", 3600))
	k := ManualKey(at)
	if k.ComputedFor != "manual-2025-01-02T03:05:07Z" || !k.WindowEnd.Equal(at.Truncate(time.Second).Add(time.Second)) || k.WindowEnd.Before(at) {
		t.Fatalf("ManualKey = %+v: want the window to end at the next whole second, after the request", k)
	}
	if whole := ManualKey(at.Truncate(time.Second)); whole.ComputedFor != "manual-2025-01-02T03:05:06Z" {
		t.Errorf("ManualKey of a whole second = %+v; want that second", whole)
	}
	back, err := ParseKey(k.ComputedFor)
	if err != nil || back != k {
		t.Fatalf("round trip of %q = %+v, %v", k.ComputedFor, back, err)
	}
}

func TestNightlyKeyIsTheUTCDayOfTheInstant(t *testing.T) {
	k := NightlyKey(time.Date(2025, 1, 2, 23, 30, 0, 0, time.FixedZone("x", -3600))) // 00:30 UTC on the 3rd
	if k.ComputedFor != "2025-01-03" || !k.WindowEnd.Equal(time.Date(2025, 1, 4, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("NightlyKey = %+v", k)
	}
}
