// wordproblems.go — short multi-step word problems with integer answers.
//
// What it is: seven templates (packs, savings, travel, fencing, ages,
// sharing, discounts). Difficulty 1…5 scales the numbers and adds steps
// (a template at difficulty 1 is one operation; at 5, three or four).
// Every draw is constructed so that the answer is a non-negative integer
// and every intermediate quantity makes sense (no giving away more than
// one has, shares that divide evenly); counts stated in the text are ≥ 2
// where a plural noun follows.
//
// What it deliberately is not: linguistically varied. The point is a cheap,
// endless, exactly-scored task family for CPU smoke runs and for watching
// a team learn; real benchmarks come from datasets (dataset.go).
package math

import (
	"fmt"
	"strings"

	"troupe/rollout"
)

type person struct{ name, subj, poss string }

var people = []person{
	{"Ada", "she", "her"}, {"Ben", "he", "his"}, {"Chloe", "she", "her"}, {"Dev", "he", "his"},
	{"Elena", "she", "her"}, {"Farid", "he", "his"}, {"Grace", "she", "her"}, {"Hiro", "he", "his"},
	{"Ines", "she", "her"}, {"Jonas", "he", "his"}, {"Kemi", "she", "her"}, {"Luca", "he", "his"},
	{"Maya", "she", "her"}, {"Noah", "he", "his"}, {"Olga", "she", "her"}, {"Pavel", "he", "his"},
}

var things = []string{"apples", "pencils", "stickers", "marbles", "cookies", "stamps", "shells", "cards"}

// wordScale is the typical size of a quantity at each difficulty.
var wordScale = [...]int{0, 10, 20, 50, 100, 400}

type wordTemplate func(r *rollout.Rand, d int) (question string, gold int)

var wordTemplates = []wordTemplate{packsProblem, savingsProblem, travelProblem, fencingProblem, agesProblem, sharingProblem, discountProblem}

func wordProblem(r *rollout.Rand, difficulty int) (question, gold string) {
	q, a := wordTemplates[r.IntN(len(wordTemplates))](r, difficulty)
	return q, fmt.Sprint(a)
}

func pick[T any](r *rollout.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

func upper(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

func packsProblem(r *rollout.Rand, d int) (string, int) {
	p, it := pick(r, people), pick(r, things)
	a, b := r.Range(2, 2+wordScale[d]/5), r.Range(2, 12)
	total := a * b
	q := fmt.Sprintf("%s buys %d packs of %s with %d %s in each pack.", p.name, a, it, b, it)
	ask := fmt.Sprintf("How many %s does %s have now?", it, p.name)
	if d >= 2 {
		c := r.Range(2, total-1) // total ≥ 4: a plural, and something is left
		total -= c
		q += fmt.Sprintf(" %s gives %d %s to a friend.", upper(p.subj), c, it)
	}
	if d >= 3 {
		e := r.Range(1, wordScale[d])
		total += e
		q += fmt.Sprintf(" Then %s buys %d more %s.", p.subj, e, it)
	}
	if d >= 4 {
		k := r.Range(2, 9)
		pad := (k - total%k) % k // make the split even: buy a few more first
		if pad > 0 {
			total += pad
			q += fmt.Sprintf(" A neighbour adds %d %s.", pad, it)
		}
		q += fmt.Sprintf(" Finally %s puts all the %s into %d boxes with the same number in each box.", p.subj, it, k)
		total /= k
		ask = fmt.Sprintf("How many %s are in each box?", it)
	}
	return q + " " + ask, total
}

func savingsProblem(r *rollout.Rand, d int) (string, int) {
	p := pick(r, people)
	a, b := r.Range(2, wordScale[d]), r.Range(2, 10)
	total := a * b
	q := fmt.Sprintf("%s saves %d dollars every week for %d weeks.", p.name, a, b)
	if d >= 2 {
		c := r.Range(2, total)
		total -= c
		q += fmt.Sprintf(" Then %s spends %d dollars on a %s.", p.subj, c, pick(r, []string{"bicycle", "game", "jacket", "book"}))
	}
	if d >= 3 {
		e, f := r.Range(2, 15), r.Range(2, 8)
		total += e * f
		q += fmt.Sprintf(" %s also earns %d dollars for each of %d chores.", upper(p.subj), e, f)
	}
	if d >= 5 {
		k := r.Range(2, 5)
		q += fmt.Sprintf(" Finally %s shares the money equally among %d cousins, giving each as many whole dollars as possible, and keeps what is left.", p.subj, k)
		return q + " How many dollars does each cousin get?", total / k
	}
	return q + fmt.Sprintf(" How many dollars does %s have now?", p.name), total
}

func travelProblem(r *rollout.Rand, d int) (string, int) {
	vehicle := pick(r, []string{"train", "bus", "car", "ferry"})
	a, b := r.Range(2, 2+wordScale[d]/2)*5, r.Range(2, 6)
	dist := a * b
	q := fmt.Sprintf("A %s travels at %d kilometres per hour for %d hours", vehicle, a, b)
	if d >= 2 {
		c, e := r.Range(2, 2+wordScale[d]/2)*5, r.Range(2, 5)
		dist += c * e
		q += fmt.Sprintf(", then at %d kilometres per hour for %d hours", c, e)
	}
	q += "."
	if d >= 4 {
		rest := r.Range(2, wordScale[d])
		return q + fmt.Sprintf(" The whole trip is %d kilometres long. How many kilometres are left to travel?", dist+rest), rest
	}
	return q + " How many kilometres does it travel in total?", dist
}

func fencingProblem(r *rollout.Rand, d int) (string, int) {
	a, b := r.Range(2, 2+wordScale[d]), r.Range(2, 2+wordScale[d]/2)
	q := fmt.Sprintf("A rectangular garden is %d metres long and %d metres wide.", a, b)
	switch {
	case d == 1:
		return q + " What is its area in square metres?", a * b
	case d == 2:
		return q + " What is its perimeter in metres?", 2 * (a + b)
	case d == 3:
		c := r.Range(2, 20)
		return q + fmt.Sprintf(" Fencing costs %d dollars per metre. How many dollars does it cost to fence the whole garden?", c), c * 2 * (a + b)
	}
	c, g := r.Range(2, 20), r.Range(1, min(a, b))
	return q + fmt.Sprintf(" Fencing costs %d dollars per metre. The fence goes all the way around except for a gate %d metres wide, which is bought separately for %d dollars. How many dollars are spent in total?", c, g, c*3),
		c*(2*(a+b)-g) + c*3
}

func agesProblem(r *rollout.Rand, d int) (string, int) {
	ps := r.Perm(len(people))
	p, m := people[ps[0]], people[ps[1]]
	gap, young, later := r.Range(2, 30), r.Range(2, 40+wordScale[d]/10), r.Range(2, 20)
	q := fmt.Sprintf("%s is %d years older than %s.", p.name, gap, m.name)
	if d <= 2 {
		return q + fmt.Sprintf(" %s is %d years old. How old will %s be in %d years?", m.name, young, p.name, later), young + gap + later
	}
	sum := (young + later) + (young + gap + later)
	q += fmt.Sprintf(" In %d years, their ages will add up to %d.", later, sum)
	if d >= 5 {
		return q + fmt.Sprintf(" How old will %s be when %s is twice as old as %s is now?", p.name, m.name, m.subj), 2*young + gap
	}
	return q + fmt.Sprintf(" How old is %s now?", m.name), young
}

func sharingProblem(r *rollout.Rand, d int) (string, int) {
	p, it := pick(r, people), pick(r, things)
	k := r.Range(2, 9)
	a := r.Range(k+1, k+wordScale[d]*2)
	q := fmt.Sprintf("%s has %d %s.", p.name, a, it)
	if d >= 3 {
		e := r.Range(1, wordScale[d])
		a += e
		q += fmt.Sprintf(" %s finds %d more.", upper(p.subj), e)
	}
	q += fmt.Sprintf(" %s shares them equally among %d friends, giving each friend as many as possible, and keeps the rest.", upper(p.subj), k)
	if d >= 2 && r.IntN(2) == 0 {
		return q + fmt.Sprintf(" How many %s does %s keep?", it, p.name), a % k
	}
	return q + " How many does each friend get?", a / k
}

func discountProblem(r *rollout.Rand, d int) (string, int) {
	thing := pick(r, []string{"jacket", "lamp", "backpack", "kettle", "chair"})
	price := r.Range(1, max(1, wordScale[d]/4)) * 20
	pct := pick(r, []int{5, 10, 20, 25, 50})
	sale := price * (100 - pct) / 100
	q := fmt.Sprintf("A %s costs %d dollars and is on sale for %d%% off.", thing, price, pct)
	if d <= 2 {
		return q + " What is the sale price in dollars?", sale
	}
	k := r.Range(2, 6)
	q += fmt.Sprintf(" %s buys %d of them", pick(r, people).name, k)
	if d >= 4 {
		paid := (sale*k/50 + 1) * 50
		return q + fmt.Sprintf(" and pays with %d dollars. How many dollars of change does the cashier give back?", paid), paid - sale*k
	}
	return q + ". How many dollars does that cost?", sale * k
}
