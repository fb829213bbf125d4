// Package meminfo reads the machine's physical memory: the one place that
// parses /proc/meminfo (the config's size checks and the bench's memory
// bound both ask it).
//
// What it is not: a device's memory (internal/gpu asks NVML for a GPU's) nor
// what is free now; MemTotal is what the machine has.
package meminfo

import (
	"bufio"
	"io"
	"os"
	"strconv"
	"strings"
)

// Total is the machine's physical memory in bytes (MemTotal), 0 where
// /proc/meminfo cannot be read.
func Total() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	return parseTotal(f)
}

// parseTotal reads MemTotal (kB) from a /proc/meminfo listing; 0 without it.
func parseTotal(r io.Reader) int64 {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil || kb < 0 {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
