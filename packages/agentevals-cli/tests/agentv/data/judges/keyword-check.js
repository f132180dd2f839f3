#!/usr/bin/env node
// Keyword judge in AgentV's style (eval-assert-demo): one hit per keyword found, score = hits / checks.
const { defineCodeJudge } = require('./_agentv_eval.js');

defineCodeJudge(({ answer, config }) => {
  const keywords = (config && config.keywords) || ['paris', 'france'];
  const lower = answer.toLowerCase();
  const hits = [];
  const misses = [];
  for (const word of keywords) {
    if (lower.includes(word)) hits.push(`Answer mentions ${word}`);
    else misses.push(`Answer does not mention ${word}`);
  }
  const total = hits.length + misses.length;
  return {
    score: total > 0 ? hits.length / total : 0,
    hits,
    misses,
    reasoning: `Passed ${hits.length}/${total} keyword checks`,
    details: { keywords },
  };
});
