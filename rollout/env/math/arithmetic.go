// arithmetic.go — random arithmetic expressions with exact answers.
//
// What it is: a random binary expression tree over integers, rendered in
// LaTeX with the fewest parentheses that keep its meaning, evaluated with
// exact rationals. Difficulty sets the operand count (difficulty+1), the
// number range, and which operations appear:
//
//	0    place value, not an expression: "What is the tens digit of $47$?"
//	     (placeValueProblem). The answer is a digit copied from the
//	     question, which a tiny model learns in minutes, and a held-out
//	     question is a number it has not seen.
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
	verbs := []string{"Compute $%s$.", "Evaluate $%s$.", "What is the value of $%s$?"}
	return fmt.Sprintf(verbs[r.IntN(len(verbs))], e.latex()), formatRational(v), true
}

// placeValueProblem is difficulty 0: which digit of a two- or three-digit
// number stands in a named place. Its digits are distinct, so mistake —
// the digit of another place, the error a learner makes — is always wrong.
func placeValueProblem(r *rollout.Rand) (question, gold, mistake string) {
	places := []string{"hundreds", "tens", "units"}
	var digits []int
	for {
		n := r.Range(10, 999)
		digits = digits[:0]
		for ; n > 0; n /= 10 {
			digits = append([]int{n % 10}, digits...)
		}
		if distinct(digits) {
			break
		}
	}
	places = places[3-len(digits):]
	ask := r.IntN(len(digits))
	other := (ask + 1 + r.IntN(len(digits)-1)) % len(digits)
	number := ""
	for _, d := range digits {
		number += fmt.Sprint(d)
	}
	forms := []string{"What is the %s digit of $%s$?", "Which digit is in the %s place of $%s$?"}
	return fmt.Sprintf(forms[r.IntN(len(forms))], places[ask], number), fmt.Sprint(digits[ask]), fmt.Sprint(digits[other])
}

func distinct(ds []int) bool {
	seen := map[int]bool{}
	for _, d := range ds {
		if seen[d] {
			return false
		}
		seen[d] = true
	}
	return true
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
