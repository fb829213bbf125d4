package datasets

// python_test.go — the Python string operations against Python itself: the
// expected values were printed by CPython 3 (repr, str, splitlines, strip,
// re.sub with drmas_math.py's pattern, and PettingLLMs' extract_solution
// run from its load_math.py) and are copied here as data.

import (
	"encoding/json"
	"math"
	"slices"
	"testing"
)

func TestPyRepr(t *testing.T) {
	for _, c := range []struct {
		v    any
		want string
	}{
		{27.0, "27.0"}, {0.25, "0.25"}, {1e16, "1e+16"}, {1e15, "1000000000000000.0"}, {0.0001, "0.0001"},
		{0.00001, "1e-05"}, {1.5e-7, "1.5e-07"}, {math.Copysign(0, -1), "-0.0"}, {123456789.125, "123456789.125"},
		{1.0 / 3, "0.3333333333333333"}, {math.NaN(), "nan"}, {math.Inf(1), "inf"}, {2.5e300, "2.5e+300"},
		{float32(0.5), "0.5"}, {int64(73), "73"}, {int32(-4), "-4"}, {true, "True"}, {nil, "None"},
		{json.Number("73"), "73"}, {json.Number("27.0"), "27.0"}, {json.Number("1e2"), "100.0"},
		{"a'b", `"a'b"`}, {`a"b`, `'a"b'`}, {`a'b"c`, `'a\'b"c'`}, {"tab\tnl\nback\\", `'tab\tnl\nback\\'`},
		{"\x00\x7f\u200b\U0001F600é", `'\x00\x7f\u200b` + "\U0001F600é'"}, {"plain", "'plain'"},
		{[]any{int64(1), "x", 2.0, nil, true}, "[1, 'x', 2.0, None, True]"},
	} {
		if got := pyRepr(c.v); got != c.want {
			t.Errorf("repr(%#v) = %s, want %s", c.v, got, c.want)
		}
	}
	if pyStr("text") != "text" || pyStr(int64(702)) != "702" || pyStr(27.0) != "27.0" {
		t.Errorf("str() of a string, an int and a float: %s %s %s", pyStr("text"), pyStr(int64(702)), pyStr(27.0))
	}
}

func TestPySplitLinesAndStrip(t *testing.T) {
	for _, c := range []struct {
		s    string
		want []string
	}{
		{"a\nb\r\nc\rd\x0be\x0cf\x1cg\u0085h\u2028i\u2029j", []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}},
		{"x\n", []string{"x"}}, {"", nil}, {"\n\n", []string{"", ""}}, {"a\r\n", []string{"a"}},
	} {
		if got := pySplitLines(c.s); !slices.Equal(got, c.want) {
			t.Errorf("%q.splitlines() = %q, want %q", c.s, got, c.want)
		}
	}
	if got := pyStrip(" \x1c\t\u00a0hi\u2003 \x1f"); got != "hi" {
		t.Errorf("strip = %q, want hi", got)
	}
}

func TestInstructionSuffix(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Q?\n\nLet's think step by step and output the final answer within \\boxed{}.", "Q?"},
		{`Q?\n\nLets think  step by step and output the final answer within\boxed{}.` + "  \n", "Q?"},
		{"Q? LET'S THINK STEP BY STEP AND OUTPUT THE FINAL ANSWER WITHIN \\boxed{}.", "Q?"},
		{"Q? Let's think step by step and output the final answer within \\boxed{}. Then more.", "Q? Let's think step by step and output the final answer within \\boxed{}. Then more."},
		{"Q?\r\n\r\nLet's think step by step and output the final answer within \\boxed{}.\n", "Q?"},
	} {
		if got := instructionSuffix.ReplaceAllString(c.in, ""); got != c.want {
			t.Errorf("sub(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestExtractSolution(t *testing.T) {
	for _, c := range []struct {
		in   any
		want string
	}{
		{"42", "42"}, {"#### 1,234 apples", "1234 apples"}, {`The answer is \boxed{12}.`, "12"},
		{`\boxed{\frac{1}{2}}`, `\boxed{\frac{1}{2}}`}, {"Final Answer: x = 3\nmore", "x = 3"}, {"so answer:   7  ", "7"},
		{"line one\n\n  1,000  \n", "1000"}, {`\frac{3}{4}`, `\frac{3}{4}`},
		{"a very long last line that is more than twenty characters", "a very long last line that is more than twenty characters"},
		{"  spaced  ", "spaced"}, {"", ""}, {"ANSWER : 9", "9"}, {"x^2+1", "x^2+1"}, {"tail\x0bnext_1", "next_1"},
		{int64(73), "73"}, {27.0, "27.0"},
	} {
		if got := extractSolution(c.in); got != c.want {
			t.Errorf("extract_solution(%#v) = %q, want %q", c.in, got, c.want)
		}
	}
}
