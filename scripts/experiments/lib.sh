# lib.sh — what the experiment scripts share, sourced once they have set
# name (for messages), out (the runs' directory), train (the binary),
# model (MODEL) and extra (the --set pairs of SETS):
#
#   stamp LABEL        appends LABEL and the time (seconds) to $out/timings.tsv
#   begin LINE...      refuses an existing $out, creates $out/logs, writes
#                      $out/machine.txt (the machine, its CPU and the CPU
#                      level troupe runs at, the start and load, the given
#                      lines, threads, MODEL and SETS) and stamps start
#   finish             stamps end; the load and the time into machine.txt
#   rl LOG ARGS...     "$train" ARGS plus the SETS overrides, output into
#                      $out/logs/LOG.log; on failure its tail and exit 1;
#                      prints the run's evaluation lines
#   charts DOC RUN...  "$train" compare over the runs into $out/compare and
#                      copies the reward and accuracy charts (per group of
#                      seeds and per run) and any grad-norm charts to DOC

stamp() { printf '%s\t%s\n' "$1" "$(date +%s)" >>"$out/timings.tsv"; }

begin() {
	if [ -e "$out" ]; then
		echo "$name: $out exists; remove it first (rm -rf $out)" >&2
		exit 1
	fi
	mkdir -p "$out/logs"
	{
		echo "nproc: $(nproc)"
		echo "uname -r: $(uname -r)"
		echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
		echo "CPU level: $("$train" version 2>/dev/null | sed -n 's/.*CPU level \([a-z0-9]*\).*/\1/p')"
		echo "start: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
		echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
		printf '%s\n' "$@"
		echo "TROUPE_THREADS: ${TROUPE_THREADS:-unset (half the CPUs)}"
		[ -z "$model" ] || echo "model: $model (no init, no warm-up)"
		[ -z "${SETS:-}" ] || echo "extra overrides: $SETS"
	} >"$out/machine.txt"
	stamp start
}

finish() {
	stamp end
	echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/machine.txt"
	echo "end: $(date -u '+%Y-%m-%d %H:%M:%S UTC')" >>"$out/machine.txt"
}

rl() {
	local log=$1
	shift
	"$train" "$@" ${extra[@]+"${extra[@]}"} >"$out/logs/$log.log" 2>&1 ||
		{ echo "$name: $log failed; see $out/logs/$log.log" >&2; tail -20 "$out/logs/$log.log" >&2; exit 1; }
	grep -E '^eval' "$out/logs/$log.log" || true
}

charts() {
	local doc=$1
	shift
	rm -rf "$out/compare"
	"$train" compare --out "$out/compare" "$@" >/dev/null
	rm -f "$doc"/*.png
	local f
	for f in accuracy-by-group reward-by-group accuracy reward; do
		[ ! -f "$out/compare/$f.png" ] || cp "$out/compare/$f.png" "$doc"/
	done
	cp "$out"/compare/grad_norm-*.png "$doc"/ 2>/dev/null || true
}
