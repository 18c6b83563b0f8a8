package bucketing

import "errors"

// Classes of invalid input; every error returned by this package wraps one,
// so callers can tell them apart with errors.Is.
var (
	ErrBucketCount = errors.New("bucket_count out of range")
	ErrAllocation  = errors.New("invalid allocation")
	ErrMap         = errors.New("invalid bucket map")
)

// FieldError names one invalid input the way the config's JSON does
// ("allocation[1].weight"), so an API can list each bad field in a problem
// response. Validation joins one FieldError per problem with errors.Join.
type FieldError struct {
	Field  string
	Reason string
	class  error
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Reason }

// Unwrap returns the error's class (ErrBucketCount, ErrAllocation or ErrMap).
func (e *FieldError) Unwrap() error { return e.class }

// FieldErrors lists every *FieldError inside err (through wrapping and
// errors.Join), in order, for building a problem response's errors list.
func FieldErrors(err error) []*FieldError {
	switch e := err.(type) {
	case nil:
		return nil
	case *FieldError:
		return []*FieldError{e}
	case interface{ Unwrap() []error }:
		var all []*FieldError
		for _, inner := range e.Unwrap() {
			all = append(all, FieldErrors(inner)...)
		}
		return all
	default:
		return FieldErrors(errors.Unwrap(err))
	}
}
