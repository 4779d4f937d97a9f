// SQL glue for the trigger that keeps logical replication away from pgsem.claims (and, since 1.2,
// pgsem.declarations, whose owners and grantees are roles of one cluster).
//
// Claims are the state of one database: a FOR ALL TABLES publication would copy them into a
// subscriber's own pgsem.claims, where their ids collide with the subscriber's own claims and a
// duplicate key stops the whole subscription. The trigger (ENABLE ALWAYS, pgsem--1.0--1.1.sql)
// drops every row change that a logical replication worker -- apply or initial table sync --
// brings; every other writer's change goes through untouched (pgsem's own writes fire no
// triggers at all).
#include "pg/base/boundary.hpp"

PGSEM_SQL_FUNCTION(pgsem_skip_replicated_change) {
    if (!CALLED_AS_TRIGGER(fcinfo))
        ereport(ERROR, (errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
                        errmsg("pgsem.skip_replicated_change() must be called as a trigger")));
    if (IsLogicalWorker()) return PointerGetDatum(nullptr);
    const TriggerData *trigger = reinterpret_cast<TriggerData *>(fcinfo->context);
    if (TRIGGER_FIRED_BY_UPDATE(trigger->tg_event)) return PointerGetDatum(trigger->tg_newtuple);
    return PointerGetDatum(trigger->tg_trigtuple);
}
