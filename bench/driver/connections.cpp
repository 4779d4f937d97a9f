#include "connections.hpp"

#include <cstdio>
#include <cstdlib>

namespace bench {

void die(const std::string &message) {
    std::fprintf(stderr, "pgsem_bench_driver: %s\n", message.c_str());
    std::exit(1);
}

PgConn pg_connect(const std::string &application_name) {
    const std::string conninfo = "application_name='" + application_name + "'";
    PgConn conn(PQconnectdb(conninfo.c_str()));
    if (PQstatus(conn.get()) != CONNECTION_OK)
        die("cannot connect to Postgres: " + std::string(PQerrorMessage(conn.get())));
    return conn;
}

PgResult pg_run(PGconn *conn, const std::string &sql) {
    PgResult last;
    if (PQsendQuery(conn, sql.c_str()) == 0)
        die("cannot send " + sql + ": " + PQerrorMessage(conn));
    for (PGresult *result = PQgetResult(conn); result != nullptr; result = PQgetResult(conn)) {
        const ExecStatusType status = PQresultStatus(result);
        if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK)
            die(sql + ": " + PQresultErrorMessage(result));
        last.reset(result);
    }
    return last;
}

std::string first_value(const PgResult &result) {
    if (result == nullptr || PQntuples(result.get()) == 0 || PQgetisnull(result.get(), 0, 0) != 0)
        return "";
    return PQgetvalue(result.get(), 0, 0);
}

bool first_is_null(const PgResult &result) {
    return result == nullptr || PQntuples(result.get()) == 0 ||
           PQgetisnull(result.get(), 0, 0) != 0;
}

RedisConn redis_connect(int port) {
    RedisConn context(redisConnect("127.0.0.1", port));
    if (context == nullptr || context->err != 0)
        die("cannot connect to Redis on port " + std::to_string(port) + ": " +
            (context != nullptr ? context->errstr : "out of memory"));
    return context;
}

RedisReply redis_run(redisContext *context, const std::vector<std::string> &args) {
    std::vector<const char *> argv;
    std::vector<size_t> lengths;
    for (const std::string &arg : args) {
        argv.push_back(arg.data());
        lengths.push_back(arg.size());
    }
    RedisReply reply(static_cast<redisReply *>(
        redisCommandArgv(context, static_cast<int>(argv.size()), argv.data(), lengths.data())));
    if (reply == nullptr) die(std::string("Redis: ") + context->errstr);
    if (reply->type == REDIS_REPLY_ERROR) die("Redis: " + std::string(reply->str, reply->len));
    return reply;
}

double millis_between(Clock::time_point from, Clock::time_point to) {
    return std::chrono::duration<double, std::milli>(to - from).count();
}

}  // namespace bench
