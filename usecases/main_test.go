package usecases_test

import (
	"testing"

	"github.com/expd/expd/internal/temporaltest"
)

// TestMain stops the package's shared in-process Temporal server after
// the tests.
func TestMain(m *testing.M) { temporaltest.Main(m) }
