// The one place where pgsem hears of transactions, subtransactions and the session ending, and
// the order in which its work at each of those moments is done.
#pragma once

namespace pgsem {

// Registers the transaction, subtransaction and resource-release callbacks. Called once, from
// _PG_init. The exit callback is registered by each backend at its first transaction event.
void install_transaction_events();

}  // namespace pgsem
