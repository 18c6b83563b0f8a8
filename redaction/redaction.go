// Package redaction replaces personal data and secrets in free text by
// typed placeholders ("[EMAIL]", "[CARD]", ...). It is pure (no I/O) and
// its rules are written down in testdata/redaction/README.md so that the
// Python, TypeScript and Go clients implement them identically; the shared
// corpus testdata/redaction/cases.json holds them to it.
//
// The algorithm, in short: custom patterns first (in order), then the
// built-in detectors (in the fixed order of Builtins); each pass finds the
// non-overlapping leftmost matches of one regular expression in the
// current text, keeps a match only if its neighbours and its validator
// (Luhn, mod 97, octet ranges...) accept it, and replaces it. Every
// pattern uses only what Go RE2, Python re and JavaScript RegExp share
// (no \d, \w, \b, lookaround, backreferences or inline flags), so the
// three engines find the same matches.
package redaction

import (
	"encoding/binary"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// The typed placeholders of the built-in detectors.
const (
	Email  = "[EMAIL]"
	Phone  = "[PHONE]"
	Card   = "[CARD]"
	IBAN   = "[IBAN]"
	IP     = "[IP]"
	Secret = "[SECRET]"
)

// detector is one built-in pass. left and right are the characters that
// may not touch the match (ASCII only, so byte, code point and UTF-16
// indexing agree); valid checks the match (nil: any). If the regexp has a
// capturing group, group 1 is a prefix that is kept ("Bearer ") and only
// the rest of the match is replaced.
type detector struct {
	name        string
	re          *regexp.Regexp
	placeholder string
	left, right string
	// rightNoDotDigit also refuses a match followed by "." and a digit
	// (a fifth octet, a longer version number).
	rightNoDotDigit bool
	valid           func(match string) bool

	// Speed only; none changes the result. need: every match contains
	// one of these substrings (a text with none skips the pass).
	// alphabet: every byte a match can hold; the regexp then runs only
	// on the maximal runs of these bytes that may hold a match (a match
	// never spans two runs, and the patterns look at nothing outside the
	// match, so each run gives the matches the whole text would).
	need     []literal
	alphabet *[256]bool
	// A run is searched only when it holds at least minAnchors bytes of
	// anchor and at least minLen bytes.
	anchor     *[256]bool
	minAnchors int
	minLen     int
	// mayHold is false of a run where no match can pass valid (nil:
	// any run may): a cheap look at the run's digits that spares the
	// regexp the dates and order numbers of prose.
	mayHold func(run string) bool
}

func bytesOf(sets ...string) *[256]bool {
	var t [256]bool
	for _, set := range sets {
		for i := 0; i < len(set); i++ {
			t[set[i]] = true
		}
	}
	return &t
}

const (
	upper     = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	alnum     = upper + "abcdefghijklmnopqrstuvwxyz0123456789"
	digits    = "0123456789"
	hexDigits = digits + "ABCDEFabcdef"
	tokenChar = alnum + "_-"
)

// Builtins lists the built-in detectors' names in the order they run.
func Builtins() []string {
	out := make([]string, len(builtins))
	for i, d := range builtins {
		out[i] = d.name
	}
	return out
}

var builtins = []detector{
	{name: "private_key", re: regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----[^-]*-----END [A-Z ]*PRIVATE KEY-----`), placeholder: Secret, need: literals("-----BEGIN")},
	{name: "jwt", re: regexp.MustCompile(`eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*`), placeholder: Secret, left: tokenChar, right: tokenChar, need: literals("eyJ")},
	{name: "bearer", re: regexp.MustCompile(`([Bb]earer[ ]+)[A-Za-z0-9._~+/=-]{12,}`), placeholder: Secret, left: alnum, valid: hasDigit, need: literals("Bearer", "bearer")},
	{name: "basic_auth", re: regexp.MustCompile(`(Authorization:[ ]*Basic[ ]+)[A-Za-z0-9+/=]{8,}`), placeholder: Secret, need: literals("Authorization:")},
	{name: "openai_key", re: regexp.MustCompile(`sk-[A-Za-z0-9_-]{20,}`), placeholder: Secret, left: tokenChar, need: literals("sk-")},
	{name: "stripe_key", re: regexp.MustCompile(`(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}`), placeholder: Secret, left: tokenChar, need: literals("_")},
	{name: "github_token", re: regexp.MustCompile(`(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})`), placeholder: Secret, left: tokenChar, need: literals("_")},
	{name: "aws_access_key", re: regexp.MustCompile(`(?:AKIA|ASIA)[A-Z0-9]{16}`), placeholder: Secret, left: alnum, right: alnum, need: literals("AKIA", "ASIA")},
	{name: "slack_token", re: regexp.MustCompile(`xox[abposr]-[A-Za-z0-9-]{10,}`), placeholder: Secret, left: tokenChar, need: literals("xox")},
	{name: "google_api_key", re: regexp.MustCompile(`AIza[A-Za-z0-9_-]{35}`), placeholder: Secret, left: tokenChar, right: tokenChar, need: literals("AIza")},
	{name: "email", re: regexp.MustCompile(`[A-Za-z0-9._%+-]{1,64}@(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,24}`), placeholder: Email, left: alnum + "._%+-", right: tokenChar, need: literals("@"), alphabet: bytesOf(alnum, "._%+-@"), anchor: bytesOf("@"), minAnchors: 1, minLen: 6},
	{name: "iban", re: regexp.MustCompile(`[A-Z]{2}[0-9]{2}(?:[A-Z0-9]{11,30}|(?: [A-Z0-9]{4}){2,7}(?: [A-Z0-9]{1,3})?)`), placeholder: IBAN, left: alnum, right: alnum, valid: validIBAN, alphabet: bytesOf(upper, digits, " "), anchor: bytesOf(digits), minAnchors: 2, minLen: 15},
	{name: "card", re: regexp.MustCompile(`[0-9]{4}(?:[ -]?[0-9]{4}){3}[0-9]{0,3}|[0-9]{4}[ -]?[0-9]{6}[ -]?[0-9]{4,5}`), placeholder: Card, left: alnum, right: alnum, valid: validCard, alphabet: bytesOf(digits, " -"), anchor: bytesOf(digits), minAnchors: 14, minLen: 14},
	{name: "ipv6", re: regexp.MustCompile(`[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?:\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3})?`), placeholder: IP, left: alnum + ":", right: alnum + ":", valid: validIPv6, need: literals(":"), alphabet: bytesOf(hexDigits, ":."), anchor: bytesOf(":"), minAnchors: 2, minLen: 3},
	{name: "ipv4", re: regexp.MustCompile(`[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}`), placeholder: IP, left: alnum + ".", right: alnum, rightNoDotDigit: true, valid: validIPv4, need: literals("."), alphabet: bytesOf(digits, "."), anchor: bytesOf(digits), minAnchors: 4, minLen: 7},
	{name: "phone_international", re: regexp.MustCompile(`\+[0-9](?:[ .()-]{0,2}[0-9]){6,14}`), placeholder: Phone, left: alnum + "+", right: alnum, valid: digitCount(8, 15), need: literals("+"), alphabet: bytesOf(digits, "+ .()-"), anchor: bytesOf(digits), minAnchors: 7, minLen: 8},
	{name: "phone_nanp", re: regexp.MustCompile(`(?:1[ .-]?)?\(?[2-9][0-9]{2}\)?[ .-]?[0-9]{3}[ .-][0-9]{4}`), placeholder: Phone, left: alnum + ".-+", right: alnum, rightNoDotDigit: true, valid: balancedParen, alphabet: bytesOf(digits, " ().-"), anchor: bytesOf(digits), minAnchors: 10, minLen: 11, mayHold: holdsLocalNumber},
	{name: "phone_trunk", re: regexp.MustCompile(`0[1-9][0-9]{0,3}(?:[ -][0-9]{2,8}){1,4}`), placeholder: Phone, left: alnum + ".,:/+-", right: alnum, rightNoDotDigit: true, valid: trunkPhone, need: literals("0"), alphabet: bytesOf(digits, " -"), anchor: bytesOf(digits), minAnchors: 10, minLen: 11, mayHold: holdsTrunkNumber},
}

// literal is a substring a detector needs, looked for from its rarest
// byte (at): strings.Index starts from the first byte, and in prose the
// first byte of "eyJ" or "bearer" is every few bytes.
type literal struct {
	s  string
	at int
}

// byFrequency lists the bytes of English prose, the most frequent first;
// any other byte (capitals, digits, most punctuation) is rarer than these.
const byFrequency = " etaoinshrdlcumwfgypbvkjxqz.,"

func literals(ss ...string) []literal {
	out := make([]literal, len(ss))
	for i, s := range ss {
		rank := func(b byte) int {
			if r := strings.IndexByte(byFrequency, b); r >= 0 {
				return r
			}
			return len(byFrequency)
		}
		out[i].s = s
		for k := 1; k < len(s); k++ {
			if rank(s[k]) > rank(s[out[i].at]) {
				out[i].at = k
			}
		}
	}
	return out
}

// in tells whether s contains l.s.
func (l literal) in(s string) bool {
	for i := l.at; i < len(s); i++ {
		j := strings.IndexByte(s[i:], l.s[l.at])
		if j < 0 {
			return false
		}
		i += j
		if start := i - l.at; start+len(l.s) <= len(s) && s[start:start+len(l.s)] == l.s {
			return true
		}
	}
	return false
}

// needed tells whether s holds one of d's needed substrings (or d needs
// none).
func (d *detector) needed(s string) bool {
	if d.need == nil {
		return true
	}
	for _, l := range d.need {
		if l.in(s) {
			return true
		}
	}
	return false
}

// Pattern is an org's custom pattern: every non-empty match of Regex
// (RE2 syntax) is replaced by Placeholder.
type Pattern struct {
	Name        string `json:"name"`
	Regex       string `json:"regex"`
	Placeholder string `json:"placeholder"`
}

// Limits on custom patterns (checked by Compile).
const (
	MaxPatterns        = 50
	MaxRegexLen        = 1000
	MaxNameLen         = 64
	MaxPlaceholderLen  = 64
	DefaultPlaceholder = "[REDACTED]"
)

// PatternError names the pattern and field a custom pattern fails on
// (Index -1: the list itself).
type PatternError struct {
	Index int
	Field string // "name", "regex" or "placeholder"
	Msg   string
}

// Path is the failing field as a problem names it:
// "custom_patterns[2].regex", or "custom_patterns" for the list.
func (e *PatternError) Path() string {
	if e.Index < 0 {
		return "custom_patterns"
	}
	return fmt.Sprintf("custom_patterns[%d].%s", e.Index, e.Field)
}

func (e *PatternError) Error() string { return e.Path() + ": " + e.Msg }

// Redactor applies a fixed set of custom patterns and the built-ins. The
// zero value (or nil) applies the built-ins only. Safe for concurrent use.
type Redactor struct {
	custom []compiled
}

type compiled struct {
	re          *regexp.Regexp
	placeholder string
}

// Compile checks the custom patterns (names unique and non-empty, RE2
// regexes that compile and cannot match the empty string alone, printable
// placeholders) and returns a Redactor. An empty placeholder becomes
// DefaultPlaceholder.
func Compile(patterns []Pattern) (*Redactor, error) {
	if len(patterns) > MaxPatterns {
		return nil, &PatternError{Index: -1, Msg: fmt.Sprintf("at most %d custom patterns", MaxPatterns)}
	}
	r := &Redactor{custom: make([]compiled, 0, len(patterns))}
	seen := make(map[string]bool, len(patterns))
	for i, p := range patterns {
		switch {
		case strings.TrimSpace(p.Name) == "":
			return nil, &PatternError{i, "name", "required"}
		case len(p.Name) > MaxNameLen || !printable(p.Name):
			return nil, &PatternError{i, "name", fmt.Sprintf("at most %d printable characters", MaxNameLen)}
		case seen[p.Name]:
			return nil, &PatternError{i, "name", "duplicate name"}
		case p.Regex == "":
			return nil, &PatternError{i, "regex", "required"}
		case len(p.Regex) > MaxRegexLen || !utf8.ValidString(p.Regex) || strings.ContainsRune(p.Regex, 0):
			return nil, &PatternError{i, "regex", fmt.Sprintf("at most %d characters, valid UTF-8, no NUL", MaxRegexLen)}
		case len(p.Placeholder) > MaxPlaceholderLen || !printable(p.Placeholder):
			return nil, &PatternError{i, "placeholder", fmt.Sprintf("at most %d printable characters", MaxPlaceholderLen)}
		}
		seen[p.Name] = true
		re, err := regexp.Compile(p.Regex)
		if err != nil {
			return nil, &PatternError{i, "regex", "not a valid RE2 regular expression: " + err.Error()}
		}
		if re.MatchString("") {
			return nil, &PatternError{i, "regex", "matches the empty string"}
		}
		ph := p.Placeholder
		if ph == "" {
			ph = DefaultPlaceholder
		}
		r.custom = append(r.custom, compiled{re: re, placeholder: ph})
	}
	return r, nil
}

func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, c := range s {
		if c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}

// Redact returns s with every custom pattern's and built-in detector's
// match replaced.
func (r *Redactor) Redact(s string) string {
	if r != nil {
		for _, c := range r.custom {
			s = replaceCustom(c, s)
		}
	}
	var marks []int // computed once per text, kept in step by apply
	for i := range builtins {
		s, _ = builtins[i].apply(s, &marks)
	}
	return s
}

// marksOf lists the positions of s's anchor bytes (digits, ':' and '@':
// every detector with an alphabet anchors its runs on some of them), in
// order: one pass that serves every detector, each then looking only at
// the runs around its own anchors. Eight bytes are tested at once, and a
// word with none of them (most of a prose text) is skipped whole.
func marksOf(s string) []int {
	out := make([]int, 0, 64)
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if !mayHoldAnchor(binary.LittleEndian.Uint64([]byte(s[i : i+8]))) {
			continue
		}
		for k := i; k < i+8; k++ {
			if isAnchor(s[k]) {
				out = append(out, k)
			}
		}
	}
	for ; i < len(s); i++ {
		if isAnchor(s[i]) {
			out = append(out, i)
		}
	}
	return out
}

func isAnchor(b byte) bool { return b >= '0' && b <= ':' || b == '@' }

const ones, highs = 0x0101010101010101, 0x8080808080808080

// mayHoldAnchor tells whether one of the word's bytes is in '0'..':' or
// is '@' (exact: the bit tricks of "Bit Twiddling Hacks", hasbetween and
// haszero, ignore bytes of 0x80 and more).
func mayHoldAnchor(x uint64) bool {
	const m, n = '0' - 1, ':' + 1 // strictly between
	between := (ones*(127+n) - x&(ones*127)) &^ x & (x&(ones*127) + ones*(127-m)) & highs
	at := x ^ (ones * '@')
	return between|((at-ones)&^at&highs) != 0
}

// Redact applies the built-in detectors only.
func Redact(s string) string { return (*Redactor)(nil).Redact(s) }

func replaceCustom(c compiled, s string) string {
	locs := c.re.FindAllStringIndex(s, -1)
	if len(locs) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for _, l := range locs {
		if l[0] == l[1] {
			continue
		}
		b.WriteString(s[last:l[0]])
		b.WriteString(c.placeholder)
		last = l[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

// apply replaces d's valid matches in s, and tells whether it replaced
// any. marks holds marksOf(s), computed here when nil and needed, and
// made marksOf of the result (the marks in a replaced span dropped, the
// ones after it moved: no placeholder holds an anchor byte), so the
// detectors after a replacement need not scan the text again.
func (d *detector) apply(s string, marks *[]int) (string, bool) {
	if !d.needed(s) {
		return s, false
	}
	if d.alphabet != nil && *marks == nil {
		*marks = marksOf(s)
	}
	locs := d.find(s, *marks)
	if len(locs) == 0 {
		return s, false
	}
	var b strings.Builder
	last := 0
	ms, kept, shift := *marks, 0, 0 // marks before kept are done
	moveMarks := func(upTo int) {
		for ; kept < len(ms) && ms[kept] < upTo; kept++ {
			ms[kept] += shift
		}
	}
	for _, l := range locs {
		start, end := l[0], l[1]
		if d.left != "" && start > 0 && strings.IndexByte(d.left, s[start-1]) >= 0 {
			continue
		}
		if end < len(s) {
			if d.right != "" && strings.IndexByte(d.right, s[end]) >= 0 {
				continue
			}
			if d.rightNoDotDigit && s[end] == '.' && end+1 < len(s) && s[end+1] >= '0' && s[end+1] <= '9' {
				continue
			}
		}
		keep := start
		if len(l) >= 4 && l[2] >= 0 {
			keep = l[3]
		}
		if d.valid != nil && !d.valid(s[keep:end]) {
			continue
		}
		b.WriteString(s[last:keep])
		b.WriteString(d.placeholder)
		last = end
		if ms != nil {
			moveMarks(keep)
			gone := kept
			for gone < len(ms) && ms[gone] < end {
				gone++
			}
			ms = append(ms[:kept], ms[gone:]...)
			shift += len(d.placeholder) - (end - keep)
		}
	}
	if last == 0 {
		return s, false
	}
	b.WriteString(s[last:])
	moveMarks(len(s))
	*marks = ms
	return b.String(), true
}

// find is FindAllStringSubmatchIndex over s, run by run when the
// detector has an alphabet: the maximal runs of alphabet bytes around
// its anchors among marks (marksOf(s)); a run with no anchor is never
// searched (every minAnchors is at least 1, and every anchor byte is in
// the alphabet and among marksOf's).
func (d *detector) find(s string, marks []int) [][]int {
	if d.alphabet == nil {
		return d.re.FindAllStringSubmatchIndex(s, -1)
	}
	var out [][]int
	end := 0 // the runs before end are done
	for _, p := range marks {
		if p < end || !d.anchor[s[p]] {
			continue
		}
		i, j, anchors := p, p, 0
		for i > 0 && d.alphabet[s[i-1]] {
			i--
		}
		for ; j < len(s) && d.alphabet[s[j]]; j++ {
			if d.anchor[s[j]] {
				anchors++
			}
		}
		for k := i; k < p; k++ {
			if d.anchor[s[k]] {
				anchors++
			}
		}
		end = j
		if anchors >= d.minAnchors && j-i >= d.minLen && (d.mayHold == nil || d.mayHold(s[i:j])) {
			for _, l := range d.re.FindAllStringSubmatchIndex(s[i:j], -1) {
				for k := range l {
					if l[k] >= 0 {
						l[k] += i
					}
				}
				out = append(out, l)
			}
		}
	}
	return out
}

func hasDigit(s string) bool { return strings.ContainsAny(s, digits) }

func onlyDigits(s string) []byte {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			out = append(out, s[i])
		}
	}
	return out
}

func digitCount(min, max int) func(string) bool {
	return func(s string) bool {
		n := len(onlyDigits(s))
		return n >= min && n <= max
	}
}

// validCard: 13 to 19 digits, a major industry identifier of 2 to 6
// (Mastercard 2-series, Amex/Diners/JCB, Visa, Mastercard, Discover/
// UnionPay/Maestro) and the Luhn check.
func validCard(s string) bool {
	d := onlyDigits(s)
	if len(d) < 13 || len(d) > 19 || d[0] < '2' || d[0] > '6' {
		return false
	}
	sum := 0
	for i := len(d) - 1; i >= 0; i-- {
		v := int(d[i] - '0')
		if (len(d)-1-i)%2 == 1 {
			v *= 2
			if v > 9 {
				v -= 9
			}
		}
		sum += v
	}
	return sum%10 == 0
}

// validIBAN: 15 to 34 characters without spaces and the ISO 13616
// mod-97 check (the first four characters moved to the end, letters as
// 10..35, the number mod 97 is 1).
func validIBAN(s string) bool {
	c := strings.ReplaceAll(s, " ", "")
	if len(c) < 15 || len(c) > 34 {
		return false
	}
	c = c[4:] + c[:4]
	rem := 0
	for i := 0; i < len(c); i++ {
		ch := c[i]
		switch {
		case ch >= '0' && ch <= '9':
			rem = (rem*10 + int(ch-'0')) % 97
		case ch >= 'A' && ch <= 'Z':
			rem = (rem*100 + int(ch-'A') + 10) % 97
		default:
			return false
		}
	}
	return rem == 1
}

// validIPv4: four decimal octets 0..255 without leading zeros.
func validIPv4(s string) bool {
	parts := strings.Split(s, ".")
	if len(parts) != 4 {
		return false
	}
	for _, p := range parts {
		if !octet(p) {
			return false
		}
	}
	return true
}

func octet(p string) bool {
	if p == "" || len(p) > 3 || (len(p) > 1 && p[0] == '0') {
		return false
	}
	n := 0
	for i := 0; i < len(p); i++ {
		if p[i] < '0' || p[i] > '9' {
			return false
		}
		n = n*10 + int(p[i]-'0')
	}
	return n <= 255
}

// validIPv6: RFC 4291 text form (eight groups, or at most seven around
// exactly one "::"; an embedded IPv4 address after the last colon counts
// as two groups) spelling out at least two groups, so "::", "::1" and
// slices like "a[::2]" stay.
func validIPv6(s string) bool {
	if strings.Contains(s, ".") {
		i := strings.LastIndexByte(s, ':')
		if !validIPv4(s[i+1:]) {
			return false
		}
		s = s[:i+1] + "0:0"
	}
	groups := func(part string) (int, bool) {
		if part == "" {
			return 0, true
		}
		gs := strings.Split(part, ":")
		for _, g := range gs {
			if g == "" || len(g) > 4 {
				return 0, false
			}
		}
		return len(gs), true
	}
	head, tail, double := strings.Cut(s, "::")
	if !double {
		n, ok := groups(s)
		return ok && n == 8
	}
	h, ok1 := groups(head)
	t, ok2 := groups(tail)
	return ok1 && ok2 && h+t >= 2 && h+t <= 7
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

// holdsLocalNumber: every phone_nanp match ends in three digits, a
// separator and four digits.
func holdsLocalNumber(run string) bool {
	for i := 0; i+8 <= len(run); i++ {
		if isDigit(run[i]) && isDigit(run[i+1]) && isDigit(run[i+2]) && strings.IndexByte(" .-", run[i+3]) >= 0 &&
			isDigit(run[i+4]) && isDigit(run[i+5]) && isDigit(run[i+6]) && isDigit(run[i+7]) {
			return true
		}
	}
	return false
}

// holdsTrunkNumber: a phone_trunk match starts with 0 and a digit 1-9
// and trunkPhone wants 10 digits in it, so the run from its first such
// pair holds 10 digits at least.
func holdsTrunkNumber(run string) bool {
	for i := 0; i+1 < len(run); i++ {
		if run[i] == '0' && run[i+1] >= '1' && run[i+1] <= '9' {
			return len(onlyDigits(run[i:])) >= 10
		}
	}
	return false
}

func balancedParen(s string) bool {
	return strings.Contains(s, "(") == strings.Contains(s, ")")
}

// trunkPhone: a national number with a trunk 0: 10 or 11 digits and one
// kind of separator (so "01-02-2024 10" is a date and an hour).
func trunkPhone(s string) bool {
	n := len(onlyDigits(s))
	if n < 10 || n > 11 {
		return false
	}
	return !(strings.Contains(s, " ") && strings.Contains(s, "-"))
}
