// Package dist is troupe's distributed layer: one process per device (a
// rank), the ranks of one node or several joined in a torch c10d process
// group (Gloo for CPU tensors, NCCL for CUDA ones), and everything a rank
// needs to find the others, agree with them, and stop with them.
//
// Architecture, in the order a rank meets it (one file each):
//
//	doc.go       this overview
//	launch.go    the launcher's variables (train --nproc, torchrun, srun, by hand): rank, world, node,
//	             the store's address, the timeout, the CUDA device (LOCAL_RANK modulo the visible devices)
//	hello.go     the ranks meet on the store's port before c10d: rank 0 admits each (one WORLD_SIZE, one
//	             RANK each, one GPU each), names who is missing at the timeout, counts each node's ranks
//	             (their CPU threads) and settles the address each offers (never loopback to another host)
//	join.go      the c10d group over rank 0's TCPStore, bounded by the timeout
//	agree.go     the ranks compare builds, resolved configs and the checkpoint they continue from
//	group.go     the collectives through one gate: the Collectives interface the update uses, and the
//	             run's gathers (bytes, JSON items, a flag, rank 0's error or choice)
//	watch.go     a rank that leaves — finished, failed or dead — is known to every other at once, so no
//	             rank waits for it in a collective (NCCL would, for the whole timeout)
//	peers.go     after a failed collective, probes that name the rank or host that was lost
//	launcher.go  a rank of train --nproc stops when its launcher is gone
//	faults.go    the tests' hooks: a rank exits, pauses or stalls at a step
//
// Users: run/ joins the group (Join), agrees (Agree), splits the step's
// tasks (Part), gathers rows and evaluation records (GatherJSON), agrees
// on stops and errors (AnyTrue, FromLead) and words a failure (Explain);
// policy/ sees only Collectives, so that the update is the same code for
// one process (a nil Collectives) and for any group. A nil *Group is one
// process everywhere.
//
// The rules every user keeps: collectives are issued in one order on every
// rank, on every path; an error is agreed on (FromLead, AnyTrue) before
// anyone stops, or — where the ranks cannot meet, in the middle of an
// update — the failing rank issues no further collective and leaves
// (Leave), which ends the others' wait for it.
//
// What it is not: sharding (policy/shard*.go applies it to a model, over
// Collectives), the collectives' C++ (torch/csrc/dist.cc), or the run's
// use of the group (run/).
package dist
