package bench

// report.go — the rows as a table or as JSON lines (one object per row, for
// scripts/bench/compare.py).

import (
	"encoding/json"
	"fmt"
	"io"
)

// Write prints rows as a table: tokens per second, MFU where peakFLOPS is
// known (a GPU), and peak memory.
func Write(w io.Writer, rows []Row, peakFLOPS float64) {
	fmt.Fprintf(w, "%-8s %6s %8s %10s %12s %8s %12s\n", "phase", "batch", "tokens", "seconds", "tok/s", "MFU", "peak mem")
	for _, r := range rows {
		mfu := "-"
		if peakFLOPS > 0 {
			mfu = fmt.Sprintf("%.1f%%", 100*r.TokS*r.FLOPsPerToken/peakFLOPS)
		}
		fmt.Fprintf(w, "%-8s %6d %8d %10.4f %12.1f %8s %12s\n", r.Phase, r.Batch, r.Tokens, r.Secs, r.TokS, mfu, bytes(r.PeakBytes))
	}
}

// WriteJSON prints one JSON object per row.
func WriteJSON(w io.Writer, rows []Row) error {
	enc := json.NewEncoder(w)
	for _, r := range rows {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return nil
}

func bytes(n int64) string {
	switch {
	case n <= 0:
		return "-"
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
