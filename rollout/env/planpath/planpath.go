// Package planpath is the Plan-Path environment of AT-GRPO's games: move
// from a start cell to a goal cell on a grid with walls, with a tool agent
// that proposes a route and a plan agent whose route is executed.
//
// Files: planpath.go (options, grids, states, the environment), agents.go
// (the two roles' presets, parsers, demonstrations and Score), register.go
// (the registration).
//
// Instances (procedural, seeded): an R×C grid (default 6×6; the paper uses
// 10×10) whose cells are walls with probability wall_prob (0.22); start and
// goal are distinct free cells joined by a 4-neighbour path; a grid that
// fails is redrawn, up to 2000 times, then the empty grid from corner to
// corner is used. Train and test instances come from disjoint seed streams.
// BFS gives every instance's shortest path (the built-in solver).
//
// Reward per move (algorithms from the reference, restated):
//
//	valid move  −0.01       invalid (wall or outside; the agent stays)  −0.10
//	shaping     λ·(γ·φ(next) − φ(cur)),  φ = −Manhattan distance to the goal, γ 0.99, λ 1
//	reaching the goal +1.0, and +0.5 more if the moves so far equal the BFS length
//
// An action is a list of moves (U, D, L, R; words up/down/left/right too),
// applied in order until the goal is reached. An action that cannot be
// parsed scores −2 and moves nothing. Success = at the goal.
//
// Departures: the observation shows the current position (the reference
// kept showing the original start after moves).
package planpath

import (
	"fmt"
	"strconv"
	"strings"

	"troupe/rollout"
	"troupe/rollout/env/internal/actions"
	"troupe/rollout/env/internal/split"
)

// Config configures the environment.
type Config struct {
	Seed      uint64  `yaml:"seed"`       // seed of the grids (train and test draw disjoint streams)
	Rows      int     `yaml:"rows"`       // grid rows
	Cols      int     `yaml:"cols"`       // grid columns
	WallProb  float64 `yaml:"wall_prob"`  // probability that a cell is a wall
	TrainSize int     `yaml:"train_size"` // train instances
	TestSize  int     `yaml:"test_size"`  // test instances
	MaxMoves  int     `yaml:"max_moves"`  // moves per episode before it ends (0 = 4 × rows × cols)
}

// DefaultConfig is a small grid for CPU runs.
func DefaultConfig() Config {
	return Config{Seed: 1, Rows: 6, Cols: 6, WallProb: 0.22, TrainSize: 1000, TestSize: 100}
}

// Sizes returns the number of train and test instances.
func (c Config) Sizes() (train, test int) { return c.TrainSize, c.TestSize }

// Validate checks ranges; errors name the key and the fix.
func (c Config) Validate() error {
	switch {
	case c.Rows < 2 || c.Cols < 2 || c.Rows > 64 || c.Cols > 64:
		return fmt.Errorf("env.plan_path: rows and cols must be in [2, 64], got %d×%d", c.Rows, c.Cols)
	case !(c.WallProb >= 0 && c.WallProb < 0.9):
		return fmt.Errorf("env.plan_path.wall_prob: must be in [0, 0.9), got %g", c.WallProb)
	case c.TrainSize < 1 || c.TestSize < 1:
		return fmt.Errorf("env.plan_path: train_size and test_size must be >= 1, got %d and %d", c.TrainSize, c.TestSize)
	case c.MaxMoves < 0:
		return fmt.Errorf("env.plan_path.max_moves: must be >= 0, got %d", c.MaxMoves)
	}
	return nil
}

// Rewards, as the reference sets them.
const (
	MoveReward      = -0.01
	InvalidReward   = -0.10
	GoalReward      = 1.0
	OptimalBonus    = 0.5
	UnparsedReward  = -2.0
	ShapingGamma    = 0.99
	ShapingStrength = 1.0
)

// Cell is a (row, col) position, 0-based.
type Cell struct{ R, C int }

func (p Cell) String() string { return fmt.Sprintf("(%d,%d)", p.R, p.C) }

// Grid is one instance.
type Grid struct {
	Rows, Cols  int
	Wall        []bool // row-major
	Start, Goal Cell
}

func (g *Grid) free(p Cell) bool {
	return p.R >= 0 && p.C >= 0 && p.R < g.Rows && p.C < g.Cols && !g.Wall[p.R*g.Cols+p.C]
}

var moves = map[byte]Cell{'U': {-1, 0}, 'D': {1, 0}, 'L': {0, -1}, 'R': {0, 1}}

// ShortestPath returns a shortest move string from a to b (BFS, moves tried
// in the order U, D, L, R), and false when b cannot be reached.
func (g *Grid) ShortestPath(a, b Cell) (string, bool) {
	prev := make([]int, g.Rows*g.Cols)
	via := make([]byte, g.Rows*g.Cols)
	for i := range prev {
		prev[i] = -2
	}
	idx := func(p Cell) int { return p.R*g.Cols + p.C }
	prev[idx(a)] = -1
	queue := []Cell{a}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if p == b {
			var path []byte
			for i := idx(b); prev[i] != -1; i = prev[i] {
				path = append(path, via[i])
			}
			for l, r := 0, len(path)-1; l < r; l, r = l+1, r-1 {
				path[l], path[r] = path[r], path[l]
			}
			return string(path), true
		}
		for _, m := range []byte("UDLR") {
			d := moves[m]
			q := Cell{p.R + d.R, p.C + d.C}
			if g.free(q) && prev[idx(q)] == -2 {
				prev[idx(q)], via[idx(q)] = idx(p), m
				queue = append(queue, q)
			}
		}
	}
	return "", false
}

// NewGrid draws the instance of a seed.
func NewGrid(rows, cols int, wallProb float64, seed uint64) *Grid {
	r := rollout.NewRand(seed)
	for try := 0; try < 2000; try++ {
		g := &Grid{Rows: rows, Cols: cols, Wall: make([]bool, rows*cols)}
		for i := range g.Wall {
			g.Wall[i] = r.Float64() < wallProb
		}
		var free []Cell
		for i, w := range g.Wall {
			if !w {
				free = append(free, Cell{i / cols, i % cols})
			}
		}
		if len(free) < 2 {
			continue
		}
		a := free[r.IntN(len(free))]
		b := free[r.IntN(len(free))]
		if a == b {
			continue
		}
		g.Start, g.Goal = a, b
		if _, ok := g.ShortestPath(a, b); ok {
			return g
		}
	}
	return &Grid{Rows: rows, Cols: cols, Wall: make([]bool, rows*cols), Goal: Cell{rows - 1, cols - 1}}
}

// Text renders the grid: '#' wall, '.' free, one row per line.
func (g *Grid) Text() string {
	var b strings.Builder
	for r := 0; r < g.Rows; r++ {
		for c := 0; c < g.Cols; c++ {
			if g.Wall[r*g.Cols+c] {
				b.WriteByte('#')
			} else {
				b.WriteByte('.')
			}
		}
		if r < g.Rows-1 {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// ParseGrid reads Text's format back, with a start and goal.
func ParseGrid(text string, start, goal Cell) (*Grid, error) {
	lines := strings.Split(text, "\n")
	g := &Grid{Rows: len(lines), Cols: len(lines[0]), Start: start, Goal: goal}
	for i, l := range lines {
		if len(l) != g.Cols {
			return nil, fmt.Errorf("grid row %d has %d cells, row 0 has %d", i, len(l), g.Cols)
		}
		for _, ch := range []byte(l) {
			if ch != '#' && ch != '.' {
				return nil, fmt.Errorf("grid row %d: cell %q is neither '#' nor '.'", i, ch)
			}
			g.Wall = append(g.Wall, ch == '#')
		}
	}
	if !g.free(start) || !g.free(goal) || start == goal {
		return nil, fmt.Errorf("start %v and goal %v must be distinct free cells", start, goal)
	}
	return g, nil
}

// ParseMoves reads an action's move list (see actions.Moves).
func ParseMoves(action string) (string, error) { return actions.Moves(action) }

// State is an episode's position on its grid.
type State struct {
	grid    *Grid
	Pos     Cell
	Moves   int // moves made (valid or not)
	optimal int // BFS length from start to goal
	max     int // moves allowed
}

func (s *State) Clone() rollout.State { c := *s; return &c }
func (s *State) Done() bool           { return s.Pos == s.grid.Goal || s.Moves >= s.max }
func (s *State) Success() bool        { return s.Pos == s.grid.Goal }

// Observation shows the current position and the goal (the grid itself is
// in the task text).
func (s *State) Observation() string {
	return fmt.Sprintf("Current: %v\nGoal: %v\nMoves made: %d", s.Pos, s.grid.Goal, s.Moves)
}

func manhattan(a, b Cell) int { return abs(a.R-b.R) + abs(a.C-b.C) }

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// Move applies one move and returns its reward and whether it was valid.
func (s *State) Move(m byte) (float64, bool) {
	d := moves[m]
	next := Cell{s.Pos.R + d.R, s.Pos.C + d.C}
	valid := s.grid.free(next)
	if !valid {
		next = s.Pos
	}
	r := InvalidReward
	if valid {
		r = MoveReward
	}
	phi := func(p Cell) float64 { return -float64(manhattan(p, s.grid.Goal)) }
	r += ShapingStrength * (ShapingGamma*phi(next) - phi(s.Pos))
	s.Pos = next
	s.Moves++
	if s.Pos == s.grid.Goal {
		r += GoalReward
		if s.Moves == s.optimal {
			r += OptimalBonus
		}
	}
	return r, valid
}

// Apply runs a move string until the goal or the move limit; it returns the
// summed reward and the number of invalid moves.
func (s *State) Apply(path string) (reward float64, invalid int) {
	for i := 0; i < len(path) && !s.Done(); i++ {
		r, ok := s.Move(path[i])
		reward += r
		if !ok {
			invalid++
		}
	}
	return reward, invalid
}

// Env is the plan-path environment for one split.
type Env struct {
	rollout.TaskSource
	cfg Config
}

func (*Env) Name() string { return "plan-path" }

// New builds a split's instances (tasks hold the grid, start and goal).
func New(cfg Config, which string) (*Env, error) {
	tasks, err := split.Draw("plan-path", which, cfg, func(stream, i uint64) rollout.Task {
		g := NewGrid(cfg.Rows, cfg.Cols, cfg.WallProb, rollout.DeriveSeed(cfg.Seed, stream, i))
		path, _ := g.ShortestPath(g.Start, g.Goal)
		return rollout.Task{
			ID:       fmt.Sprintf("plan-path-%s-%d", which, i),
			Question: fmt.Sprintf("Grid:\n%s\nStart: %v\nGoal: %v", g.Text(), g.Start, g.Goal),
			Answer:   path,
			Meta: map[string]string{"grid": g.Text(), "start": cellText(g.Start), "goal": cellText(g.Goal),
				"optimal": strconv.Itoa(len(path))},
		}
	}, func(t rollout.Task) string { return t.Question })
	if err != nil {
		return nil, err
	}
	return &Env{TaskSource: tasks, cfg: cfg}, nil
}

func cellText(p Cell) string { return fmt.Sprintf("%d,%d", p.R, p.C) }

func parseCell(s string) (Cell, error) {
	var p Cell
	if _, err := fmt.Sscanf(s, "%d,%d", &p.R, &p.C); err != nil {
		return p, fmt.Errorf("cell %q: want row,col", s)
	}
	return p, nil
}

// Reset rebuilds a task's grid from its Meta.
func (e *Env) Reset(task rollout.Task) (rollout.State, error) {
	start, err := parseCell(task.Meta["start"])
	if err != nil {
		return nil, err
	}
	goal, err := parseCell(task.Meta["goal"])
	if err != nil {
		return nil, err
	}
	g, err := ParseGrid(task.Meta["grid"], start, goal)
	if err != nil {
		return nil, err
	}
	path, ok := g.ShortestPath(start, goal)
	if !ok {
		return nil, fmt.Errorf("the goal cannot be reached from the start")
	}
	max := e.cfg.MaxMoves
	if max == 0 {
		max = 4 * g.Rows * g.Cols
	}
	return &State{grid: g, Pos: start, optimal: len(path), max: max}, nil
}

// Step applies an agent's move list.
func (e *Env) Step(s rollout.State, agent, action string) rollout.StepResult {
	st := s.(*State)
	path, err := ParseMoves(action)
	if err != nil {
		return rollout.StepResult{Reward: UnparsedReward, Fixed: UnparsedReward, Message: fmt.Sprintf("%s's action was not understood (%v); position stays %v", agent, err, st.Pos),
			Metrics: map[string]float64{"moves": 0, "invalid_moves": 0, "unparsed_actions": 1}}
	}
	r, invalid := st.Apply(path)
	msg := fmt.Sprintf("%s moved %s: now at %v", agent, path, st.Pos)
	if invalid > 0 {
		msg += fmt.Sprintf(" (%d moves hit a wall or the edge)", invalid)
	}
	if st.Success() {
		msg += "; the goal is reached"
	}
	return rollout.StepResult{Reward: r, Message: msg, Metrics: map[string]float64{"moves": float64(len(path)), "invalid_moves": float64(invalid), "unparsed_actions": 0}}
}
