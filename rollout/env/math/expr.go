// expr.go — a small parser and evaluator for answers written as
// expressions, so that "2\sqrt{2}" and "\sqrt{8}", or "x^2-1" and
// "(x+1)(x-1)", compare equal (the symbolic step of equiv.go).
//
// What it is: a recursive-descent parser over normalised answer text (see
// Normalize) for numbers (integers, decimals, 1e3), single-letter variables,
// π, + - * / ^, \frac{a}{b}, \sqrt{a}, \sqrt[n]{a}, \cdot, \times, \div,
// parentheses and braces as groups, and implicit multiplication ("2x",
// "3(x+1)", "2\sqrt{3}"). A parsed expression is evaluated at fixed
// points of its variables: exactly, with math/big rationals, while it
// stays rational (integer powers up to maxExponent), and in float64 once
// a root of a non-square, π or a fractional power enters.
//
// Every comparison runs under a budget (budget below): an exact value
// past maxExactBits bits, or a comparison past maxGradeTime, stops it, and
// the answer is graded not equal and counted (Grade's overBudget). Exact
// rational arithmetic on a hostile answer otherwise grows without bound:
// a ~770-character sum of powers took ~15 s, about 12× per doubling.
//
// What it deliberately is not: a computer-algebra system. Two expressions
// are equal when they agree at every evaluation point (exactly, or within
// a relative 1e-12 in floating point): a rational identity cannot fool
// three exact points in practice, and sympy.simplify, which the reference
// grader calls, decides these same cases. Functions (sin, log, …),
// \infty, intervals and sets are not expressions here; they are compared
// as text.
package math

import (
	"errors"
	stdmath "math"
	"math/big"
	"strings"
	"time"
)

// maxExponent bounds an exact integer power (and keeps big.Rat cheap on
// adversarial input such as "9^{9^{9}}").
const maxExponent = 64

// The budget of one comparison: the size of any exact value (numerator and
// denominator bits together) and the time. A true answer needs far less:
// 2^{100} is 101 bits, and a degree-63 polynomial at the evaluation points
// a few hundred.
const (
	maxExactBits = 1 << 14
	maxGradeTime = 250 * time.Millisecond
)

// budget is what is left of one comparison's budget; over is set when it
// ran out.
type budget struct {
	deadline time.Time
	over     bool
}

func newBudget() *budget { return &budget{deadline: time.Now().Add(maxGradeTime)} }

var errBudget = errors.New("over the grader's budget")

// spend checks an exact result (nil for none) and the clock.
func (b *budget) spend(r *big.Rat) error {
	if b.over || r != nil && r.Num().BitLen()+r.Denom().BitLen() > maxExactBits || time.Now().After(b.deadline) {
		b.over = true
		return errBudget
	}
	return nil
}

// node is a parsed expression.
type node struct {
	op   byte     // 'n' number, 'v' variable, 'p' π, 's' square root, '+', '-', '*', '/', '^', '~' (negate)
	num  *big.Rat // op 'n'
	name byte     // op 'v'
	a, b *node
}

var errSyntax = errors.New("not an expression")

// parseExpr parses a whole normalised answer (no whitespace) or fails.
func parseExpr(s string) (*node, error) {
	p := &exprParser{s: s}
	n, err := p.sum()
	if err != nil {
		return nil, err
	}
	if p.i != len(p.s) {
		return nil, errSyntax
	}
	return n, nil
}

type exprParser struct {
	s     string
	i     int
	depth int
}

func (p *exprParser) peek(prefix string) bool { return strings.HasPrefix(p.s[p.i:], prefix) }

func (p *exprParser) eat(prefix string) bool {
	if p.peek(prefix) {
		p.i += len(prefix)
		return true
	}
	return false
}

func (p *exprParser) sum() (*node, error) {
	if p.depth++; p.depth > 100 {
		return nil, errSyntax
	}
	defer func() { p.depth-- }()
	n, err := p.product()
	for err == nil {
		switch {
		case p.eat("+"):
			var m *node
			if m, err = p.product(); err == nil {
				n = &node{op: '+', a: n, b: m}
			}
		case p.eat("-"):
			var m *node
			if m, err = p.product(); err == nil {
				n = &node{op: '-', a: n, b: m}
			}
		default:
			return n, nil
		}
	}
	return nil, err
}

func (p *exprParser) product() (*node, error) {
	n, err := p.unary()
	for err == nil {
		var op byte
		switch {
		case p.eat("*"), p.eat(`\cdot`), p.eat(`\times`):
			op = '*'
		case p.eat("/"), p.eat(`\div`):
			op = '/'
		case p.startsAtom():
			op = '*' // implicit: "2x", "3(x+1)", "2\sqrt{3}"
		default:
			return n, nil
		}
		var m *node
		if m, err = p.unary(); err == nil {
			n = &node{op: op, a: n, b: m}
		}
	}
	return nil, err
}

func (p *exprParser) unary() (*node, error) {
	switch {
	case p.eat("-"):
		n, err := p.unary()
		return &node{op: '~', a: n}, err
	case p.eat("+"):
		return p.unary()
	}
	return p.power()
}

// power is right-associative: 2^3^2 = 2^(3^2); -x^2 = -(x^2).
func (p *exprParser) power() (*node, error) {
	base, err := p.atom()
	if err != nil || !p.eat("^") {
		return base, err
	}
	exp, err := p.unary()
	if err != nil {
		return nil, err
	}
	return &node{op: '^', a: base, b: exp}, nil
}

func (p *exprParser) startsAtom() bool {
	if p.i >= len(p.s) {
		return false
	}
	c := p.s[p.i]
	return c == '(' || c == '{' || isDigit(c) || c == '.' || isLetter(c) ||
		p.peek(`\frac`) || p.peek(`\sqrt`) || p.peek(`\pi`)
}

func (p *exprParser) atom() (*node, error) {
	if p.i >= len(p.s) {
		return nil, errSyntax
	}
	switch c := p.s[p.i]; {
	case c == '(' || c == '{':
		p.i++
		n, err := p.sum()
		if err != nil || !p.eat(map[byte]string{'(': ")", '{': "}"}[c]) {
			return nil, errSyntax
		}
		return n, nil
	case isDigit(c) || c == '.':
		return p.number()
	case p.eat(`\frac`):
		num, err := p.group()
		if err != nil {
			return nil, err
		}
		den, err := p.group()
		return &node{op: '/', a: num, b: den}, err
	case p.eat(`\sqrt`):
		var index *node
		if p.eat("[") {
			var err error
			if index, err = p.sum(); err != nil || !p.eat("]") {
				return nil, errSyntax
			}
		}
		arg, err := p.group()
		if err != nil {
			return nil, err
		}
		if index == nil {
			return &node{op: 's', a: arg}, nil
		}
		one := &node{op: 'n', num: big.NewRat(1, 1)}
		return &node{op: '^', a: arg, b: &node{op: '/', a: one, b: index}}, nil
	case p.eat(`\pi`), p.eat("pi"):
		return &node{op: 'p'}, nil
	case p.eat("sqrt("):
		p.i--
		arg, err := p.atom()
		return &node{op: 's', a: arg}, err
	case isLetter(c):
		p.i++
		return &node{op: 'v', name: c}, nil
	}
	return nil, errSyntax
}

// group is the argument of \frac or \sqrt: {…}, (…) or one digit or letter
// (Normalize has already braced \frac12 and \sqrt3).
func (p *exprParser) group() (*node, error) {
	if p.i < len(p.s) && (p.s[p.i] == '{' || p.s[p.i] == '(') {
		return p.atom()
	}
	if p.i < len(p.s) && (isDigit(p.s[p.i]) || isLetter(p.s[p.i])) {
		p.i++
		return parseExpr(p.s[p.i-1 : p.i])
	}
	return nil, errSyntax
}

func (p *exprParser) number() (*node, error) {
	j := p.i
	for j < len(p.s) && (isDigit(p.s[j]) || p.s[j] == '.') {
		j++
	}
	// an exponent part: 1e3, 2.5e-4 (not "2e" or "2ex": e is then a variable)
	if j+1 < len(p.s) && (p.s[j] == 'e' || p.s[j] == 'E') {
		k := j + 1
		if p.s[k] == '-' || p.s[k] == '+' {
			k++
		}
		d := k
		for d < len(p.s) && isDigit(p.s[d]) {
			d++
		}
		if d > k && d-k <= 3 && (d == len(p.s) || !isLetter(p.s[d])) {
			j = d
		}
	}
	r, ok := new(big.Rat).SetString(p.s[p.i:j])
	if !ok {
		return nil, errSyntax
	}
	p.i = j
	return &node{op: 'n', num: r}, nil
}

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// variables adds the expression's variable names to set.
func (n *node) variables(set map[byte]bool) {
	if n == nil {
		return
	}
	if n.op == 'v' {
		set[n.name] = true
	}
	n.a.variables(set)
	n.b.variables(set)
}

// value is a number: exact when r is not nil, else f.
type value struct {
	r *big.Rat
	f float64
}

func (v value) float() float64 {
	if v.r != nil {
		f, _ := v.r.Float64()
		return f
	}
	return v.f
}

var errUndefined = errors.New("undefined")

// eval computes the expression with the variables set to vars, within b.
func (n *node) eval(vars map[byte]*big.Rat, b *budget) (value, error) {
	if err := b.spend(nil); err != nil {
		return value{}, err
	}
	v, err := n.evalNode(vars, b)
	if err == nil && v.r != nil {
		err = b.spend(v.r)
	}
	return v, err
}

func (n *node) evalNode(vars map[byte]*big.Rat, bud *budget) (value, error) {
	switch n.op {
	case 'n':
		return value{r: n.num}, nil
	case 'v':
		return value{r: vars[n.name]}, nil
	case 'p':
		return value{f: stdmath.Pi}, nil
	}
	a, err := n.a.eval(vars, bud)
	if err != nil {
		return value{}, err
	}
	switch n.op {
	case '~':
		if a.r != nil {
			return value{r: new(big.Rat).Neg(a.r)}, nil
		}
		return value{f: -a.f}, nil
	case 's':
		return squareRoot(a)
	}
	b, err := n.b.eval(vars, bud)
	if err != nil {
		return value{}, err
	}
	if n.op == '^' {
		return power(a, b, bud)
	}
	if a.r != nil && b.r != nil {
		r := new(big.Rat)
		switch n.op {
		case '+':
			return value{r: r.Add(a.r, b.r)}, nil
		case '-':
			return value{r: r.Sub(a.r, b.r)}, nil
		case '*':
			return value{r: r.Mul(a.r, b.r)}, nil
		case '/':
			if b.r.Sign() == 0 {
				return value{}, errUndefined
			}
			return value{r: r.Quo(a.r, b.r)}, nil
		}
	}
	x, y := a.float(), b.float()
	var f float64
	switch n.op {
	case '+':
		f = x + y
	case '-':
		f = x - y
	case '*':
		f = x * y
	case '/':
		if y == 0 {
			return value{}, errUndefined
		}
		f = x / y
	}
	return finite(f)
}

func squareRoot(a value) (value, error) {
	if a.r != nil && a.r.Sign() >= 0 {
		n, d := new(big.Int).Sqrt(a.r.Num()), new(big.Int).Sqrt(a.r.Denom())
		if new(big.Int).Mul(n, n).Cmp(a.r.Num()) == 0 && new(big.Int).Mul(d, d).Cmp(a.r.Denom()) == 0 {
			return value{r: new(big.Rat).SetFrac(n, d)}, nil
		}
	}
	x := a.float()
	if x < 0 {
		return value{}, errUndefined // no complex numbers
	}
	return finite(stdmath.Sqrt(x))
}

func power(a, b value, bud *budget) (value, error) {
	if a.r != nil && b.r != nil && b.r.IsInt() && b.r.Num().IsInt64() {
		e := b.r.Num().Int64()
		if e > -maxExponent && e < maxExponent && (e >= 0 || a.r.Sign() != 0) &&
			a.r.Num().BitLen()+a.r.Denom().BitLen() < 4096 {
			r := new(big.Rat).SetInt64(1)
			for k := int64(0); k < abs64(e); k++ {
				r.Mul(r, a.r)
				if err := bud.spend(r); err != nil {
					return value{}, err
				}
			}
			if e < 0 {
				r.Inv(r)
			}
			return value{r: r}, nil
		}
	}
	return finite(stdmath.Pow(a.float(), b.float()))
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

func finite(f float64) (value, error) {
	if stdmath.IsNaN(f) || stdmath.IsInf(f, 0) {
		return value{}, errUndefined
	}
	return value{f: f}, nil
}

// evaluation points for up to two variables: rationals away from the small
// integers where answers' poles and roots tend to sit.
var evalPoints = [][2]*big.Rat{
	{big.NewRat(2, 7), big.NewRat(5, 11)},
	{big.NewRat(-3, 5), big.NewRat(7, 3)},
	{big.NewRat(13, 4), big.NewRat(-1, 9)},
}

// maxVariables is the reference grader's limit: it does not evaluate an
// answer with more than two unknown letters.
const maxVariables = 2

// sameValue reports whether two expressions agree at every evaluation
// point; false when either is undefined there, has too many variables, or
// the budget b runs out.
func sameValue(x, y *node, b *budget) bool {
	set := map[byte]bool{}
	x.variables(set)
	y.variables(set)
	if len(set) > maxVariables {
		return false
	}
	names := make([]byte, 0, 2)
	for v := range set {
		names = append(names, v)
	}
	if len(names) == 2 && names[0] > names[1] {
		names[0], names[1] = names[1], names[0]
	}
	for _, pt := range evalPoints {
		vars := map[byte]*big.Rat{}
		for i, v := range names {
			vars[v] = pt[i]
		}
		u, err1 := x.eval(vars, b)
		if err1 != nil {
			return false
		}
		v, err2 := y.eval(vars, b)
		if err2 != nil {
			return false
		}
		if u.r != nil && v.r != nil {
			if u.r.Cmp(v.r) != 0 {
				return false
			}
			continue
		}
		f, g := u.float(), v.float()
		if stdmath.Abs(f-g) > 1e-12*stdmath.Max(1, stdmath.Max(stdmath.Abs(f), stdmath.Abs(g))) {
			return false
		}
	}
	return true
}
