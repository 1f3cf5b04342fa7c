// Command bench measures the Minimal gateway against a direct driver
// baseline on the same tables, in the same run, on the same machine:
// PostgreSQL (pgx) above all, MariaDB and ClickHouse when their DSNs are
// set; and a row-scoped, column-limited read against the admin's.
//
// Run it with `make bench` (which builds bin/minimal and runs
// scripts/services.sh, which sets MINIMAL_TEST_PG_DSN, MINIMAL_TEST_MA_DSN
// and MINIMAL_TEST_CH_DSN), or by hand from the repository root:
//
//	make build
//	eval "$(scripts/services.sh)"
//	go run ./bench [-duration 10s] [-concurrency 16] [-rows 1000000] [-dialects pg,ma,ch] [-dialect-rows 100000] [-keep] [-only restops|mcp|pk]
//
// Only MINIMAL_TEST_PG_DSN is required: a dialect whose DSN is not set, or
// that -dialects leaves out, gets a "skipped" line saying why. PostgreSQL
// always runs (the scoped read and the streams need it).
//
// What it does:
//
//  1. Creates schema minimal_bench with table items (-rows rows of varied
//     values: text with commas, quotes and non-ASCII, NULLs in every
//     nullable column, numeric(12,2), timestamptz with microseconds, and
//     grp, which splits the ids into ten consecutive runs), indexes (grp,
//     id), then VACUUM ANALYZE. In MariaDB and ClickHouse it creates
//     database minimal_bench with the same table (-dialect-rows rows, the
//     same values; ClickHouse 18.16 has no Bool or DateTime64, so active
//     is a UInt8 and created a DateTime in seconds), from the sequence
//     engine and from numbers(N) by INSERT … SELECT.
//  2. Starts bin/minimal serve on a fresh data dir and registers each
//     schema with bin/minimal db add. Applies a policy file with
//     bin/minimal apply: identity analyst (role bench-analyst, claims
//     {grp: 3}), a template granting read on pg/minimal_bench/items with
//     columns id, name, price, qty, active, created (note and grp hidden),
//     and the scope grp=eq.{claims.grp}; mints the analyst's token with
//     bin/minimal token mint.
//  3. Starts the direct baseline: this binary re-executed with the hidden
//     flag -serve-direct ADDR [ma,ch], a plain net/http server that runs
//     the same SELECT … ORDER BY id LIMIT ? OFFSET ? with the plain driver
//     and encodes {"data":[…],"page":{…}} with encoding/json: /items on a
//     default pgxpool (the gateway uses pgxpool's default size too),
//     /ma/items with database/sql and go-sql-driver/mysql (the statement
//     prepared once, idle pool as large as the gateway's), /ch/items with
//     clickhouse-go/v2 over the native protocol. It is what a developer
//     would write by hand; the gateway has to stay close to it. Before
//     each comparison one page is fetched from both sides and every value
//     compared.
//  4. Load: -concurrency keep-alive workers in this process (neither server
//     shares it) ask for random 100-row pages 0..99 ordered by id. After a
//     2 s warm-up of each side, gateway and direct run alternately in two
//     rounds (G, D, G, D; -duration/2 each) so machine noise hits both.
//     Every response must be 200 with exactly 100 rows of the right page
//     (checked by a byte scan on every response and a full JSON decode with
//     id checks on every 16th); a single failure fails the run.
//     Then, the same way but in twelve rounds of -duration/8 in the order
//     A, B, B, A, A, B, …: the analyst's read (pages of the rows with
//     grp = 3, which the scope selects) against the admin asking for the
//     same rows and columns by filter (grp=eq.3&fc=id,…,created), so both
//     run the same SQL and the ratio is what the permission gates cost;
//     and, in four rounds of -duration/4 each, gateway against direct on MariaDB and
//     on ClickHouse. A failure there is reported on the dialect's line and
//     fails the run at the end. Then, in twenty rounds each (-duration/8
//     each; bench/main.go's mcpRounds says why twenty), MCP against
//     REST on the same gateway, once per protocol era clients speak
//     (2025-06-18 and 2025-11-25: initialize first and its Mcp-Session-Id
//     on every call; 2026-07-28: _meta and the standard headers):
//     auto_read_rows of the identity agent in one AI session (every call
//     journaled) against the REST GET of the same page by the admin. The
//     MCP answers are checked at the same cadence as REST's: on every
//     answer the JSON-RPC envelope by byte scans and the page in its
//     structuredContent by the byte scan above; on every 16th the envelope
//     checked whole — the members before the text block well-formed JSON,
//     content[0].text a valid JSON string equal to structuredContent — and
//     the page decoded with its ids (checkTextBlock: the same checks as
//     decoding the whole message, for about half the bench's CPU). The
//     per-round lines print the bench process's own CPU per request too
//     ("bench CPU"): it runs on the machine it measures. The size of one
//     answer is printed for each era, 2025-03-26 too (whose clients get the
//     text only).
//     -only mcp runs just this measure (pg only, about three minutes).
//     Right after the main comparison, in twelve rounds each, the gateway
//     against the strong baseline (strong.go: the same pool and SELECT,
//     typed scans, JSON appended by hand without reflection, one write):
//     one row by primary key (GET ?ps=1&pg=0&id=eq.N against
//     /strong/item?id=N, ids 1..10000 at random) and the 100-row page.
//     -only pk runs just this measure (pg only, about a minute and a half).
//     Then the database's own ceiling (ceiling.go): pgbench with a custom
//     script running the page's SELECT (prepared, same concurrency) in
//     four rounds interleaved with the gateway's 100-row pages. MariaDB and
//     ClickHouse get theirs right after their gateway-vs-driver comparison:
//     neither ships a client that runs a custom statement with a random
//     parameter the way pgbench does, so a tight loop of the Go driver the
//     gateway uses (go-sql-driver/mysql with the statement prepared;
//     clickhouse-go/v2 over the native protocol) runs the same SELECT at
//     the same concurrency, scanning every row and doing nothing else, in
//     four rounds interleaved with the gateway's pages of that table.
//     Then REST count=exact (with a filter) and agg=…&group=grp on the pg
//     table against the same SQL run directly (restops.go: prepared with
//     pgx on a connection of its own, the filter value bound), one call at
//     a time in 21 interleaved pairs, every answer compared; the ratio
//     direct/gateway is the median pair's, targets ≥ 1.00 (0.03 allowed
//     for noise) and ≥ 0.90. -only restops runs just this measure.
//  5. Streaming: the gateway is restarted fresh, and the whole table is read
//     once as CSV; restarted again, once as JSON. While each body is read
//     and counted, /proc/PID/status VmRSS is sampled every 20 ms; VmHWM is
//     read at the end (it is the kernel's own peak, so it is what the
//     summary reports).
//
// Reading the summary:
//
//   - req/s is completed requests over wall time, both rounds together;
//     p50/p99 are request latencies seen by the client, in ms.
//   - "ratio gateway/direct throughput" is gateway req/s over direct req/s:
//     1.00 means the gateway adds nothing measurable, the target is ≥ 0.80.
//     "p50 ratio" is gateway p50 over direct p50 (lower is better).
//   - "scoped+column-limited read vs admin (same rows): ratio" is the
//     analyst's req/s over the admin's on the same rows and columns; the
//     target is ≥ 0.95. The CPU line under it compares the gateway's CPU
//     per request for both.
//   - The per-dialect lines ("pg  gateway N req/s  direct M req/s  ratio
//     R") compare gateway and direct driver for each database type; pg's
//     is the main comparison above. The target is the same ≥ 0.80. The
//     ClickHouse line mostly measures the server: 18.16 reads and sorts the
//     whole table for every ORDER BY id … LIMIT … OFFSET page.
//   - Every ratio on the MCP, strong-baseline and ceiling lines is the
//     median over their rounds of the two sides' throughputs in the same
//     round pair. Targets: MCP over REST ≥ 0.90 in every era; against the
//     strong baseline ≥ 0.80 for one row by key and ≥ 1.00 for the page.
//     The ceiling lines print the gateway's page throughput as a fraction
//     of what the database itself serves for the same statement (pgbench's
//     transactions per second; the driver loop's queries per second, on
//     the "ceiling" line under ma's and ch's), no target yet.
//   - "server CPU per request" is the server process's user+system CPU time
//     (/proc/PID/stat) over the requests it answered. On a small machine
//     shared by PostgreSQL, the load generator and whatever else runs, it
//     is the steadiest measure of the gateway's own cost: a ratio below
//     1.00 means the gateway spends less CPU per page than the baseline.
//   - "stream … peak RSS" is the gateway's VmHWM in MB (2^20 bytes) while
//     it streams the whole table; the target is < 100 MB (memory must not
//     grow with the result). Seconds and MB/s are end to end, client side;
//     gateway CPU is what the gateway process spent on the request.
//
// A missed target is printed as MISSED and does not fail the run; errors,
// non-200 answers and wrong row counts do (exit status 1). Child processes
// are stopped on every exit path, Ctrl-C included, and the schema and
// databases are dropped unless -keep.
//
// The load generator, PostgreSQL and the server under test share the
// machine's cores, so absolute numbers depend on the machine; the ratio is
// the figure to compare across runs.
package main
