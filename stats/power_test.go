package stats

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"testing"
)

// powerReference is reference_power.json (gen_reference.R, third part):
// R's power.t.test and power.prop.test, n per group.
type powerReference struct {
	TPower []struct {
		N, Delta, SD, Alpha, Power float64
	} `json:"t_power"`
	TSolve []struct {
		Delta, SD, Power, N float64
		NForDelta           float64 `json:"n_for_delta"`
		DeltaAtN            float64 `json:"delta_at_n"`
	} `json:"t_solve"`
	PropPower []struct {
		N, P1, P2, Alpha, Power float64
	} `json:"prop_power"`
	PropSolve []struct {
		P1, P2, Power, N float64
		NForP2           float64 `json:"n_for_p2"`
		P2AtN            float64 `json:"p2_at_n"`
	} `json:"prop_solve"`
}

func loadPowerReference(t *testing.T) powerReference {
	t.Helper()
	b, err := os.ReadFile("testdata/reference_power.json")
	if err != nil {
		t.Fatal(err)
	}
	var r powerReference
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.TPower) == 0 || len(r.TSolve) == 0 || len(r.PropPower) == 0 || len(r.PropSolve) == 0 {
		t.Fatal("reference_power.json has an empty section")
	}
	return r
}

// powerTol is the agreement with R: R's pnt sums its series in long
// double, and the solved values carry uniroot's 1e-12 tolerance.
const powerTol = 1e-9

func assertRel(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.IsNaN(got) || math.Abs(got-want) > tol*math.Max(math.Abs(want), 1e-300) {
		t.Errorf("%s = %.17g, want %.17g (relative error %.2g)", what, got, want, math.Abs(got-want)/math.Abs(want))
	}
}

func TestFixedHorizonPowerMatchesRPowerTTest(t *testing.T) {
	r := loadPowerReference(t)
	for _, c := range r.TPower {
		name := fmt.Sprintf("power.t.test(n=%v, delta=%v, sd=%v, sig.level=%v)", c.N, c.Delta, c.SD, c.Alpha)
		got, err := PowerAt(PowerDesign{SD: c.SD, Alpha: c.Alpha}, 2*c.N, c.Delta)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		assertRel(t, name, got, c.Power, powerTol)
	}
	for _, c := range r.TSolve {
		d := PowerDesign{SD: c.SD, Power: c.Power}
		n, err := UsersForMDE(d, c.Delta)
		if err != nil {
			t.Fatal(err)
		}
		assertRel(t, fmt.Sprintf("power.t.test(delta=%v, sd=%v, power=%v)$n", c.Delta, c.SD, c.Power), n/2, c.N, powerTol)
		mde, err := MDE(d, 2*c.NForDelta)
		if err != nil {
			t.Fatal(err)
		}
		assertRel(t, fmt.Sprintf("power.t.test(n=%v, sd=%v, power=%v)$delta", c.NForDelta, c.SD, c.Power), mde, c.DeltaAtN, powerTol)
	}
}

func TestFixedHorizonPowerMatchesRPowerPropTest(t *testing.T) {
	r := loadPowerReference(t)
	for _, c := range r.PropPower {
		name := fmt.Sprintf("power.prop.test(n=%v, p1=%v, p2=%v, sig.level=%v)", c.N, c.P1, c.P2, c.Alpha)
		got, err := PowerAt(PowerDesign{Proportion: true, Baseline: c.P1, Alpha: c.Alpha}, 2*c.N, c.P2-c.P1)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		assertRel(t, name, got, c.Power, powerTol)
	}
	for _, c := range r.PropSolve {
		d := PowerDesign{Proportion: true, Baseline: c.P1, Power: c.Power}
		n, err := UsersForMDE(d, c.P2-c.P1)
		if err != nil {
			t.Fatal(err)
		}
		assertRel(t, fmt.Sprintf("power.prop.test(p1=%v, p2=%v, power=%v)$n", c.P1, c.P2, c.Power), n/2, c.N, powerTol)
		mde, err := MDE(d, 2*c.NForP2)
		if err != nil {
			t.Fatal(err)
		}
		assertRel(t, fmt.Sprintf("power.prop.test(n=%v, p1=%v, power=%v)$p2", c.NForP2, c.P1, c.Power), c.P1+mde, c.P2AtN, powerTol)
	}
}

// The sequential numbers follow from the confidence sequence: at the
// users UsersForMDE returns, the sequence's half-width plus z_power
// standard errors is the effect; reading always costs users over a
// fixed horizon; and DaysForMDE turns users into days.
func TestSequentialPowerAndDays(t *testing.T) {
	fixed := PowerDesign{SD: 2}
	seq := PowerDesign{SD: 2, Sequential: true, NStar: 20_000}
	nf, err := UsersForMDE(fixed, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	ns, err := UsersForMDE(seq, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	se := 2 * math.Sqrt(4/ns)
	want := csHalfWidth(se, ns, 20_000, 0.05) + normalQuantile(0.8)*se
	assertRel(t, "sequential MDE at its users", want, 0.1, 1e-9)
	t.Logf("users for an effect of 0.1 at SD 2: fixed %.0f, sequential (N* 20,000) %.0f: %.2fx", nf, ns, ns/nf)
	if !(ns > 1.3*nf && ns < 4*nf) {
		t.Errorf("sequential needs %v users against %v fixed: want a cost between 1.3x and 4x", ns, nf)
	}
	mde, err := MDE(seq, ns)
	if err != nil {
		t.Fatal(err)
	}
	assertRel(t, "MDE inverts UsersForMDE", mde, 0.1, 1e-9)
	days, err := DaysForMDE(seq, 0.1, 1000, 500)
	if err != nil {
		t.Fatal(err)
	}
	assertRel(t, "days", days, (ns-1000)/500, 1e-12)
	if d, err := DaysForMDE(seq, 0.1, ns+1, 0); err != nil || d != 0 {
		t.Errorf("enough users already: %v, %v", d, err)
	}
	if _, err := DaysForMDE(seq, 0.1, 10, 0); !errors.Is(err, ErrUnreachable) {
		t.Errorf("no traffic: %v, want ErrUnreachable", err)
	}
	// Unequal arms need more users than equal ones.
	skew, err := UsersForMDE(PowerDesign{SD: 2, TreatmentShare: 0.2}, 0.1)
	if err != nil || !(skew > nf*1.5) {
		t.Errorf("20/80 arms need %v users against %v at 50/50 (%v)", skew, nf, err)
	}
}

func TestPowerRejectsBadInput(t *testing.T) {
	for name, f := range map[string]func() error{
		"zero sd":          func() error { _, err := MDE(PowerDesign{}, 100); return err },
		"negative mde":     func() error { _, err := UsersForMDE(PowerDesign{SD: 1}, -0.1); return err },
		"baseline 1":       func() error { _, err := MDE(PowerDesign{Proportion: true, Baseline: 1}, 100); return err },
		"share 1":          func() error { _, err := MDE(PowerDesign{SD: 1, TreatmentShare: 1}, 100); return err },
		"two users":        func() error { _, err := MDE(PowerDesign{SD: 1}, 2); return err },
		"rate above 1":     func() error { _, err := UsersForMDE(PowerDesign{Proportion: true, Baseline: 0.9}, 0.2); return err },
		"negative traffic": func() error { _, err := DaysForMDE(PowerDesign{SD: 1}, 0.1, 0, -1); return err },
		"power 1":          func() error { _, err := MDE(PowerDesign{SD: 1, Power: 1}, 100); return err },
	} {
		if err := f(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := UsersForMDE(PowerDesign{SD: 1e6}, 1e-9); !errors.Is(err, ErrUnreachable) {
		t.Errorf("a vanishing effect: %v, want ErrUnreachable", err)
	}
}
