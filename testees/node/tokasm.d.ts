// Types for tokasm.js: the streaming token assembler interface and the conformance helpers.
// See docs/javascript.md; the rules are in spec/SPEC.md, the export in docs/export.md.

/** One streamed event (SPEC.md, EVT-SHAPE); other keys are allowed and ignored (EVT-EXTRA-KEYS). */
export interface StreamEvent {
  id: string;
  delta?: string;
  final?: boolean;
  [key: string]: unknown;
}

/** An answer: text or null, or (an async assembler) a Promise of it, which tokasm awaits. */
export type Answer = string | null | PromiseLike<string | null>;

/** What tokasm checks. `readSince` (incremental profile) is optional. Never `undefined`. */
export interface Assembler {
  /** Append `delta`; null until `final`, then the whole text (and the same text ever after). */
  apply(event: StreamEvent): Answer;
  /** The text so far, or null for an id never seen. */
  get(id: string): Answer;
  /** The text from code point `offset` on (not UTF-16 units: use codePointIndex), or null. */
  readSince?(id: string, offset: number): Answer;
}

/** A class (called with `new`) or a factory (an arrow function) making fresh assemblers. */
export type AssemblerTarget = (new () => Assembler) | (() => Assembler);

/** The strict profile's refusal of a well-typed but invalid event; wrong types are TypeError. */
export declare class ValueError extends Error {
  constructor(message?: string);
}

/** A step of an exported case: a protocol request plus what it must return or raise. */
export type ExportedStep = { instance: string; where: string } & (
  | { op: 'apply'; event: unknown }
  | { op: 'get'; id: string }
  | { op: 'read_since'; id: string; offset: number }
) & ({ returns: string | null } | { raises: 'TypeError' | 'ValueError' });

/** One case as `tokasm export` writes it (spec/export.schema.json). */
export interface ExportedCase {
  export_format: 1;
  tokasm_version: string;
  corpus_version: string;
  protocol_version: number;
  id: string;
  description: string;
  requirements: string[];
  profile: string;
  instances: string[];
  source: string;
  bundled: boolean;
  steps: ExportedStep[];
}

export type Outcome = 'passed' | 'failed' | 'errored';

export interface SuiteOptions {
  /** The export: a folder of CASE-ID.json files or a .jsonl file (default: $TOKASM_EXPORT). */
  corpus?: string;
  /**
   * Optional profiles to run too: 'incremental' (readSince), 'strict', 'surrogates'. required,
   * the seed's contract, always runs.
   * A name that is no profile, or a profile whose cases the class cannot run, throws.
   */
  profiles?: string[];
  /**
   * Case ids or globs (*, ? and [...]) expected to fail; a listed case that passes fails, and so
   * does a line that matches no case. A glob that matches every case is refused.
   */
  xfail?: string[];
}

export declare const PROTOCOL_VERSION: 1;

/**
 * Register one node:test test per exported case, named by its id, and cost.cache-final. A run
 * that ends before every test finished (process.exit in the assembler, a crash) exits with 1.
 */
export declare function suite(target: AssemblerTarget, options?: SuiteOptions): void;

export interface CaseResult {
  outcome: Outcome;
  message: string;
}

/** Run one exported case on fresh instances from `factory`; a Promise once an answer is one. */
export declare function runCase(
  factory: () => Assembler,
  exportedCase: ExportedCase,
): CaseResult | Promise<CaseResult>;

/** Why the case does not run on this assembler (profile not selected, no readSince), or null. */
export declare function skipReason(
  exportedCase: ExportedCase,
  profiles: string[],
  assembler: Assembler,
): string | null;

/** Every case of a `tokasm export`: a folder of CASE-ID.json files, or a .jsonl file. */
export declare function loadExport(location: string): ExportedCase[];

/** The class or factory named by 'path/to/module.js[:ExportName]'. */
export declare function loadTarget(spec: string): AssemblerTarget;

/**
 * Answer the tokasm line protocol on stdin/stdout until end of input (tokasm check --cmd),
 * awaiting Promise answers in order; returns at once inside node --test.
 */
export declare function serve(target: AssemblerTarget, options?: { name?: string }): Promise<void>;

/** The kind a strict case compares: 'TypeError', 'ValueError', else the error's name. */
export declare function errorKind(error: unknown): string;

/** A position in a text both as code points and as the UTF-16 index where it starts. */
export interface CodePointCursor {
  points: number;
  units: number;
}

/**
 * The UTF-16 index of code point `offset` in `text` (text.length past the end), moving on
 * from `from` when it is not past `offset`, so a forward reader pays only for new text.
 */
export declare function codePointIndex(
  text: string,
  offset: number,
  from?: CodePointCursor,
): CodePointCursor;
