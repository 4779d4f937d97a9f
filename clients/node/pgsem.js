// pgsem from Node.js: counting semaphores held in PostgreSQL, with the server doing the waiting.
//
// One file, no dependencies of its own: copy it next to your code. Pass it a node-postgres
// (`pg`) Pool or Client connected to a database where `CREATE EXTENSION pgsem` ran.
//
//   const { withSemaphore, NoSlot } = require('./pgsem');
//   await withSemaphore(pool, 'payments-api', 4, { lease: '30 seconds', wait: '5 seconds' },
//                       async (claim) => { await callPaymentsApi(); });
//
// Intervals are PostgreSQL interval strings ('5 seconds', '250 ms'). Needs pgsem 1.2 (ALTER
// EXTENSION pgsem UPDATE): withSemaphore claims with permits and a request key, which makes its
// own retries safe (see withSemaphore).
'use strict';

const { randomUUID } = require('node:crypto');

class PgsemError extends Error {}

// No slot of the semaphore came free within the wait.
class NoSlot extends PgsemError {
  constructor(name, n, wait) {
    super(`no slot of semaphore '${name}' (n = ${n}) came free within ${wait}`);
    Object.assign(this, { name, n, wait });
  }
}

// The lease ran out before the callback ended: for a while someone else may have held the slot
// too. Thrown when the callback ends (unless it threw an error of its own).
class LeaseLost extends PgsemError {
  constructor(claim) {
    super(`the lease of claim ${claim.id} of semaphore '${claim.name}' ran out before it was released`);
    this.claim = claim;
  }
}

// Whether `error` means the connection went away (the answer may have been lost), rather than an
// error the server reported: node-postgres' own connection errors carry no SQLSTATE; the server's
// "connection exception" class (08) and administrator shutdowns (57P01-57P03) end the session.
function connectionLost(error) {
  const code = error && error.code;
  return typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code) || code.startsWith('08') ||
    /^57P0[123]$/.test(code);
}

// A Pool hands out another connection for a retry; a Client that lost its connection cannot.
const isPool = (db) => typeof db.connect === 'function' && 'totalCount' in db;

async function one(db, sql, params) {
  const result = await db.query(sql, params);
  return result.rows.length ? Object.values(result.rows[0])[0] : null;
}

// Holds `permits` of the n slots of semaphore `name` (all or none) while `fn(claim)` runs, by a
// lease. Waits in line up to `wait` (first come, first served, in the server) and throws NoSlot
// if no slot came. The claim carries a request key (`requestKey`, or a random one): through a
// Pool, a claim whose connection drops before the answer arrives is asked again, up to `retries`
// times, with the same key, and if the lost attempt was granted the retry gets that claim, not a
// second one.
// Releases the slot when fn settles, also when it throws. With `renewEvery` (milliseconds) the
// lease is renewed that often while fn runs; if it ran out anyway, `claim.lost` turns true and
// LeaseLost is thrown at the end. `db` may be a Pool: a lease is not tied to a connection.
// Returns what fn returned. claim.id is a fencing token (ids grow in grant order); node-postgres
// gives bigints as strings, so compare them as BigInt(claim.id).
async function withSemaphore(db, name, n, options, fn) {
  const {
    lease = '90 seconds', wait = '0', renewEvery = null, permits = 1, requestKey = randomUUID(),
    retries = 2,
  } = options || {};
  let id;
  for (let left = isPool(db) ? retries : 0; ; left -= 1) {
    try {
      id = await one(db, 'SELECT sem_claim($1, $2, $3::interval, $4::interval, permits => $5, request_key => $6)',
                     [name, n, lease, wait, permits, requestKey]);
      break;
    } catch (error) {
      if (left <= 0 || !connectionLost(error)) throw error;
    }
  }
  if (id === null) throw new NoSlot(name, n, wait);
  const claim = { id, name, n, lease, lost: false };
  let renewal = Promise.resolve();
  let renewError = null;
  const timer = renewEvery === null ? null : setInterval(() => {
    renewal = renewal.then(async () => {
      if (claim.lost) return;
      if (!(await one(db, 'SELECT sem_renew($1, $2::interval)', [id, lease]))) claim.lost = true;
    }).catch((error) => { renewError = renewError || error; });
  }, renewEvery);
  let result;
  let failure = null;
  try {
    result = await fn(claim);
  } catch (error) {
    failure = { error };
  }
  if (timer !== null) clearInterval(timer);
  await renewal;
  let released;
  try {
    released = await one(db, 'SELECT sem_release($1)', [id]);
  } catch (error) {
    if (failure === null) throw error;
    released = true;  // fn's own error is the one to see; the lease runs out
  }
  if (failure !== null) throw failure.error;
  if (!released) claim.lost = true;
  if (claim.lost) throw new LeaseLost(claim);
  if (renewError) throw new PgsemError(`renewing claim ${id} failed: ${renewError.message}`);
  return result;
}

// Takes one of the n slots of `name` until the current transaction of `client` ends (COMMIT or
// ROLLBACK frees it). Call it between BEGIN and COMMIT on one Client (not a Pool). Returns the
// slot number; throws NoSlot when none came within `wait`.
async function claimForTransaction(client, name, n, { wait = '0' } = {}) {
  const slot = await one(client, 'SELECT sem_claim_xact($1, $2, $3::interval)', [name, n, wait]);
  if (slot === null) throw new NoSlot(name, n, wait);
  return slot;
}

// Holds one of the n slots of `name` while `fn(slot)` runs, as a session claim of `client` (a
// Client, not a Pool): no lease; released when fn settles, and by the end of the session
// however it ends. Not behind a transaction- or statement-pooling PgBouncer.
async function withSessionSemaphore(client, name, n, options, fn) {
  const { wait = '0' } = options || {};
  const slot = await one(client, 'SELECT sem_claim_session($1, $2, $3::interval)', [name, n, wait]);
  if (slot === null) throw new NoSlot(name, n, wait);
  try {
    return await fn(slot);
  } finally {
    await one(client, 'SELECT sem_release_session($1, $2)', [name, slot]);
  }
}

module.exports = { withSemaphore, claimForTransaction, withSessionSemaphore, NoSlot, LeaseLost, PgsemError };
