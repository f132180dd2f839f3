// Types of @agentevals/evaluator-sdk (hand-written; the wire schema is schema/eval_input.v1.2.json and
// schema/eval_result.v1.2.json in the agentevals repository).

export declare const PROTOCOL_VERSION: "1.2";
export declare const SUPPORTED_VERSIONS: readonly string[];
export declare const PACKAGE_NAME: string;

export interface ToolCall {
  name: string;
  args: Record<string, unknown>;
  id?: string | null;
}

export interface ToolResponse {
  name: string;
  output: string;
  status?: string | null;
  id?: string | null;
  response?: unknown;
}

export interface Invocation {
  invocation_id: string;
  user_content: string;
  final_response: string | null;
  intermediate_steps: { tool_calls: ToolCall[]; tool_responses: ToolResponse[] };
  performance_metrics?: Record<string, unknown> | null;
  trace_id?: string | null;
  span_id?: string | null;
}

/** The host's offer to keep this process for more inputs (protocol 1.2; the SDK handles it). */
export interface WorkerOffer {
  input_fd: number;
}

export interface EvalInput {
  protocol_version: string;
  metric_name: string;
  threshold: number;
  config: Record<string, unknown>;
  invocations: Invocation[];
  expected_invocations: Invocation[] | null;
  performance_metrics?: Record<string, unknown> | null;
  request_id?: string | null;
  worker?: WorkerOffer | null;
}

export type EvalStatus = "PASSED" | "FAILED" | "NOT_EVALUATED";

export interface EvalResult {
  /** Overall score in [0, 1]; may be null only when status is NOT_EVALUATED. */
  score: number | null;
  /** When omitted the host derives it from score vs threshold. */
  status?: EvalStatus | null;
  /** Per-turn scores in input order (empty when not computed). */
  per_invocation_scores?: (number | null)[];
  details?: Record<string, unknown> | null;
  protocol_version?: string | null;
}

export type EvaluatorFunction = (input: EvalInput) => EvalResult | Promise<EvalResult>;

export interface EvaluatorOptions {
  /** Used in messages; defaults to the function's name. */
  name?: string;
}

export declare class EvaluatorError extends Error {}
export declare class ProtocolVersionError extends EvaluatorError {}
export declare class InputError extends EvaluatorError {}
export declare class ResultError extends EvaluatorError {}

export declare class Evaluator {
  constructor(fn: EvaluatorFunction, options?: EvaluatorOptions);
  readonly fn: EvaluatorFunction;
  readonly name: string;
  /** Call the function and validate its result as the host will (for tests). */
  evaluate(input: EvalInput, options?: { version?: string }): Promise<EvalResult>;
  /** Run as an evaluator program (stdin → stdout, or a persistent worker when offered); exits the process. */
  run(options?: { stdin?: NodeJS.ReadableStream; stdout?: NodeJS.WritableStream }): Promise<never>;
}

export declare function evaluator(fn: EvaluatorFunction, options?: EvaluatorOptions): Evaluator;
export declare const defineEvaluator: typeof evaluator;
export declare function parseVersion(text: unknown): [number, number];
export declare function negotiate(theirs: unknown, ours?: string, options?: { peer?: string }): string;
export declare function parseInput(text: string): [EvalInput, string];
export declare function checkResult(value: unknown, version?: string, options?: { name?: string }): EvalResult;
