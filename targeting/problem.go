// Package targeting is the server's own part of targeting conditions
// (docs/targeting.md): how a refused condition's invalid parts are named in
// a problem+json answer. Compiling and evaluating a condition is the Go
// client's package, github.com/expd/expd/sdk/go/targeting, which the server
// uses as it is, so that the server and the Go client cannot differ.
package targeting

import (
	"strings"

	conditions "github.com/expd/expd/sdk/go/targeting"
)

// ProblemField is the field a problem+json answer names for an invalid part
// of an experiment's targeting condition: "targeting.$and[1].plan.$in", or
// "targeting" for the condition as a whole.
func ProblemField(e conditions.FieldError) string {
	return strings.TrimSuffix("targeting."+e.Field, ".")
}
