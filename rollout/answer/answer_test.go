package answer

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestFinal(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
		src  Source
	}{
		{`The answer is \boxed{42}.`, "42", SourceBoxed},
		{`\boxed{1} then \boxed{2}`, "2", SourceBoxed},
		{`\boxed{\frac{1}{2}}`, `\frac{1}{2}`, SourceBoxed},
		{`\boxed{\frac{\sqrt{3}}{2}} end`, `\frac{\sqrt{3}}{2}`, SourceBoxed},
		{`\boxed{ 7 }`, "7", SourceBoxed},
		{`\boxed {8}`, "8", SourceBoxed},
		{`so $\boxed 5$.`, "5", SourceBoxed},
		{`\boxed 5.`, "5", SourceBoxed},
		{`\fbox{9}`, "9", SourceBoxed},
		{`\boxed{\{1, 2\}}`, `\{1, 2\}`, SourceBoxed},
		{`\boxed{3} and a cut-off \boxed{\frac{1}{`, "3", SourceBoxed},
		{`\boxed{} \boxed{}`, "", SourceNone},
		{`\boxed{4} \boxed{}`, "4", SourceBoxed},
		{`\boxedx{4}`, "", SourceNone},
		{`ends with \boxed`, "", SourceNone},
		{"Work.\n#### 1,234\nDone", "1,234", SourceHash},
		{"#### 5\n\\boxed{6}", "6", SourceBoxed},
		{`<think>\boxed{1}</think>So \boxed{2}`, "2", SourceBoxed},
		{`<think>\boxed{1}</think>no answer`, "", SourceNone},
		{`<think>\boxed{1} unfinished`, "", SourceNone},
		{`a</think>b</think>\boxed{3}`, "3", SourceBoxed},
		{`\boxed{a}}`, "a", SourceBoxed},
		{`no answer`, "", SourceNone},
		{`####   `, "", SourceNone},
	} {
		got, src := Final(tc.in)
		if got != tc.want || src != tc.src {
			t.Errorf("Final(%q) = %q (%v), want %q (%v)", tc.in, got, src, tc.want, tc.src)
		}
	}
}

func TestBalancedGroup(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"{a{b}c}d", "a{b}c", true},
		{`{a\}b}`, `a\}b`, true},
		{`{a\\}b}`, `a\\`, true},
		{"{a{b}", "", false},
		{"a}", "", false},
		{"", "", false},
	} {
		got, ok := BalancedGroup(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("BalancedGroup(%q) = %q %v, want %q %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestLastTag(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		n        int
	}{
		{"<verify>approve</verify>", "approve", 1},
		{"<verify>a</verify> x <verify>b</verify>", "b", 2},
		{"<verify>a</verify> <verify>unclosed", "a", 1},
		{"<verify></verify>", "", 1},
		{"none", "", 0},
	} {
		got, n := LastTag(tc.in, "verify")
		if got != tc.want || n != tc.n {
			t.Errorf("LastTag(%q) = %q %d, want %q %d", tc.in, got, n, tc.want, tc.n)
		}
	}
}

// FuzzFinal: never panics; a found answer is a substring of the input and
// keeps valid UTF-8 valid; a found tag is really in the input.
func FuzzFinal(f *testing.F) {
	for _, s := range []string{`\boxed{1}`, `\boxed{\frac{1}{2}}`, `</think>\boxed 3`, "#### 4", `\boxed{{{`, `\fbox}`, `<think>`, `\boxed{\}`, "\\boxed\xff{1}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, src := Final(s)
		if src == SourceNone && got != "" {
			t.Fatalf("no source but answer %q", got)
		}
		if src != SourceNone && !strings.Contains(s, got) {
			t.Fatalf("answer %q is not part of the input", got)
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("answer %q cuts a UTF-8 sequence of a valid input", got)
		}
		if c, n := LastTag(s, "verify"); n == 0 && c != "" || n > 0 && !strings.Contains(s, "<verify>"+c+"</verify>") {
			t.Fatalf("LastTag = %q, %d", c, n)
		}
	})
}
