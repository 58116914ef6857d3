// tokasm for JavaScript and TypeScript: check a streaming token assembler class
// against the tokasm corpus, in process or over the line protocol.
// One file, no dependencies, Node 18 or later; types in tokasm.d.ts.
//
//   suite(factory, options)   one node:test test per case of a `tokasm export`
//   runCase(factory, case)    run one exported case: {outcome, message}
//   loadExport(path)          the cases of an export folder or .jsonl file
//   serve(factory)            answer spec/PROTOCOL.md on stdin/stdout (tokasm check --cmd)
//   loadTarget('f.js:Name')   the class or factory a command line names
//   codePointIndex(text, n)   where code point n starts, for read_since
//   ValueError                the strict profile's second error kind
//
// Both routes judge a class the same way (docs/javascript.md).
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { StringDecoder } = require('node:string_decoder');

const PROTOCOL_VERSION = 1;
const DEFAULT_PROFILES = ['required', 'incremental'];

/** The strict profile's refusal of a well-typed but invalid event (JavaScript has TypeError). */
class ValueError extends Error {
  constructor(message) {
    super(message);
    this.name = 'ValueError';
  }
}

/** The error kind a strict case compares: TypeError, ValueError, else the error's name. */
function errorKind(error) {
  if (error instanceof TypeError) return 'TypeError';
  if (error instanceof ValueError) return 'ValueError';
  return error instanceof Error ? error.name : typeof error;
}

const isHigh = (unit) => unit >= 0xd800 && unit <= 0xdbff;
const isLow = (unit) => unit >= 0xdc00 && unit <= 0xdfff;

/**
 * SPEC offsets count code points; JavaScript strings count UTF-16 units. Returns
 * {points, units}: the UTF-16 index `units` where code point `offset` starts (or the
 * end), moving on from `from` when it is not past `offset`, so a reader that moves
 * forward pays only for the new text (INC-LINEAR). A lone surrogate is one code point.
 */
function codePointIndex(text, offset, from = { points: 0, units: 0 }) {
  let { points, units } = from.points <= offset ? from : { points: 0, units: 0 };
  while (points < offset && units < text.length) {
    units += isHigh(text.charCodeAt(units)) && isLow(text.charCodeAt(units + 1)) ? 2 : 1;
    points++;
  }
  return { points, units };
}

/** A class is constructed with `new`; an arrow function or method is called. */
function factoryOf(target) {
  if (typeof target !== 'function') throw new TypeError('the assembler must be a class or factory');
  return target.prototype === undefined ? () => target() : () => new target();
}

/**
 * The class or factory named by `MODULE[:EXPORT]` (a file path, resolved from the current
 * folder, then the exported name; default: the module itself or its default export).
 */
function loadTarget(spec) {
  const [file, name] = spec.split(/:(?=[A-Za-z_$][\w$]*$)/);
  const loaded = require(path.resolve(file));
  const target = name ? loaded[name] : (loaded.default ?? loaded);
  if (typeof target !== 'function') throw new TypeError(`${spec} is not a class or factory`);
  return target;
}

const EXPORT_FORMAT = 1;

/** One exported case, refused if its format is newer than this file reads. */
function parseCase(json, where) {
  const kase = JSON.parse(json);
  if (kase.export_format !== EXPORT_FORMAT) {
    throw new Error(`${where}: export format ${kase.export_format}; this tokasm.js reads ${EXPORT_FORMAT}`);
  }
  return kase;
}

/** Every case of a `tokasm export`: a folder of CASE-ID.json files, or a .jsonl file. */
function loadExport(location) {
  if (fs.statSync(location).isDirectory()) {
    return fs.readdirSync(location).filter((name) => name.endsWith('.json')).sort()
      .map((name) => parseCase(fs.readFileSync(path.join(location, name), 'utf8'), name));
  }
  return fs.readFileSync(location, 'utf8').split('\n').filter((line) => line.trim() !== '')
    .map((line, index) => parseCase(line, `${location}:${index + 1}`));
}

/** Why the case does not run on this assembler, or null if it does. */
function skipReason(kase, profiles, assembler) {
  if (!profiles.includes(kase.profile)) return `profile '${kase.profile}' not selected`;
  if (kase.steps.some((step) => step.op === 'read_since') && typeof assembler.readSince !== 'function') {
    return `target has no readSince (${kase.profile} profile)`;
  }
  return null;
}

function perform(assembler, step) {
  switch (step.op) {
    case 'apply': return assembler.apply(structuredClone(step.event)); // its own copy to change
    case 'get': return assembler.get(step.id);
    case 'read_since': return assembler.readSince(step.id, step.offset);
    default: throw new ValueError(`unknown op ${JSON.stringify(step.op)}: a newer export?`);
  }
}

/** A value as a failure message shows it: JSON for text and null, cut when long. */
function show(value) {
  const text = typeof value === 'string' || value === null ? JSON.stringify(value) : String(value);
  const shown = text.length > 160 ? `${text.slice(0, 160)}... (${text.length} chars)` : text;
  return typeof value === 'string' || value === null ? shown : `${shown} (${typeof value})`;
}

/** The call as a person reads it: get("m"), apply({"id":"m","delta":"x"}). */
function describe(step) {
  const args = step.op === 'apply' ? [step.event] : step.op === 'get' ? [step.id] : [step.id, step.offset];
  const shown = args.map((arg) => JSON.stringify(arg) ?? String(arg));
  return `${step.op}(${shown.map((t) => (t.length > 80 ? `${t.slice(0, 80)}...` : t)).join(', ')})`;
}

/** Where two texts first differ, in code points, when the values shown are cut. */
function firstDifference(expected, actual) {
  if (typeof actual !== 'string' || typeof expected !== 'string' || expected.length <= 160) return '';
  let unit = 0;
  while (unit < expected.length && expected[unit] === actual[unit]) unit++;
  return `\n  first difference at code point ${[...expected.slice(0, unit)].length}`;
}

/** null if the step did what it must, else [outcome, message]. */
function checkStep(assembler, step) {
  let actual;
  try {
    actual = perform(assembler, step);
  } catch (error) {
    const raised = `raised ${errorKind(error)}: ${error instanceof Error ? error.message : error}`;
    if (!('raises' in step)) return ['errored', `expected: ${show(step.returns)}\n  actual:   ${raised}`];
    return errorKind(error) === step.raises ? null
      : ['failed', `expected: raises ${step.raises}\n  actual:   ${raised}`];
  }
  if ('raises' in step) return ['failed', `expected: raises ${step.raises}\n  actual:   returned ${show(actual)}`];
  // Any string with the same text (a String object too, as JSON sends it), or exactly null.
  if ((actual instanceof String ? actual.valueOf() : actual) === step.returns) return null;
  return ['failed',
    `expected: ${show(step.returns)}\n  actual:   ${show(actual)}${firstDifference(step.returns, actual)}`];
}

/** Run one exported case on fresh instances: {outcome: passed|failed|errored, message}. */
function runCase(factory, kase) {
  let doing = "creating the case's instances";
  try {
    const instances = new Map(kase.instances.map((name) => [name, factory()]));
    for (const step of kase.steps) {
      doing = `step ${step.where} on '${step.instance}': ${describe(step)}`;
      const failure = checkStep(instances.get(step.instance), step);
      if (failure !== null) return { outcome: failure[0], message: `${doing}\n  ${failure[1]}` };
    }
  } catch (error) {
    return { outcome: 'errored', message: `${doing}: ${error}` };
  }
  return { outcome: 'passed', message: '' };
}

/** Does an expected-failure line (a case id or a glob with * and ?) match this id? */
function matches(pattern, id) {
  const escaped = pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^${escaped.replace(/\*/g, '.*').replace(/\?/g, '.')}$`).test(id);
}

/**
 * Register one node:test test per exported case, named by its id. `corpus` is the export
 * (default: $TOKASM_EXPORT); `profiles` adds optional ones (strict, surrogates); `xfail`
 * lists ids or globs expected to fail: such a case that passes fails (the list cannot go stale).
 */
function suite(target, { corpus = process.env.TOKASM_EXPORT, profiles = [], xfail = [] } = {}) {
  const { test } = require('node:test');
  if (!corpus) throw new Error('no export: pass {corpus: PATH} or set TOKASM_EXPORT (tokasm export PATH)');
  const factory = factoryOf(target);
  const selected = [...DEFAULT_PROFILES, ...profiles];
  const probe = factory();
  for (const kase of loadExport(corpus)) {
    const skip = skipReason(kase, selected, probe) ?? false;
    test(kase.id, { skip }, (t) => {
      const { outcome, message } = runCase(factory, kase);
      const expected = xfail.some((pattern) => matches(pattern, kase.id));
      if (expected && outcome !== 'passed') return t.todo(`expected failure: ${message}`);
      if (expected) throw new Error(`${kase.id} is listed as an expected failure but passed`);
      if (outcome !== 'passed') throw new Error(`${kase.id} - ${kase.description} [${outcome}]\n${message}`);
    });
  }
}

/** Write all of `text` to stdout, however the pipe takes it (in parts, or busy for a moment). */
function writeAll(text) {
  const bytes = Buffer.from(text, 'utf8');
  for (let done = 0; done < bytes.length;) {
    try {
      done += fs.writeSync(1, bytes, done);
    } catch (error) {
      if (error.code !== 'EAGAIN') throw error;
    }
  }
}

/**
 * Answer the tokasm line protocol (spec/PROTOCOL.md) on stdin/stdout with fresh
 * assemblers from `target` (a class or factory), until end of input. Blocking reads and
 * writes: no event loop between a request and its response.
 */
function serve(target, { name = `tokasm-node (node ${process.version})` } = {}) {
  const factory = factoryOf(target);
  const instances = new Map();
  const field = (request, key, type) => {
    if (typeof request[key] !== type) throw new TypeError(`request needs a ${type} '${key}'`);
    return request[key];
  };
  const assembler = (request) => {
    const found = instances.get(field(request, 'instance', 'string'));
    if (found === undefined) throw new ValueError(`no instance '${request.instance}'`);
    return found;
  };
  const handle = (request) => {
    switch (request.op) {
      case 'hello':
        if (request.protocol !== PROTOCOL_VERSION) throw new ValueError(`protocol ${PROTOCOL_VERSION} only`);
        return { ok: true, protocol: PROTOCOL_VERSION, name,
          features: typeof factory().readSince === 'function' ? ['read_since'] : [] };
      case 'new':
        instances.set(field(request, 'instance', 'string'), factory());
        return { ok: true };
      case 'read_since': {
        const offset = field(request, 'offset', 'number');
        if (!Number.isInteger(offset) || offset < 0) throw new ValueError(`bad offset ${offset}`);
        return { ok: true, result: assembler(request).readSince(field(request, 'id', 'string'), offset) };
      }
      case 'apply':
        if (!Object.hasOwn(request, 'event')) throw new ValueError("apply needs 'event'");
        return { ok: true, result: assembler(request).apply(request.event) };
      case 'get':
        return { ok: true, result: assembler(request).get(field(request, 'id', 'string')) };
      default:
        throw new ValueError(`unknown op ${JSON.stringify(request.op)}`);
    }
  };
  const respond = (line) => {
    try {
      return handle(JSON.parse(line));
    } catch (error) {
      return { ok: false, error: String(error instanceof Error ? error.message : error), kind: errorKind(error) };
    }
  };
  // The protocol owns stdout: whatever the assembler prints (console.log) goes to stderr.
  process.stdout.write = process.stderr.write.bind(process.stderr);
  const decoder = new StringDecoder('utf8'); // a character may straddle two reads
  const chunk = Buffer.alloc(1 << 16);
  let pending = '';
  let scanned = 0; // no line feed before this index: a long line is scanned once
  for (let size; (size = fs.readSync(0, chunk, 0, chunk.length, null)) > 0;) {
    pending += decoder.write(chunk.subarray(0, size));
    for (let end; (end = pending.indexOf('\n', scanned)) >= 0; scanned = 0) {
      const line = pending.slice(0, end);
      pending = pending.slice(end + 1);
      if (line.trim() !== '') writeAll(`${JSON.stringify(respond(line))}\n`);
    }
    scanned = pending.length;
  }
}

module.exports = {
  PROTOCOL_VERSION, ValueError, codePointIndex, errorKind, loadExport, loadTarget, runCase, serve, skipReason, suite,
};
