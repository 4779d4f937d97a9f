#include "core/name_patterns.hpp"
#include "pg/base/boundary.hpp"
#include "pg/store/config_tables.hpp"
#include "pg/store/pauses.hpp"

namespace pgsem {

static_assert(std::is_trivially_destructible_v<core::PatternEntry>);
static_assert(std::is_trivially_destructible_v<std::string_view>);

namespace {

constexpr const char *kTable = "pauses";

struct Pause {
    std::string_view name;  // in the copy's context
    TimestampTz until;
    Oid paused_by;
};

// The copy's rows, and their names sorted for the lookup a claim makes (core/name_patterns.hpp,
// exact names only): every claim looks its name up, and sem_pause callers, not the operator
// alone, write this table.
struct Pauses {
    Pause *pauses;
    core::PatternEntry *names;
    int count;
    int room;
};
Pauses copy = {};

void load_copy(Oid relid, MemoryContext context);
ConfigCopy cache = {kTable, "pgsem pauses", load_copy, false, InvalidOid, nullptr};

struct PauseColumns {
    AttrNumber name, until, paused_by;
    MemoryContext context;
};

void pause_columns(TupleDesc desc, void *arg) {
    auto *cols = static_cast<PauseColumns *>(arg);
    cols->name = config_column(desc, kTable, "name");
    cols->until = config_column(desc, kTable, "until");
    cols->paused_by = config_column(desc, kTable, "paused_by");
}

void pause_row(HeapTuple tuple, TupleDesc desc, void *arg) {
    auto *cols = static_cast<PauseColumns *>(arg);
    Pause &p = *next_copy_row(&copy.pauses, &copy.count, &copy.room);
    bool isnull = false;
    const text *name = DatumGetTextPP(heap_getattr(tuple, cols->name, desc, &isnull));
    const std::size_t length = VARSIZE_ANY_EXHDR(name);
    char *bytes = static_cast<char *>(MemoryContextAlloc(cols->context, length + 1));
    memcpy(bytes, VARDATA_ANY(name), length);
    p.name = std::string_view(bytes, length);
    p.until = DatumGetTimestampTz(heap_getattr(tuple, cols->until, desc, &isnull));
    p.paused_by = DatumGetObjectId(heap_getattr(tuple, cols->paused_by, desc, &isnull));
}

void load_copy(Oid relid, MemoryContext context) {
    copy.count = 0;
    copy.room = 8;
    copy.pauses = static_cast<Pause *>(MemoryContextAlloc(context, sizeof(Pause) * copy.room));
    PauseColumns cols{InvalidAttrNumber, InvalidAttrNumber, InvalidAttrNumber, context};
    config_scan(relid, pause_columns, pause_row, &cols);
    copy.names = static_cast<core::PatternEntry *>(
        MemoryContextAlloc(context, sizeof(core::PatternEntry) * (copy.count + 1)));
    for (int i = 0; i < copy.count; ++i) copy.names[i] = core::PatternEntry{copy.pauses[i].name, i};
    PGSEM_NOTHROW(core::sort_patterns(copy.names, static_cast<std::size_t>(copy.count)));
}

}  // namespace

void install_pauses_cache_invalidation() {
    config_copy_install(&cache);
}

TimestampTz pause_until(const text *name) {
    if (!config_copy_current(&cache) || copy.count == 0) return 0;
    const std::string_view key(VARDATA_ANY(name), VARSIZE_ANY_EXHDR(name));
    const int32 found = PGSEM_NOTHROW(
        core::lookup(copy.names, static_cast<std::size_t>(copy.count), nullptr, 0, key));
    if (found < 0) return 0;
    const TimestampTz until = copy.pauses[found].until;
    return until > GetCurrentTimestamp() ? until : 0;
}

int pauses_in_force(TimestampTz now) {
    if (!config_copy_current(&cache)) return 0;
    int count = 0;
    for (int i = 0; i < copy.count; ++i)
        if (copy.pauses[i].until > now) ++count;
    return count;
}

int pauses_in_force_by(Oid role, TimestampTz now) {
    if (!config_copy_current(&cache)) return 0;
    int count = 0;
    for (int i = 0; i < copy.count; ++i)
        if (copy.pauses[i].until > now && copy.pauses[i].paused_by == role) ++count;
    return count;
}

TimestampTz pauses_set(const text *name, TimestampTz until, bool clear) {
    const Oid caller = GetUserId();  // before the write runs as the table's owner
    const OwnerWrite write = begin_owner_write(kTable, "pgsem 1.2");
    // Pauses that have passed go first: nothing reads them, and callers, not only operators,
    // write this table. Rows another open transaction holds stay for a later call: a pause
    // being set elsewhere must not make this one wait.
    (void)owner_write_run(
        "DELETE FROM pgsem.pauses WHERE name OPERATOR(pg_catalog.=) ANY (ARRAY("
        "    SELECT name FROM pgsem.pauses WHERE until OPERATOR(pg_catalog.<=) pg_catalog.now()"
        "    FOR UPDATE SKIP LOCKED))",
        0, nullptr, nullptr, nullptr, SPI_OK_DELETE);
    Oid types[] = {TEXTOID, TIMESTAMPTZOID, OIDOID};
    char nulls[] = {' ', ' ', ' ', '\0'};
    Datum values[] = {PointerGetDatum(name), TimestampTzGetDatum(until), ObjectIdGetDatum(caller)};
    TimestampTz in_force = 0;
    if (clear) {
        (void)owner_write_run("DELETE FROM pgsem.pauses WHERE name OPERATOR(pg_catalog.=) $1", 1,
                              types, values, nulls, SPI_OK_DELETE);
    } else {
        // A pause only moves later: callers that each got a Retry-After leave the latest.
        (void)owner_write_run(
            "INSERT INTO pgsem.pauses AS p (name, until, paused_by) "
            "VALUES ($1, $2, $3::pg_catalog.regrole) "
            "ON CONFLICT (name) DO UPDATE SET until = EXCLUDED.until, "
            "    paused_by = EXCLUDED.paused_by, paused_at = pg_catalog.now() "
            "WHERE p.until OPERATOR(pg_catalog.<) EXCLUDED.until",
            3, types, values, nulls, SPI_OK_INSERT);
        // The row is the caller's now, or a later pause's: read it back.
        const int rc = SPI_execute_with_args(
            "SELECT until FROM pgsem.pauses WHERE name OPERATOR(pg_catalog.=) $1", 1, types, values,
            nulls, false, 1);
        if (rc == SPI_OK_SELECT && SPI_processed == 1) {
            bool isnull = false;
            in_force = DatumGetTimestampTz(
                SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
        }
    }
    end_owner_write(write);
    return in_force;
}

}  // namespace pgsem
