// The tokasm corpus as node:test tests, in process, with no Python at test time:
//   tokasm export corpus/    # once, or use an export someone gave you
//   TOKASM_EXPORT=corpus TOKASM_ASSEMBLER=./src/my-assembler.js:MyAssembler \
//     node --test testees/node/conformance.test.js
// TOKASM_ASSEMBLER is a module path, then ':' and the exported class or factory (default:
// the module itself, or its default export). TOKASM_PROFILES adds profiles (strict,surrogates);
// TOKASM_XFAIL names an expected-failure file as for tokasm check --xfail.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { suite } = require('./tokasm.js');

const [file, exported] = (process.env.TOKASM_ASSEMBLER ?? `${__dirname}/token-assembler.js:TokenAssembler`)
  .split(/:(?=[A-Za-z_$][\w$]*$)/);
const loaded = require(path.resolve(file));
const target = exported ? loaded[exported] : (loaded.default ?? loaded);
const xfail = process.env.TOKASM_XFAIL
  ? fs.readFileSync(process.env.TOKASM_XFAIL, 'utf8').split('\n')
    .map((line) => line.replace(/#.*/, '').trim()).filter((line) => line !== '')
  : [];
const profiles = (process.env.TOKASM_PROFILES ?? '').split(',').filter((name) => name !== '');

suite(target, { profiles, xfail });
