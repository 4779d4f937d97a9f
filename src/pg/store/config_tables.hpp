// pgsem's configuration tables (pgsem.declarations, pgsem.quotas): finding them and their
// columns, the copy of one that each backend keeps, and writing them through SPI as the table's
// owner, with search_path pinned and in a security-restricted context: the callers are ordinary
// roles, whose right to make the change was checked above this floor, and who hold no privilege on
// the table. Every name in the SQL run is schema-qualified anyway.
#pragma once

#include "pg/base/postgres_api.hpp"

namespace pgsem {

// The OID of table pgsem.`table`, or InvalidOid (SQL objects older than the table).
Oid pgsem_table_relid(const char *table);

// The OID of table pgsem.`table`; 55000 when it does not exist (`needs` says what does: "pgsem
// 1.2").
Oid require_pgsem_table(const char *table, const char *needs);

// The number of column `name` of pgsem.`table` (described by `desc`): by name, since a reader
// that trusts positions breaks silently when a later version adds a column. 55000 if missing.
AttrNumber config_column(TupleDesc desc, const char *table, const char *name);

// Reads every row of table `relid` as the latest snapshot sees it -- not the caller's, which may
// be older than a change committed since -- under AccessShareLock for the read alone: `columns`
// once with the table's descriptor, then `row` for each row, with `arg`.
void config_scan(Oid relid, void (*columns)(TupleDesc desc, void *arg),
                 void (*row)(HeapTuple tuple, TupleDesc desc, void *arg), void *arg);

// A backend's copy of one configuration table, read by every claim: loaded whole (an operator
// writes a handful of rows, not one per claim) in a memory context of its own under
// CacheMemoryContext, and dropped when the relcache says the table changed (its triggers send
// that invalidation when a change commits).
struct ConfigCopy {
    const char *table;
    const char *context_name;
    // Fills the owner's copy from table `relid` (config_scan), allocating in `context`, which
    // was emptied first.
    void (*load)(Oid relid, MemoryContext context);
    bool valid;
    Oid relid;
    MemoryContext context;
};
// The next row of a copy's array of rows (in the copy's context), doubling `*room` when full.
template <typename Row>
Row *next_copy_row(Row **rows, int *count, int *room) {
    if (*count == *room) {
        *room *= 2;
        *rows = static_cast<Row *>(repalloc(*rows, sizeof(Row) * static_cast<std::size_t>(*room)));
    }
    return &(*rows)[(*count)++];
}
// Registers the relcache callback that drops `copy`. Called once, from _PG_init.
void config_copy_install(ConfigCopy *copy);
// Processes pending invalidations -- a change committed since this transaction last took a lock
// is queued there -- and loads the copy again if its table changed. False without the table
// (SQL objects older than 1.2).
bool config_copy_current(ConfigCopy *copy);

struct OwnerWrite {
    Oid saved_user;
    int saved_context;
    int guc_level;
};
// 55000 when the table does not exist (`needs` says what does: "pgsem 1.2").
OwnerWrite begin_owner_write(const char *table, const char *needs);
// An error before it leaves the user, the setting and SPI to the transaction's abort, which
// restores them.
void end_owner_write(const OwnerWrite &write);
// Runs `sql` (between the two above); returns the rows it processed.
int owner_write_run(const char *sql, int nargs, Oid *types, Datum *values, const char *nulls,
                    int expected);
// Runs a read as owner_write_run does, with the latest snapshot rather than the transaction's:
// at repeatable read too, it sees what committed after the transaction began. Returns the rows.
int owner_read_latest(const char *sql, int nargs, Oid *types, Datum *values);

}  // namespace pgsem
