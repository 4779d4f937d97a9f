// The little of libpq the stress test needs: connections that close themselves, and one call that
// runs a statement and says how it went.
#pragma once

#include <libpq-fe.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace stress {

using Clock = std::chrono::steady_clock;

struct ConnCloser {
    void operator()(PGconn *conn) const { PQfinish(conn); }
};
using Conn = std::unique_ptr<PGconn, ConnCloser>;

enum class Outcome : unsigned char { kOk, kLost, kSerialization, kError };

struct Reply {
    Outcome outcome = Outcome::kError;
    std::vector<std::vector<std::string>> rows;  // NULL reads as ""
    bool null = true;  // the first column of the first row is NULL, or there is no row
    std::string value;
    std::string tag;    // command tag: COMMIT, ROLLBACK, SELECT 1...
    std::string error;  // SQLSTATE and message
    std::string code;   // SQLSTATE alone; "" when there is none
    Clock::time_point sent;
    Clock::time_point received;

    [[nodiscard]] bool ok() const { return outcome == Outcome::kOk; }
    [[nodiscard]] bool truth() const { return ok() && !null && value == "t"; }
};

// Connects with the session settings every stress connection uses (statement and lock timeouts).
Conn connect_to(const std::string &conninfo, const std::string &app, std::string *error);

// Runs sql with text parameters; never throws for an SQL error, which the Reply carries.
Reply exec(PGconn *conn, const std::string &sql, const std::vector<std::string> &params = {});

}  // namespace stress
