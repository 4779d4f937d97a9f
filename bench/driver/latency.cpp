#include "latency.hpp"

#include <thread>

#include "connections.hpp"

namespace bench {

namespace {

constexpr const char *kHandoffName = "bench-handoff";
constexpr const char *kExpiryName = "bench-expiry";

// Statements for one kind of claim of a semaphore of one slot.
struct KindSql {
    std::string claim;       // returns the claim id or slot
    std::string claim_wait;  // the same, waiting in line up to 10 s
    std::string release;     // with {} standing for what claim returned
};

KindSql sql_for(ClaimKind kind) {
    const std::string name = std::string("'") + kHandoffName + "'";
    switch (kind) {
        case ClaimKind::kLease:
            return {"SELECT sem_claim(" + name + ", 1, '1 minute')",
                    "SELECT sem_claim(" + name + ", 1, '1 minute', '10 seconds')",
                    "SELECT sem_release({})"};
        case ClaimKind::kTransaction:
            return {"BEGIN; SELECT sem_claim_xact(" + name + ", 1)",
                    "BEGIN; SELECT sem_claim_xact(" + name + ", 1, '10 seconds')", "COMMIT"};
        case ClaimKind::kSession:
            return {"SELECT sem_claim_session(" + name + ", 1)",
                    "SELECT sem_claim_session(" + name + ", 1, '10 seconds')",
                    "SELECT sem_release_session(" + name + ", {})"};
    }
    die("unknown kind");
}

std::string with_value(std::string sql, const std::string &value) {
    const std::size_t at = sql.find("{}");
    if (at != std::string::npos) sql.replace(at, 2, value);
    return sql;
}

// Returns once `count` clients wait in line for `name`.
void await_waiters(PGconn *monitor, const std::string &name, int count) {
    const std::string sql = "SELECT count(*) FROM sem_waiters WHERE name = '" + name + "'";
    const Clock::time_point give_up = Clock::now() + std::chrono::seconds(10);
    while (first_value(pg_run(monitor, sql)) != std::to_string(count)) {
        if (Clock::now() > give_up) die("nobody came to wait in line for " + name);
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
}

}  // namespace

std::vector<double> handoff_latencies(ClaimKind kind, int samples) {
    const KindSql sql = sql_for(kind);
    const PgConn holder = pg_connect("pgsem_bench holder");
    const PgConn waiter = pg_connect("pgsem_bench waiter");
    const PgConn monitor = pg_connect("pgsem_bench monitor");
    std::vector<double> latencies;
    for (int i = 0; i < samples; ++i) {
        const std::string held = first_value(pg_run(holder.get(), sql.claim));
        if (held.empty()) die("the holder got no slot of " + std::string(kHandoffName));
        std::string granted;
        Clock::time_point returned;
        std::thread wait([&] {
            granted = first_value(pg_run(waiter.get(), sql.claim_wait));
            returned = Clock::now();
        });
        await_waiters(monitor.get(), kHandoffName, 1);
        const Clock::time_point sent = Clock::now();
        pg_run(holder.get(), with_value(sql.release, held));
        wait.join();
        if (granted.empty()) die("the waiter was not granted the slot");
        latencies.push_back(millis_between(sent, returned));
        pg_run(waiter.get(), with_value(sql.release, granted));
    }
    return latencies;
}

std::vector<double> expiry_latencies(int samples, int lease_millis) {
    const PgConn holder = pg_connect("pgsem_bench holder");
    const PgConn waiter = pg_connect("pgsem_bench waiter");
    const std::string name = std::string("'") + kExpiryName + "'";
    std::vector<double> latencies;
    for (int i = 0; i < samples; ++i) {
        const std::string old_id =
            first_value(pg_run(holder.get(), "SELECT sem_claim(" + name + ", 1, '" +
                                                 std::to_string(lease_millis) + " milliseconds')"));
        if (old_id.empty()) die("the holder got no slot of " + std::string(kExpiryName));
        const std::string new_id = first_value(
            pg_run(waiter.get(), "SELECT sem_claim(" + name + ", 1, '1 minute', '10 seconds')"));
        if (new_id.empty()) die("the waiter was not granted the expired slot");
        // claimed_at is the moment of the grant, expires_at the end of the old lease: both the
        // server's clock. Negative would mean a slot granted before its lease ran out.
        const std::string lag =
            first_value(pg_run(waiter.get(),
                               "SELECT extract(epoch FROM w.claimed_at - h.expires_at) * 1000"
                               " FROM sem_history w, sem_history h WHERE w.id = " +
                                   new_id + " AND h.id = " + old_id));
        latencies.push_back(std::stod(lag));
        pg_run(waiter.get(), "SELECT sem_release(" + new_id + ")");
    }
    return latencies;
}

}  // namespace bench
