// normalize.go — canonical text of a math answer, before comparison.
//
// What it is: a fixed sequence of rewrites that removes presentation and
// keeps the value: LaTeX spacing and sizing (\left, \!, \,), \dfrac/\tfrac
// → \frac, a trailing "\text{ …}" (a unit or a remark, as the reference's
// MATH normaliser reads it: everything from the one "\text{ " on),
// \text{…}-like wrappers unwrapped, degrees (^\circ, °), percent and dollar
// signs, a leading "x =", trailing unit words after a number ("5 cm", "12
// dollars") and the reference's sixteen length and time units after any
// answer ("\frac{9}{2} cm", "\pi cm^2"), thousands separators ("1,234", "1{,}234"), short forms
// (\frac12, \sqrt3), mixed numbers ("7 3/4", "2\frac{1}{2}" → 7+3/4,
// 2+\frac{1}{2}, as the reference grader reads them), all whitespace and a
// trailing period.
//
// What it deliberately is not: a computer-algebra system. "2\sqrt{2}" and
// "\sqrt{8}" stay different texts here; "x+1" and "1+x" too. equiv.go
// compares numbers as exact rationals and expressions by value, after this
// step.
//
// As in the reference grader, the percent sign is dropped, so "50\%" equals
// "50" (not 0.5), and letter case is ignored later, in equiv.go.
package math

import (
	"regexp"
	"strings"

	"troupe/rollout/answer"
)

var (
	// wrappers whose argument is kept: \text{cm} → cm.
	textWrappers = []string{`\text`, `\textbf`, `\textit`, `\textrm`, `\mathrm`, `\mathbf`, `\mbox`, `\operatorname`}
	// removed outright.
	noise = []string{`\left`, `\right`, `\displaystyle`, `\!`, `\,`, `\;`, `\:`, `\ `, `~`,
		`^{\circ}`, `^\circ`, `\circ`, `°`, `\degree`, `\%`, `%`, `\$`, `$`}
	leadingVariable = regexp.MustCompile(`^[a-zA-Z]\s*=\s*`)
	numberThenWords = regexp.MustCompile(`^([-+]?(?:\d[\d,]*(?:\.\d*)?|\.\d+)(?:/\d+)?)\s+[a-zA-Z][a-zA-Z .]*(?:\^[23])?$`)
	// after any answer that ends in a digit, a brace or π: the units Dr.
	// MAS's sympy path deletes (degree, cm, …, yard; plural; a power).
	unitAfterValue = regexp.MustCompile(`^(.*(?:\d|\}|\\pi))\s*(?:degree|cm|centimeter|meter|mile|second|minute|hour|day|week|month|year|foot|feet|inch|yard)(?:es)?s?\s*(?:\^\{?\d+\}?)?$`)
	gluedUnit      = regexp.MustCompile(`^([-+]?(?:\d+(?:\.\d*)?|\.\d+))(?:cm|mm|km|m|kg|g|mg|ml|l|s|h|min|ft|in|mi|mph|lbs|lb|oz|degrees|units|cents|dollars)(?:\^[23])?$`)
	thousands      = regexp.MustCompile(`^[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?$`)
	shortFrac      = regexp.MustCompile(`\\frac(\d)(\d)`)
	shortFracBrace = regexp.MustCompile(`\\frac(\d)\{`)
	shortSqrt      = regexp.MustCompile(`\\sqrt(\d)`)
	// a whole number, then a fraction of integers: a mixed number.
	mixedSpaced = regexp.MustCompile(`(^|[^\d.^_])(\d+)\s+(\d+/\d+|\\frac\{?\d+\}?\{?\d+\}?)`)
	mixedGlued  = regexp.MustCompile(`(^|[^\d.^_])(\d+)(\\frac\{\d+\}\{\d+\})`)
)

// Normalize returns the canonical text of an answer.
func Normalize(s string) string {
	s = strings.TrimSpace(s)
	if inner, ok := answer.LastBoxed(s); ok && strings.HasPrefix(s, `\boxed`) {
		s = inner // a gold answer written as "\boxed{…}"
	}
	s = strings.ReplaceAll(s, `\dfrac`, `\frac`)
	s = strings.ReplaceAll(s, `\tfrac`, `\frac`)
	s = dropTextRemark(s)
	s = unwrap(s, textWrappers)
	for _, n := range noise {
		s = strings.ReplaceAll(s, n, "")
	}
	s = strings.TrimSpace(s)
	s = strings.TrimRight(s, ".")
	if m := leadingVariable.FindStringIndex(s); m != nil && !strings.Contains(s[m[1]:], "=") && m[1] < len(s) {
		s = s[m[1]:]
	}
	if m := numberThenWords.FindStringSubmatch(s); m != nil {
		s = m[1]
	} else if m := unitAfterValue.FindStringSubmatch(s); m != nil {
		s = m[1]
	}
	s = mixedSpaced.ReplaceAllString(s, "$1$2+$3")
	s = strings.Join(strings.Fields(s), "")
	if m := gluedUnit.FindStringSubmatch(s); m != nil {
		s = m[1]
	}
	s = strings.ReplaceAll(s, "{,}", ",") // LaTeX's thousands separator: 10{,}000
	if thousands.MatchString(s) {
		s = strings.ReplaceAll(s, ",", "")
	}
	s = shortFrac.ReplaceAllString(s, `\frac{$1}{$2}`)
	s = shortFracBrace.ReplaceAllString(s, `\frac{$1}{`)
	s = shortSqrt.ReplaceAllString(s, `\sqrt{$1}`)
	s = mixedGlued.ReplaceAllString(s, "$1$2+$3")
	s = strings.TrimRight(s, ".")
	return s
}

// dropTextRemark keeps what comes before the answer's one "\text{ " (a
// \text whose argument starts with a space: "\frac{9}{2}\text{ cm}",
// "12\pi\text{ square units}^2"), as the reference's MATH normaliser
// (_remove_right_units) does. Two such groups, or nothing before the one,
// leave the answer as it is (the reference's own step fails there).
func dropTextRemark(s string) string {
	const remark = `\text{ `
	i := strings.Index(s, remark)
	if i < 0 || strings.Count(s, remark) != 1 || strings.TrimSpace(s[:i]) == "" {
		return s
	}
	return strings.TrimSpace(s[:i])
}

// unwrap replaces every \cmd{arg} of the listed commands by arg (balanced
// braces; nested wrappers are handled by repeating until nothing changes).
func unwrap(s string, cmds []string) string {
	for changed := true; changed; {
		changed = false
		for _, c := range cmds {
			for from := 0; ; {
				i := strings.Index(s[from:], c+"{")
				if i < 0 {
					break
				}
				i += from
				inner, ok := answer.BalancedGroup(s[i+len(c):])
				if !ok {
					from = i + len(c)
					continue
				}
				s = s[:i] + inner + s[i+len(c)+len(inner)+2:]
				from = i
				changed = true
			}
		}
	}
	return s
}
