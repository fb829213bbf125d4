package math

import (
	"strings"
	"testing"

	"troupe/rollout"
)

// hostileSum is a ~720-character answer whose exact value grows past any
// use: forty degree-3969 powers added up at each evaluation point.
func hostileSum() string {
	var p []string
	for k := 0; k < 40; k++ {
		p = append(p, "((x+"+string(rune('1'+k%9))+")^{63})^{63}")
	}
	return strings.Join(p, "+")
}

// A hostile answer runs out of the grader's budget (exact values past
// maxExactBits, or maxGradeTime) and is graded wrong and counted, while
// answers of ordinary size are graded as before. Without the budget the
// comparisons ran to completion (over stays false) at a cost that grows
// about 12× per doubling of the answer.
func TestGraderBudget(t *testing.T) {
	hostile := map[string]string{
		"a sum of huge powers":    hostileSum(),
		"a product of powers":     strings.Repeat("(7/3)^{63}*", 59) + "(7/3)^{63}",
		"a power of a huge power": "((x+1)^{63}(y+2)^{63})^{63}*((x+3)^{63}(y+5)^{63})^{63}",
	}
	for name, a := range hostile {
		if equal, over := Grade(a, "x+y"); equal || !over {
			t.Errorf("%s: equal %v, over budget %v; want not equal and over budget", name, equal, over)
		}
		s := Reward{}.Score(rollout.Task{Answer: "x+y"}, `\boxed{`+a+`}`)
		if s.Reward != 0 || s.Metrics[MetricOverBudget] != 1 {
			t.Errorf("%s: score %+v, want reward 0 and %s 1", name, s, MetricOverBudget)
		}
	}
	for _, c := range [][2]string{{"(x+1)^{2}", "x^2+2x+1"}, {"2^{100}", "4^{50}"}, {`\frac{(7/3)^{63}}{(7/3)^{62}}`, `\frac{7}{3}`}} {
		if equal, over := Grade(c[0], c[1]); !equal || over {
			t.Errorf("%s = %s: equal %v, over budget %v", c[0], c[1], equal, over)
		}
	}
	if s := (Reward{}).Score(rollout.Task{Answer: "4"}, `\boxed{4}`); s.Reward != 1 || s.Metrics[MetricOverBudget] != 0 {
		t.Errorf("an ordinary right answer: %+v", s)
	}
}
