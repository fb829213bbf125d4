// Package answer finds the final answer and the tagged parts of a model's
// response text: the part after </think>, the last \boxed{…} with balanced
// braces, the GSM8K-style "#### answer" line, and the last <tag>…</tag>.
//
// Files: answer.go (all of it).
//
// What it is: plain string scanning, shared by the agents' output parsers
// (rollout) and the environments' rewards (rollout/env/…), so that "valid
// format" and "what gets scored" cannot disagree.
//
// What it deliberately is not: a normaliser or an equivalence check. Turning
// "\dfrac{1}{2}" and "0.5" into the same value is the math environment's job.
//
// Decisions (the reference systems leave them open):
//  1. Only text after the LAST "</think>" is searched. A response with an
//     opening "<think>" and no closing tag has no answer (it was cut off while
//     thinking) — see AfterThink.
//  2. "\boxed{…}" and "\fbox{…}" count; so does the brace-less form
//     "\boxed 5" (as MATH solutions write it), whose answer ends at the next
//     whitespace or "$". The last well-formed, non-empty box wins; an unclosed or
//     empty box is skipped, so a truncated final box falls back to an earlier complete one.
//  3. Escaped braces "\{" and "\}" inside a box are literal characters and do
//     not open or close groups.
package answer

import "strings"

// AfterThink returns the text after the last "</think>". If there is none,
// the whole text is returned, unless the text opens a "<think>" block that
// is never closed, in which case ok is false and the answer part is empty.
func AfterThink(text string) (rest string, ok bool) {
	if i := strings.LastIndex(text, "</think>"); i >= 0 {
		return text[i+len("</think>"):], true
	}
	if strings.Contains(text, "<think>") {
		return "", false
	}
	return text, true
}

// LastBoxed returns the content of the last well-formed \boxed{…} (or
// \fbox{…}, or brace-less "\boxed x") in text.
func LastBoxed(text string) (content string, ok bool) {
	end := len(text)
	for end > 0 {
		i, name := lastCommand(text[:end])
		if i < 0 {
			return "", false
		}
		if c, good := boxedAt(text, i+len(name)); good && c != "" {
			return c, true
		}
		end = i
	}
	return "", false
}

// lastCommand finds the last "\boxed" or "\fbox" in s.
func lastCommand(s string) (int, string) {
	b := strings.LastIndex(s, `\boxed`)
	f := strings.LastIndex(s, `\fbox`)
	if f > b {
		return f, `\fbox`
	}
	return b, `\boxed`
}

// boxedAt parses the argument of a box command whose name ends at j.
func boxedAt(text string, j int) (string, bool) {
	k := j
	for k < len(text) && (text[k] == ' ' || text[k] == '\t') {
		k++
	}
	if k < len(text) && text[k] == '{' {
		inner, good := BalancedGroup(text[k:])
		return strings.TrimSpace(inner), good
	}
	if k == j || k >= len(text) {
		return "", false // "\boxedx" is another command; "\boxed" at the end has no argument
	}
	stop := strings.IndexAny(text[k:], " \t\n$")
	if stop < 0 {
		stop = len(text) - k
	}
	arg := strings.TrimRight(text[k:k+stop], ".,;")
	return arg, arg != ""
}

// BalancedGroup takes a string starting with "{" and returns what lies
// between it and its matching "}". Escaped braces do not count.
func BalancedGroup(s string) (inner string, ok bool) {
	if s == "" || s[0] != '{' {
		return "", false
	}
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if i+1 < len(s) && (s[i+1] == '{' || s[i+1] == '}' || s[i+1] == '\\') {
				i++
			}
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return s[1:i], true
			}
		}
	}
	return "", false
}

// HashAnswer returns the text after the last "####" up to the end of its
// line (the GSM8K convention), trimmed.
func HashAnswer(text string) (string, bool) {
	i := strings.LastIndex(text, "####")
	if i < 0 {
		return "", false
	}
	rest := text[i+4:]
	if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
		rest = rest[:nl]
	}
	rest = strings.TrimSpace(rest)
	return rest, rest != ""
}

// Source says where a final answer was found.
type Source int

const (
	SourceNone  Source = iota // no answer found
	SourceBoxed               // \boxed{…}
	SourceHash                // "#### answer"
)

func (s Source) String() string {
	switch s {
	case SourceBoxed:
		return "boxed"
	case SourceHash:
		return "hash"
	}
	return "none"
}

// Final extracts the final answer of a response: after the last </think>,
// the last \boxed{…}; failing that, the last "#### answer".
func Final(response string) (string, Source) {
	rest, ok := AfterThink(response)
	if !ok {
		return "", SourceNone
	}
	if c, ok := LastBoxed(rest); ok {
		return c, SourceBoxed
	}
	if h, ok := HashAnswer(rest); ok {
		return h, SourceHash
	}
	return "", SourceNone
}

// LastTag returns the content of the last <name>…</name> in text, and how
// many complete such tags there are.
func LastTag(text, name string) (content string, count int) {
	open, close := "<"+name+">", "</"+name+">"
	found := false
	for s := text; ; {
		i := strings.Index(s, open)
		if i < 0 {
			break
		}
		s = s[i+len(open):]
		j := strings.Index(s, close)
		if j < 0 {
			break
		}
		content, found = s[:j], true
		count++
		s = s[j+len(close):]
	}
	if !found {
		return "", 0
	}
	return content, count
}
