// Package fleetbench holds the measurements that run real digest
// processes together against one database: a fleet of digest eval
// processes sharing a PostgreSQL database through a proxy adding network
// latency (BenchmarkFleet), processes sharing one provider's rate limit
// through SQLite or PostgreSQL (BenchmarkSharedLimitProcesses), and one
// process held to the database's round trip
// (BenchmarkEvalOneProcessThroughLatency). Each builds the digest binary
// of this checkout once per test run and drives it as a user would,
// against internal/fakeprovider's fake provider in the test's own process.
//
// It has no code of its own but its tests, and its plain tests are cheap:
// nothing is built unless a benchmark runs. Run them by hand, not in CI:
//
//	.ci/bench-fleet                     # BenchmarkFleet, with a throwaway PostgreSQL
//	go test ./internal/fleetbench -run '^$' -bench SharedLimitProcesses -benchtime 1x -timeout 30m
//	go test ./internal/fleetbench -run '^$' -bench EvalOneProcessThroughLatency -benchtime 1x
//
// The PostgreSQL cases need a server: DIGEST_TEST_POSTGRES (see
// internal/pgtest), or for BenchmarkFleet DIGEST_BENCH_POSTGRES.
package fleetbench
