#include "core/name_patterns.hpp"
#include "pg/base/argument_checks.hpp"
#include "pg/base/boundary.hpp"
#include "pg/store/declarations.hpp"
#include "pg/store/config_tables.hpp"

namespace pgsem {

static_assert(std::is_trivially_destructible_v<core::PatternEntry>);

namespace {

constexpr const char *kTable = "declarations";

// The copy's rows and their index (config_tables.hpp: ConfigCopy keeps it current).
struct Declarations {
    Declaration *declarations;
    int count;
    core::PatternEntry *exact;
    int exact_count;
    core::PatternEntry *prefixes;
    int prefix_count;
};
Declarations copy = {};

void load_copy(Oid relid, MemoryContext context);
ConfigCopy cache = {kTable, "pgsem declarations", load_copy, false, InvalidOid, nullptr};

// Column numbers by name (config_tables.hpp says why).
struct Columns {
    AttrNumber pattern, n, peak_n, max_lease, max_wait, kind, per, burst, owner, public_claims,
        grantees;
};

Columns columns(TupleDesc desc) {
    return Columns{
        config_column(desc, kTable, "pattern"),  config_column(desc, kTable, "n"),
        config_column(desc, kTable, "peak_n"),   config_column(desc, kTable, "max_lease"),
        config_column(desc, kTable, "max_wait"), config_column(desc, kTable, "kind"),
        config_column(desc, kTable, "per"),      config_column(desc, kTable, "burst"),
        config_column(desc, kTable, "owner"),    config_column(desc, kTable, "public_claims"),
        config_column(desc, kTable, "grantees")};
}

// The table's words for the kinds (its CHECK allows these three).
constexpr const char *kKindWords[] = {"semaphore", "window", "bucket"};

DeclaredKind kind_from_text(const char *word) {
    for (int k = 0; k < 3; ++k)
        if (strcmp(word, kKindWords[k]) == 0) return static_cast<DeclaredKind>(k);
    ereport(ERROR, (errcode(ERRCODE_DATA_CORRUPTED),
                    errmsg("pgsem.declarations holds an unknown kind \"%s\"", word)));
    pg_unreachable();
}

// What the declaration keeps goes into `keep`; what reading it takes (a detoasted array, its
// elements) stays in the current context, which the caller empties.
void read_declaration(HeapTuple tuple, TupleDesc desc, const Columns &cols, MemoryContext keep,
                      Declaration *d) {
    bool isnull = false;
    d->pattern = MemoryContextStrdup(
        keep, TextDatumGetCString(heap_getattr(tuple, cols.pattern, desc, &isnull)));
    d->n = DatumGetInt32(heap_getattr(tuple, cols.n, desc, &isnull));
    Datum v = heap_getattr(tuple, cols.peak_n, desc, &isnull);
    d->peak_n = isnull ? 0 : DatumGetInt32(v);
    v = heap_getattr(tuple, cols.max_lease, desc, &isnull);
    d->max_lease = isnull ? 0 : interval_micros(DatumGetIntervalP(v));
    v = heap_getattr(tuple, cols.max_wait, desc, &isnull);
    d->max_wait = isnull ? -1 : interval_micros(DatumGetIntervalP(v));
    d->kind = kind_from_text(TextDatumGetCString(heap_getattr(tuple, cols.kind, desc, &isnull)));
    v = heap_getattr(tuple, cols.per, desc, &isnull);
    d->per = isnull ? 0 : interval_micros(DatumGetIntervalP(v));
    v = heap_getattr(tuple, cols.burst, desc, &isnull);
    d->burst = isnull ? 0 : DatumGetInt32(v);
    d->owner = DatumGetObjectId(heap_getattr(tuple, cols.owner, desc, &isnull));
    d->public_claims = DatumGetBool(heap_getattr(tuple, cols.public_claims, desc, &isnull));
    v = heap_getattr(tuple, cols.grantees, desc, &isnull);
    d->grantee_count = 0;
    d->grantees = nullptr;
    if (!isnull) {
        Datum *values = nullptr;
        bool *nulls = nullptr;
        int count = 0;
        deconstruct_array(DatumGetArrayTypeP(v), REGROLEOID, sizeof(Oid), true, TYPALIGN_INT,
                          &values, &nulls, &count);
        Oid *grantees = static_cast<Oid *>(MemoryContextAlloc(keep, sizeof(Oid) * Max(count, 1)));
        int kept = 0;
        for (int i = 0; i < count; ++i)
            if (!nulls[i]) grantees[kept++] = DatumGetObjectId(values[i]);
        d->grantees = grantees;
        d->grantee_count = kept;
    }
}

// Reading the rows: the copy keeps each declaration; what reading one takes (a detoasted array,
// its elements) goes in a context emptied per row.
struct Load {
    Columns cols;
    MemoryContext keep;
    MemoryContext scratch;
    MemoryContext row_context;
    int room;
};

void load_columns(TupleDesc desc, void *arg) {
    static_cast<Load *>(arg)->cols = columns(desc);
}

void load_row(HeapTuple tuple, TupleDesc desc, void *arg) {
    auto *load = static_cast<Load *>(arg);
    Declaration *d = next_copy_row(&copy.declarations, &copy.count, &load->room);
    MemoryContextSwitchTo(load->row_context);
    read_declaration(tuple, desc, load->cols, load->keep, d);
    MemoryContextSwitchTo(load->scratch);
    MemoryContextReset(load->row_context);
}

// Loads the copy: every row (config_tables.hpp: config_scan). The copy (in `context`) keeps
// the declarations and their index; the scan's own memory goes in a context deleted after it.
void load_copy(Oid relid, MemoryContext context) {
    copy.count = copy.exact_count = copy.prefix_count = 0;
    Load load{};
    load.keep = context;
    load.scratch = AllocSetContextCreate(CurrentMemoryContext, "pgsem declarations scan",
                                         ALLOCSET_DEFAULT_SIZES);
    load.row_context =
        AllocSetContextCreate(load.scratch, "pgsem declaration row", ALLOCSET_SMALL_SIZES);
    load.room = 8;
    const MemoryContext caller = MemoryContextSwitchTo(load.scratch);
    copy.declarations =
        static_cast<Declaration *>(MemoryContextAlloc(context, sizeof(Declaration) * load.room));
    config_scan(relid, load_columns, load_row, &load);
    MemoryContextSwitchTo(context);
    copy.exact =
        static_cast<core::PatternEntry *>(palloc(sizeof(core::PatternEntry) * (copy.count + 1)));
    copy.prefixes =
        static_cast<core::PatternEntry *>(palloc(sizeof(core::PatternEntry) * (copy.count + 1)));
    for (int i = 0; i < copy.count; ++i) {
        const std::string_view pattern(copy.declarations[i].pattern);
        const core::PatternEntry entry{PGSEM_NOTHROW(core::pattern_stem(pattern)), i};
        if (PGSEM_NOTHROW(core::is_prefix_pattern(pattern)))
            copy.prefixes[copy.prefix_count++] = entry;
        else
            copy.exact[copy.exact_count++] = entry;
    }
    PGSEM_NOTHROW(core::sort_patterns(copy.exact, static_cast<std::size_t>(copy.exact_count)));
    PGSEM_NOTHROW(core::sort_patterns(copy.prefixes, static_cast<std::size_t>(copy.prefix_count)));
    MemoryContextSwitchTo(caller);
    MemoryContextDelete(load.scratch);
}

}  // namespace

void install_declarations_cache_invalidation() {
    config_copy_install(&cache);
}

const Declaration *find_declaration(const text *name) {
    // A change committed since this transaction last took a lock: its invalidation is queued.
    if (!config_copy_current(&cache) || copy.count == 0) return nullptr;
    const std::string_view key(VARDATA_ANY(name), VARSIZE_ANY_EXHDR(name));
    const int32 found = PGSEM_NOTHROW(
        core::lookup(copy.exact, static_cast<std::size_t>(copy.exact_count), copy.prefixes,
                     static_cast<std::size_t>(copy.prefix_count), key));
    return found < 0 ? nullptr : &copy.declarations[found];
}

const Declaration *find_covering_prefix(const text *pattern) {
    if (!config_copy_current(&cache) || copy.prefix_count == 0) return nullptr;
    const std::string_view whole(VARDATA_ANY(pattern), VARSIZE_ANY_EXHDR(pattern));
    const std::string_view stem = PGSEM_NOTHROW(core::pattern_stem(whole));
    // The prefixes alone: every name of the pattern begins with its stem, and the longest
    // declared prefix of the stem governs those names now.
    const int32 found = PGSEM_NOTHROW(
        core::lookup(nullptr, 0, copy.prefixes, static_cast<std::size_t>(copy.prefix_count), stem));
    if (found < 0 || copy.declarations[found].pattern == whole) return nullptr;
    return &copy.declarations[found];
}

int declarations_count() {
    return config_copy_current(&cache) ? copy.count : 0;
}

void declarations_changed(Oid relid) {
    CacheInvalidateRelcacheByRelid(relid);
}

// ---- writes ----------------------------------------------------------------------------------

namespace {

Datum interval_or_null(const Interval *i, char *null_flag) {
    *null_flag = i == nullptr ? 'n' : ' ';
    return i == nullptr ? Datum(0) : IntervalPGetDatum(i);
}

}  // namespace

bool declarations_lock(const text *pattern, Declaration *found) {
    const MemoryContext caller = CurrentMemoryContext;  // *found is the caller's, not SPI's
    const OwnerWrite as = begin_owner_write(kTable, "pgsem 1.2");
    Oid types[] = {TEXTOID};
    Datum values[] = {PointerGetDatum(pattern)};
    const int rows = owner_write_run(
        "SELECT pattern, n, peak_n, max_lease, max_wait, kind, per, burst, owner,"
        "       public_claims, grantees"
        "  FROM pgsem.declarations WHERE pattern OPERATOR(pg_catalog.=) $1 FOR UPDATE",
        1, types, values, nullptr, SPI_OK_SELECT);
    if (rows > 0) {
        const TupleDesc desc = SPI_tuptable->tupdesc;
        read_declaration(SPI_tuptable->vals[0], desc, columns(desc), caller, found);
    }
    end_owner_write(as);
    return rows > 0;
}

// Whether the name in `column` falls under pattern $1: the name itself, or (a pattern ending in
// *) one that begins with its stem.
#define PGSEM_UNDER_PATTERN(column)                           \
    "(" column                                                \
    " OPERATOR(pg_catalog.=) $1"                              \
    " OR (pg_catalog.right($1, 1) OPERATOR(pg_catalog.=) '*'" \
    "     AND pg_catalog.starts_with(" column ", pg_catalog.left($1, -1))))"

// The highest slot plus one held now on any name under pattern $1, as the views count holders:
// unended leases (in flight or live, or expired and not yet reaped) and transaction and session
// claims (one of whose name the registry lost counts for every pattern). NULL: none.
#define PGSEM_HELD_TOP                                                       \
    "(SELECT pg_catalog.max(h.slot) OPERATOR(pg_catalog.+) 1"                \
    "   FROM (SELECT c.name, c.slot FROM pgsem.unended_claims() c"           \
    "         UNION ALL SELECT l.name, l.slot FROM pgsem.lock_claims() l) h" \
    "  WHERE h.name IS NULL OR " PGSEM_UNDER_PATTERN("h.name") ")"

namespace {

// The parameters of a write of `limits`: $1 the pattern, $2 n, $3 max_lease, $4 max_wait,
// $5 kind, $6 per, $7 burst (NULLs as the limits have them).
struct LimitParams {
    Oid types[8];
    Datum values[8];
    char nulls[9];
};

LimitParams limit_params(const text *pattern, const DeclaredLimits &limits) {
    LimitParams p{
        {TEXTOID, INT4OID, INTERVALOID, INTERVALOID, TEXTOID, INTERVALOID, INT4OID, OIDOID},
        {},
        "        "};
    p.values[0] = PointerGetDatum(pattern);
    p.values[1] = Int32GetDatum(limits.n);
    p.values[2] = interval_or_null(limits.max_lease, &p.nulls[2]);
    p.values[3] = interval_or_null(limits.max_wait, &p.nulls[3]);
    p.values[4] = CStringGetTextDatum(kKindWords[static_cast<int>(limits.kind)]);
    p.values[5] = interval_or_null(limits.per, &p.nulls[5]);
    p.values[6] = Int32GetDatum(limits.burst);
    p.nulls[6] = limits.burst == 0 ? 'n' : ' ';
    return p;
}

}  // namespace

bool declarations_insert(const text *pattern, const DeclaredLimits &limits, Oid owner) {
    const OwnerWrite as = begin_owner_write(kTable, "pgsem 1.2");
    LimitParams p = limit_params(pattern, limits);
    p.values[7] = ObjectIdGetDatum(owner);
    const int rows = owner_write_run(
        "INSERT INTO pgsem.declarations"
        "       (pattern, n, peak_n, max_lease, max_wait, kind, per, burst, owner)"
        " VALUES ($1, $2, NULLIF(GREATEST($2, " PGSEM_HELD_TOP
        "), $2),"
        "         $3, $4, $5, $6, $7, $8::pg_catalog.regrole)"
        " ON CONFLICT (pattern) DO NOTHING",
        8, p.types, p.values, p.nulls, SPI_OK_INSERT);
    end_owner_write(as);
    return rows > 0;
}

void declarations_update(const text *pattern, const DeclaredLimits &limits) {
    const OwnerWrite as = begin_owner_write(kTable, "pgsem 1.2");
    LimitParams p = limit_params(pattern, limits);
    owner_write_run(
        "UPDATE pgsem.declarations d SET n = $2, max_lease = $3, max_wait = $4,"
        "     kind = $5, per = $6, burst = $7,"
        "     peak_n = NULLIF(GREATEST($2, " PGSEM_HELD_TOP
        ","
        "         CASE WHEN $2 OPERATOR(pg_catalog.<) d.n THEN GREATEST(d.n, d.peak_n) END), $2),"
        "     changed_at = pg_catalog.now()"
        " WHERE pattern OPERATOR(pg_catalog.=) $1",
        7, p.types, p.values, p.nulls, SPI_OK_UPDATE);
    end_owner_write(as);
}

bool declarations_delete(const text *pattern, const char *covering) {
    const OwnerWrite as = begin_owner_write(kTable, "pgsem 1.2");
    Oid types[] = {TEXTOID, TEXTOID, INT4OID};
    Datum values[] = {PointerGetDatum(pattern), Datum(0), Datum(0)};
    const bool deleted =
        owner_write_run(
            "DELETE FROM pgsem.declarations WHERE pattern OPERATOR(pg_catalog.=) $1"
            " RETURNING n",
            1, types, values, nullptr, SPI_OK_DELETE_RETURNING) > 0;
    if (deleted && covering != nullptr) {
        bool isnull = false;
        values[1] = CStringGetTextDatum(covering);
        values[2] = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
        // The names go under the covering prefix, with its n: for them that is a lowering (or a
        // raise), so the prefix's peak_n takes their holders and the n they had.
        (void)owner_write_run(
            "UPDATE pgsem.declarations d"
            "   SET peak_n = NULLIF(GREATEST(d.n, d.peak_n, $3, " PGSEM_HELD_TOP
            "), d.n),"
            "       changed_at = pg_catalog.now()"
            " WHERE d.pattern OPERATOR(pg_catalog.=) $2",
            3, types, values, nullptr, SPI_OK_UPDATE);
    }
    end_owner_write(as);
    return deleted;
}

#undef PGSEM_HELD_TOP

bool declarations_other_rate_in_force(const text *pattern, DeclaredKind kind, char **name,
                                      TimestampTz *until) {
    const MemoryContext caller = CurrentMemoryContext;  // *name is the caller's, not SPI's
    const OwnerWrite as = begin_owner_write(kTable, "pgsem 1.2");
    Oid types[] = {TEXTOID};
    Datum values[] = {PointerGetDatum(pattern)};
    // A bucket would not count a window's grants; a window would not count a bucket's TAT.
    const char *sql =
        kind == DeclaredKind::kBucket
            ? "SELECT pg_catalog.min(name), pg_catalog.max(expires_at) FROM pgsem.claims"
              " WHERE rate AND ended_at IS NULL"
              "   AND expires_at OPERATOR(pg_catalog.>) pg_catalog.now()"
              "   AND " PGSEM_UNDER_PATTERN("name")
            : "SELECT pg_catalog.min(name), pg_catalog.max(tat) FROM pgsem.buckets"
              " WHERE tat OPERATOR(pg_catalog.>) pg_catalog.now()"
              "   AND " PGSEM_UNDER_PATTERN("name");
    (void)owner_read_latest(sql, 1, types, values);
    bool isnull = true;
    const Datum found = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
    if (!isnull) {
        *name = MemoryContextStrdup(caller, TextDatumGetCString(found));
        *until = DatumGetTimestampTz(
            SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
    }
    end_owner_write(as);
    return !isnull;
}

#undef PGSEM_UNDER_PATTERN

void declarations_set_grant(const text *pattern, Oid grantee, bool granted) {
    const OwnerWrite as = begin_owner_write(kTable, "pgsem 1.2");
    Oid types[] = {TEXTOID, OIDOID, BOOLOID};
    Datum values[] = {PointerGetDatum(pattern), ObjectIdGetDatum(grantee), BoolGetDatum(granted)};
    if (grantee == InvalidOid)
        owner_write_run(
            "UPDATE pgsem.declarations SET public_claims = $3, changed_at = pg_catalog.now()"
            " WHERE pattern OPERATOR(pg_catalog.=) $1 AND $2 OPERATOR(pg_catalog.=) 0",
            3, types, values, nullptr, SPI_OK_UPDATE);
    else
        // Each role once, in the order granted.
        owner_write_run(
            "UPDATE pgsem.declarations"
            " SET grantees = CASE WHEN $3 THEN pg_catalog.array_append("
            "       pg_catalog.array_remove(grantees, $2::pg_catalog.regrole),"
            "       $2::pg_catalog.regrole)"
            "     ELSE pg_catalog.array_remove(grantees, $2::pg_catalog.regrole) END,"
            "     changed_at = pg_catalog.now()"
            " WHERE pattern OPERATOR(pg_catalog.=) $1",
            3, types, values, nullptr, SPI_OK_UPDATE);
    end_owner_write(as);
}

}  // namespace pgsem
