// Command bench measures the Minimal gateway against a direct pgx baseline
// on the same PostgreSQL table, in the same run, on the same machine.
//
// Run it with `make bench` (which builds bin/minimal and sets
// MINIMAL_TEST_PG_DSN), or by hand from the repository root:
//
//	make build
//	MINIMAL_TEST_PG_DSN='postgres://…' go run ./bench [-duration 10s] [-concurrency 16] [-rows 1000000] [-keep]
//
// What it does:
//
//  1. Creates schema minimal_bench with table items (-rows rows of varied
//     values: text with commas, quotes and non-ASCII, NULLs in every
//     nullable column, numeric(12,2), timestamptz with microseconds), then
//     VACUUM ANALYZE.
//  2. Starts bin/minimal serve on a fresh data dir and registers the schema
//     with bin/minimal db add.
//  3. Starts the direct baseline: this binary re-executed with the hidden
//     flag -serve-direct ADDR, a plain net/http handler that runs the same
//     SELECT … ORDER BY id LIMIT $1 OFFSET $2 on a default pgxpool and
//     encodes {"data":[…],"page":{…}} with encoding/json. It is what a
//     developer would write by hand; the gateway has to stay close to it.
//     Both pools use pgxpool's default size.
//  4. Load: -concurrency keep-alive workers in this process (neither server
//     shares it) ask for random 100-row pages 0..99 ordered by id. After a
//     2 s warm-up of each side, gateway and direct run alternately in two
//     rounds (G, D, G, D; -duration/2 each) so machine noise hits both.
//     Every response must be 200 with exactly 100 rows of the right page
//     (checked by a byte scan on every response and a full JSON decode with
//     id checks on every 16th); a single failure fails the run.
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
// are stopped on every exit path, Ctrl-C included, and the schema is
// dropped unless -keep.
//
// The load generator, PostgreSQL and the server under test share the
// machine's cores, so absolute numbers depend on the machine; the ratio is
// the figure to compare across runs.
package main
