package targeting

import (
	"fmt"
	"regexp"
	"strings"
)

// MaxRegexLen bounds a $regex pattern, in characters.
const MaxRegexLen = 512

// maxRepeat bounds {n,m}: RE2 refuses more than 1000.
const maxRepeat = 1000

// Escapes allowed outside a character class: the ASCII classes \d \D \w
// \W (ASCII in Go, in JavaScript and in Python with re.ASCII), \n \r \t,
// and the syntax characters (the only identity escapes JavaScript's u
// mode allows).
const (
	escapes      = `dDwWnrt^$\.*+?()[]{}|/`
	classEscapes = escapes + "-"
)

// CompileRegex checks that pattern lies in the subset that Go, Python and
// JavaScript evaluate identically (docs/targeting.md, "$regex") and
// compiles it as every client does: "." matches every character
// (dotall), $ only the end of the text, no flags.
func CompileRegex(pattern string) (*regexp.Regexp, error) {
	if err := CheckRegex(pattern); err != nil {
		return nil, err
	}
	return regexp.Compile("(?s)" + pattern)
}

// CheckRegex tells why pattern is outside the supported subset, or nil.
// The clients carry the same check, so a pattern outside it can never be
// evaluated differently: literals, ".", classes [a-z] and [^...], the
// escapes above, groups ( ) and (?: ), alternation, anchors ^ and $,
// quantifiers * + ? {n} {n,} {n,m} (lazy ones too).
func CheckRegex(pattern string) error {
	rs := []rune(pattern)
	if len(rs) > MaxRegexLen {
		return fmt.Errorf("regex is longer than %d characters", MaxRegexLen)
	}
	depth, repeatable := 0, false
	for i := 0; i < len(rs); i++ {
		switch c := rs[i]; c {
		case '\\':
			if i+1 == len(rs) {
				return fmt.Errorf("regex ends with a lone backslash")
			}
			i++
			if !strings.ContainsRune(escapes, rs[i]) {
				return fmt.Errorf(`regex escape \%c is not supported (only \d \D \w \W \n \r \t and escaped syntax characters)`, rs[i])
			}
			repeatable = true
		case '(':
			if i+1 < len(rs) && rs[i+1] == '?' {
				if i+2 >= len(rs) || rs[i+2] != ':' {
					return fmt.Errorf("regex group (? is not supported: only ( ) and (?: ); no lookarounds, named groups or flags")
				}
				i += 2
			}
			depth++
			repeatable = false
		case ')':
			if depth == 0 {
				return fmt.Errorf("regex has an unbalanced )")
			}
			depth--
			repeatable = true
		case '|', '^', '$':
			repeatable = false
		case '*', '+', '?', '{':
			if !repeatable {
				return fmt.Errorf("regex quantifier %c at character %d has nothing to repeat", c, i+1)
			}
			if c == '{' {
				end, err := repeatCount(rs, i)
				if err != nil {
					return err
				}
				i = end
			}
			if i+1 < len(rs) && rs[i+1] == '?' {
				i++ // lazy: the same matches
			}
			repeatable = false
		case '}', ']':
			return fmt.Errorf(`regex character %c must be escaped (\%c)`, c, c)
		case '[':
			end, err := class(rs, i)
			if err != nil {
				return err
			}
			i = end
			repeatable = true
		default:
			repeatable = true
		}
	}
	if depth != 0 {
		return fmt.Errorf("regex has an unbalanced (")
	}
	return nil
}

// repeatCount reads {n}, {n,} or {n,m} at rs[i] and returns the index of
// its "}".
func repeatCount(rs []rune, i int) (int, error) {
	bad := fmt.Errorf(`regex { at character %d must start {n}, {n,} or {n,m} with n <= m <= %d (write \{ for the character)`, i+1, maxRepeat)
	j := i + 1
	n, ok := digits(rs, &j)
	if !ok {
		return 0, bad
	}
	m := n
	if j < len(rs) && rs[j] == ',' {
		j++
		if j < len(rs) && rs[j] != '}' {
			if m, ok = digits(rs, &j); !ok || m < n {
				return 0, bad
			}
		}
	}
	if j >= len(rs) || rs[j] != '}' || m > maxRepeat {
		return 0, bad
	}
	return j, nil
}

func digits(rs []rune, j *int) (int, bool) {
	n, start := 0, *j
	for *j < len(rs) && rs[*j] >= '0' && rs[*j] <= '9' && *j-start < 5 {
		n = n*10 + int(rs[*j]-'0')
		*j++
	}
	return n, *j > start
}

// class reads a character class at rs[i] and returns the index of its "]".
// Inside: characters, escapes, and ranges a-b between two single characters;
// a literal "-" is escaped or last; "[" and "]" are escaped.
func class(rs []rune, i int) (int, error) {
	j := i + 1
	if j < len(rs) && rs[j] == '^' {
		j++
	}
	if j < len(rs) && rs[j] == ']' {
		return 0, fmt.Errorf(`regex class at character %d is empty (write \] for the character)`, i+1)
	}
	// atom reads one class member: its character, or -1 for \d \D \w \W.
	atom := func() (rune, error) {
		c := rs[j]
		switch c {
		case '\\':
			if j+1 == len(rs) {
				return 0, fmt.Errorf("regex ends with a lone backslash")
			}
			j++
			e := rs[j]
			if !strings.ContainsRune(classEscapes, e) {
				return 0, fmt.Errorf(`regex escape \%c is not supported in a class`, e)
			}
			j++
			switch e {
			case 'd', 'D', 'w', 'W':
				return -1, nil
			case 'n':
				return '\n', nil
			case 'r':
				return '\r', nil
			case 't':
				return '\t', nil
			}
			return e, nil
		case '[':
			return 0, fmt.Errorf(`regex character [ inside a class must be escaped (\[)`)
		case '-':
			if j+1 < len(rs) && rs[j+1] == ']' {
				j++
				return '-', nil
			}
			return 0, fmt.Errorf(`regex character - inside a class must be escaped (\-) unless it is last or makes a range`)
		}
		j++
		return c, nil
	}
	for j < len(rs) && rs[j] != ']' {
		lo, err := atom()
		if err != nil {
			return 0, err
		}
		if j+1 < len(rs) && rs[j] == '-' && rs[j+1] != ']' {
			j++
			hi, err := atom()
			if err != nil {
				return 0, err
			}
			if lo < 0 || hi < 0 || hi < lo {
				return 0, fmt.Errorf("regex class range at character %d must go from a character to a greater one", j)
			}
		}
	}
	if j >= len(rs) {
		return 0, fmt.Errorf("regex class at character %d has no closing ]", i+1)
	}
	return j, nil
}
