package datasets

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A download that stops sending is abandoned after stallTimeout with an
// error saying so, not left hanging; one that ends short of the listed size
// is refused.
func TestStalledOrShortDownload(t *testing.T) {
	defer func(d time.Duration) { stallTimeout = d }(stallTimeout)
	stallTimeout = 200 * time.Millisecond
	content := strings.Repeat("x", 1000)
	sum := sha256.Sum256([]byte(content))
	mode := "stall"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/api/") {
			fmt.Fprintf(w, `{"sha": "abc", "siblings": [{"rfilename": "f.parquet", "size": 1000, "lfs": {"sha256": %q, "size": 1000}}]}`, hex.EncodeToString(sum[:]))
			return
		}
		if mode == "short" {
			io.WriteString(w, content[:600])
			return
		}
		w.Header().Set("Content-Length", "1000")
		io.WriteString(w, content[:100])
		w.(http.Flusher).Flush()
		<-r.Context().Done() // sends nothing more
	}))
	defer srv.Close()
	h := newHub(srv.URL, "", nil, nil)
	s, err := h.snapshot(context.Background(), "o/n", "main")
	if err != nil {
		t.Fatal(err)
	}
	r, err := h.open(context.Background(), s, s.Files[0])
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = io.ReadAll(r)
	r.Close()
	if !errors.Is(err, errStalled) || time.Since(start) > 5*time.Second || h.unreachable(err) {
		t.Fatalf("stalled download: %v after %v", err, time.Since(start))
	}
	mode = "short"
	r, err = h.open(context.Background(), s, s.Files[0])
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(r)
	r.Close()
	if err == nil || !strings.Contains(err.Error(), "downloaded 600 bytes, the source lists 1000") {
		t.Fatalf("short download: %v", err)
	}
}
