package math

import (
	"testing"

	"troupe/rollout"
)

func TestNormalize(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{" 42 ", "42"},
		{"42.", "42"},
		{`\dfrac{1}{2}`, `\frac{1}{2}`},
		{`\tfrac12`, `\frac{1}{2}`},
		{`\frac1{10}`, `\frac{1}{10}`},
		{`\left( 1, 2 \right)`, "(1,2)"},
		{`\text{5 cm}`, "5"},
		{`5\text{ cm}^2`, "5"},
		{`12 dollars`, "12"},
		{`\$12.50`, "12.50"},
		{`90^\circ`, "90"},
		{`90^{\circ}`, "90"},
		{`45°`, "45"},
		{`50\%`, "50"},
		{`x = 3`, "3"},
		{`y=-\frac{3}{4}`, `-\frac{3}{4}`},
		{`x = y = 3`, "x=y=3"},
		{`1,234,567`, "1234567"},
		{`1,23`, "1,23"},
		{`\sqrt2`, `\sqrt{2}`},
		{`2 \sqrt{3}`, `2\sqrt{3}`},
		{`\textbf{\text{B}}`, "B"},
		{`5cm`, "5"},
		{`3x`, "3x"},
		{`\boxed{7}`, "7"},
		{`\mathrm{(C)}`, "(C)"},
		{`\text{unclosed`, `\text{unclosed`},
	} {
		if got := Normalize(tc.in); got != tc.want {
			t.Errorf("Normalize(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestEquivalent(t *testing.T) {
	for _, tc := range []struct {
		got, gold string
		want      bool
	}{
		{"42", "42", true},
		{"42", "43", false},
		{"042", "42", true},
		{"42.0", "42", true},
		{"42.000001", "42", false},
		{"-7", "-7", true},
		{"-7", "7", false},
		{`\frac{1}{2}`, "0.5", true},
		{`\dfrac{1}{2}`, `\frac12`, true},
		{`\frac{2}{4}`, `\frac{1}{2}`, false}, // unreduced, as the reference grades it
		{"1/2", `\frac{1}{2}`, true},
		{".5", "0.5", true},
		{"0.33", `\frac{1}{3}`, false},
		{"0.333333", `\frac{1}{3}`, false},
		{`-\frac{1}{2}`, "-0.5", true},
		{`\frac{-1}{2}`, "-0.5", true},
		{`-\frac{-1}{2}`, "0.5", true},
		{`\frac{1}{-2}`, `-\frac12`, true},
		{`\frac{1.5}{3}`, "0.5", true},
		{`\frac{1}{0}`, `\frac{1}{0}`, true}, // same text
		{`\frac{1}{0}`, "1", false},
		{`\frac{\frac{1}{2}}{2}`, "0.25", true},
		{"1/0", "0", false},
		{`5 \text{ cm}`, "5", true},
		{`\text{5 apples}`, "5", true},
		{`30^\circ`, "30", true},
		{`25\%`, "25", true},
		{`\$1,000`, "1000", true},
		{"1,000", "1000", true},
		{`x = \frac{3}{2}`, "1.5", true},
		{`\left(1, \frac{1}{2}\right)`, "(1,0.5)", true},
		{`(1, 2)`, "[1,2]", false},
		{`(1, 2)`, "(1,2,3)", false},
		{`\{1,2\}`, `\{1, 2\}`, true},
		{`2\sqrt{2}`, `2 \sqrt 2`, true},
		{`2\sqrt{2}`, `\sqrt{8}`, true},
		{`\sqrt{8}`, `2.8284271247`, false},
		{`x^2-1`, `(x-1)(x+1)`, true},
		{`x^2-1`, `(x-1)(x-1)`, false},
		{`9^{9^{9^{9}}}`, `9^{9^{9^{9}}}`, true},
		{`9^{9^{9^{9}}}`, `9^{9^{9^{8}}}`, false},
		{`\frac{1}{x-x}`, `\frac{2}{x-x}`, false},
		{`a+b+c`, `c+b+a`, false}, // three variables: not evaluated, as the reference
		{`2^{-3}`, `0.125`, true},
		{`\sqrt[3]{8}`, `2`, false}, // an integer must be written as one
		{`\sqrt[3]{8}`, `\sqrt{4}`, true},
		{`(-1)^{1/2}`, `(-1)^{1/2}`, true},
		{`(-1)^{1/2}`, `i`, false},
		{`\pi`, `\pi`, true},
		{"", "", false},
		{"", "0", false},
		{"B", "b", true},
		{`\text{(B)}`, "(B)", true},
		{"1e3", "1000", true},
		{"1e-3", "0.001", true},
		{"2e", "2e", true},
		{"2e", "e2", true},
		{"3", "3.", true},
	} {
		if got := Equivalent(tc.got, tc.gold); got != tc.want {
			t.Errorf("Equivalent(%q, %q) = %v, want %v (normalised %q vs %q)", tc.got, tc.gold, got, tc.want, Normalize(tc.got), Normalize(tc.gold))
		}
	}
}

func TestReward(t *testing.T) {
	for _, tc := range []struct {
		response string
		gold     string
		answers  []string
		want     float64
		extract  string
	}{
		{`Thus \boxed{\dfrac{3}{4}}.`, "0.75", nil, 1, `\dfrac{3}{4}`},
		{`<think>maybe \boxed{1}</think> The answer is \boxed{2}.`, "2", nil, 1, "2"},
		{`<think>\boxed{2}</think> no box after thinking`, "2", nil, 0, ""},
		{`<think> \boxed{2} cut off`, "2", nil, 0, ""},
		{"so the total is 18.\n#### 18", "18", nil, 1, "18"},
		{`\boxed{18}`, "Natalia sold 48/2 = 24 clips.\n#### 18", nil, 1, "18"},
		{`\boxed{5}`, `The sum is $\boxed{5}$.`, nil, 1, "5"},
		{`\boxed{6}`, "5", []string{"6"}, 1, "6"},
		{`\boxed{7}`, "5", []string{"6"}, 0, "7"},
		{`the answer is 5`, "5", nil, 0, ""},
		{`\boxed{-3}`, "3", nil, 0, "-3"},
	} {
		s := Reward{}.Score(rollout.Task{Answer: tc.gold, Answers: tc.answers}, tc.response)
		if s.Reward != tc.want || s.Success != (tc.want == 1) || s.Extracted != tc.extract {
			t.Errorf("Score(%q, gold %q) = %+v, want reward %g extracted %q", tc.response, tc.gold, s, tc.want, tc.extract)
		}
	}
}

// FuzzEquivalent: never panics, is reflexive on anything that normalises
// to non-empty text, and symmetric.
func FuzzEquivalent(f *testing.F) {
	for _, s := range [][2]string{{`\frac{1}{2}`, "0.5"}, {`\text{5 cm}`, "5"}, {`(1,\frac{1}{2})`, "(1,0.5)"}, {`\frac{\frac{`, "}{"}, {`-\frac{-1}{0}`, "1/0"}, {`\{1,\}`, "(,)"}, {"1,000", "x = 3"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		ab, ba := Equivalent(a, b), Equivalent(b, a)
		if ab != ba {
			t.Fatalf("not symmetric: Equivalent(%q, %q) = %v but reversed %v", a, b, ab, ba)
		}
		if Normalize(a) != "" && !Equivalent(a, a) {
			t.Fatalf("not reflexive: %q (normalised %q)", a, Normalize(a))
		}
		Reward{}.Score(rollout.Task{Answer: b}, a)
	})
}
