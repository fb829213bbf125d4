// Package advantage turns scored rollout rows into one advantage per row, by
// every estimator of the three reference systems: the Dr. MAS codebase's
// GRPO, Dr. MAS's agent-wise normalisation, AT-GRPO's agent- and turn-wise
// groups over tree-sampled candidates, and MAGRPO's joint-reward returns. It
// is pure Go and knows nothing of tokens, models or torch; the semantics are
// those of the project's reference algorithms.md, §1–5, whose vectors 1–4 are
// the package's first tests (vectors_test.go).
//
// # Use
//
//	est, err := advantage.New(cfg.Estimator, cfg.Advantage) // name from advantage.Names()
//	res, err := est.Compute(rows)                           // rows []advantage.Row
//	// res.Advantages[i] belongs to rows[i]; train on rows with res.Train[i];
//	// log res.Metrics() with the step.
//
// # Files
//
//	doc.go          this overview
//	row.go          Row, the estimators' input, and its score
//	estimator.go    New and Names: an estimator by its config name; Result
//	options.go      the estimator settings (advantage section of the config)
//	groups.go       what the group estimators share: samples and their groups
//	normalise.go    the group normalisation every group estimator shares
//	grpo.go         GRPO as the Dr. MAS codebase implements it, and grpo-step
//	drmas.go        Dr. MAS's agent-wise normalisation
//	atgrpo.go       AT-GRPO's agent- and turn-wise groups over tree candidates
//	magrpo.go       MAGRPO's joint-reward returns over a tree of joint actions
//	rloo.go         REINFORCE leave-one-out over the prompt group
//	filter.go       the group filter (lowest-mean fraction, zero variance) after any estimator
//	diagnostics.go  per-step and per-agent statistics for the metrics log
//
// # Estimators
//
//	name       group key                    sample unit   normaliser
//	grpo       prompt                       trajectory¹   (s − μ)/(σ + ε)
//	grpo-step  prompt                       row           (s − μ)/(σ + ε)
//	drmas      (prompt, agent)              row           (s − μ)/(σ + ε)
//	atgrpo     (prompt, env, turn, agent)³  candidate     (s − μ)/(σ + ε)
//	magrpo     (prompt, node, agent)        completion²   mean | rloo | max | raw,
//	                                                      then optionally /max(popstd, 1e-6)
//	rloo       prompt                       trajectory¹   (n·s − Σs)/(n − 1)
//
// ¹ A trajectory's score is the mean of its rows' scores; every row of the
// trajectory gets the trajectory's advantage. ² A completion's score is the
// sum of the returns of the joint actions it takes part in. ³ (prompt, turn,
// agent) with atgrpo.key: prompt, for sampling without a tree; (prompt / m,
// turn, agent) with merged (m = atgrpo.tasks_per_group consecutive tasks
// pooled, as PettingLLMs' no_tree runs group them).
//
// σ is the sample (N−1) or population (N) std as configured; without
// divide_by_std the normaliser is s − μ (Dr. GRPO). An all-equal group gets
// exactly 0. A singleton group gets s/(1+ε) (raw: mean 0, std 1, the Dr. MAS
// code) or 0 (zero, PettingLLMs). grpo-step is the ablation that separates
// Dr. MAS's two changes: it keeps the prompt as the group (like grpo) but
// makes every row a sample (like drmas).
//
// # Options (YAML section `advantage:`)
//
//	key                                default   read by
//	divide_by_std                      true      grpo, grpo-step, drmas, atgrpo
//	std: sample | population           sample    grpo, grpo-step, drmas, atgrpo
//	epsilon                            1e-6      grpo, grpo-step, drmas, atgrpo
//	singleton: raw | zero              raw       grpo, grpo-step, drmas, atgrpo, rloo
//	mix_rewards                        false     all: score = team_weight·team_reward + local_reward
//	team_weight (α)                    1         all, with mix_rewards
//	atgrpo.key: env | prompt | merged  env       atgrpo
//	atgrpo.tasks_per_group             0         atgrpo, key merged (a run config's 0: batch.n)
//	filter.lowest_mean_fraction        0         all (per model; the AT-GRPO configs: 0.5)
//	filter.zero_variance               false     all
//	magrpo.baseline: mean|rloo|max|raw mean      magrpo
//	magrpo.normalize                   false     magrpo
//	magrpo.gamma                       0.9       magrpo
//	magrpo.joint: aligned | cross      aligned   magrpo
//
// atgrpo.key may only be changed for atgrpo (New reports it otherwise). With
// a filter on, New wraps the estimator so that Compute's result has passed
// through Filter. Which Row fields each estimator reads is listed on Row.
//
// # MAGRPO trees as rows
//
// A node is a state; at each node every agent samples G completions
// (Row.Candidate); a joint action combines one completion per agent, has one
// joint reward (Row.Reward) and leads to the child node that carries the
// joint action's id (Row.Joint); the joint actions taken at that child have
// Row.Node equal to it. Each joint action is given as one row per agent.
// Vector 4, two agents, aligned, G = 4, joint rewards [3, 1, 2, 2] at root 0:
//
//	Row{Node: 0, Joint: 1, Agent: "writer", Candidate: 0, Reward: 3}
//	Row{Node: 0, Joint: 1, Agent: "critic", Candidate: 0, Reward: 3}
//	Row{Node: 0, Joint: 2, Agent: "writer", Candidate: 1, Reward: 1}
//	Row{Node: 0, Joint: 2, Agent: "critic", Candidate: 1, Reward: 1}
//	... joint actions 3 and 4 with reward 2
//
// gives each agent's completions the advantages [1, −1, 0, 0] (mean),
// [1.414214, −1.414214, 0, 0] (mean, normalised), [1.333333, −1.333333, 0, 0]
// (rloo) and [0, −2, −1, −1] (max). For two turns with γ = 0.9, root joint
// actions 1 and 2 with rewards 0.5 and 1.0, and joint actions {3, 4} at node
// 1 and {5, 6} at node 2 with returns [1, 0] and [2, 2], the root returns are
// 0.5 + 0.9·0.5 = 0.95 and 1.0 + 0.9·2 = 2.8. In cross mode a node has a row
// for every combination of the agents' completions (G^N joint actions, each
// with its own Joint id); a completion then appears in G^(N−1) rows, which
// all get its advantage, and Result.Train keeps the one with the lowest
// Joint id.
//
// # Where this matches and departs from the reference code
//
//   - grpo, drmas: match the Dr. MAS code (trajectory mean of row scores;
//     group_by_agent_id; raw singletons by default; torch.std).
//   - atgrpo: the intended semantics, not the reference code's defects: its
//     group key divides the environment index by K twice (merging K prompts'
//     groups) — here environments (Prompt, Env) are never merged and a
//     repeated Candidate within a group is an error; its best-branch copy
//     runs after all agents acted and it steps other environment objects
//     than the ones it scores — rollout concerns, and the tests assert K
//     distinct rewards for the second agent.
//   - magrpo: matches CoMLRL's returns, cross-mode sums and baselines.
//   - rloo: leave-one-out over trajectories, unnormalised (divide_by_std,
//     std and epsilon do not apply), raw singletons keep their score.
//   - everywhere: sums run in sorted order, so a result does not change by a
//     bit when the rows are shuffled; NaN or infinite rewards, rewards beyond
//     ±MaxAbsReward, empty input and malformed trees are errors that name the
//     row or node, so no advantage is ever NaN or infinite.
//
// # Diagnostics
//
// Result.Diagnostics (flattened by Metrics into adv/… keys) holds the group
// counts (singleton, zero-variance, dropped), the step's score μ and σ, the
// advantages' mean/std, and per agent μ_k, σ_k, its advantage mean/std and
// Dr. MAS's amplification factor (σ_k² + (μ_k − μ)²)/σ² (Lemma 4.2), both
// against the step's statistics and against each prompt group's.
package advantage
