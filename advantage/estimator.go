package advantage

// estimator.go — the entry point: pick an estimator by its config name, give
// it rows, get one advantage per row plus per-group diagnostics.
//
// What this file is not: any estimator's arithmetic (one file each) or the
// metrics (diagnostics.go).

import (
	"fmt"
	"strings"

	"troupe/internal/suggest"
)

// Estimator turns rows into advantages.
type Estimator interface {
	// Name is the estimator's config name, e.g. "drmas".
	Name() string
	// Compute returns one advantage per row, in the rows' order. It never
	// returns a NaN or infinite advantage: malformed input is an error.
	Compute(rows []Row) (Result, error)
}

// Result is what an estimator returns for one training step.
type Result struct {
	// Advantages holds one advantage per input row.
	Advantages []float64
	// Train is false for rows the update should leave out: rows of groups the
	// group filter dropped (their advantage is 0), and in MAGRPO cross mode
	// every row of a completion but the one with the lowest Joint id (they all
	// carry the same completion and the same advantage).
	Train []bool
	// Groups lists the groups that were normalised, sorted by their key.
	Groups []Group
	// Diagnostics summarises the step for the metrics log.
	Diagnostics Diagnostics
}

// Group describes one group of samples that were compared with each other.
type Group struct {
	// Label names the group by its key, e.g. "prompt=3 agent=solver".
	Label string
	// Rows are the indices of the input rows in the group.
	Rows []int
	// Samples is the number of samples the group normalised: trajectories
	// (grpo, rloo), rows (grpo-step, drmas, atgrpo) or completions (magrpo).
	Samples int
	// Mean and Std are the statistics of the samples' scores: Std is sample or
	// population as configured, 0 for a singleton; for magrpo they describe
	// the completions' returns, with the population std.
	Mean, Std float64
	// Singleton: one sample. ZeroVariance: two or more samples, all equal.
	Singleton, ZeroVariance bool
	// Dropped: removed from training by the group filter (for at least one
	// of the models whose rows it holds).
	Dropped bool
	// Best is, for atgrpo, the row of the candidate the sampler continues from
	// (highest score, ties to the lowest Candidate); −1 for other estimators.
	Best int
}

// Config names of the estimators.
const (
	nameGRPO     = "grpo"
	nameGRPOStep = "grpo-step"
	nameDrMAS    = "drmas"
	nameATGRPO   = "atgrpo"
	nameMAGRPO   = "magrpo"
	nameRLOO     = "rloo"
)

// Names returns the config names of all estimators.
func Names() []string {
	return []string{nameGRPO, nameGRPOStep, nameDrMAS, nameATGRPO, nameMAGRPO, nameRLOO}
}

// New returns the estimator with the given config name, after validating the
// options for it; with opt.Filter on, its results pass through Filter.
func New(name string, opt Options) (Estimator, error) {
	var est Estimator
	switch name {
	case nameGRPO:
		est = GRPO{opt}
	case nameGRPOStep:
		est = GRPOStep{opt}
	case nameDrMAS:
		est = DrMAS{opt}
	case nameATGRPO:
		est = ATGRPO{opt}
	case nameMAGRPO:
		est = MAGRPO{opt}
	case nameRLOO:
		est = RLOO{opt}
	default:
		return nil, fmt.Errorf("advantage.estimator: unknown estimator %q%s; valid: %s", name, suggest.DidYouMean(name, Names()), strings.Join(Names(), ", "))
	}
	if err := opt.validateFor(name); err != nil {
		return nil, err
	}
	if opt.Filter.On() {
		return filtered{est, opt}, nil
	}
	return est, nil
}

// Metrics flattens the step's diagnostics into metric keys (see
// Diagnostics.Metrics).
func (r Result) Metrics() map[string]float64 { return r.Diagnostics.Metrics() }

// prepare is the start of every Compute: options valid, rows present, scores
// finite.
func prepare(name string, rows []Row, opt Options) ([]float64, error) {
	if err := opt.validateFor(name); err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("advantage: %s: no rows to score; the rollout produced no samples this step", name)
	}
	return rowScores(rows, opt)
}
