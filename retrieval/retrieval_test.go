package retrieval

import (
	"encoding/json"
	"fmt"
	"hash/crc32"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func tinyCorpus() []Document {
	return []Document{
		{ID: "d0", Contents: "a b"},
		{ID: "d1", Contents: "A c, c!"},
		{ID: "d2", Contents: "d"},
	}
}

// Scores computed by hand from the formula in bm25.go (N=3, |d|=2,3,1,
// avgdl=2, k1=0.9, b=0.4):
//
//	"c": idf = ln(1 + 2.5/1.5);  d1: tf 2, K = 0.9·(0.6 + 0.4·1.5) = 1.08 → idf·2·1.9/3.08
//	"a": idf = ln(1.6);          d0: tf 1, K = 0.9 → idf;   d1: K = 1.08 → idf·1.9/2.08
func TestBM25ScoresEqualHandComputation(t *testing.T) {
	ix, err := Build(tinyCorpus())
	if err != nil {
		t.Fatal(err)
	}
	check := func(q string, want []Hit) {
		t.Helper()
		got := ix.Search(q, 10)
		if len(got) != len(want) {
			t.Fatalf("%q: %d hits %v, want %d", q, len(got), got, len(want))
		}
		for i := range want {
			if got[i].Document.ID != want[i].Document.ID || math.Abs(got[i].Score-want[i].Score) > 1e-12 {
				t.Errorf("%q hit %d: %s %.15f, want %s %.15f", q, i, got[i].Document.ID, got[i].Score, want[i].Document.ID, want[i].Score)
			}
		}
	}
	check("c", []Hit{{Document: Document{ID: "d1"}, Score: 1.2101140134560258}})
	check("A?", []Hit{{Document: Document{ID: "d0"}, Score: 0.47000362924573563}, {Document: Document{ID: "d1"}, Score: 0.4293302382533161}})
	check("zzz", nil)
	if got := ix.Search("a", 1); len(got) != 1 || got[0].Document.ID != "d0" {
		t.Errorf("top-1 of \"a\" = %v, want d0 only", got)
	}
}

func TestBuildRejectsBadCorpora(t *testing.T) {
	for name, docs := range map[string][]Document{
		"empty":     nil,
		"no id":     {{ID: "", Contents: "x"}},
		"duplicate": {{ID: "x", Contents: "a"}, {ID: "x", Contents: "b"}},
		"all blank": {{ID: "x", Contents: " ,. "}},
	} {
		if _, err := Build(docs); err == nil {
			t.Errorf("%s: Build accepted it", name)
		}
	}
}

func TestIndexRoundTripsThroughDisk(t *testing.T) {
	docs := []Document{
		{ID: "1", Contents: "Brelmoor\nBrelmoor is a city in Qelandia."},
		{ID: "2", Contents: "Zorva Kelin\nZorva Kelin was born in Brelmoor. Zorva Kelin is a painter."},
		{ID: "3", Contents: "Qelandia\nQelandia is a country."},
		{ID: "4", Contents: "Ünïcode\nnaïve café"},
	}
	ix, err := Build(docs)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "index.bm25")
	if err := ix.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ix.docs, back.docs) || !reflect.DeepEqual(ix.lengths, back.lengths) ||
		!reflect.DeepEqual(ix.postings, back.postings) || ix.avgLen != back.avgLen || ix.K1 != back.K1 || ix.B != back.B {
		t.Fatal("the reopened index differs from the saved one")
	}
	for _, q := range []string{"where was Zorva Kelin born", "Qelandia city", "café"} {
		if a, b := ix.Search(q, 3), back.Search(q, 3); !reflect.DeepEqual(a, b) {
			t.Errorf("%q: %v before saving, %v after", q, a, b)
		}
	}

	// every damaged variant is an error, never a panic
	data, _ := os.ReadFile(path)
	for name, bad := range map[string][]byte{
		"truncated":   data[:len(data)/2],
		"flipped bit": flip(data, len(data)/3),
		"empty":       {},
		"other file":  []byte("PAR1 not an index"),
	} {
		p := filepath.Join(t.TempDir(), "bad")
		os.WriteFile(p, bad, 0o644)
		if _, err := Open(p); err == nil {
			t.Errorf("%s: Open accepted it", name)
		}
	}
}

func flip(b []byte, i int) []byte {
	c := append([]byte(nil), b...)
	c[i] ^= 0x10
	return c
}

func FuzzDecodeIndex(f *testing.F) {
	ix, _ := Build(tinyCorpus())
	p := filepath.Join(f.TempDir(), "seed")
	ix.Save(p)
	seed, _ := os.ReadFile(p)
	f.Add(seed)
	f.Add([]byte(indexMagic))
	f.Fuzz(func(t *testing.T, b []byte) {
		// the checksum stops most random inputs; fuzz the parser behind it too
		if len(b) >= len(indexMagic) && string(b[:len(indexMagic)]) == indexMagic {
			b = append(b[:len(b):len(b)], 0, 0, 0, 0)
			body := b[:len(b)-4]
			sum := crcOf(body)
			copy(b[len(b)-4:], sum)
		}
		ix, err := decodeIndex(b)
		if err == nil {
			ix.Search("a b c", 3)
		}
	})
}

func TestLoadCorpusLayouts(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "c.jsonl")
	os.WriteFile(p, []byte(`{"id": "0", "contents": "\"Title\"\nsome text"}

{"id": 7, "title": "T2", "text": "more"}
{"contents": "no id"}
`), 0o644)
	docs, err := LoadCorpus(p)
	if err != nil {
		t.Fatal(err)
	}
	want := []Document{{ID: "0", Contents: "\"Title\"\nsome text"}, {ID: "7", Contents: "T2\nmore"}, {ID: "4", Contents: "no id"}}
	if !reflect.DeepEqual(docs, want) {
		t.Fatalf("got %#v\nwant %#v", docs, want)
	}
	if docs[0].Title() != `"Title"` || docs[0].Text() != "some text" {
		t.Errorf("title/text split: %q / %q", docs[0].Title(), docs[0].Text())
	}
	for name, body := range map[string]string{
		"not json":    "{oops\n",
		"no contents": `{"id": "1", "body": "x"}` + "\n",
		"empty":       "\n\n",
	} {
		os.WriteFile(p, []byte(body), 0o644)
		if _, err := LoadCorpus(p); err == nil {
			t.Errorf("%s: LoadCorpus accepted it", name)
		}
	}
	out := filepath.Join(dir, "w.jsonl")
	if err := WriteCorpus(out, want); err != nil {
		t.Fatal(err)
	}
	if back, err := LoadCorpus(out); err != nil || !reflect.DeepEqual(back, want) {
		t.Errorf("WriteCorpus round trip: %v %v", back, err)
	}
}

func TestClientAgainstServerOnLoopback(t *testing.T) {
	ix, _ := Build(tinyCorpus())
	s, err := NewServer(ix, DefaultLimits(), "")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
	c, err := NewClient(srv.URL+"/retrieve", ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Retrieve([]string{"c", "a", "nothing"}, 2)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := ix.Retrieve([]string{"c", "a", "nothing"}, 2)
	if len(got) != 3 || !reflect.DeepEqual(got[0], want[0]) || !reflect.DeepEqual(got[1], want[1]) || len(got[2]) != 0 {
		t.Fatalf("over HTTP %v, in process %v", got, want)
	}

	// the server's own checks
	for _, body := range []string{`{"queries": ["a"], "topk": 0}`, `not json`, `{"queries": ["a"], "topk": 5000}`} {
		resp, err := http.Post(srv.URL+"/retrieve", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		var e struct{ Error string }
		json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || e.Error == "" {
			t.Errorf("%s: status %d error %q, want 400 with a message", body, resp.StatusCode, e.Error)
		}
	}
	// without return_scores the hits are bare documents; the client reads both
	resp, _ := http.Post(srv.URL+"/retrieve", "application/json", strings.NewReader(`{"queries": ["c"], "topk": 1}`))
	var bare struct{ Result [][]Document }
	json.NewDecoder(resp.Body).Decode(&bare)
	resp.Body.Close()
	if len(bare.Result) != 1 || len(bare.Result[0]) != 1 || bare.Result[0][0].ID != "d1" {
		t.Errorf("bare result %v", bare.Result)
	}
	if hits, err := decodeResponse([]byte(`{"result": [[{"id": "d1", "contents": "x"}]]}`), 1); err != nil || hits[0][0].Document.ID != "d1" {
		t.Errorf("bare hits: %v %v", hits, err)
	}
}

// A slow, a failing and an oversized server each give one clear error.
func TestClientSurvivesBadServers(t *testing.T) {
	var calls atomic.Int32
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		time.Sleep(300 * time.Millisecond)
		w.Write([]byte(`{"result": [[]]}`))
	}))
	defer slow.Close()
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.Error(w, "index not loaded", http.StatusServiceUnavailable)
	}))
	defer failing.Close()
	flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			http.Error(w, "busy", http.StatusInternalServerError)
			return
		}
		w.Write([]byte(`{"result": [[{"document": {"id": "x", "contents": "X\ny"}, "score": 2}]]}`))
	}))
	defer flaky.Close()
	huge := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Write([]byte(`{"result": [["` + strings.Repeat("x", 4096) + `"]]}`))
	}))
	defer huge.Close()
	badRequest := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.Error(w, "topk too large", http.StatusBadRequest)
	}))
	defer badRequest.Close()
	wrongCount := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Write([]byte(`{"result": []}`))
	}))
	defer wrongCount.Close()

	opts := ClientOptions{Timeout: 100 * time.Millisecond, Retries: 2, Backoff: time.Millisecond, MaxBytes: 1024}
	for _, tc := range []struct {
		name, url string
		calls     int32
		wantErr   string
	}{
		{"slow", slow.URL, 3, "no answer within 100ms"},
		{"failing", failing.URL, 3, "503"},
		{"flaky", flaky.URL, 2, ""},
		{"oversized", huge.URL, 1, "larger than 1024 bytes"},
		{"bad request", badRequest.URL, 1, "400"},
		{"wrong count", wrongCount.URL, 1, "0 result lists for 1 queries"},
	} {
		calls.Store(0)
		c, err := NewClient(tc.url+"/retrieve", opts)
		if err != nil {
			t.Fatal(err)
		}
		hits, err := c.Retrieve([]string{"q"}, 3)
		if tc.wantErr == "" {
			if err != nil || len(hits) != 1 || len(hits[0]) != 1 || hits[0][0].Score != 2 {
				t.Errorf("%s: %v %v", tc.name, hits, err)
			}
		} else if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.wantErr)
		}
		if n := calls.Load(); n != tc.calls {
			t.Errorf("%s: %d calls, want %d", tc.name, n, tc.calls)
		}
	}
	if _, err := NewClient("localhost:8000", ClientOptions{}); err == nil {
		t.Error("a URL without a scheme was accepted")
	}
}

func crcOf(b []byte) []byte {
	s := crc32.ChecksumIEEE(b)
	return []byte{byte(s), byte(s >> 8), byte(s >> 16), byte(s >> 24)}
}

// The top k equal the first k of every match sorted by score, ties to the
// earlier document (many ties: a six-word vocabulary).
func TestSearchTopKEqualsFullSort(t *testing.T) {
	vocab := []string{"ash", "birch", "cedar", "elm", "fir", "oak"}
	var docs []Document
	state := uint64(7)
	next := func(n int) int { state = state*6364136223846793005 + 1442695040888963407; return int(state>>33) % n }
	for i := 0; i < 200; i++ {
		words := make([]string, 1+next(5))
		for j := range words {
			words[j] = vocab[next(len(vocab))]
		}
		docs = append(docs, Document{ID: fmt.Sprint(i), Contents: strings.Join(words, " ")})
	}
	ix, err := Build(docs)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"oak", "ash elm", "birch cedar fir oak"} {
		all := ix.Search(q, len(docs))
		sort.SliceStable(all, func(a, b int) bool {
			if all[a].Score != all[b].Score {
				return all[a].Score > all[b].Score
			}
			ia, _ := strconv.Atoi(all[a].Document.ID)
			ib, _ := strconv.Atoi(all[b].Document.ID)
			return ia < ib
		})
		for _, k := range []int{1, 3, 10, 57, len(docs)} {
			got := ix.Search(q, k)
			want := all[:min(k, len(all))]
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%q top %d: %v, want %v", q, k, got[:min(3, len(got))], want[:min(3, len(want))])
			}
		}
	}
}
