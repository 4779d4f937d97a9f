#!/usr/bin/env python3
"""Sends `SELECT <call>` with an extended-protocol Execute row limit (max_rows), then a failing
statement and the Sync, as a client of the raw protocol may (libpq never does), and prints what
the client read: the rows or error of the call, then the outcome of the rest, one line each.

    row_limited_grant.py SOCKET_DIR PORT USER DATABASE CALL MAX_ROWS [STATEMENT [SETUP]]

With STATEMENT, that statement is sent instead of `SELECT <call>` (CALL is then unused); with
SETUP, that statement is run first as a simple query (a PREPARE for an EXECUTE, say).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pgwire import Conn  # noqa: E402


def main():
    sockdir, port, user, db, call, max_rows = sys.argv[1:7]
    statement = sys.argv[7] if len(sys.argv) > 7 else "SELECT " + call
    c = Conn(sockdir, int(port), user, db, "row_limited_grant")
    if len(sys.argv) > 8:
        c.query(sys.argv[8])
        c.until([b"Z"])
    c.parse(statement)
    c.bind()
    c.execute(max_rows=int(max_rows))
    c.flush()
    print("call:", c.until([b"s", b"C", b"E"]))
    c.parse("SELECT 1/0")
    c.bind()
    c.execute()
    c.sync()
    print("then:", c.until([b"Z"]))


if __name__ == "__main__":
    main()
