// Must NOT compile: a core header after a Postgres header (boundary rule 3).
#include "pg/base/postgres_api.hpp"
#include "core/fnv1a.hpp"
