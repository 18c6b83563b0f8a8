package bucketing_test

import (
	"os/exec"
	"testing"
)

// TestVectorsAgreeWithIndependentPython re-derives every case of the vector
// file with crosscheck.py (hashlib, fractions, a bucket-by-bucket rebalance),
// so the expected values do not rest on this package alone.
func TestVectorsAgreeWithIndependentPython(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed: cannot cross-check the vector file")
	}
	out, err := exec.Command(python, "../testdata/bucketing/crosscheck.py", vectorFile).CombinedOutput()
	if err != nil {
		t.Fatalf("crosscheck.py: %v\n%s", err, out)
	}
	t.Logf("crosscheck.py: %s", out)
}
