package torch

// The package's only #cgo block: every other file includes tshim.h without
// flags. Go links libtshim.so alone (it pulls in libtorch itself); the rpath
// points at the repository's build directory so `go test` works once
// `make shim` has run, and LD_LIBRARY_PATH overrides it on machines where the
// shim was built elsewhere (see scripts/gpu/).

/*
#cgo CFLAGS: -I${SRCDIR}
#cgo LDFLAGS: -L${SRCDIR}/../build -Wl,-rpath,${SRCDIR}/../build -ltshim
#include "tshim.h"
*/
import "C"
