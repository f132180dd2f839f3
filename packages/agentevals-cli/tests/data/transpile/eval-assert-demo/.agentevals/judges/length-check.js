// Judge: the answer has between 5 and 50 words.
let raw = "";
process.stdin.on("data", (chunk) => (raw += chunk));
process.stdin.on("end", () => {
  const payload = JSON.parse(raw);
  const words = payload.answer.trim().split(/\s+/).filter(Boolean).length;
  const ok = words >= 5 && words <= 50;
  console.log(JSON.stringify({ score: ok ? 1 : 0, reasoning: `${words} words`, hits: ok ? [`${words} words`] : [], misses: ok ? [] : [`${words} words`] }));
});
