// Package sudoku is the Sudoku environment of AT-GRPO's games, 4×4 and 9×9,
// with a tool agent that proposes fills and a plan agent whose fills are
// written into the grid.
//
// Files: sudoku.go (options, puzzles, states, the environment), reference.go
// (PettingLLMs' step reward, reward: reference), agents.go
// (the two roles' presets, parsers, demonstrations and Score), register.go
// (the registration).
//
// Instances (procedural, seeded, disjoint train/test seed streams): a random
// complete grid, then clues removed in a random order while the puzzle
// keeps exactly one solution (the reference's generator does not check
// this; here the built-in solver counts solutions after every removal), down
// to the configured number of blanks or until no clue can go.
//
// An action is a list of fills [[row, col, value], …] (1-based rows and
// columns, as people write them) or the whole grid (n lines of n digits,
// 0 or . for a blank). Reward per step: with reward: reference (the
// default) PettingLLMs' own (reference.go); with reward: troupe this
// reading of it, one formula for both forms:
//
//	base −0.01; a value outside 1..n −1.0 (the action is rejected);
//	a fill that breaks a rule (a clue overwritten, a duplicate in a row,
//	column or box) −0.5, and that fill is not written;
//	otherwise +0.5·Δprogress (cells filled, as a share of the blanks) and
//	+0.02·Δconstraints (rows, columns and boxes complete and valid);
//	solved +2.0, and +0.5 more when solved in the first step.
//
// Success: the grid is complete, valid and keeps every clue (the reference
// forgets the clue check). An action that cannot be parsed scores −2 with
// reward: reference (the reference's agents' own −2), −1.0 with troupe;
// either is the acting agent's alone (StepResult.Fixed: no reward_scale).
package sudoku

import (
	"encoding/json"
	"fmt"
	"strings"

	"troupe/rollout"
	"troupe/rollout/env/internal/split"
)

// Config configures the environment.
type Config struct {
	Seed      uint64 `yaml:"seed"`       // seed of the puzzles (train and test draw disjoint streams)
	Size      int    `yaml:"size"`       // 4 or 9
	Blanks    int    `yaml:"blanks"`     // cells to blank (fewer if uniqueness stops earlier); 0 = 6 for 4×4, 40 for 9×9
	TrainSize int    `yaml:"train_size"` // train instances
	TestSize  int    `yaml:"test_size"`  // test instances
	// Reward is "reference" (PettingLLMs' step reward, reference.go) or
	// "troupe" (Apply below).
	Reward string `yaml:"reward"`
}

// DefaultConfig is the 4×4 game with the reference's reward.
func DefaultConfig() Config {
	return Config{Seed: 1, Size: 4, TrainSize: 1000, TestSize: 100, Reward: RewardReference}
}

// Sizes returns the number of train and test instances.
func (c Config) Sizes() (train, test int) { return c.TrainSize, c.TestSize }

// Validate checks ranges; errors name the key and the fix.
func (c Config) Validate() error {
	switch {
	case c.Size != 4 && c.Size != 9:
		return fmt.Errorf("env.sudoku.size: must be 4 or 9, got %d", c.Size)
	case c.Blanks < 0 || c.Blanks >= c.Size*c.Size:
		return fmt.Errorf("env.sudoku.blanks: must be in [0, %d), got %d", c.Size*c.Size, c.Blanks)
	case c.TrainSize < 1 || c.TestSize < 1:
		return fmt.Errorf("env.sudoku: train_size and test_size must be >= 1, got %d and %d", c.TrainSize, c.TestSize)
	case c.Reward != RewardReference && c.Reward != RewardTroupe:
		return fmt.Errorf("env.sudoku.reward: must be %q (PettingLLMs' step reward) or %q, got %q", RewardReference, RewardTroupe, c.Reward)
	}
	return nil
}

func (c Config) blanks() int {
	if c.Blanks > 0 {
		return c.Blanks
	}
	if c.Size == 4 {
		return 6
	}
	return 40
}

// Rewards, as the reference sets them.
const (
	BaseReward       = -0.01
	OutOfRange       = -1.0
	RuleBroken       = -0.5
	ProgressWeight   = 0.5
	ConstraintWeight = 0.02
	SolvedReward     = 2.0
	EfficiencyBonus  = 0.5
	UnparsedReward   = -1.0
	// RefUnparsedReward is an unreadable action's with reward: reference:
	// PettingLLMs' agents score −2 for an action they cannot extract (and
	// the empty fill list it then steps scores 0).
	RefUnparsedReward = -2.0
)

// Grid is an n×n Sudoku, row-major, 0 = blank.
type Grid struct {
	N     int
	Cells []int
}

func (g Grid) box() int {
	if g.N == 4 {
		return 2
	}
	return 3
}

func (g Grid) at(r, c int) int { return g.Cells[r*g.N+c] }

// allowed reports whether v can go at (r, c) without a duplicate in its
// row, column or box (the cell itself is ignored).
func (g Grid) allowed(r, c, v int) bool {
	b := g.box()
	for i := 0; i < g.N; i++ {
		if (i != c && g.at(r, i) == v) || (i != r && g.at(i, c) == v) {
			return false
		}
	}
	br, bc := r/b*b, c/b*b
	for i := br; i < br+b; i++ {
		for j := bc; j < bc+b; j++ {
			if (i != r || j != c) && g.at(i, j) == v {
				return false
			}
		}
	}
	return true
}

// CountSolutions counts solutions up to limit (backtracking on the first
// blank cell with the fewest candidates).
func (g Grid) CountSolutions(limit int) int {
	cells := append([]int(nil), g.Cells...)
	w := Grid{N: g.N, Cells: cells}
	for i, v := range cells { // a given grid with a duplicate has no solution
		if v != 0 && !w.allowed(i/g.N, i%g.N, v) {
			return 0
		}
	}
	count := 0
	var solve func() bool
	solve = func() bool {
		best, bestN := -1, g.N+1
		for i, v := range w.Cells {
			if v != 0 {
				continue
			}
			n := 0
			for d := 1; d <= g.N; d++ {
				if w.allowed(i/g.N, i%g.N, d) {
					n++
				}
			}
			if n < bestN {
				best, bestN = i, n
			}
		}
		if best < 0 {
			count++
			return count >= limit
		}
		for d := 1; d <= g.N; d++ {
			if w.allowed(best/g.N, best%g.N, d) {
				w.Cells[best] = d
				if solve() {
					w.Cells[best] = 0
					return true
				}
				w.Cells[best] = 0
			}
		}
		return false
	}
	solve()
	return count
}

// NewPuzzle draws the puzzle of a seed: a random complete grid, then clues
// removed while the solution stays unique.
func NewPuzzle(n, blanks int, seed uint64) (puzzle, solution Grid) {
	r := rollout.NewRand(seed)
	full := Grid{N: n, Cells: make([]int, n*n)}
	var fill func(i int) bool
	fill = func(i int) bool {
		if i == n*n {
			return true
		}
		for _, d := range r.Perm(n) {
			if full.allowed(i/n, i%n, d+1) {
				full.Cells[i] = d + 1
				if fill(i + 1) {
					return true
				}
				full.Cells[i] = 0
			}
		}
		return false
	}
	fill(0)
	p := Grid{N: n, Cells: append([]int(nil), full.Cells...)}
	removed := 0
	for _, i := range r.Perm(n * n) {
		if removed == blanks {
			break
		}
		v := p.Cells[i]
		p.Cells[i] = 0
		if p.CountSolutions(2) != 1 {
			p.Cells[i] = v
			continue
		}
		removed++
	}
	return p, full
}

// Text renders the grid, one row per line, '.' for a blank.
func (g Grid) Text() string {
	var b strings.Builder
	for r := 0; r < g.N; r++ {
		for c := 0; c < g.N; c++ {
			if v := g.at(r, c); v == 0 {
				b.WriteByte('.')
			} else {
				b.WriteByte(byte('0' + v))
			}
		}
		if r < g.N-1 {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// ParseGrid reads Text's format (0 or . for a blank).
func ParseGrid(text string) (Grid, error) {
	lines := strings.Fields(text)
	n := len(lines)
	if n != 4 && n != 9 {
		return Grid{}, fmt.Errorf("a grid has 4 or 9 rows, got %d", n)
	}
	g := Grid{N: n}
	for i, l := range lines {
		if len(l) != n {
			return Grid{}, fmt.Errorf("row %d has %d cells, want %d", i+1, len(l), n)
		}
		for _, ch := range []byte(l) {
			switch {
			case ch == '.' || ch == '0':
				g.Cells = append(g.Cells, 0)
			case ch >= '1' && int(ch-'0') <= n:
				g.Cells = append(g.Cells, int(ch-'0'))
			default:
				return Grid{}, fmt.Errorf("row %d: %q is not a digit in 1..%d or a blank", i+1, ch, n)
			}
		}
	}
	return g, nil
}

// Fill is one [row, col, value] with 1-based row and column.
type Fill struct{ Row, Col, Value int }

// ParseAction reads a list of fills or a whole grid.
func ParseAction(action string, n int) ([]Fill, error) {
	action = strings.TrimSpace(action)
	if strings.HasPrefix(action, "[") {
		var raw [][]int
		if err := json.Unmarshal([]byte(action), &raw); err != nil {
			return nil, fmt.Errorf("the fills are not a JSON list of [row, col, value]: %v", err)
		}
		if len(raw) == 0 {
			return nil, fmt.Errorf("the list of fills is empty")
		}
		out := make([]Fill, len(raw))
		for i, f := range raw {
			if len(f) != 3 {
				return nil, fmt.Errorf("fill %d has %d numbers; write [row, col, value]", i+1, len(f))
			}
			if f[0] < 1 || f[0] > n || f[1] < 1 || f[1] > n {
				return nil, fmt.Errorf("fill %d: cell (%d, %d) is off the %d×%d grid (rows and columns count from 1)", i+1, f[0], f[1], n, n)
			}
			out[i] = Fill{f[0], f[1], f[2]}
		}
		return out, nil
	}
	g, err := ParseGrid(action)
	if err != nil {
		return nil, err
	}
	if g.N != n {
		return nil, fmt.Errorf("the grid is %d×%d, the puzzle %d×%d", g.N, g.N, n, n)
	}
	var out []Fill
	for i, v := range g.Cells {
		if v != 0 {
			out = append(out, Fill{i/n + 1, i%n + 1, v})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the grid is blank")
	}
	return out, nil
}

// State is an episode's grid.
type State struct {
	clues    Grid
	grid     Grid
	blanks   int
	steps    int
	max      int
	refSteps int // the reference's step_count (reward: reference): one per fill, one per action
}

func (s *State) Clone() rollout.State {
	c := *s
	c.grid = Grid{N: s.grid.N, Cells: append([]int(nil), s.grid.Cells...)}
	return &c
}

// Done: solved, or out of steps.
func (s *State) Done() bool    { return s.Success() || s.steps >= s.max }
func (s *State) Success() bool { return s.complete() && s.constraints() == 3*s.grid.N }

func (s *State) complete() bool {
	for _, v := range s.grid.Cells {
		if v == 0 {
			return false
		}
	}
	return true
}

// filled counts the cells filled that were blank in the puzzle.
func (s *State) filled() int {
	n := 0
	for i, v := range s.grid.Cells {
		if v != 0 && s.clues.Cells[i] == 0 {
			n++
		}
	}
	return n
}

// constraints counts rows, columns and boxes that are complete and valid.
func (s *State) constraints() int {
	g, n, b := s.grid, s.grid.N, s.grid.box()
	ok := func(cells []int) bool {
		seen := make([]bool, n+1)
		for _, v := range cells {
			if v == 0 || seen[v] {
				return false
			}
			seen[v] = true
		}
		return true
	}
	count := 0
	for i := 0; i < n; i++ {
		var row, col, box []int
		for j := 0; j < n; j++ {
			row = append(row, g.at(i, j))
			col = append(col, g.at(j, i))
			box = append(box, g.at(i/b*b+j/b, i%b*b+j%b))
		}
		for _, u := range [][]int{row, col, box} {
			if ok(u) {
				count++
			}
		}
	}
	return count
}

// Observation shows the current grid.
func (s *State) Observation() string {
	return fmt.Sprintf("Current grid:\n%s\nSteps made: %d", s.grid.Text(), s.steps)
}

// Apply writes the fills and returns the step's reward and a message.
func (s *State) Apply(fills []Fill) (float64, string) {
	s.steps++
	r := BaseReward
	n := s.grid.N
	for _, f := range fills {
		if f.Value < 1 || f.Value > n {
			return r + OutOfRange, fmt.Sprintf("value %d at (%d, %d) is outside 1..%d; nothing was written", f.Value, f.Row, f.Col, n)
		}
	}
	before, cBefore := s.filled(), s.constraints()
	var broken []string
	for _, f := range fills {
		i := (f.Row-1)*n + f.Col - 1
		switch {
		case s.clues.Cells[i] != 0:
			if s.clues.Cells[i] != f.Value {
				broken = append(broken, fmt.Sprintf("(%d, %d) is a clue", f.Row, f.Col))
			}
		case !s.grid.allowed(f.Row-1, f.Col-1, f.Value):
			broken = append(broken, fmt.Sprintf("%d at (%d, %d) repeats in its row, column or box", f.Value, f.Row, f.Col))
		default:
			s.grid.Cells[i] = f.Value
		}
	}
	if len(broken) > 0 {
		r += RuleBroken
	}
	r += ProgressWeight*float64(s.filled()-before)/float64(s.blanks) + ConstraintWeight*float64(s.constraints()-cBefore)
	msg := fmt.Sprintf("%d cells filled of %d", s.filled(), s.blanks)
	if len(broken) > 0 {
		msg += "; not written: " + strings.Join(broken, "; ")
	}
	if s.Success() {
		r += SolvedReward
		if s.steps == 1 {
			r += EfficiencyBonus
		}
		msg += "; solved"
	}
	return r, msg
}

// Env is the Sudoku environment for one split.
type Env struct {
	rollout.TaskSource
	reference bool // reward: reference
}

func (*Env) Name() string { return "sudoku" }

// New builds a split's puzzles.
func New(cfg Config, which string) (*Env, error) {
	tasks, err := split.Draw("sudoku", which, cfg, func(stream, i uint64) rollout.Task {
		p, sol := NewPuzzle(cfg.Size, cfg.blanks(), rollout.DeriveSeed(cfg.Seed, stream, i))
		return rollout.Task{
			ID:       fmt.Sprintf("sudoku%d-%s-%d", cfg.Size, which, i),
			Question: fmt.Sprintf("Puzzle (%d×%d):\n%s", cfg.Size, cfg.Size, p.Text()),
			Answer:   sol.Text(),
			Meta:     map[string]string{"puzzle": p.Text()},
		}
	}, func(t rollout.Task) string { return t.Meta["puzzle"] })
	if err != nil {
		return nil, err
	}
	return &Env{TaskSource: tasks, reference: cfg.Reward != RewardTroupe}, nil
}

// Reset rebuilds a task's puzzle from its Meta; a puzzle without exactly
// one solution is refused.
func (e *Env) Reset(task rollout.Task) (rollout.State, error) {
	p, err := ParseGrid(task.Meta["puzzle"])
	if err != nil {
		return nil, err
	}
	if n := p.CountSolutions(2); n != 1 {
		return nil, fmt.Errorf("the puzzle has %d solutions, want exactly 1", n)
	}
	blanks := 0
	for _, v := range p.Cells {
		if v == 0 {
			blanks++
		}
	}
	if blanks == 0 {
		return nil, fmt.Errorf("the puzzle has no blank cell")
	}
	return &State{clues: p, grid: Grid{N: p.N, Cells: append([]int(nil), p.Cells...)}, blanks: blanks, max: 2 * blanks}, nil
}

// Step applies an agent's fills.
func (e *Env) Step(s rollout.State, agent, action string) rollout.StepResult {
	st := s.(*State)
	if e.reference {
		fills, grid, err := parseReference(action, st.grid.N)
		if err != nil {
			st.steps++
			return rollout.StepResult{Reward: RefUnparsedReward, Fixed: RefUnparsedReward, Message: fmt.Sprintf("%s's action was not understood (%v)", agent, err),
				Metrics: map[string]float64{"unparsed_actions": 1, "cells_filled": 0}}
		}
		before := st.filled()
		st.steps++
		r, msg := st.applyReference(fills, grid)
		return rollout.StepResult{Reward: r, Message: agent + ": " + msg,
			Metrics: map[string]float64{"unparsed_actions": 0, "cells_filled": float64(st.filled() - before)}}
	}
	fills, err := ParseAction(action, st.grid.N)
	if err != nil {
		st.steps++
		return rollout.StepResult{Reward: UnparsedReward, Fixed: UnparsedReward, Message: fmt.Sprintf("%s's action was not understood (%v)", agent, err),
			Metrics: map[string]float64{"unparsed_actions": 1, "cells_filled": 0}}
	}
	before := st.filled()
	r, msg := st.Apply(fills)
	return rollout.StepResult{Reward: r, Message: agent + ": " + msg,
		Metrics: map[string]float64{"unparsed_actions": 0, "cells_filled": float64(st.filled() - before)}}
}
