// verifier_grammar.go — where the verifier grading mode finds the answer in
// a whole response: the extraction grammar of Math-Verify 0.8.0's parse
// (the version PettingLLMs 244467e installs, unpinned, with
// latex2sympy2_extended 1.10.2), its patterns and their priority order,
// written here as Go.
//
// The patterns, by priority (lower first); each priority group is searched
// whole before the next:
//
//	0    "final answer is" X ". I hope"                (LaTeX or plain X)
//	50   "final answer … is" X; a LaTeX environment holding a \boxed{};
//	     a bare \boxed{…} (to the text's last "}")
//	100  "answer:" then, within 50 characters, X (plain X may follow the
//	     last "=" within 100 characters, and must not be followed by "=")
//	200  "answer" then X, as at 100 without the colon
//	300  any LaTeX environment ($…$, $$…$$, \(…\), \[…\], " […] ", a bare
//	     \frac{n}{m}); any plain expression (a digit, an operator, more) or
//	     number (1,234.5, .5, 7, with a percent), each after a space, "="
//	     or the start, and a currency sign for a number
//
// A LaTeX X is one environment, or up to six joined by "and", "or" or
// commas (read as one set). Within a group every match of every pattern is
// tried from the rightmost end (the longest first among equal ends); the
// first whose text reads as math is the answer, and the first tried
// match's text is kept beside it as a string (the reference's
// fallback_mode first_match). A group whose matches all fail to read
// passes to the next; nothing found is no answer.
//
// The patterns need backtracking with look-arounds, as Python's re has
// them: they run on github.com/dlclark/regexp2 (.NET's engine, the same
// leftmost, ordered-alternative semantics), each match under a time limit
// (maxParseTime for one response, as the reference's parsing_timeout),
// past which the response has no answer.
//
// What it is not: the reading of an answer's text (verifier_latex.go) or
// the comparison with the gold (verifier.go).
package math

import (
	"errors"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/dlclark/regexp2"
)

// maxParseTime bounds the pattern search over one text; a text that takes
// longer has no answer (the reference's parse gives up after 5 s). A
// response of 24,000 characters of ordinary working takes ~20 ms here;
// 30,000 characters of bare numbers or of "answer: 1 = " run into it.
var maxParseTime = time.Second

// maxParseRunes bounds the text searched: a longer response is searched in
// its last maxParseRunes characters, where its answer is.
const maxParseRunes = 1 << 16

// verifierPattern is one pattern of the grammar and the kind of its match.
type verifierPattern struct {
	re       *regexp2.Regexp
	priority int
	latex    bool // a LaTeX match (extractLatex), else a plain one (extractPlain)
}

// LaTeX environments, in the reference's order; the boxed variants require
// a \boxed{…} inside the environment.
func latexEnvironment(prefix string, boxed bool) string {
	percent := `(?<` + prefix + `percent>(?:\\?%|[Pp]ercent|[Pp]ercentage|[Pp]ct))`
	type env struct{ name, open, content, close string }
	envs := []env{
		{"latexDisplayDollar", `(?<!\\)\$\$`, `(?:[^$]|\$(?!\$))`, `(?<!\\)\$\$`},
		{"latexDisplayBracket", `(?<!\\)\\\[`, `(?:[^\\]|\\(?!\]))`, `(?<!\\)\\\]`},
		{"latexInlineDollar", `(?<!\\|\d)\$`, `(?:\\[$]|[^\n$])`, `(?<!\\)\$`},
		{"latexInlineParenthesis", `(?<!\\)\\\(`, `(?:[^\\\n]|\\(?!\)))`, `(?<!\\)\\\)`},
		{"latexInlineBracket", `\s\[`, `[^\n\]\[]`, `\]\s`},
	}
	var alts []string
	for _, e := range envs {
		body := e.content + `+?`
		if boxed {
			body = e.content + `*?\\boxed\{` + e.content + `+?\}` + e.content + `*?`
		}
		alts = append(alts, e.open+`(?<`+prefix+e.name+`>`+body+`)`+e.close)
	}
	if !boxed {
		number := `-?\d+(?:[.,]\d+)?`
		alts = append(alts, `(?<`+prefix+`latexFraction>-?\\frac\{`+number+`\}\{`+number+`\})`)
	}
	return `(?:(?:` + strings.Join(alts, "|") + `)\s*` + percent + `?)`
}

// latexEnvironments is one environment and up to five more joined by
// "and", "or" or commas.
func latexEnvironments(boxed bool) string {
	s := latexEnvironment("first_", boxed)
	for i := 1; i <= 5; i++ {
		joint := `(?:\s*(?:,?and|,?or|,)\s*` + latexEnvironment("next"+string(rune('0'+i))+"_", boxed) + `)?`
		if boxed {
			joint = `\s*` + joint
		}
		s += joint
	}
	return s
}

// plainPatterns are a number, or an expression of digits and operators,
// each after a space, "=" or the start: either one, the expression alone,
// the number alone.
func plainPatterns() (exprOrNumber, exprAnchored, numberAnchored string) {
	number := `(?<!\d)(?:` +
		`(?<integer1>-?[1-9]\d{0,2}(?:[ ,]\d{3})+)(?<decimal1>\.\d+)?|` + // 1,234.56 or 1 234.56
		`(?<integer2>-?\d+)(?<decimal2>[.,]\d+)|` + // 123.45 or 123,45
		`(?<decimal3>\.\d+)|` + // .123
		`(?<integer3>-?\d+)` + // 123
		`)(?<percent>\s*(?:%|[Pp]ercent|\s*[Pp]ercentage|\s*[Pp]ct))?`
	const ops = `+\-*×/^()÷`
	chars := `[\d.\s` + ops + `]`
	expr := `(?<expr>-?\(?-?\d` + chars + `*[` + ops + `]` + chars + `+\)?)`
	currency := `[$€£¥₹₽₪₩₫฿₡₢₣₤₥₦₧₨₭₮₯₰₱₲₳₴₵₶₷₸₺₻₼₾₿]`
	prefix := `(?:^|\s|=)(?:\*\*)?`
	suffix := `(?:\*\*)?(?:\.|,|:|\s|\)|\$|$)`
	exprAnchored = `(?:` + prefix + expr + suffix + `)`
	numberAnchored = `(?:` + prefix + currency + `?` + number + `)`
	return `(?:` + exprAnchored + `|` + numberAnchored + `)`, exprAnchored, numberAnchored
}

// verifierPatterns is the grammar, compiled once.
var verifierPatterns = compileVerifierPatterns()

func compileVerifierPatterns() []verifierPattern {
	var out []verifierPattern
	add := func(pattern string, priority int, latex bool) {
		opt := regexp2.None
		if latex {
			opt = regexp2.Singleline // the reference compiles its LaTeX patterns with DOTALL
		}
		re := regexp2.MustCompile(pattern, opt)
		out = append(out, verifierPattern{re: re, priority: priority, latex: latex})
	}
	envs := latexEnvironments(false)
	add(`(?i:final answer is):?\s*`+envs+`\.?\s?I hope`, 0, true)
	add(`(?i:final answer.{0,100}?)\s+is:?\s*`+envs, 50, true)
	add(`(?i:answer):.{0,50}?`+envs, 100, true)
	add(`(?i:answer).{0,50}?`+envs, 200, true)
	add(envs, 300, true)
	add(latexEnvironments(true), 50, true)
	add(`(?<first_latexBoxed>\\boxed\{.+\})`, 50, true)

	eon, exprAnchored, numberAnchored := plainPatterns()
	add(`(?i:final answer is):?\s*`+eon+`\.?\s?I hope`, 0, false)
	add(`(?i:final answer.{0,100}?)\s+is:?`+eon, 50, false)
	add(`(?i:answer):(?:.{0,100}=\s*|.{0,50}?)`+eon+`(?!\s*=)`, 100, false)
	add(`(?i:answer)(?:.{0,100}=\s*|.{0,50}?)`+eon+`(?!\s*=)`, 200, false)
	add(exprAnchored, 300, false)
	add(numberAnchored, 300, false)
	sort.SliceStable(out, func(i, j int) bool { return out[i].priority < out[j].priority })
	return out
}

// verifierMatch is one match of one pattern.
type verifierMatch struct {
	m          *regexp2.Match
	start, end int
	latex      bool
}

var errParseTime = errors.New("over the verifier's parse time")

// extractAnswer walks the priority groups of text and returns the first
// answer that reads as math (nil if none) and the first tried match's
// text ("" if none).
func extractAnswer(text string) (*mathValue, string) {
	runes := []rune(text)
	if len(runes) > maxParseRunes {
		runes = runes[len(runes)-maxParseRunes:]
	}
	deadline := time.Now().Add(maxParseTime)
	var fallbacks []string
	for i := 0; i < len(verifierPatterns); {
		j := i
		for j < len(verifierPatterns) && verifierPatterns[j].priority == verifierPatterns[i].priority {
			j++
		}
		matches, err := findAll(verifierPatterns[i:j], runes, deadline)
		if err != nil {
			return nil, "" // the reference's parse returns nothing on a timeout
		}
		// rightmost end first; among equal ends the leftmost start
		sort.SliceStable(matches, func(a, b int) bool {
			if matches[a].end != matches[b].end {
				return matches[a].end > matches[b].end
			}
			return matches[a].start < matches[b].start
		})
		for _, m := range matches {
			var v *mathValue
			var s string
			if m.latex {
				v, s = extractLatex(m.m)
			} else {
				v, s = extractPlain(m.m)
			}
			if s != "" {
				fallbacks = append(fallbacks, s)
			}
			if v != nil {
				return v, fallbacks[0]
			}
		}
		i = j
	}
	if len(fallbacks) > 0 {
		return nil, fallbacks[0]
	}
	return nil, ""
}

// findAll runs each pattern over the text, successive non-overlapping
// matches as Python's finditer, within the deadline.
func findAll(patterns []verifierPattern, runes []rune, deadline time.Time) ([]verifierMatch, error) {
	var out []verifierMatch
	for _, p := range patterns {
		left := time.Until(deadline)
		if left <= 0 {
			return nil, errParseTime
		}
		// a copy with this text's time limit: it shares the compiled program
		// and starts its own cache of matchers (the original never runs)
		re := *p.re
		re.MatchTimeout = left
		m, err := re.FindRunesMatch(runes)
		for ; m != nil && err == nil; m, err = re.FindNextMatch(m) {
			out = append(out, verifierMatch{m: m, start: m.Index, end: m.Index + m.Length, latex: p.latex})
		}
		if err != nil {
			return nil, errParseTime
		}
	}
	return out, nil
}

// group is the text of a named group that took part in the match with a
// non-empty text, as Python's groupdict values that are truthy.
func group(m *regexp2.Match, name string) (string, bool) {
	g := m.GroupByName(name)
	if g == nil || len(g.Captures) == 0 || g.Length == 0 {
		return "", false
	}
	return g.String(), true
}

// latexGroupNames are the environment groups, in the pattern's order.
var latexGroupNames = []string{"latexDisplayDollar", "latexDisplayBracket", "latexInlineDollar",
	"latexInlineParenthesis", "latexInlineBracket", "latexFraction", "latexBoxed"}

// extractLatex reads a LaTeX match: each environment's text normalised and
// read; several that all read are one set (the reference's FiniteSet, its
// string their texts joined by " and "), else the first.
func extractLatex(m *regexp2.Match) (*mathValue, string) {
	var values []*mathValue
	var texts []string
	for _, prefix := range []string{"first_", "next1_", "next2_", "next3_", "next4_", "next5_"} {
		for _, name := range latexGroupNames {
			raw, ok := group(m, prefix+name)
			if !ok {
				continue
			}
			_, percent := group(m, prefix+"percent")
			boxed := boxedAll
			if name == "latexBoxed" {
				boxed = boxedLast
			}
			s := normalizeVerifierLatex(raw, boxed)
			texts = append(texts, s)
			v := readLatex(s)
			if v != nil && percent {
				v = v.percent()
			}
			values = append(values, v)
			break
		}
	}
	if len(values) == 0 {
		return nil, ""
	}
	if len(values) > 1 {
		all := true
		for _, v := range values {
			all = all && v != nil
		}
		if all {
			return joinSet(values), strings.Join(texts, " and ")
		}
	}
	return values[0], texts[0]
}

var plainExprOK = regexp.MustCompile(`^[\d.\s+\-*/^()]+$`)

// extractPlain reads a plain match: a number (its thousands separators
// and leading zeros dropped, a decimal comma read as a point, a percent
// divided by 100) or an expression, read when it is well formed.
func extractPlain(m *regexp2.Match) (*mathValue, string) {
	integer, decimal := "", ""
	for _, n := range []string{"integer1", "integer2", "integer3"} {
		if s, ok := group(m, n); ok {
			integer = s
			break
		}
	}
	for _, n := range []string{"decimal1", "decimal2", "decimal3"} {
		if s, ok := group(m, n); ok {
			decimal = s
			break
		}
	}
	if integer != "" || decimal != "" {
		// separators out, leading zeros out (not after a sign: "-007"
		// stays), "" back to "0", as the reference writes the number
		integer = strings.TrimLeft(strings.NewReplacer(",", "", " ", "").Replace(integer), "0")
		if integer == "" {
			integer = "0"
		}
		s := integer + strings.Replace(decimal, ",", ".", 1)
		v := numberValue(s)
		if _, pct := group(m, "percent"); pct && v != nil {
			v = v.percent()
		}
		return v, s
	}
	expr, _ := group(m, "expr")
	if expr == "" {
		return nil, ""
	}
	return readPlainExpression(expr), expr
}
