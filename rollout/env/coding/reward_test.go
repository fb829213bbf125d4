package coding

import "testing"

// The static checks, against vectors computed by running the reference's
// code_utils.py (LLM_Collab_Code_Generation: extract_specific_function,
// check_function_definition, check_aux_function_usage,
// is_wrapper_function) on the same text; discardsAux follows the
// reference's intent, not its pattern (reward.go, departure 1).
func TestStaticChecksMatchReference(t *testing.T) {
	for _, c := range []struct {
		name, main                        string
		wrapper, calls, defined, discards bool
	}{
		{"return aux", "def f(x):\n    return aux(x)\n", true, true, true, false},
		{"assign and return", "def f(x):\n    y = aux(x)\n    return y\n", true, true, true, false},
		{"assign and more", "def f(x):\n    y = aux(x)\n    return y + 1\n", false, true, true, false},
		{"docstring and comment", "def f(x):\n    \"\"\"Doc.\"\"\"\n    # note\n    return aux(x)\n", true, true, true, false},
		{"multi-line docstring", "def f(x):\n    \"\"\"Doc\n    more.\n    \"\"\"\n    return aux(x) * 2\n", true, true, true, false},
		{"pass", "def f(x):\n    pass\n", false, false, false, false},
		{"no aux", "def f(x):\n    return x\n", false, false, true, false},
		// the reference's pattern misses this bare call (departure 1)
		{"bare call", "def f(x):\n    aux(x)\n    return x\n", false, true, true, true},
		{"bare call with a semicolon", "def f(x):\n    aux(x, [1, (2)]);\n    return x\n", false, true, true, true},
		{"call in an expression statement", "def f(x):\n    aux(x) + 1\n    return x\n", false, true, true, false},
	} {
		rd := read("def aux(x):\n    return x\n", c.main, "f")
		if rd.wrapper != c.wrapper || rd.calls != c.calls || rd.mainOK != c.defined || rd.discards != c.discards {
			t.Errorf("%s: wrapper %v calls %v defined %v discards %v, want %v %v %v %v", c.name, rd.wrapper, rd.calls, rd.mainOK, rd.discards, c.wrapper, c.calls, c.defined, c.discards)
		}
	}
	if got := function("x = 1\ndef aux(a):\n    return a\n\ny = 2\ndef aux2():\n    return 0\n", "aux"); got != "def aux(a):\n    return a" {
		t.Errorf("function: %q", got)
	}
	if got := promptImports("from typing import List\nimport math, re\n\ndef f(x: List[int]):\n    import os\n"); got != "from typing import List\nimport math, re\nimport os" {
		t.Errorf("imports: %q", got)
	}
	helper, main := SplitProgram("import math\n\ndef aux(x):\n    return x * 2\n\ndef f(x):\n    return aux(x) + 1\n")
	if helper != "def aux(x):\n    return x * 2\n" || main != "import math\n\n\n\ndef f(x):\n    return aux(x) + 1\n" {
		t.Errorf("split: %q | %q", helper, main)
	}
}
