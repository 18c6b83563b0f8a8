package results

import (
	"time"

	"gorm.io/datatypes"
)

// Row is one stored result: one metric, one treatment arm against
// control, in one run. Its JSON (all fields) is how a row is staged; the
// API serves its own view of it.
type Row struct {
	ExperimentID string `gorm:"primaryKey" json:"experiment_id"`
	ComputedFor  string `gorm:"primaryKey" json:"computed_for"`
	Metric       string `gorm:"primaryKey" json:"metric"`
	Variant      string `gorm:"primaryKey" json:"variant"`
	OrgID        string `json:"org_id"`

	ControlVariant string `json:"control_variant"`
	MetricVersion  int    `json:"metric_version"`
	Category       string `json:"category"`
	Kind           string `json:"kind"`
	Origin         string `json:"origin"`

	Test               string   `json:"test"`
	Statistic          float64  `json:"statistic"`
	PValue             float64  `json:"p_value"`
	PValueFDR          float64  `gorm:"column:p_value_fdr" json:"p_value_fdr"`
	Effect             float64  `json:"effect"`
	CILow              float64  `gorm:"column:ci_low" json:"ci_low"`
	CIHigh             float64  `gorm:"column:ci_high" json:"ci_high"`
	RelLift            *float64 `json:"rel_lift"`
	RelCILow           *float64 `gorm:"column:rel_ci_low" json:"rel_ci_low"`
	RelCIHigh          *float64 `gorm:"column:rel_ci_high" json:"rel_ci_high"`
	RelUndefinedReason string   `json:"rel_undefined_reason,omitempty"`
	NControl           int64    `json:"n_control"`
	NTreatment         int64    `json:"n_treatment"`

	SRMP               float64 `gorm:"column:srm_p" json:"srm_p"`
	PermutationsUsed   int     `json:"permutations_used"`
	SampleCapUsed      bool    `json:"sample_cap_used"`
	WindowDays         int     `json:"window_days"`
	RetentionTruncated bool    `json:"retention_truncated"`
	Preliminary        bool    `json:"preliminary"`
	// Undefined says why no test could be computed; the numbers are then 0.
	Undefined string `json:"undefined,omitempty"`

	Distribution datatypes.JSON `json:"distribution"`
	ComputedAt   time.Time      `json:"computed_at"`

	// Sequential says that PValue, CILow, CIHigh and the relative lift are
	// the always-valid numbers; otherwise they are fixed-horizon ones.
	Sequential bool `json:"sequential"`
	// Analysis is the rest of what issue 12 adds to a row (RowAnalysis).
	Analysis datatypes.JSON `json:"analysis"`
}

// RowAnalysis is what the analysis column holds, and what the API shows
// flattened into each metric row (docs/results.md).
type RowAnalysis struct {
	// Inference is the experiment's mode; a row of a test without an
	// always-valid form is fixed-horizon whatever the mode (Sequential false).
	Inference string `json:"inference"`
	// OtherMode holds the numbers of the mode that is not the headline.
	OtherMode *ModeNumbers `json:"other_mode,omitempty"`

	CUPED             bool     `json:"cuped"`
	Theta             *float64 `json:"theta"`
	VarianceReduction *float64 `json:"variance_reduction"`
	Quantile          *float64 `json:"quantile,omitempty"`

	// CrossoverUsers counts, per arm (by first exposure), the users exposed
	// to more than one variant; they are left out of every metric.
	CrossoverUsers map[string]int64 `json:"crossover_users"`
	// CrossoverHealth is "fail" when they exceed 1 % of an arm, else "pass".
	CrossoverHealth string `json:"crossover_health"`

	// Score metrics only (docs/quality.md, "Score metrics"): per arm, the
	// users with model calls but no scored call (left out of the metric,
	// not counted as 0) and the share of the arm's calls that carry a
	// score (an arm without calls has no entry); OrphanScores, the run's
	// scores of the metric whose call never arrived.
	UnscoredUsers map[string]int64   `json:"unscored_users,omitempty"`
	ScoreCoverage map[string]float64 `json:"score_coverage,omitempty"`
	OrphanScores  *int64             `json:"orphan_scores,omitempty"`

	// StratifiedPhases is the number of phases the effect was estimated
	// over, phase by phase (stats.CompareStratified), when the allocation
	// changed during the window; absent when users were compared pooled.
	StratifiedPhases int `json:"stratified_phases,omitempty"`

	Warnings       []string            `json:"warnings,omitempty"`
	NonInferiority *NonInferiorityView `json:"non_inferiority,omitempty"`
}

// ModeNumbers are a row's interval and p-value under one inference mode.
type ModeNumbers struct {
	Mode      string   `json:"mode"`
	PValue    float64  `json:"p_value"`
	CILow     float64  `json:"ci_low"`
	CIHigh    float64  `json:"ci_high"`
	RelCILow  *float64 `json:"rel_ci_low"`
	RelCIHigh *float64 `json:"rel_ci_high"`
}

// NonInferiorityView is the non-inferiority test of a row.
type NonInferiorityView struct {
	Margin       float64 `json:"margin"`
	Type         string  `json:"type"`
	BadDirection string  `json:"bad_direction"`
	PValue       float64 `json:"p_value"`
	Decision     string  `json:"decision"`
}

// TableName is the results table of migration 0006.
func (Row) TableName() string { return "results" }

// ArmDistribution is the per-arm distribution of a metric's per-user
// values (stats.Distribution in the API's casing).
type ArmDistribution struct {
	N         int     `json:"n"`
	Mean      float64 `json:"mean"`
	SD        float64 `json:"sd"`
	Min       float64 `json:"min"`
	Max       float64 `json:"max"`
	P5        float64 `json:"p5"`
	P25       float64 `json:"p25"`
	P50       float64 `json:"p50"`
	P75       float64 `json:"p75"`
	P95       float64 `json:"p95"`
	Histogram []int   `json:"histogram"`
}

// Distribution is what a row's distribution column holds: the control and
// treatment arms on shared histogram edges.
type Distribution struct {
	Edges []float64                  `json:"edges"`
	Arms  map[string]ArmDistribution `json:"arms"`
}
