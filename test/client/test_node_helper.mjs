// clients/node/pgsem.js against a running server, with node-postgres from clients/node (npm ci):
// clients that wait their turn, an error inside the callback, a lease that runs out, background
// renewal, transaction and session claims, and a Pool for leases.
// Connects with the PG* environment variables. Prints one line per case and ends with
//     client-node-helper: P passed, F failed
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { startLossyProxy } from './lossy_proxy.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, '..', '..', 'clients', 'node', 'package.json'));
const pg = require('pg');
const pgsem = require('./pgsem.js');

let passed = 0;
let failed = 0;
function check(ok, what) {
  if (ok) passed += 1; else failed += 1;
  console.log(`${ok ? 'ok' : 'FAILED'} ${passed + failed} - ${what}`);
}
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function connect() {
  const client = new pg.Client();
  await client.connect();
  return client;
}

async function value(db, sql, params = []) {
  const result = await db.query(sql, params);
  return result.rows.length ? Object.values(result.rows[0])[0] : null;
}

const holders = (db, name) =>
  value(db, 'SELECT count(*)::int FROM sem_holders WHERE name = $1', [name]);

async function main() {
  const observer = await connect();
  const pool = new pg.Pool({ max: 20 });

  // A lease through a Pool: held inside the callback, released at its end, result passed on.
  const result = await pgsem.withSemaphore(pool, 'node-basic', 2, { lease: '1 minute' }, async (claim) => {
    check(await holders(observer, 'node-basic') === 1, 'withSemaphore(): the lease holds a slot inside the callback');
    check(BigInt(claim.id) > 0n, `the claim has an id (${claim.id})`);
    return 'done';
  });
  check(result === 'done', "the callback's result is returned");
  check(await holders(observer, 'node-basic') === 0, "and the callback's end releases the lease");

  // 12 concurrent callers, n = 3, wait 30 s: all get in, never more than 3 at once.
  let inside = 0;
  let most = 0;
  let serverMost = 0;
  const started = Date.now();
  const outcomes = await Promise.allSettled(Array.from({ length: 12 }, () =>
    pgsem.withSemaphore(pool, 'node-threads', 3, { lease: '1 minute', wait: '30 seconds' }, async () => {
      inside += 1;
      most = Math.max(most, inside);
      serverMost = Math.max(serverMost, await holders(observer, 'node-threads'));
      await sleep(50);
      inside -= 1;
    })));
  const rejected = outcomes.filter((o) => o.status === 'rejected');
  check(rejected.length === 0, `12 callers, n = 3, wait 30 s: every caller got in ${rejected.map((o) => o.reason)}`);
  check(most === 3 && serverMost <= 3, `never more than 3 inside at once (client saw ${most}, server ${serverMost})`);
  check(Date.now() - started >= 180, `they took turns: ${Date.now() - started} ms for 4 rounds of 50 ms`);

  // A full semaphore: NoSlot after the wait.
  const blocker = await connect();
  const blocking = await value(blocker, "SELECT sem_claim('node-full', 1, '1 minute')");
  const t0 = Date.now();
  try {
    await pgsem.withSemaphore(pool, 'node-full', 1, { wait: '300 ms' }, async () => {});
    check(false, 'a full semaphore throws NoSlot');
  } catch (error) {
    check(error instanceof pgsem.NoSlot && Date.now() - t0 >= 250,
      `a full semaphore throws NoSlot after the wait (${Date.now() - t0} ms): ${error.message}`);
  }
  await value(blocker, 'SELECT sem_release($1)', [blocking]);

  // An error inside the callback propagates; the slot is released anyway (try/finally).
  try {
    await pgsem.withSemaphore(pool, 'node-throw', 1, {}, async () => { throw new Error('inside'); });
    check(false, "the callback's error propagates");
  } catch (error) {
    check(error.message === 'inside', "the callback's error propagates");
  }
  check(await holders(observer, 'node-throw') === 0, 'and the slot is released anyway');

  // A lease that runs out: another client takes the slot; LeaseLost at the end.
  let other = null;
  try {
    await pgsem.withSemaphore(pool, 'node-lost', 1, { lease: '200 ms' }, async () => {
      await sleep(400);
      other = await value(blocker, "SELECT sem_claim('node-lost', 1, '1 minute')");
      check(other !== null, 'once the lease ran out, another client took the slot');
    });
    check(false, 'a lost lease throws LeaseLost');
  } catch (error) {
    check(error instanceof pgsem.LeaseLost && error.claim.lost, `a lost lease throws LeaseLost: ${error.message}`);
  }
  if (other !== null) await value(blocker, 'SELECT sem_release($1)', [other]);

  // Renewal keeps a 300 ms lease through 800 ms.
  let stolen = false;
  await pgsem.withSemaphore(pool, 'node-renewed', 1, { lease: '300 ms', renewEvery: 100 }, async () => {
    for (let i = 0; i < 8; i += 1) {
      await sleep(100);
      stolen = stolen || (await value(blocker, "SELECT sem_claim('node-renewed', 1, '1 minute')")) !== null;
    }
  });
  check(!stolen, 'renewEvery: 100 keeps a 300 ms lease for 800 ms: nobody else got the slot');
  check(await holders(observer, 'node-renewed') === 0, 'and the renewed lease is released');

  // A transaction claim: freed by COMMIT.
  const client = await connect();
  await client.query('BEGIN');
  const slot = await pgsem.claimForTransaction(client, 'node-xact', 2);
  check(slot === 0 && await holders(observer, 'node-xact') === 1, 'claimForTransaction() holds slot 0 until the transaction ends');
  await client.query('COMMIT');
  check(await holders(observer, 'node-xact') === 0, 'and COMMIT frees it');

  // A session claim: held across transactions, released at the callback's end.
  await pgsem.withSessionSemaphore(client, 'node-session', 1, {}, async (s) => {
    await client.query('BEGIN');
    await client.query('COMMIT');
    check(s === 0 && await holders(observer, 'node-session') === 1, 'withSessionSemaphore() holds its slot across a transaction');
  });
  check(await holders(observer, 'node-session') === 0, 'and releases it at the end');

  // A claim whose answer is lost with its connection (a proxy drops it once the claim has
  // committed): through a Pool the helper asks again with the same request key and gets the
  // claim the lost attempt made; one slot is held, and the callback's end releases it.
  const proxy = await startLossyProxy('sem_claim');
  const lossyPool = new pg.Pool({ host: '127.0.0.1', port: proxy.port, max: 2 });
  lossyPool.on('error', () => {});  // the dropped connection, reported by the idle pool
  await pgsem.withSemaphore(lossyPool, 'node-retry', 2, { lease: '1 minute' }, async (claim) => {
    check(proxy.lost === 1, 'a lost answer: the helper asked again');
    check(await holders(observer, 'node-retry') === 1,
      "and got the lost attempt's claim: one slot held, not two");
    check(await value(observer, 'SELECT count(DISTINCT id)::int FROM sem_history WHERE name = $1',
      ['node-retry']) === 1, 'one claim was ever made');
  });
  check(await holders(observer, 'node-retry') === 0, "the callback's end released it");
  // With retries: 0 the lost answer is the caller's error, as before.
  const proxy2 = await startLossyProxy('sem_claim');
  const lossyPool2 = new pg.Pool({ host: '127.0.0.1', port: proxy2.port, max: 2 });
  lossyPool2.on('error', () => {});
  try {
    await pgsem.withSemaphore(lossyPool2, 'node-noretry', 2, { lease: '1 minute', retries: 0 }, async () => {});
    check(false, 'with retries: 0 a lost answer throws');
  } catch (error) {
    check(!(error instanceof pgsem.PgsemError), `with retries: 0 the driver's error comes through (${error.message})`);
  }
  await value(observer, 'SELECT count(sem_release(id)) FROM sem_holders WHERE name = $1', ['node-noretry']);
  await lossyPool.end();
  await lossyPool2.end();
  proxy.server.close();
  proxy2.server.close();

  await client.end();
  await blocker.end();
  await observer.end();
  await pool.end();
}

try {
  await main();
} catch (error) {
  check(false, `the cases ran to the end: ${error.stack}`);
}
console.log(`client-node-helper: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
