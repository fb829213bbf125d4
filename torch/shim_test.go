package torch

import (
	"os"
	"testing"
)

// TestLoadedShim says which shim and libtorch the tests run against, and,
// when scripts/pyref/test-shim.sh names the ones it built
// (TROUPE_EXPECT_SHIM, TROUPE_EXPECT_TORCH), fails unless those were
// loaded: a wrong LD_LIBRARY_PATH would otherwise test the default shim a
// second time and report it as the wheel's.
func TestLoadedShim(t *testing.T) {
	t.Logf("shim %s, libtorch %s, CUDA devices %d", ShimPath(), VersionString(), CUDADeviceCount())
	if want := os.Getenv("TROUPE_EXPECT_SHIM"); want != "" && ShimPath() != want {
		t.Errorf("loaded shim %s, want %s (LD_LIBRARY_PATH=%q)", ShimPath(), want, os.Getenv("LD_LIBRARY_PATH"))
	}
	if want := os.Getenv("TROUPE_EXPECT_TORCH"); want != "" && VersionString() != want {
		t.Errorf("libtorch %s, want %s", VersionString(), want)
	}
}
