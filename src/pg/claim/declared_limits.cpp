#include "pg/base/argument_checks.hpp"
#include "pg/claim/declared_limits.hpp"
#include "pg/store/declarations.hpp"

namespace pgsem {

namespace {

// As Postgres decides who may use an object: membership counts when it inherits privileges
// (has_privs_of_role), superusers may do anything, and the owner may always.
bool may_claim(const Declaration &d) {
    if (d.public_claims) return true;
    const Oid user = GetUserId();
    if (has_privs_of_role(user, d.owner)) return true;
    for (int i = 0; i < d.grantee_count; ++i)
        if (has_privs_of_role(user, d.grantees[i])) return true;
    return false;
}

// A lease (asked for by a claim or a renewal) within the declaration's maximum, else 22023.
void require_lease_within(const char *function, const Declaration &d, const text *name, int64 lease,
                          const char *advice) {
    if (d.max_lease == 0 || lease <= d.max_lease) return;
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("%s: a lease of %s is above the declared maximum of semaphore \"%s\"",
                           function, interval_text(lease), text_to_cstring(name)),
                    errdetail("Declaration \"%s\" allows leases of at most %s%s", d.pattern,
                              interval_text(d.max_lease), advice)));
}

}  // namespace

namespace {

// Undeclared (or undeclared since): 42501 under pgsem.require_declared.
void require_undeclared_allowed(const char *function, const text *name) {
    if (!require_declared) return;
    ereport(ERROR,
            (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
             errmsg("%s: semaphore \"%s\" is not declared", function, text_to_cstring(name)),
             errdetail("pgsem.require_declared is on: only declared semaphores may be claimed."),
             errhint("An owner of the database declares it: sem_declare(name, n).")));
}

// What a declaration says of a claim, at its first look and at every look while it waits: the
// right to claim, the lease, the permits within n; and the holders above a lowered n.
void require_may_claim(const char *function, const Declaration &d, const text *name) {
    if (!may_claim(d))
        ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                        errmsg("%s: permission denied to claim semaphore \"%s\"", function,
                               text_to_cstring(name)),
                        errdetail("Role \"%s\" lacks the right to claim of declaration \"%s\".",
                                  GetUserNameFromId(GetUserId(), false), d.pattern),
                        errhint("Its owner gives it with sem_grant('%s', role).", d.pattern)));
}

// A declaration fixes what its names are: a semaphore's slots, a sliding window's or a token
// bucket's permits. One name granted two ways would be granted twice its limit (a bucket's TAT
// and a window's grants know nothing of each other; a lease shorter than the window gives its
// slot back early), so a call of another kind is refused: 42809.
struct KindWords {
    const char *noun;
    const char *hint;
};

// In DeclaredKind's order.
const KindWords &kind_words(DeclaredKind kind) {
    static const KindWords words[] = {
        {"a semaphore", "Claim it with sem_claim(name) and friends."},
        {"a sliding window rate limit",
         "Grant it with sem_rate(name), or as a member of sem_claim_all."},
        {"a token bucket", "Grant it with sem_bucket(name)."}};
    return words[static_cast<int>(kind)];
}

void refuse_kind(const char *function, const Declaration &d, const text *name) {
    ereport(ERROR, (errcode(ERRCODE_WRONG_OBJECT_TYPE),
                    errmsg("%s: \"%s\" is declared %s", function, text_to_cstring(name),
                           kind_words(d.kind).noun),
                    errdetail("Declaration \"%s\" makes its names %s, granted one way only.",
                              d.pattern, kind_words(d.kind).noun),
                    errhint("%s", kind_words(d.kind).hint)));
}

// A window's grant with no per of its own, on a name no sliding window is declared for.
void require_per_given(const char *function, const text *name) {
    ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
                    errmsg("%s: per must not be null: \"%s\" is not declared a sliding window",
                           function, text_to_cstring(name)),
                    errhint("Pass per, or declare it: sem_declare_rate(name, n, per).")));
}

// What the declaration's kind says of a claim: a semaphore's lease within the maximum; a
// window's grant with the declared per (the caller's, if it gave one, must be that).
void apply_kind(const char *function, const Declaration &d, SlotRequest *request) {
    switch (d.kind) {
        case DeclaredKind::kBucket:
            refuse_kind(function, d, request->name);
            break;
        case DeclaredKind::kWindow:
            if (!request->rate) refuse_kind(function, d, request->name);
            if (request->per_declared) {
                request->lease = d.per;
            } else if (request->lease != d.per) {
                ereport(ERROR,
                        (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                         errmsg("%s: per %s is not the declared per of rate limit \"%s\"", function,
                                interval_text(request->lease), text_to_cstring(request->name)),
                         errdetail("Declaration \"%s\" says %d per %s: its names have that "
                                   "window alone.",
                                   d.pattern, d.n, interval_text(d.per)),
                         errhint("Leave per out.")));
            }
            break;
        case DeclaredKind::kSemaphore:
            if (request->rate && request->per_declared) require_per_given(function, request->name);
            if (request->kind == ClaimKind::kLease)
                require_lease_within(function, d, request->name, request->lease,
                                     "; a longer job renews its lease (sem_renew).");
            break;
    }
}

void apply(const char *function, const Declaration &d, SlotRequest *request) {
    require_may_claim(function, d, request->name);
    apply_kind(function, d, request);
    request->n = request->asked_n != 0 ? Min(request->asked_n, d.n) : d.n;
    request->declared_n = d.n;
    request->peak_n = d.peak_n > d.n ? d.peak_n : 0;
    require_valid_permits(function, false, request->permits, request->n);
}

}  // namespace

void resolve_declared_rate(SlotRequest *request) {
    if (request->kind != ClaimKind::kLease || !(request->per_declared || request->rate_if_declared))
        return;
    const Declaration *d = find_declaration(request->name);
    if (d == nullptr || d->kind != DeclaredKind::kWindow) return;
    if (!request->rate) request->rate = request->per_declared = true;
    if (request->per_declared) request->lease = d->per;
}

void apply_declaration(const char *function, SlotRequest *request, int64 *wait) {
    const Declaration *d = find_declaration(request->name);
    if (d == nullptr) {
        require_undeclared_allowed(function, request->name);
        if (request->rate && request->per_declared) require_per_given(function, request->name);
        if (request->asked_n == 0)
            ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
                            errmsg("%s: n must not be null: semaphore \"%s\" is not declared",
                                   function, text_to_cstring(request->name))));
        request->n = request->asked_n;
        require_valid_permits(function, false, request->permits, request->n);
        return;
    }
    if (request->asked_n > d->n && may_claim(*d))
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("%s: n %d is above the declared n of semaphore \"%s\"", function,
                               request->asked_n, text_to_cstring(request->name)),
                        errdetail("Declaration \"%s\" says n = %d. Leave n out to claim below it, "
                                  "or pass a smaller n to claim below that.",
                                  d->pattern, d->n)));
    apply(function, *d, request);
    if (d->max_wait >= 0 && *wait > d->max_wait) *wait = d->max_wait;
}

void reapply_declaration(const char *function, SlotRequest *request, TimestampTz since,
                         TimestampTz *deadline) {
    const Declaration *d = find_declaration(request->name);
    if (d == nullptr) {
        require_undeclared_allowed(function, request->name);
        if (request->rate && request->per_declared) require_per_given(function, request->name);
        // With no n of its own, it keeps the n it had.
        if (request->asked_n != 0) request->n = request->asked_n;
        request->declared_n = request->peak_n = 0;
        require_valid_permits(function, false, request->permits, request->n);
        return;
    }
    apply(function, *d, request);
    if (d->max_wait >= 0) *deadline = Min(*deadline, since + d->max_wait);
}

namespace {

// A token bucket's rule on an undeclared name, or one declared a semaphore: the caller's, which
// must give n and per (burst: n).
BucketRule callers_bucket_rule(const char *function, const text *name, const BucketRule &asked) {
    const char *missing = asked.n == 0 ? "n" : asked.per == 0 ? "per" : nullptr;
    if (missing != nullptr)
        ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
                        errmsg("%s: %s must not be null: \"%s\" is not declared a token bucket",
                               function, missing, text_to_cstring(name)),
                        errhint("Pass n and per, or declare it: sem_declare_bucket(name, n, "
                                "per).")));
    return BucketRule{asked.n, asked.per, asked.burst != 0 ? asked.burst : asked.n};
}

// A declared bucket's rule is the only one its names are granted under: what the caller passes
// must be it.
void require_declared_rule(const char *function, const Declaration &d, const text *name,
                           const BucketRule &asked) {
    const bool same = (asked.n == 0 || asked.n == d.n) && (asked.per == 0 || asked.per == d.per) &&
                      (asked.burst == 0 || asked.burst == d.burst);
    if (!same)
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                 errmsg("%s: the rule asked for is not the declared rule of token bucket \"%s\"",
                        function, text_to_cstring(name)),
                 errdetail("Declaration \"%s\" says %d per %s, up to %d at once: its names are "
                           "granted under that rule alone.",
                           d.pattern, d.n, interval_text(d.per), d.burst),
                 errhint("Leave n, per and burst out.")));
}

// A caller's bucket rule on a name declared a semaphore: its n and burst at most the declared n,
// its per at most the declared maximum lease (as a rate limit's window is bound).
void require_bucket_within(const char *function, const Declaration &d, const text *name,
                           const BucketRule &bucket) {
    const struct {
        const char *what;
        int32 value;
    } counts[] = {{"n", bucket.n}, {"burst", bucket.burst}};
    for (const auto &count : counts)
        if (count.value > d.n)
            ereport(ERROR,
                    (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                     errmsg("%s: %s %d is above the declared n of \"%s\"", function, count.what,
                            count.value, text_to_cstring(name)),
                     errdetail("Declaration \"%s\" says n = %d: a bucket's n and burst are at "
                               "most that.",
                               d.pattern, d.n)));
    require_lease_within(function, d, name, bucket.per, ": a bucket's per is bound as a lease is.");
}

// The rule a bucket grant is made under, at its first look and at every look while it waits.
BucketRule bucket_rule(const char *function, const Declaration *d, const text *name,
                       const BucketRule &asked, int32 permits) {
    BucketRule rule{};
    if (d == nullptr) {
        require_undeclared_allowed(function, name);
        rule = callers_bucket_rule(function, name, asked);
    } else {
        require_may_claim(function, *d, name);
        switch (d->kind) {
            case DeclaredKind::kWindow:
                refuse_kind(function, *d, name);
                break;
            case DeclaredKind::kBucket:
                require_declared_rule(function, *d, name, asked);
                rule = BucketRule{d->n, d->per, d->burst};
                break;
            case DeclaredKind::kSemaphore:
                rule = callers_bucket_rule(function, name, asked);
                require_bucket_within(function, *d, name, rule);
                break;
        }
    }
    require_valid_bucket_refill(function, rule.n, rule.per, rule.burst);
    require_valid_bucket_permits(function, false, permits, rule.burst);
    return rule;
}

}  // namespace

BucketRule apply_bucket_declaration(const char *function, const text *name, const BucketRule &asked,
                                    int32 permits, int64 *wait) {
    const Declaration *d = find_declaration(name);
    const BucketRule rule = bucket_rule(function, d, name, asked, permits);
    if (d != nullptr && d->max_wait >= 0 && *wait > d->max_wait) *wait = d->max_wait;
    return rule;
}

BucketRule reapply_bucket_declaration(const char *function, const text *name,
                                      const BucketRule &asked, int32 permits, TimestampTz since,
                                      TimestampTz *deadline) {
    const Declaration *d = find_declaration(name);
    const BucketRule rule = bucket_rule(function, d, name, asked, permits);
    if (d != nullptr && d->max_wait >= 0) *deadline = Min(*deadline, since + d->max_wait);
    return rule;
}

void require_right_to_claim(const char *function, const text *name) {
    const Declaration *d = find_declaration(name);
    if (d == nullptr)
        require_undeclared_allowed(function, name);
    else
        require_may_claim(function, *d, name);
}

void require_lease_within_declared(const char *function, const text *name, int64 lease) {
    const Declaration *d = find_declaration(name);
    if (d != nullptr) require_lease_within(function, *d, name, lease, ".");
}

}  // namespace pgsem
