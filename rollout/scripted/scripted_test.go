package scripted

import (
	"reflect"
	"testing"
	"troupe/gen"
)

func TestCodecRoundTrip(t *testing.T) {
	for _, s := range []string{"", "hello", "naïve 数学 \\boxed{½}", "<|im_end|> stays bytes"} {
		if got := (Codec{}).Decode(Codec{}.Encode(s)); got != s {
			t.Errorf("round trip %q → %q", s, got)
		}
	}
	if got := (Codec{}).Decode([]int{'a', EOS, 'b', 999}); got != "a<|im_end|>b\uFFFD" {
		t.Errorf("specials decode to %q", got)
	}
}

func TestGenerateHonoursLimitsAndSeeds(t *testing.T) {
	g := New(func(p string, seed uint64) string { return "echo:" + p })
	reqs := []gen.Request{
		{Prompt: Codec{}.Encode("abc"), MaxNewTokens: 100, Stop: []int{EOS}},
		{Prompt: Codec{}.Encode("abcdefgh"), MaxNewTokens: 6, Stop: []int{EOS}},
	}
	res, err := g.Generate(reqs, 5)
	if err != nil {
		t.Fatal(err)
	}
	if r := res[0]; r.Finish != gen.FinishStop || (Codec{}).Decode(r.Tokens) != "echo:abc<|im_end|>" || len(r.LogProbs) != len(r.Tokens) {
		t.Errorf("row 0: %+v", r)
	}
	if r := res[1]; r.Finish != gen.FinishLength || (Codec{}).Decode(r.Tokens) != "echo:a" {
		t.Errorf("row 1: %+v", r)
	}
	again, _ := New(g.Respond).Generate(reqs, 5)
	other, _ := New(g.Respond).Generate(reqs, 6)
	if !reflect.DeepEqual(res, again) || reflect.DeepEqual(res[0].LogProbs, other[0].LogProbs) {
		t.Error("log-probs should be a function of the seed: equal for equal seeds, different otherwise")
	}
	if _, err := g.Generate([]gen.Request{{Prompt: []int{1}, MaxNewTokens: 50}}, 0); err == nil {
		t.Error("a request without stop tokens whose response fits should be refused")
	}
	if len(g.Calls) != 1 || g.Calls[0].Seed != 5 || g.Calls[0].Prompts[1] != "abcdefgh" {
		t.Errorf("recorded calls %+v", g.Calls)
	}
}
