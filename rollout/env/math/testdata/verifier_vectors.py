"""Writes verifier_vectors.json: AT-GRPO's math verdicts, computed by the
reference's own grader, for troupe's verifier grading mode to match
(rollout/env/math/verifier_test.go).

PettingLLMs 244467e grades the reasoner as
    verify(parse(response), parse(gold))
(pettingllms/multi_agent_env/math/agents/reasoning_agent.py:99,110) with
math_verify installed unpinned (requirements_venv.txt:126) beside
antlr4-python3-runtime 4.9.3 and sympy 1.14.0; at that commit's date
(2025-10-17) the newest math-verify was 0.8.0, which pins
latex2sympy2_extended 1.10.2. Each case below is (name, response, gold);
the file records the verdict and, for readers, what parse found in the
response and in the gold.

Rerun (from the repository root; the Python environment is a throwaway one,
the committed test does not need it):

    python3 -m venv /tmp/mv && /tmp/mv/bin/pip install math-verify==0.8.0 \
        latex2sympy2_extended==1.10.2 antlr4-python3-runtime==4.9.3 \
        sympy==1.14.0 mpmath==1.3.0
    /tmp/mv/bin/python rollout/env/math/testdata/verifier_vectors.py

The cases were written for this test: the priority cases (several
candidate answers in one response, a box against "final answer is", an
"answer:" against later numbers), LaTeX against plain text, fractions,
decimals, percents, intervals, sets and tuples, equations, units, words,
responses without a box, and the gold fields the reference parses as they
are.
"""

import json
import os
import sys

from math_verify import parse, verify
import math_verify
import latex2sympy2_extended
import sympy

CASES = [
    # a box anywhere, no box at all
    ("boxed integer", r"So the total is \boxed{42}.", "42"),
    ("boxed wrong", r"So the total is \boxed{41}.", "42"),
    ("dollar boxed", r"The answer is $\boxed{7}$.", "7"),
    ("no box: the answer is", "Adding them up, the answer is 42.", "42"),
    ("no box: last number", "First 3 apples, then 4 more, which makes 7", "7"),
    ("no box: last number wrong", "We need 7 apples, and 3 are left over", "7"),
    ("no box: latex", r"Therefore $x = \frac{3}{4}$", r"\frac{3}{4}"),
    ("no box: equals chain", "2 + 2 = 4, so we get 4", "4"),
    ("empty response", "", "4"),
    ("words only", "I cannot solve this problem.", "4"),
    ("think then box", "<think>Maybe 5? No, 6.</think>\n\nThe answer is \\boxed{6}.", "6"),
    ("think only", "<think>It is 5", "5"),
    # several candidate answers: priorities
    ("two boxes, last right", r"First \boxed{3}, corrected: \boxed{4}", "4"),
    ("two boxes far apart", "We might guess \\boxed{3} at first.\n\nAfter checking every case carefully and redoing the sum, the result is different, so the final result is \\boxed{4}", "4"),
    ("two boxes far apart, first", "We might guess \\boxed{3} at first.\n\nAfter checking every case carefully and redoing the sum, the result is different, so the final result is \\boxed{4}", "3"),
    ("two boxes joined by and", r"The roots are \boxed{2} and \boxed{3}", "$2, 3$"),
    ("box then later number", "\\boxed{12}\n\nWait, maybe it is 13", "12"),
    ("final answer is, then box", r"The final answer is 4. Also \boxed{3}", "3"),
    ("box, then final answer is", r"\boxed{3} so the final answer is 4", "4"),
    ("I hope beats box", r"The final answer is $5$. I hope it is correct. \boxed{6}", "5"),
    ("answer word beats numbers", "The answer: 12, since 3 times 4 is 12 and not 13", "12"),
    ("answer colon equals", "Answer: 3 + 4 = 7", "7"),
    ("answer colon then equals sign", "Answer: 12 = x", "12"),
    ("answer colon then equals sign, 1", "Answer: 12 = x", "1"),
    ("answer word latex", r"so the answer is $\frac{1}{2}$ of the cake, about 0.5", r"\frac{1}{2}"),
    ("answer then two latex", r"Answer: $5$ and $6$", "$5, 6$"),
    ("answer then latex or", r"The answer is $3$, or $4$", "3"),
    ("latex beats plain at 300", r"We have $8$ cookies and 9 cups", "8"),
    ("rightmost plain", "x is 5 and y is 9", "9"),
    ("dollar amount", "It costs $5 per item", "5"),
    ("currency then answer", "It costs $5 per item and the answer is 7", "7"),
    # latex against plain, forms of one number
    ("latex frac vs slash", r"\boxed{\frac{3}{4}}", "3/4"),
    ("slash vs latex gold", "The answer is 3/4", r"\frac{3}{4}"),
    ("dfrac", r"\boxed{\dfrac{3}{4}}", r"\frac{3}{4}"),
    ("frac12", r"\boxed{\frac12}", r"\frac{1}{2}"),
    ("unreduced fraction", r"\boxed{\frac{2}{4}}", r"\frac{1}{2}"),
    ("decimal vs fraction", r"\boxed{0.75}", r"\frac{3}{4}"),
    ("six places", r"\boxed{0.333333}", r"\frac{1}{3}"),
    ("two places", r"\boxed{0.33}", r"\frac{1}{3}"),
    ("plain six places", "The value is 0.333333", r"\frac{1}{3}"),
    ("trailing zeros", r"\boxed{3.50}", r"\frac{7}{2}"),
    ("integer as decimal", r"\boxed{42.0}", "42"),
    ("thousands latex", r"\boxed{1,000}", "1000"),
    ("thousands plain", "The total is 1,234 people", "1234"),
    ("thousands gold", r"\boxed{1234}", "1,234"),
    ("negative", r"\boxed{-5}", "-5"),
    ("negative plain", "So the answer is -5", "-5"),
    ("sqrt of 4", r"\boxed{\sqrt{4}}", "2"),
    ("frac as integer", r"\boxed{\frac{84}{2}}", "42"),
    ("power", r"\boxed{10^{3}}", "1000"),
    ("mixed number", r"\boxed{7 \frac{3}{4}}", r"\frac{31}{4}"),
    ("glued mixed number", r"\boxed{2\frac{1}{2}}", r"\frac{5}{2}"),
    ("leading zeros", "The code is 007", "7"),
    ("decimal comma", "It is 2,5 metres", "2.5"),
    # percents and units
    ("percent vs decimal", r"\boxed{50\%}", "0.5"),
    ("percent vs integer", r"\boxed{50\%}", "50"),
    ("percent word", "The rate is 20 percent", "0.2"),
    ("integer vs percent gold", r"\boxed{50}", r"$50\%$"),
    ("text unit", r"\boxed{5 \text{ cm}}", "5"),
    ("unit word", r"\boxed{12 \text{ dollars}}", "12"),
    ("plain unit", "The side is 5 cm", "5"),
    ("degrees", r"\boxed{30^\circ}", "30"),
    ("dollar sign in box", r"\boxed{\$5}", "5"),
    # expressions
    ("pi", r"\boxed{2\pi}", r"$2\pi$"),
    ("pi plain gold", r"\boxed{2\pi}", r"2\pi"),
    ("pi over 3", r"\boxed{\dfrac{\pi}{3}}", r"$\frac{\pi}{3}$"),
    ("sqrt expression", r"\boxed{\frac{\sqrt{3}}{2}}", r"$\frac{\sqrt{3}}{2}$"),
    ("sqrt 8", r"\boxed{2\sqrt{2}}", r"$\sqrt{8}$"),
    ("sqrt gold without dollars", r"\boxed{\sqrt{2}}", r"\sqrt{2}"),
    ("2 sqrt 2 gold without dollars", r"\boxed{2\sqrt{2}}", r"2\sqrt{2}"),
    ("wrong answer, gold read as 2", r"The answer is 2", r"2\sqrt{2}"),
    ("decimal pi", r"\boxed{3.141593}", r"$\pi$"),
    ("decimal pi short", r"\boxed{3.14}", r"$\pi$"),
    ("polynomial", r"\boxed{x^2-1}", r"$(x-1)(x+1)$"),
    ("polynomial gold without dollars", r"\boxed{x^2+1}", "x^2+1"),
    ("polynomial wrong", r"\boxed{x^2+1}", r"$x^2-1$"),
    ("linear", r"\boxed{\frac{1}{2}x}", r"$\frac{x}{2}$"),
    ("plain expression", "The answer is 3*4+1", "13"),
    ("plain power", "so we get 2^10", "1024"),
    ("infinity", r"\boxed{\infty}", r"$\infty$"),
    # equations
    ("assignment vs value", r"\boxed{x=5}", "5"),
    ("value vs assignment gold", r"\boxed{5}", "x=5"),
    ("latex assignment", r"We find $x = \frac{1}{2}$.", r"\frac{1}{2}"),
    ("equation not assignment", r"\boxed{2x+1=5}", "5"),
    ("line", r"\boxed{y = 2x + 1}", r"$y=2x+1$"),
    ("line rearranged", r"\boxed{y - 2x = 1}", r"$y=2x+1$"),
    ("two assignments", r"We get $x=3$ and then $y = 7$.", "7"),
    # intervals, sets, tuples
    ("interval", r"\boxed{[1,2)}", r"$[1,2)$"),
    ("interval openness", r"\boxed{[1,2]}", r"$[1,2)$"),
    ("infinite interval", r"\boxed{(-\infty, 2]}", r"$(-\infty,2]$"),
    ("open pair vs set", r"\boxed{(1,2)}", r"$1, 2$"),
    ("open pair reversed vs set", r"\boxed{(2,1)}", r"$1,2$"),
    ("set vs open pair", r"\boxed{1,2}", r"$(1,2)$"),
    ("set order", r"\boxed{1,3,2}", r"$1,2,3$"),
    ("braces set", r"$\{1,2\}$", r"$2,1$"),
    ("tuple", r"\boxed{(1,2,3)}", r"$(1,2,3)$"),
    ("tuple order", r"\boxed{(1,3,2)}", r"$(1,2,3)$"),
    ("value vs singleton", r"\boxed{5}", r"$\{5\}$"),
    ("plain pair", "The point is (1, 2).", r"$(1,2)$"),
    ("roots with and", r"The roots are $2$ and $3$", r"$\{2,3\}$"),
    ("inequality", r"\boxed{x>2}", r"$x>2$"),
    ("inequality flipped", r"\boxed{2<x}", r"$x>2$"),
    # words and letters
    ("letter", r"\boxed{B}", "B"),
    ("letter in text", r"\boxed{\text{(B)}}", r"$\text{B}$"),
    ("word", r"\boxed{\text{Monday}}", r"$\text{monday}$"),
    ("letter case", r"\boxed{A}", r"$a$"),
    # malformed and cut off
    ("unclosed box", r"The answer is \boxed{\frac{1}{", r"\frac{1}{2}"),
    ("empty box", r"So \boxed{} is it, 5", "5"),
    ("trailing operator", r"\boxed{3+}", "3"),
    ("box without braces", r"\boxed 5", "5"),
    ("fbox", r"\fbox{5}", "5"),
    # gold fields as the reference reads them
    ("gold boxed", "It is 9", r"\boxed{9}"),
    ("gold text", "It is 9", "9 apples"),
    ("gold solution", "It is 9", r"We add 4 and 5 to get $\boxed{9}$."),
    ("gold with dollars", r"\boxed{\frac{1}{2}}", r"$\frac{1}{2}$"),
    ("gold negative fraction", r"\boxed{-\frac{1}{2}}", r"-\frac{1}{2}"),
    ("gold decimal", r"\boxed{\frac{1}{4}}", "0.25"),
    # more priority and grammar cases
    ("nested boxes", r"\boxed{\boxed{5}}", "5"),
    ("box then period", r"Hence \boxed{5}.", "5"),
    ("three boxes with commas", r"\boxed{1}, \boxed{2}, \boxed{3}", "$1,2,3$"),
    ("box and text box", r"\boxed{4} is wrong; the result is \boxed{5}", "5"),
    ("box in display", "$$\\boxed{12}$$", "12"),
    ("box in bracket display", r"\[\boxed{12}\]", "12"),
    ("boxed percent in dollars", r"$\boxed{25}\%$", "0.25"),
    ("latex percent", r"The rate is $25\%$", "0.25"),
    ("latex percent word", r"The rate is $25$ percent", "0.25"),
    ("answers word", "She answered 3 questions and got 5 right", "5"),
    ("answer not then", "The answer is not 5, it is 6", "5"),
    ("answer within 50", "The answer, after a lot of careful work over the whole range, is 6", "6"),
    ("answer beyond 50", "The answer, after a great deal of careful work over the whole of the range we have, is 6 and 8", "8"),
    ("final answer with colon", "Final answer: 15", "15"),
    ("final answer is with bold", "The final answer is **15**", "15"),
    ("final answer is latex then box", r"The final answer is $15$, see \boxed{16}", "16"),
    ("Final Answer I hope", "Final Answer: The final answer is $5$. I hope it is correct.", "5"),
    ("two roots latex or", r"So $x = 5$ or $x = -5$", "$5, -5$"),
    ("pm", r"\boxed{\pm 5}", "5"),
    ("inline bracket", "the result [ 5 ] holds", "5"),
    ("code block then answer", "```python\nprint(3*4)\n```\nThe program prints 12, so the answer is 12.", "12"),
    ("code output only", "12\n", "12"),
    ("code output with label", "Result: 12\n", "12"),
    ("code output float", "12.0\n", "12"),
    ("code output fraction", "3/4\n", r"\frac{3}{4}"),
    ("code output sympy", "sqrt(2)/2\n", r"$\frac{\sqrt{2}}{2}$"),
    ("code output list", "[1, 2, 3]\n", "$1,2,3$"),
    ("dollar currency twice", "It costs $5 and $6 in total", "6"),
    ("unicode minus", "The answer is \u22125", "-5"),
    ("times sign", "It is 3 \u00d7 4", "12"),
    ("scientific", "about 1e3 units", "1000"),
    ("comma decimal latex", r"$2{,}5$", "2.5"),
    ("x equals frac then decimal", r"so $x=\frac{1}{4}$, that is 0.25", "0.25"),
    ("long qwen style", "To solve this, first compute the area: $A = 3 \\times 4 = 12$.\n\nNext, the perimeter: $P = 2(3+4) = 14$.\n\nThe question asks for the area, so:\n\n$$\\boxed{12}$$", "12"),
    ("long qwen style wrong", "To solve this, first compute the area: $A = 3 \\times 4 = 12$.\n\nNext, the perimeter: $P = 2(3+4) = 14$.\n\nThe question asks for the perimeter.", "14"),
    ("steps then final sentence", "Step 1: 5 + 5 = 10\nStep 2: 10 * 2 = 20\nSo the result is 20.", "20"),
    ("reasoning steps format", "**Reasoning Steps:**\n```1. compute 6*7```\n\nThe answer is \\boxed{42}", "42"),
    ("matrix", r"\boxed{\begin{pmatrix} 1 \\ 2 \end{pmatrix}}", r"$\begin{pmatrix} 1 \\ 2 \end{pmatrix}$"),
    ("function answer", r"\boxed{f(x) = x^2}", r"$x^2$"),
    ("degrees word", r"\boxed{30 \text{ degrees}}", "30"),
    ("text answer words", r"\boxed{\text{no solution}}", r"$\text{no solution}$"),
    ("log", r"\boxed{\log_2 8}", "3"),
    ("binomial", r"\boxed{\binom{5}{2}}", "10"),
    ("factorial", r"\boxed{5!}", "120"),
    ("exponential e", r"\boxed{e^2}", r"$e^{2}$"),
    ("imaginary", r"\boxed{3+4i}", r"$3+4i$"),
    ("base subscript", r"\boxed{1011_2}", r"$1011_2$"),
    ("ratio", r"\boxed{3:4}", r"$\frac{3}{4}$"),
    ("approx", r"\boxed{\approx 3.14}", "3.14"),
    ("markdown headings", "### Step 1: Set up\n\nLet $x$ be the number.\n\n$$\nx + 3 = 5\n$$\n\n### Final Answer\n\n$$\n\\boxed{2}\n$$", "2"),
    ("cut off mid sentence", "We have 3 groups of 4, so there are 12 items, and then we remove", "12"),
    ("answer choices", "The answer choices are (A) 1 (B) 2 (C) 3. I pick C", "3"),
    ("tool output answer colon", "The answer is: 42\n", "42"),
    ("tool output two lines", "debug 3\n42\n", "42"),
    ("tool output negative float", "-0.5\n", r"-\frac{1}{2}"),
    ("tool output big", "1000000\n", "1,000,000"),
    ("tool output tuple", "(3, 4)\n", r"$(3,4)$"),
    ("tool output traceback", "Traceback (most recent call last):\n  File \"x.py\", line 3\nZeroDivisionError: division by zero\n", "3"),
    ("agreement pair", "\\boxed{\\frac{6}{8}}", "0.75"),
    # realistic responses
    ("long solution", "Let the number of red balls be $r$. Then $r + 2r = 27$, so $3r = 27$ and $r = 9$.\n\nThe blue balls are $2r = 18$.\n\n**Final Answer**\n\\boxed{18}", "18"),
    ("long solution, no box", "Let the number of red balls be $r$. Then $r + 2r = 27$, so $3r = 27$ and $r = 9$.\n\nThe blue balls number $2r = 18$.", "18"),
    ("long solution, answer line", "We compute 12 * 3 = 36 and subtract 6.\nAnswer: 30\nCheck: 30 + 6 = 36.", "30"),
    ("bold final answer", "So we have 7 + 8 = 15.\n\n**Final answer:** 15", "15"),
    ("final answer is latex", r"Thus, the final answer is $\boxed{\frac{5}{6}}$.", r"\frac{5}{6}"),
    ("display math", "We get\n$$\n\\frac{5}{6}\n$$", r"\frac{5}{6}"),
    ("bracket display", r"We get \[ \frac{5}{6} \]", r"\frac{5}{6}"),
    ("paren inline", r"We get \(\frac{5}{6}\) in the end", r"\frac{5}{6}"),
    ("AIME style", r"Therefore $m+n = 17 + 4 = \boxed{021}$", "21"),
    ("AIME plain", "So m + n = 204", "204"),
]


def main():
    out = {
        "generator": "rollout/env/math/testdata/verifier_vectors.py",
        "rerun": "see the generator's docstring: a venv with math-verify 0.8.0, then run it from the repository root",
        "versions": {
            "math_verify": getattr(math_verify, "__version__", "0.8.0"),
            "latex2sympy2_extended": getattr(latex2sympy2_extended, "__version__", "1.10.2"),
            "sympy": sympy.__version__,
        },
        "call": "verify(parse(response), parse(gold)) (PettingLLMs 244467e reasoning_agent.py:99,110)",
        "cases": [],
    }
    names = set()
    for name, response, gold in CASES:
        if name in names:
            sys.exit(f"duplicate case name {name!r}")
        names.add(name)
        got, want = parse(response), parse(gold)
        out["cases"].append({
            "name": name,
            "response": response,
            "gold": gold,
            "verdict": bool(verify(got, want)),
            "parsed": [str(x) for x in got],
            "gold_parsed": [str(x) for x in want],
        })
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "verifier_vectors.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"wrote {len(out['cases'])} cases to {path}")


if __name__ == "__main__":
    main()
