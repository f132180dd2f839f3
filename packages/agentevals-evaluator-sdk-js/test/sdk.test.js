// The SDK's own tests: `node --test test/` in packages/agentevals-evaluator-sdk-js (also run from pytest).
// Programs run as the host runs them: a real node child process, EvalInput on stdin, and for workers the
// offered input pipe as an extra file descriptor.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

import { checkResult, evaluator, negotiate, parseInput, ProtocolVersionError, ResultError } from "../index.js";

const PROBE = fileURLToPath(new URL("../fixtures/probe.js", import.meta.url));

function input(extra = {}) {
  return {
    protocol_version: "1.2",
    metric_name: "probe",
    threshold: 0.5,
    config: {},
    invocations: [
      { invocation_id: "a", user_content: "hi", final_response: "hello", intermediate_steps: { tool_calls: [], tool_responses: [] } },
      { invocation_id: "b", user_content: "hi", final_response: null, intermediate_steps: { tool_calls: [], tool_responses: [] } },
    ],
    expected_invocations: null,
    ...extra,
  };
}

function once(document) {
  const text = typeof document === "string" ? document : JSON.stringify(document);
  const proc = spawnSync(process.execPath, [PROBE], { input: text, encoding: "utf8", timeout: 30_000 });
  const lines = proc.stdout.split("\n").filter(Boolean);
  return { code: proc.status, lines, result: lines.length ? JSON.parse(lines[0]) : null, stderr: proc.stderr };
}

test("negotiate keeps the major and takes the lower minor", () => {
  assert.equal(negotiate("1.9"), "1.2");
  assert.equal(negotiate("1.0"), "1.0");
  assert.equal(negotiate("1.1", "1.2"), "1.1");
});

test("negotiate refuses another major, saying what to upgrade", () => {
  assert.throws(() => negotiate("2.0"), (err) => err instanceof ProtocolVersionError &&
    err.message === "unsupported protocol_version 2.0 from agentevals-cli: @agentevals/evaluator-sdk speaks 1.0 " +
      "to 1.2; upgrade @agentevals/evaluator-sdk so both speak major 2");
  assert.throws(() => negotiate("0.9"), /upgrade agentevals-cli so both speak major 1/);
  assert.throws(() => negotiate("1"), /must look like 'MAJOR.MINOR', got "1"/);
  assert.throws(() => negotiate(1.2), /must be a string like '1.0', got 1.2/);
});

test("parseInput names what is wrong in one line", () => {
  assert.throws(() => parseInput(""), /^InputError: empty stdin/);
  assert.throws(() => parseInput("{"), /stdin is not valid JSON/);
  assert.throws(() => parseInput("[1]"), /must be a JSON object \(EvalInput\), got list/);
  assert.throws(() => parseInput(JSON.stringify({ metric_name: "m", invocations: 3 })),
    /invalid EvalInput: invocations: expected a list \(got 3\)/);
  const [parsed, version] = parseInput("\ufeff" + JSON.stringify({ metric_name: "m", invocations: [] }));
  assert.equal(version, "1.0");
  assert.deepEqual([parsed.threshold, parsed.config, parsed.expected_invocations], [0.5, {}, null]);
});

test("checkResult reads numbers leniently, writes them strictly, and refuses what the host would", () => {
  assert.deepEqual(checkResult({ score: "0.5", per_invocation_scores: [true, null] }, "1.1"),
    { score: 0.5, per_invocation_scores: [1, null], details: null, protocol_version: "1.1" });
  assert.deepEqual(checkResult({ score: null, status: "NOT_EVALUATED" }).score, null);
  assert.throws(() => checkResult({ score: 1.5 }, "1.2", { name: "q" }),
    (err) => err instanceof ResultError && err.message === "q returned an invalid EvalResult: score: must be between 0 and 1 (got 1.5)");
  assert.throws(() => checkResult({}), /score is required unless status is NOT_EVALUATED/);
  assert.throws(() => checkResult({ score: 1, status: "OK" }), /status: expected one of PASSED, FAILED, NOT_EVALUATED/);
  assert.throws(() => checkResult(0.5), /returned number, expected an EvalResult object/);
});

test("evaluate() awaits the function and validates its result (for authors' tests)", async () => {
  const quality = evaluator(async (inp) => ({ score: inp.invocations.length ? 1 : 0 }), { name: "quality" });
  assert.equal(quality.name, "quality");
  assert.deepEqual(await quality.evaluate(input()), { score: 1, per_invocation_scores: [], details: null, protocol_version: "1.2" });
  assert.throws(() => evaluator("nope"), /needs a function/);
});

test("as a plain program: one EvalInput in, one EvalResult out, exit 0, console.log on stderr", () => {
  const { code, lines, result, stderr } = once(input({ protocol_version: "1.1" }));
  assert.equal(code, 0);
  assert.equal(lines.length, 1);
  assert.deepEqual(result, { score: 0.5, per_invocation_scores: [1, 0], details: { pid: result.details.pid }, protocol_version: "1.1" });
  assert.match(stderr, /log line from the evaluator/);
});

test("a newer minor is answered in ours; a worker offer in a 1.1 input is ignored", () => {
  assert.equal(once(input({ protocol_version: "1.9" })).result.protocol_version, "1.2");
  const old = once(input({ protocol_version: "1.1", worker: { input_fd: 3 } }));
  assert.equal(old.code, 0);
  assert.equal(old.result.worker, undefined);
});

test("another major, bad JSON, a throw and an invalid result each exit 1 with one error line", () => {
  const cases = [
    [input({ protocol_version: "2.0" }), "error: unsupported protocol_version 2.0 from agentevals-cli: @agentevals/evaluator-sdk speaks 1.0 to 1.2; upgrade @agentevals/evaluator-sdk so both speak major 2"],
    ["{not json", /^error: stdin is not valid JSON: /],
    [input({ config: { mode: "throw" } }), "error: evaluator 'probe' raised TypeError: no tool calls | second line"],
    [input({ config: { mode: "invalid" } }), "error: probe returned an invalid EvalResult: score: must be between 0 and 1 (got 7)"],
  ];
  for (const [document, expected] of cases) {
    const { code, lines, stderr } = once(document);
    assert.equal(code, 1);
    assert.deepEqual(lines, []);
    const last = stderr.trim().split("\n").at(-1);
    if (typeof expected === "string") assert.equal(last, expected);
    else assert.match(last, expected);
  }
});

/** A worker as the host starts one: the offer on stdin (then closed), further inputs on fd 3. */
function startWorker() {
  const proc = spawn(process.execPath, [PROBE], { stdio: ["pipe", "pipe", "pipe", "pipe"] });
  const lines = createInterface({ input: proc.stdout })[Symbol.asyncIterator]();
  let stderr = "";
  proc.stderr.on("data", (chunk) => { stderr += chunk; });
  const exited = new Promise((resolve) => proc.on("exit", (code) => resolve(code)));
  proc.stdin.end(JSON.stringify(input({ request_id: "1", worker: { input_fd: 3 } })));
  return {
    proc, exited, stderr: () => stderr,
    async next() {
      const { value, done } = await lines.next();
      assert.ok(!done, `the worker closed stdout; stderr: ${stderr}`);
      return JSON.parse(value);
    },
    send(document) {
      proc.stdio[3].write(`${typeof document === "string" ? document : JSON.stringify(document)}\n`);
    },
  };
}

test("a worker accepts the offer and answers many inputs in one process, until its input ends", async () => {
  const worker = startWorker();
  const first = await worker.next();
  assert.equal(first.worker, true);
  assert.equal(first.request_id, "1");
  assert.equal(first.score, 0.5);
  const pids = new Set([first.details.pid]);
  for (let i = 2; i <= 6; i++) {
    worker.send(input({ request_id: String(i), protocol_version: "1.2" }));
    const answer = await worker.next();
    assert.equal(answer.request_id, String(i));
    assert.equal(answer.worker, undefined);
    pids.add(answer.details.pid);
  }
  assert.deepEqual([...pids], [worker.proc.pid]);
  worker.proc.stdio[3].end();
  assert.equal(await worker.exited, 0);
});

test("a worker answers a failed input with error set and goes on", async () => {
  const worker = startWorker();
  await worker.next();
  worker.send(input({ request_id: "2", config: { mode: "throw" } }));
  assert.deepEqual(await worker.next(), { request_id: "2", error: "evaluator 'probe' raised TypeError: no tool calls | second line", protocol_version: "1.2" });
  worker.send("{broken");
  const broken = await worker.next();
  assert.equal(broken.request_id, undefined);
  assert.match(broken.error, /^stdin is not valid JSON/);
  worker.send(input({ request_id: "3", protocol_version: "3.0" }));
  assert.match((await worker.next()).error, /unsupported protocol_version 3.0/);
  worker.send(input({ request_id: "4" }));
  assert.equal((await worker.next()).score, 0.5);
  worker.proc.stdio[3].end();
  assert.equal(await worker.exited, 0);
});

test("a worker reads lines however the pipe cuts them: several in one write, one in pieces, CRLF", async () => {
  const worker = startWorker();
  await worker.next();
  const pipe = worker.proc.stdio[3];
  const line = (id, extra = {}) => JSON.stringify(input({ request_id: id, ...extra }));
  pipe.write(`${line("2")}\n${line("3")}\r\n`); // two inputs in one write, the second CRLF-terminated
  assert.deepEqual([(await worker.next()).request_id, (await worker.next()).request_id], ["2", "3"]);
  // A line cut inside a two-byte UTF-8 character: decoded whole, not as two broken halves.
  const bytes = Buffer.from(`${line("é4")}\n`);
  const cut = bytes.indexOf(Buffer.from("é")) + 1;
  pipe.write(bytes.subarray(0, cut));
  await new Promise((resolve) => setTimeout(resolve, 50));
  pipe.write(bytes.subarray(cut));
  assert.equal((await worker.next()).request_id, "é4");
  pipe.end(line("5")); // the last line needs no newline
  assert.equal((await worker.next()).request_id, "5");
  assert.equal(await worker.exited, 0);
});

test("a worker whose evaluation exits the process ends without an answer (the host restarts it)", async () => {
  const worker = startWorker();
  await worker.next();
  worker.send(input({ request_id: "2", config: { mode: "exit" } }));
  assert.equal(await worker.exited, 3);
});

test("an offer this process cannot read (a wrapper did not pass the fd on) is declined: one result, exit 0", () => {
  const { code, lines, result } = once(input({ request_id: "1", worker: { input_fd: 987 } }));
  assert.equal(code, 0);
  assert.equal(lines.length, 1);
  assert.equal(result.worker, undefined);
  assert.equal(result.score, 0.5);
});
