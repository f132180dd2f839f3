/**
 * @agentevals/evaluator-sdk: write an agentevals custom evaluator in JavaScript or TypeScript.
 *
 * One file, no dependencies, Node >= 18. It speaks the same versioned wire protocol (1.0 to 1.2) as the
 * Python `agentevals-evaluator-sdk`, including its persistent workers: when the host offers one
 * (protocol 1.2, `EvalInput.worker`), the process stays alive and answers many evaluations.
 *
 * Usage:
 *
 *     import { evaluator } from "@agentevals/evaluator-sdk";
 *
 *     export const hasAnswer = evaluator((input) => {
 *       const scores = input.invocations.map((inv) => (inv.final_response ? 1 : 0));
 *       return { score: scores.length ? scores.reduce((a, b) => a + b, 0) / scores.length : 0,
 *                per_invocation_scores: scores };
 *     }, { name: "has_answer" });
 *
 *     hasAnswer.run();   // as a program: EvalInput on stdin, EvalResult on stdout (or a worker)
 */

import { fstatSync } from "node:fs";
import net from "node:net";

/** Highest protocol version this SDK speaks. */
export const PROTOCOL_VERSION = "1.2";

/** Every version this SDK speaks, oldest first. */
export const SUPPORTED_VERSIONS = Object.freeze(["1.0", "1.1", "1.2"]);

/** This package's name, in messages that say what to upgrade. */
export const PACKAGE_NAME = "@agentevals/evaluator-sdk";

const STATUSES = new Set(["PASSED", "FAILED", "NOT_EVALUATED"]);
const WORKER_FIELDS = ["request_id", "worker", "error"];

/** Base class of every error this SDK raises on purpose (its message is one line). */
export class EvaluatorError extends Error {
  get name() {
    return this.constructor.name;
  }
}
/** The protocol_version is malformed or of another MAJOR. */
export class ProtocolVersionError extends EvaluatorError {}
/** stdin (or a worker's input line) is not a valid EvalInput. */
export class InputError extends EvaluatorError {}
/** The evaluator returned something that is not a valid EvalResult. */
export class ResultError extends EvaluatorError {}

/**
 * Parse `"MAJOR.MINOR"` into `[major, minor]`.
 *
 *     parseVersion("1.10")  // [1, 10]
 */
export function parseVersion(text) {
  if (typeof text !== "string") {
    throw new ProtocolVersionError(`protocol_version must be a string like '1.0', got ${show(text)}`);
  }
  const parts = text.trim().split(".");
  if (parts.length !== 2 || !parts.every((p) => /^\d+$/.test(p))) {
    throw new ProtocolVersionError(`protocol_version must look like 'MAJOR.MINOR', got ${show(text)}`);
  }
  return [Number(parts[0]), Number(parts[1])];
}

/**
 * The version both sides speak: same MAJOR, the lower MINOR. A different MAJOR is refused; a newer MINOR is
 * accepted (its unknown fields are ignored). The rule and the message are the Python SDK's.
 *
 *     negotiate("1.9")  // "1.2"
 *     negotiate("1.0")  // "1.0"
 */
export function negotiate(theirs, ours = PROTOCOL_VERSION, { peer = "agentevals-cli" } = {}) {
  const [theirMajor, theirMinor] = parseVersion(theirs);
  const [ourMajor, ourMinor] = parseVersion(ours);
  if (theirMajor !== ourMajor) {
    const upgrade = theirMajor > ourMajor ? PACKAGE_NAME : peer;
    throw new ProtocolVersionError(
      `unsupported protocol_version ${theirs} from ${peer}: ${PACKAGE_NAME} speaks ` +
        `${SUPPORTED_VERSIONS[0]} to ${SUPPORTED_VERSIONS[SUPPORTED_VERSIONS.length - 1]}; upgrade ${upgrade} ` +
        `so both speak major ${Math.max(theirMajor, ourMajor)}`,
    );
  }
  return `${ourMajor}.${Math.min(ourMinor, theirMinor)}`;
}

/**
 * Parse an EvalInput document (stdin text or one worker line); returns `[input, negotiatedVersion]`.
 * Throws `InputError` (one line, naming the field) or `ProtocolVersionError`.
 */
export function parseInput(text) {
  return checkInput(parseJson(text));
}

/** The JSON value of stdin text or a worker line (`InputError` when it is none). */
function parseJson(text) {
  text = String(text).replace(/^\ufeff/, ""); // a byte order mark some Windows shells put before piped text
  if (!text.trim()) throw new InputError("empty stdin: expected one EvalInput JSON document");
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new InputError(`stdin is not valid JSON: ${err.message}`);
  }
}

/** `parseInput` of a value already parsed (a worker line is parsed once, for its request_id too). */
function checkInput(data) {
  if (data === null || typeof data !== "object" || Array.isArray(data)) {
    throw new InputError(`stdin must be a JSON object (EvalInput), got ${typeName(data)}`);
  }
  const version = negotiate(data.protocol_version ?? "1.0");
  const problems = [];
  if (typeof data.metric_name !== "string") problems.push(`metric_name: expected a string (got ${show(data.metric_name)})`);
  if (!Array.isArray(data.invocations)) problems.push(`invocations: expected a list (got ${show(data.invocations)})`);
  if (data.threshold !== undefined && (typeof data.threshold !== "number" || !Number.isFinite(data.threshold))) {
    problems.push(`threshold: expected a number (got ${show(data.threshold)})`);
  }
  if (data.config != null && (typeof data.config !== "object" || Array.isArray(data.config))) {
    problems.push(`config: expected an object (got ${show(data.config)})`);
  }
  const expected = data.expected_invocations;
  if (expected != null && !Array.isArray(expected)) {
    problems.push(`expected_invocations: expected a list or null (got ${show(expected)})`);
  }
  if (problems.length) throw new InputError(`invalid EvalInput: ${problems.join("; ")}`);
  return [{ threshold: 0.5, config: {}, expected_invocations: null, ...data, protocol_version: data.protocol_version ?? "1.0" }, version];
}

/**
 * Validate what an evaluator returned, as the host will, and stamp the protocol version. Numbers given as
 * numeric strings or booleans are read as numbers (as the Python SDK reads them); the result is strict JSON.
 */
export function checkResult(value, version = PROTOCOL_VERSION, { name = "evaluator" } = {}) {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new ResultError(`${name} returned ${typeName(value)}, expected an EvalResult object`);
  }
  const problems = [];
  const result = {};
  const score = unitScore(value.score, "score", problems);
  const status = value.status ?? null;
  if (status !== null && !STATUSES.has(status)) {
    problems.push(`status: expected one of PASSED, FAILED, NOT_EVALUATED (got ${show(status)})`);
  }
  if (value.score == null && status !== "NOT_EVALUATED") problems.push("score is required unless status is NOT_EVALUATED");
  result.score = score;
  if (status !== null) result.status = status;
  const perInvocation = value.per_invocation_scores ?? [];
  if (!Array.isArray(perInvocation)) {
    problems.push(`per_invocation_scores: expected a list (got ${show(perInvocation)})`);
  } else {
    result.per_invocation_scores = perInvocation.map((s, i) => unitScore(s, `per_invocation_scores[${i}]`, problems));
  }
  const details = value.details ?? null;
  if (details !== null && (typeof details !== "object" || Array.isArray(details))) {
    problems.push(`details: expected an object or null (got ${show(details)})`);
  }
  result.details = details;
  if (problems.length) throw new ResultError(`${name} returned an invalid EvalResult: ${problems.join("; ")}`);
  result.protocol_version = version;
  return result;
}

/**
 * A scoring function that can also run as an evaluator program. `evaluate()` calls it and validates the
 * result; `run()` speaks the wire protocol (and becomes a persistent worker when the host offers one).
 */
export class Evaluator {
  constructor(fn, { name } = {}) {
    if (typeof fn !== "function") {
      throw new TypeError(`evaluator() needs a function (input) => EvalResult, got ${typeName(fn)}`);
    }
    this.fn = fn;
    this.name = name || fn.name || "evaluator";
  }

  /** Call the function (awaiting it) and validate its result like `run()` does. */
  async evaluate(input, { version } = {}) {
    const used = version ?? negotiate(input.protocol_version ?? "1.0");
    return checkResult(await this.fn(input), used, { name: this.name });
  }

  /**
   * Read one EvalInput on stdin, evaluate, write one EvalResult on stdout, exit. On an error: one
   * `error: …` line on stderr, exit code 1. console.log/info/debug go to stderr so stdout stays the protocol's.
   *
   * When the host offers a persistent worker (protocol 1.2), the offer is accepted: the first result says
   * `"worker": true`, then each line read from the offered file descriptor is one EvalInput, answered by one
   * result line with its `request_id` (a failed input gets `error` set; the worker goes on) until that ends.
   */
  async run({ stdin = process.stdin, stdout = process.stdout } = {}) {
    redirectConsole();
    let input;
    let version;
    let result;
    try {
      [input, version] = parseInput(await readAll(stdin));
      result = await this.#evaluateLogged(input, version);
    } catch (err) {
      process.stderr.write(`error: ${oneLine(err.message)}\n`);
      return exit(stdout, 1);
    }
    const offer = parseVersion(version)[1] >= 2 ? input.worker : null;
    const source = offer ? openOffered(offer.input_fd) : null;
    if (source) {
      await write(stdout, { ...result, worker: true, request_id: input.request_id ?? null });
      await this.#serve(source, stdout);
    } else {
      await write(stdout, result);
    }
    return exit(stdout, 0);
  }

  /** `evaluate`, with what the author's code threw made one line (its stack goes to stderr). */
  async #evaluateLogged(input, version) {
    try {
      return await this.evaluate(input, { version });
    } catch (err) {
      if (err instanceof EvaluatorError) throw err;
      process.stderr.write(`${err && err.stack ? err.stack : String(err)}\n`);
      const kind = err && err.constructor ? err.constructor.name : typeof err;
      const message = err instanceof Error ? err.message : String(err);
      throw new EvaluatorError(`evaluator '${this.name}' raised ${kind}: ${oneLine(message)}`);
    }
  }

  /** The persistent worker loop: one EvalInput line in, one EvalResult line out, until end of input. */
  async #serve(source, stdout) {
    for await (const line of lines(source)) {
      if (!line.trim()) continue;
      let requestId = null;
      let reply;
      try {
        const data = parseJson(line);
        if (data && typeof data === "object") requestId = data.request_id ?? null;
        const [input, version] = checkInput(data);
        reply = { ...(await this.#evaluateLogged(input, version)), request_id: input.request_id ?? requestId };
      } catch (err) {
        const message = oneLine(err && err.message ? err.message : String(err));
        process.stderr.write(`error: ${message}\n`);
        reply = { request_id: requestId, error: message, protocol_version: PROTOCOL_VERSION };
      }
      // Not awaited: the host reads each answer before it sends the next input, and exit() waits for
      // stdout to take everything. Only a full pipe (write() says false) is waited for.
      if (!stdout.write(encode(reply))) await new Promise((resolve) => stdout.once("drain", resolve));
    }
  }
}

/**
 * Mark a function `(input: EvalInput) => EvalResult | Promise<EvalResult>` as an evaluator.
 *
 *     const quality = evaluator((input) => ({ score: 1 }), { name: "quality" });
 *     await quality.evaluate(input);   // validated result, for tests
 *     quality.run();                   // as a program
 */
export function evaluator(fn, options = {}) {
  return new Evaluator(fn, options);
}

/** The same as `evaluator(fn, options)`. */
export const defineEvaluator = evaluator;

// --- helpers -------------------------------------------------------------------------------------------

function unitScore(value, field, problems) {
  if (value === undefined || value === null) return null;
  let number = value;
  if (typeof value === "boolean") number = value ? 1 : 0;
  else if (typeof value === "string" && value.trim() !== "" && !Number.isNaN(Number(value))) number = Number(value);
  if (typeof number !== "number" || !Number.isFinite(number)) {
    problems.push(`${field}: expected a number in [0, 1] (got ${show(value)})`);
    return null;
  }
  if (number < 0 || number > 1) {
    problems.push(`${field}: must be between 0 and 1 (got ${show(value)})`);
    return null;
  }
  return number;
}

function show(value) {
  if (value === undefined) return "nothing";
  try {
    const text = JSON.stringify(value);
    return text === undefined ? String(value) : text.length > 80 ? `${text.slice(0, 77)}...` : text;
  } catch {
    return String(value);
  }
}

function typeName(value) {
  if (value === null) return "null";
  if (Array.isArray(value)) return "list";
  return typeof value;
}

function oneLine(text) {
  return String(text)
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean)
    .join(" | ");
}

/**
 * The offered input pipe as a readable stream, or null when this process cannot read it (the offer is then
 * declined: the result is written as a plain program's and the process exits, as a 1.0 evaluator does).
 * A wrapper that starts node in turn may not pass the fd on; its number then names another file, or one
 * libuv already uses.
 */
function openOffered(fd) {
  if (!Number.isInteger(fd) || fd < 3) return null;
  try {
    const stat = fstatSync(fd);
    if (!stat.isFIFO() && !stat.isSocket()) return null;
    return new net.Socket({ fd, readable: true, writable: false });
  } catch {
    return null;
  }
}

let redirected = false;

/** Send console.log/info/debug to stderr: stdout carries only protocol lines. */
function redirectConsole() {
  if (redirected) return;
  redirected = true;
  for (const method of ["log", "info", "debug"]) console[method] = console.error.bind(console);
}

async function readAll(stream) {
  const chunks = [];
  for await (const chunk of stream) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString("utf8");
}

/** One protocol line: `data` without the worker fields it leaves unset (a 1.0/1.1 result has none). */
function encode(data) {
  for (const key of WORKER_FIELDS) if (data[key] === undefined || data[key] === null) delete data[key];
  return `${JSON.stringify(data)}\n`;
}

function write(stream, data) {
  return new Promise((resolve, reject) => {
    stream.write(encode({ ...data }), (err) => (err ? reject(err) : resolve()));
  });
}

/**
 * The lines of a readable stream, without their newlines (a last line without one included). Split on the
 * bytes: a newline byte is never part of a UTF-8 sequence, so each line is decoded whole. (readline's async
 * iterator costs more per line than the evaluation of a small input.)
 */
async function* lines(stream) {
  let pending = [];
  for await (const chunk of stream) {
    let start = 0;
    let newline;
    while ((newline = chunk.indexOf(10, start)) !== -1) {
      pending.push(chunk.subarray(start, newline));
      yield (pending.length === 1 ? pending[0] : Buffer.concat(pending)).toString("utf8").replace(/\r$/, "");
      pending = [];
      start = newline + 1;
    }
    if (start < chunk.length) pending.push(chunk.subarray(start));
  }
  if (pending.length) yield Buffer.concat(pending).toString("utf8").replace(/\r$/, "");
}

/** Exit once stdout has taken everything (user code may leave timers or sockets open). */
function exit(stdout, code) {
  return new Promise(() => {
    stdout.write("", () => process.exit(code));
  });
}
