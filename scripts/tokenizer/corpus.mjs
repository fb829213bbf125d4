// The tokenizer test corpus: hand-written documents that cover the cases the
// Qwen pre-tokenizer and BPE must get right, plus seeded random strings drawn
// from a pool of awkward characters. make-reference.mjs writes it to
// testdata/tokenizer/corpus.json together with the reference ids.
//
// Every document is a JavaScript string literal so that control characters
// (CR, NEL, BOM, …) are written as escapes and survive any editor or git
// setting.

const prose = [
  `The quick brown fox jumps over the lazy dog. It's a sentence that's been used
for typing practice since the 1880s, and we've all seen it. They're sure it'll
work; I'm not. He'd said "don't" — she'd said 'maybe'. THE DOG'S BOWL ISN'T
EMPTY, YOU'LL SEE. We'RE mixing CaSeS: 'S 'T 'Re 'vE 'M 'Ll 'D.`,

  `Reinforcement learning from verifiable rewards trains a policy by sampling
several answers per prompt, scoring each answer, and pushing up the log-probability
of the answers that scored above their group's mean. Agents in a multi-agent system
take turns: a solver proposes, a verifier checks, and the environment decides.
Nothing here is deep; the bookkeeping is where bugs hide.`,

  `Apostrophes in the wild: rock'n'roll, o'clock, y'all, ma'am, 'tis, '90s,
don't, won't, shan't, can't've, it''s, ''quoted'', 'single', "double", it’s
(curly), l'homme, aujourd'hui, O'Neill's, the '80s' music, 's, 't, 'll, 're.`,

  `Numbers: 0 1 2 3 42 123456789 3.14159265358979 -273.15 1e-10 6.022e23 +1 (555) 010-9999
1,000,000 and 1.000.000 and 1 000 000; 2024-06-01T12:34:56Z; v1.2.3-rc.4; 0xDEADBEEF;
0b1011; 1/2 ½ ¾ ⅓; x² + y³ = z⁴; Ⅻ ⅻ Ⅳ; ①②③; ٠١٢٣٤٥٦٧٨٩; ०१२३; １２３４５; 𝟘𝟙𝟚;
$19.99 €5,00 ¥1000 £3 ₹250; 99.9% of 100%; #1 #2; 10km/h; 3×4=12; 7÷2=3.5.`,

  `Math for the graders: \\frac{a}{b} + \\sqrt{2} \\approx 1.4142, so the answer is
\\boxed{42}. Let $f(x) = x^2 - 3x + 2$; then $f'(x) = 2x - 3$ and the roots are
$x \\in \\{1, 2\\}$. ∀ε>0 ∃δ>0: |x−a|<δ ⇒ |f(x)−f(a)|<ε. ∑_{i=1}^{n} i = n(n+1)/2.`,
];

const languages = [
  `中文：强化学习是一种机器学习方法，智能体通过与环境交互来学习策略。我们在这里测试分词器是否与参考实现完全一致，包括标点符号、数字123和英文单词mixed in。“引号”和《书名号》也要测试。`,
  `繁體中文：機器學習與自然語言處理，測試「引號」與『雙引號』。`,
  `日本語：吾輩は猫である。名前はまだ無い。カタカナとひらがな、そして漢字が混ざった文章です。ｶﾀｶﾅ（半角）も。`,
  `한국어: 안녕하세요, 세계! 토크나이저 테스트입니다. 한글 자모 ㄱㄴㄷ 와 숫자 2024년.`,
  `Русский: Съешь же ещё этих мягких французских булок, да выпей чаю. ЁЛКА ёлка.`,
  `Ελληνικά: Ξεσκεπάζω την ψυχοφθόρα βδελυγμία. Σίσυφος, ς σ Σ.`,
  `العربية: مرحبا بالعالم! هذا اختبار للمقطِّع مع التشكيل: كَتَبَ. والأرقام ١٢٣.`,
  `עברית: שלום עולם, זוהי בדיקה. אָלֶף־בֵּית.`,
  `हिन्दी: नमस्ते दुनिया। यह एक परीक्षण है: क्षत्रिय, द्वितीय, श्री।`,
  `ไทย: สวัสดีชาวโลก นี่คือการทดสอบตัวตัดคำ ภาษาไทยไม่มีช่องว่างระหว่างคำ`,
  `Tiếng Việt: Chào thế giới, đây là bài kiểm tra. Người Việt Nam rất hiếu khách.`,
  `Türkçe: İstanbul'da ılık bir gün; IĞDIR ığdır; şişli çiçek.`,
  `Deutsch: Größe, Straße, STRASSE, ẞ, Fußgängerübergänge, Äpfel, Öl, Übermut.`,
  `Français: L'élève a dû répondre à la question : « Où est-ce que ça va ? » Noël, maïs, cœur.`,
  `Español: ¿Dónde está el niño? ¡Qué pingüino! Añoranza, acción, corazón.`,
  `Polski: Zażółć gęślą jaźń. Čeština: Příliš žluťoučký kůň úpěl ďábelské ódy.`,
  `ქართული: გამარჯობა მსოფლიო. Հայերեն՝ Բարեւ աշխարհ։ Ge'ez: ሰላም ለዓለም።`,
  `தமிழ்: வணக்கம் உலகம். বাংলা: হ্যালো বিশ্ব। ગુજરાતી: નમસ્તે. ಕನ್ನಡ: ನಮಸ್ಕಾರ.`,
  `Mixed: English中文日本語한국어Русский123العربية!`,
];

const code = [
  `package main

import (
\t"fmt"
\t"strings"
)

// Greet returns a greeting for name.
func Greet(name string) string {
\tif name == "" {
\t\treturn "hello, world"
\t}
\treturn fmt.Sprintf("hello, %s", strings.TrimSpace(name))
}

func main() {
\tfor i := 0; i < 3; i++ {
\t\tfmt.Println(Greet("gopher"), i)
\t}
}
`,
  `def tokenize(text: str) -> list[int]:
    """Split text into ids."""
    ids = []
    for piece in re.findall(r"\\s+|\\w+|[^\\s\\w]+", text):
        if piece in vocab:
            ids.append(vocab[piece])
        else:
            ids.extend(bpe(piece))  # fall back to merges
    return ids


class Agent:
    def __init__(self, name, model):
        self.name = name
        self.model = model

    def act(self, obs):
        return self.model.generate(obs, max_new_tokens=256, temperature=0.7)
`,
  `{
  "model_type": "qwen3",
  "hidden_size": 1024,
  "num_attention_heads": 16,
  "rope_theta": 1000000.0,
  "tie_word_embeddings": true,
  "eos_token_id": [151645, 151643],
  "torch_dtype": "bfloat16",
  "nested": {"a": [1, 2, {"b": null}], "c": false}
}
`,
  `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>Test &amp; check</title></head>
<body>
  <div class="box" id='main'>
    <p>Hello <b>bold</b> &lt;not a tag&gt; <br/></p>
    <script>if (a < b && c > d) { console.log("ok"); }</script>
  </div>
</body>
</html>
`,
  `#!/usr/bin/env bash
set -euo pipefail
for f in *.txt; do
\techo "processing $f" >&2
\tgrep -c 'needle' "$f" || true
done
x=$((1 + 2)); y="\${HOME}/bin:\${PATH}"
`,
  `all: build
build:
\tgo build -o bin/train ./cmd/train
test: build
\tgo test ./...
.PHONY: all build test
`,
  `#include <stdio.h>
int main(int argc, char **argv) {
    char c = 's'; char *p = "it's";
    printf("%c %s %d\\n", c, p, argc);
    return 0;  /* done */
}
`,
  `SELECT u.id, u.name, COUNT(*) AS n FROM users u JOIN orders o ON o.user_id = u.id
WHERE u.created_at >= '2024-01-01' AND u.name LIKE '%son' GROUP BY 1, 2 HAVING n > 3;
`,
  `fn main() {
    let v: Vec<u32> = (0..10).map(|x| x * x).collect();
    println!("{:?} {}", v, v.iter().sum::<u32>());
}
`,
  `    four spaces
        eight spaces
\tone tab
\t\ttwo tabs
  \t  mixed tab and spaces
\t
    
trailing spaces here    
`,
];

const whitespace = [
  "",
  " ",
  "  ",
  "\n",
  "\n\n",
  "\t",
  " \n",
  "\n ",
  "   leading spaces",
  "trailing spaces   ",
  "  both  ",
  "a  b   c    d     e",
  "a\n\nb\n\n\nc",
  "a \n b \n\n c",
  "x\t\ty\t z",
  "line one\r\nline two\r\n\r\nline four\r\n",
  "old mac\rline\r\rbreaks",
  "mixed\r\n\n\r  \r\n  end",
  "   \n   \n   ",
  " \t \n \t \n",
  "word \n\n\n  word",
  "tab before letter\tx and space before digit 1 and tab before digit\t2",
  "space before punct . and tab before punct\t. and two spaces before punct  .",
  "nbsp\u00a0between\u00a0words and nbsp before punct\u00a0!",
  "ideographic\u3000space\u3000\u3000double",
  "em\u2003space thin\u2009space hair\u200aspace narrow\u202fnbsp",
  "line\u2028separator and paragraph\u2029separator",
  "next line\u0085NEL inside and NEL at end\u0085",
  "NEL run \u0085\u0085\u0085 and NEL before punct\u0085!",
  "space then NEL then letter: a \u0085b and \u0085x",
  "space then BOM then letter: x \ufeffy and \ufeffz",
  "byte order mark\ufeffinside and \ufeff at start",
  "\ufeffBOM first",
  "vertical\u000btab and form\u000cfeed",
  "file separator\u001cand unit separator\u001f",
  "zero width\u200bspace and joiner\u200dand non-joiner\u200c",
  "mongolian vowel separator\u180ehere",
  "ogham\u1680space",
  "     ",
  "\n\n\n\n",
  " \r\n \r\n ",
  "end with newline\n",
  "end with spaces and newline  \n",
  "end with newline and spaces\n  ",
];

const emoji = [
  "Emoji: 😀 😃 😄 🚀 🎉 🔥 ✅ ❌ ⭐",
  "ZWJ sequences: 👨‍👩‍👧‍👦 👩‍💻 🧑‍🚀 🏳️‍🌈 🏴‍☠️ 👁️‍🗨️",
  "Flags: 🇯🇵 🇺🇳 🇩🇪🇫🇷🇬🇧 🇺🇸 🏴󠁧󠁢󠁳󠁣󠁴󠁿",
  "Skin tones: 👍🏽 👋🏿 🤝🏻 and keycaps 1️⃣ #️⃣ *️⃣ and hearts ❤️ ♥ 💔",
  "Emoji next to words:hello😀world and digits 1😀2 and spaces 😀 😀",
  "Symbols: © ® ™ § ¶ † ‡ • … ‰ ← → ↑ ↓ ⇒ ∞ ≠ ≤ ≥ ± √ ∑ ∫ ☃ ☂ ♠ ♣",
];

const apostropheEdges = [
  "'s", "'S", "'t", "'re", "'RE", "'rE", "'ve", "'m", "'ll", "'LL", "'d", "'D",
  "'x", "''", "'", "' s", "'sss", "'red", "'lll", "'dd", "it's'", "'s's's",
  "it'ſ and IT'ſ and it'ſa", "don'T", "'\n", "'1", "'中", "' '", "x'y'z",
];

const addedTokens = [
  "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nHi!<|im_end|>\n<|im_start|>assistant\n",
  "<think>\nLet me think step by step.\n</think>\n\nThe answer is 4.",
  "text<|endoftext|>more text",
  " <|endoftext|> spaces around ",
  "<|im_end|><|im_end|><|im_start|><|im_start|>",
  "<think></think><think>nested <think> tags</think></think>",
  "<<|im_end|>> and <|<|im_start|>|> and <|im_start|",
  "partial tokens: <|im_start and im_end|> and <think and /think> and <|endoftext",
  "<tool_call>\n{\"name\": \"search\", \"arguments\": {\"q\": \"qwen\"}}\n</tool_call>",
  "<tool_response>result</tool_response><|fim_prefix|>a<|fim_suffix|>b<|fim_middle|>",
  "<|vision_start|><|image_pad|><|vision_end|> and <|box_start|>(1,2)<|box_end|>",
  "<|repo_name|>troupe<|file_sep|>tokenizer/bpe.go",
  "<|IM_START|> is not a token, and neither is < think >.",
  "e\u0301<think>\u0301combining mark after a token",
];

const normalization = [
  "NFD: e\u0301 a\u0300 o\u0308 n\u0303 c\u0327 A\u030a",
  "NFD words: Cafe\u0301, nai\u0308ve, re\u0301sume\u0301, Zu\u0308rich, Sa\u0303o Paulo",
  "Hangul jamo: \u1100\u1161\u11a8 \u1112\u1161\u11ab\u1100\u1173\u11af",
  "Vietnamese NFD: Vie\u0323\u0302t Nam, Tie\u0302\u0301ng Vie\u0323\u0302t",
  "Singletons: \u212b angstrom, \u2126 ohm, \u212a kelvin",
  "CJK compatibility: \uf900\uf901\ufa0e and 豈",
  "Stacked marks: a\u0323\u0302 q\u0307\u0323 e\u0328\u0301",
  "Already NFC: é à ö ñ ç Å — should not change",
  "Combining mark alone: \u0301 and after space \u0301 and after digit 1\u0301",
  "Devanagari NFD-sensitive: \u0915\u093c \u0916\u093c",
];

const misc = [
  "URLs: https://example.com/path?query=1&b=two#frag and http://localhost:8080/ and ftp://a.b",
  "Emails: someone@example.com, first.last+tag@sub.domain.org",
  "Markdown: # Title\n\n## Section\n\n- item one\n- item two\n  - nested\n\n1. first\n2. second\n\n**bold** _italic_ `code` [link](http://x.y)\n\n```go\nfmt.Println(\"hi\")\n```\n",
  "Table:\n| a | b |\n|---|---|\n| 1 | 2 |\n",
  "Punctuation runs: ... !!! ??? ?!?! --- ___ *** ### @@@ $$$ %%% ^^^ &&& ((( ))) [[[ ]]] {{{ }}} ||| \\\\ /// ~~~ ``` ;;; ::: ,,, <<< >>>",
  "Punctuation then newlines: end.\n\nnext!\r\n\r\nmore?\n",
  "Long word: pneumonoultramicroscopicsilicovolcanoconiosis supercalifragilisticexpialidocious",
  "Long number: 31415926535897932384626433832795028841971693993751058209749445923078164062862089986280348253421170679",
  "Base64: SGVsbG8sIFdvcmxkIQ==VGhpcyBpcyBhIHRlc3QgZm9yIHRoZSB0b2tlbml6ZXIgb2YgdHJvdXBlLg==",
  "UUID 123e4567-e89b-12d3-a456-426614174000 and hash 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
  "Solver: The answer is \\boxed{12}.\nVerifier: <verify>approve</verify>\nSearch: <search>capital of France</search>\n<information>Doc 1: Paris is the capital.</information>\n<answer>Paris</answer>",
];

// mulberry32: a small seeded PRNG, so the random documents never change
// (make-reference.mjs draws its own with it too).
export function mulberry32(seed) {
  return function () {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Characters chosen to hit every branch of the split pattern.
const pool = [
  ..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
  ..."0123456789",
  ..."!\"#$%&()*+,-./:;<=>?@[\\]^_`{|}~",
  "'", "'", "'", "'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'LL",
  " ", " ", " ", " ", "  ", "\t", "\n", "\n", "\r\n", "\r", "\u000b", "\u000c",
  "\u00a0", "\u3000", "\u2028", "\u2003", "\u1680",
  "é", "ß", "ñ", "Ω", "ж", "中", "文", "日", "本", "한", "글", "ا", "ב", "क", "्", "ि", "ก", "ั",
  "\u0301", "\u0308", "\u0303", "e\u0301", "A\u030a", "\u212b",
  "½", "²", "Ⅻ", "١", "①", "１",
  "😀", "🚀", "👨‍👩‍👧", "🇯🇵", "👍🏽", "❤️", "1️⃣",
  "©", "…", "—", "“", "”", "’", "«", "»", "，", "。", "、",
  "<|im_start|>", "<|im_end|>", "<think>", "</think>", "<|endoftext|>", "<tool_call>", "<|im_", "think>",
];

function randomDocs(count, seed) {
  const rand = mulberry32(seed);
  const docs = [];
  for (let d = 0; d < count; d++) {
    const length = 5 + Math.floor(rand() * 60);
    let s = "";
    for (let k = 0; k < length; k++) {
      s += pool[Math.floor(rand() * pool.length)];
    }
    docs.push(s);
  }
  return docs;
}

// corpus returns [{name, text}] in a fixed order.
export function corpus() {
  const docs = [];
  const add = (group, list) => list.forEach((text, i) => docs.push({ name: `${group}/${i}`, text }));
  add("prose", prose);
  add("languages", languages);
  add("code", code);
  add("whitespace", whitespace);
  add("emoji", emoji);
  add("apostrophe", apostropheEdges);
  add("added", addedTokens);
  add("nfc", normalization);
  add("misc", misc);
  add("random", randomDocs(400, 20240601));
  return docs;
}
