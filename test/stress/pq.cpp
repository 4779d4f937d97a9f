#include "pq.hpp"

#include <algorithm>

namespace stress {

namespace {

constexpr const char *kSessionOptions = "-c statement_timeout=30s -c lock_timeout=10s";

void read_result(PGconn *conn, PGresult *result, Reply *reply) {
    const ExecStatusType status = PQresultStatus(result);
    if (status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK) {
        reply->outcome = Outcome::kOk;
        reply->tag = PQcmdStatus(result);
        for (int row = 0; row < PQntuples(result); ++row) {
            std::vector<std::string> cells;
            cells.reserve(PQnfields(result));
            for (int col = 0; col < PQnfields(result); ++col)
                cells.emplace_back(PQgetvalue(result, row, col));
            reply->rows.push_back(std::move(cells));
        }
        if (PQntuples(result) > 0 && PQnfields(result) > 0 && PQgetisnull(result, 0, 0) == 0) {
            reply->null = false;
            reply->value = PQgetvalue(result, 0, 0);
        }
        return;
    }
    const char *state = result != nullptr ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
    const std::string code = state != nullptr ? state : "";
    std::string message = PQerrorMessage(conn);
    while (!message.empty() && message.back() == '\n') message.pop_back();
    std::replace(message.begin(), message.end(), '\n', ' ');  // one line per report entry
    reply->error = (code.empty() ? "(no SQLSTATE)" : code) + " " + message;
    reply->code = code;
    // 57P01: terminated by pg_terminate_backend(); a dead socket has no SQLSTATE at all.
    if (PQstatus(conn) == CONNECTION_BAD || code == "57P01")
        reply->outcome = Outcome::kLost;
    else if (code == "40001")
        reply->outcome = Outcome::kSerialization;
    else
        reply->outcome = Outcome::kError;
}

}  // namespace

Conn connect_to(const std::string &conninfo, const std::string &app, std::string *error) {
    const char *keys[] = {"dbname", "application_name", "options", nullptr};
    const char *values[] = {conninfo.c_str(), app.c_str(), kSessionOptions, nullptr};
    Conn conn(PQconnectdbParams(keys, values, 1));
    if (conn != nullptr && PQstatus(conn.get()) == CONNECTION_OK) return conn;
    *error = conn != nullptr ? PQerrorMessage(conn.get()) : "out of memory";
    return nullptr;
}

Reply exec(PGconn *conn, const std::string &sql, const std::vector<std::string> &params) {
    std::vector<const char *> values;
    values.reserve(params.size());
    for (const std::string &param : params) values.push_back(param.c_str());
    Reply reply;
    reply.sent = Clock::now();
    PGresult *result = PQexecParams(conn, sql.c_str(), static_cast<int>(values.size()), nullptr,
                                    values.empty() ? nullptr : values.data(), nullptr, nullptr, 0);
    reply.received = Clock::now();
    read_result(conn, result, &reply);
    PQclear(result);
    return reply;
}

}  // namespace stress
