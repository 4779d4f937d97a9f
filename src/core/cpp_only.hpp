// Included first by every header of the core (src/core), which is pure C++ and knows nothing of
// Postgres (boundary rule 3 in src/pg/base/boundary.hpp): a Postgres header included before a core
// header is a layering mistake, and Postgres' macros would change the meaning of the standard
// headers the core includes. The build says so.
#pragma once

#ifdef POSTGRES_H
#error \
    "src/core is pure C++: include core headers before any Postgres header (pg/base/postgres_api.hpp)"
#endif
