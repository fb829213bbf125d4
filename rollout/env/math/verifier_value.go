// verifier_value.go — the verifier mode's reading of an extracted answer
// into a value, and the comparison of two values: troupe's counterpart of
// latex2sympy2_extended's parse and Math-Verify 0.8.0's verify.
//
// Reading (readLatex; what latex2sympy yields, by the shapes it takes):
//
//	equation     "a = b (= c …)" or "x \in S": its sides
//	set          \{a, b\}, or a bare list "a, b" (not "1,234", a number)
//	interval     "(a, b)" (open: the reference reads a pair in parentheses
//	             as an interval), "[a, b]", "[a, b)", "(a, b]"
//	tuple        "(a, b, c…)" of three or more
//	percent      "x\%": x / 100
//	leaf         anything else: a number (exact; "3.50" is a decimal) or an
//	             expression or a word, compared by the grader's Equivalent
//
// An empty text, unbalanced braces, or a text that ends in an operator
// does not read (latex2sympy raises), and the search goes on (verifier
// grammar). A plain expression ("3 + 4") reads when it is Python's
// arithmetic, as sympy's parse_expr needs.
//
// Comparing (verifiedSame, model's answer first, the gold second, in the
// order PettingLLMs calls verify):
//
//	equations    an assignment "x = 5" of the answer against a gold that is
//	             no equation compares its right side; a gold equation
//	             against an answer that is none compares the gold's last
//	             right side; two equations compare side by side
//	sets         same size, each element equal to one of the other's;
//	             tuples, and a set against a tuple, element by element;
//	             intervals the same ends and the same openness; an open
//	             interval against a two-element set or tuple as a pair; a
//	             single value against a one-element set
//	numbers      exactly, or to 6 decimal places when either is a decimal
//	             ("0.333333" = 1/3, as sympy's Float rounding)
//	leaves       Equivalent (equiv.go: exact rationals, expressions by their
//	             value at evaluation points, words by letters), each
//	             rational written as \frac{p}{q} first, so that "\sqrt{4}"
//	             and "2" or "\frac{2}{4}" and "\frac{1}{2}" are equal as
//	             sympy finds them
//
// Every comparison of two leaves goes through Equivalent, the grader's one
// entry point (and its budget).
package math

import (
	"math/big"
	"regexp"
	"strconv"
	"strings"
)

type valueKind int

const (
	leafValue valueKind = iota
	setValue
	tupleValue
	intervalValue
	equationValue
)

// mathValue is an answer as the verifier reads it.
type mathValue struct {
	kind                valueKind
	text                string       // a leaf's text
	num                 *big.Rat     // a leaf's exact value when it is a number
	decimal             bool         // a number written with a decimal point
	items               []*mathValue // elements, ends, or an equation's sides
	leftOpen, rightOpen bool         // an interval's ends
	assignment          bool         // an equation whose left side is a name
}

// degreeMark is a trailing degree sign, which latex2sympy reads as nothing
// (the reference parses with convert_degrees off).
var degreeMark = regexp.MustCompile(`\s*\^\s*\{?\\circ\}?$`)

func leaf(s string) *mathValue {
	s = degreeMark.ReplaceAllString(s, "")
	s = strings.TrimSpace(strings.TrimPrefix(s, `\approx`))
	if a, b, ok := strings.Cut(s, ":"); ok && !strings.Contains(b, ":") && a != "" && b != "" {
		s = `\frac{` + a + `}{` + b + `}` // a ratio is a quotient
	}
	v := &mathValue{kind: leafValue, text: s}
	if r, ok := integerFunction(s); ok {
		v.num = r
		return v
	}
	if r, ok := ParseRational(strings.ReplaceAll(s, " ", "")); ok {
		v.num = r
		v.decimal = strings.ContainsAny(s, ".eE") && !strings.Contains(s, `\frac`)
	}
	return v
}

var (
	binomial  = regexp.MustCompile(`^\\binom\{(\d{1,3})\}\{(\d{1,3})\}$`)
	factorial = regexp.MustCompile(`^(\d{1,2})!$`)
	logarithm = regexp.MustCompile(`^\\log_\{?(\d{1,4})\}?\{?(\d{1,18})\}?$`)
)

// integerFunction is the value of \binom{n}{k}, n! or \log_b x on integers
// when it is an integer (sympy evaluates them); false for anything else.
func integerFunction(s string) (*big.Rat, bool) {
	s = strings.ReplaceAll(s, " ", "")
	if m := binomial.FindStringSubmatch(s); m != nil {
		n, _ := strconv.ParseInt(m[1], 10, 64)
		k, _ := strconv.ParseInt(m[2], 10, 64)
		return new(big.Rat).SetInt(new(big.Int).Binomial(n, k)), true
	}
	if m := factorial.FindStringSubmatch(s); m != nil {
		n, _ := strconv.ParseInt(m[1], 10, 64)
		return new(big.Rat).SetInt(new(big.Int).MulRange(1, max(n, 1))), true
	}
	if m := logarithm.FindStringSubmatch(s); m != nil {
		b, _ := strconv.ParseInt(m[1], 10, 64)
		x, _ := strconv.ParseInt(m[2], 10, 64)
		for k, p := int64(0), int64(1); b > 1 && p <= x && k < 64; k, p = k+1, p*b {
			if p == x {
				return big.NewRat(k, 1), true
			}
		}
	}
	return nil, false
}

// numberValue is a plain number's value.
func numberValue(s string) *mathValue { return leaf(s) }

// percent is v / 100.
func (v *mathValue) percent() *mathValue {
	if v.kind != leafValue {
		return v
	}
	if v.num != nil {
		p := *v
		p.num = new(big.Rat).Quo(v.num, big.NewRat(100, 1))
		p.text = `\frac{` + v.text + `}{100}`
		return &p
	}
	return leaf(`\frac{` + v.text + `}{100}`)
}

// joinSet is the set of several values (sets among them give their
// elements).
func joinSet(values []*mathValue) *mathValue {
	s := &mathValue{kind: setValue}
	for _, v := range values {
		if v.kind == setValue {
			s.items = append(s.items, v.items...)
		} else {
			s.items = append(s.items, v)
		}
	}
	return s
}

var (
	thousandsNumber = regexp.MustCompile(`^-?\d{1,3}(?:,\d{3})+(?:\.\d+)?$`)
	trailingOp      = regexp.MustCompile(`(?:[-+*/^=,<>]|\\cdot|\\times|\\div)$`)
	assignee        = regexp.MustCompile(`^(?:[a-zA-Z]|\\[a-zA-Z]+)(?:_\{?[a-zA-Z0-9]+\}?)?(?:\([a-zA-Z, ]*\))?$`)
)

// Bounds of the reading: an answer nested deeper, or longer, is read as
// one leaf (its text), so that reading costs at most linear time per level.
const (
	maxReadDepth = 16
	maxReadLen   = 4096
)

// readLatex reads a normalised LaTeX answer; nil when it does not read.
func readLatex(s string) *mathValue { return readLatexAt(s, 0) }

func readLatexAt(s string, depth int) *mathValue {
	s = strings.TrimSpace(s)
	if s == "" || !balanced(s) || trailingOp.MatchString(s) || strings.ContainsAny(s, "?") {
		return nil
	}
	if depth > maxReadDepth || len(s) > maxReadLen {
		return leaf(s)
	}
	if parts := splitTop(s, "="); len(parts) > 1 {
		return equation(parts, depth)
	}
	if parts := splitTopCommand(s, `\in`); len(parts) == 2 {
		return equation(parts, depth)
	}
	if r := inequality(s, depth); r != nil {
		return r
	}
	if strings.HasSuffix(s, `\%`) {
		v := readLatexAt(strings.TrimSuffix(s, `\%`), depth+1)
		if v == nil {
			return nil
		}
		return v.percent()
	}
	if thousandsNumber.MatchString(strings.ReplaceAll(s, " ", "")) {
		return leaf(strings.ReplaceAll(strings.ReplaceAll(s, " ", ""), ",", ""))
	}
	if inner, ok := enclosed(s, `\{`, `\}`); ok {
		return elements(setValue, splitTop(inner, ","), depth)
	}
	for _, b := range [][2]string{{"(", ")"}, {"[", "]"}, {"[", ")"}, {"(", "]"}} {
		inner, ok := enclosed(s, b[0], b[1])
		if !ok {
			continue
		}
		items := splitTop(inner, ",")
		switch {
		case len(items) == 1 && b == [2]string{"(", ")"}:
			return readLatexAt(inner, depth+1)
		case len(items) == 2:
			v := elements(intervalValue, items, depth)
			if v != nil {
				v.leftOpen, v.rightOpen = b[0] == "(", b[1] == ")"
			}
			return v
		case len(items) > 2:
			return elements(tupleValue, items, depth)
		}
	}
	if items := splitTop(s, ","); len(items) > 1 {
		return elements(setValue, items, depth)
	}
	return leaf(s)
}

// inequalities as one direction: "a > b" is written "b<a", "a \geq b"
// "b<=a", so that a flipped inequality reads the same (sympy compares the
// two sides' difference either way round).
var inequalityOps = []struct {
	op, less string
	flip     bool
}{
	{`\leq`, "<=", false}, {`\geq`, "<=", true}, {`\le`, "<=", false}, {`\ge`, "<=", true},
	{"<=", "<=", false}, {">=", "<=", true}, {`\lt`, "<", false}, {`\gt`, "<", true},
	{"<", "<", false}, {">", "<", true},
}

func inequality(s string, depth int) *mathValue {
	for _, o := range inequalityOps {
		parts := splitTopCommand(s, o.op)
		if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
			continue
		}
		l, r := readLatexAt(parts[0], depth+1), readLatexAt(parts[1], depth+1)
		if l == nil || r == nil || l.kind != leafValue || r.kind != leafValue {
			return nil
		}
		if o.flip {
			l, r = r, l
		}
		return &mathValue{kind: leafValue, text: l.text + o.less + r.text}
	}
	return nil
}

func equation(parts []string, depth int) *mathValue {
	v := &mathValue{kind: equationValue}
	for _, p := range parts {
		side := readLatexAt(p, depth+1)
		if side == nil {
			return nil
		}
		v.items = append(v.items, side)
	}
	v.assignment = assignee.MatchString(strings.TrimSpace(parts[0]))
	return v
}

func elements(kind valueKind, items []string, depth int) *mathValue {
	v := &mathValue{kind: kind}
	for _, it := range items {
		e := readLatexAt(it, depth+1)
		if e == nil {
			return nil
		}
		v.items = append(v.items, e)
	}
	return v
}

// enclosed is the inside of s when open … close wrap all of it.
func enclosed(s, open, close string) (string, bool) {
	if !strings.HasPrefix(s, open) || !strings.HasSuffix(s, close) || len(s) < len(open)+len(close) {
		return "", false
	}
	inner := s[len(open) : len(s)-len(close)]
	if splitTop(inner, ",") == nil {
		return "", false
	}
	return inner, true
}

// balanced reports whether braces pair up ("\{" and "\}" are literal).
func balanced(s string) bool {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '{':
			depth++
		case '}':
			if depth--; depth < 0 {
				return false
			}
		}
	}
	return depth == 0
}

// splitTop splits s at sep outside any bracket; nil when brackets do not
// pair (an interval's "[a, b)" pairs: any opener closes with any closer).
func splitTop(s, sep string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			if strings.HasPrefix(s[i:], `\{`) {
				depth++
			} else if strings.HasPrefix(s[i:], `\}`) {
				depth--
			}
			i++
		case c == '{' || c == '(' || c == '[':
			depth++
		case c == '}' || c == ')' || c == ']':
			if depth--; depth < 0 {
				return nil
			}
		case depth == 0 && strings.HasPrefix(s[i:], sep):
			if sep == "=" && (i > 0 && strings.ContainsRune("<>!", rune(s[i-1])) || strings.HasPrefix(s[i+1:], "=")) {
				continue
			}
			out = append(out, strings.TrimSpace(s[start:i]))
			start = i + len(sep)
		}
	}
	if depth != 0 {
		return nil
	}
	return append(out, strings.TrimSpace(s[start:]))
}

// splitTopCommand splits at the first cmd outside brackets (a command
// word: "\in", not "\infty").
func splitTopCommand(s, cmd string) []string {
	for i := 0; i+len(cmd) <= len(s); i++ {
		word := isLetter(cmd[len(cmd)-1]) // a command word ends at a non-letter
		if s[i:i+len(cmd)] != cmd || word && i+len(cmd) < len(s) && isLetter(s[i+len(cmd)]) {
			continue
		}
		if splitTop(s[:i], ",") == nil {
			continue
		}
		return []string{strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+len(cmd):])}
	}
	return nil
}

// readPlainExpression reads a plain expression that is Python arithmetic
// (numbers, + - * / ^ and parentheses, no implicit products); nil if not.
func readPlainExpression(s string) *mathValue {
	s = strings.TrimSpace(strings.ReplaceAll(s, "\n", " "))
	if !pythonArithmetic(s) {
		return nil
	}
	e := strings.ReplaceAll(strings.ReplaceAll(s, " ", ""), "**", "^")
	return leaf(e)
}

// pythonArithmetic reports whether s parses as a Python expression of
// numbers, + - * / ** (^ read as **) and parentheses.
func pythonArithmetic(s string) bool {
	p := &arith{s: strings.ReplaceAll(s, "^", "**")}
	if !p.sum() {
		return false
	}
	p.space()
	return p.i == len(p.s)
}

type arith struct {
	s     string
	i     int
	depth int
}

func (p *arith) space() {
	for p.i < len(p.s) && isSpaceByte(p.s[p.i]) {
		p.i++
	}
}

func (p *arith) eat(t string) bool {
	p.space()
	if strings.HasPrefix(p.s[p.i:], t) {
		p.i += len(t)
		return true
	}
	return false
}

func (p *arith) sum() bool {
	if p.depth++; p.depth > 200 {
		return false
	}
	defer func() { p.depth-- }()
	if !p.product() {
		return false
	}
	for p.eat("+") || p.eat("-") {
		if !p.product() {
			return false
		}
	}
	return true
}

func (p *arith) product() bool {
	if !p.unary() {
		return false
	}
	for {
		switch {
		case p.eat("//"), p.eat("*"), p.eat("/"): // a power was taken by unary
			if !p.unary() {
				return false
			}
		default:
			return true
		}
	}
}

func (p *arith) unary() bool {
	if p.eat("+") || p.eat("-") {
		return p.unary()
	}
	if !p.atom() {
		return false
	}
	if p.eat("**") {
		return p.unary()
	}
	return true
}

func (p *arith) atom() bool {
	p.space()
	if p.eat("(") {
		return p.sum() && p.eat(")")
	}
	start := p.i
	for p.i < len(p.s) && isDigit(p.s[p.i]) {
		p.i++
	}
	if p.i < len(p.s) && p.s[p.i] == '.' {
		p.i++
		for p.i < len(p.s) && isDigit(p.s[p.i]) {
			p.i++
		}
	}
	return p.i > start && p.s[start:p.i] != "."
}
