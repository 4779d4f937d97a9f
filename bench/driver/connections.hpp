// Connections for the benchmark driver: Postgres (libpq, settings from the PG* environment, as
// bench/run.sh exports them) and Redis (hiredis), closed by their owners, and the few calls the
// measurements need. Any failure ends the run with a message: a benchmark that half-works
// measures nothing.
#pragma once

#include <hiredis/hiredis.h>
#include <libpq-fe.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace bench {

using Clock = std::chrono::steady_clock;

struct PgCloser {
    void operator()(PGconn *conn) const { PQfinish(conn); }
};
struct ResultCloser {
    void operator()(PGresult *result) const { PQclear(result); }
};
struct RedisCloser {
    void operator()(redisContext *context) const { redisFree(context); }
};
struct ReplyCloser {
    void operator()(redisReply *reply) const { freeReplyObject(reply); }
};
using PgConn = std::unique_ptr<PGconn, PgCloser>;
using PgResult = std::unique_ptr<PGresult, ResultCloser>;
using RedisConn = std::unique_ptr<redisContext, RedisCloser>;
using RedisReply = std::unique_ptr<redisReply, ReplyCloser>;

[[noreturn]] void die(const std::string &message);

PgConn pg_connect(const std::string &application_name);

// Runs sql (simple protocol, one or more statements) and returns the last result; dies on error.
PgResult pg_run(PGconn *conn, const std::string &sql);

// The first value of the last result, or "" when it is NULL or there is none.
std::string first_value(const PgResult &result);
bool first_is_null(const PgResult &result);

RedisConn redis_connect(int port);

// Runs a command given as separate arguments; dies on an error reply.
RedisReply redis_run(redisContext *context, const std::vector<std::string> &args);

double millis_between(Clock::time_point from, Clock::time_point to);

}  // namespace bench
