package redaction

import (
	"encoding/json"
	"math/rand/v2"
	"os"
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
			if got, want := d.apply(s), plain.apply(s); got != want {
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
				d.apply(benchText)
			}
		})
	}
}
