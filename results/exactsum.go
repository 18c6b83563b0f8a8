package results

import (
	"database/sql/driver"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"modernc.org/sqlite"
)

// Per-user sums are exact (docs/results.md, "Incremental results"): a sum
// read from day rollups must equal, bit for bit, the sum the full query
// computes over the same events in another order, and float addition is
// not associative. PostgreSQL sums NUMERIC; SQLite has no exact decimal
// type, so it gets expd_exact_sum, an aggregate over big.Rat that takes
// numbers and the "a/b" texts it returns, so stored sums add up exactly
// again. The sum becomes a float64 once, when Go reads it (exactSum).
func init() {
	sqlite.MustRegisterFunction("expd_exact_sum", &sqlite.FunctionImpl{
		NArgs: 1, Deterministic: true,
		MakeAggregate: func(sqlite.FunctionContext) (sqlite.AggregateFunction, error) { return &ratSum{}, nil },
	})
}

// ratSum is one evaluation of expd_exact_sum: NULL when every input was
// NULL, like SUM.
type ratSum struct {
	sum  big.Rat
	seen bool
}

func (r *ratSum) Step(_ *sqlite.FunctionContext, args []driver.Value) error {
	var x big.Rat
	switch v := args[0].(type) {
	case nil:
		return nil
	case int64:
		x.SetInt64(v)
	case float64:
		if x.SetFloat64(v) == nil {
			return fmt.Errorf("expd_exact_sum: non-finite value %v", v)
		}
	case string:
		if _, ok := x.SetString(v); !ok {
			return fmt.Errorf("expd_exact_sum: %q is not a number", v)
		}
	case []byte:
		if _, ok := x.SetString(string(v)); !ok {
			return fmt.Errorf("expd_exact_sum: %q is not a number", v)
		}
	default:
		return fmt.Errorf("expd_exact_sum: unsupported %T", v)
	}
	r.sum.Add(&r.sum, &x)
	r.seen = true
	return nil
}

func (r *ratSum) WindowInverse(*sqlite.FunctionContext, []driver.Value) error {
	return fmt.Errorf("expd_exact_sum is not a window function")
}

func (r *ratSum) WindowValue(*sqlite.FunctionContext) (driver.Value, error) {
	if !r.seen {
		return nil, nil
	}
	// "a/b" always: a bare integer text would be stored as INTEGER by a
	// NUMERIC column, which is exact too, but one form is simpler to read.
	return r.sum.String(), nil
}

func (r *ratSum) Final(*sqlite.FunctionContext) {}

// exactSum scans an exact sum (PostgreSQL NUMERIC text, an "a/b" text of
// expd_exact_sum, or a plain number) into the nearest float64.
type exactSum struct {
	Float64 float64
	Valid   bool
}

func (s *exactSum) Scan(v any) error {
	s.Float64, s.Valid = 0, v != nil
	switch v := v.(type) {
	case nil:
		return nil
	case float64:
		s.Float64 = v
		return nil
	case int64:
		s.Float64 = float64(v)
		return nil
	case []byte:
		return s.parse(string(v))
	case string:
		return s.parse(v)
	default:
		return fmt.Errorf("exact sum: unsupported %T", v)
	}
}

func (s *exactSum) parse(text string) error {
	if !strings.ContainsRune(text, '/') {
		// A decimal: strconv rounds correctly, as big.Rat would.
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return fmt.Errorf("exact sum %q: %w", text, err)
		}
		s.Float64 = f
		return nil
	}
	var r big.Rat
	if _, ok := r.SetString(text); !ok {
		return fmt.Errorf("exact sum %q: not a number", text)
	}
	s.Float64, _ = r.Float64()
	return nil
}
