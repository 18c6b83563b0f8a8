package stats

import (
	"encoding/json"
	"math"
	"os"
	"sync"
	"testing"
)

// The reference vectors in testdata/reference.json come from R via
// testdata/gen_reference.R. Analytic results must match to 1e-9 relative
// (refRelTol). Values whose natural size is set by something else are
// compared relative to that size instead (see assertClose's scale): an
// effect or CI bound near 0 is compared on the scale of its standard error,
// a p-value on a floor of 1e-300. Resampling results are compared within
// Monte Carlo bounds that do not depend on the seed.
const refRelTol = 1e-9

// pFloor is the smallest p compared relatively: p-values are checked
// down to 1e-300.
const pFloor = 1e-300

type referenceSample struct {
	Values []float64 `json:"values"`
	Counts []float64 `json:"counts"` // when set, Values[i] repeats Counts[i] times
}

func (s referenceSample) expand() []float64 {
	if s.Counts == nil {
		return s.Values
	}
	var out []float64
	for i, v := range s.Values {
		for range int(s.Counts[i]) {
			out = append(out, v)
		}
	}
	return out
}

type referenceDataset struct {
	ID        int             `json:"id"`
	Name      string          `json:"name"`
	Control   referenceSample `json:"control"`
	Treatment referenceSample `json:"treatment"`
}

type referenceComparison struct {
	Dataset   int      `json:"dataset"`
	Alpha     float64  `json:"alpha"`
	Statistic float64  `json:"statistic"`
	PValue    float64  `json:"p_value"`
	Effect    *float64 `json:"effect"`
	CILow     float64  `json:"ci_low"`
	CIHigh    float64  `json:"ci_high"`
	SE        float64  `json:"se"`
	RelLift   *float64 `json:"rel_lift"`
	RelCILow  float64  `json:"rel_ci_low"`
	RelCIHigh float64  `json:"rel_ci_high"`
	// resampling references
	Exact          bool    `json:"exact"`
	ReferenceDraws float64 `json:"reference_draws"`
	Draws          float64 `json:"draws"`
	BootSE         float64 `json:"boot_se"`
}

type referenceZTest struct {
	NControl, OnesControl, NTreatment, OnesTreatment float64
	Alpha, XSquared, PValue, Effect, CILow, CIHigh   float64
}

func (z *referenceZTest) UnmarshalJSON(b []byte) error {
	var raw struct {
		NControl      float64 `json:"n_control"`
		OnesControl   float64 `json:"ones_control"`
		NTreatment    float64 `json:"n_treatment"`
		OnesTreatment float64 `json:"ones_treatment"`
		Alpha         float64 `json:"alpha"`
		XSquared      float64 `json:"x_squared"`
		PValue        float64 `json:"p_value"`
		Effect        float64 `json:"effect"`
		CILow         float64 `json:"ci_low"`
		CIHigh        float64 `json:"ci_high"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*z = referenceZTest(raw)
	return nil
}

type referenceSRM struct {
	Observed  []float64 `json:"observed"`
	Weights   []float64 `json:"weights"`
	ChiSquare float64   `json:"chi_square"`
	DF        float64   `json:"df"`
	PValue    float64   `json:"p_value"`
}

type referencePAdjust struct {
	P    []float64 `json:"p"`
	BH   []float64 `json:"bh"`
	Holm []float64 `json:"holm"`
}

type referenceDistribution struct {
	Sample    referenceSample `json:"sample"`
	Mean      float64         `json:"mean"`
	SD        float64         `json:"sd"`
	Min       float64         `json:"min"`
	Max       float64         `json:"max"`
	Quantiles []float64       `json:"quantiles"`
}

type referenceTail struct {
	Dist string  `json:"dist"` // "normal" and "t" two-sided, "chisq" upper
	X    float64 `json:"x"`
	DF   float64 `json:"df"`
	P    float64 `json:"p"`
}

type referenceFile struct {
	Datasets     []referenceDataset      `json:"datasets"`
	WelchT       []referenceComparison   `json:"welch_t"`
	MannWhitney  []referenceComparison   `json:"mann_whitney"`
	Permutation  []referenceComparison   `json:"permutation"`
	Bootstrap    []referenceComparison   `json:"bootstrap"`
	ZTest        []referenceZTest        `json:"z_test"`
	SRM          []referenceSRM          `json:"srm"`
	PAdjust      []referencePAdjust      `json:"p_adjust"`
	Distribution []referenceDistribution `json:"distribution"`
	Tails        []referenceTail         `json:"tails"`
}

var loadReference = sync.OnceValues(func() (*referenceFile, error) {
	b, err := os.ReadFile("testdata/reference.json")
	if err != nil {
		return nil, err
	}
	var f referenceFile
	return &f, json.Unmarshal(b, &f)
})

func reference(t *testing.T) *referenceFile {
	t.Helper()
	f, err := loadReference()
	if err != nil {
		t.Fatalf("reading reference vectors: %v", err)
	}
	return f
}

// arms returns the control and treatment values of dataset id.
func (f *referenceFile) arms(t *testing.T, id int) (name string, control, treatment []float64) {
	t.Helper()
	d := f.Datasets[id]
	if d.ID != id {
		t.Fatalf("dataset %d stored at index %d", d.ID, id)
	}
	return d.Name, d.Control.expand(), d.Treatment.expand()
}

// assertClose checks got against want to refRelTol relative to the larger
// of |want| and scale.
func assertClose(t *testing.T, what string, got, want, scale float64) {
	t.Helper()
	if math.IsNaN(got) || math.Abs(got-want) > refRelTol*math.Max(math.Abs(want), scale) {
		t.Errorf("%s = %.17g, want %.17g (relative error %.2g)", what, got, want, math.Abs(got-want)/math.Abs(want))
	}
}

func assertP(t *testing.T, what string, got, want float64) {
	t.Helper()
	assertClose(t, what, got, want, pFloor)
}
