// pgsem_bench_driver: the measurements of bench/run.sh that pgbench cannot make. Each run prints
// one line of key=value pairs for bench/run.py to read.
//
//   pgsem_bench_driver pairs --target T --clients C --seconds S [--n N] [--window-ms W]
//                            [--redis-port P --scripts DIR]
//       T: pgsem-xact, pgsem-xact-wait, pgsem-lease-wait, pg-floor, pg-xact-limit, redis-fair,
//          redis-floor, redis-rate (a grant of a sliding window of n per W ms counts as a pair),
//          redis-bucket (a grant of a GCRA token bucket of n per W ms, burst n)
//   pgsem_bench_driver handoff --kind lease|transaction|session --samples S [--samples-out F]
//   pgsem_bench_driver expiry --samples S --lease-ms L [--samples-out F]
//   pgsem_bench_driver idle --waiters W --seconds T
//
// Postgres connection settings come from the PG* environment.
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "connections.hpp"
#include "idle.hpp"
#include "latency.hpp"
#include "pairs.hpp"

namespace {

using bench::die;

std::map<std::string, std::string> parse(int argc, char **argv) {
    std::map<std::string, std::string> options;
    for (int i = 2; i + 1 < argc; i += 2) {
        const std::string key = argv[i];
        if (key.rfind("--", 0) != 0) die("expected an option, got " + key);
        options[key.substr(2)] = argv[i + 1];
    }
    return options;
}

std::string need(const std::map<std::string, std::string> &options, const std::string &key) {
    const auto found = options.find(key);
    if (found == options.end()) die("missing --" + key);
    return found->second;
}

bench::ClaimKind parse_kind(const std::string &kind) {
    if (kind == "lease") return bench::ClaimKind::kLease;
    if (kind == "transaction") return bench::ClaimKind::kTransaction;
    if (kind == "session") return bench::ClaimKind::kSession;
    die("unknown kind " + kind);
}

double percentile(std::vector<double> values, double fraction) {
    std::sort(values.begin(), values.end());
    const auto rank =
        static_cast<std::size_t>(fraction * static_cast<double>(values.size() - 1) + 0.5);
    return values[rank];
}

// With --samples-out FILE, every sample too, one per line in ms (bench/plots.py draws them).
void print_latencies(const std::vector<double> &values,
                     const std::map<std::string, std::string> &options) {
    if (values.empty()) die("no samples");
    if (options.count("samples-out") != 0) {
        std::FILE *out = std::fopen(options.at("samples-out").c_str(), "w");
        if (out == nullptr) die("cannot write " + options.at("samples-out"));
        for (const double v : values) std::fprintf(out, "%.6f\n", v);
        std::fclose(out);
    }
    std::printf("samples=%zu p50_ms=%.3f p99_ms=%.3f min_ms=%.3f max_ms=%.3f\n", values.size(),
                percentile(values, 0.5), percentile(values, 0.99),
                *std::min_element(values.begin(), values.end()),
                *std::max_element(values.begin(), values.end()));
}

int run(int argc, char **argv) {
    if (argc < 2) die("usage: see the comment at the top of bench/driver/main.cpp");
    const std::string what = argv[1];
    const std::map<std::string, std::string> options = parse(argc, argv);
    if (what == "pairs") {
        bench::PairOptions pair;
        const std::string target = need(options, "target");
        if (target == "pgsem-xact")
            pair.target = bench::PairTarget::kPgsemXact;
        else if (target == "pgsem-xact-wait")
            pair.target = bench::PairTarget::kPgsemXactWait;
        else if (target == "redis-fair")
            pair.target = bench::PairTarget::kRedisFair;
        else if (target == "pgsem-lease-wait")
            pair.target = bench::PairTarget::kPgsemLeaseWait;
        else if (target == "pg-floor")
            pair.target = bench::PairTarget::kPgFloor;
        else if (target == "pg-xact-limit")
            pair.target = bench::PairTarget::kPgXactLimit;
        else if (target == "redis-floor")
            pair.target = bench::PairTarget::kRedisFloor;
        else if (target == "redis-rate")
            pair.target = bench::PairTarget::kRedisRate;
        else if (target == "redis-bucket")
            pair.target = bench::PairTarget::kRedisBucket;
        else
            die("unknown target " + target);
        pair.clients = std::stoi(need(options, "clients"));
        pair.seconds = std::stoi(need(options, "seconds"));
        if (options.count("n") != 0) pair.n = std::stoi(options.at("n"));
        if (options.count("window-ms") != 0) pair.window_ms = std::stoi(options.at("window-ms"));
        if (pair.target == bench::PairTarget::kRedisFair ||
            pair.target == bench::PairTarget::kRedisFloor ||
            pair.target == bench::PairTarget::kRedisRate ||
            pair.target == bench::PairTarget::kRedisBucket) {
            pair.redis_port = std::stoi(need(options, "redis-port"));
            pair.scripts_dir = need(options, "scripts");
        }
        const bench::PairResult result = bench::run_pairs(pair);
        std::printf("attempts=%ld pairs=%ld seconds=%.3f pairs_per_s=%.1f\n", result.attempts,
                    result.pairs, result.seconds,
                    static_cast<double>(result.pairs) / result.seconds);
    } else if (what == "handoff") {
        const bench::ClaimKind claim_kind = parse_kind(need(options, "kind"));
        print_latencies(bench::handoff_latencies(claim_kind, std::stoi(need(options, "samples"))),
                        options);
    } else if (what == "expiry") {
        print_latencies(bench::expiry_latencies(std::stoi(need(options, "samples")),
                                                std::stoi(need(options, "lease-ms"))),
                        options);
    } else if (what == "idle") {
        const bench::IdleResult result = bench::idle_waiter_cpu(
            std::stoi(need(options, "waiters")), std::stoi(need(options, "seconds")));
        std::printf("waiters=%d seconds=%.3f cpu_seconds=%.4f percent_of_core=%.3f clock=%s\n",
                    result.waiters, result.seconds, result.cpu_seconds, result.percent_of_core,
                    result.nanosecond_clock ? "schedstat" : "ticks");
    } else {
        die("unknown measurement " + what);
    }
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    try {
        return run(argc, argv);
    } catch (const std::exception &e) {
        die(e.what());
    }
}
