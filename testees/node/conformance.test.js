// The tokasm corpus as node:test tests, in process, with no Python at test time:
//   tokasm export corpus/    # once, or use an export someone gave you
//   TOKASM_EXPORT=corpus TOKASM_ASSEMBLER=./src/my-assembler.js:MyAssembler \
//     node --test testees/node/conformance.test.js
// TOKASM_ASSEMBLER is MODULE[:EXPORT], a class or factory (default: the reference
// TokenAssembler); TOKASM_PROFILES adds profiles (incremental,strict,surrogates); TOKASM_XFAIL names
// an expected-failure file as for tokasm check --xfail (ids, or globs with *, ? and [...]).
'use strict';

const fs = require('node:fs');
const { loadTarget, suite } = require('./tokasm.js');

const target = loadTarget(process.env.TOKASM_ASSEMBLER ?? `${__dirname}/token-assembler.js:TokenAssembler`);
const profiles = (process.env.TOKASM_PROFILES ?? '').split(',').filter((name) => name !== '');
function readXfail(file) {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (error) { // a folder's EISDIR names no path
    throw new Error(`TOKASM_XFAIL=${file}: cannot read it (${error.code ?? error.message})`);
  }
}
const xfail = process.env.TOKASM_XFAIL
  ? readXfail(process.env.TOKASM_XFAIL).replace(/^\uFEFF/, '').split('\n')
    .map((line) => line.replace(/#.*/, '').trim()).filter((line) => line !== '')
  : [];

suite(target, { profiles, xfail });
