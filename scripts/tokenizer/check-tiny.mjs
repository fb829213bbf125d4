// Checks that the tiny byte-level tokenizer WriteByteLevel writes
// (testdata/tokenizer/tiny/, regenerate with
// `go test ./tokenizer -run TestWriteByteLevelGolden -update`) is accepted by
// Hugging Face's tokenizers (Rust, npm "tokenizers" 0.23.2) and by
// transformers.js (@lenml/tokenizers 3.7.2), and records the Rust library's
// ids for every corpus document in testdata/tokenizer/tiny_reference.json.
// Fails if the two libraries disagree for a reason not documented in
// make-reference.mjs.
//
// Run: (cd scripts/tokenizer && npm ci && node check-tiny.mjs)

import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Tokenizer } from "tokenizers";
import { TokenizerLoader } from "@lenml/tokenizers";

const here = path.dirname(fileURLToPath(import.meta.url));
const data = path.resolve(here, "../../testdata/tokenizer");
const tiny = path.join(data, "tiny");

const hf = Tokenizer.fromFile(path.join(tiny, "tokenizer.json"));
const js = TokenizerLoader.fromPreTrained({
  tokenizerJSON: JSON.parse(fs.readFileSync(path.join(tiny, "tokenizer.json"), "utf8")),
  tokenizerConfig: JSON.parse(fs.readFileSync(path.join(tiny, "tokenizer_config.json"), "utf8")),
});
const { docs } = JSON.parse(fs.readFileSync(path.join(data, "corpus.json"), "utf8"));

const knownJSDifference = (text) => text.includes("\u0085") || text.includes("\ufeff") || /'\u017f/.test(text);
const ids = {};
const jsDisagrees = [];
let roundTrips = 0;
for (const { name, text } of docs) {
  const enc = await hf.encode(text, null, { addSpecialTokens: false });
  const a = Array.from(enc.getIds());
  ids[name] = a;
  const j = Array.from(js.encode(text, { add_special_tokens: false }));
  if (a.length !== j.length || a.some((x, i) => x !== j[i])) {
    if (!knownJSDifference(text)) throw new Error(`transformers.js and Rust disagree on ${name}: ${JSON.stringify(text)}`);
    jsDisagrees.push(name);
  }
  if ((await hf.decode(a, false)) === text.normalize("NFC")) roundTrips++;
}
fs.writeFileSync(
  path.join(data, "tiny_reference.json"),
  JSON.stringify({
    generator: "scripts/tokenizer/check-tiny.mjs",
    reference: "Hugging Face tokenizers 0.23.2 (Rust) loaded testdata/tokenizer/tiny/tokenizer.json; encode(text, add_special_tokens=false)",
    accepted_by: ["tokenizers 0.23.2 (Rust)", "@lenml/tokenizers 3.7.2 (transformers.js)"],
    vocab_size: hf.getVocabSize(true),
    js_disagrees: jsDisagrees,
    ids,
  }) + "\n",
);
console.log(`tiny tokenizer: vocab ${hf.getVocabSize(true)}; ${docs.length} documents encoded by Rust; transformers.js agrees on ${docs.length - jsDisagrees.length} (differs only on documented NEL/BOM/'ſ cases: ${jsDisagrees.join(", ") || "none"}); Rust decode round-trips ${roundTrips}/${docs.length}`);
