// pgsem from JavaScript (node, no packages): the README's client-side FNV-1a 64 agrees with the
// server's fnv1a_64(text).
//
//   node test/client/test_fnv1a.mjs PAIRS.json
//
// PAIRS.json is a JSON array of {"key": text, "expected": fnv1a_64(key) as a decimal string},
// made by test/suites/client.sh from the server. Prints one line per case and ends with the
// machine-readable line "client-node: P passed, F failed"; exits 0 only when all passed.
import { readFileSync } from 'node:fs';

// --- The README's client-side function, read from the README itself ------------------------------

// The one js block of the README that defines fnv1a64 and is marked as tested by this file: the
// code a user copies, so that the test cannot drift from it. readme-pin 84f79b11d65db7eb
// (test/lib/readme_blocks.py: change it only after checking that the cases below still test what
// the block says)
const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const blocks = [...readme.matchAll(/^<!-- tested by test\/client\/test_fnv1a\.mjs -->\n```js\n([\s\S]*?)^```/gm)]
  .map((m) => m[1])
  .filter((b) => b.includes('function fnv1a64'));
if (blocks.length !== 1) {
  console.log(`not ok - README.md has ${blocks.length} js blocks defining fnv1a64`);
  console.log('client-node: 0 passed, 1 failed');
  process.exit(1);
}
// eslint-disable-next-line no-new-func
const fnv1a64 = new Function(`${blocks[0]}\nreturn fnv1a64;`)();

// --- end of the README's function ------------------------------------------------------------------

let passed = 0;
let failed = 0;
let n = 0;

function report(ok, name, detail) {
  n += 1;
  if (ok) {
    passed += 1;
    console.log(`ok ${n} - ${name}`);
  } else {
    failed += 1;
    console.log(`not ok ${n} - ${name}${detail ? ': ' + detail : ''}`);
  }
}

function show(key) {
  const s = JSON.stringify(key);
  return s.length > 60 ? s.slice(0, 57) + '..."' : s;
}

// Self-checks that need no server.
const known = [
  ['223 345', '3755351481708176604'],   // the seed article's key
  ['', '-3750763034362895579'],         // offset basis 0xcbf29ce484222325, as a bigint
  ['a', '-5808556873153909620'],        // 0xaf63dc4c8601ec8c
  ['foobar', '-8821353812377114648'],   // 0x85944171f73967e8
];
for (const [key, want] of known) {
  const got = fnv1a64(key);
  report(got === want, `known value of ${show(key)}`, `got ${got}, want ${want}`);
}
report(typeof fnv1a64('x') === 'string', 'returns a string (a bigint SQL parameter)',
       `got ${typeof fnv1a64('x')}`);

// The server's values.
let pairs = [];
try {
  const file = process.argv[2];
  if (!file) throw new Error('usage: node test_fnv1a.mjs PAIRS.json');
  pairs = JSON.parse(readFileSync(file, 'utf8'));
  if (!Array.isArray(pairs) || pairs.length === 0) throw new Error('no pairs in ' + file);
  report(true, `read ${pairs.length} key/expected pairs`);
} catch (e) {
  report(false, 'read the key/expected pairs', e.message);
}

let negative = 0;
let nonAscii = 0;
for (const { key, expected } of pairs) {
  const got = fnv1a64(key);
  if (BigInt(expected) < 0n) negative += 1;
  if (/[^\x00-\x7f]/.test(key)) nonAscii += 1;
  report(got === String(expected), `fnv1a64(${show(key)}) = ${expected}`, `got ${got}`);
}
if (pairs.length > 0) {
  // The pairs must exercise what matters: hashes of 2^63 and more, and multi-byte characters.
  report(negative >= 20, `pairs include hashes >= 2^63 (${negative})`, 'too few');
  report(nonAscii >= 5, `pairs include non-ASCII keys (${nonAscii})`, 'too few');
}

console.log(`client-node: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
