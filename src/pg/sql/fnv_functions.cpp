// SQL glue for fnv1a_64(text) and fnv1a_64(bytea): the number a client passes to
// pg_advisory_xact_lock(bigint) to take the same lock as advisory_lock_text(key).
#include "pg/base/boundary.hpp"
#include "pg/store/locks.hpp"

// text: its bytes in the database encoding, which is what a client hashing UTF-8 sees in a UTF-8
// database.
PGSEM_SQL_FUNCTION(pgsem_fnv1a_64_text) {
    PG_RETURN_INT64(pgsem::varlena_key(PG_GETARG_TEXT_PP(0)));
}

PGSEM_SQL_FUNCTION(pgsem_fnv1a_64_bytea) {
    PG_RETURN_INT64(pgsem::varlena_key(PG_GETARG_BYTEA_PP(0)));
}
