package sudoku

// reference.go — the step reward as PettingLLMs computes it at 244467e
// (pettingllms/multi_agent_env/stateful/env_state.py, SudukuEnvState.step),
// env.sudoku.reward: reference. sudoku.go's Apply is troupe's own reading
// (reward: troupe).
//
// A whole grid (every cell 1..n; a blank or a value outside 1..n scores
// −1.0 and changes nothing) replaces the grid, clues included:
//
//	−0.01; solved (complete, no duplicate) +2.0, +0.5 more when the
//	earlier steps number at most the puzzle's blanks; otherwise
//	+0.5·Δprogress + 0.02·Δconstraints, −0.5 when a duplicate remains.
//
// A list of fills is played fill by fill; each:
//
//	valid (a blank cell, no duplicate): −0.01, +0.2 when it was the cell's
//	only possible value (+0.1 when one of two), +0.5·Δprogress +
//	0.02·Δconstraints + 0.1·progress, +0.05 while blanks remain (the
//	reference compares the filled cell's remaining candidates, always 0,
//	with the blanks' average); written;
//	invalid (a clue or filled cell, a duplicate, off the grid or out of
//	range): −0.3, not written;
//
// then solved +2.0, +0.5 more when the fills so far (each counts a step)
// number at most the blanks. progress = non-blank cells / all cells;
// constraints = Σ over rows, columns and boxes without a duplicate of
// (their non-blank cells − 1). Every action then counts one step more.
//
// A JSON grid ([[1,2,3,4], …]) is a whole grid as the reference reads it;
// troupe's text grid (n lines of n digits) too.
//
// What stays troupe's in this mode: fills are 1-based (the reference's are
// 0-based; the prompts say so), and Success (the episode's, and the
// evaluation's) still asks that the clues be kept.

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Values of Config.Reward.
const (
	RewardReference = "reference" // PettingLLMs' step reward (this file)
	RewardTroupe    = "troupe"    // sudoku.go's Apply
)

// Rewards of the reference's step.
const (
	refGridInvalid  = -1.0
	refBase         = -0.01
	refFillInvalid  = -0.3
	refUnique       = 0.2
	refFewChoices   = 0.1
	refProgressNow  = 0.1
	refStrategy     = 0.05
	refNoDuplicates = -0.5
)

// refProgress is the share of non-blank cells, clues included.
func (g Grid) refProgress() float64 {
	n := 0
	for _, v := range g.Cells {
		if v != 0 {
			n++
		}
	}
	return float64(n) / float64(len(g.Cells))
}

// refConstraints sums, over rows, columns and boxes without a duplicate,
// their non-blank cells less one.
func (g Grid) refConstraints() int {
	n, b, total := g.N, g.box(), 0
	unit := func(vals []int) {
		seen := map[int]bool{}
		k := 0
		for _, v := range vals {
			if v == 0 {
				continue
			}
			if seen[v] {
				return
			}
			seen[v] = true
			k++
		}
		if k > 1 {
			total += k - 1
		}
	}
	for i := 0; i < n; i++ {
		var row, col []int
		for j := 0; j < n; j++ {
			row, col = append(row, g.at(i, j)), append(col, g.at(j, i))
		}
		unit(row)
		unit(col)
	}
	for br := 0; br < n; br += b {
		for bc := 0; bc < n; bc += b {
			var box []int
			for r := br; r < br+b; r++ {
				for c := bc; c < bc+b; c++ {
					box = append(box, g.at(r, c))
				}
			}
			unit(box)
		}
	}
	return total
}

// refPlaceable is the reference's _is_valid_placement (0-based).
func (g Grid) refPlaceable(r, c, v int) bool {
	if r < 0 || r >= g.N || c < 0 || c >= g.N || v < 1 || v > g.N || g.at(r, c) != 0 {
		return false
	}
	return g.allowed(r, c, v)
}

// refCandidates counts the values a blank cell can take.
func (g Grid) refCandidates(r, c int) int {
	if g.at(r, c) != 0 {
		return 0
	}
	k := 0
	for v := 1; v <= g.N; v++ {
		if g.allowed(r, c, v) {
			k++
		}
	}
	return k
}

// refSolved: complete and without a duplicate (the clues are not checked).
func (g Grid) refSolved() bool {
	for i, v := range g.Cells {
		if v == 0 || !g.allowed(i/g.N, i%g.N, v) {
			return false
		}
	}
	return true
}

// applyReference plays one action with the reference's rewards: grid is
// the whole grid when the action was one (Cells in row order, 0 for a
// blank), else fills is the list. It returns the reward and a message.
func (s *State) applyReference(fills []Fill, grid *Grid) (float64, string) {
	g := &s.grid
	if grid != nil {
		for _, v := range grid.Cells {
			if v < 1 || v > g.N {
				return refGridInvalid, fmt.Sprintf("the grid holds a blank or a value outside 1..%d; nothing was written", g.N)
			}
		}
		p0, c0 := g.refProgress(), g.refConstraints()
		copy(g.Cells, grid.Cells)
		r := refBase
		if g.refSolved() {
			r += SolvedReward
			if s.refSteps <= s.blanks {
				r += EfficiencyBonus
			}
		} else {
			r += ProgressWeight*(g.refProgress()-p0) + ConstraintWeight*float64(g.refConstraints()-c0)
			if !g.refNoDuplicate() {
				r += refNoDuplicates
			}
		}
		s.refSteps++
		return r, fmt.Sprintf("the grid was written; %d cells filled of %d", s.filled(), s.blanks)
	}
	total, bad := 0.0, 0
	for _, f := range fills {
		r0, c0, v := f.Row-1, f.Col-1, f.Value
		step := refBase
		if g.refPlaceable(r0, c0, v) {
			switch k := g.refCandidates(r0, c0); {
			case k == 1:
				step += refUnique
			case k <= 2:
				step += refFewChoices
			}
			p0, k0 := g.refProgress(), g.refConstraints()
			g.Cells[r0*g.N+c0] = v
			p := g.refProgress()
			step += ProgressWeight*(p-p0) + ConstraintWeight*float64(g.refConstraints()-k0) + refProgressNow*p
			if g.refProgress() < 1 {
				step += refStrategy
			}
		} else {
			step = refFillInvalid
			bad++
		}
		total += step
		s.refSteps++
	}
	if g.refSolved() {
		total += SolvedReward
		if s.refSteps <= s.blanks {
			total += EfficiencyBonus
		}
	}
	s.refSteps++
	msg := fmt.Sprintf("%d cells filled of %d", s.filled(), s.blanks)
	if bad > 0 {
		msg += fmt.Sprintf("; %d fills were not written (a clue or filled cell, or a repeat in a row, column or box)", bad)
	}
	return total, msg
}

// refNoDuplicate is the reference's _is_grid_valid: no duplicate among
// the non-blank cells of any row, column or box.
func (g Grid) refNoDuplicate() bool {
	for i, v := range g.Cells {
		if v != 0 && !g.allowed(i/g.N, i%g.N, v) {
			return false
		}
	}
	return true
}

// parseReference reads an action as the reference's step tells its two
// forms apart: a whole grid (a JSON list of n lists of n numbers, or
// troupe's text grid) or a JSON list of [row, col, value] fills (1-based
// here; any cell, the step judges it).
func parseReference(action string, n int) ([]Fill, *Grid, error) {
	action = strings.TrimSpace(action)
	if !strings.HasPrefix(action, "[") {
		g, err := ParseGrid(action)
		if err != nil {
			return nil, nil, err
		}
		if g.N != n {
			return nil, nil, fmt.Errorf("the grid is %d×%d, the puzzle %d×%d", g.N, g.N, n, n)
		}
		return nil, &g, nil
	}
	var raw [][]int
	if err := json.Unmarshal([]byte(action), &raw); err != nil {
		return nil, nil, fmt.Errorf("the action is not a JSON list of [row, col, value] fills or of grid rows: %v", err)
	}
	if len(raw) == n && n != 3 {
		rows := true
		for _, r := range raw {
			rows = rows && len(r) == n
		}
		if rows {
			g := Grid{N: n}
			for _, r := range raw {
				g.Cells = append(g.Cells, r...)
			}
			return nil, &g, nil
		}
	}
	if len(raw) == 0 {
		return nil, nil, fmt.Errorf("the list of fills is empty")
	}
	fills := make([]Fill, len(raw))
	for i, f := range raw {
		if len(f) != 3 {
			return nil, nil, fmt.Errorf("fill %d has %d numbers; write [row, col, value]", i+1, len(f))
		}
		fills[i] = Fill{f[0], f[1], f[2]}
	}
	return fills, nil, nil
}
