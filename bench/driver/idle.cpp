#include "idle.hpp"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "connections.hpp"

namespace bench {

namespace {

constexpr const char *kIdleName = "bench-idle";

// CPU seconds a process has used, from schedstat (nanoseconds) if there, else stat (ticks).
double cpu_seconds(int pid, bool *nanoseconds) {
    std::ifstream schedstat("/proc/" + std::to_string(pid) + "/schedstat");
    double on_cpu_ns = 0;
    if (schedstat >> on_cpu_ns) {
        *nanoseconds = true;
        return on_cpu_ns / 1e9;
    }
    *nanoseconds = false;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line)) die("cannot read /proc/" + std::to_string(pid) + "/stat");
    // Fields after the command name, which is in parentheses and may hold spaces.
    std::istringstream fields(line.substr(line.rfind(')') + 2));
    std::string field;
    double utime = 0;
    double stime = 0;
    for (int i = 3; i <= 15 && fields >> field; ++i) {
        if (i == 14) utime = std::stod(field);
        if (i == 15) stime = std::stod(field);
    }
    return (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

double total_cpu(const std::vector<int> &pids, bool *nanoseconds) {
    double total = 0;
    for (const int pid : pids) total += cpu_seconds(pid, nanoseconds);
    return total;
}

}  // namespace

IdleResult idle_waiter_cpu(int waiters, int seconds) {
    const std::string name = std::string("'") + kIdleName + "'";
    const PgConn holder = pg_connect("pgsem_bench holder");
    const PgConn monitor = pg_connect("pgsem_bench monitor");
    if (first_value(pg_run(holder.get(), "SELECT sem_claim_session(" + name + ", 1)")) != "0")
        die("the holder got no slot of " + std::string(kIdleName));
    std::vector<PgConn> lined_up;
    for (int i = 0; i < waiters; ++i) {
        lined_up.push_back(pg_connect("pgsem_bench idle waiter"));
        const std::string sql = "SELECT sem_claim_session(" + name + ", 1, '10 minutes')";
        if (PQsendQuery(lined_up.back().get(), sql.c_str()) == 0) die("cannot send a wait");
    }
    const std::string count_sql = "SELECT count(*) FROM sem_waiters WHERE name = " + name;
    const Clock::time_point give_up = Clock::now() + std::chrono::seconds(30);
    while (first_value(pg_run(monitor.get(), count_sql)) != std::to_string(waiters)) {
        if (Clock::now() > give_up) die("not every waiter came to wait in line");
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    const PgResult listed =
        pg_run(monitor.get(), "SELECT pid FROM sem_waiters WHERE name = " + name);
    std::vector<int> pids;
    for (int row = 0; row < PQntuples(listed.get()); ++row)
        pids.push_back(std::stoi(PQgetvalue(listed.get(), row, 0)));

    IdleResult result;
    result.waiters = waiters;
    const double before = total_cpu(pids, &result.nanosecond_clock);
    const Clock::time_point start = Clock::now();
    std::this_thread::sleep_for(std::chrono::seconds(seconds));
    const double after = total_cpu(pids, &result.nanosecond_clock);
    result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    result.cpu_seconds = after - before;
    result.percent_of_core = 100.0 * result.cpu_seconds / result.seconds;

    // Ends every wait with a cancel, so that nobody is granted the slot on the way out.
    pg_run(monitor.get(),
           "SELECT count(pg_cancel_backend(pid)) FROM sem_waiters WHERE name = " + name);
    for (PgConn &conn : lined_up)
        while (PGresult *leftover = PQgetResult(conn.get())) PQclear(leftover);
    pg_run(holder.get(), "SELECT sem_release_session(" + name + ", 0)");
    return result;
}

}  // namespace bench
