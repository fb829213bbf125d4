// arithmetic.go — random arithmetic expressions with exact answers.
//
// What it is: a random binary expression tree over integers, rendered in
// LaTeX with the fewest parentheses that keep its meaning, evaluated with
// exact rationals. Difficulty sets the operand count (difficulty+1), the
// number range, and which operations appear:
//
//	0    a two-digit number plus or minus a one-digit number with no carry
//	     or borrow: the tens digit is copied and the units digit is one fact
//	     of a small table, so a tiny model can learn it in minutes and a
//	     held-out question is a new combination of parts it has seen
//	1–2  + − ×, operands 1…20 / 1…50, integer answers
//	3    adds ÷, operands up to 100; draws whose answer is not an integer are redrawn
//	4–5  ÷ may leave a fraction, negative operands, operands up to 200 / 500;
//	     answers are integers or \frac{p}{q} in lowest terms
//
// Every × and ÷ has a small factor (2…12) on its right, so answers stay in
// the range a person would compute by hand (|numerator| < 2^24,
// denominator < 1024; larger draws are redrawn).
//
// What it deliberately is not: a curriculum of problem types; the word
// problems (wordproblems.go) carry the multi-step reading.
package math

import (
	"fmt"
	"math/big"

	"troupe/rollout"
)

type exprNode struct {
	op          byte // 0 for a literal, else '+', '-', '*', '/'
	value       int64
	left, right *exprNode
}

var arithmeticRange = [...]int64{0, 20, 50, 100, 200, 500}

// arithmeticProblem draws one expression; ok is false when the draw broke a
// rule of its difficulty (division by zero, an inexact quotient below
// difficulty 4, a result too large) and must be redrawn.
func arithmeticProblem(r *rollout.Rand, difficulty int) (question, gold string, ok bool) {
	verbs := []string{"Compute $%s$.", "Evaluate $%s$.", "What is the value of $%s$?"}
	if difficulty == 0 {
		a, b := int64(r.Range(10, 99)), int64(r.Range(1, 9))
		e := &exprNode{op: '+', left: &exprNode{value: a}, right: &exprNode{value: b}}
		if r.IntN(2) == 0 {
			e.op = '-'
		}
		v, _ := e.eval()
		if v.Num().Int64()/10 != a/10 { // a carry or a borrow
			return "", "", false
		}
		return fmt.Sprintf(verbs[r.IntN(len(verbs))], e.latex()), formatRational(v), true
	}
	ops := []byte{'+', '-', '*'}
	if difficulty >= 3 {
		ops = append(ops, '/')
	}
	e := randomExpr(r, difficulty+1, difficulty, ops)
	v, ok := e.eval()
	if !ok {
		return "", "", false
	}
	if difficulty < 4 && !v.IsInt() {
		return "", "", false
	}
	if v.Num().BitLen() > 24 || v.Denom().BitLen() > 10 {
		return "", "", false
	}
	return fmt.Sprintf(verbs[r.IntN(len(verbs))], e.latex()), formatRational(v), true
}

func randomExpr(r *rollout.Rand, operands, difficulty int, ops []byte) *exprNode {
	if operands == 1 {
		v := int64(r.Range(1, int(arithmeticRange[difficulty])))
		if difficulty >= 4 && r.IntN(4) == 0 {
			v = -v
		}
		return &exprNode{value: v}
	}
	op := ops[r.IntN(len(ops))]
	if op == '*' || op == '/' {
		// Keep products and quotients readable: a small factor on the right.
		f := int64(r.Range(2, 12))
		if difficulty >= 4 && r.IntN(4) == 0 {
			f = -f
		}
		return &exprNode{op: op, left: randomExpr(r, operands-1, difficulty, ops), right: &exprNode{value: f}}
	}
	left := 1 + r.IntN(operands-1)
	return &exprNode{op: op, left: randomExpr(r, left, difficulty, ops), right: randomExpr(r, operands-left, difficulty, ops)}
}

func (e *exprNode) eval() (*big.Rat, bool) {
	if e.op == 0 {
		return new(big.Rat).SetInt64(e.value), true
	}
	a, ok1 := e.left.eval()
	b, ok2 := e.right.eval()
	if !ok1 || !ok2 {
		return nil, false
	}
	switch e.op {
	case '+':
		return a.Add(a, b), true
	case '-':
		return a.Sub(a, b), true
	case '*':
		return a.Mul(a, b), true
	}
	if b.Sign() == 0 {
		return nil, false
	}
	return a.Quo(a, b), true
}

func precedence(op byte) int {
	switch op {
	case '+', '-':
		return 1
	case '*', '/':
		return 2
	}
	return 3
}

// latex renders the tree; a child is parenthesised when its operator binds
// more loosely than the parent's, or equally on the right of − and ÷.
func (e *exprNode) latex() string {
	if e.op == 0 {
		if e.value < 0 {
			return fmt.Sprintf("(%d)", e.value)
		}
		return fmt.Sprint(e.value)
	}
	wrap := func(c *exprNode, right bool) string {
		s := c.latex()
		p, q := precedence(c.op), precedence(e.op)
		if p < q || (right && p == q && (e.op == '-' || e.op == '/')) {
			return "(" + s + ")"
		}
		return s
	}
	sym := map[byte]string{'+': " + ", '-': " - ", '*': ` \times `, '/': ` \div `}[e.op]
	return wrap(e.left, false) + sym + wrap(e.right, true)
}

// formatRational writes an integer as digits and anything else as a
// LaTeX fraction in lowest terms with the sign in front.
func formatRational(v *big.Rat) string {
	if v.IsInt() {
		return v.Num().String()
	}
	num := new(big.Int).Abs(v.Num())
	sign := ""
	if v.Sign() < 0 {
		sign = "-"
	}
	return fmt.Sprintf(`%s\frac{%s}{%s}`, sign, num, v.Denom())
}
