// A small stand-in for @agentv/eval's defineCodeJudge, so judges in AgentV's style run without npm:
// stdin (snake_case) → camelCase → required fields checked → handler → {score, hits, misses, reasoning, details}.
// Any error prints a zero result and exits 1, as the SDK does.
const fs = require('node:fs');

const toCamel = (value) =>
  Array.isArray(value)
    ? value.map(toCamel)
    : value && typeof value === 'object'
      ? Object.fromEntries(
          Object.entries(value).map(([key, v]) => [
            /^[A-Z]/.test(key) ? key : key.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase()),
            toCamel(v),
          ]),
        )
      : value;

const REQUIRED = {
  question: 'string', criteria: 'string', expectedOutput: 'array', answer: 'string',
  guidelineFiles: 'array', inputFiles: 'array', input: 'array',
};

function defineCodeJudge(handler) {
  try {
    const input = toCamel(JSON.parse(fs.readFileSync(0, 'utf-8')));
    for (const [key, kind] of Object.entries(REQUIRED)) {
      const ok = kind === 'array' ? Array.isArray(input[key]) : typeof input[key] === kind;
      if (!ok) throw new Error(`invalid payload: '${key}' must be a ${kind}`);
    }
    // The SDK's trace schema: counts are optional numbers (absent is fine, null is not).
    for (const [key, value] of Object.entries(input.trace ?? {})) {
      if (key.endsWith('Count') && typeof value !== 'number') {
        throw new Error(`invalid payload: 'trace.${key}' must be a number when present, got ${value}`);
      }
    }
    const result = handler(input);
    const score = Math.min(1, Math.max(0, Number(result.score) || 0));
    console.log(JSON.stringify({ score, hits: result.hits ?? [], misses: result.misses ?? [],
      reasoning: result.reasoning, details: result.details }, null, 2));
  } catch (error) {
    console.log(JSON.stringify({ score: 0, hits: [], misses: [error.message],
      reasoning: `Evaluation failed: ${error.message}` }, null, 2));
    console.error(error.message);
    process.exit(1);
  }
}

module.exports = { defineCodeJudge };
