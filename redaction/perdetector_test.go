package redaction

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// The speed-ups (need, alphabet runs, mayHold) change no result: each
// detector replaces the same as its plain regexp over the whole text, on
// the corpus and on random texts made of the characters the detectors
// care about, and of digits and separators (numbers, dates, phones).
func TestRunsFindWhatTheWholeTextDoes(t *testing.T) {
	texts := corpusInputs(t)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, chars := range []string{"0123456789 .-:@()+AaBbEeFfKkSsZz_/=\n,", "00123456789012345678901 -.()+.."} {
		for range 30000 {
			b := make([]byte, 5+rng.IntN(30))
			for i := range b {
				b[i] = chars[rng.IntN(len(chars))]
			}
			texts = append(texts, string(b))
		}
	}
	replaced := map[string]int{}
	for i := range builtins {
		d := &builtins[i]
		plain := *d
		plain.need, plain.alphabet, plain.mayHold = nil, nil, nil
		for _, s := range texts {
			got, want := applied(d, s), applied(&plain, s)
			if got != want {
				t.Fatalf("%s on %q: %q with the speed-ups, %q without", d.name, s, got, want)
			}
			if got != s {
				replaced[d.name]++
			}
		}
	}
	// The random texts hold matches of the digit detectors, so a wrong
	// speed-up shows.
	for _, name := range []string{"card", "ipv4", "phone_international", "phone_nanp", "phone_trunk"} {
		if replaced[name] < 20 {
			t.Errorf("%s replaced something in %d texts only", name, replaced[name])
		}
	}
}

func BenchmarkEachDetector(b *testing.B) {
	for _, text := range []struct{ name, s string }{{"chat", benchText}, {"support", supportChat[0]}} {
		for i := range builtins {
			d := &builtins[i]
			b.Run(text.name+"/"+d.name, func(b *testing.B) {
				b.SetBytes(int64(len(text.s)))
				for i := 0; i < b.N; i++ {
					applied(d, text.s)
				}
			})
		}
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
	for range 30000 {
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

// Redact keeps the marks in step through each replacement; the chain of
// detectors each marking its own input replaces the same.
func TestMarksKeptInStepAcrossReplacements(t *testing.T) {
	for _, d := range builtins {
		if len(marksOf(d.placeholder)) > 0 {
			t.Fatalf("placeholder %s holds an anchor byte", d.placeholder)
		}
	}
	rng := rand.New(rand.NewPCG(5, 6))
	pieces := []string{"ann@example.com", "+44 20 7946 0958", "4111 1111 1111 1111", "10.0.0.1", "fe80::1:2", "2001:db8::8a2e:370:7334",
		"(415) 555-2671", "020 7946 0958", "DE89 3704 0044 0532 0130 00", "Bearer abc123def456ghi", "12:30", "v1.2.3", " ", "x", "@", "9", ".", ":", "é"}
	texts := corpusInputs(t)
	for range 5000 {
		var b strings.Builder
		for range 1 + rng.IntN(12) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		texts = append(texts, b.String())
	}
	for _, s := range texts {
		want := s
		for i := range builtins {
			want = applied(&builtins[i], want)
		}
		if got := Redact(s); got != want {
			t.Fatalf("Redact(%q) = %q; detector by detector %q", s, got, want)
		}
	}
}

// A literal found from its rarest byte is strings.Contains.
func TestLiteralIsContains(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, d := range builtins {
		for _, l := range d.need {
			for range 2000 {
				b := make([]byte, rng.IntN(30))
				for i := range b {
					b[i] = l.s[rng.IntN(len(l.s))]
					if rng.IntN(4) == 0 {
						b[i] = "e sk"[rng.IntN(4)]
					}
				}
				s := string(b)
				if rng.IntN(3) == 0 {
					k := rng.IntN(len(s) + 1)
					s = s[:k] + l.s + s[k:]
				}
				if got, want := l.in(s), strings.Contains(s, l.s); got != want {
					t.Fatalf("%q in %q: %v, strings.Contains %v", l.s, s, got, want)
				}
			}
		}
	}
}
