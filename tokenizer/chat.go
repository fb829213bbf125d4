// Chat templates: the ChatML renderings of Qwen2.5 and Qwen3 (here) and the
// header-token renderings of Llama 3 (chat_llama.go), written out in Go
// instead of interpreted from the Jinja source in tokenizer_config.json.
// Tests compare them with the real templates rendered by a Jinja engine
// (testdata/tokenizer/chat_reference.json).
//
// Rendered, as the templates do:
//   - system, user, assistant and tool messages; "tool" messages in a row
//     share one user turn, each wrapped in <tool_response>…</tool_response>;
//   - Qwen2.5: the default system prompt "You are Qwen, created by Alibaba
//     Cloud. You are a helpful assistant." when the first message is not a
//     system message;
//   - Qwen3: assistant turns after the last real user query carry their
//     reasoning in a <think> block (the last assistant turn always does, with
//     an empty block when it has no reasoning); earlier assistant turns lose
//     everything up to their last </think>;
//   - add_generation_prompt, and Qwen3's enable_thinking=false, which appends
//     an empty think block to the generation prompt.
//
// Not rendered (departures from the templates): tools and tool_calls (a
// Message has only a role and text content) and reasoning_content given
// separately from content. An unknown role is an error here; the templates
// silently drop such messages.

package tokenizer

import (
	"fmt"
	"strings"
)

// Message is one chat message: Role is "system", "user", "assistant" or "tool".
type Message struct {
	Role, Content string
}

// ChatTemplate names the template family ApplyChatTemplate renders.
type ChatTemplate int

const (
	// ChatTemplateAuto detects the family from the tokenizer's chat_template.
	ChatTemplateAuto ChatTemplate = iota
	ChatTemplateQwen25
	ChatTemplateQwen3
	ChatTemplateLlama3  // Llama 3.0 Instruct
	ChatTemplateLlama31 // Llama 3.1, 3.2, 3.3 Instruct: the dated system block
)

var chatTemplates = []ChatTemplate{ChatTemplateAuto, ChatTemplateQwen25, ChatTemplateQwen3, ChatTemplateLlama3, ChatTemplateLlama31}

func (c ChatTemplate) String() string {
	switch c {
	case ChatTemplateAuto:
		return "auto"
	case ChatTemplateQwen25:
		return "qwen2.5"
	case ChatTemplateQwen3:
		return "qwen3"
	case ChatTemplateLlama3:
		return "llama3"
	case ChatTemplateLlama31:
		return "llama3.1"
	}
	return fmt.Sprintf("ChatTemplate(%d)", int(c))
}

// ParseChatTemplate reads a family name as written in configs and flags:
// "auto", "qwen2.5", "qwen3", "llama3" or "llama3.1".
func ParseChatTemplate(name string) (ChatTemplate, error) {
	for _, c := range chatTemplates {
		if name == c.String() {
			return c, nil
		}
	}
	return 0, fmt.Errorf("chat template: unknown family %q; want auto, qwen2.5, qwen3, llama3 or llama3.1", name)
}

// ChatOptions are the template variables a render can set.
type ChatOptions struct {
	AddGenerationPrompt bool         // end with the opening of an assistant turn
	DisableThinking     bool         // Qwen3's enable_thinking=false; no effect on the others
	Date                string       // Llama 3.1+'s "Today Date" (date_string); "": DefaultLlamaDate
	Template            ChatTemplate // zero value: detect from tokenizer_config.json
}

const qwen25DefaultSystem = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."

// DetectChatTemplate returns the family of the tokenizer's chat_template:
// Qwen3 when it mentions enable_thinking, Qwen2.5 when it holds Qwen2.5's
// default system prompt, Llama 3.1 when it has the header tokens and the
// knowledge-cutoff system block, Llama 3 when it has the header tokens and
// reads add_generation_prompt. Anything else is an error, not a guess.
func (t *Tokenizer) DetectChatTemplate() (ChatTemplate, error) {
	src := t.chatTemplate
	const fix = "troupe renders the Qwen2.5, Qwen3, Llama 3 and Llama 3.1 chat templates: give the model one of them as chat_template in its tokenizer_config.json (or a chat_template.jinja beside it), e.g. from the base model it was trained from"
	switch {
	case src == "":
		return 0, fmt.Errorf("chat template: %s has no chat_template in a tokenizer_config.json or chat_template.jinja beside it; %s", t.source, fix)
	case strings.Contains(src, "<|im_start|>") && strings.Contains(src, "enable_thinking"):
		return ChatTemplateQwen3, nil
	case strings.Contains(src, "<|im_start|>") && strings.Contains(src, qwen25DefaultSystem):
		return ChatTemplateQwen25, nil
	case strings.Contains(src, "<|start_header_id|>") && strings.Contains(src, strings.TrimSuffix(llamaKnowledgeCut, "\n")):
		return ChatTemplateLlama31, nil
	case strings.Contains(src, "<|start_header_id|>") && strings.Contains(src, "add_generation_prompt"):
		return ChatTemplateLlama3, nil
	case strings.Contains(src, "<|start_header_id|>"):
		return 0, fmt.Errorf("chat template: the chat_template beside %s has Llama 3's header tokens but ignores add_generation_prompt (the first Llama 3 release appends the assistant header always); %s", t.source, fix)
	}
	return 0, fmt.Errorf("chat template: the chat_template beside %s is none of Qwen3's (mentions enable_thinking), Qwen2.5's (its default system prompt), Llama 3.1's (header tokens, knowledge-cutoff system block) or Llama 3's (header tokens); %s", t.source, fix)
}

// ApplyChatTemplate renders msgs as the model's chat template does
// (tokenize=False). Encode the result to get the prompt ids.
func (t *Tokenizer) ApplyChatTemplate(msgs []Message, opt ChatOptions) (string, error) {
	if opt.Template == ChatTemplateAuto {
		family, err := t.DetectChatTemplate()
		if err != nil {
			return "", err
		}
		opt.Template = family
	}
	return RenderChat(msgs, opt)
}

// RenderChat renders msgs with the family opt.Template names (not Auto).
func RenderChat(msgs []Message, opt ChatOptions) (string, error) {
	if len(msgs) == 0 {
		return "", fmt.Errorf("chat template: no messages")
	}
	if err := CheckChatDate(opt.Date); err != nil {
		return "", fmt.Errorf("chat template: %w", err)
	}
	for i, m := range msgs {
		switch m.Role {
		case "system", "user", "assistant", "tool":
		default:
			return "", fmt.Errorf("chat template: messages[%d].role: unknown role %q; want system, user, assistant or tool", i, m.Role)
		}
	}
	var sb strings.Builder
	switch opt.Template {
	case ChatTemplateQwen25:
		renderQwen25(&sb, msgs, opt)
	case ChatTemplateQwen3:
		renderQwen3(&sb, msgs, opt)
	case ChatTemplateLlama3:
		renderLlama3(&sb, msgs, opt)
	case ChatTemplateLlama31:
		renderLlama31(&sb, msgs, opt)
	default:
		return "", fmt.Errorf("chat template: RenderChat needs a family, got %v; want qwen2.5, qwen3, llama3 or llama3.1", opt.Template)
	}
	return sb.String(), nil
}

func writeTurn(sb *strings.Builder, role, content string) {
	sb.WriteString("<|im_start|>" + role + "\n" + content + "<|im_end|>\n")
}

// writeToolResponse writes a "tool" message; a run of them shares one user turn.
func writeToolResponse(sb *strings.Builder, msgs []Message, i int) {
	if i == 0 || msgs[i-1].Role != "tool" {
		sb.WriteString("<|im_start|>user")
	}
	sb.WriteString("\n<tool_response>\n" + msgs[i].Content + "\n</tool_response>")
	if i == len(msgs)-1 || msgs[i+1].Role != "tool" {
		sb.WriteString("<|im_end|>\n")
	}
}

func renderQwen25(sb *strings.Builder, msgs []Message, opt ChatOptions) {
	if msgs[0].Role == "system" {
		writeTurn(sb, "system", msgs[0].Content)
	} else {
		writeTurn(sb, "system", qwen25DefaultSystem)
	}
	for i, m := range msgs {
		switch {
		case m.Role == "system" && i == 0:
		case m.Role == "tool":
			writeToolResponse(sb, msgs, i)
		default:
			writeTurn(sb, m.Role, m.Content)
		}
	}
	if opt.AddGenerationPrompt {
		sb.WriteString("<|im_start|>assistant\n")
	}
}

func renderQwen3(sb *strings.Builder, msgs []Message, opt ChatOptions) {
	if msgs[0].Role == "system" {
		writeTurn(sb, "system", msgs[0].Content)
	}
	// The last user message that is not a wrapped tool response; assistant
	// turns after it keep their reasoning.
	lastQuery := len(msgs) - 1
	for i := len(msgs) - 1; i >= 0; i-- {
		c := msgs[i].Content
		if msgs[i].Role == "user" && !(strings.HasPrefix(c, "<tool_response>") && strings.HasSuffix(c, "</tool_response>")) {
			lastQuery = i
			break
		}
	}
	for i, m := range msgs {
		switch m.Role {
		case "system":
			if i > 0 {
				writeTurn(sb, "system", m.Content)
			}
		case "user":
			writeTurn(sb, "user", m.Content)
		case "tool":
			writeToolResponse(sb, msgs, i)
		case "assistant":
			content, reasoning := splitReasoning(m.Content)
			sb.WriteString("<|im_start|>assistant\n")
			if i > lastQuery && (i == len(msgs)-1 || reasoning != "") {
				sb.WriteString("<think>\n" + strings.Trim(reasoning, "\n") + "\n</think>\n\n" + strings.TrimLeft(content, "\n"))
			} else {
				sb.WriteString(content)
			}
			sb.WriteString("<|im_end|>\n")
		}
	}
	if opt.AddGenerationPrompt {
		sb.WriteString("<|im_start|>assistant\n")
		if opt.DisableThinking {
			sb.WriteString("<think>\n\n</think>\n\n")
		}
	}
}

// splitReasoning separates an assistant message into its answer and its
// reasoning as Qwen3's template does: the answer is what follows the last
// </think>, the reasoning what lies between the last <think> before the
// first </think> and that </think>, with newlines trimmed at the joins.
func splitReasoning(s string) (content, reasoning string) {
	first := strings.Index(s, "</think>")
	if first < 0 {
		return s, ""
	}
	last := strings.LastIndex(s, "</think>")
	content = strings.TrimLeft(s[last+len("</think>"):], "\n")
	before := strings.TrimRight(s[:first], "\n")
	if k := strings.LastIndex(before, "<think>"); k >= 0 {
		before = before[k+len("<think>"):]
	}
	return content, strings.TrimLeft(before, "\n")
}
