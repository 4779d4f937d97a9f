\echo Use "ALTER EXTENSION pgsem UPDATE TO '1.2'" to load this file. \quit

-- pgsem 1.1 -> 1.2. A fresh CREATE EXTENSION pgsem runs pgsem--1.0.sql, pgsem--1.0--1.1.sql and
-- then this script, so a fresh 1.2 install and an upgraded one have the same objects. Conventions
-- as in 1.0: no CREATE OR REPLACE (but for the extension's own views), no IF NOT EXISTS, every
-- builtin operator and function schema-qualified.

------------------------------------------------------------------------------------------------
-- Bad input is an error, not NULL
------------------------------------------------------------------------------------------------

-- sem_prune_history(NULL) answered NULL (the function was STRICT); it is 22004 now, like every
-- other NULL that pgsem refuses.
ALTER FUNCTION @extschema@.sem_prune_history(bigint) CALLED ON NULL INPUT;
