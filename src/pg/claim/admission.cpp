#include "pg/base/boundary.hpp"
#include "pg/claim/admission.hpp"

namespace pgsem {

void require_primary(const char *function, bool refuse_in_read_only) {
    if (RecoveryInProgress())
        ereport(ERROR, (errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
                        errmsg("%s cannot run on a hot standby", function),
                        errdetail("Semaphores live on the primary: in a table only the primary can "
                                  "write, and in locks that would exclude nobody on the primary."),
                        errhint("Connect to the primary.")));
    if (refuse_in_read_only) PreventCommandIfReadOnly(function);
}

}  // namespace pgsem
