/**
 * The SQL of every hot query, by the name PostgreSQL keeps it prepared under on each pooled connection
 * (db/index.ts): parsed and planned once per connection rather than on every request. Planning the pull's
 * one authorization read (seven tables) cost PostgreSQL ~1.6 ms of CPU, five times its execution (ADR 0007).
 */
export const preparedNames = new Map<string, string>();
