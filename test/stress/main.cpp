// pgsem_stress: many clients claim, hold and release the slots of two semaphores at once -- in
// autocommit and inside transactions at every isolation level, with rollbacks, releases from
// other connections, and a killer that terminates backends mid-hold and mid-claim. Beside them,
// waiting clients (waiting.cpp) take leases, transaction claims and session claims of two more
// semaphores, waiting in line for them, or calling with wait 0 to try to pass those who wait,
// some under a short lock_timeout or statement_timeout of their own; the killer cancels and
// terminates them while they wait, and terminates them while they hold session claims. Then the
// run proves:
//   * that no semaphore ever had more holders than allowed, no slot two holders, no slot at or
//     above its claim's n, counting every slot of a claim of several permits (a fifth of the
//     clients' claims take 2, all or none) and of a set (some claims take both semaphores at
//     once, all or none, under one id) -- from the clients' own record of when each of them
//     knew it held a slot (client clock), and from the server's history of leases (sem_history,
//     server clock);
//   * that the line is first come, first served: no caller (waiting or not) was served before a
//     waiter that surely came first -- and that the check was not vacuous;
//   * that a wait answered NULL only once its time was up after the call was sent;
//   * that a claim call that failed, or whose transaction rolled back, left no claim behind;
//   * and that once every client is gone nobody is left in line, no lock claim is held, and every
//     semaphore is whole again once all leases have run out.
//
//   pgsem_stress [--conninfo STR] [--clients N] [--cycles N] [--waiters N] [--wait-cycles N]
//                [--seed N]
//   pgsem_stress --self-test    # the checker must find the violations planted in fake records
//
// Prints a report and "stress: P checks passed, F failed"; exits 0 only when nothing failed.
// The database needs CREATE EXTENSION pgsem, a superuser (the checks read pgsem.claims) and a
// pgsem.history_retention longer than the run (the default day), so the history stays whole.
//
// A client's hold interval runs from the moment its claim call returned to the moment just
// before it sent the release, commit-with-release or rollback -- or the moment the killer struck,
// if earlier -- and never past the claim's send time plus the lease. Each end is one the server's
// own interval surely contains, so overlapping client intervals are a real oversubscription. The
// same holds for transaction and session claims (ended by the COMMIT, ROLLBACK or
// sem_release_session sent, or by the kill), which the record keeps with id 0.
//
// The line's order is judged from the times each call was sent and answered, with a margin for
// the way to the server and back (see LineVerdict in checker.hpp).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "checker.hpp"
#include "line_checks.hpp"
#include "pq.hpp"
#include "tally.hpp"
#include "waiting.hpp"
#include "workload.hpp"

namespace stress {

namespace {

// ---- Checks ------------------------------------------------------------------------------------

void report_depth(const char *whose, const Verdict &verdict) {
    std::printf("max concurrency (%s):", whose);
    for (const auto &[label, depth] : verdict.max_depth)
        std::printf(" %s %d;", label.c_str(), depth);
    std::printf("\n");
}

void check_verdict(Tally *tally, const char *whose, const Verdict &verdict) {
    const std::string prefix = std::string(whose) + ": ";
    tally->check(verdict.too_many.empty(),
                 prefix +
                     "never more than n holders at once (callers with n <= k: never more "
                     "than k)",
                 verdict.too_many);
    tally->check(verdict.slot_shared.empty(), prefix + "no slot held twice at once",
                 verdict.slot_shared);
    tally->check(verdict.slot_range.empty(), prefix + "every slot below its claim's n",
                 verdict.slot_range);
    tally->check(verdict.id_order.empty(), prefix + "ids unique and increasing per slot",
                 verdict.id_order);
}

Verdict check_client_record(Tally *tally, Shared *shared, const std::vector<Held> &record) {
    std::vector<Interval> intervals;
    intervals.reserve(record.size());
    for (const Held &held : record) intervals.push_back(held.interval);
    Verdict verdict = judge(intervals);
    report_depth("client record", verdict);
    check_verdict(tally, "client record", verdict);
    for (const char *kind : kProblemKinds)
        tally->check(shared->problems.count(kind) == 0, kind, shared->problems.samples(kind));
    const auto plain = verdict.max_depth.find(kPlainName);
    tally->check(
        plain != verdict.max_depth.end() && plain->second == kPlainN && shared->stats.nulls > 0,
        "the clients contended: all 4 slots of stress.plain held at once, some claims "
        "refused");
    tally->check(shared->stats.kills_holding > 0 && shared->stats.kills_seen > 0,
                 "the killer terminated holders and their clients reconnected");
    return verdict;
}

// Waits (bounded) until a query's first value is "0".
bool wait_for_zero(PGconn *conn, const std::string &sql, int max_seconds) {
    const auto deadline = Clock::now() + std::chrono::seconds(max_seconds);
    while (Clock::now() < deadline) {
        const Reply reply = exec(conn, sql);
        if (!reply.ok()) return false;
        if (reply.value == "0") return true;
        std::this_thread::sleep_for(milliseconds(50));
    }
    return false;
}

// Every lease has run out; then n claims of each name succeed, the next is NULL.
void check_all_free(Tally *tally, PGconn *conn) {
    const bool gone = wait_for_zero(
        conn,
        "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'pgsem_stress client%'",
        10);
    tally->check(gone, "every killed backend has exited");
    const bool expired = wait_for_zero(conn,
                                       std::string("SELECT count(*) FROM pgsem.claims "
                                                   "WHERE ended_at IS NULL AND expires_at > "
                                                   "clock_timestamp() AND name IN ") +
                                           kStressNamesSql,
                                       10);
    tally->check(expired, "every lease has run out");
    std::vector<std::string> ids;
    auto claims = [&](const char *name, int n, int count) {
        bool ok = true;
        for (int i = 0; i <= count; ++i) {
            const Reply reply = exec(conn, kClaimSql, {name, std::to_string(n), kLease});
            const bool want_null = i == count;
            ok = ok && reply.ok() && reply.null == want_null;
            if (reply.ok() && !reply.null) ids.push_back(reply.value);
        }
        return ok;
    };
    tally->check(claims(kPlainName, kPlainN, kPlainN),
                 "stress.plain is free again: 4 fresh claims granted, the 5th refused");
    tally->check(claims(kMixedName, kMixedSmallN, kMixedSmallN) &&
                     claims(kMixedName, kMixedLargeN, kMixedLargeN - kMixedSmallN),
                 "stress.mixed is free again: 2 claims with n = 2, then 2 with n = 4 granted, "
                 "the 3rd of each refused");
    bool released = true;
    for (const std::string &id : ids) released = released && exec(conn, kReleaseSql, {id}).truth();
    const Reply holders = exec(conn,
                               "SELECT count(*) FROM sem_holders "
                               "WHERE name IN ('stress.plain', 'stress.mixed')");
    tally->check(released && holders.value == "0",
                 "the fresh claims release, leaving sem_holders empty");
}

struct ServerClaim {
    std::string name;
    int n = 0;
    std::set<int> slots;  // a claim of k permits has k rows, one per slot
    std::string status;
};

// The server's own record: [claimed_at, ended_at or expires_at) of every committed claim.
// Keyed by claim id and semaphore: a set has rows of one id on several semaphores.
using ServerKey = std::pair<long long, std::string>;

std::map<ServerKey, ServerClaim> check_server_history(Tally *tally, PGconn *conn) {
    const Reply reply =
        exec(conn,
             "SELECT id, name, n, slot, status, "
             "(extract(epoch FROM claimed_at) * 1000000)::bigint, "
             "(extract(epoch FROM coalesce(ended_at, expires_at)) * 1000000)::bigint "
             "FROM sem_history WHERE name IN " +
                 std::string(kStressNamesSql));
    std::map<ServerKey, ServerClaim> claims;
    std::vector<Interval> intervals;
    for (const std::vector<std::string> &row : reply.rows) {
        const long long id = to_ll(row[0]);
        const int n = static_cast<int>(to_ll(row[2]));
        const int slot = static_cast<int>(to_ll(row[3]));
        ServerClaim &claim = claims[{id, row[1]}];
        claim.name = row[1];
        claim.n = n;
        claim.slots.insert(slot);
        claim.status = row[4];
        intervals.push_back(make_interval(row[1], n, slot, id, to_ll(row[5]), to_ll(row[6])));
    }
    tally->check(reply.ok() && !intervals.empty(), "the server's history can be read",
                 reply.ok() ? std::vector<std::string>{} : std::vector<std::string>{reply.error});
    const Verdict verdict = judge(intervals);
    report_depth("server history", verdict);
    check_verdict(tally, "server history", verdict);
    const Reply timed_out = exec(conn,
                                 "SELECT count(*) FROM pgsem.claims WHERE outcome = 'timed out' "
                                 "AND ended_at IS DISTINCT FROM expires_at");
    tally->check(timed_out.value == "0", "server history: timed-out claims ended with their lease");
    std::printf("server history: %zu claims\n", claims.size());
    return claims;
}

// What each client knows of its claims' ends must be what the server recorded.
void check_fates(Tally *tally, const std::vector<Held> &record,
                 const std::map<ServerKey, ServerClaim> &server) {
    std::vector<std::string> resurrected;
    std::vector<std::string> not_released;
    std::vector<std::string> not_timed_out;
    long orphans = 0;
    std::vector<std::string> mismatched;
    for (const Held &held : record) {
        const Interval &claim = held.interval;
        const auto found = server.find({claim.id, claim.name});
        const std::string id = "claim " + std::to_string(claim.id);
        if (held.fate == Fate::kRolledBack) {
            if (found != server.end()) resurrected.push_back(id + " is " + found->second.status);
            continue;
        }
        if (held.fate == Fate::kUnknown) continue;
        if (found == server.end()) {
            mismatched.push_back(id + " was committed but is not in the history");
            continue;
        }
        const ServerClaim &row = found->second;
        if (row.name != claim.name || row.n != claim.n ||
            (claim.slot >= 0 && row.slots.count(claim.slot) == 0))
            mismatched.push_back(id + ": the server has " + row.name + " n " +
                                 std::to_string(row.n) + ", not slot " +
                                 std::to_string(claim.slot));
        if (held.fate == Fate::kReleased && row.status != "released")
            not_released.push_back(id + " is " + row.status);
        if (held.fate == Fate::kOrphaned) {
            ++orphans;
            if (row.status != "timed out") not_timed_out.push_back(id + " is " + row.status);
        }
    }
    tally->check(resurrected.empty(), "rolled-back claims left no row", resurrected);
    tally->check(not_released.empty(), "released claims show as 'released' in sem_history",
                 not_released);
    tally->check(orphans > 0 && not_timed_out.empty(),
                 "claims of killed holders (" + std::to_string(orphans) +
                     ") kept their slot until their lease ran out: all 'timed out'",
                 not_timed_out);
    tally->check(mismatched.empty(),
                 "committed claims are in the history with the name, n and slot their holder saw",
                 mismatched);
}

// ---- The run -----------------------------------------------------------------------------------

bool parse_options(int argc, char **argv, Options *options) {
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const bool has_value = i + 1 < argc;
        if (arg == "--self-test") {
            options->self_test = true;
        } else if (arg == "--conninfo" && has_value) {
            options->conninfo = argv[++i];
        } else if (arg == "--clients" && has_value) {
            options->clients = std::atoi(argv[++i]);
        } else if (arg == "--cycles" && has_value) {
            options->cycles = std::atoi(argv[++i]);
        } else if (arg == "--waiters" && has_value) {
            options->waiters = std::atoi(argv[++i]);
        } else if (arg == "--wait-cycles" && has_value) {
            options->wait_cycles = std::atoi(argv[++i]);
        } else if (arg == "--seed" && has_value) {
            options->seed = std::strtoull(argv[++i], nullptr, 10);
        } else {
            std::fprintf(stderr,
                         "usage: pgsem_stress [--conninfo STR] [--clients N] [--cycles N] "
                         "[--waiters N] [--wait-cycles N] [--seed N] | --self-test\n");
            return false;
        }
    }
    return options->clients > 0 && options->cycles > 0 && options->waiters > 0 &&
           options->wait_cycles > 0;
}

bool open_pool(Shared *shared, std::string *error) {
    for (int i = 0; i < kPoolSize; ++i) {
        auto pooled = std::make_unique<Pooled>();
        pooled->conn =
            connect_to(shared->options.conninfo, "pgsem_stress pool " + std::to_string(i), error);
        if (pooled->conn == nullptr) return false;
        shared->pool.push_back(std::move(pooled));
    }
    return true;
}

// Clients 0..clients-1 are the plain ones, the waiting clients come after them.
void run_threads(Shared *shared) {
    const int clients = shared->options.clients;
    const int all = clients + shared->options.waiters;
    for (int i = 0; i < all; ++i) shared->targets.push_back(std::make_unique<Target>());
    shared->running = all;
    std::vector<std::thread> threads;
    threads.reserve(all + 1);
    const std::uint64_t seed = shared->options.seed * 1000;
    for (int i = 0; i < clients; ++i) threads.emplace_back(run_client, shared, i, seed + i);
    for (int i = clients; i < all; ++i)
        threads.emplace_back(run_waiting_client, shared, i, seed + 500 + i);
    threads.emplace_back(run_killer, shared, seed + 999);
    for (std::thread &thread : threads) thread.join();
}

void print_stats(Shared &shared, double seconds) {
    const Stats &stats = shared.stats;
    long granted = 0;
    for (const auto &count : stats.granted) granted += count;
    std::printf("claims: %ld calls, %ld granted, %ld NULL; %ld cycles gave up after %d NULLs\n",
                stats.attempts.load(), granted, stats.nulls.load(), stats.given_up.load(),
                kMaxAttempts);
    std::printf("granted by mode:");
    for (std::size_t i = 0; i < kIsolationNames.size(); ++i)
        std::printf(" %s %ld;", kIsolationNames[i], stats.granted[i].load());
    std::printf("\n");
    std::printf("rolled back %ld, released from a pooled connection %ld, renewed %ld\n",
                stats.rolled_back.load(), stats.pooled_releases.load(), stats.renewals.load());
    std::printf("kills: %ld mid-hold, %ld mid-claim; %ld noticed by clients, %ld reconnects\n",
                stats.kills_holding.load(), stats.kills_claiming.load(), stats.kills_seen.load(),
                stats.reconnects.load());
    std::printf("holds that outlived their lease %ld, slowest claim call %.1f ms\n",
                stats.lease_overruns.load(), stats.slowest_claim_micros.load() / 1000.0);
    std::printf("claims gone with their killed transaction before sem_held() asked: %ld\n",
                stats.unheld_after_kill.load());
    for (const auto &[kind, count] : shared.expected.counts()) {
        const std::vector<std::string> samples = shared.expected.samples(kind);
        std::printf("expected: %ld x %s (%s)\n", count, kind.c_str(),
                    samples.empty() ? "" : samples.front().c_str());
    }
    std::printf("duration: %.1f s\n", seconds);
}

int run(const Options &options) {
    auto shared = std::make_unique<Shared>();
    shared->options = options;
    std::printf(
        "pgsem stress: %d clients x %d cycles, seed %llu, lease %s, holds 0-%d ms; %d waiting "
        "clients x %d cycles, holds %d-%d ms (%d%% of slot 0's on stress.line.mixed %d-%d ms)\n",
        options.clients, options.cycles, static_cast<unsigned long long>(options.seed), kLease,
        kMaxHoldMillis, options.waiters, options.wait_cycles, kMinLineHoldMillis,
        kMaxLineHoldMillis, kSlowHoldPercent, kMinSlowHoldMillis, kMaxSlowHoldMillis);
    std::string error;
    const Conn checker = connect_to(options.conninfo, "pgsem_stress checker", &error);
    if (checker == nullptr || !open_pool(shared.get(), &error)) {
        std::printf("cannot connect: %s\nstress: 0 checks passed, 1 failed\n", error.c_str());
        return 1;
    }
    run_threads(shared.get());
    const double seconds = std::chrono::duration<double>(Clock::now() - shared->start).count();
    print_stats(*shared, seconds);
    print_line_stats(*shared);
    const std::vector<Held> record = shared->record.all();
    Tally tally;
    const Verdict verdict = check_client_record(&tally, shared.get(), record);
    check_line_record(&tally, shared.get(), verdict);
    check_all_free(&tally, checker.get());
    check_line_free(&tally, checker.get());
    const std::map<ServerKey, ServerClaim> server = check_server_history(&tally, checker.get());
    check_fates(&tally, record, server);
    std::printf("total duration: %.1f s\n",
                std::chrono::duration<double>(Clock::now() - shared->start).count());
    std::printf("stress: %d checks passed, %d failed\n", tally.passed(), tally.failed());
    return tally.failed() == 0 ? 0 : 1;
}

}  // namespace

}  // namespace stress

int main(int argc, char **argv) {
    std::setvbuf(stdout, nullptr, _IOLBF, 0);  // the report survives a crash, line by line
    using namespace stress;
    try {
        Options options;
        options.seed = static_cast<std::uint64_t>(std::random_device{}()) % 1000000;
        if (!parse_options(argc, argv, &options)) return 2;
        if (options.self_test) return self_test() ? 0 : 1;
        return run(options);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "pgsem_stress: %s\n", e.what());
    } catch (...) {
        std::fprintf(stderr, "pgsem_stress: unknown exception\n");
    }
    return 2;
}
