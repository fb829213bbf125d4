// verifier_normalize.go — the verifier mode's normalisation of a LaTeX
// answer before it is read: latex2sympy2_extended 1.10.2's normalize_latex
// with the settings Math-Verify's parse uses (basic LaTeX, units,
// malformed operators and small fixes on; boxes extracted: every box
// of an environment, or the last boxes of a bare \boxed match).
//
// In order:
//
//	boxes       the boxes' contents, right to left; in "last" mode an
//	            earlier box joins only when it is close (under 10
//	            characters between) or differs and is separated by "and",
//	            "or", "," or ";" within 70; joined by ","; an unclosed last
//	            box keeps its rest
//	basic       \left/\right dropped, \mathrm{th}, \!, empty \text{},
//	            dollars, quotes and \displaystyle removed; \mathrm, \mathit,
//	            \mathbf, \textbf … → \text; \dfrac, \tfrac, \cfrac →
//	            \frac; " ." → " 0."; "and"/"or" → ","; "percent", "pct" →
//	            \%; "infinity", "inf" → \infty; \ldots → " "; newlines
//	            and tabs → spaces; "\\x" → "\x" outside matrices
//	units       a trailing \text{…} (and a power after it) dropped; then,
//	            twice, a unit word (the reference's list) at the end after
//	            a digit, "}" or a space
//	small fixes ".5" → "0.5"; exactly "0.5" → \frac{1}{2}
//	operators   ^(…) → ^{…}, sqrt(…) → \sqrt{…}, \frac12 and \frac{a}2
//	            forms, \log_2 8, \sqrt2; a whole "a/b" of integers →
//	            \frac{a}{b}
//
// What it is not: troupe's own Normalize (normalize.go), which the boxed
// mode uses; the two differ on purpose, each following its reference.
package math

import (
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
)

// Box extraction modes of normalizeVerifierLatex.
const (
	boxedAll  = "all"
	boxedLast = "last"
)

// normalizeVerifierLatex is the normalisation above.
func normalizeVerifierLatex(s, boxed string) string {
	s = extractBoxes(s, boxed)
	s = basicLatex(s)
	s = dropUnits(s)
	if strings.HasPrefix(s, ".") {
		s = "0" + s
	}
	if s == "0.5" {
		s = `\frac{1}{2}`
	}
	s = fixOperators(s)
	return strings.TrimSpace(s)
}

var boxSeparator = regexp.MustCompile(`and|or|,|;`)

// extractBoxes returns the boxes' contents of s (\boxed or \fbox), right
// to left as described above, or s when it has none.
func extractBoxes(s, mode string) string {
	var results []string
	limit, end := len(s), len(s)
	lastStart := -1
	for {
		b := strings.LastIndex(s[:end], `\boxed`)
		f := strings.LastIndex(s[:end], `\fbox`)
		if b < 0 && f < 0 {
			break
		}
		start, cmdEnd := b, b+len(`\boxed`)
		if f > b {
			start, cmdEnd = f, f+len(`\fbox`)
		}
		k := cmdEnd
		for k < limit && isSpaceByte(s[k]) {
			k++
		}
		if k >= limit {
			break
		}
		if s[k] != '{' {
			if len(results) == 0 {
				results = append(results, s[k:])
			}
			break
		}
		close := closingBrace(s, k, limit)
		if close < 0 {
			if len(results) == 0 {
				results = append(results, s[k:])
			}
			break
		}
		content := strings.TrimSpace(s[k+1 : close])
		if mode == boxedLast && lastStart >= 0 {
			between := s[close+1 : lastStart]
			prev := ""
			if len(results) > 0 {
				prev = results[len(results)-1]
			}
			if len([]rune(between)) >= 10 && (content == prev || len([]rune(between)) >= 70 || !boxSeparator.MatchString(between)) {
				break
			}
		}
		results = append(results, content)
		lastStart, limit, end = start, start, start
	}
	if len(results) == 0 {
		return s
	}
	for i, j := 0, len(results)-1; i < j; i, j = i+1, j-1 {
		results[i], results[j] = results[j], results[i]
	}
	return strings.Join(results, ",")
}

// closingBrace is the index of the "}" closing the "{" at open, counting
// plain braces before limit, or -1.
func closingBrace(s string, open, limit int) int {
	depth := 1
	for i := open + 1; i < limit; i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			if depth--; depth == 0 {
				return i
			}
		}
	}
	return -1
}

func isSpaceByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

var (
	leftDelimiter  = regexp.MustCompile(`\\m?left(\\\{|\{|\\\||\||\[|\(|\\rbracl|\\lgroup|\\lbrace|\\lbrack|\\vert|\\lvert|\\lceil|\\lfloor|\\langle|\\llcorner|\\ulcorner)`)
	rightDelimiter = regexp.MustCompile(`\\m?right(\\\}|\}|\\\||\||\]|\)|\\rbrack|\\rgroup|\\rbrace|\\vert|\\rvert|\\rceil|\\rfloor|\\rangle|\\lrcorner|\\urcorner)`)
	permutation    = regexp.MustCompile(`\(([a-zA-Z0-9+\-*/\\ ]+?)\)_\{([a-zA-Z0-9+\-*/\\ ]+?)\}`)
	removed        = regexp2.MustCompile(`\\mathrm\{th\}|\\!\s*|\\text\s*\{\s*\}|\\\$|\$|(?<!\\)["']|\\displaystyle`, regexp2.None)
	doubleSlash    = regexp.MustCompile(`\\\\([a-zA-Z])`)
)

// latexRewrites are the basic replacements, tried at each position in this
// order (the first alternative that matches there wins).
var latexRewrites = []struct{ name, pattern, with string }{
	{"math", `\\math(?:rm|it|bf)`, `\text`},
	{"text", `\\text(?:normal|bf|it|rm)`, `\text`},
	{"frac", `\\(?:d|t|c)frac`, `\frac`},
	{"decimalspace", `\s\.`, ` 0.`},
	{"decimalbrace", `\{\.`, `{0.`},
	{"approx", `\~\=`, `\approx`},
	{"comma", `\s*\{\s*,\s*\}`, `,`},
	{"andor", `(?<![a-zA-Z])(,?\s*(?:and|or))(?![a-zA-Z])`, `,`},
	{"andortext", `(,?\s*\\text\{\s*(?:and|or)\s*\})`, `,`},
	{"backslashspace", `(?<!\\)\\\s`, ` `},
	{"infinity", `infinity`, `\infty`},
	{"dots", `,?(\\ldots)`, ` `},
	{"percentage", `\s*percentage`, `\%`},
	{"percentagetext", `\\text\{percentage\}`, `\%`},
	{"percent", `\s*percent`, `\%`},
	{"percenttext", `\\text\{percent\}`, `\%`},
	{"pct", `\s*pct`, `\%`},
	{"pcttext", `\\text\{pct\}`, `\%`},
	{"inf", `((?<!\\)inf(?!inity))`, `\infty`},
	{"sqrt", ` sqrt`, `\sqrt`},
}

var latexRewrite = func() *regexp2.Regexp {
	var alts []string
	for _, r := range latexRewrites {
		alts = append(alts, `(?<`+r.name+`>`+r.pattern+`)`)
	}
	return regexp2.MustCompile(strings.Join(alts, "|"), regexp2.None)
}()

func basicLatex(s string) string {
	s = strings.ReplaceAll(s, `\mathrm{T}`, "T")
	s = strings.ReplaceAll(s, `\mathrm{d}`, "d")
	s = strings.ReplaceAll(s, `{\rm d}`, "d")
	s = strings.ReplaceAll(s, `\left[\begin{matrix}`, `\begin{bmatrix}`)
	s = strings.ReplaceAll(s, `\end{matrix}\right]`, `\end{bmatrix}`)
	s = leftDelimiter.ReplaceAllString(s, "$1")
	s = rightDelimiter.ReplaceAllString(s, "$1")
	s = permutation.ReplaceAllString(s, `\frac{($1)!}{(($1)-($2))!}`)
	if r, err := removed.Replace(s, "", -1, -1); err == nil {
		s = r
	}
	if r, err := latexRewrite.ReplaceFunc(s, func(m regexp2.Match) string {
		for _, rw := range latexRewrites {
			if g := m.GroupByName(rw.name); g != nil && len(g.Captures) > 0 {
				return rw.with
			}
		}
		return m.String()
	}, -1, -1); err == nil {
		s = r
	}
	s = strings.NewReplacer("\n", " ", "\t", " ").Replace(s)
	if !strings.Contains(s, "matrix") {
		s = doubleSlash.ReplaceAllString(s, `\$1`)
	}
	return s
}

// unitWords is the reference's list of unit words (latex2sympy2_extended
// math_normalization.py), used as regular expressions as it uses them
// ("q ." is "q", a space and any character); "integer" "point" is one
// word there, as Python joins adjacent strings.
var unitWords = []string{"integerpoint", "feet", "sue", "digit", "pound", "meal", "edge", "student",
	"children ticket", "multiple", "east", "degree", "mph", "kmph", "ft", "m square", " m east", "sq m",
	"deg", "mile", "q .", "monkey", "prime", "ratio", "profit of rs", "rd", "o", "gm", "p . m", "lb",
	"tile", "per", "dm", "lt", "gain", "ab", "way", "west", "a .", "b .", "c .", "d .", "e .", "f .",
	"g .", "h .", "t", "h", "no change", "men", "soldier", "pie", "bc", "excess", "st", "inches", "noon",
	"cent", "by", "gal", "kmh", "c", "acre", "rise", "a . m", "th", "π r 2", "sq", "mark", "l", "toy",
	"coin", "sq . m", "gallon", "° f", "profit", "minw", "yr", "women", "am", "pm", "hr", "cu cm",
	"square", "v â € ™", "are", "rupee", "rounds", "cubic", "cc", "mtr", "s", "ohm", "number", "kmph",
	"day", "hour", "minute", "min", "second", "man", "woman", "sec", "cube", "mt", "sq inch", "mp",
	"∏ cm ³", "hectare", "more", "sec", "unit", "cu . m", "cm 2", "rs .", "rs", "kg", "g", "month", "km",
	"m", "cm", "mm", "apple", "liter", "loss", "yard", "pure", "year", "increase", "decrease", "d",
	"less", "Surface", "litre", "pi sq m", "s .", "metre", "meter", "inch"}

var (
	unitAtEnd      = regexp2.MustCompile(`(\d|\}|\s)\s*(?:(?:`+strings.Join(unitWords, "|")+`)(?:s|es)?)\s*$`, regexp2.None)
	unitTextAtEnd  = regexp2.MustCompile(`(\\(?:text|mbox)\{.*?\})(\^\d|\{\^\d\})?$`, regexp2.None)
	exponentParens = regexp.MustCompile(`\^\s?\((.*?)\)`)
	sqrtParens     = regexp.MustCompile(`sqrt\s?\((.*?)\)`)
	fracDigits     = regexp.MustCompile(`\\frac\s?(\d)\s?(\d+)`)
	logDigits      = regexp.MustCompile(`\\log_\s?(\d)\s?(\d+)`)
	fracBraceDigit = regexp.MustCompile(`\\frac\s?\{(.*?)\}\s?(\d)`)
	fracDigitBrace = regexp.MustCompile(`\\frac\s?(\d)\s?\{(.*?)\}`)
	sqrtDigit      = regexp.MustCompile(`\\sqrt\s?(\d)`)
)

func dropUnits(s string) string {
	if t, err := unitTextAtEnd.Replace(s, "", -1, -1); err == nil {
		if t = strings.TrimSpace(t); t != "" && t != s {
			s = t
		}
	}
	for i := 0; i < 2; i++ {
		if t, err := unitAtEnd.Replace(s, "$1", -1, -1); err == nil && t != "" && t != s {
			s = t
		}
	}
	return s
}

func fixOperators(s string) string {
	s = exponentParens.ReplaceAllString(s, `^{$1}`)
	s = sqrtParens.ReplaceAllString(s, `\sqrt{$1}`)
	s = fracDigits.ReplaceAllString(s, `\frac{$1}{$2}`)
	s = logDigits.ReplaceAllString(s, `\log_{$1}{$2}`)
	s = fracBraceDigit.ReplaceAllString(s, `\frac{$1}{$2}`)
	s = fracDigitBrace.ReplaceAllString(s, `\frac{$1}{$2}`)
	s = sqrtDigit.ReplaceAllString(s, `\sqrt{$1}`)
	s = strings.ReplaceAll(s, " sqrt", `\sqrt`)
	s = fixSqrt(s)
	s = fixFracs(s)
	return fixSlash(s)
}

// fixSqrt braces a one-character \sqrt argument: \sqrt3 → \sqrt{3}.
func fixSqrt(s string) string {
	parts := strings.Split(s, `\sqrt`)
	if len(parts) == 1 {
		return s
	}
	out := parts[0]
	for _, p := range parts[1:] {
		p = strings.TrimLeft(p, " \t\n\r\f\v")
		if p != "" && p[0] != '{' && p[0] != '[' {
			_, size := utf8.DecodeRuneInString(p)
			out += `\sqrt{` + p[:size] + `}` + p[size:]
		} else {
			out += `\sqrt` + p
		}
	}
	return out
}

// fixFracs braces one-character \frac arguments: \frac12 → \frac{1}{2},
// \frac1{2} → \frac{1}{2}; a \frac with under two characters after it
// leaves the text as it was.
func fixFracs(s string) string {
	parts := strings.Split(s, `\frac`)
	out := parts[0]
	for _, p := range parts[1:] {
		p = strings.TrimLeft(p, " \t\n\r\f\v")
		out += `\frac`
		r := []rune(p)
		switch {
		case len(r) > 0 && r[0] == '{':
			out += p
		case len(r) < 2:
			return s
		case r[1] != '{':
			out += "{" + string(r[0]) + "}{" + string(r[1]) + "}" + string(r[2:])
		default:
			out += "{" + string(r[0]) + "}" + string(r[1:])
		}
	}
	return out
}

// fixSlash writes a whole "a/b" of integers as \frac{a}{b}.
func fixSlash(s string) string {
	a, b, ok := strings.Cut(s, "/")
	if !ok || strings.Contains(b, "/") {
		return s
	}
	x, err1 := strconv.Atoi(a)
	y, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || strconv.Itoa(x)+"/"+strconv.Itoa(y) != s {
		return s
	}
	return `\frac{` + a + `}{` + b + `}`
}
