package dirlock

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// holdEnv makes the test binary a holder: it takes the lock of the named
// directory, says so, and waits to be killed.
const holdEnv = "DIRLOCK_TEST_HOLD"

func TestMain(m *testing.M) {
	if dir := os.Getenv(holdEnv); dir != "" {
		if _, err := Acquire(dir); err != nil {
			println(err.Error())
			os.Exit(1)
		}
		os.Stdout.WriteString("held\n")
		select {}
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
