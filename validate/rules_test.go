package validate

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// The byte loops are the regexps the rules were written as; each must
// answer as its regexp does, on the edges and on random strings over the
// bytes that matter (letters, digits, punctuation, space, control, DEL,
// and the bytes of a UTF-8 'é').
func TestRulesMatchTheirRegexps(t *testing.T) {
	rules := []struct {
		name string
		re   *regexp.Regexp
		max  int
		fn   func(string) bool
	}{
		{"id", regexp.MustCompile(`^[\x21-\x7e]+$`), MaxIDLen, ValidID},
		{"name", regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]*$`), MaxNameLen, func(v string) bool {
			var e Errors
			e.Name("f", v)
			return v != "" && e.Err() == nil
		}},
		{"variant", regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`), MaxVariantLen, ValidVariant},
	}
	alphabet := []byte("aZ09._:-/ \t\n\x00\x7f~!\"{}\xc3\xa9")
	cases := []string{"", "a", "-a", "a-", ".", "a b", "a\n", "\na", "é", "user_1", "ab:cd", "x.y_z-1",
		strings.Repeat("a", 64), strings.Repeat("a", 65), strings.Repeat("a", 128), strings.Repeat("a", 129)}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		b := make([]byte, r.IntN(12))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		cases = append(cases, string(b))
	}
	for _, rule := range rules {
		for _, v := range cases {
			want := v != "" && len(v) <= rule.max && rule.re.MatchString(v)
			if got := rule.fn(v); got != want {
				t.Errorf("%s(%q) = %v, its regexp says %v", rule.name, v, got, want)
			}
		}
	}
}
