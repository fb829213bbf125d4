// Chat template tests against testdata/tokenizer/chat_reference.json: the
// real Qwen3 and Qwen2.5 templates rendered by @huggingface/jinja
// (scripts/tokenizer/make-chat-reference.mjs).

package tokenizer

import (
	"strings"
	"testing"
)

type chatCase struct {
	Name                string    `json:"name"`
	Messages            []Message `json:"messages"`
	AddGenerationPrompt bool      `json:"add_generation_prompt"`
	EnableThinking      *bool     `json:"enable_thinking"`
	Qwen3               string    `json:"qwen3"`
	Qwen25              string    `json:"qwen2_5"`
}

func chatCases(t *testing.T) []chatCase {
	var ref struct {
		Cases []chatCase `json:"cases"`
	}
	readJSON(t, testdataPath(t, "chat_reference.json"), &ref)
	if len(ref.Cases) < 15 {
		t.Fatalf("chat_reference.json has %d cases, want the full set", len(ref.Cases))
	}
	return ref.Cases
}

func (c chatCase) options(family ChatTemplate) ChatOptions {
	return ChatOptions{
		AddGenerationPrompt: c.AddGenerationPrompt,
		DisableThinking:     c.EnableThinking != nil && !*c.EnableThinking,
		Template:            family,
	}
}

func TestRenderChatMatchesJinja(t *testing.T) {
	for _, c := range chatCases(t) {
		for _, f := range []struct {
			family ChatTemplate
			want   string
		}{{ChatTemplateQwen3, c.Qwen3}, {ChatTemplateQwen25, c.Qwen25}} {
			got, err := RenderChat(c.Messages, c.options(f.family))
			if err != nil {
				t.Errorf("%s (%v): %v", c.Name, f.family, err)
				continue
			}
			if got != f.want {
				t.Errorf("%s (%v):\n got  %q\n want %q", c.Name, f.family, got, f.want)
			}
		}
	}
}

// TestApplyChatTemplateDetectsFamily loads the real tokenizers and the tiny
// one and lets ApplyChatTemplate pick the family from chat_template.
func TestApplyChatTemplateDetectsFamily(t *testing.T) {
	tiny, err := Load(testdataPath(t, "tiny"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tok  *Tokenizer
		name string
		want ChatTemplate
	}{
		{fixtureTokenizer(t, "qwen3"), "qwen3", ChatTemplateQwen3},
		{fixtureTokenizer(t, "qwen2_5"), "qwen2_5", ChatTemplateQwen25},
		{tiny, "tiny", ChatTemplateQwen3},
	} {
		family, err := tc.tok.DetectChatTemplate()
		if err != nil || family != tc.want {
			t.Errorf("%s: DetectChatTemplate() = %v, %v; want %v", tc.name, family, err, tc.want)
			continue
		}
		for _, c := range chatCases(t) {
			got, err := tc.tok.ApplyChatTemplate(c.Messages, c.options(ChatTemplateAuto))
			want := c.Qwen3
			if tc.want == ChatTemplateQwen25 {
				want = c.Qwen25
			}
			if err != nil || got != want {
				t.Errorf("%s %s: ApplyChatTemplate = %q, %v; want %q", tc.name, c.Name, got, err, want)
			}
		}
	}
}

func TestChatTemplateErrors(t *testing.T) {
	tok, err := Load(testdataPath(t, "tiny"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tok.ApplyChatTemplate(nil, ChatOptions{}); err == nil || !strings.Contains(err.Error(), "no messages") {
		t.Errorf("no messages: error %v", err)
	}
	_, err = tok.ApplyChatTemplate([]Message{{"bot", "hi"}}, ChatOptions{})
	if err == nil || !strings.Contains(err.Error(), `messages[0].role: unknown role "bot"`) {
		t.Errorf("unknown role: error %v", err)
	}

	unknown := *tok
	unknown.chatTemplate = "{% for m in messages %}{{ m.content }}{% endfor %}"
	if _, err := unknown.ApplyChatTemplate([]Message{{"user", "hi"}}, ChatOptions{}); err == nil || !strings.Contains(err.Error(), "give the model one of them as chat_template in its tokenizer_config.json") {
		t.Errorf("unrecognised template: error %v, want one telling how to give the model a template troupe renders", err)
	}
	if got, err := unknown.ApplyChatTemplate([]Message{{"user", "hi"}}, ChatOptions{Template: ChatTemplateQwen25}); err != nil || !strings.HasPrefix(got, "<|im_start|>system\nYou are Qwen") {
		t.Errorf("forced qwen2.5: %q, %v", got, err)
	}
	none := *tok
	none.chatTemplate = ""
	if _, err := none.ApplyChatTemplate([]Message{{"user", "hi"}}, ChatOptions{}); err == nil || !strings.Contains(err.Error(), "no chat_template") {
		t.Errorf("missing template: error %v", err)
	}
}

func TestParseChatTemplate(t *testing.T) {
	for _, name := range []string{"auto", "qwen2.5", "qwen3", "llama3", "llama3.1"} {
		c, err := ParseChatTemplate(name)
		if err != nil || c.String() != name {
			t.Errorf("ParseChatTemplate(%q) = %v, %v", name, c, err)
		}
	}
	if _, err := ParseChatTemplate("mistral"); err == nil || !strings.Contains(err.Error(), "want auto, qwen2.5, qwen3, llama3 or llama3.1") {
		t.Errorf("ParseChatTemplate(mistral): error %v", err)
	}
}
