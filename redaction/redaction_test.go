package redaction

import (
	"errors"
	"strings"
	"testing"
)

func TestCompileRefusesBadPatterns(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ps      []Pattern
		index   int
		field   string
		message string
	}{
		{"invalid regex", []Pattern{{Name: "a", Regex: "("}}, 0, "regex", "not a valid RE2"},
		{"perl lookahead", []Pattern{{Name: "a", Regex: "x(?=y)"}}, 0, "regex", "not a valid RE2"},
		{"empty match", []Pattern{{Name: "ok", Regex: "x"}, {Name: "b", Regex: "a*"}}, 1, "regex", "matches the empty string"},
		{"missing regex", []Pattern{{Name: "a"}}, 0, "regex", "required"},
		{"missing name", []Pattern{{Regex: "x"}}, 0, "name", "required"},
		{"duplicate name", []Pattern{{Name: "a", Regex: "x"}, {Name: "a", Regex: "y"}}, 1, "name", "duplicate"},
		{"NUL in regex", []Pattern{{Name: "a", Regex: "x\x00"}}, 0, "regex", "no NUL"},
		{"NUL in placeholder", []Pattern{{Name: "a", Regex: "x", Placeholder: "[\x00]"}}, 0, "placeholder", "printable"},
		{"NUL in name", []Pattern{{Name: "a\x00", Regex: "x"}}, 0, "name", "printable"},
		{"huge regex", []Pattern{{Name: "a", Regex: strings.Repeat("x", MaxRegexLen+1)}}, 0, "regex", "at most"},
		{"huge placeholder", []Pattern{{Name: "a", Regex: "x", Placeholder: strings.Repeat("x", MaxPlaceholderLen+1)}}, 0, "placeholder", "at most"},
		{"too many", make([]Pattern, MaxPatterns+1), -1, "", "at most"},
	} {
		_, err := Compile(tc.ps)
		var pe *PatternError
		if !errors.As(err, &pe) {
			t.Errorf("%s: got %v, want a PatternError", tc.name, err)
			continue
		}
		if pe.Index != tc.index || pe.Field != tc.field || !strings.Contains(pe.Msg, tc.message) {
			t.Errorf("%s: got %+v, want index %d field %s message ~%q", tc.name, pe, tc.index, tc.field, tc.message)
		}
	}
}

func TestBuiltinsOrder(t *testing.T) {
	got := strings.Join(Builtins(), ",")
	if !strings.HasPrefix(got, "private_key,jwt,") || !strings.HasSuffix(got, ",phone_trunk") {
		t.Fatalf("order %s", got)
	}
}

// A long run without any match stays linear (RE2) and unchanged.
func TestLongInputUnchanged(t *testing.T) {
	s := strings.Repeat("a1.b2:c3-d4 ", 100000)
	if got := Redact(s); got != s {
		t.Fatal("changed a text without personal data")
	}
}

var benchText = strings.Repeat("User: hi, I need help with my order, it has been three days. ", 20) +
	"My email is ann@example.com and my card 4111 1111 1111 1111. " +
	strings.Repeat("Assistant: sure, let me look at version 1.2.3 of the order at 12:30. ", 10)

func BenchmarkRedact(b *testing.B) {
	b.SetBytes(int64(len(benchText)))
	for i := 0; i < b.N; i++ {
		Redact(benchText)
	}
}

// supportChat is bench/ingest's model call (-redact-rounds): a 1.5 KB
// support prompt with an email and a phone number, and its answer.
var supportChat = []string{strings.Repeat("You are a helpful support agent for an online shop. Answer briefly and politely, "+
	"quote the order number, never promise refunds over 100 EUR without a manager. ", 8) +
	"Customer: Hi, my order 2024-11-0042 (placed 2024-11-20 at 10:30) has not arrived. You can reach me at customer42@example.com or +44 20 7946 0958. Thanks!",
	"Thanks for reaching out! I am sorry order 2024-11-0042 is late. The carrier shows it in transit since 2024-11-21; " +
		"it should arrive within 2 working days. If it has not arrived by Friday, reply here and we will send a replacement at no cost. " +
		"Version 3.2.1 of our app also shows live tracking under Orders. Have a good day!"}

func BenchmarkRedactSupportChat(b *testing.B) {
	b.SetBytes(int64(len(supportChat[0]) + len(supportChat[1])))
	for i := 0; i < b.N; i++ {
		for _, s := range supportChat {
			Redact(s)
		}
	}
}
