package dialecttest

import (
	"os"
	"testing"
)

// RequireEnv is the variable CI sets to "1" so that a missing database fails
// the run instead of skipping its tests.
const RequireEnv = "MINIMAL_TEST_REQUIRE_DBS"

// DSN returns the connection string in the environment variable env (for
// example MINIMAL_TEST_PG_DSN). When it is unset the test is skipped, or
// fails if RequireEnv is "1": a green CI run never hides an untested
// database.
func DSN(t testing.TB, env string) string {
	t.Helper()
	dsn := os.Getenv(env)
	if dsn != "" {
		return dsn
	}
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf("%s is not set and %s=1", env, RequireEnv)
	}
	t.Skipf("%s is not set", env)
	return ""
}
