// Writes to pgsem's configuration tables (pgsem.declarations, pgsem.quotas) through SPI as the
// table's owner, with search_path pinned and in a security-restricted context: the callers are
// ordinary roles, whose right to make the change was checked above this floor, and who hold no
// privilege on the table. Every name in the SQL run is schema-qualified anyway.
#pragma once

#include "pg/base/postgres_api.hpp"

namespace pgsem {

// The OID of table pgsem.`table`, or InvalidOid (SQL objects older than the table).
Oid pgsem_table_relid(const char *table);

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

}  // namespace pgsem
