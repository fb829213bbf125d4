package math

// grader_test.go — troupe's grader against the reference's verdicts.
//
// Every pair of TestGraderMatchesReference (a model's answer, a gold answer
// in the forms MATH and GSM8K write them) was graded by Dr. MAS's own math
// grader (agent_system/environments/env_package/math/utils.py of
// langfengQ/DrMAS: grade_answer_mathd(got, gold) or
// grade_answer_sympy(got, gold), run with sympy 1.14 and pylatexenc 2.11);
// ref is its verdict. troupe gives the same verdict on every pair but the
// ones marked with a departure (docs/departures.md, Dr. MAS), where it
// gives the other one for the reason written there.

import "testing"

func TestGraderMatchesReference(t *testing.T) {
	for _, tc := range []struct {
		got, gold string
		ref       bool   // the reference grader's verdict
		departs   string // why troupe's verdict is the other one, if it is
	}{
		{`\frac{1}{2}`, `\frac{1}{2}`, true, ""},
		{`0.5`, `\frac{1}{2}`, true, ""},
		{`\dfrac{1}{2}`, `\frac{1}{2}`, true, ""},
		{`\frac12`, `\frac{1}{2}`, true, ""},
		{`1/2`, `\frac{1}{2}`, true, ""},
		{`\frac{2}{4}`, `\frac{1}{2}`, false, ""},
		{`\frac{1}{2}`, `\frac{2}{4}`, false, ""},
		{`0.25`, `\frac{1}{4}`, true, ""},
		{`0.33`, `\frac{1}{3}`, false, ""},
		{`-\frac{1}{2}`, `-\frac12`, true, ""},
		{`\frac{-1}{2}`, `-\frac{1}{2}`, true, ""},
		{`5`, `\boxed{5}`, true, ""},
		{`42`, `42`, true, ""},
		{`42.0`, `42`, true, ""},
		{`1e3`, `1000`, true, ""},
		{`1,000`, `1000`, true, ""},
		{`1000`, `1{,}000`, true, ""},
		{`\$18`, `18`, true, ""},
		{`18 dollars`, `18`, false, `a unit word after a number is dropped, "dollars" too (the reference lists 16 units)`},
		{`50\%`, `50`, true, ""},
		{`50%`, `50`, true, ""},
		{`0.5`, `50\%`, false, ""},
		{`90^\circ`, `90`, true, ""},
		{`90`, `90^{\circ}`, true, ""},
		{`5 \text{ cm}`, `5`, true, ""},
		{`5\text{ cm}^2`, `5`, true, ""},
		{`10 \text{ inches}`, `10`, true, ""},
		{`x = 3`, `3`, true, ""},
		{`k=-2`, `-2`, true, ""},
		{`2\sqrt{2}`, `\sqrt{8}`, true, ""},
		{`\sqrt{2}/2`, `\frac{\sqrt{2}}{2}`, true, ""},
		{`\frac{1}{\sqrt{2}}`, `\frac{\sqrt{2}}{2}`, true, ""},
		{`\sqrt3`, `\sqrt{3}`, true, ""},
		{`2\pi`, `2 \pi`, true, ""},
		{`\frac{\pi}{2}`, `\frac{1}{2}\pi`, true, ""},
		{`3.14`, `\pi`, false, ""},
		{`x^2-1`, `(x+1)(x-1)`, true, ""},
		{`24 + 14*x + (-13)*x^2 - 2*x^3 + x^4`, `x^{4}-2 x^{3}-13 x^{2}+14 x+24`, true, ""},
		{`x^2+2x+1`, `(x+1)^2`, true, ""},
		{`x^2+2x+2`, `(x+1)^2`, false, ""},
		{`\frac{x+1}{2}`, `\frac{1}{2}x+\frac12`, false, `the reference renders \frac{x+1}{2} as the text x+1/2 and parses that`},
		{`(1, 2)`, `(1,2)`, true, ""},
		{`(2, 1)`, `(1,2)`, false, ""},
		{`[1, 2]`, `(1,2)`, false, ""},
		{`(1, \frac{1}{2})`, `(1,0.5)`, true, ""},
		{`(-\infty, 3]`, `(-\infty,3]`, true, ""},
		{`\{1,2\}`, `\{1, 2\}`, true, ""},
		{`B`, `\text{(B)}`, true, ""},
		{`(B)`, `\text{(B)}`, true, ""},
		{`b`, `B`, true, ""},
		{`7 \frac{3}{4}`, `\frac{31}{4}`, true, ""},
		{`7\frac{3}{4}`, `7.75`, true, ""},
		{`\frac{4}{2}`, `2`, false, ""},
		{`2.5`, `\frac52`, true, ""},
		{`-7`, `7`, false, ""},
		{`\sqrt{4}`, `2`, false, ""},
		{`4/2`, `2`, false, ""},
		{`2.00`, `2`, true, ""},
		{`\frac{7}{2}`, `3.5`, true, ""},
		{`3`, `3.`, true, ""},
		{`1/0`, `0`, false, ""},
		{`\frac{\sqrt{3}}{3}`, `\frac{1}{\sqrt{3}}`, true, ""},
		{`6\sqrt{3}`, `\sqrt{108}`, true, ""},
		{`2^{10}`, `1024`, false, ""},
		{`\frac{3}{2}`, `1\frac{1}{2}`, true, ""},
		{`3\sqrt{2}`, `3 \sqrt 2`, true, ""},
		{`\text{Monday}`, `Monday`, true, ""},
		{`monday`, `\text{Monday}`, true, ""},
		{`0.1`, `\frac{1}{10}`, true, ""},
		{`x+y`, `y+x`, true, ""},
		{`a+b+c`, `c+b+a`, false, ""},
		{`10\%`, `0.1`, false, ""},
		{`12\text{ meters}`, `12`, true, ""},
		{`\$1,000`, `1000`, true, ""},
		{`-\frac{3}{4}`, `-0.75`, true, ""},
		{`\frac34`, `0.75`, true, ""},
		{`y = 2x + 3`, `2x+3`, true, ""},
		{`\left(3,\frac{\pi}{2}\right)`, `(3, \frac{1}{2}\pi)`, true, ""},
		{`1.5`, `\frac{3}{2}`, true, ""},
		{`\dfrac{3}{2}`, `1.5`, true, ""},
		{`11\sqrt2`, `11\sqrt{2}`, true, ""},
		{`\sqrt{2}`, `1.41421356`, false, ""},
		{`4.0`, `4`, true, ""},
		{`\frac{9}{4}`, `2.25`, true, ""},
		{`2\frac{1}{4}`, `\frac{9}{4}`, true, ""},
		{`5`, `5.5`, false, ""},
		{`-3`, `3`, false, ""},
		{`\frac{1}{6}`, `0.1\overline{6}`, false, ""},
		{`x^3`, `x\cdot x^2`, true, ""},
		{`2x`, `x2`, true, ""},
		{`\sqrt{x^2}`, `x`, false, ""},
		{`\frac{a}{b}`, `a/b`, true, ""},
		{`\frac{2\sqrt{6}}{3}`, `\frac{\sqrt{24}}{3}`, true, ""},
		{`(3,-1)`, `(3, -1)`, true, ""},
		{`3, 5`, `5, 3`, false, ""},
		{`\text{even}`, `\text{Even}`, true, ""},
		{`12`, `12\text{ days}`, true, ""},
		{`144`, `12^2`, false, ""},
		{`\frac{100}{3}`, `33\frac{1}{3}`, true, ""},
		{`no`, `on`, true, ""},
		{`ab`, `ba`, true, ""},
		{`x^2`, `xx`, true, ""},
		{`2^{10}`, `1024`, false, ""},
		{`2^{10}\cdot 3`, `3\cdot 2^{10}`, false, `the reference does not evaluate two-digit exponents; troupe does, exactly, below 64`},
		{`\sqrt{2}`, `1.414213562373`, false, `an irrational answer is compared in floating point, within 1e-12 relative`},
		{`(1,2)`, `(1,2.0)`, true, ""},
		{`-2\frac{1}{2}`, `-1.5`, true, ""},
	} {
		want := tc.ref != (tc.departs != "")
		if got := Equivalent(tc.got, tc.gold); got != want {
			t.Errorf("Equivalent(%q, %q) = %v, want %v (the reference grader: %v; normalised %q vs %q)",
				tc.got, tc.gold, got, want, tc.ref, Normalize(tc.got), Normalize(tc.gold))
		}
	}
}
