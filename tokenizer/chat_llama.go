// Llama 3 chat templates, written out in Go: the header-token format
//
//	<|begin_of_text|><|start_header_id|>ROLE<|end_header_id|>\n\nCONTENT<|eot_id|>…
//
// in its two published variants (tests compare both with the real templates
// rendered by transformers: testdata/tokenizer/llama3_reference.json).
//
//   - llama3 (Llama 3.0 Instruct): each message as above with its content
//     trimmed, the BOS before the first; add_generation_prompt opens an
//     assistant header. No default system prompt.
//   - llama3.1 (Llama 3.1, 3.2 and 3.3 Instruct): always a system block that
//     starts with "Cutting Knowledge Date: December 2023\nToday Date: DATE\n\n"
//     and then holds the (trimmed) first system message, if any; "tool"
//     messages become "ipython" turns whose content is written as a JSON
//     string (the templates' `content | tojson`: a string is iterable in
//     Jinja) and not trimmed.
//
// Departures: the date. Llama 3.2's template writes today's date when the
// renderer defines strftime_now (transformers does), 3.1's writes
// "26 Jul 2024". Here it is ChatOptions.Date (an agent's chat_date in a run
// config), "26 Jul 2024" when empty, for every 3.x model: a prompt that
// changes with the calendar would make runs unrepeatable. A date must be
// written as the templates write it, strftime's "%d %b %Y" (CheckChatDate). Not rendered: tools, builtin_tools and tool_calls (a Message
// has only a role and text). The first Llama 3.0 template, which appends
// the assistant header unconditionally, is not detected (DetectChatTemplate
// says so); it renders as llama3 with AddGenerationPrompt.

package tokenizer

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// DefaultLlamaDate is the "Today Date" the Llama 3.1+ system block carries
// when ChatOptions.Date is empty: the templates' own fallback.
const DefaultLlamaDate = "26 Jul 2024"

// CheckChatDate accepts "" and dates written as Llama 3.1+ templates write
// them ("26 Jul 2024", "01 Feb 2025": strftime's "%d %b %Y").
func CheckChatDate(date string) error {
	if date == "" {
		return nil
	}
	if d, err := time.Parse("02 Jan 2006", date); err != nil || d.Format("02 Jan 2006") != date {
		return fmt.Errorf("chat date %q: write it as the Llama 3.1 templates do, two-digit day, English month abbreviation, year (e.g. %q)", date, DefaultLlamaDate)
	}
	return nil
}

// IgnoredSettings names, one line each, the settings a template family
// ignores: thinking (only Qwen3's template has enable_thinking) and a date
// (only Llama 3.1's writes one).
func IgnoredSettings(family ChatTemplate, thinking bool, date string) []string {
	var out []string
	if thinking && family != ChatTemplateQwen3 {
		out = append(out, fmt.Sprintf("thinking: true has no effect: the %s chat template has no thinking mode (only Qwen3's has)", family))
	}
	if date != "" && family != ChatTemplateLlama31 {
		out = append(out, fmt.Sprintf("chat_date %q has no effect: the %s chat template writes no date (only Llama 3.1's and later do)", date, family))
	}
	return out
}

const (
	llamaBOS          = "<|begin_of_text|>"
	llamaEOT          = "<|eot_id|>"
	llamaKnowledgeCut = "Cutting Knowledge Date: December 2023\n"
)

func writeLlamaTurn(sb *strings.Builder, role, content string) {
	sb.WriteString("<|start_header_id|>" + role + "<|end_header_id|>\n\n" + content + llamaEOT)
}

func renderLlama3(sb *strings.Builder, msgs []Message, opt ChatOptions) {
	sb.WriteString(llamaBOS)
	for _, m := range msgs {
		writeLlamaTurn(sb, m.Role, pyStrip(m.Content))
	}
	if opt.AddGenerationPrompt {
		sb.WriteString("<|start_header_id|>assistant<|end_header_id|>\n\n")
	}
}

func renderLlama31(sb *strings.Builder, msgs []Message, opt ChatOptions) {
	date := opt.Date
	if date == "" {
		date = DefaultLlamaDate
	}
	system := ""
	if msgs[0].Role == "system" {
		system = pyStrip(msgs[0].Content)
		msgs = msgs[1:]
	}
	sb.WriteString(llamaBOS)
	writeLlamaTurn(sb, "system", llamaKnowledgeCut+"Today Date: "+date+"\n\n"+system)
	for _, m := range msgs {
		if m.Role == "tool" {
			writeLlamaTurn(sb, "ipython", pyJSONString(m.Content))
			continue
		}
		writeLlamaTurn(sb, m.Role, pyStrip(m.Content))
	}
	if opt.AddGenerationPrompt {
		sb.WriteString("<|start_header_id|>assistant<|end_header_id|>\n\n")
	}
}

// pyStrip is Jinja's trim filter: Python's str.strip(), which removes the
// characters str.isspace() accepts — Unicode White_Space and the
// information separators U+001C–U+001F, which Go's unicode.IsSpace lacks.
func pyStrip(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) })
}

// pyJSONString is Python's json.dumps(s, ensure_ascii=False) of a string:
// quotes, backslashes and control characters escaped, everything else
// (non-ASCII, U+2028, "<") as it is.
func pyJSONString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		i += w
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20:
			b.WriteString(`\u00` + strconv.FormatInt(int64(r)>>4, 16) + strconv.FormatInt(int64(r)&15, 16))
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
