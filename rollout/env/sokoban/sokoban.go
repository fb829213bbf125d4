// Package sokoban is the Sokoban environment of AT-GRPO's games: push the
// box onto the goal, with a tool agent that proposes moves (scored on a
// copy) and a plan agent whose moves are executed.
//
// Files: sokoban.go (options, rooms, the solver, states, the environment),
// agents.go (the two roles' presets, parsers, demonstrations and Score),
// register.go (the registration).
//
// Rooms (procedural, seeded, disjoint train/test seed streams), generated
// by reverse play as the reference does: a room carved by a random walk of
// small masks inside an outer wall; the box placed on the goal; the player
// then walks backwards for up to 200 moves, pulling the box when it is
// behind them; the state with the box farthest from the goal (at least 2
// cells) is the puzzle. Pulls reversed are pushes, so every room is
// solvable; the built-in solver (BFS over player and box positions) proves
// it and gives the shortest solution.
//
// Size: the reference's generator says "fixed 6x6" but sizes the room by
// env.map_size, 16 when unset, as in every training script at 244467e.
//
// Text: '#' wall, ' ' floor, '.' goal, '$' box, '@' player, '*' box on the
// goal, '+' player on the goal.
//
// Reward per move, as the reference sets it: valid −0.01, invalid (into a
// wall, or pushing the box into a wall) −0.05; the box onto the goal +1.0,
// off it −0.5; shaping 0.1·(0.99·φ' − φ), φ = −(box's distance to the goal);
// solved +10; 200 moves without solving −5. With deadlock_end (off by
// default, as in the reference) a box pushed into a corner that is not the
// goal, which can never move again, ends the episode there with −5 instead
// of leaving it to wander to the move limit. An action that cannot be
// parsed scores −2, the acting agent's own (StepResult.Fixed), as the
// reference's agents set it.
package sokoban

import (
	"fmt"
	"strings"

	"troupe/rollout"
	"troupe/rollout/env/internal/actions"
	"troupe/rollout/env/internal/split"
)

// Config configures the environment.
type Config struct {
	Seed      uint64 `yaml:"seed"`       // seed of the rooms (train and test draw disjoint streams)
	Size      int    `yaml:"size"`       // room side, outer wall included (the reference's training runs: 16; its evaluate.sh: 6)
	TrainSize int    `yaml:"train_size"` // train instances
	TestSize  int    `yaml:"test_size"`  // test instances
	MaxMoves  int    `yaml:"max_moves"`  // moves before the timeout penalty (the reference: 200)
	// DeadlockEnd ends an episode whose box is stuck in a corner, with the
	// timeout's −5 (troupe's; the reference plays on to the move limit).
	DeadlockEnd bool `yaml:"deadlock_end"`
}

// DefaultConfig is a 6×6 room with one box: the size the reference's
// comment names and its evaluate.sh sets. Its training runs never set
// env.map_size and so drew 16×16 rooms (env_state.py's default), which
// recipe: atgrpo-pettingllms sets.
func DefaultConfig() Config {
	return Config{Seed: 1, Size: 6, TrainSize: 1000, TestSize: 100, MaxMoves: 200}
}

// Sizes returns the number of train and test instances.
func (c Config) Sizes() (train, test int) { return c.TrainSize, c.TestSize }

// Validate checks ranges; errors name the key and the fix.
func (c Config) Validate() error {
	switch {
	case c.Size < 5 || c.Size > 16:
		return fmt.Errorf("env.sokoban.size: must be in [5, 16], got %d", c.Size)
	case c.TrainSize < 1 || c.TestSize < 1:
		return fmt.Errorf("env.sokoban: train_size and test_size must be >= 1, got %d and %d", c.TrainSize, c.TestSize)
	case c.MaxMoves < 1:
		return fmt.Errorf("env.sokoban.max_moves: must be >= 1, got %d", c.MaxMoves)
	}
	return nil
}

// Rewards, as the reference sets them.
const (
	MoveReward     = -0.01
	InvalidReward  = -0.05
	OnGoalReward   = 1.0
	OffGoalReward  = -0.5
	ShapingScale   = 0.1
	ShapingGamma   = 0.99
	WinReward      = 10.0
	TimeoutReward  = -5.0
	DeadlockReward = -5.0
	UnparsedReward = -2.0
)

// Cell is a (row, col) position.
type Cell struct{ R, C int }

var dirs = map[byte]Cell{'U': {-1, 0}, 'D': {1, 0}, 'L': {0, -1}, 'R': {0, 1}}

func (p Cell) add(d Cell) Cell { return Cell{p.R + d.R, p.C + d.C} }

// Room is a level: walls, the goal, the box and the player.
type Room struct {
	N      int
	Wall   []bool
	Goal   Cell
	Box    Cell
	Player Cell
}

func (r *Room) wall(p Cell) bool {
	return p.R < 0 || p.C < 0 || p.R >= r.N || p.C >= r.N || r.Wall[p.R*r.N+p.C]
}

func dist(a, b Cell) int {
	d := a.R - b.R
	if d < 0 {
		d = -d
	}
	e := a.C - b.C
	if e < 0 {
		e = -e
	}
	return d + e
}

// Text renders the room.
func (r *Room) Text() string {
	var b strings.Builder
	for i := 0; i < r.N; i++ {
		for j := 0; j < r.N; j++ {
			p := Cell{i, j}
			switch {
			case r.Wall[i*r.N+j]:
				b.WriteByte('#')
			case p == r.Box && p == r.Goal:
				b.WriteByte('*')
			case p == r.Player && p == r.Goal:
				b.WriteByte('+')
			case p == r.Box:
				b.WriteByte('$')
			case p == r.Player:
				b.WriteByte('@')
			case p == r.Goal:
				b.WriteByte('.')
			default:
				b.WriteByte(' ')
			}
		}
		if i < r.N-1 {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// ParseRoom reads Text's format: one box, one goal, one player.
func ParseRoom(text string) (*Room, error) {
	lines := strings.Split(text, "\n")
	n := len(lines)
	r := &Room{N: n, Wall: make([]bool, n*n)}
	var boxes, goals, players int
	for i, l := range lines {
		if len(l) != n {
			return nil, fmt.Errorf("row %d has %d cells, want %d (the room is square)", i, len(l), n)
		}
		for j, ch := range []byte(l) {
			p := Cell{i, j}
			switch ch {
			case '#':
				r.Wall[i*n+j] = true
			case ' ':
			case '.':
				r.Goal, goals = p, goals+1
			case '$':
				r.Box, boxes = p, boxes+1
			case '@':
				r.Player, players = p, players+1
			case '*':
				r.Box, r.Goal, boxes, goals = p, p, boxes+1, goals+1
			case '+':
				r.Player, r.Goal, players, goals = p, p, players+1, goals+1
			default:
				return nil, fmt.Errorf("row %d: %q is not one of # . $ @ * + or a space", i, ch)
			}
		}
	}
	if boxes != 1 || goals != 1 || players != 1 {
		return nil, fmt.Errorf("a room needs exactly one box, goal and player, got %d, %d and %d", boxes, goals, players)
	}
	return r, nil
}

// Solve returns a shortest move string that puts the box on the goal (BFS
// over player and box positions), and false when there is none.
func (r *Room) Solve() (string, bool) {
	type state struct{ p, b Cell }
	type link struct {
		prev state
		move byte
	}
	start := state{r.Player, r.Box}
	seen := map[state]link{start: {}}
	queue := []state{start}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		if s.b == r.Goal {
			var path []byte
			for s != start {
				l := seen[s]
				path = append(path, l.move)
				s = l.prev
			}
			for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
				path[i], path[j] = path[j], path[i]
			}
			return string(path), true
		}
		for _, m := range []byte("UDLR") {
			d := dirs[m]
			np, nb := s.p.add(d), s.b
			if r.wall(np) {
				continue
			}
			if np == s.b {
				nb = s.b.add(d)
				if r.wall(nb) {
					continue
				}
			}
			ns := state{np, nb}
			if _, ok := seen[ns]; !ok {
				seen[ns] = link{prev: s, move: m}
				queue = append(queue, ns)
			}
		}
	}
	return "", false
}

// masks are the room-carving shapes, as offsets from the walker.
var masks = [][]Cell{
	{{0, 0}},
	{{0, -1}, {0, 0}, {0, 1}},
	{{-1, 0}, {0, 0}, {1, 0}},
	{{0, 0}, {0, 1}, {1, 0}, {1, 1}},
	{{-1, 0}, {0, -1}, {0, 0}, {0, 1}, {1, 0}},
}

// NewRoom generates the room of a seed.
func NewRoom(n int, seed uint64) *Room {
	r := rollout.NewRand(seed)
	for try := 0; try < 10000; try++ {
		room := &Room{N: n, Wall: make([]bool, n*n)}
		for i := range room.Wall {
			room.Wall[i] = true
		}
		// carve: a random walk inside the outer wall stamping masks
		p := Cell{1 + r.IntN(n-2), 1 + r.IntN(n-2)}
		var floor []Cell
		for step := 0; step < 3*(n-2); step++ {
			for _, o := range masks[r.IntN(len(masks))] {
				q := p.add(o)
				if q.R >= 1 && q.C >= 1 && q.R <= n-2 && q.C <= n-2 && room.Wall[q.R*n+q.C] {
					room.Wall[q.R*n+q.C] = false
					floor = append(floor, q)
				}
			}
			d := dirs["UDLR"[r.IntN(4)]]
			if q := p.add(d); q.R >= 1 && q.C >= 1 && q.R <= n-2 && q.C <= n-2 {
				p = q
			}
		}
		if len(floor) < 6 {
			continue
		}
		room.Goal = floor[r.IntN(len(floor))]
		room.Box = room.Goal
		room.Player = floor[r.IntN(len(floor))]
		if room.Player == room.Box {
			continue
		}
		// reverse play: walk backwards, pulling the box when it is behind
		best, bestScore := *room, -1
		for step := 0; step < 200; step++ {
			m := "UDLR"[r.IntN(4)]
			d := dirs[m]
			np := room.Player.add(d)
			if room.wall(np) || np == room.Box {
				continue
			}
			behind := room.Player.add(Cell{-d.R, -d.C})
			if behind == room.Box && r.IntN(2) == 0 {
				room.Box = room.Player
			}
			room.Player = np
			if s := dist(room.Box, room.Goal); s > bestScore && s >= 2 {
				best, bestScore = *room, s
			}
		}
		if bestScore < 2 {
			continue
		}
		out := best
		if _, ok := out.Solve(); ok {
			return &out
		}
	}
	// unreachable in practice (tests draw thousands of rooms); a fixed room
	// keeps the generator total
	room, _ := ParseRoom(fallbackRoom(n))
	return room
}

// fallbackRoom is an empty room: the player, then the box, then the goal
// along row 2.
func fallbackRoom(n int) string {
	rows := make([]string, n)
	for i := range rows {
		b := []byte("#" + strings.Repeat(" ", n-2) + "#")
		if i == 0 || i == n-1 {
			b = []byte(strings.Repeat("#", n))
		}
		if i == 2 {
			b[1], b[2], b[n-2] = '@', '$', '.'
		}
		rows[i] = string(b)
	}
	return strings.Join(rows, "\n")
}

// deadlocked reports a box in a corner that is not the goal.
func (r *Room) deadlocked() bool {
	if r.Box == r.Goal {
		return false
	}
	v := r.wall(r.Box.add(dirs['U'])) || r.wall(r.Box.add(dirs['D']))
	h := r.wall(r.Box.add(dirs['L'])) || r.wall(r.Box.add(dirs['R']))
	return v && h
}

// State is an episode's room.
type State struct {
	Room
	Moves       int
	max         int
	deadlock    bool
	deadlockEnd bool // Config.DeadlockEnd
}

func (s *State) Clone() rollout.State {
	c := *s
	c.Wall = s.Wall // walls never change
	return &c
}

func (s *State) Success() bool { return s.Box == s.Goal }
func (s *State) Done() bool    { return s.Success() || s.deadlock || s.Moves >= s.max }

// Observation shows the current room.
func (s *State) Observation() string {
	return fmt.Sprintf("Current room:\n%s\nMoves made: %d", s.Text(), s.Moves)
}

// Move applies one move and returns its reward and whether it was valid.
func (s *State) Move(m byte) (float64, bool) {
	d := dirs[m]
	np := s.Player.add(d)
	phi := func() float64 { return -float64(dist(s.Box, s.Goal)) }
	before, wasOn := phi(), s.Box == s.Goal
	valid := !s.wall(np)
	if valid && np == s.Box {
		nb := s.Box.add(d)
		if s.wall(nb) {
			valid = false
		} else {
			s.Box = nb
		}
	}
	s.Moves++
	r := InvalidReward
	if valid {
		r = MoveReward
		s.Player = np
	}
	r += ShapingScale * (ShapingGamma*phi() - before)
	switch on := s.Box == s.Goal; {
	case on && !wasOn:
		r += OnGoalReward + WinReward
	case !on && wasOn:
		r += OffGoalReward
	}
	if s.deadlockEnd && s.deadlocked() {
		s.deadlock = true
		r += DeadlockReward
	} else if !s.Success() && s.Moves >= s.max {
		r += TimeoutReward
	}
	return r, valid
}

// Env is the Sokoban environment for one split.
type Env struct {
	rollout.TaskSource
	cfg Config
}

func (*Env) Name() string { return "sokoban" }

// New builds a split's rooms.
func New(cfg Config, which string) (*Env, error) {
	tasks, err := split.Draw("sokoban", which, cfg, func(stream, i uint64) rollout.Task {
		room := NewRoom(cfg.Size, rollout.DeriveSeed(cfg.Seed, stream, i))
		path, _ := room.Solve()
		return rollout.Task{
			ID:       fmt.Sprintf("sokoban-%s-%d", which, i),
			Question: "Room:\n" + room.Text(),
			Answer:   path,
			Meta:     map[string]string{"room": room.Text()},
		}
	}, func(t rollout.Task) string { return t.Meta["room"] })
	if err != nil {
		return nil, err
	}
	return &Env{TaskSource: tasks, cfg: cfg}, nil
}

// Reset rebuilds a task's room from its Meta; an unsolvable room is refused.
func (e *Env) Reset(task rollout.Task) (rollout.State, error) {
	room, err := ParseRoom(task.Meta["room"])
	if err != nil {
		return nil, err
	}
	if _, ok := room.Solve(); !ok {
		return nil, fmt.Errorf("the room cannot be solved")
	}
	max := e.cfg.MaxMoves
	if max == 0 {
		max = 200
	}
	return &State{Room: *room, max: max, deadlockEnd: e.cfg.DeadlockEnd}, nil
}

// Step applies an agent's move list until the room is solved or stuck.
func (e *Env) Step(s rollout.State, agent, action string) rollout.StepResult {
	st := s.(*State)
	path, err := actions.Moves(action)
	if err != nil {
		return rollout.StepResult{Reward: UnparsedReward, Fixed: UnparsedReward, Message: fmt.Sprintf("%s's action was not understood (%v)", agent, err),
			Metrics: map[string]float64{"moves": 0, "invalid_moves": 0, "unparsed_actions": 1, "deadlocks": 0}}
	}
	var r float64
	invalid := 0
	for i := 0; i < len(path) && !st.Done(); i++ {
		x, ok := st.Move(path[i])
		r += x
		if !ok {
			invalid++
		}
	}
	msg := fmt.Sprintf("%s moved %s", agent, path)
	switch {
	case st.Success():
		msg += "; the box is on the goal"
	case st.deadlock:
		msg += "; the box is stuck in a corner"
	}
	deadlocks := 0.0
	if st.deadlock {
		deadlocks = 1
	}
	return rollout.StepResult{Reward: r, Message: msg, Metrics: map[string]float64{"moves": float64(len(path)), "invalid_moves": float64(invalid),
		"unparsed_actions": 0, "deadlocks": deadlocks}}
}
