// The checks of the waiting clients' run: their record of calls judged for the order of the line
// and the timing of NULL answers, the killer's strikes at them, and their semaphores empty and
// whole at the end. See main.cpp for what the run proves.
#pragma once

#include <libpq-fe.h>

#include "tally.hpp"
#include "workload.hpp"

namespace stress {

void print_line_stats(Shared &shared);

// From the clients' side; `client_verdict` judged every hold of the run.
void check_line_record(Tally *tally, Shared *shared, const Verdict &client_verdict);

// Against the server, once every client's backend has exited and every lease has run out.
void check_line_free(Tally *tally, PGconn *conn);

}  // namespace stress
