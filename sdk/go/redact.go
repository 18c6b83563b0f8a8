package expd

import (
	"fmt"
	"regexp"
	"strings"
)

// Redaction of prompt and response texts before an event leaves the
// process. The built-in detectors and their order, boundaries and
// validators are specified by testdata/redaction/README.md (the server's
// redact payload policy applies the same ones at ingest); every case of
// the shared corpus testdata/redaction/cases.json is a test of this file.

// DefaultPlaceholder replaces a custom pattern's match when its
// placeholder is empty, and a text whose RedactHook panicked.
const DefaultPlaceholder = "[REDACTED]"

// RedactPattern is a custom pattern, as GET /v1/privacy lists them: every
// non-empty match of Regex (Go regexp syntax) becomes Placeholder,
// verbatim ("" : DefaultPlaceholder).
type RedactPattern struct {
	Name        string `json:"name"`
	Regex       string `json:"regex"`
	Placeholder string `json:"placeholder"`
}

// redactedFields are the model_call fields redaction applies to, as the
// server's payload policy (provider errors quote keys and input).
var redactedFields = [...]string{"prompt", "response", "error"}

type charSet [128]bool

func chars(sets ...string) *charSet {
	var s charSet
	for _, set := range sets {
		for i := 0; i < len(set); i++ {
			s[set[i]] = true
		}
	}
	return &s
}

// has tells whether the byte is in the set; no non-ASCII byte ever is.
func (s *charSet) has(b byte) bool { return s != nil && b < 128 && s[b] }

const (
	alnum  = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	digits = "0123456789"
)

var (
	setAlnum = chars(alnum)
	setToken = chars(alnum, "_-")
	setDigit = chars(digits)
)

func digitCount(v string) int {
	n := 0
	for i := 0; i < len(v); i++ {
		if setDigit.has(v[i]) {
			n++
		}
	}
	return n
}

func validIBAN(v string) bool {
	s := strings.ReplaceAll(v, " ", "")
	if len(s) < 15 || len(s) > 34 {
		return false
	}
	r := 0
	for _, ch := range s[4:] + s[:4] {
		if ch >= '0' && ch <= '9' {
			r = (r*10 + int(ch-'0')) % 97
		} else {
			r = (r*100 + int(ch-'A'+10)) % 97
		}
	}
	return r == 1
}

func validCard(v string) bool {
	var ds []int
	for i := 0; i < len(v); i++ {
		if setDigit.has(v[i]) {
			ds = append(ds, int(v[i]-'0'))
		}
	}
	if len(ds) < 13 || len(ds) > 19 || ds[0] < 2 || ds[0] > 6 {
		return false
	}
	total := 0
	for i := range ds {
		d := ds[len(ds)-1-i]
		if i%2 == 1 {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		total += d
	}
	return total%10 == 0
}

func validIPv4(v string) bool {
	parts := strings.Split(v, ".")
	if len(parts) != 4 {
		return false
	}
	for _, p := range parts {
		if len(p) < 1 || len(p) > 3 || digitCount(p) != len(p) {
			return false
		}
		if p != "0" && (p[0] == '0' || (len(p) == 3 && p > "255")) {
			return false
		}
	}
	return true
}

func groupsOK(groups []string) bool {
	for _, g := range groups {
		if len(g) < 1 || len(g) > 4 {
			return false
		}
	}
	return true
}

func validIPv6(v string) bool {
	if strings.Contains(v, ".") {
		i := strings.LastIndex(v, ":")
		if !validIPv4(v[i+1:]) {
			return false
		}
		v = v[:i+1] + "0:0"
	}
	if head, tail, ok := strings.Cut(v, "::"); ok {
		n := 0
		for _, side := range []string{head, tail} {
			if side == "" {
				continue
			}
			parts := strings.Split(side, ":")
			if !groupsOK(parts) {
				return false
			}
			n += len(parts)
		}
		return n >= 2 && n <= 7
	}
	parts := strings.Split(v, ":")
	return len(parts) == 8 && groupsOK(parts)
}

func validE164(v string) bool { n := digitCount(v); return n >= 8 && n <= 15 }

func validParentheses(v string) bool { return strings.Contains(v, "(") == strings.Contains(v, ")") }

func validTrunk(v string) bool {
	n := digitCount(v)
	return (n == 10 || n == 11) && !(strings.Contains(v, " ") && strings.Contains(v, "-"))
}

type detector struct {
	re          *regexp.Regexp
	left, right *charSet
	noDotDigit  bool
	valid       func(string) bool
	placeholder string
}

// builtins is the table of testdata/redaction/README.md, in its order.
var builtins = []detector{
	{re: regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----[^-]*-----END [A-Z ]*PRIVATE KEY-----`), placeholder: "[SECRET]"},
	{re: regexp.MustCompile(`eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*`), left: setToken, right: setToken, placeholder: "[SECRET]"},
	{re: regexp.MustCompile(`([Bb]earer[ ]+)[A-Za-z0-9._~+/=-]{12,}`), left: setAlnum, valid: func(v string) bool { return digitCount(v) > 0 }, placeholder: "[SECRET]"},
	{re: regexp.MustCompile(`(Authorization:[ ]*Basic[ ]+)[A-Za-z0-9+/=]{8,}`), placeholder: "[SECRET]"},
	{re: regexp.MustCompile(`sk-[A-Za-z0-9_-]{20,}`), left: setToken, placeholder: "[SECRET]"},
	{re: regexp.MustCompile(`(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}`), left: setToken, placeholder: "[SECRET]"},
	{re: regexp.MustCompile(`(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})`), left: setToken, placeholder: "[SECRET]"},
	{re: regexp.MustCompile(`(?:AKIA|ASIA)[A-Z0-9]{16}`), left: setAlnum, right: setAlnum, placeholder: "[SECRET]"},
	{re: regexp.MustCompile(`xox[abposr]-[A-Za-z0-9-]{10,}`), left: setToken, placeholder: "[SECRET]"},
	{re: regexp.MustCompile(`AIza[A-Za-z0-9_-]{35}`), left: setToken, right: setToken, placeholder: "[SECRET]"},
	{re: regexp.MustCompile(`[A-Za-z0-9._%+-]{1,64}@(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,24}`), left: chars(alnum, "._%+-"), right: setToken, placeholder: "[EMAIL]"},
	{re: regexp.MustCompile(`[A-Z]{2}[0-9]{2}(?:[A-Z0-9]{11,30}|(?: [A-Z0-9]{4}){2,7}(?: [A-Z0-9]{1,3})?)`), left: setAlnum, right: setAlnum, valid: validIBAN, placeholder: "[IBAN]"},
	{re: regexp.MustCompile(`[0-9]{4}(?:[ -]?[0-9]{4}){3}[0-9]{0,3}|[0-9]{4}[ -]?[0-9]{6}[ -]?[0-9]{4,5}`), left: setAlnum, right: setAlnum, valid: validCard, placeholder: "[CARD]"},
	{re: regexp.MustCompile(`[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?:\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3})?`), left: chars(alnum, ":"), right: chars(alnum, ":"), valid: validIPv6, placeholder: "[IP]"},
	{re: regexp.MustCompile(`[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}`), left: chars(alnum, "."), right: setAlnum, noDotDigit: true, valid: validIPv4, placeholder: "[IP]"},
	{re: regexp.MustCompile(`\+[0-9](?:[ .()-]{0,2}[0-9]){6,14}`), left: chars(alnum, "+"), right: setAlnum, valid: validE164, placeholder: "[PHONE]"},
	{re: regexp.MustCompile(`(?:1[ .-]?)?\(?[2-9][0-9]{2}\)?[ .-]?[0-9]{3}[ .-][0-9]{4}`), left: chars(alnum, ".-+"), right: setAlnum, noDotDigit: true, valid: validParentheses, placeholder: "[PHONE]"},
	{re: regexp.MustCompile(`0[1-9][0-9]{0,3}(?:[ -][0-9]{2,8}){1,4}`), left: chars(alnum, ".,:/+-"), right: setAlnum, noDotDigit: true, valid: validTrunk, placeholder: "[PHONE]"},
}

func (d *detector) apply(text string) string {
	var b strings.Builder
	last, n := 0, len(text)
	for _, m := range d.re.FindAllStringSubmatchIndex(text, -1) {
		start, end := m[0], m[1]
		if start > 0 && d.left.has(text[start-1]) {
			continue
		}
		if end < n && (d.right.has(text[end]) || (d.noDotDigit && text[end] == '.' && end+1 < n && setDigit.has(text[end+1]))) {
			continue
		}
		valueStart := start
		if len(m) > 2 && m[3] >= 0 { // a capturing group is a kept prefix (bearer, basic_auth)
			valueStart = m[3]
		}
		if d.valid != nil && !d.valid(text[valueStart:end]) {
			continue
		}
		b.WriteString(text[last:valueStart])
		b.WriteString(d.placeholder)
		last = end
	}
	if b.Len() == 0 {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}

type customPattern struct {
	re          *regexp.Regexp
	placeholder string
}

func compilePatterns(patterns []RedactPattern) ([]customPattern, error) {
	out := make([]customPattern, 0, len(patterns))
	for i, p := range patterns {
		re, err := regexp.Compile(p.Regex)
		if err != nil {
			return nil, fmt.Errorf("expd: RedactPatterns[%d].Regex: %w", i, err)
		}
		ph := p.Placeholder
		if ph == "" {
			ph = DefaultPlaceholder
		}
		out = append(out, customPattern{re: re, placeholder: ph})
	}
	return out, nil
}

func redactWith(text string, patterns []customPattern) string {
	for _, p := range patterns {
		// A function, not a template: the placeholder is verbatim.
		text = p.re.ReplaceAllStringFunc(text, func(m string) string {
			if m == "" {
				return m
			}
			return p.placeholder
		})
	}
	for i := range builtins {
		text = builtins[i].apply(text)
	}
	return text
}

// Redact returns text with the built-in detectors' matches (emails, phone
// numbers, card numbers, IBANs, IP addresses, keys and tokens) replaced by
// typed placeholders such as [EMAIL]; patterns run first, in order. A
// pattern that does not compile is an error.
func Redact(text string, patterns ...RedactPattern) (string, error) {
	compiled, err := compilePatterns(patterns)
	if err != nil {
		return "", err
	}
	return redactWith(text, compiled), nil
}

// redactor is what a client with redaction on applies to the prompt and
// response of every model call; nil when off.
type redactor struct {
	patterns []customPattern
	hook     func(string) string
	log      func(msg string, args ...any)
}

func newRedactor(opts Options, logError func(string, ...any)) (*redactor, error) {
	if !opts.Redact && opts.RedactHook == nil && len(opts.RedactPatterns) == 0 {
		return nil, nil
	}
	patterns, err := compilePatterns(opts.RedactPatterns)
	if err != nil {
		return nil, err
	}
	return &redactor{patterns: patterns, hook: opts.RedactHook, log: logError}, nil
}

func (r *redactor) text(s string) (out string) {
	s = redactWith(s, r.patterns)
	if r.hook == nil {
		return s
	}
	defer func() {
		if p := recover(); p != nil { // fail closed: an unredacted text never leaves
			r.log("expd: the redact hook panicked; the text is sent as "+DefaultPlaceholder, "panic", fmt.Sprint(p))
			out = DefaultPlaceholder
		}
	}()
	return r.hook(s)
}

func (r *redactor) fields(fields map[string]any) {
	for _, name := range redactedFields {
		if s, ok := fields[name].(string); ok {
			fields[name] = r.text(s)
		}
	}
}
