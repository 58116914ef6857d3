// tokasm for JavaScript and TypeScript: check a streaming token assembler class
// against the tokasm corpus, in process or over the line protocol.
// One file, no dependencies, Node 18 or later; types in tokasm.d.ts.
//
//   suite(factory, options)   one node:test test per case of a `tokasm export`, and the
//                             cost check cost.cache-final
//   runCase(factory, case)    run one exported case: {outcome, message} (or a Promise of it)
//   loadExport(path)          the cases of an export folder or .jsonl file
//   serve(factory)            answer spec/PROTOCOL.md on stdin/stdout (tokasm check --cmd)
//   loadTarget('f.js:Name')   the class or factory a command line names
//   codePointIndex(text, n)   where code point n starts, for read_since
//   ValueError                the strict profile's second error kind
//
// apply, get and readSince may return Promises (an async assembler): both routes await
// them. Both routes judge a class the same way (docs/javascript.md).
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { randomUUID } = require('node:crypto');
const { StringDecoder } = require('node:string_decoder');

const PROTOCOL_VERSION = 1;
const DEFAULT_PROFILES = ['required']; // the seed's contract: the others only when asked
/** Every profile of the corpus (spec/CASES.md): a name not here is a mistake, not a skip. */
const PROFILES = ['required', 'strict', 'incremental', 'surrogates', 'mappings', 'scale'];

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
  const none = (why) => new Error(`no tokasm export at ${location} (${why}); `
    + `make one with: tokasm export ${location}`);
  let stats;
  try {
    stats = fs.statSync(location);
  } catch (error) {
    throw none(error.code ?? error.message);
  }
  const cases = stats.isDirectory()
    ? fs.readdirSync(location).filter((name) => name.endsWith('.json')).sort()
      .map((name) => parseCase(fs.readFileSync(path.join(location, name), 'utf8'), name))
    : fs.readFileSync(location, 'utf8').split('\n').filter((line) => line.trim() !== '')
      .map((line, index) => parseCase(line, `${location}:${index + 1}`));
  if (cases.length === 0) throw none('no case in it'); // a check of nothing would pass
  return cases;
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

/** An async assembler's answer: a Promise (or any object with a `then`) to await. */
const isThenable = (value) => (typeof value === 'object' || typeof value === 'function')
  && value !== null && typeof value.then === 'function';

/** Text (a string, or a String object as JSON sends it) or null: what an answer may be. */
const isText = (value) => value === null || typeof value === 'string' || value instanceof String;

/** A value as a failure message shows it: JSON for text and null, cut when long. */
function show(value) {
  if (value === undefined) return 'returned undefined (null means "no text")';
  const text = isText(value) ? JSON.stringify(value) : String(value);
  const shown = text.length > 160 ? `${text.slice(0, 160)}... (${text.length} chars)` : text;
  return isText(value) ? shown : `${shown} (${typeof value})`;
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

/** null if the step did what it must, else [outcome, message]; `settled` is {value} or {error}. */
function judge(step, settled) {
  if ('error' in settled) {
    const { error } = settled;
    const raised = `raised ${errorKind(error)}: ${error instanceof Error ? error.message : error}`;
    if (!('raises' in step)) return ['errored', `expected: ${show(step.returns)}\n  actual:   ${raised}`];
    return errorKind(error) === step.raises ? null
      : ['failed', `expected: raises ${step.raises}\n  actual:   ${raised}`];
  }
  const actual = settled.value;
  if ('raises' in step) {
    return ['failed', `expected: raises ${step.raises}\n  actual:   ${actual === undefined ? '' : 'returned '}${show(actual)}`];
  }
  // Any string with the same text (a String object too, as JSON sends it), or exactly null.
  if ((actual instanceof String ? actual.valueOf() : actual) === step.returns) return null;
  return ['failed',
    `expected: ${show(step.returns)}\n  actual:   ${show(actual)}${firstDifference(step.returns, actual)}`];
}

/**
 * Run one exported case on fresh instances: {outcome: passed|failed|errored, message}, or a
 * Promise of it once a step's answer is a Promise (an async assembler): `await` it for both.
 */
function runCase(factory, kase) {
  let doing = "creating the case's instances";
  const errored = (error) => ({ outcome: 'errored', message: `${doing}: ${error}` });
  const failed = ([outcome, detail]) => ({ outcome, message: `${doing}\n  ${detail}` });
  let instances;
  try {
    instances = new Map(kase.instances.map((name) => [name, factory()]));
  } catch (error) {
    return errored(error);
  }
  const from = (index) => {
    try {
      for (let next = index; next < kase.steps.length; next++) {
        const step = kase.steps[next];
        doing = `step ${step.where} on '${step.instance}': ${describe(step)}`;
        let settled;
        try {
          settled = { value: perform(instances.get(step.instance), step) };
        } catch (error) {
          settled = { error };
        }
        if (isThenable(settled.value)) { // the rest of the case runs once it settles
          return Promise.resolve(settled.value).then((value) => ({ value }), (error) => ({ error }))
            .then((answer) => { const failure = judge(step, answer); return failure ? failed(failure) : from(next + 1); })
            .catch(errored);
        }
        const failure = judge(step, settled);
        if (failure !== null) return failed(failure);
      }
    } catch (error) {
      return errored(error);
    }
    return { outcome: 'passed', message: '' };
  };
  return from(0);
}

/** The checks of `tokasm check` that are not corpus cases: an expected-failure line may name them. */
const PROBE_ID = 'cost.cache-final';
const PROBE_IDS = [PROBE_ID, 'cost.stream-linear'];

/** An expected-failure line (a case id, or a glob with *, ? and [...] as fnmatch reads it) as a RegExp. */
function globRegExp(pattern) {
  let source = '';
  for (let at = 0; at < pattern.length; at++) {
    let end = at + 1 + (pattern[at + 1] === '!'); // a set: [abc], [!abc]; a ] first is in it
    end = pattern[at] === '[' ? pattern.indexOf(']', end + (pattern[end] === ']')) : -1;
    if (end > 0) {
      const set = pattern.slice(at + 1, end).replace(/[\\\]]/g, '\\$&');
      source += `[${set.startsWith('!') ? `^${set.slice(1)}` : set.replace(/^\^/, '\\^')}]`;
      at = end;
    } else {
      source += { '*': '.*', '?': '.' }[pattern[at]] ?? pattern[at].replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    }
  }
  return new RegExp(`^(?:${source})$`, 's');
}

/**
 * The expected-failure list judged against the export's case ids, as `tokasm check --xfail`
 * judges it: a line matching every case is refused (it would excuse any class), and a line
 * matching no case (nor a cost check) is `stale`, which fails the run.
 */
function expectedFailures(patterns, ids) {
  const lines = patterns.map((pattern) => ({ pattern, regex: globRegExp(pattern) }));
  for (const { pattern, regex } of lines) {
    if (ids.length > 1 && ids.every((id) => regex.test(id))) {
      throw new Error(`xfail: '${pattern}' matches every case of the export, so nothing could fail; `
        + 'list the failing ids (tokasm check --write-xfail writes them)');
    }
  }
  const known = [...ids, ...PROBE_IDS];
  return {
    listed: (id) => lines.some(({ regex }) => regex.test(id)),
    stale: lines.filter(({ regex }) => !known.some((id) => regex.test(id))).map(({ pattern }) => pattern),
  };
}

// CACHE-FINAL in process: the rule of tokasm check's cost.cache-final, a simpler probe
// (docs/javascript.md, "The cost check, in process"; the full one: docs/cost.md).
const PROBE_PARTS = 20000; // the long message's parts; its reference has the same text in 2
const PROBE_FILLERS = 1100; // other messages, read between two timed reads: more than a bounded cache keeps
const PROBE_ROUNDS = 15; // timed reads of each side; the minimum is kept
const PROBE_LIMIT = 3; // a read of the long message may cost this many reads of its reference
const PROBE_ATTEMPTS = 3; // a ratio above the limit is measured again: fails only if each is above

const pick = (items) => items[Math.floor(Math.random() * items.length)];
const WORDS = [' the', ' stream', 'ing', ',', ' café', ' naïve', '.', '\n', ' tok', 'ens', ' ü', ' 42'];
/** Ids of the corpus's shapes, so the probe's messages look like any others. */
const ID_SHAPES = [
  () => `m${Math.floor(Math.random() * 1e4)}`, () => `msg-${Math.floor(Math.random() * 1e6)}`,
  () => `chatcmpl-${Math.random().toString(36).slice(2)}`, randomUUID,
  () => `call_${Math.random().toString(36).slice(2, 10)}`];

/**
 * CACHE-FINAL: after final, a read of a message of PROBE_PARTS parts must cost about what a
 * read of the same text in 2 parts costs (a class that joins its parts on every read does
 * not). Ordinary traffic between the timed reads (reads of other messages, a new message
 * finalized) defeats a cache of the last read or emptied by a final. {outcome, message}.
 */
async function probeCacheFinal(factory) {
  const assembler = factory();
  const ids = new Set();
  const freshId = () => {
    let id;
    do id = pick(ID_SHAPES)(); while (ids.has(id));
    return ids.add(id) && id;
  };
  const message = (parts) => ({ id: freshId(), parts, text: parts.join('') });
  const long = message(Array.from({ length: PROBE_PARTS }, () => pick(WORDS)));
  const half = long.text.length >> 1;
  const reference = message([long.text.slice(0, half), long.text.slice(half)]);
  const filler = () => pick(WORDS).repeat(1 + Math.floor(Math.random() * 400)); // about 2 million characters in all
  const fillers = Array.from({ length: PROBE_FILLERS },
    () => message(Array.from({ length: 1 + Math.floor(Math.random() * 3) }, filler)));
  const messages = [long, reference, ...fillers];
  // Streamed interleaved: each message's events keep their order, the messages mix.
  const events = messages.flatMap((m) => {
    const keys = m.parts.map(() => Math.random()).sort((a, b) => a - b);
    return m.parts.map((delta, i) => ({ key: keys[i], event: { id: m.id, delta, final: i === m.parts.length - 1 } }));
  }).sort((a, b) => a.key - b.key);
  try {
    for (const { event } of events) await assembler.apply(event);
    for (const m of messages) {
      const text = await assembler.get(m.id);
      if ((text instanceof String ? text.valueOf() : text) !== m.text) {
        return { outcome: 'skipped',
          message: `not measured: get(${JSON.stringify(m.id)}) returned a wrong text (the cases say what is wrong)` };
      }
    }
  } catch (error) {
    return { outcome: 'skipped',
      message: `not measured: the class raised ${errorKind(error)}: ${error instanceof Error ? error.message : error}` };
  }
  const timed = async (id) => {
    const start = process.hrtime.bigint();
    const answer = assembler.get(id);
    if (isThenable(answer)) await answer;
    return Number(process.hrtime.bigint() - start);
  };
  let figures;
  for (let attempt = 1; attempt <= PROBE_ATTEMPTS; attempt++) {
    let [longBest, referenceBest] = [Infinity, Infinity];
    for (let round = 0; round < PROBE_ROUNDS; round++) {
      for (const filler of [...fillers].sort(() => Math.random() - 0.5)) await assembler.get(filler.id);
      await assembler.apply({ id: freshId(), delta: pick(WORDS), final: true });
      const longFirst = Math.random() < 0.5;
      for (const side of longFirst ? [long, reference] : [reference, long]) {
        const took = await timed(side.id);
        if (side === long) longBest = Math.min(longBest, took);
        else referenceBest = Math.min(referenceBest, took);
      }
    }
    const ratio = longBest / Math.max(referenceBest, 1);
    figures = `a read after final of ${PROBE_PARTS} parts, ${long.text.length} characters, costs ${ratio.toFixed(1)}x `
      + `a read of the same text in 2 parts (${(longBest / 1000).toFixed(2)} µs against `
      + `${(referenceBest / 1000).toFixed(2)} µs; limit ${PROBE_LIMIT})`;
    if (ratio <= PROBE_LIMIT) return { outcome: 'passed', message: figures };
  }
  return { outcome: 'failed',
    message: `CACHE-FINAL: ${figures}, in ${PROBE_ATTEMPTS} measurements of ${PROBE_ATTEMPTS}: `
      + 'join the parts once, at final, and keep the text' };
}

/**
 * Register one node:test test per exported case, named by its id, and the cost check
 * cost.cache-final. `corpus` is the export (default: $TOKASM_EXPORT); `profiles` adds optional
 * ones (incremental, strict, surrogates); `xfail` lists ids or globs expected to fail: such a case that
 * passes fails, and so does a line that matches no case (the list cannot go stale).
 *
 * A run in which not every test finished fails: if the assembler ends the process (an early
 * process.exit(0), a crash) or resets process.exitCode, the process exits with code 1 and
 * stderr names the case that was running and the cases that never finished.
 */
function suite(target, { corpus = process.env.TOKASM_EXPORT, profiles = [], xfail = [] } = {}) {
  const { after, test } = require('node:test');
  if (!corpus) throw new Error('no export: pass {corpus: PATH} or set TOKASM_EXPORT (tokasm export PATH)');
  const factory = factoryOf(target);
  const unknown = profiles.filter((name) => !PROFILES.includes(name)).map((name) => `'${name}'`);
  if (unknown.length > 0) throw new Error(`unknown profile ${unknown.join(', ')} (choose from ${PROFILES.join(', ')})`);
  const selected = [...DEFAULT_PROFILES, ...profiles];
  const cases = loadExport(corpus);
  const expected = expectedFailures(xfail, cases.map((kase) => kase.id));
  const run = { finished: false, failed: 0, running: 'suite()', unfinished: new Set() };
  const { exit } = process; // kept: an assembler that replaces process.exit cannot stop the check below
  // Runs before the 'exit' listeners an assembler adds later, and ends the process with 1 there.
  process.prependListener('exit', (code) => {
    const never = [...run.unfinished];
    // The hook ran, or each test that was to run did (an older node:test may not run the hook).
    const finished = run.finished || (never.length === 0 && run.running === null);
    if (finished ? run.failed === 0 : code !== 0 && never.length === 0) return; // or an error in suite()
    if (!finished) {
      process.stderr.write(`tokasm: the process exited (code ${code}) `
        + `${run.running ? `during '${run.running}'` : 'between tests'} before every test finished: `
        + `${never.length} never did (${never.slice(0, 5).join(', ')}${never.length > 5 ? ', ...' : ''}). `
        + 'An assembler must not end the process; the run fails\n');
    }
    exit.call(process, 1); // failed tests: whatever an assembler set process.exitCode to
  });
  /** A test named `id`: `body` gives {outcome, message} (or a Promise of it), judged here. */
  const check = (id, title, options, body) => {
    if (!options.skip) run.unfinished.add(id);
    test(id, options, async (t) => {
      run.running = id;
      try {
        const { outcome, message } = await body();
        const listed = expected.listed(id);
        if (outcome === 'skipped') return t.skip(message);
        if (outcome === 'passed' && message) t.diagnostic(message);
        if (listed && outcome !== 'passed') return t.todo(`expected failure: ${message}`);
        if (listed) throw new Error(`${id} is listed as an expected failure but passed`);
        if (outcome !== 'passed') throw new Error(`${title} [${outcome}]\n${message}`);
      } catch (error) {
        run.failed++;
        throw error;
      } finally {
        run.running = null;
        run.unfinished.delete(id);
      }
    });
  };
  if (expected.stale.length > 0) {
    test('xfail', () => {
      run.failed++;
      throw new Error(expected.stale.map((line) => `'${line}' matches no case of the export; remove the line`).join('\n'));
    });
  }
  const probe = factory();
  // A profile asked for that the class cannot run fails, as tokasm check --profile does: not a skip.
  const unrunnable = profiles.find((name) => cases.some((kase) => kase.profile === name && skipReason(kase, selected, probe)));
  if (unrunnable !== undefined) {
    throw new Error(`profile '${unrunnable}' was asked for, but the class has no readSince, so it cannot run those cases; `
      + 'leave the profile out to check the class without them');
  }
  for (const kase of cases) {
    const skip = skipReason(kase, selected, probe) ?? false;
    check(kase.id, `${kase.id} - ${kase.description}`, { skip }, () => runCase(factory, kase));
  }
  check(PROBE_ID, `${PROBE_ID} - a read after final does not join the parts again`, {},
    () => probeCacheFinal(factory));
  after(() => { run.finished = true; }); // registered last: an error above exits with 1, not 7
  run.running = null;
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
 * assemblers from `target` (a class or factory), until end of input; the Promise it returns
 * settles then. Blocking reads and writes, one request at a time, in order: an answer that is
 * a Promise (an async assembler) is awaited before the next request is read. Inside
 * `node --test` (a testee file in a test/ folder) it returns at once instead of waiting.
 */
async function serve(target, { name = `tokasm-node (node ${process.version})` } = {}) {
  if (process.env.NODE_TEST_CONTEXT) {
    process.stderr.write('tokasm serve(): not serving inside node --test; this file is a protocol testee '
      + '(tokasm check --cmd "node FILE"), best kept outside test/\n');
    return;
  }
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
  /** A response, or for a call of the assembler {answer}: its value, or a Promise of it. */
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
        return { answer: assembler(request).readSince(field(request, 'id', 'string'), offset) };
      }
      case 'apply':
        if (!Object.hasOwn(request, 'event')) throw new ValueError("apply needs 'event'");
        return { answer: assembler(request).apply(request.event) };
      case 'get':
        return { answer: assembler(request).get(field(request, 'id', 'string')) };
      default:
        throw new ValueError(`unknown op ${JSON.stringify(request.op)}`);
    }
  };
  const refusal = (error) => ({ ok: false, error: String(error instanceof Error ? error.message : error),
    kind: errorKind(error) });
  // Text or null is a result; anything else (undefined, a number) fails the step as a wrong value.
  const result = (answer) => (isText(answer) ? { ok: true, result: answer }
    : { ok: false, error: show(answer), kind: 'ReturnedNotText' });
  let awaiting = null; // the request whose answer is a Promise not settled yet
  process.on('beforeExit', () => awaiting && process.stderr.write(
    `tokasm serve(): the Promise answering ${awaiting.slice(0, 200)} never settled: it waits on nothing\n`));
  const respond = async (line) => {
    try {
      const response = handle(JSON.parse(line));
      if (!('answer' in response)) return response;
      if (!isThenable(response.answer)) return result(response.answer);
      awaiting = line;
      return result(await response.answer);
    } catch (error) {
      return refusal(error);
    } finally {
      awaiting = null;
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
      if (line.trim() !== '') writeAll(`${JSON.stringify(await respond(line))}\n`);
    }
    scanned = pending.length;
  }
}

module.exports = {
  PROTOCOL_VERSION, ValueError, codePointIndex, errorKind, loadExport, loadTarget, runCase, serve, skipReason, suite,
};
