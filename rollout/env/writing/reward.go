package writing

// reward.go — the joint writing reward: CoMLRL's level-gated TLDR reward
// (LLM_Collab_Writing, rewards/tldr_rewards.py, tldr_combined_reward),
// restated from the reference code, plus troupe's optional degeneration
// guards. What it is not: the arXiv variant of the reference (128–256 words,
// ratio windows around 1), which no troupe config uses.
//
// Levels, each reached only when the one before paid something:
//
//	1 structure      0.5   both texts have 8–256 whitespace-separated tokens   (else 0, stop)
//	2 length_ratio   ≤ 1   r = chars(expansion) / chars(summary):
//	                        1 on [1.6, 3.2], (r − 1.1)/0.5 on [1.1, 1.6),
//	                        1 − (r − 3.2)/1.8 on (3.2, 5.0]                    (else 0, stop)
//	3 unique_words   ≤ 0.5 u = distinct words(expansion) / distinct words(summary):
//	                        0.5 for u ≥ 2, 0.5·(u − 1.3)/0.7 on [1.3, 2)        (else 0, stop)
//	4 transitions    ≤ 0.4 0.4 × (0.4 + min(0.05·(k − 1), 0.6)) for k ≥ 1 transition
//	                        categories found in the expansion, 0 for none
//	  overlap        ≤ 0.6 0.6 × min(J, 0.03)/0.03, J the Jaccard similarity of
//	                        the two texts' word sets without stopwords (1 if both empty)
//
// Words are the maximal runs of letters, digits and underscores of the
// lower-cased text (Python's \b\w+\b); characters are Unicode code points.
// The highest reward is 2.98 (12 categories give 0.95 of the 0.4), not the
// 3.0 the reference's docstring states. The reference has no notion of
// success; troupe counts a pair as solved (accuracy, pass@k) when every
// level pays in full but the transition count: length ratio in [1.6, 3.2],
// unique-word ratio at least 2, Jaccard at least 0.03, and some transition.
//
// Departures (docs/departures.md, MAGRPO):
//  1. Guards (env.writing.guards, off by default, on in the tiny demo): a
//     text that repeats one word more than max(2, n/5) times in its n, whose
//     three-word sequences are more than a quarter repeats, or of whose
//     tokens more than 1 in 20 hold stray symbols fails level 1. A tiny
//     policy otherwise learns word salad, looped phrases and byte soup that
//     pass the distinct-word and overlap checks.
//  2. Transition words are found as substrings of the lower-cased
//     expansion, as the reference does ("so" is found in "also" and "as" in
//     "was"), so almost every expansion finds some category; kept for
//     fidelity.

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Level weights and windows.
const (
	StructureReward   = 0.5
	LengthRatioReward = 1.0
	UniqueWordsReward = 0.5
	TransitionsWeight = 0.4
	OverlapWeight     = 0.6
	// MaxReward is the highest reward a pair can earn.
	MaxReward = StructureReward + LengthRatioReward + UniqueWordsReward + TransitionsWeight*0.95 + OverlapWeight
)

// stopwords are left out of the overlap (Jaccard) sets.
var stopwords = setOf(`a all also an and any are as at bad be been being both but by can could did do does
each few first for from good great had has have he her here him his how i if in is it its just last left
little long low many may me might more most much must my new no not now of old on only or other our own
right same shall should so some such than that the their them then there these they this those to too us
very was we were what when where which who why will with would you your`)

// transitions are the reference's twelve categories of transition words.
var transitions = [][]string{
	strings.Split("furthermore|moreover|additionally|also|besides|in addition|what is more|not only|as well as|along with|coupled with|together with|likewise|similarly|equally important|by the same token|in the same way|correspondingly|in like manner|comparatively|analogously", "|"),
	strings.Split("for example|for instance|specifically|particularly|namely|such as|including|especially|in particular|to illustrate|as an illustration|case in point|to demonstrate|as evidence|to exemplify|notably|markedly|chiefly|mainly|primarily|above all|most importantly", "|"),
	strings.Split("that is|in other words|to put it simply|to clarify|indeed|in fact|actually|clearly|obviously|to put it another way|to rephrase|more precisely|specifically speaking|what this means is|the point is|essentially|basically|fundamentally|at its core|in essence|simply put|stated differently", "|"),
	strings.Split("therefore|thus|consequently|as a result|hence|accordingly|for this reason|due to this|because of this|so|then|thereby|wherefore|thence|ergo|as a consequence|in consequence|it follows that|this leads to|this results in|this causes|this brings about|owing to|on account of|thanks to|resulting from", "|"),
	strings.Split("however|nevertheless|nonetheless|on the other hand|in contrast|while|whereas|although|even though|despite this|but|yet|still|conversely|on the contrary|rather|instead|alternatively|otherwise|in opposition|by contrast|contrarily|notwithstanding|regardless|all the same|even so|be that as it may|in any case|at any rate", "|"),
	strings.Split("first|second|third|next|then|after that|finally|lastly|initially|subsequently|meanwhile|to begin with|to start with|in the beginning|at first|at the outset|primarily|secondly|thirdly|following this|afterward|later|later on|in the meantime|simultaneously|concurrently|at the same time|in conclusion|to conclude|ultimately|in the end|to summarize|in summary", "|"),
	strings.Split("indeed|certainly|surely|undoubtedly|without doubt|definitely|absolutely|positively|unquestionably|indubitably|of course|naturally|obviously|clearly|evidently|manifestly|undeniably|admittedly|granted|to be sure|in fact|as a matter of fact|notably|significantly", "|"),
	strings.Split("in summary|in conclusion|to summarize|to conclude|in short|in brief|briefly|to sum up|on the whole|overall|all in all|in essence|essentially|basically|fundamentally|in the final analysis|after all|ultimately|in the end|when all is said and done|the bottom line is", "|"),
	strings.Split("similarly|likewise|in the same way|equally|just as|comparable to|in comparison|by the same token|correspondingly|in like manner|along the same lines|in similar fashion|analogously|by analogy|just like|much like|as with", "|"),
	strings.Split("although|though|even though|while|whereas|despite|in spite of|regardless of|notwithstanding|admittedly|granted|even if|be that as it may|nevertheless|nonetheless|however|yet|still|all the same", "|"),
	strings.Split("if|unless|provided that|assuming that|supposing that|in case|in the event that|on condition that|given that|as long as|so long as|only if|even if|whether or not|should|were|had|otherwise|or else", "|"),
	strings.Split("when|while|as|after|before|until|since|during|meanwhile|simultaneously|at the same time|concurrently|previously|formerly|earlier|later|afterward|subsequently|eventually|finally|recently|lately|nowadays|currently|presently|immediately", "|"),
}

func setOf(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// words are the maximal runs of letters, digits and underscores of the
// lower-cased text.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) && r != '_' })
}

func distinct(ws []string, skip map[string]bool) map[string]bool {
	m := map[string]bool{}
	for _, w := range ws {
		if !skip[w] {
			m[w] = true
		}
	}
	return m
}

// transitionCategories counts the categories with a phrase found in text.
func transitionCategories(text string) int {
	lower, n := strings.ToLower(text), 0
	for _, cat := range transitions {
		for _, p := range cat {
			if strings.Contains(lower, p) {
				n++
				break
			}
		}
	}
	return n
}

// jaccard is the Jaccard similarity of the texts' word sets without
// stopwords; 1 when both are empty.
func jaccard(a, b string) float64 {
	sa, sb := distinct(words(a), stopwords), distinct(words(b), stopwords)
	if len(sa) == 0 && len(sb) == 0 {
		return 1
	}
	inter := 0
	for w := range sa {
		if sb[w] {
			inter++
		}
	}
	return float64(inter) / float64(len(sa)+len(sb)-inter)
}

// Result is a scored (summary, expansion) pair.
type Result struct {
	Terms   map[string]float64 // structure, length_ratio, unique_words, transitions, overlap
	Reward  float64            // the sum of the terms
	Success bool               // every level in full but the transition count
	Failed  []string           // what to improve, in words (the next turn's feedback)
}

// Reward scores a (summary, expansion) pair; guards turns on troupe's
// degeneration guards.
func Reward(summary, expansion string, guards bool) (res Result) {
	res = Result{Terms: map[string]float64{"structure": 0, "length_ratio": 0, "unique_words": 0, "transitions": 0, "overlap": 0}}
	defer func() {
		// in a fixed order: a float sum in map order would differ in the last
		// bit from run to run, and a resumed run would not be bit-identical
		for _, k := range slices.Sorted(maps.Keys(res.Terms)) {
			res.Reward += res.Terms[k]
		}
	}()
	for _, c := range []struct{ who, text string }{{"summary", summary}, {"expansion", expansion}} {
		n := len(strings.Fields(c.text))
		if n < 8 || n > 256 {
			res.Failed = append(res.Failed, fmt.Sprintf("the %s has %d words; write 8 to 256", c.who, n))
		} else if guards {
			if why := degenerate(c.text); why != "" {
				res.Failed = append(res.Failed, fmt.Sprintf("the %s %s", c.who, why))
			}
		}
	}
	if len(res.Failed) > 0 {
		return res
	}
	res.Terms["structure"] = StructureReward
	r := float64(utf8.RuneCountInString(expansion)) / float64(utf8.RuneCountInString(summary))
	switch {
	case r >= 1.6 && r <= 3.2:
		res.Terms["length_ratio"] = LengthRatioReward
	case r >= 1.1 && r < 1.6:
		res.Terms["length_ratio"] = LengthRatioReward * (r - 1.1) / 0.5
	case r > 3.2 && r <= 5.0:
		res.Terms["length_ratio"] = LengthRatioReward * (1 - (r-3.2)/1.8)
	default:
		res.Failed = append(res.Failed, fmt.Sprintf("the expansion is %.2f× the summary's length in characters; aim for 1.6× to 3.2× (nothing is paid outside 1.1× to 5×)", r))
		return res
	}
	if r < 1.6 || r > 3.2 {
		res.Failed = append(res.Failed, fmt.Sprintf("the expansion is %.2f× the summary's length in characters; aim for 1.6× to 3.2×", r))
	}
	us, ue := len(distinct(words(summary), nil)), len(distinct(words(expansion), nil))
	if us == 0 {
		res.Failed = append(res.Failed, "the summary has no words")
		return res
	}
	u := float64(ue) / float64(us)
	switch {
	case u >= 2:
		res.Terms["unique_words"] = UniqueWordsReward
	case u >= 1.3:
		res.Terms["unique_words"] = UniqueWordsReward * (u - 1.3) / 0.7
		res.Failed = append(res.Failed, fmt.Sprintf("the expansion uses %d distinct words, the summary %d; use at least twice as many", ue, us))
	default:
		res.Failed = append(res.Failed, fmt.Sprintf("the expansion uses %d distinct words, the summary %d; use at least twice as many (nothing is paid below 1.3×)", ue, us))
		return res
	}
	if k := transitionCategories(expansion); k > 0 {
		res.Terms["transitions"] = TransitionsWeight * min(0.4+min(0.05*float64(k-1), 0.6), 1)
	} else {
		res.Failed = append(res.Failed, "the expansion uses no transition words; link its sentences (for example, however, as a result)")
	}
	j := jaccard(summary, expansion)
	res.Terms["overlap"] = OverlapWeight * min(j, 0.03) / 0.03
	if j < 0.03 {
		res.Failed = append(res.Failed, "the expansion shares too few content words with the summary; expand the same points")
	}
	res.Success = r >= 1.6 && r <= 3.2 && u >= 2 && j >= 0.03 && res.Terms["transitions"] > 0
	return res
}

// degenerate says how a text fails troupe's guards, or "".
func degenerate(text string) string {
	ws := words(text)
	n := len(ws)
	if w, k := mostFrequent(ws); k > max(2, n/5) {
		return fmt.Sprintf("repeats %q %d times in %d words; vary the wording", w, k, n)
	}
	if r, all := repeatedTrigrams(ws); 4*r > all {
		return fmt.Sprintf("repeats its phrases (%d of its %d three-word sequences are repeats); say each thing once", r, all)
	}
	if bad, all := malformedTokens(text); 20*bad > all {
		return fmt.Sprintf("has %d malformed tokens of %d (stray symbols or control characters); write plain words", bad, all)
	}
	return ""
}

// mostFrequent is the most frequent word and its count (the first in
// order on ties).
func mostFrequent(ws []string) (string, int) {
	count := map[string]int{}
	best, n := "", 0
	for _, w := range ws {
		count[w]++
		if count[w] > n {
			best, n = w, count[w]
		}
	}
	return best, n
}

// repeatedTrigrams counts the three-word sequences of ws that repeat an
// earlier one, out of all of them.
func repeatedTrigrams(ws []string) (repeats, all int) {
	seen := map[[3]string]bool{}
	for i := 0; i+2 < len(ws); i++ {
		k := [3]string{ws[i], ws[i+1], ws[i+2]}
		if seen[k] {
			repeats++
		}
		seen[k] = true
		all++
	}
	return repeats, all
}

// malformedTokens counts the whitespace-separated tokens of text holding a
// character other than a letter, a digit or ordinary punctuation, out of all.
func malformedTokens(text string) (bad, all int) {
	for _, tok := range strings.Fields(text) {
		all++
		for _, r := range tok {
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune(".,;:!?'\"()-–—/%&", r) {
				bad++
				break
			}
		}
	}
	return bad, all
}
