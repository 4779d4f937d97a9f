#include "pairs.hpp"

#include <atomic>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>
#include <vector>

#include "connections.hpp"

namespace bench {

namespace {

constexpr const char *kPgsemName = "bench-pairs";
constexpr const char *kRedisName = "bench-fair";
constexpr const char *kRedisTimeoutSeconds = "10";  // the seed's default lease
constexpr const char *kRedisRateName = "bench-rate";

struct Counts {
    long attempts = 0;
    long pairs = 0;
};

// Clients connect first, then all start together, so that connecting costs no cell any time.
class StartLine {
  public:
    explicit StartLine(int clients) : waiting_for_(clients) {}
    // A client is connected; returns when all are, with the moment to stop.
    Clock::time_point ready() {
        --waiting_for_;
        while (!started_) std::this_thread::yield();
        return deadline_;
    }
    // Returns once every client is ready, having started them.
    Clock::time_point start(int seconds) {
        while (waiting_for_ > 0) std::this_thread::yield();
        const Clock::time_point now = Clock::now();
        deadline_ = now + std::chrono::seconds(seconds);
        started_ = true;
        return now;
    }

  private:
    std::atomic<int> waiting_for_;
    std::atomic<bool> started_{false};
    Clock::time_point deadline_;  // written before started_ is set
};

// A transaction claim is held from the claim to the COMMIT. A refused claim leaves the
// transaction open (it wrote nothing and, at READ COMMITTED, keeps no snapshot) and the next
// attempt runs in it, so a refusal costs one round trip, as a refused Redis acquire does.
// A lease that waits in line, released by id: the pgbench cell pgsem_wait_pair.sql from this
// driver, to tell the client's share of that cell's cost from the server's.
Counts lease_client(const PairOptions &options, StartLine *line) {
    const PgConn conn = pg_connect("pgsem_bench pairs");
    const std::string claim = "SELECT sem_claim('" + std::string(kPgsemName) + "-lease', " +
                              std::to_string(options.n) + ", '90 seconds', '10 seconds')";
    Counts counts;
    const Clock::time_point deadline = line->ready();
    while (Clock::now() < deadline) {
        const std::string id = first_value(pg_run(conn.get(), claim));
        ++counts.attempts;
        if (id.empty()) continue;
        pg_run(conn.get(), "SELECT sem_release(" + id + ")");
        ++counts.pairs;
    }
    return counts;
}

Counts pgsem_client(const PairOptions &options, StartLine *line) {
    if (options.target == PairTarget::kPgsemLeaseWait) return lease_client(options, line);
    const PgConn conn = pg_connect("pgsem_bench pairs");
    std::string claim;
    if (options.target == PairTarget::kPgFloor)
        claim = "SELECT 1";
    else if (options.target == PairTarget::kPgXactLimit)
        claim = "SELECT k FROM generate_series(0, " + std::to_string(options.n - 1) +
                ") k WHERE pg_try_advisory_xact_lock(4242, k) LIMIT 1";
    else
        claim = "SELECT sem_claim_xact('" + std::string(kPgsemName) + "', " +
                std::to_string(options.n) +
                (options.target == PairTarget::kPgsemXactWait ? ", '10 seconds')" : ")");
    Counts counts;
    bool in_transaction = false;
    const Clock::time_point deadline = line->ready();
    while (Clock::now() < deadline) {
        const PgResult result = pg_run(conn.get(), in_transaction ? claim : "BEGIN; " + claim);
        in_transaction = true;
        ++counts.attempts;
        if (first_is_null(result)) continue;
        pg_run(conn.get(), "COMMIT");
        in_transaction = false;
        ++counts.pairs;
    }
    if (in_transaction) pg_run(conn.get(), "ROLLBACK");
    return counts;
}

std::string read_file(const std::string &path) {
    std::ifstream in(path);
    if (!in) die("cannot read " + path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

std::string load_script(redisContext *context, const std::string &path) {
    const RedisReply reply = redis_run(context, {"SCRIPT", "LOAD", read_file(path)});
    return std::string(reply->str, reply->len);
}

// A random 128-bit identifier per acquire, in the seed's uuid4 text form.
std::string identifier(std::mt19937_64 *rng) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string id(36, '-');
    for (std::size_t i = 0; i < id.size(); ++i)
        if (i != 8 && i != 13 && i != 18 && i != 23) id[i] = kHex[(*rng)() & 15U];
    return id;
}

bool is_redis(PairTarget target) {
    return target == PairTarget::kRedisFair || target == PairTarget::kRedisFloor ||
           target == PairTarget::kRedisRate || target == PairTarget::kRedisBucket;
}

Counts redis_client(const PairOptions &options, StartLine *line, int index) {
    const RedisConn context = redis_connect(options.redis_port);
    const std::string acquire =
        load_script(context.get(), options.scripts_dir + "/acquire_fair.lua");
    const std::string release =
        load_script(context.get(), options.scripts_dir + "/release_fair.lua");
    const std::string semname = kRedisName;
    const std::string owner = semname + ":owner";
    const std::string counter = semname + ":counter";
    const std::string limit = std::to_string(options.n);
    std::mt19937_64 rng(static_cast<std::uint64_t>(index) * 7919 + 1);
    Counts counts;
    const Clock::time_point deadline = line->ready();
    while (options.target == PairTarget::kRedisFloor && Clock::now() < deadline) {
        redis_run(context.get(), {"PING"});
        redis_run(context.get(), {"PING"});
        ++counts.attempts;
        ++counts.pairs;
    }
    if (options.target == PairTarget::kRedisRate) {
        const std::string rate =
            load_script(context.get(), options.scripts_dir + "/rate_window.lua");
        const std::string window = std::to_string(options.window_ms);
        while (Clock::now() < deadline) {
            const RedisReply granted = redis_run(
                context.get(),
                {"EVALSHA", rate, "1", kRedisRateName, limit, window, "1", identifier(&rng)});
            ++counts.attempts;
            if (granted->integer == 1) ++counts.pairs;
        }
    }
    if (options.target == PairTarget::kRedisBucket) {
        const std::string bucket =
            load_script(context.get(), options.scripts_dir + "/token_bucket.lua");
        const std::string period = std::to_string(options.window_ms);
        while (Clock::now() < deadline) {
            const RedisReply granted = redis_run(
                context.get(), {"EVALSHA", bucket, "1", kRedisRateName, limit, period, "1", limit});
            ++counts.attempts;
            if (granted->integer == 1) ++counts.pairs;
        }
    }
    while (options.target == PairTarget::kRedisFair && Clock::now() < deadline) {
        const std::string id = identifier(&rng);
        const RedisReply acquired = redis_run(
            context.get(),
            {"EVALSHA", acquire, "3", semname, owner, counter, limit, kRedisTimeoutSeconds, id});
        ++counts.attempts;
        if (acquired->integer != 1) continue;
        redis_run(context.get(), {"EVALSHA", release, "2", semname, owner, id});
        ++counts.pairs;
    }
    return counts;
}

}  // namespace

PairResult run_pairs(const PairOptions &options) {
    if (is_redis(options.target)) {
        const RedisConn context = redis_connect(options.redis_port);
        redis_run(context.get(), {"DEL", kRedisName, std::string(kRedisName) + ":owner",
                                  std::string(kRedisName) + ":counter", kRedisRateName});
    }
    std::vector<Counts> counts(options.clients);
    std::vector<std::thread> threads;
    StartLine line(options.clients);
    for (int i = 0; i < options.clients; ++i)
        threads.emplace_back([&options, &counts, &line, i] {
            counts[i] = is_redis(options.target) ? redis_client(options, &line, i)
                                                 : pgsem_client(options, &line);
        });
    const Clock::time_point start = line.start(options.seconds);
    for (std::thread &thread : threads) thread.join();
    PairResult result;
    result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    for (const Counts &c : counts) {
        result.attempts += c.attempts;
        result.pairs += c.pairs;
    }
    return result;
}

}  // namespace bench
