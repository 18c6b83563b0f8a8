package redaction

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
)

// The speed-ups (need, alphabet runs) change no result: each detector
// replaces the same as its plain regexp over the whole text, on the
// corpus and on random texts made of the characters the detectors care
// about.
func TestRunsFindWhatTheWholeTextDoes(t *testing.T) {
	raw, err := os.ReadFile("../testdata/redaction/cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var c corpus
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, tc := range c.Cases {
		texts = append(texts, tc.Input)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const chars = "0123456789 .-:@()+AaBbEeFfKkSsZz_/=\n,"
	for range 3000 {
		b := make([]byte, 5+rng.IntN(60))
		for i := range b {
			b[i] = chars[rng.IntN(len(chars))]
		}
		texts = append(texts, string(b))
	}
	for i := range builtins {
		d := &builtins[i]
		plain := *d
		plain.need, plain.alphabet = "", nil
		for _, s := range texts {
			if got, want := applied(d, s), applied(&plain, s); got != want {
				t.Fatalf("%s on %q: %q with the speed-ups, %q without", d.name, s, got, want)
			}
		}
	}
}

func BenchmarkEachDetector(b *testing.B) {
	for i := range builtins {
		d := &builtins[i]
		b.Run(d.name, func(b *testing.B) {
			b.SetBytes(int64(len(benchText)))
			for i := 0; i < b.N; i++ {
				applied(d, benchText)
			}
		})
	}
}

// applied is d's replacement of s alone, its marks computed for s.
func applied(d *detector, s string) string {
	var marks []int
	out, _ := d.apply(s, &marks)
	return out
}

// marksOf finds every anchor byte, whatever the other bytes (UTF-8 and
// control bytes too), at every offset from a word's start.
func TestMarksOfIsEveryAnchor(t *testing.T) {
	for _, d := range builtins {
		if d.anchor == nil {
			continue
		}
		for b := range 256 {
			if d.anchor[b] && !isAnchor(byte(b)) {
				t.Fatalf("%s anchors on %q, which marksOf does not mark", d.name, byte(b))
			}
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = byte(rng.IntN(256))
			if rng.IntN(3) == 0 {
				b[i] = "09:@/;?A"[rng.IntN(8)]
			}
		}
		var want []int
		for i, c := range b {
			if isAnchor(c) {
				want = append(want, i)
			}
		}
		if got := marksOf(string(b)); !slices.Equal(got, want) {
			t.Fatalf("marksOf(%q) = %v; want %v", b, got, want)
		}
	}
}
