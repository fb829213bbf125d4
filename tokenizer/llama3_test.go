// Llama 3 against Hugging Face: the real tokenizer.json
// (.cache/tokenizer/llama3, fetch-fixtures.sh) and WriteByteLevel's Llama 3
// format (testdata/tokenizer/tiny-llama3/) against the Rust library, and the
// chat templates against the real Llama 3.0, 3.1 and 3.2 templates rendered
// by transformers — all in testdata/tokenizer/llama3_reference.json
// (scripts/tokenizer/make-llama3-reference.py).

package tokenizer

import (
	"slices"
	"strings"
	"testing"
)

type llama3Reference struct {
	ExtraDocs  []corpusDoc         `json:"extra_docs"`
	IDs        map[string][]int    `json:"ids"`
	IDsWithBOS map[string][]int    `json:"ids_with_bos"`
	Pieces     map[string][]string `json:"pieces"`
	TinyIDs    map[string][]int    `json:"tiny_ids"`
	Decode     []struct {
		IDs         []int  `json:"ids"`
		SkipSpecial bool   `json:"skip_special"`
		Text        string `json:"text"`
	} `json:"decode"`
	Chat []struct {
		Name                string            `json:"name"`
		Messages            []Message         `json:"messages"`
		AddGenerationPrompt bool              `json:"add_generation_prompt"`
		Llama3              string            `json:"llama3"`
		Llama31             string            `json:"llama3_1"`
		Llama31IDs          []int             `json:"llama3_1_ids"`
		Llama32             map[string]string `json:"llama3_2"`
	} `json:"chat"`
}

// llama3Docs reads the reference and returns it with the documents it
// covers: the shared corpus and the Llama-specific extras.
func llama3Docs(t *testing.T) (*llama3Reference, []corpusDoc) {
	t.Helper()
	var ref llama3Reference
	readJSON(t, testdataPath(t, "llama3_reference.json"), &ref)
	docs := append(testCorpus(t), ref.ExtraDocs...)
	if len(ref.IDs) != len(docs) || len(ref.Pieces) != len(docs) || len(ref.TinyIDs) != len(docs) {
		t.Fatalf("llama3_reference.json covers %d/%d/%d documents, the corpus and extras are %d: rerun make-llama3-reference.py",
			len(ref.IDs), len(ref.Pieces), len(ref.TinyIDs), len(docs))
	}
	return &ref, docs
}

func TestLlama3EncodeMatchesHuggingFace(t *testing.T) {
	ref, docs := llama3Docs(t)
	tok := fixtureTokenizer(t, "llama3")
	checkIDs(t, tok, docs, ref.IDs)
	sp := tok.Special()
	if sp.BOS != 128000 || sp.EOS != 128009 {
		t.Errorf("Special() = %+v, want BOS <|begin_of_text|> 128000 and EOS <|eot_id|> 128009", sp)
	}
	// add_special_tokens=True is the BOS, then what Encode returns
	for _, d := range ref.ExtraDocs[:len(ref.IDsWithBOS)] {
		if got := append([]int{sp.BOS}, tok.Encode(d.Text)...); !slices.Equal(got, ref.IDsWithBOS[d.Name]) {
			t.Errorf("%s with the BOS: got %v, want %v", d.Name, got, ref.IDsWithBOS[d.Name])
		}
	}
	digits := 0
	for _, id := range tok.Encode("1234567") {
		if s, _ := tok.Token(id); len(s) == 3 {
			digits++
		}
	}
	if digits != 2 {
		t.Errorf("1234567 should be 123|456|7 under Llama 3's \\p{N}{1,3}, got %v", tok.Encode("1234567"))
	}
}

func TestLlama3PiecesMatchHuggingFace(t *testing.T) {
	ref, docs := llama3Docs(t)
	failures := 0
	for _, d := range docs {
		var got []string
		llama3Split.pieces(d.Text, func(p string) { got = append(got, p) })
		if !slices.Equal(got, ref.Pieces[d.Name]) {
			if failures++; failures <= 5 {
				t.Errorf("%s %q:\n got  %q\n want %q", d.Name, d.Text, got, ref.Pieces[d.Name])
			}
		}
	}
	if failures > 0 {
		t.Errorf("%d of %d documents split differently from Hugging Face's Split(Llama 3 pattern)", failures, len(docs))
	}
}

func TestLlama3DecodeMatchesHuggingFace(t *testing.T) {
	ref, _ := llama3Docs(t)
	tok := fixtureTokenizer(t, "llama3")
	for i, c := range ref.Decode {
		got := tok.Decode(c.IDs)
		if c.SkipSpecial {
			got = tok.DecodeSkipSpecial(c.IDs)
		}
		if got != c.Text {
			t.Errorf("decode case %d %v (skip special %v): got %q, want %q", i, c.IDs, c.SkipSpecial, got, c.Text)
		}
	}
}

func TestTinyLlama3MatchesHuggingFace(t *testing.T) {
	ref, docs := llama3Docs(t)
	tok, err := Load(testdataPath(t, "tiny-llama3"))
	if err != nil {
		t.Fatal(err)
	}
	checkIDs(t, tok, docs, ref.TinyIDs)
	if f, err := tok.DetectChatTemplate(); err != nil || f != ChatTemplateLlama31 {
		t.Errorf("tiny-llama3's template detected as %v, %v; want llama3.1", f, err)
	}
}

func TestLlama3ChatMatchesTransformers(t *testing.T) {
	ref, _ := llama3Docs(t)
	tok := fixtureTokenizer(t, "llama3")
	if f, err := tok.DetectChatTemplate(); err != nil || f != ChatTemplateLlama3 {
		t.Errorf("the fixture's Llama 3.0 template detected as %v, %v; want llama3", f, err)
	}
	if len(ref.Chat) < 15 {
		t.Fatalf("llama3_reference.json has %d chat cases, want the full set", len(ref.Chat))
	}
	for _, c := range ref.Chat {
		check := func(what string, opt ChatOptions, want string) {
			opt.AddGenerationPrompt = c.AddGenerationPrompt
			got, err := RenderChat(c.Messages, opt)
			if err != nil {
				t.Errorf("%s (%s): %v", c.Name, what, err)
			} else if got != want {
				t.Errorf("%s (%s):\n got  %q\n want %q", c.Name, what, got, want)
			}
		}
		check("llama3", ChatOptions{Template: ChatTemplateLlama3}, c.Llama3)
		check("llama3.1, default date", ChatOptions{Template: ChatTemplateLlama31}, c.Llama31)
		for date, want := range c.Llama32 {
			check("llama3.2, "+date, ChatOptions{Template: ChatTemplateLlama31, Date: date}, want)
		}
		if got := tok.Encode(c.Llama31); !slices.Equal(got, c.Llama31IDs) {
			t.Errorf("%s: ids of the llama3.1 rendering:\n%s", c.Name, describeMismatch(tok, got, c.Llama31IDs))
		}
	}
}

// A chat date must be written as the Llama 3.1 templates write it; a bad
// one is an error at render time (and at a run's start, through
// CheckChatDate), never a prompt with a date no real template would write.
func TestChatDate(t *testing.T) {
	for _, ok := range []string{"", "26 Jul 2024", "01 Feb 2025", "29 Feb 2024"} {
		if err := CheckChatDate(ok); err != nil {
			t.Errorf("CheckChatDate(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"2024-07-26", "1 Feb 2025", "26 July 2024", "26 jul 2024", "30 Feb 2024", "today"} {
		err := CheckChatDate(bad)
		if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), DefaultLlamaDate) {
			t.Errorf("CheckChatDate(%q) = %v, want an error naming it and an example", bad, err)
		}
	}
	msgs := []Message{{Role: "user", Content: "hi"}}
	out, err := RenderChat(msgs, ChatOptions{Template: ChatTemplateLlama31, Date: "01 Feb 2025"})
	if err != nil || !strings.Contains(out, "Today Date: 01 Feb 2025\n") {
		t.Fatalf("llama3.1 with a date: %q, %v", out, err)
	}
	if _, err := RenderChat(msgs, ChatOptions{Template: ChatTemplateLlama31, Date: "2025-02-01"}); err == nil {
		t.Fatal("a malformed date rendered")
	}
}

// IgnoredSettings: thinking outside Qwen3 and a date outside Llama 3.1 are
// named, one line each; nothing else is.
func TestIgnoredSettings(t *testing.T) {
	for _, c := range []struct {
		family   ChatTemplate
		thinking bool
		date     string
		want     []string
	}{
		{ChatTemplateQwen3, true, "", nil},
		{ChatTemplateQwen3, false, "", nil},
		{ChatTemplateLlama31, false, "01 Feb 2025", nil},
		{ChatTemplateLlama31, true, "", []string{"thinking: true has no effect: the llama3.1 chat template"}},
		{ChatTemplateQwen25, true, "01 Feb 2025", []string{"thinking: true has no effect: the qwen2.5", `chat_date "01 Feb 2025" has no effect: the qwen2.5`}},
		{ChatTemplateLlama3, false, "01 Feb 2025", []string{`chat_date "01 Feb 2025" has no effect: the llama3 chat template`}},
	} {
		got := IgnoredSettings(c.family, c.thinking, c.date)
		if len(got) != len(c.want) {
			t.Errorf("%s thinking %v date %q: %q, want %d lines", c.family, c.thinking, c.date, got, len(c.want))
			continue
		}
		for i := range got {
			if !strings.HasPrefix(got[i], c.want[i]) || strings.Contains(got[i], "\n") {
				t.Errorf("%s: line %d = %q, want one line starting %q", c.family, i, got[i], c.want[i])
			}
		}
	}
}
