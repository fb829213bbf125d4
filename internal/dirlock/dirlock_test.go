package dirlock

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// holdEnv makes the test binary a holder: it takes the lock of the named
// directory, says so, and waits to be killed.
const holdEnv = "DIRLOCK_TEST_HOLD"

// holdTempEnv makes the test binary a writer of a temporary under the named
// directory: it makes one with a file in it, prints its path and waits.
const holdTempEnv = "DIRLOCK_TEST_HOLD_TEMP"

// kept holds what a holder process holds.
var kept any

// waitToBeKilled blocks until the process is killed (a bare select{} would
// be ended by Go's deadlock detector, dropping the lock early).
func waitToBeKilled() {
	for {
		time.Sleep(time.Hour)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestMain(m *testing.M) {
	if parent := os.Getenv(holdTempEnv); parent != "" {
		tmp, err := MakeTemp(parent, ".tmp-x-")
		if err != nil {
			println(err.Error())
			os.Exit(1)
		}
		kept = tmp
		os.WriteFile(filepath.Join(tmp.Path, "part"), []byte("x"), 0o644)
		os.Stdout.WriteString(tmp.Path + "\n")
		waitToBeKilled()
	}
	if dir := os.Getenv(holdEnv); dir != "" {
		l, err := Acquire(dir)
		if err != nil {
			println(err.Error())
			os.Exit(1)
		}
		kept = l // reachable: the garbage collector must not close its file
		os.Stdout.WriteString("held\n")
		waitToBeKilled()
	}
	os.Exit(m.Run())
}

// A second writer is refused with the holder's name; after Release the
// directory is free again.
func TestSecondWriterIsRefused(t *testing.T) {
	dir := t.TempDir()
	l, err := Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Acquire(dir)
	b, ok := err.(*BusyError)
	if !ok || b.Holder.PID != os.Getpid() || !strings.Contains(err.Error(), "pid ") {
		t.Fatalf("second Acquire: %v, want a BusyError naming this process", err)
	}
	l.Release()
	l.Release()
	l2, err := Acquire(dir)
	if err != nil {
		t.Fatalf("after Release: %v", err)
	}
	l2.Release()
}

// A holder killed with -9 leaves no lock behind: the kernel drops it.
func TestKilledHolderFreesTheDirectory(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holdEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "held\n" {
		t.Fatalf("holder said %q", line)
	}
	_, err = Acquire(dir)
	if b, ok := err.(*BusyError); !ok || b.Holder.PID != cmd.Process.Pid {
		t.Fatalf("while the holder runs: %v, want a BusyError naming pid %d", err, cmd.Process.Pid)
	}
	cmd.Process.Kill()
	cmd.Wait()
	l, err := Acquire(dir)
	if err != nil {
		t.Fatalf("after the holder was killed: %v", err)
	}
	l.Release()
}
