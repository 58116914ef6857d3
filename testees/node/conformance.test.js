// The tokasm corpus as node:test tests, in process, with no Python at test time:
//   tokasm export corpus/    # once, or use an export someone gave you
//   TOKASM_EXPORT=corpus TOKASM_ASSEMBLER=./src/my-assembler.js:MyAssembler \
//     node --test testees/node/conformance.test.js
// TOKASM_ASSEMBLER is MODULE[:EXPORT], a class or factory (default: the reference
// TokenAssembler); TOKASM_PROFILES adds profiles (strict,surrogates); TOKASM_XFAIL names
// an expected-failure file as for tokasm check --xfail (ids, or globs with *, ? and [...]).
'use strict';

const fs = require('node:fs');
const { loadTarget, suite } = require('./tokasm.js');

const target = loadTarget(process.env.TOKASM_ASSEMBLER ?? `${__dirname}/token-assembler.js:TokenAssembler`);
const profiles = (process.env.TOKASM_PROFILES ?? '').split(',').filter((name) => name !== '');
const xfail = process.env.TOKASM_XFAIL
  ? fs.readFileSync(process.env.TOKASM_XFAIL, 'utf8').replace(/^\uFEFF/, '').split('\n')
    .map((line) => line.replace(/#.*/, '').trim()).filter((line) => line !== '')
  : [];

suite(target, { profiles, xfail });
