// The stress program's checks: each prints "ok: ..." or "FAILED: ..." with a few details, and
// counts toward the summary line "stress: P checks passed, F failed".
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace stress {

class Tally {
  public:
    void check(bool ok, const std::string &what, const std::vector<std::string> &details = {}) {
        std::printf("%s: %s\n", ok ? "ok" : "FAILED", what.c_str());
        for (std::size_t i = 0; i < details.size() && i < 5; ++i)
            std::printf("    %s\n", details[i].c_str());
        if (details.size() > 5) std::printf("    ... %zu in all\n", details.size());
        ++(ok ? passed_ : failed_);
    }
    [[nodiscard]] int passed() const { return passed_; }
    [[nodiscard]] int failed() const { return failed_; }

  private:
    int passed_ = 0;
    int failed_ = 0;
};

}  // namespace stress
