// pgsem from Node.js: counting semaphores held in PostgreSQL, with the server doing the waiting.
//
// One file, no dependencies of its own: copy it next to your code. Pass it a node-postgres
// (`pg`) Pool or Client connected to a database where `CREATE EXTENSION pgsem` ran.
//
//   const { withSemaphore, NoSlot } = require('./pgsem');
//   await withSemaphore(pool, 'payments-api', 4, { lease: '30 seconds', wait: '5 seconds' },
//                       async (claim) => { await callPaymentsApi(); });
//
// Intervals are PostgreSQL interval strings ('5 seconds', '250 ms').
'use strict';

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

async function one(db, sql, params) {
  const result = await db.query(sql, params);
  return result.rows.length ? Object.values(result.rows[0])[0] : null;
}

// Holds one of the n slots of semaphore `name` while `fn(claim)` runs, by a lease. Waits in
// line up to `wait` (first come, first served, in the server) and throws NoSlot if no slot came.
// Releases the slot when fn settles, also when it throws. With `renewEvery` (milliseconds) the
// lease is renewed that often while fn runs; if it ran out anyway, `claim.lost` turns true and
// LeaseLost is thrown at the end. `db` may be a Pool: a lease is not tied to a connection.
// Returns what fn returned. claim.id is a fencing token (ids grow in grant order); node-postgres
// gives bigints as strings, so compare them as BigInt(claim.id).
async function withSemaphore(db, name, n, options, fn) {
  const { lease = '90 seconds', wait = '0', renewEvery = null } = options || {};
  const id = await one(db, 'SELECT sem_claim($1, $2, $3::interval, $4::interval)', [name, n, lease, wait]);
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
